"""Other machines on the one page: each `--host` of `wisp web` is that host's own relay
(`ssh -tt HOST wisp relay --via web`, as `wisp tui --host` runs it), spoken to in
:mod:`wisp.relay.protocol`'s lines.

A :class:`RemoteHost` keeps what its relay says waits there (as :class:`pending.Status`
records rebuilt from the relay's `approval` lines, so the page shows them as it shows this
machine's), hands the page's answers to the relay as `answer` lines and waits for its
report (first answer wins there, as everywhere), and says when the relay has ended (the
host is *down*, with why). Its relay's stdout is read by a thread blocked on the pipe:
nothing polls. The relay is started from an argv list, never through a shell.
"""

from __future__ import annotations

import contextlib
import enum
import os
import shlex
import signal
import subprocess
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import attrs

from pending import (
    KINDS,
    Request,
    Server,
    Status,
    binding_digest,
    from_json,
    start_thread,
)
from wisp.kinds import view
from wisp.relay.hosts import LOCAL, LinkError, check_hosts, host_argv
from wisp.relay.protocol import (
    Answered,
    AnswerLine,
    ApprovalLine,
    Decided,
    Effect,
    ErrorLine,
    Hello,
    LineError,
    LineSplitter,
    Ready,
    TooLong,
    Withdrawn,
    decode_relay,
    effect_kinds,
    encode,
)

__all__ = [
    "LOCAL",
    "SSH_RELAY",
    "HostState",
    "LinkError",
    "RemoteHost",
    "Reply",
    "remote_hosts",
]

# Another machine's relay, as `wisp tui --host` runs it (docs/tui.md): -tt gives the far
# relay a terminal, so it takes answers; BatchMode, so ssh never prompts; `--` so a host is
# never read as an option. `--via web`: its answers are audited there as the page's.
SSH_RELAY = "ssh -tt -o BatchMode=yes -- {host} wisp relay --via web"
READ_CHUNK = 64 * 1024
STDERR_LINES = 20  # the last lines of a relay's stderr, kept to say why it ended
ENDED_KEPT = 64  # requests of a host that ended lately, remembered for their pages
# How long an answer handed to a far relay is waited for: the relay reports once the asker
# has settled, or after answer.waitSeconds (at most 300 s, docs/config.md), plus ssh's trip.
ANSWER_WAIT_S = 330.0
STOP_WAIT_S = 3.0  # after its input is closed, how long a relay is given before SIGTERM
END_OF_INPUT = b"\x04"  # Ctrl-D: ends a relay's input on a raw terminal (ssh -tt) or a pipe


class HostState(enum.Enum):
    STARTING = "starting"
    READY = "ready"
    DOWN = "down"


@attrs.frozen(kw_only=True)
class Reply:
    """What a far relay said of one answer: its report, or the refusal (an `error` line),
    or neither (``down``: the relay ended, or said nothing in time)."""

    answered: Answered | None = None
    error: ErrorLine | None = None
    down: str | None = None


def status_of(line: ApprovalLine) -> Status:
    """A far relay's `approval` line as the channel's status record, so the page shows it
    as it shows this machine's (raises ValueError if its fields are no binding of its kind).
    Its binding digest is computed here from the fields sent: the far relay binds an answer
    to the request as it sent it, and refuses one that changed (`request-changed`)."""
    fields = {key: value for key, value in line.fields.items() if value is not None}
    binding = from_json(fields, KINDS[line.kind].binding_type)
    server = Server(
        id=line.server.id,
        pid=line.server.pid or 0,
        client=line.server.client,
        thread=line.server.thread,
        entry_point=line.server.entry_point,
    )
    request = Request(
        id=line.id,
        kind=line.kind,
        filed_at=line.filed_at or datetime.now(UTC),
        expires_at=line.expires_at,
        server=server,
        title=line.title,
        body=line.body,
        binding=binding,
        binding_digest=binding_digest(binding),
    )
    return Status(
        id=line.id,
        kind=line.kind,
        state=line.state,
        request=request,
        server_alive=line.server.alive,
    )


