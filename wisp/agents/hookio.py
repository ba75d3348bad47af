"""What every harness's command hook shares: its signals, its one event read, its harness
watched, its answer written, and the guard that answers for it if `wisp` itself dies.

A hook must never fail open. Harnesses treat most ways a hook can end (an exit status they
do not know, a signal, no output) as "no opinion" and go on to run the call, so:

- **Signals.** :func:`arm` (called before the rest of `wisp` loads, when the command is
  `wisp hook …`) turns SIGTERM, SIGINT and SIGHUP into a :class:`Stop`: the process is not
  interrupted (no traceback, no exit by signal); the hook ends its wait, withdraws its request
  and answers its harness's deny. They are blocked from wisp's first instruction until then
  (:mod:`wisp.__main__`), and in every other thread (each started blocking them), so the
  main thread, which handles them, takes each one.
- **One event.** :func:`read_event` reads stdin until it holds one whole JSON value (not to
  end of file: a harness may keep its end open), bounded in bytes and in time, and ends at
  once on a stop.
- **The harness gone.** :func:`watch_harness` follows, on a thread of its own and by events
  only (``poll(2)``, no timer), the hang-up of stdout's reader and the end of the parent
  process (a pidfd, taken as the hook starts): either means nobody will read the answer, so
  the request is withdrawn at once rather than left to wait for a person whose answer nothing
  would act on. It starts when a call is to be put to the person (:meth:`Stop.follow`): one
  the policy decides is answered within milliseconds and needs no thread (threading alone
  costs a hook ~3.6 M instructions).
- **The guard.** :func:`guarded_argv` is the command a setup installs: ``hookguard.sh``
  (``/bin/sh``, shipped beside this module) runs `wisp hook …` and, if `wisp` ends any way
  but its own answer (killed, out of memory, a crash), writes the harness's deny and exits
  with its blocking status.
"""

from __future__ import annotations

# signal's C functions only: the `signal` module builds its enums as it loads (~3 M
# instructions of every hook's start, bench/README.md, issue 57); wisp.__main__ does the same.
import _signal  # type: ignore[import-not-found]
import contextlib
import importlib
import math
import os
import re
import select
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pending import DecodeError, NamedTuple, StrEnum, loads_strict
from wisp import _entry
from wisp._deadlines import Cancel
from wisp.agents.install import GUARD_SCRIPT, this_wisp
from wisp.policy.reading import Effect

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    import threading
    from typing import Any

    from wisp.agents.gate import ToolCall

STOP_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
# Their names, as a stop says them (`signal.Signals(n).name`, without loading `signal`).
_SIGNAL_NAMES = {_signal.SIGTERM: "SIGTERM", _signal.SIGINT: "SIGINT", _signal.SIGHUP: "SIGHUP"}
# An event larger than this is not read whole: no tool call a person can judge is that long.
MAX_EVENT_BYTES = 4 * 1024 * 1024
CHUNK_BYTES = 64 * 1024
GUARD_SHELL = "/bin/sh"
GUARD_PID_ENV = "WISP_HOOK_GUARD"  # the guard's pid, in the environment of the wisp it runs


class Stop(Cancel):
    """Why a hook is to stop before it is answered (a signal, its harness gone): a
    :class:`Cancel` of its wait, and a pipe that becomes readable, so that a ``poll`` (the
    event read, the harness's watch) wakes at once."""

    def __init__(self) -> None:
        super().__init__()
        self.why: str | None = None
        self._read_fd, self._write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        # The harness to follow once a call is put to the person, and its parent's pidfd
        # (taken as the hook starts, so that a harness that ends before then is still seen).
        self._to_follow: tuple[str, tuple[int, int] | None] | None = None

    def follow_later(self, harness: str) -> None:
        """Take note of *harness* (the parent process, now) for :meth:`follow`."""
        self._to_follow = (harness, _parent_fd())

    def follow(self) -> None:
        """Start :func:`watch_harness` on the harness noted, once; nothing if none is."""
        if self._to_follow is not None:
            harness, parent = self._to_follow
            self._to_follow = None
            watch_harness(self, harness, parent)

    def fileno(self) -> int:
        """Readable once stopped (and for good)."""
        return self._read_fd

    def stop(self, why: str) -> None:
        """Mark it stopped, the first *why* kept. Safe in a signal handler: it takes no lock
        (the wait itself is cancelled by :func:`watch_harness`'s thread, woken by the pipe)."""
        if self.why is None:
            self.why = why
        with contextlib.suppress(BlockingIOError):  # full: it is readable already
            os.write(self._write_fd, b"!")

    def stopped(self) -> bool:
        return self.why is not None


