"""`wisp relay`: the channel as JSON lines, for a front end that runs it as a child.

Three threads, one lock. The main thread reads the front end's lines (stdin) and acts on them;
the watch thread turns the Inbox's transitions into `approval` and `withdrawn` lines; each
answer runs in a thread of its own, since the Answerer waits (up to `answer.waitSeconds`) for
the asker's outcome and the relay must go on relaying meanwhile. Every line out goes through
:class:`Output`, whole, one at a time. Lines in and out are records of
:mod:`wisp.relay.protocol`, the module a front end speaks through too.

The relay has no answering code of its own: answers go through :class:`wisp.Answerer`,
watching through :class:`wisp.Inbox`, the hello's audit through :func:`wisp.audit.hello.hello_heard`
and notifications through the :class:`wisp.Notifier`'s `host` route.
"""

from __future__ import annotations

import os
import queue
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from pending import (
    KINDS,
    AlreadySettled,
    Channel,
    InvalidDecision,
    InvalidId,
    Kind,
    Missed,
    PendingError,
    Request,
    RequestChanged,
    StaleRequest,
    Status,
    UnknownRequest,
    UnreadableRequest,
    Via,
    WrongKind,
    start_thread,
)
from wisp import (
    ASKED_MAX,
    Answerer,
    ChannelBack,
    ChannelGone,
    DecidedCall,
    EndedRequest,
    EntryPoint,
    Face,
    Found,
    HomeGone,
    LiveInbox,
    Notifier,
    StoreError,
    WispError,
    __version__,
    contradicted,
    default_notifier,
    ended_requests,
    follow_decided,
    hello_heard,
    open_channel,
)
from wisp.kinds import notice_for, views
from wisp.kinds.tool import call_line
from wisp.relay._lines import (
    answered_line,
    approval_line,
    decided_of,
    effect_of,
    error_line,
    undeclared_line,
    withdrawn_line,
)
from wisp.relay.protocol import (
    ANSWERABLE,
    EXIT_ERROR,
    EXIT_OK,
    NO_HELLO,
    AnswerLine,
    Effect,
    Ended,
    ErrorCode,
    ErrorLine,
    Hello,
    HistoryReply,
    HistoryRequest,
    Line,
    LineError,
    LineSplitter,
    Notify,
    Ready,
    TooLong,
    decode_front_end,
    encode,
)

# How long the relay waits for a first line before it serves a front end without a hello
# (command approvals only). A hello that comes later, as the first line, still counts: the
# relay then sends what it newly declared and withdraws what it did not.
HELLO_WAIT_S = 1.0
READ_CHUNK = 64 * 1024
INPUT_BACKLOG = 64  # lines read ahead of the main thread; then stdin is left in the pipe
MAX_IN_FLIGHT = 32  # answers being given at once; more are refused (`busy`)
# After EOF, how long answers in flight get, beyond answer.waitSeconds, to report.
DRAIN_GRACE_S = 5.0

_EOF = object()
END_BYTES = (b"\x04", b"\x03")  # Ctrl-D, Ctrl-C: the end of input on a raw terminal

# Refusals from the Answerer, by the code an `error` line gives them.
_CODES: list[tuple[type[Exception], ErrorCode]] = [
    (InvalidId, ErrorCode.INVALID_ID),
    (UnknownRequest, ErrorCode.UNKNOWN_REQUEST),
    (UnreadableRequest, ErrorCode.UNREADABLE_REQUEST),
    (WrongKind, ErrorCode.WRONG_KIND),
    (InvalidDecision, ErrorCode.INVALID_DECISION),
    (AlreadySettled, ErrorCode.ALREADY_SETTLED),
    (StaleRequest, ErrorCode.STALE),
    (RequestChanged, ErrorCode.REQUEST_CHANGED),
]


