"""Builders and waiting helpers shared by the tests (no sleeping as synchronisation)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zygote

import pending._fsio
from pending import (
    Channel,
    CommandBinding,
    FactBinding,
    Kind,
    QuestionBinding,
    Request,
    ServerLock,
    ToolBinding,
    make_request,
)
from pending.testing import FakeClock

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# Python source that takes every inotify instance this user may still make (a child process
# runs it first, to meet a machine where native watching cannot start); `hoard` holds them.
HOARD_INOTIFY = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
hoard = []
while True:
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        break
    hoard.append(fd)
"""
# How long a test waits for something that should come at once before it calls it a hang.
# Wide: on a 2-core machine running several suites (load 12 and more) starting a Python
# process alone can take seconds; waiting longer costs nothing when it comes on time.
WAIT_S = 30.0


def command(lock: ServerLock, text: str = "make deploy", **kw: Any) -> Request:
    return make_request(
        kind=Kind.COMMAND,
        binding=CommandBinding(command=text, cwd="/srv/shop", thread="c1"),
        title="wisp: run a command?",
        body=text,
        server=lock.record(client="test", thread="c1", entry_point="approvals"),
        **kw,
    )


def fact(lock: ServerLock, value: str = "BLUE HERON", **kw: Any) -> Request:
    return make_request(
        kind=Kind.FACT,
        binding=FactBinding(
            fact_id="c3",
            subject="release",
            name="codename",
            value=value,
            source="chat",
            proposed_by="model",
        ),
        title="wisp: keep as a permanent fact?",
        body=f"release codename = {value}",
        server=lock.record(client="test", thread="c1", entry_point="facts"),
        **kw,
    )


def kept_fact(home: Path, value: str = "RED KITE") -> Any:
    """A permanent fact kept in *home*'s store (release codename = *value*), as if the
    person had kept it: the fact."""
    from wisp.stores.facts import FactStore

    binding = FactBinding(
        fact_id="c1",
        subject="release",
        name="codename",
        value=value,
        source="chat",
        proposed_by="model",
    )
    return FactStore(home).keep(binding, request="aaaa1111", via="cli")[0]


def question(lock: ServerLock, options: tuple[str, ...] | None = None, **kw: Any) -> Request:
    return make_request(
        kind=Kind.QUESTION,
        binding=QuestionBinding(
            question="Which environment?", options=options, free_text=options is None
        ),
        title="wisp: a question for you",
        body="Which environment?",
        server=lock.record(client="test", thread="c1", entry_point="questions"),
        **kw,
    )


def tool(lock: ServerLock, path: str = "/srv/shop/a.py", **kw: Any) -> Request:
    """An Edit of the file at *path*."""
    return make_request(
        kind=Kind.TOOL,
        binding=ToolBinding(
            tool="Edit",
            input={"file_path": path, "old_string": "1", "new_string": "2"},
            cwd="/srv/shop",
            thread="c1",
        ),
        title="wisp: allow a tool call?",
        body=f"Edit {path}",
        server=lock.record(client="test", thread="c1", entry_point="hook"),
        **kw,
    )


BUILDERS: dict[Kind, Callable[..., Request]] = {
    Kind.COMMAND: command,
    Kind.FACT: fact,
    Kind.QUESTION: question,
    Kind.TOOL: tool,
}


def wait_until(
    condition: Callable[[], Any], timeout: float = WAIT_S, what: str = "condition"
) -> Any:
    """Poll *condition* until truthy, within a bounded deadline (tests only)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.005)


def nameless_here(directory: Path) -> bool:
    """Whether a publication in *directory* is staged nameless: the system offers it, and
    this filesystem takes an O_TMPFILE (FUSE, NFS and older overlayfs refuse it)."""
    if not pending._fsio._NAMELESS:
        return False
    try:
        os.close(os.open(directory, os.O_WRONLY | os.O_TMPFILE, 0o600))
    except OSError:
        return False
    return True


def install_fixture(channel: Channel, source: Path) -> Path:
    """Copy a fixture file into the channel as a writer would leave it (ours, 0600)."""
    target = channel.path / source.name
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)
    return target


def fake_clock_channel(home: Path) -> tuple[Channel, FakeClock]:
    clock = FakeClock()
    return Channel.open(home, clock=clock), clock


def running(pid: int) -> bool:
    """Whether *pid* runs. A zombie (ended, not yet reaped) does not; nor does a process that
    ends while it is looked at: its /proc entry can go between the open and the read, which
    then fails with ESRCH (seen with servers reaped the moment they exit)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # FileNotFoundError, or ProcessLookupError mid-read
        return False
    return stat.rpartition(") ")[2][:1] != "Z"  # the state follows the command's name