_armed: Stop | None = None


def _on_signal(signum: int, frame: object) -> None:
    assert _armed is not None
    _armed.stop(f"stopped by {_SIGNAL_NAMES.get(signum, signum)}")


def followed(cancel: Cancel) -> Callable[[], None]:
    """What starts following the harness when a call is put to the person: *cancel*'s
    :meth:`Stop.follow` if it is a hook's stop; else nothing."""
    return cancel.follow if isinstance(cancel, Stop) else _nothing


def _nothing() -> None:
    return None


def arm() -> Stop:
    """This process's :class:`Stop`, its signal handlers installed (once), and the signals
    unblocked on this (the main) thread: `wisp hook` blocks them from its first instruction
    (:mod:`wisp.__main__`), and one that came since is taken here, by its handler."""
    global _armed
    if _armed is None:
        _armed = Stop()
        for signum in STOP_SIGNALS:
            _signal.signal(signum, _on_signal)
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, STOP_SIGNALS)
    return _armed


# --- the event ---------------------------------------------------------------------------


class EventUnread(Exception):
    """No event could be read: the message says why."""


def _whole(data: bytes) -> bool:
    """Whether *data* holds one whole JSON value (an event is an object: only a buffer that
    ends in `}` is tried)."""
    if not data.rstrip().endswith(b"}"):
        return False
    try:
        loads_strict(data)
    except DecodeError:
        return False
    return True


def read_event(stop: Stop, within_s: float, *, fd: int = 0, limit: int = MAX_EVENT_BYTES) -> bytes:
    """The one JSON value on *fd*, read as it comes: returned as soon as it is whole, or at
    end of file whatever it is (the caller parses it). Raises :class:`EventUnread` if *stop*
    stops it, if it goes over *limit* bytes, or if it is not whole within *within_s*."""
    data = bytearray()
    deadline = time.monotonic() + within_s
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    poller.register(stop.fileno(), select.POLLIN)
    while True:
        if stop.why is not None:
            raise EventUnread(f"{stop.why} while reading the event")
        left = deadline - time.monotonic()
        if left <= 0:
            raise EventUnread(f"no whole event on stdin within {within_s:g} s")
        ready = dict(poller.poll(max(1, int(left * 1000))))
        if stop.fileno() in ready or fd not in ready:
            continue
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise EventUnread(f"the event is larger than {limit} bytes")
        if _whole(bytes(data)):
            return bytes(data)


# --- the harness, watched ----------------------------------------------------------------


def _parent_fd() -> tuple[int, int] | None:
    """A pidfd of this process's parent, with its pid (None where there is none to watch:
    no pidfd support, or already re-parented to init). Started by the guard, which says its
    pid (:data:`GUARD_PID_ENV`), a parent already gone is a pidfd of nothing: -1."""
    parent = os.getppid()
    guard = os.environ.get(GUARD_PID_ENV, "")
    if guard.isdigit() and int(guard) != parent:  # the guard ended before wisp looked
        return -1, int(guard)
    if parent <= 1 or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(parent), parent
    except OSError:
        return None