def hello() -> Hello:
    """What `wisp web` says to a far relay first: every request effect, and `show-decided`
    (the calls decided there without asking, for the page's list; no `notify`: a
    notification is the asker's own, on its machine)."""
    from wisp import __version__

    effects = (*effect_kinds(), Effect.SHOW_DECIDED.value)
    return Hello(effects=effects, client="wisp-web", version=__version__)


class RemoteHost:
    """One other machine's channel, through its relay."""

    def __init__(
        self,
        host: str,
        argv: Sequence[str],
        *,
        on_change: Callable[[str, str], None],
        on_state: Callable[[str], None],
        on_decided: Callable[[str, Decided], None] | None = None,
    ) -> None:
        self.host = host
        self._on_decided = on_decided  # (host, line): a call decided there without asking
        self.argv = list(argv)
        self._on_change = on_change  # (host, request ID): a request of this host changed
        self._on_state = on_state  # (host): the host started, is ready, or is down
        self._lock = threading.Lock()
        self._waiting: dict[str, Status] = {}
        self._ended: OrderedDict[str, tuple[Status | None, str]] = OrderedDict()
        self._replies: dict[str, tuple[threading.Event, list[Reply]]] = {}
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._popen: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []  # its stderr's reader, then its stdout's
        self.state = HostState.STARTING
        self.why = ""  # why it is down
        self._fatal = ""  # what the relay said as it ended (a `fatal` error line)

    # --- life ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the relay (its own process group, so a Ctrl-C in `wisp web`'s terminal is
        not its) and say hello; a relay that cannot start leaves the host down."""
        try:
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
            )
        except OSError as exc:
            self._down(f"cannot start {shlex.join(self.argv)}: {exc.strerror or exc}")
            return
        assert self._popen.stdin is not None
        with contextlib.suppress(OSError):  # it died at once: its exit status says why
            self._popen.stdin.write(encode(hello()))
            self._popen.stdin.flush()
        for target, name in ((self._read_stderr, "stderr"), (self._follow, "stdout")):
            thread = threading.Thread(target=target, name=f"web-host-{name}", daemon=True)
            self._threads.append(thread)
            start_thread(thread)

    def close(self) -> None:
        """End the relay: Ctrl-D and its input closed, then SIGTERM to its group."""
        popen = self._popen
        if popen is None:
            return
        if popen.poll() is None and popen.stdin is not None:
            with contextlib.suppress(OSError):
                popen.stdin.write(END_OF_INPUT)
                popen.stdin.flush()
            with contextlib.suppress(OSError):
                popen.stdin.close()
            try:
                popen.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(popen.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    popen.wait(STOP_WAIT_S)
        for thread in self._threads:
            thread.join(timeout=STOP_WAIT_S)

    # --- reading -------------------------------------------------------------------------

    def waiting(self) -> list[Status]:
        with self._lock:
            return list(self._waiting.values())

    def known(self, request_id: str) -> Status | None:
        """A request of this host that waits, or None."""
        with self._lock:
            return self._waiting.get(request_id)

    def ended(self, request_id: str) -> tuple[Status | None, str] | None:
        """A request of this host that ended lately: its last status and how it ended."""
        with self._lock:
            return self._ended.get(request_id)

    # --- answering -----------------------------------------------------------------------

    def send(self, line: AnswerLine) -> threading.Event | None:
        """Hand *line* to the relay; the event is set once it has replied (see
        :meth:`reply`). None: the relay is down, or an answer to this request is already on
        its way from this page (nothing was sent)."""
        popen = self._popen
        with self._lock:
            if self.state is HostState.DOWN or popen is None or popen.stdin is None:
                return None
            if line.id in self._replies:
                return None
            event = threading.Event()
            self._replies[line.id] = (event, [])
            try:
                popen.stdin.write(encode(line))
                popen.stdin.flush()
            except OSError:
                del self._replies[line.id]
                return None
        return event

    def reply(self, request_id: str, event: threading.Event) -> Reply:
        """The relay's reply to the answer sent for *request_id*, waited for (at most
        ANSWER_WAIT_S)."""
        event.wait(ANSWER_WAIT_S)
        with self._lock:
            _event, said = self._replies.pop(request_id, (event, []))
        if said:
            return said[0]
        return Reply(down=self.why or f"{self.host} said nothing in {ANSWER_WAIT_S:.0f} s")

    # --- following -----------------------------------------------------------------------

    def _follow(self) -> None:
        popen = self._popen
        assert popen is not None and popen.stdout is not None
        splitter = LineSplitter()
        while True:
            chunk = os.read(popen.stdout.fileno(), READ_CHUNK)
            for piece in splitter.feed(chunk) if chunk else splitter.end():
                if not isinstance(piece, TooLong):
                    self._take(piece)
            if not chunk:
                break
        code = popen.wait()
        self._threads[0].join(timeout=STOP_WAIT_S)  # its stderr read to the end: why it ended
        last = self._fatal or (self._stderr[-1] if self._stderr else "")
        how = f"exited {code}" if code >= 0 else f"was killed by signal {-code}"
        self._down(f"its relay ended ({how}{': ' + last[:200] if last else ''})")

    def _take(self, data: bytes) -> None:
        try:
            line = decode_relay(data)
        except LineError:
            return  # a non-JSON line of the far terminal, or a newer relay's: skipped
        if isinstance(line, Ready):
            self.state = HostState.READY
            self._on_state(self.host)
        elif isinstance(line, ApprovalLine):
            try:
                status = status_of(line)
            except (ValueError, TypeError):
                return  # fields no binding of its kind takes: a hostile or broken relay
            with self._lock:
                self._waiting[line.id] = status
            self._on_change(self.host, line.id)
        elif isinstance(line, Withdrawn):
            self._end(line.id, line.reason)
        elif isinstance(line, Decided):
            if self._on_decided is not None:
                self._on_decided(self.host, line)
        elif isinstance(line, Answered):
            if line.won:
                said = view(line.kind).answered_word(line.decision) if line.kind else "answered"
                self._end(line.id, f"{said} from this page")
            self._replied(line.id, Reply(answered=line))
        elif isinstance(line, ErrorLine) and line.fatal:
            self._fatal = line.message  # behind ssh -tt its stderr is in this stream too
        elif isinstance(line, ErrorLine) and line.id is not None:
            self._replied(line.id, Reply(error=line))

    def _end(self, request_id: str, reason: str) -> None:
        with self._lock:
            before = self._waiting.pop(request_id, None)
            self._ended[request_id] = (before, reason)
            self._ended.move_to_end(request_id)
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
        self._on_change(self.host, request_id)

    def _replied(self, request_id: str, reply: Reply) -> None:
        with self._lock:
            waiting = self._replies.get(request_id)
            if waiting is None:
                return
            waiting[1].append(reply)
        waiting[0].set()

    def _down(self, why: str) -> None:
        with self._lock:
            self.state = HostState.DOWN
            self.why = why
            self._waiting.clear()
            replies = list(self._replies.values())
        for event, said in replies:
            said.append(Reply(down=why))
            event.set()
        self._on_state(self.host)

    def _read_stderr(self) -> None:
        popen = self._popen
        assert popen is not None and popen.stderr is not None
        splitter = LineSplitter(limit=READ_CHUNK)
        while True:
            chunk = os.read(popen.stderr.fileno(), READ_CHUNK)
            for piece in splitter.feed(chunk) if chunk else splitter.end():
                if isinstance(piece, bytes) and piece.strip():
                    self._stderr.append(piece.decode("utf-8", "replace").strip())
            if not chunk:
                return


def remote_hosts(
    hosts: Sequence[str],
    relay_command: str | None,
    *,
    on_change: Callable[[str, str], None],
    on_state: Callable[[str], None],
    on_decided: Callable[[str, Decided], None] | None = None,
) -> list[RemoteHost]:
    """The `--host` values as relays (not started); raises :class:`LinkError` for a host
    ssh could not take, `local`, or one given twice (as `wisp tui` does)."""
    if LOCAL in hosts:
        raise LinkError(
            f"--host {LOCAL} names this machine's channel, which `wisp web` always shows: "
            "leave it out, or give another machine by its ssh name."
        )
    return [
        RemoteHost(
            host,
            host_argv(relay_command or SSH_RELAY, host),
            on_change=on_change,
            on_state=on_state,
            on_decided=on_decided,
        )
        for host in check_hosts(hosts)
    ]