def wisp_command(*args: str, own_terminal: bool = False) -> list[str]:
    """The argv of `python -m wisp ARGS` (this interpreter's `wisp`, as installed), started
    warm: forked by this worker's zygote, which has typer and attrs imported already, as its
    own process with the caller's streams, terminal and environment; it runs cold, in place,
    where a fork could not be that process (:mod:`zygote`). Start-up itself is tested cold.
    With *own_terminal*: as `python tests/ctty.py -- python -m wisp ARGS` runs it (a fresh
    controlling terminal, the command in its background, as `wisp tui` starts its relay)."""
    return zygote.command(*args, own_terminal=own_terminal)


def wisp_spawn(*args: str) -> tuple[str, list[str]]:
    """:func:`wisp_command` as ``pexpect.spawn`` takes it: the program, then its arguments."""
    program, *rest = wisp_command(*args)
    return program, rest


def server_pid(home: Path, request_id: str) -> int:
    """The pid of the process that filed a request, as its record says (a warm command's is
    its own, not its launcher's)."""
    with Channel.open(home) as channel:
        return channel.status(request_id).request.server.pid


def run_wisp(
    *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    """Run the `wisp` command in a real process (as installed, via this interpreter)."""
    return subprocess.run(
        wisp_command(*args),
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        **kw,
    )


def race_worker(home: str, index: int, ids: list[str], barrier: Any, results: Any) -> None:
    """One of the racing answerers (run in its own process): answer every ID, in step."""
    from pending import DECISIONS, AlreadyAnswered

    decision = DECISIONS[Kind.COMMAND][index % len(DECISIONS[Kind.COMMAND])]
    with Channel.open(home) as channel:
        for request_id in ids:
            barrier.wait()
            try:
                result = channel.answer(request_id, decision, kind=Kind.COMMAND, via=f"w{index}")
                results.put(
                    (request_id, index, result.won, result.answer.decision, result.answer.pid)
                )
            except AlreadyAnswered as exc:
                results.put((request_id, index, False, exc.answer.decision, exc.answer.pid))


def partial_read_watcher(home: str, ids: list[str], stop: Any, results: Any) -> None:
    """Read the answer files as fast as possible while they are published; count bad reads."""
    from pending import DecodeError, loads_strict
    from pending._fsio import Unreadable, read_bytes

    reads = bad = 0
    with Channel.open(home) as channel:
        while not stop.is_set():
            for request_id in ids:
                try:
                    data = read_bytes(channel.dir_fd, f"{request_id}.answer.json")
                    if data is None:
                        continue
                    loads_strict(data)
                    reads += 1
                except (Unreadable, DecodeError):
                    bad += 1
    results.put((reads, bad))


def take(subscription: Any, count: int, timeout: float = WAIT_S) -> list[Any]:
    """The next *count* items of a subscription, within a bounded deadline."""
    items: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(items) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"got {len(items)} of {count} events: {items!r}")
        item = subscription.get(timeout=remaining)
        if item is not None:
            items.append(item)
    return items


def quiet(subscription: Any, window: float = 0.3) -> None:
    """Assert nothing more arrives within *window* seconds (absence needs a bounded window)."""
    item = subscription.get(timeout=window)
    assert item is None, f"unexpected event {item!r}"


def events(items: list[Any]) -> list[tuple[str, str]]:
    return [(t.event.value, t.id) for t in items]


ASKER_CHILD = """
import sys
sys.path.insert(0, {tests!r})
from pending import Channel
from helpers import BUILDERS
from pending import Kind
channel = Channel.open({home!r})
lock = channel.server().acquire()
print(lock.id, flush=True)
made = [BUILDERS[Kind(kind)](lock) for kind in {kinds!r}]
for request in made:
    channel.file(request)
print(" ".join(r.id for r in made), flush=True)
sys.stdin.read()
"""


class Asker:
    """A real asking process: holds a server lock, files requests of *kinds*, then waits on
    its stdin until killed or closed."""

    def __init__(self, home: Path, *kinds: str) -> None:
        code = ASKER_CHILD.format(tests=str(ROOT / "tests"), home=str(home), kinds=list(kinds))
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self._out = self.process.stdout
        self.server_id = self._out.readline().strip()

    def filed(self) -> list[str]:
        """The IDs it filed, once it has filed them all."""
        return self._out.readline().split()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


def burst_filer(home: str, count: int, start: Any, results: Any) -> None:
    """File and answer *count* requests as fast as possible (run in its own process)."""
    with Channel.open(home) as channel, channel.server() as lock:
        start.wait()
        ids = []
        for _ in range(count):
            req = command(lock)
            channel.file(req)
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            ids.append(req.id)
        results.put(ids)
        start.wait()  # keep the lock until the watcher has seen everything


ANSWER_LINE = re.compile(r"wisp (?:approvals approve|questions answer) ([0-9a-f]+)")