def watch_harness(
    stop: Stop, harness: str, parent: tuple[int, int] | None, *, out_fd: int = 1
) -> threading.Thread:
    """Start following the harness: stdout's reader hanging up, or the parent ending (its
    pidfd *parent*, from :func:`_parent_fd`, taken as the hook started), stops *stop* with
    why; and *stop* stopped (by either, or a signal) cancels its wait. Returns the (daemon)
    thread; it ends once *stop* is."""
    import threading

    from pending import start_thread

    if parent is not None and parent[0] < 0:
        stop.stop(f"{harness} is gone (its process {parent[1]} ended)")
        parent = None
    poller = select.poll()
    poller.register(stop.fileno(), select.POLLIN)
    poller.register(out_fd, 0)  # only POLLERR / POLLHUP: its reader gone
    if parent is not None:
        poller.register(parent[0], select.POLLIN)

    def follow() -> None:
        try:
            while stop.why is None:
                for fd, _ in poller.poll():
                    if fd == out_fd:
                        stop.stop(f"{harness} is gone (it closed its end of the hook's stdout)")
                    elif parent is not None and fd == parent[0]:
                        stop.stop(f"{harness} is gone (its process {parent[1]} ended)")
            stop.cancel()
        finally:
            if parent is not None:
                os.close(parent[0])

    thread = threading.Thread(target=follow, name="wisp-hook-harness", daemon=True)
    # Started blocking TERM, INT and HUP: the kernel gives them to the main thread, which
    # handles them. (One this thread took would leave the main thread asleep in its wait.)
    start_thread(thread)
    return thread


# --- the answer --------------------------------------------------------------------------


class Said(NamedTuple):
    """What a hook process writes: stdout (the harness's JSON, or nothing), stderr, and its
    exit status. (The records on a hook's path are named tuples: attrs alone costs more to
    import than the interpreter's start, bench/README.md, issue 41.)"""

    stdout: str
    exit_code: int
    stderr: str | None = None


