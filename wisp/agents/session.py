"""One agent's session with the person: the application objects an agent-facing server holds
for its life, and the calls its tools make on them.

An :class:`AgentSession` is an :class:`~wisp.Asker` (the server's lock; it settles each
request it filed the moment the answer is written, and keeps each request's own deadline), an
:class:`~wisp.ApprovalGate` and a :class:`~wisp.QuestionAsker` that file without waiting, a
:class:`~wisp.FactKeeper`, an :class:`~wisp.Answerer` for answers given in the client's own
dialog, a notifier that tells each call what it posted, and the facts of the server's thread
and session (:class:`~wisp.FactBook`). `wisp mcp` (:mod:`wisp.mcp`) is its face: it parses
arguments, calls these methods (on a worker thread: they read and write files) and renders.
Nothing here knows the MCP SDK.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import attrs

from pending import (
    Channel,
    Decision,
    Kind,
    PendingError,
    Request,
    State,
    Status,
    UnknownRequest,
    Via,
)
from wisp._answering import Answerer, AnswerReport, Inbox
from wisp._asking import Asker
from wisp._deadlines import Cancel
from wisp._home import open_channel, wisp_home
from wisp.agents.claude_code import CLIENT, HARNESS, HookRefused, tool_call
from wisp.agents.gate import (
    TooLarge,
    answered,
    call_verdict,
    decided_reason,
    decision_reason,
    end_call,
    open_call,
    record_ending,
    unanswered_reason,
)
from wisp.agents.hookio import with_effect
from wisp.audit.writer import AuditEvent, EntryPoint, audit
from wisp.kinds._asker import Ending
from wisp.kinds.command_gate import Approval, ApprovalGate
from wisp.kinds.fact_keeper import FactKeeper, KeepRequest
from wisp.kinds.programs import bind_command
from wisp.kinds.question_gate import QuestionAsker, Reply
from wisp.policy.decide import Call, Verdict
from wisp.policy.decide import Decision as PolicyDecision
from wisp.routes.notify import TITLE_MAX, Face, Notifier, Result, clean
from wisp.stores.config import Config, ConfigError, load_config
from wisp.stores.factids import PERMANENT_PREFIX, FactScope
from wisp.stores.facts import Fact, FactRefused, FactStore
from wisp.stores.jsonstore import StoreError
from wisp.stores.threadfacts import FactBook, NoteFact, UnknownFact

SETTLING_S = 5.0  # a request seen ending between two looks: its ending is recorded within this
# A permission request with no deadline (approval.timeoutSeconds 0) is still waited for at
# most this long by one prompt (the client's own tool timeout ends it sooner), then withdrawn.
PROMPT_UNBOUNDED_WAIT_S = 24 * 3600.0

# The states in which a request still waits for the person (answered: until it is applied).
MOVED_BY_CALLER = "caller"  # fact.scope.changed's `by` for a move the MCP caller makes
WAITING = (State.FILED, State.ANSWERED, State.HANDED_OVER)

# The notifications a call posted or tried, collected for its result.
_posted: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "wisp_agent_posted", default=None
)


@contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """Collect, for one call, every notification posted or tried while it runs (on any
    worker thread it starts: they run in a copy of its context, sharing the list)."""
    posted: list[dict[str, Any]] = []
    token = _posted.set(posted)
    try:
        yield posted
    finally:
        _posted.reset(token)


class RecordingNotifier(Notifier):
    """A notifier that also tells the calling code what it posted (see :func:`collecting`)."""

    def post(
        self,
        title: str,
        message: str,
        *,
        subtitle: str = "",
        source: str = "user",
        route: str | None = None,
        about: Mapping[str, Any] | None = None,
        push_after_s: float = 0.0,
    ) -> Result:
        result = super().post(
            title,
            message,
            subtitle=subtitle,
            source=source,
            route=route,
            about=about,
            push_after_s=push_after_s,
        )
        posted = _posted.get()
        if posted is not None:
            posted.append(
                {
                    "title": clean(title, TITLE_MAX),  # as posted and audited, cut
                    "source": source,
                    "posted": result.posted,
                    "route": result.route,
                    "reason": result.reason,
                    "request": (about or {}).get("id"),
                }
            )
        return result


@attrs.frozen(kw_only=True)
class PermissionVerdict:
    """What a permission prompt answers: allow or deny, and why (who decided, how and when,
    or why nobody did)."""

    allowed: bool
    message: str
    request_id: str | None = None  # None when nothing was filed (a grant, or not askable)


class StartError(Exception):
    """The session cannot start; the message says why and what to do."""


class NotOurs(LookupError):
    """A request id this server did not file; the message says so."""


class NotFiled(Exception):
    """A request could not be filed (the channel refused the write); the message says why
    and what to do."""


@attrs.frozen(kw_only=True)
class ScopeChange:
    """What :meth:`AgentSession.set_scope` did."""

    fact: NoteFact  # the fact as it is now (thread or session)
    keep: KeepRequest | None = None  # for `permanent`: the keeper's answer
    changed: bool = False


def _not_filed(exc: Exception) -> NotFiled:
    return NotFiled(f"the request could not be filed: {exc}. Check the channel with `wisp doctor`.")


class AgentSession:
    """The application objects of one agent-facing server, for the server's life.

    *face* chooses the notification routes, *entry_point* is what the audit log records,
    *dialog_via* is how an answer given in the client's own dialog is recorded, and *client*
    names the agent's client until it says its own name (:meth:`name_client`).
    """

    def __init__(
        self,
        channel: Channel,
        config: Config,
        *,
        face: Face,
        entry_point: EntryPoint,
        dialog_via: Via,
        client: str,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.channel = channel
        self.home: Path = channel.home
        self.entry_point = entry_point
        self.config = config
        self.notifier = RecordingNotifier(
            channel.home, face=face, settings=config.values, entry_point=entry_point
        )
        self.asker = Asker(
            channel,
            entry_point=entry_point,
            client=client,
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
        self.dialogs = Answerer(channel, via=dialog_via, entry_point=entry_point)
        self.inbox = Inbox(channel, entry_point=entry_point, on_warning=on_warning)
        self.thread = self.book.open_thread()
        self._verdicts: dict[str, Approval] = {}  # each ended command's, worked out once
        self._mutex = threading.Lock()
        # The permission prompts put to the person, by request: the call as the policy read
        # it and why it was asked, for the one record of how each ended.
        self._asked: dict[str, tuple[Call, PolicyDecision]] = {}
        self._closed = False

    @classmethod
    def start(
        cls,
        *,
        face: Face,
        entry_point: EntryPoint,
        dialog_via: Via,
        client: str,
        on_warning: Callable[[str], None] | None = None,
    ) -> AgentSession:
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
            return cls(
                channel,
                config,
                face=face,
                entry_point=entry_point,
                dialog_via=dialog_via,
                client=client,
                on_warning=on_warning,
            )
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
        """A standing grant's approval, at once (audited), or None: the person is asked. A
        program file it runs that the agent can write is bound to its content
        (:mod:`wisp.kinds.programs`): a grant covers that content only."""
        return self.gate.granted(command, cwd, options=bind_command(command, cwd, None))

    def file_command(self, command: str, cwd: str, reason: str | None) -> Request:
        """File a command for the person to approve (:class:`NotFiled` if it cannot be), its
        program files bound to their content, and why a grant did not cover it said."""
        options = bind_command(command, cwd, None)
        changed = self.gate.program_changes(command, cwd, self.thread, options)
        said = "; ".join(part for part in (changed, reason) if part) or None
        try:
            return self.gate.file(command, cwd, reason=said, thread=self.thread, options=options)
        except (OSError, PendingError) as exc:
            raise _not_filed(exc) from None

    def file_question(
        self, question: str, options: tuple[str, ...] | None, free_text: bool | None
    ) -> Request:
        """File a question for the person (:class:`NotFiled` if it cannot be)."""
        try:
            return self.questions.file(
                question, options=options, free_text=free_text, thread=self.thread
            )
        except (OSError, PendingError) as exc:
            raise _not_filed(exc) from None

    def wait(self, request_id: str, wait_s: float, cancel: Cancel) -> Ending | None:
        """How the request ended, or None while it still waits after *wait_s* (or the call
        was cancelled). :class:`NotOurs` for a request this server did not file."""
        try:
            return self.asker.wait(request_id, wait_s, cancel=cancel)
        except UnknownRequest:
            raise _not_asked(request_id) from None

    def ended(self, request_id: str) -> Ending | None:
        """How the request ended, if it has, without waiting (:class:`NotOurs` as above)."""
        return self.wait(request_id, 0, Cancel())

    def request(self, request_id: str) -> Request:
        """A command or question this server filed, waiting or ended (:class:`NotOurs`
        otherwise)."""
        ending = self.ended(request_id)
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
        """An ended question's reply."""
        return QuestionAsker.reply(ending)

    def answer_in_dialog(
        self,
        request: Request,
        decision: Decision,
        *,
        text: str | None = None,
        reason: str | None = None,
    ) -> AnswerReport:
        """The person answered in the client's own dialog: an answer like any other, first
        wins, audited with this session's *dialog_via*. Returns without waiting for the
        outcome: this server's asker settles it, and the waiting call hears of that."""
        return self.dialogs.answer(
            request.id,
            decision,
            kind=request.kind,
            text=text,
            reason=reason,
            shown=request,
            wait_s=0,
        )

    # --- a permission prompt (Claude Code's --permission-prompt-tool) -------------------
    #
    # The tool call goes through the gate core as the hook's does (wisp.agents.gate): a
    # `Bash` call as a command, any other as a `tool` request, this server's thread as the
    # session; a call naming wisp's own directory always goes to the person. Silence is a
    # deny, never an allow.

    @property
    def permission_wait_s(self) -> float:
        """How long a permission prompt waits: past the request's own bound, so that its
        deadline, not the wait, ends an unanswered request (as timed out)."""
        if self.gate.timeout_s <= 0:  # no deadline of its own
            return PROMPT_UNBOUNDED_WAIT_S
        return self.gate.timeout_s + SETTLING_S

    def ask_permission(
        self, tool: str, tool_input: Mapping[str, Any], cwd: str
    ) -> Request | PermissionVerdict:
        """The policy's allow or deny at once (a rule's, a grant's: :mod:`wisp.policy.decide`),
        a deny for a call that cannot be asked, or the request filed for the person
        (:meth:`wait` for it, then :meth:`permission_verdict`).
        Raises :class:`NotFiled` if the channel refused the request."""
        try:
            call = tool_call(tool, tool_input, cwd=cwd, session=self.thread)
        except HookRefused as exc:
            return PermissionVerdict(allowed=False, message=f"wisp: {exc}; denied")
        try:
            called = with_effect(HARNESS, call)  # Claude Code's tools, by its table
            decision, opened, asked = open_call(self.gate, called, self.home, CLIENT)
        except TooLarge as exc:
            return PermissionVerdict(allowed=False, message=f"wisp: {exc}; denied")
        except (OSError, PendingError) as exc:
            raise _not_filed(exc) from None
        if opened is None:  # the policy decided it: a rule, or a standing grant
            allowed = decision.verdict is Verdict.ALLOW
            return PermissionVerdict(allowed=allowed, message=decision_reason(decision))
        with self._mutex:
            self._asked[opened.id] = (asked, decision)
        return opened

    def permission_verdict(self, request: Request, ending: Ending | None) -> PermissionVerdict:
        """What the person's answer to a permission request says. No *ending* (the wait
        ended first, or the call was cancelled): the request is withdrawn (an answer that
        got there first stands) and, unanswered, it is a deny."""
        ending = end_call(self.asker, request, ending)
        with self._mutex:
            asked = self._asked.pop(request.id, None)
        if not answered(ending):
            bound = self.gate.timeout_s if self.gate.timeout_s > 0 else self.permission_wait_s
            why = unanswered_reason(request.id, ending, bound)
            if asked is not None:
                record_ending(self.home, *asked, ending, entry_point=self.entry_point)
            return PermissionVerdict(
                allowed=False, message=f"wisp: {why}; denied", request_id=request.id
            )
        assert ending is not None
        with self._mutex:
            known = self._verdicts.get(request.id)
        approval = known or call_verdict(self.gate, ending)
        with self._mutex:
            approval = self._verdicts.setdefault(request.id, approval)
        if asked is not None:
            record_ending(
                self.home, *asked, ending, entry_point=self.entry_point, approved=approval.approved
            )
        return PermissionVerdict(
            allowed=approval.approved,
            message=decided_reason(approval, ending),
            request_id=request.id,
        )

    # --- facts -------------------------------------------------------------------------

    def record_fact(self, subject: str, name: str, value: str, *, source: str) -> NoteFact:
        """Record a fact in this session's thread, proposed by the client."""
        return self.book.record(
            self.thread,
            subject=subject,
            name=name,
            value=value,
            source=source,
            proposed_by=self.asker.client,
        )

    def conflicts(self, subject: str, name: str, value: str) -> list[Fact]:
        """The person's permanent facts that say otherwise about the same subject and name
        (none if the store cannot be read: a recorded fact stands either way)."""
        try:
            facts = self.store.list()
        except StoreError:
            return []
        return [f for f in facts if (f.subject, f.name) == (subject, name) and f.value != value]

    def fact(self, fact_id: str) -> NoteFact:
        """A fact this thread can see; :class:`UnknownFact` otherwise."""
        return self.book.visible(self.thread, fact_id)

    def facts_seen(self) -> list[NoteFact]:
        """This thread's facts and the session's, oldest first."""
        return self.book.seen_by(self.thread)

    def asking(self, request_id: str) -> list[NoteFact]:
        """The facts a keep request asks about (none if it is not this server's)."""
        return self.book.asking(request_id)

    def set_scope(self, fact_id: str, scope: FactScope) -> ScopeChange:
        """Move a fact to this thread or the session, or ask the person to keep it
        (returns at once). Raises :class:`FactRefused`, :class:`UnknownFact`,
        :class:`StoreError`, :class:`NotFiled`."""
        if fact_id.startswith(PERMANENT_PREFIX):
            raise FactRefused(
                f"{fact_id} is a permanent fact, and permanent facts are the person's: a caller "
                "cannot move, demote or remove one. The person manages them from a terminal "
                "(`wisp facts list`). If you think it is wrong, record a newer fact in your "
                "thread and say so."
            )
        fact = self.fact(fact_id)
        if scope is not FactScope.PERMANENT:
            self._refuse_moving_while_asked(fact, scope)
            moved = self.book.move(fact.id, scope, thread=self.thread)
            if moved.id != fact.id:
                self._audit_move(fact, moved)
            return ScopeChange(fact=moved, changed=moved.id != fact.id)
        try:
            asked = self.keeper.request(
                fact_id=fact.id,
                subject=fact.subject,
                name=fact.name,
                value=fact.value,
                source=fact.source,
                proposed_by=fact.proposed_by,
                thread=self.thread,
            )
        except (OSError, PendingError) as exc:
            raise _not_filed(exc) from None
        if asked.request_id is not None:
            fact = self.book.link(fact.id, asked.request_id) or fact
        return ScopeChange(fact=fact, keep=asked, changed=asked.new)

    def _refuse_moving_while_asked(self, fact: NoteFact, scope: FactScope) -> None:
        """A fact whose keep request still waits keeps its id: the request names it, and the
        person keeps what they were shown (so a keep never applies to a fact that moved)."""
        staying = fact.scope is scope and (scope is FactScope.SESSION or fact.thread == self.thread)
        if fact.request is None or staying:
            return
        try:
            waiting = self.status(fact.request).state in WAITING
        except PendingError:
            return  # its request cannot be read: nothing waits on the id
        if waiting:
            raise FactRefused(
                f"{fact.id} waits for the person to keep it (request {fact.request}), and that "
                f"request names it as {fact.id}: it cannot move to the {scope} until they "
                "answer. Call set_fact_scope again once its request has ended (the fact's "
                "resource shows it)."
            )

    def _audit_move(self, fact: NoteFact, moved: NoteFact) -> None:
        """Every scope change is one `fact.scope.changed` (seed ADR 0048): here the caller's,
        between this thread and the session; `moved` is the id the fact has now."""
        audit(
            self.home,
            AuditEvent.FACT_SCOPE_CHANGED,
            {
                "kind": "fact",
                "fact": fact.id,
                "moved": moved.id,
                "subject": fact.subject,
                "name": fact.name,
                "value": fact.value,
                "source": fact.source,
                "thread": self.thread,
                "from": fact.scope,
                "to": moved.scope,
                "by": MOVED_BY_CALLER,
            },
            entry_point=self.entry_point,
        )

    def permanent(self) -> list[Fact]:
        """The person's permanent facts (:class:`StoreError` if the store cannot be read)."""
        return self.store.list()

    def permanent_fact(self, fact_id: str) -> Fact:
        """One of the person's permanent facts; :class:`UnknownFact` if there is none."""
        for fact in self.store.list():
            if fact.id == fact_id:
                return fact
        raise UnknownFact(f"no permanent fact {fact_id!r}.", fact_id=fact_id)

    def status(self, request_id: str) -> Status:
        return self.dialogs.status(request_id)

    def proposed(self) -> list[tuple[NoteFact, Status | None]]:
        """This thread's and the session's facts that wait for the person to keep them."""
        found = []
        for fact in self.facts_seen():
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
            raise NotOurs(f"{request_id!r} is not a request this server filed.")
        return status

    def waiting(self) -> list[Status]:
        """This server's requests that wait for the person, oldest first."""
        listing = self.dialogs.listing(states=list(WAITING))
        return [s for s in listing.statuses if s.request.server.id == self.server_id]

    # --- notify ------------------------------------------------------------------------

    def notify(self, title: str, message: str) -> Result:
        """A notification the agent asked for (source `model`)."""
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
                self._forget_session_grants()
                self.book.close_thread(self.thread)
                self.channel.close()

    def _forget_session_grants(self) -> None:
        """A permission prompt's `session` approvals are kept for this server's thread in
        the grant store: they end with it (a store that cannot be written keeps them until
        they expire)."""
        with suppress(OSError, StoreError):
            self.gate.grants.end_session(self.thread)


def _not_asked(request_id: str) -> NotOurs:
    return NotOurs(f"{request_id!r} is not a command or question this server asked.")