class AskingCommand:
    """`wisp approvals request …`, `wisp questions ask …` or `wisp exec …` running in its own
    process (in *cwd*, if given), read until it says how to answer."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            wisp_command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
        )
        assert self.process.stderr is not None
        self.prompt = ""
        for line in self.process.stderr:
            self.prompt += line
            found = ANSWER_LINE.search(line)
            if found:
                self.id = found.group(1)
                break
        else:
            raise AssertionError(f"no request was filed: {self.prompt!r}")

    def result(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, self.prompt + err


def in_terminal(*args: str, timeout: float = 60) -> tuple[int, str]:
    """Run `wisp ARGS` with a real pseudo-terminal as its stdin/stdout, as a person would."""
    return pty_run(*wisp_spawn(*args), timeout=timeout)


def pty_run(
    program: str,
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    dimensions: tuple[int, int] = (40, 250),
    timeout: float = 60,
) -> tuple[int, str]:
    """Run *program* ARGS to its end under a pseudo-terminal of *dimensions* (rows, columns):
    its status (128 + the signal's number if one ended it), and all it printed, its lines
    ended by "\\n" as written (a pty ends them by CR LF)."""
    import pexpect

    child = pexpect.spawn(
        program, args, env=env, encoding="utf-8", timeout=timeout, dimensions=dimensions
    )
    try:
        child.expect(pexpect.EOF)
    finally:
        # Closed however it went: a command still running past *timeout* (a busy machine) is
        # ended and its pseudo-terminal given back at once. Left to the failed test's
        # traceback, which pytest keeps, each held a pty to the run's end (and its command
        # ran on): a loaded run met `out of pty devices` in test_web.py.
        child.close(force=True)
    output = (child.before or "").replace("\r\n", "\n")
    status = child.exitstatus if child.exitstatus is not None else 128 + (child.signalstatus or 0)
    return status, output


def remove_tree(path: Path, within: float = WAIT_S) -> None:
    """`rm -rf PATH` while a live process may still write into it (a relay audits the channel
    directory's removal into PATH/logs as it happens, so the last `rmdir` can find the log
    made again): removed again until it is gone, within a bounded deadline."""
    import errno

    deadline = time.monotonic() + within
    while True:
        try:
            shutil.rmtree(path)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY or time.monotonic() > deadline:
                raise


def audit_records(home: Path) -> list[dict[str, Any]]:
    path = home / "logs" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def read_line(stream: Any, timeout: float = WAIT_S) -> str:
    """One line from a child's pipe, within a bounded deadline (never a hang)."""
    import select

    deadline = time.monotonic() + timeout
    line = b""
    fd = stream.fileno()
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise AssertionError(f"no line within {timeout}s (got {line!r})")
        chunk = os.read(fd, 1)
        if not chunk:
            break
        line += chunk
    return line.decode()


# Runs the `wisp` program (wisp.__main__.run, or the CLI's main with PROBE_CLI in its
# environment) on its argv after "wisp", and says on stderr, last, which modules it had loaded
# (run() ends with the exit handlers): what is served before the CLI loads, and what it loads.
START_PROBE = """\
import atexit, json, os, sys
atexit.register(
    lambda: sys.stderr.write("\\nPROBED " + json.dumps(sorted(sys.modules)) + "\\n")
)
sys.argv = ["wisp", *sys.argv[2:]]
if os.environ.get("PROBE_CLI"):
    from wisp.cli import main
    try:
        main()
    except SystemExit as exc:
        sys.stdout.flush()
        atexit._run_exitfuncs()
        raise SystemExit(exc.code) from None
from wisp.__main__ import run
run()
"""


def probe_env(home: Path, *, cli: bool = False) -> dict[str, str]:
    """The environment :data:`START_PROBE` runs `wisp` in: WISP_HOME and PATH only, and
    PROBE_CLI when *cli* (through the CLI's main, as before the program served it)."""
    return {"WISP_HOME": str(home), "PATH": "/usr/bin:/bin", **({"PROBE_CLI": "1"} if cli else {})}


def probed_wisp(
    probe: str, home: Path, *args: str, cwd: Path, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """`wisp ARGS` run by *probe* (a program that runs wisp.__main__.run on its argv after
    "wisp", and reports on stderr) in a fresh interpreter, with WISP_HOME and PATH only."""
    return subprocess.run(
        [sys.executable, "-c", probe, "wisp", *args],
        input=stdin,
        capture_output=True,
        env={"WISP_HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=cwd,
        timeout=120,
        check=False,
    )


def claude_hook_call(
    project: Path, command: str, *args: str, env: dict[str, str] | None = None
) -> str:
    """A real `wisp hook claude-code` process run on a Bash call of *command* in *project*
    (a folder with a `.git` of its own: a project), as Claude Code sends it; its answer in
    a word (allow, deny, ask)."""
    data = json.loads((FIXTURES / "agents" / "claude-code" / "pre-tool-shell.json").read_text())
    data.update(cwd=str(project), tool_name="Bash", tool_input={"command": command})
    done = subprocess.run(
        wisp_command("hook", "claude-code", *args),
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=60,
        env=env,
    )
    said = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"]
    return str(said)