def write_said(said: Said) -> None:
    """Write *said*; a reader that has gone (its harness) is no error: nobody is left to
    tell."""
    try:
        if said.stderr:
            sys.stderr.write(said.stderr + "\n")
            sys.stderr.flush()
        if said.stdout:
            sys.stdout.write(said.stdout + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def serve(
    stop: Stop,
    harness: str,
    within_s: float,
    answer: Callable[[bytes], Said],
    refuse: Callable[[str], Said],
) -> Said:
    """One hook run: *refuse* at once if already stopped; the event read (a stop, a limit or
    the time: *refuse*); then *answer* the event (which ends its wait when *stop* is
    cancelled), the harness followed from when the call is put to the person
    (:meth:`Stop.follow`)."""
    if stop.why is not None:
        return refuse(f"{stop.why} before the event was read; nothing was filed")
    if sys.stdin is None or sys.stdin.isatty():
        return refuse(
            f"`wisp hook {harness}` reads one {harness} hook event as JSON on stdin, not from "
            f"a terminal; see `wisp agents setup {harness} --dry-run`"
        )
    stop.follow_later(harness)
    try:
        data = read_event(stop, within_s, fd=sys.stdin.fileno())
    except EventUnread as exc:
        return refuse(f"{exc}; nothing was filed")
    return answer(data)


# --- the guard ---------------------------------------------------------------------------


def guarded_argv(deny: Said, wisp_argv: Sequence[str]) -> list[str]:
    """The argv of a command that runs *wisp_argv* and answers *deny* (its stdout and exit
    status) if `wisp` ends without answering: killed, out of memory, crashed."""
    return [GUARD_SHELL, str(GUARD_SCRIPT), str(deny.exit_code), deny.stdout, "--", *wisp_argv]


# --- a harness with no "ask" -------------------------------------------------------------

DEFAULT_TIMEOUT_S = 600  # the hook timeout a setup writes for a harness
MARGIN_S = 10  # the wait ends this long before it: to withdraw, settle and answer
DEFAULT_WAIT_S = DEFAULT_TIMEOUT_S - MARGIN_S
EXPIRY_AFTER_WAIT_S = 5  # the request's own deadline, after the hook's wait


class EventRefused(Exception):
    """An event a harness's module cannot read into a call: the message says why."""


class OnTimeout(StrEnum):
    """What an unanswered request becomes, where the harness can ask in its own dialog
    (Claude Code's `--on-timeout`)."""

    ASK = "ask"
    DENY = "deny"


class HookOptions(NamedTuple):
    """How an installed hook waits: `--wait S` (and `--on-timeout`, where the harness takes
    it), as `wisp hook NAME --print-settings` and `wisp agents setup` take them. The harness's
    own timeout for the hook is written just above the wait, so that wisp answers first."""

    wait_s: float = DEFAULT_WAIT_S
    # What an unanswered call becomes, for a harness that takes --on-timeout (elsewhere the
    # wait is the ask, and an unanswered call is denied).
    on_timeout: OnTimeout = OnTimeout.ASK

    @property
    def timeout_s(self) -> int:
        """The harness's timeout for the hook: the wait, and the margin to answer in."""
        return math.ceil(self.wait_s) + MARGIN_S


class Format(StrEnum):
    """The format of the file setup writes wisp's part into."""

    JSON = "json"
    TOML = "toml"
    TEXT = "text"  # a file of wisp's own, written whole (OpenCode's plugin)


class ToolEffect(NamedTuple):
    """What one of a harness's tools does, as its module declares it (its :data:`Harness.tools`
    table): its :class:`~wisp.policy.reading.Effect`, the input fields that hold the paths it
    reads or writes (a string, or a list of them), and the field holding a patch whose
    headers name the files it edits (`*** Update File: PATH`, Codex's and OpenCode's)."""

    effect: Effect
    paths: tuple[str, ...] = ()
    patch: str | None = None


SHELL = ToolEffect(Effect.SHELL)
NETWORK = ToolEffect(Effect.NETWORK)


def reads(*fields: str) -> ToolEffect:
    """A tool that reads the files its *fields* name (none named: its cwd)."""
    return ToolEffect(Effect.READ, fields)


def edits(*fields: str) -> ToolEffect:
    """A tool that edits or writes the files its *fields* name."""
    return ToolEffect(Effect.EDIT, fields)


class Harness(NamedTuple):
    """One harness, whole: its command hook at run time (how its event reads, how it is answered)
    and its installation (where its config lives, in what format, what of it is wisp's).
    Each harness's module declares one, as HARNESS; :data:`wisp._entry.HARNESS_MODULES`
    lists them. Where it has no "ask" (all but Cursor, and Claude Code's own run) the wait
    is the ask. *deny*'s *failed* is a deny wisp could not decide (bad input, an unusable
    channel, a stop): answered in the harness's strongest blocking form. (A named tuple: the
    hook's path reads it, and attrs costs more to import than the interpreter's start, issue
    41.)"""

    # --- the hook at run time
    name: str  # `wisp hook NAME`, `wisp agents setup NAME`, and the requests' client
    title: str  # how a person calls it
    parse: Callable[[dict[str, object]], ToolCall]
    allow: Callable[[str], Said]
    deny: Callable[[str, bool], Said]
    # What --print-settings prints (and setup merges), for the hook's options: the hook block
    # (JSON) for its config, or (OpenCode) the text of the file to install.
    settings: Callable[[HookOptions], dict[str, object] | str]
    # Its installation's two it cannot do without (the rest of it below): its executable on
    # PATH, and its user's config file, from (environment, home).
    program: str
    user_file: Callable[[Mapping[str, str], Path], Path]
    # Whether the installed command is wisp's guard (not where the caller fails closed itself).
    guarded: bool = True
    # A harness that can "ask" in its own dialog (Cursor): an unanswered call is put to the
    # person there instead of denied.
    ask: Callable[[str], Said] | None = None
    # A harness with a run of its own (Claude Code: its events, its dialog): the exit status
    # of one hook run past its options; else :func:`serve_harness` answers with the above.
    serve: Callable[[Stop, HookOptions], int] | None = None
    on_timeout: bool = False  # whether it takes --on-timeout (Claude Code)
    # The command's words where they are not the shared ones: its help, --wait's and
    # --print-settings', its examples.
    summary: str | None = None
    wait_help: str | None = None
    prints: str | None = None
    examples: tuple[str, ...] = ()

    # --- the installation (`wisp agents setup|remove|status NAME`)
    fmt: Format = Format.JSON
    # What a file of wisp's own (Format.TEXT) starts with, where it is not the plugin's
    # `// wisp's TITLE plugin` (Cline's hook script: its shebang first).
    mark: str | None = None
    events: tuple[str, ...] = ()  # the hook events whose entries wisp owns
    project_file: Callable[[Path], Path] | None = None  # None: the user level only
    whole_file: bool = False  # the file is wisp's alone (Copilot's hooks/wisp.json)
    flat: bool = False  # an event's list holds the hooks themselves (Cursor's hooks.json)
    top_level: bool = False  # the events are the file's own keys, no `hooks` (Droid's)
    timeout_key: str = "timeout"
    timeout_scale: int = 1  # the timeout's unit, in seconds per written unit (ms: 1000)
    command_key: str = "command"
    # Optional capabilities of the installation, each a harness's own:
    # wisp's settings beside its hooks, merged by setup (Claude Code's sandbox and deny rules);
    sandbox: Callable[[], dict[str, object]] | None = None
    # what keeps the agent from $WISP_HOME and wisp, as its config (and the project at cwd)
    # say it: the problems (None: wisp sets up no sandbox there);
    protection: Callable[[Mapping[str, object], Path], list[str]] | None = None
    # where its agent may write (reach's WritableRoots: reach, which stands on this module, is
    # not named here), as its config (and the project at cwd, if any) say, for a person whose
    # home is the last argument;
    roots: Callable[[Mapping[str, object], Path | None, Path], Sequence[Any]] | None = None
    # what setup tells the person of its new config (None: that its sandbox is not set up),
    # with the project set up (None: the user's);
    notes: Callable[[Mapping[str, object], Path | None], list[str]] | None = None
    # wisp's hooks the installed program would skip (Codex's trust, Copilot's folders), given
    # it and the hooks status found;
    skipped: Callable[[str, list[dict[str, object]]], list[str]] | None = None
    project_note: str | None = None  # what setup at a project's level must say

    # --- the policy (issue 57): what its tools do, tool name → :class:`ToolEffect` (a tool
    # not in it does what nobody knows: asked, never allowed by a built-in rule); and the
    # files a shell line edits by itself (Codex's `apply_patch` heredoc), None: not an edit.
    tools: Mapping[str, ToolEffect] | None = None
    patched: Callable[[str], tuple[str, ...] | None] | None = None


PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def patch_paths(patch: str) -> tuple[str, ...]:
    """The files a patch in the `*** Begin Patch` format edits, adds, deletes or moves to, as
    its headers name them (relative to the cwd, or absolute)."""
    found: list[str] = []
    for line in patch.splitlines():
        for header in PATCH_HEADERS:
            if line.startswith(header) and line[len(header) :].strip():
                found.append(line[len(header) :].strip())
    return tuple(found)


# Compiled on first use (re's cache), by a line that starts so: not by every hook's import.
_HEREDOC_START = r"(?:apply_patch|applypatch)\s*<<(-?)\s*(['\"]?)([A-Za-z_]\w*)\2"
PATCH_BEGIN, PATCH_END = "*** Begin Patch", "*** End Patch"


def apply_patch_paths(command: str) -> tuple[str, ...] | None:
    """The files a shell line that is only `apply_patch <<'EOF'` and a whole patch edits (as
    Codex's edits reach a hook: a `Bash` call), or None for any other line."""
    lines = command.strip().split("\n")
    first = lines[0].strip()
    if len(lines) < 3 or not first.startswith(("apply_patch", "applypatch")):
        return None
    start = re.fullmatch(_HEREDOC_START, first)
    if start is None:
        return None
    strip = start.group(1) == "-"
    tag = start.group(3)
    end = next(
        (i for i, line in enumerate(lines) if i and (line.lstrip("\t") if strip else line) == tag),
        None,
    )
    if end is None or end != len(lines) - 1:  # anything after the patch: not only a patch
        return None
    body = [line.lstrip("\t") if strip else line for line in lines[1:end]]
    if not body or body[0].strip() != PATCH_BEGIN or body[-1].strip() != PATCH_END:
        return None
    return patch_paths("\n".join(body)) or None


def _named(value: object) -> tuple[str, ...]:
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list | tuple):
        return tuple(v for v in value if isinstance(v, str) and v)
    return ()