class Output:
    """The relay's stdout: one protocol line at a time, written whole, from any thread. Once
    the front end has gone (a broken pipe) every later line is dropped."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def send(self, line: Line) -> bool:
        data = encode(line)
        with self._lock:
            if self.closed:
                return False
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ConnectionError, ValueError, OSError):
                self.closed = True
                return False
        return True


def read_input(fd: int, into: queue.Queue[object]) -> None:
    """The reader thread: stdin split into lines (over-long ones marked), then _EOF. A byte
    Ctrl-D or Ctrl-C (which no JSON line holds raw) ends the input as EOF does: a terminal set
    raw (`ssh -tt`) has no other end of input."""
    splitter = LineSplitter()
    try:
        while True:
            chunk = os.read(fd, READ_CHUNK)
            cut = min((i for i in (chunk.find(b) for b in END_BYTES) if i >= 0), default=-1)
            if cut >= 0:
                chunk = chunk[:cut]
                for piece in [*splitter.feed(chunk), *splitter.end()]:
                    into.put(piece)
                break
            for piece in splitter.feed(chunk) if chunk else splitter.end():
                into.put(piece)
            if not chunk:
                break
    except OSError as exc:
        sys.stderr.write(f"wisp relay: cannot read standard input: {exc.strerror}\n")
    into.put(_EOF)


class Relay:
    """One front end's relay over one channel."""

    def __init__(
        self,
        channel: Channel,
        out: Output,
        *,
        on_warning: Callable[[str], None],
        hostname: str | None = None,
        via: Via = Via.RELAY,
        terminal: Callable[[], str | None] = lambda: None,
    ) -> None:
        """*via*: whom answers are given as (`tui` only for `wisp tui`'s own relay child, by
        its command line); *terminal*: None while answers may be taken, else why not (see
        :mod:`wisp.relay._terminal`)."""
        self.channel = channel
        self.out = out
        self.via = via
        self.terminal = terminal
        self.on_warning = on_warning
        self.hostname = hostname or socket.gethostname()
        self.hello = NO_HELLO
        self.heard_first = False  # a first line came: a hello now would not be first
        self.answerer = self._answerer()
        self.notifier: Notifier | None = None
        self.sent: dict[str, Status] = {}  # id -> the status sent: what the person is shown
        self.answering: set[str] = set()
        self.threads: list[threading.Thread] = []
        self.lock = threading.RLock()
        self.exit_code = EXIT_OK
        self._lines: queue.Queue[object] | None = None
        self._decided: Callable[[], None] | None = None  # stops the decided calls' follower

    def _answerer(self) -> Answerer:
        # The relay's own `via` (from its command line), never the hello's: a front end's
        # word about itself is not taken as who answers (docs/relay.md, "via").
        return Answerer(self.channel, via=self.via, entry_point=self.answerer_entry)

    # --- the run ---------------------------------------------------------------------

    def run(self, stdin_fd: int) -> int:
        lines: queue.Queue[object] = queue.Queue(maxsize=INPUT_BACKLOG)
        reader = threading.Thread(
            target=read_input, args=(stdin_fd, lines), name="relay-stdin", daemon=True
        )
        self._lines = lines
        # A live view, as `wisp pending watch` has: the channel directory removed and made
        # again is followed to the new one, never left watched blind (see _watch).
        live = LiveInbox(
            self.channel.home, entry_point=EntryPoint.RELAY, on_warning=self.on_warning
        )
        try:
            start_thread(reader)
            try:
                first: object | None = lines.get(timeout=HELLO_WAIT_S)
            except queue.Empty:
                first = None
            # What waits when the hello comes (or the wait for it ends), not when the relay
            # started: `ready` follows every request then waiting. A request filed between
            # the two came only after `ready` (the watch's transitions are taken after it).
            snapshot = live.start(self.channel)
            hello = self._hello_of(first)
            if hello is not None:
                self.heard_first = True
                self._start(hello, snapshot)
                first = None
            else:
                self._start(NO_HELLO, snapshot, announce_ready=False)
            watch = threading.Thread(
                target=self._watch, args=(live,), name="relay-watch", daemon=True
            )
            start_thread(watch)
            item = first
            while True:
                if item is None:
                    item = lines.get()
                if item is _EOF:
                    break
                assert isinstance(item, bytes | TooLong)
                self._take(item)
                item = None
            self._drain()
        finally:
            live.close()
            if self._decided is not None:
                self._decided()
        watch.join(timeout=DRAIN_GRACE_S)
        return self.exit_code

    @staticmethod
    def _hello_of(item: object) -> Hello | None:
        if not isinstance(item, bytes):
            return None
        try:
            line = decode_front_end(item)
        except LineError:
            return None
        return line if isinstance(line, Hello) else None

    def _start(self, hello: Hello, snapshot: list[Status], *, announce_ready: bool = True) -> None:
        """Take *hello*'s effects and send what waits of its kinds (then `ready`)."""
        with self.lock:
            self._take_hello(hello)
            for status in snapshot:
                self._consider(status, new=False)
            if announce_ready:
                self._ready()

    def _take_hello(self, hello: Hello) -> None:
        self.hello = hello
        self.notifier = None
        if hello is not NO_HELLO:
            hello_heard(
                self.channel.home,
                effects=hello.known,
                ignored=hello.ignored,
                client=hello.client,
                version=hello.version,
                via=self.via,
                entry_point=self.answerer_entry,
            )
        if hello.notify:
            # Notifications for new requests go to the front end as `notify` lines (the
            # notifier's `host` route): never posted from this process, whose terminal (if
            # any) belongs to the front end.
            base = default_notifier(self.channel.home, self.answerer_entry)
            self.notifier = Notifier(
                self.channel.home,
                face=Face.JSON,
                host=self._to_front_end,
                settings=base.settings,
                entry_point=self.answerer_entry,
            )

        if Effect.SHOW_DECIDED in hello.known and self._decided is None:
            self._show_decided()

    def _show_decided(self) -> None:
        """Send a `decided` line for each call decided without asking from now on, as the
        audit log records it (its file events drive it: nothing polls); what was decided
        before is not sent. A log that cannot be followed is said on stderr."""

        def send(call: DecidedCall) -> None:
            self.out.send(decided_of(call))

        def stopped(why: str) -> None:
            self.on_warning(f"calls decided without asking are no longer sent: {why}")

        try:
            follower = follow_decided(
                self.channel.home, send, on_error=stopped, on_warning=self.on_warning
            )
        except (WispError, OSError, PendingError) as exc:
            self.on_warning(f"calls decided without asking are not sent ({exc}).")
            self._decided = lambda: None
            return
        self._decided = follower.close

    def _to_front_end(self, notice: dict[str, Any]) -> None:
        """The notifier's `host` route: its notice as a `notify` line."""
        self.out.send(
            Notify(
                title=notice["title"],
                subtitle=notice["subtitle"],
                body=notice["body"],
                sound=notice["sound"],
            )
        )

    @property
    def answerer_entry(self) -> EntryPoint:
        return EntryPoint.TUI if self.via is Via.TUI else EntryPoint.RELAY

    def _ready(self) -> None:
        self.out.send(
            Ready(
                effects=tuple(sorted(self.hello.known)),
                ignored=self.hello.ignored,
                kinds=tuple(sorted(self.hello.kinds)),
                waiting=len(self.sent),
                hostname=self.hostname,
                version=__version__,
                via=self.via,
                answers=self.terminal() is None,
            )
        )

    def _drain(self) -> None:
        """At EOF: let answers in flight finish (each is bounded by answer.waitSeconds)."""
        for thread in list(self.threads):
            thread.join(timeout=self.answerer.wait_s + DRAIN_GRACE_S)

    # --- lines from the front end ------------------------------------------------------

    def _take(self, item: bytes | TooLong) -> None:
        if isinstance(item, TooLong):
            self.out.send(
                error_line(
                    ErrorCode.TOO_LONG,
                    f"a line of {item.size} bytes (over 1 MiB) was skipped unread; "
                    "send one JSON object a line, each under 1 MiB.",
                )
            )
            self.heard_first = True
            return
        try:
            line = decode_front_end(item)
        except LineError as exc:
            self.heard_first = True
            self.out.send(self._refusal(exc))
            return
        if isinstance(line, Hello):
            self._late_hello(line)
        elif isinstance(line, AnswerLine):
            self.heard_first = True
            self._answer(line)
        elif isinstance(line, HistoryRequest):
            self.heard_first = True
            entries = ended_requests(self.channel.home, line.limit)
            self.out.send(HistoryReply(entries=tuple(_ended(e) for e in entries)))

    def _refusal(self, exc: LineError) -> ErrorLine:
        """The `error` line for a line the protocol refused. A decision no kind takes is
        refused with the decisions of the kind the answer was for: as the line says, else
        as the relay sent the request (a command if it never was)."""
        if exc.code is not ErrorCode.INVALID_DECISION:
            return exc.line()
        with self.lock:
            sent = self.sent.get(exc.request_id) if exc.request_id is not None else None
        kind = exc.kind or (sent.kind if sent is not None else Kind.COMMAND)
        return error_line(
            exc.code,
            str(exc),
            request_id=exc.request_id,
            kind=kind,
            allowed=tuple(KINDS[kind].decisions),
        )

    def _late_hello(self, hello: Hello) -> None:
        """A hello that came after the wait, but still first: change to what it declares."""
        if self.heard_first:
            self.out.send(
                error_line(
                    ErrorCode.HELLO_NOT_FIRST,
                    "hello must be the first line, and comes once; this one was ignored. "
                    "Restart the relay to declare other effects.",
                )
            )
            return
        self.heard_first = True
        with self.lock:
            self._take_hello(hello)
            kinds = hello.kinds
            for request_id, status in list(self.sent.items()):
                if status.kind not in kinds and request_id not in self.answering:
                    del self.sent[request_id]
                    self.out.send(undeclared_line(request_id, status.kind))
            for status in self.answerer.listing(kinds=kinds, states=ANSWERABLE).statuses:
                self._consider(status, new=False)
            self._ready()

    def _answer(self, line: AnswerLine) -> None:
        refused = self.terminal()
        if refused is not None:
            self.out.send(
                error_line(
                    ErrorCode.NOT_A_TERMINAL,
                    f"answers are taken only from a front end the person runs in a terminal, "
                    f"and {refused}: this keeps an agent's shell tool from answering for you. "
                    f"Answer in `wisp tui`, or with {_terminal_commands()} in your terminal. "
                    "Nothing was written.",
                    request_id=line.id,
                )
            )
            return
        with self.lock:
            if line.id in self.answering:
                self.out.send(
                    error_line(
                        ErrorCode.BUSY,
                        f"an answer to {line.id} is already being given; wait for its "
                        "`answered` line.",
                        request_id=line.id,
                    )
                )
                return
            if len(self.answering) >= MAX_IN_FLIGHT:
                self.out.send(
                    error_line(
                        ErrorCode.BUSY,
                        f"{MAX_IN_FLIGHT} answers are already being given; send this one "
                        "again once one has its `answered` line.",
                        request_id=line.id,
                    )
                )
                return
            sent = self.sent.get(line.id)
            kind = line.kind or (sent.kind if sent is not None else Kind.COMMAND)
            if kind not in self.hello.kinds:
                self.out.send(
                    error_line(
                        ErrorCode.NOT_DECLARED,
                        f"this front end did not declare {effect_of(kind)}, so it cannot "
                        f"answer {kind.value} requests here; nothing was written.",
                        request_id=line.id,
                        allowed=tuple(sorted(k.value for k in self.hello.kinds)),
                    )
                )
                return
            self.answering.add(line.id)
            answerer = self.answerer
        thread = threading.Thread(
            target=self._give,
            args=(answerer, line, kind, sent.request if sent is not None else None),
            name=f"relay-answer-{line.id}",
            daemon=True,
        )
        self.threads = [t for t in self.threads if t.is_alive()]
        self.threads.append(thread)
        start_thread(thread)

    def _give(
        self, answerer: Answerer, line: AnswerLine, kind: Kind, shown: Request | None
    ) -> None:
        """One answer, in its own thread: give it, then report it (or why not)."""
        try:
            report = answerer.answer(
                line.id,
                line.decision,
                kind=kind,
                text=line.text,
                reason=line.reason,
                shown=shown,
                width=line.width,
            )
        except Exception as exc:
            self._refused(line, kind, exc)
            return
        with self.lock:
            self.answering.discard(line.id)
            self.sent.pop(line.id, None)
            self.out.send(answered_line(line, kind, report))

    def _refused(self, line: AnswerLine, kind: Kind, exc: Exception) -> None:
        if isinstance(exc, WrongKind):
            spec = KINDS[exc.kind]
            message = (
                f"request {line.id} is a {exc.kind} request, not a {exc.asked_as} request: "
                f"answer it with kind {exc.kind.value!r} and one of "
                f"{', '.join(spec.decisions)}. Nothing was written."
            )
            error = error_line(
                ErrorCode.WRONG_KIND,
                message,
                request_id=line.id,
                kind=exc.kind,
                allowed=tuple(spec.decisions),
            )
        elif isinstance(exc, InvalidDecision):
            error = error_line(
                ErrorCode.INVALID_DECISION,
                f"{exc} Nothing was written.",
                request_id=line.id,
                kind=kind,
                allowed=tuple(KINDS[kind].decisions),
            )
        elif isinstance(exc, PendingError):
            code = next((c for cls, c in _CODES if isinstance(exc, cls)), ErrorCode.CHANNEL)
            error = error_line(code, str(exc), request_id=line.id)
        elif isinstance(exc, StoreError):
            error = error_line(ErrorCode.STORE, f"{exc} Nothing was answered.", request_id=line.id)
        else:  # a bug: say so on stderr with what we know, and keep relaying
            sys.stderr.write(f"wisp relay: answering {line.id} failed: {exc!r}\n")
            error = error_line(
                ErrorCode.INTERNAL,
                f"answering failed ({exc}); see the relay's stderr.",
                request_id=line.id,
            )
        with self.lock:
            self.answering.discard(line.id)
            self.out.send(error)
            # The watch held back this request's transitions while we answered: say now if
            # it went away meanwhile (answered elsewhere, ended), so no dialog stays open.
            if line.id in self.sent:
                status = self._status(line.id)
                if status is None or status.state not in ANSWERABLE:
                    del self.sent[line.id]
                    self.out.send(withdrawn_line(line.id, status))

    def _status(self, request_id: str) -> Status | None:
        try:
            return self.answerer.status(request_id)
        except PendingError:
            return None

    # --- the channel's transitions ---------------------------------------------------

    def _watch(self, live: LiveInbox) -> None:
        for item in live:
            if isinstance(item, Missed):
                self._resync()
                continue
            if isinstance(item, ChannelGone | ChannelBack | HomeGone):
                self._moved(item)
                continue
            if isinstance(item, Found):  # waiting in the directory made again: send it once
                with self.lock:
                    self._consider(item.status, new=False)
                continue
            with self.lock:
                if item.id in self.answering:
                    continue  # our own answer's `answered` line will end it
                if item.status is None:
                    if item.id in self.sent:
                        del self.sent[item.id]
                        self.out.send(withdrawn_line(item.id, None))
                    continue
                self._consider(item.status, new=True)

    def _differs(self, request: Request) -> tuple[tuple[str, str], ...]:
        """A fact request's kept facts it would contradict, as `wisp show` lists them."""
        return tuple((fact.id, fact.said) for fact in contradicted(request, self.channel.home))

    def _consider(self, status: Status, *, new: bool) -> None:
        """Send what changed about one request (under the lock)."""
        request_id = status.id
        if request_id in self.answering:
            return
        if status.state in ANSWERABLE:
            if status.kind not in self.hello.kinds:
                return
            before = self.sent.get(request_id)
            if before is not None and before.state is status.state:
                return
            self.sent[request_id] = status
            self.out.send(approval_line(status, self._differs(status.request)))
            if new and before is None and self.notifier is not None:
                title, message, subtitle, about, source = notice_for(status.request)
                self.notifier.post(
                    title, message, subtitle=subtitle, source=source, about=about, route="host"
                )
        elif request_id in self.sent:
            del self.sent[request_id]
            self.out.send(withdrawn_line(request_id, status))

    def _moved(self, item: ChannelGone | ChannelBack | HomeGone) -> None:
        """The channel directory went (each request sent is withdrawn, `removed`), came back
        (answers go to the new one, and what waits there is sent), or the home itself went:
        a fatal `error` line, and the relay ends (exit 2) — nothing here can tell when the
        home is made again, and making it would hide that it went."""
        with self.lock:
            if isinstance(item, ChannelBack):
                self.channel = open_channel(self.channel.home)
                self.answerer = self._answerer()
                for status in item.statuses:
                    self._consider(status, new=False)
                return
            for request_id in list(self.sent):
                if request_id not in self.answering:
                    del self.sent[request_id]
                    self.out.send(withdrawn_line(request_id, None))
            if isinstance(item, HomeGone):
                self.out.send(
                    error_line(
                        ErrorCode.CHANNEL,
                        f"{item.path} (WISP_HOME) was removed, so nothing is watched here now; "
                        "start the relay again (r in wisp tui) to make it anew.",
                        fatal=True,
                    )
                )
                self.exit_code = EXIT_ERROR
                if self._lines is not None:
                    self._lines.put(_EOF)

    def _resync(self) -> None:
        """After missed events: compare what was sent with what is, and send the difference."""
        with self.lock:
            listing = self.answerer.listing(kinds=self.hello.kinds, states=ANSWERABLE)
            now = {status.id: status for status in listing.statuses}
            for request_id in list(self.sent):
                if request_id not in now and request_id not in self.answering:
                    del self.sent[request_id]
                    self.out.send(withdrawn_line(request_id, self._status(request_id)))
            for status in now.values():
                self._consider(status, new=False)


def _terminal_commands() -> str:
    """How each kind is answered in a terminal: "`A ID` (or `B ID`, `C ID`)"."""
    first, *rest = (f"`{v.answering[0].line('ID')}`" for v in views())
    return first + (f" (or {', '.join(rest)})" if rest else "")


def _ended(entry: EndedRequest) -> Ended:
    """A history entry as the relay sends it: a tool call said as its row says it (its tool
    and the file or URL it is on), not as raw JSON, which says nothing once cut."""
    asked = entry.asked
    if entry.call is not None:
        asked = call_line(*entry.call)[:ASKED_MAX]
    return Ended(
        ts=entry.ts,
        id=entry.id,
        kind=entry.kind,
        outcome=entry.outcome,
        decision=entry.decision,
        asked=asked,
        by=entry.by,
    )
