"""One `wisp mcp` server's application objects, and the calls its tools make on them.

Everything here is the application layer's: an :class:`~wisp.Asker` (this server's lock; it
settles each request it filed the moment the answer is written, and keeps each request's own
deadline), an :class:`~wisp.ApprovalGate` and a :class:`~wisp.QuestionAsker` that file without
waiting, a :class:`~wisp.FactKeeper`, an :class:`~wisp.Answerer` for answers given in the
client's own dialog (elicitation), a notifier for the MCP face, and the facts of the server's
threads and session. The MCP side (:mod:`wisp.mcp._server`) parses arguments, calls these
methods (on a worker thread: they read and write files) and renders. Nothing here imports the
MCP SDK.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from pending import (
    Channel,
    CommandBinding,
    Decision,
    Kind,
    PendingError,
    Request,
    Status,
    UnknownRequest,
    Via,
)
from wisp._answering import Answerer, AnswerReport, Inbox
from wisp._asking import Approval, ApprovalGate, Asker, Cancel, Ending, QuestionAsker, Reply
from wisp._audit import EntryPoint
from wisp._config import Config, ConfigError, load_config
from wisp._factstore import Fact, FactRefused, FactStore
from wisp._home import open_channel, wisp_home
from wisp._keeper import FactKeeper, KeepRequest
from wisp._notify import Face, Notifier, Result
from wisp._store import StoreError
from wisp.mcp._threads import PERMANENT_PREFIX, FactBook, FactScope, NoteFact, UnknownFact
from wisp.mcp._views import WAITING

CLIENT_DEFAULT = "mcp client"  # until the client names itself
SETTLING_S = 5.0  # a request seen ending between two looks: its ending is recorded within this

# The notifications a tool call posted or tried, collected for its result.
_posted: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "wisp_mcp_posted", default=None
)


@contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """Collect, for one tool call, every notification posted or tried while it runs (on any
    worker thread it starts: they run in a copy of its context, sharing the list)."""
    posted: list[dict[str, Any]] = []
    token = _posted.set(posted)
    try:
        yield posted
    finally:
        _posted.reset(token)


class RecordingNotifier(Notifier):
    """The MCP face's notifier (never the terminal route: the client owns the terminal and
    stdout is the protocol), which also tells the calling tool what it posted."""

    def post(
        self,
        title: str,
        message: str,
        *,
        subtitle: str = "",
        source: str = "user",
        route: str | None = None,
        about: Mapping[str, Any] | None = None,
    ) -> Result:
        result = super().post(
            title, message, subtitle=subtitle, source=source, route=route, about=about
        )
        posted = _posted.get()
        if posted is not None:
            posted.append(
                {
                    "title": title,
                    "source": source,
                    "posted": result.posted,
                    "route": result.route,
                    "reason": result.reason,
                    "request": (about or {}).get("id"),
                }
            )
        return result


class StartError(Exception):
    """The server cannot start; the message says why and what to do."""


class NotOurs(LookupError):
    """A request id this server did not file; the message says so."""


@attrs.frozen(kw_only=True)
class ScopeChange:
    """What set_fact_scope did."""

    fact: NoteFact  # the fact as it is now (thread or session)
    keep: KeepRequest | None = None  # for `permanent`: the keeper's answer
    changed: bool = False


class App:
    """The application objects of one `wisp mcp` process."""

    def __init__(
        self,
        channel: Channel,
        config: Config,
        *,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.channel = channel
        self.home: Path = channel.home
        self.config = config
        self.notifier = RecordingNotifier(
            channel.home, face=Face.MCP, settings=config.values, entry_point=EntryPoint.MCP
        )
        self.asker = Asker(
            channel,
            entry_point=EntryPoint.MCP,
            client=CLIENT_DEFAULT,
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=on_warning,
            notifier=self.notifier,
        )
        timeout_s = float(config["approval.timeoutSeconds"])
        self.gate = ApprovalGate(self.asker, timeout_s=timeout_s)
        self.questions = QuestionAsker(self.asker, timeout_s=timeout_s)
        self.book = FactBook(clock=self.asker.clock)
        self.store = FactStore(channel.home, clock=self.asker.clock)
        self.keeper = FactKeeper(self.asker, store=self.store, lookup=self.book.binding)
        self.dialogs = Answerer(channel, via=Via.ELICITATION, entry_point=EntryPoint.MCP)
        self.inbox = Inbox(channel, entry_point=EntryPoint.MCP, on_warning=on_warning)
        self.thread = self.book.open_thread()
        self._verdicts: dict[str, Approval] = {}  # each ended command's, worked out once
        self._mutex = threading.Lock()
        self._closed = False

    @classmethod
    def start(cls, *, on_warning: Callable[[str], None] | None = None) -> App:
        """Open the channel and start asking; :class:`StartError` if it cannot be used."""
        home = wisp_home()
        try:
            config = load_config(home)
        except ConfigError as exc:
            raise StartError(str(exc)) from None
        try:
            channel = open_channel(home)
        except PendingError as exc:
            raise StartError(str(exc)) from None
        try:
            return cls(channel, config, on_warning=on_warning)
        except (OSError, PendingError) as exc:
            channel.close()
            raise StartError(
                f"cannot ask through {channel.path}: {exc}. Check it with `wisp doctor`."
            ) from None

    @property
    def server_id(self) -> str:
        return self.asker.server_id

    def name_client(self, name: str | None) -> None:
        """The client's own name, once it has said it, for the requests this server files."""
        if name:
            self.asker.client = name

    # --- commands and questions ----------------------------------------------------------

    def granted(self, command: str, cwd: str) -> Approval | None:
        """A standing grant's approval, at once (audited), or None: the person is asked."""
        return self.gate.granted(command, cwd)

    def file_command(self, command: str, cwd: str, reason: str | None) -> Request:
        return self.gate.file(command, cwd, reason=reason, thread=self.thread)

    def file_question(
        self, question: str, options: tuple[str, ...] | None, free_text: bool | None
    ) -> Request:
        return self.questions.file(
            question, options=options, free_text=free_text, thread=self.thread
        )

    def wait(self, request_id: str, wait_s: float, cancel: Cancel) -> Ending | None:
        """How the request ended, or None while it still waits after *wait_s* (or the call
        was cancelled). :class:`NotOurs` for a request this server did not file."""
        try:
            return self.asker.wait(request_id, wait_s, cancel=cancel)
        except UnknownRequest:
            raise NotOurs(
                f"{request_id!r} is not a command or question this server asked; "
                "wisp://pending lists the ones that wait."
            ) from None

    def request(self, request_id: str) -> Request:
        """A command or question this server filed, waiting or ended (:class:`NotOurs`
        otherwise)."""
        try:
            ending = self.asker.wait(request_id, 0)
        except UnknownRequest:
            raise NotOurs(
                f"{request_id!r} is not a command or question this server asked; "
                "wisp://pending lists the ones that wait."
            ) from None
        if ending is not None:
            return ending.request
        for request in self.asker.waiting():
            if request.id == request_id:
                return request
        # Between the two looks it ended: its ending is being recorded right now.
        ending = self.asker.wait(request_id, SETTLING_S)
        if ending is None:
            raise NotOurs(f"{request_id!r} could not be found among this server's requests.")
        return ending.request

    def verdict(self, ending: Ending) -> Approval:
        """An ended command's verdict, worked out (and its grant remembered) once."""
        with self._mutex:
            known = self._verdicts.get(ending.request.id)
        if known is not None:
            return known
        approval = self.gate.verdict(ending)
        with self._mutex:
            return self._verdicts.setdefault(ending.request.id, approval)

    @staticmethod
    def reply(ending: Ending) -> Reply:
        return QuestionAsker.reply(ending)

    def answer_in_dialog(
        self, request: Request, decision: Decision, *, text: str | None = None
    ) -> AnswerReport:
        """The person answered in the client's dialog (elicitation): an answer like any
        other, first wins, audited with via `elicitation`. Returns without waiting for the
        outcome: this server's asker settles it, and the waiting tool hears of that."""
        reason = "declined in the MCP client's dialog" if decision is Decision.NO else None
        return self.dialogs.answer(
            request.id,
            decision,
            kind=request.kind,
            text=text,
            reason=reason,
            shown=request,
            wait_s=0,
        )

    # --- facts -------------------------------------------------------------------------

    def record_fact(self, subject: str, name: str, value: str) -> NoteFact:
        return self.book.record(
            self.thread,
            subject=subject,
            name=name,
            value=value,
            source="mcp record_fact",
            proposed_by=self.asker.client,
        )

    def fact(self, fact_id: str) -> NoteFact:
        """A fact this thread can see; :class:`UnknownFact` otherwise."""
        return self.book.visible(self.thread, fact_id)

    def set_scope(self, fact_id: str, scope: FactScope) -> ScopeChange:
        """Move a fact to this thread or the session, or ask the person to keep it
        (returns at once). Raises :class:`FactRefused`, :class:`UnknownFact`,
        :class:`StoreError`."""
        if fact_id.startswith(PERMANENT_PREFIX):
            raise FactRefused(
                f"{fact_id} is a permanent fact, and permanent facts are the person's: a caller "
                "cannot move, demote or remove one. The person manages them from a terminal "
                "(`wisp facts list`). If you think it is wrong, record a newer fact in your "
                "thread and say so."
            )
        fact = self.fact(fact_id)
        if scope is not FactScope.PERMANENT:
            moved = self.book.move(fact.id, scope, thread=self.thread)
            return ScopeChange(fact=moved, changed=moved.id != fact.id)
        asked = self.keeper.request(
            fact_id=fact.id,
            subject=fact.subject,
            name=fact.name,
            value=fact.value,
            source=fact.source,
            proposed_by=fact.proposed_by,
            thread=self.thread,
        )
        if asked.request_id is not None:
            fact = self.book.link(fact.id, asked.request_id) or fact
        return ScopeChange(fact=fact, keep=asked, changed=asked.new)

    def permanent(self) -> list[Fact]:
        """The person's permanent facts (:class:`StoreError` if the store cannot be read)."""
        return self.store.list()

    def permanent_fact(self, fact_id: str) -> Fact:
        for fact in self.store.list():
            if fact.id == fact_id:
                return fact
        raise UnknownFact(f"no permanent fact {fact_id!r}; wisp://facts/permanent lists them.")

    def status(self, request_id: str) -> Status:
        return self.dialogs.status(request_id)

    def proposed(self) -> list[tuple[NoteFact, Status | None]]:
        """This thread's and the session's facts that wait for the person to keep them."""
        found = []
        for fact in self.book.seen_by(self.thread):
            if fact.request is None:
                continue
            try:
                status: Status | None = self.status(fact.request)
            except PendingError:
                status = None
            if status is None or status.state in WAITING:
                found.append((fact, status))
        return found

    def fact_request(self, request_id: str) -> Status:
        """A fact request this server filed, as it stands now (:class:`NotOurs` otherwise)."""
        try:
            status = self.status(request_id)
        except PendingError:
            status = None
        if status is None or status.kind is not Kind.FACT or not self.book.asking(request_id):
            raise NotOurs(
                f"{request_id!r} is not a request this server filed; "
                "wisp://pending lists the ones that wait."
            )
        return status

    def waiting(self) -> list[Status]:
        """This server's requests that wait for the person, oldest first."""
        listing = self.dialogs.listing(states=list(WAITING))
        return [s for s in listing.statuses if s.request.server.id == self.server_id]

    # --- notify ------------------------------------------------------------------------

    def notify(self, title: str, message: str) -> Result:
        return self.notifier.post(title, message, source="model")

    # --- stopping ----------------------------------------------------------------------

    def close(self) -> None:
        """Stop: withdraw this server's commands and questions, hand its fact requests over
        (a later `wisp facts keep ID` from any terminal applies them), release the lock."""
        with self._mutex:
            if self._closed:
                return
            self._closed = True
        try:
            self.inbox.close()
            self.keeper.close()
        finally:
            try:
                self.asker.close()
            finally:
                self.book.close_thread(self.thread)
                self.channel.close()


def command_of(request: Request) -> CommandBinding:
    binding = request.binding
    assert isinstance(binding, CommandBinding)
    return binding


__all__ = [
    "App",
    "FactRefused",
    "NotOurs",
    "RecordingNotifier",
    "ScopeChange",
    "StartError",
    "StoreError",
    "UnknownFact",
    "collecting",
]