def effect_of(harness: Harness | None, call: ToolCall) -> tuple[Effect, tuple[str, ...]]:
    """What *call* does, as *harness*'s table says, and the paths it names: a shell call is
    a shell line (unless the harness reads it as an edit: :attr:`Harness.patched`); a tool
    its table does not name (or a harness with none) is :attr:`Effect.OTHER`."""
    if call.command is not None:
        patched = harness.patched(call.command) if harness and harness.patched else None
        return (Effect.EDIT, patched) if patched else (Effect.SHELL, ())
    said = (harness.tools or {}).get(call.tool) if harness is not None else None
    if said is None or said.effect is Effect.SHELL:  # a shell tool's call carries its command
        return Effect.OTHER, ()
    paths = tuple(p for name in said.paths for p in _named(call.input.get(name)))
    if said.patch is not None:
        text = call.input.get(said.patch)
        paths += patch_paths(text) if isinstance(text, str) else ()
        if not paths:  # a patch whose files cannot be named edits what nobody knows
            return Effect.OTHER, ()
    if said.effect is Effect.EDIT and not paths:
        return Effect.OTHER, ()
    return said.effect, paths


def with_effect(harness: Harness | None, call: ToolCall) -> ToolCall:
    """*call* with what it does (:func:`effect_of`) as *harness*'s table says."""
    effect, paths = effect_of(harness, call)
    return call._replace(effect=effect, paths=paths)


def __getattr__(name: str) -> object:
    # The table itself lives in wisp._entry, below the policy, which names harnesses too.
    if name == "HARNESS_MODULES":
        return _entry.HARNESS_MODULES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def module_of(name: str) -> str | None:
    """The module of the harness `wisp hook NAME` names (None: wisp knows none), not
    imported."""
    last = name.replace("-", "_")
    return next((m for m in _entry.HARNESS_MODULES if m.rpartition(".")[2] == last), None)


def names() -> tuple[str, ...]:
    """Every harness's name, in order, no module imported."""
    return _entry.harness_names()


def harness(name: str) -> Harness | None:
    """The harness named *name*, its module imported (None: wisp knows none)."""
    module = module_of(name)
    if module is None:
        return None
    found: Harness = importlib.import_module(module).HARNESS
    return found


def harnesses() -> tuple[Harness, ...]:
    """Every harness, in order."""
    return tuple(importlib.import_module(m).HARNESS for m in _entry.HARNESS_MODULES)


def register(module: str) -> None:
    """Add the harness of *module* (its HARNESS, named as the module is) to the ones wisp
    knows, last: what a test does to add a throwaway harness."""
    if module not in _entry.HARNESS_MODULES:
        _entry.HARNESS_MODULES = (*_entry.HARNESS_MODULES, module)


def unregister(module: str) -> None:
    """Take the harness of *module* out of the ones wisp knows."""
    _entry.HARNESS_MODULES = tuple(m for m in _entry.HARNESS_MODULES if m != module)


def grant_hint(request_id: str | None, command: bool) -> str:
    """How to let an unanswered call run without asking next time."""
    group = "approvals" if command else "tools"
    scope = "--scope always" if command else "--as always"
    if request_id is None:
        return ""
    return (
        f"; to let it run without asking next time, approve it when it is asked with "
        f"`wisp {group} approve ID {scope}` (this one was {request_id})"
    )


def answer_harness(
    harness: Harness,
    data: bytes,
    *,
    wait_s: float,
    cancel: Cancel,
    home: Path | None = None,
) -> Said:
    """The harness's answer to the event in *data*: allowed only by a grant or the person;
    anything else (a deny, nobody in time, a stop, too large, bad input, an unusable
    channel) is its deny. Never raises."""
    from wisp._home import wisp_home
    from wisp.agents.gate import Ended, decide_call, failure_reason
    from wisp.policy.decide import Verdict

    try:
        try:
            event = loads_strict(data)
        except DecodeError as exc:
            raise EventRefused(f"the event on stdin is not JSON wisp reads: {exc}") from None
        if not isinstance(event, dict):
            raise EventRefused("the event on stdin is not a JSON object")
        call = with_effect(harness, harness.parse(event))
        decided = decide_call(
            call,
            home=home if home is not None else wisp_home(),
            client=harness.name,
            wait_s=wait_s,
            cancel=cancel,
            expiry_after_s=EXPIRY_AFTER_WAIT_S,
            why_stopped=lambda: getattr(cancel, "why", None),
            silence=Verdict.ASK if harness.ask is not None else Verdict.DENY,
            on_ask=followed(cancel),
        )
    except EventRefused as exc:
        return harness.deny(f"wisp: {exc}; denied", True)
    except Exception as exc:  # fail closed, never a traceback: say what broke, and what to do
        return harness.deny(f"wisp: {failure_reason(exc)}", True)
    said = f"wisp: {decided.reason}"
    if decided.ended is Ended.ALLOWED:
        return harness.allow(said)
    if decided.ended is Ended.DENIED:
        return harness.deny(said, False)
    if decided.ended is Ended.SILENCED:  # its class denies silence, whatever the harness does
        return harness.deny(f"{said}; denied", False)
    if decided.ended is Ended.UNANSWERED and harness.ask is not None:
        return harness.ask(f"{said}; asking in {harness.title} instead")
    if decided.ended is Ended.UNANSWERED:
        hint = grant_hint(decided.request_id, call.command is not None)
        return harness.deny(
            f"{said}; denied ({harness.title} has no dialog to ask in){hint}", False
        )
    return harness.deny(f"{said}; denied", decided.ended is Ended.STOPPED)


def run(stop: Stop, harness: Harness, options: HookOptions) -> int:
    """One run of `wisp hook NAME` past its options: the harness's own run, or
    :func:`serve_harness`; its exit status."""
    if harness.serve is not None:
        return harness.serve(stop, options)
    return serve_harness(stop, harness, options.wait_s)


def serve_harness(stop: Stop, harness: Harness, wait_s: float) -> int:
    """One run of `wisp hook NAME` for *harness* past its options: the event read and
    answered, the answer written; its exit status. (Called by the command, and by the program
    before the CLI loads, :mod:`wisp.__main__`.)"""
    said = serve(
        stop,
        harness.name,
        wait_s,
        lambda data: answer_harness(harness, data, wait_s=wait_s, cancel=stop),
        lambda why: harness.deny(f"wisp: {why}", True),
    )
    write_said(said)
    return said.exit_code


def field(event: dict[str, object], key: str) -> str:
    """A non-empty string field of *event*, or :class:`EventRefused`."""
    value = event.get(key)
    if not isinstance(value, str) or not value:
        raise EventRefused(f"the event has no `{key}` (a string)")
    return value


def named_event_call(
    event: dict[str, object], *, name: str, title: str, shell: str, harness: str
) -> ToolCall:
    """The call in an event that names itself (`hook_event_name` *name*) Claude Code's way:
    `session_id`, `cwd`, `tool_name`, `tool_input` (and `tool_use_id`, where it is sent)."""
    if event.get("hook_event_name") != name:
        raise EventRefused(
            f"wisp answers {title}'s {name}, not {event.get('hook_event_name')!r}: register "
            f"`wisp hook {harness}` under {name} only (`wisp hook {harness} --print-settings`)"
        )
    use_id = event.get("tool_use_id")
    return shell_or_tool(
        field(event, "tool_name"),
        event.get("tool_input"),
        shell=shell,
        session=field(event, "session_id"),
        cwd=field(event, "cwd"),
        title=title,
        tool_use_id=use_id if isinstance(use_id, str) else None,
    )


SHELL_TEXT_FIELDS = frozenset({"command", "description"})  # a shell call's other fields: options
# The fields with which a shell call asks to run outside its harness's sandbox, and the values
# that do not (Claude Code's `dangerouslyDisableSandbox`, Codex's `sandbox_permissions`).
NO_SANDBOX_FIELDS: Mapping[str, tuple[object, ...]] = {
    "dangerouslyDisableSandbox": (None, False),
    "sandbox_permissions": (None, "use_default"),
}


def no_sandbox_warning(title: str, name: str) -> str:
    """What the person must see first about a call asking (with field *name*) to run outside
    *title*'s sandbox."""
    return (
        f"⚠ it asks to run OUTSIDE {title}'s sandbox ({name}): nothing then keeps it from "
        "writing anywhere you can"
    )


def shell_or_tool(
    tool: str,
    tool_input: object,
    *,
    shell: str,
    session: str,
    cwd: str,
    title: str = "the agent",
    tool_use_id: str | None = None,
) -> ToolCall:
    """A call for the gate core: *shell* (the harness's shell tool) with its `command`
    asked as a command, its other fields but `description` as the options a grant binds,
    and a warning first if one asks to leave the sandbox; any other tool as a tool call."""
    from wisp.agents.gate import ToolCall

    if not isinstance(tool_input, Mapping):
        raise EventRefused("the event's tool input is not a JSON object")
    if not Path(cwd).is_absolute():
        raise EventRefused(f"the event's cwd {cwd!r} is not an absolute path")
    command = tool_input.get("command") if tool == shell else None
    if tool == shell and not (isinstance(command, str) and command):
        raise EventRefused(f"a {shell} call with no `command` (a string)")
    description = tool_input.get("description") if command is not None else None
    options = None
    warnings: tuple[str, ...] = ()
    if command is not None:  # what else the call sets is shown, and bound by its grant
        options = {k: v for k, v in tool_input.items() if k not in SHELL_TEXT_FIELDS} or None
        warnings = tuple(
            no_sandbox_warning(title, name)
            for name, harmless in NO_SANDBOX_FIELDS.items()
            if tool_input.get(name) not in harmless
        )
    return ToolCall(
        session=session,
        cwd=cwd,
        tool=tool,
        input=tool_input,
        command=command,
        description=description if isinstance(description, str) and description else None,
        options=options,
        warnings=warnings,
        tool_use_id=tool_use_id,
    )


def guarded_command(
    harness: Harness, wisp: list[str], *, wait_s: float = DEFAULT_WAIT_S
) -> list[str]:
    """The argv a setup installs for *harness*: `wisp hook NAME` in its guard (unless the
    harness's side fails closed by itself)."""
    argv = [*wisp, "hook", harness.name]
    if wait_s != DEFAULT_WAIT_S:
        argv += ["--wait", f"{wait_s:g}"]
    if not harness.guarded:
        return argv
    died = harness.deny(f"wisp: `wisp hook {harness.name}` ended without answering; denied", True)
    return guarded_argv(died, argv)


def printed(harness: Harness, options: HookOptions) -> str:
    """What `wisp hook NAME --print-settings` prints: the harness's settings, a hook block as
    indented JSON or the text of its file."""
    import json

    settings = harness.settings(options)
    return settings if isinstance(settings, str) else json.dumps(settings, indent=2) + "\n"


def installed_argv(harness: Harness, options: HookOptions) -> list[str]:
    """The argv setup (and --print-settings) installs for *harness*: this wisp's `hook NAME`
    with its --wait (:func:`guarded_command`)."""
    return guarded_command(harness, this_wisp(), wait_s=options.wait_s)


# --- the answer in the `decision` shape (Gemini CLI's; wisp's OpenCode plugin reads it) ---

BLOCK_STATUS = 2  # the exit status that blocks the call, for every harness wisp knows


def decision_allow(reason: str) -> Said:
    """`{"decision": "allow", "reason": …}`, exit 0."""
    import json

    return Said(stdout=json.dumps({"decision": "allow", "reason": reason}), exit_code=0)


def decision_deny(reason: str, failed: bool) -> Said:
    """`{"decision": "deny", "reason": …}`; a failure also exits 2 (which blocks by itself),
    its reason on stderr."""
    import json

    return Said(
        stdout=json.dumps({"decision": "deny", "reason": reason}, ensure_ascii=False),
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=reason if failed else None,
    )
