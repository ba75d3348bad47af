"""The asking side: file a request, wait for the person by watchdog events, settle it.

:class:`Asker` is one asking server: it holds the server lock (so its requests read as alive)
and one watcher for all its waits. :class:`ApprovalGate` asks about commands and remembers
the grants their answers make; :class:`QuestionAsker` asks questions. Both are for any Python
program (an MCP server, an agent loop) and back `wisp approvals request` and
`wisp questions ask`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import attrs

from pending import (
    SYSTEM_CLOCK,
    TOMBSTONES,
    VIA_ASKER,
    Answer,
    Binding,
    Channel,
    Clock,
    CommandBinding,
    Delivery,
    FactBinding,
    Kind,
    Outcome,
    PendingError,
    QuestionBinding,
    Request,
    Server,
    Settled,
    Status,
    Transition,
    Watcher,
    answer_problem,
    current_user,
    format_time,
    make_request,
    record_time,
)
from wisp._audit import audit, request_fields
from wisp._config import ConfigError, load_config
from wisp._grants import Grant, GrantStore
from wisp._notify import Notifier
from wisp._store import StoreError


@attrs.frozen(kw_only=True)
class Ending:
    """How a request ended for the asker."""

    request: Request
    outcome: Outcome
    answer: Answer | None = None  # the answer in the slot (a person's, or a tombstone)
    reason: str | None = None

    @property
    def decision(self) -> str | None:
        if self.answer is None or self.answer.is_tombstone:
            return None
        return self.answer.decision


class Asker:
    """One asking server: its lock, its watcher, the requests it waits on."""

    def __init__(
        self,
        channel: Channel,
        *,
        entry_point: str,
        client: str = "wisp",
        liveness_recheck_s: float = 1.0,
        on_warning: Callable[[str], None] | None = None,
        clock: Clock | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        """*notifier* announces each request filed; by default, this process's terminal
        routes with the settings in config.json."""
        self.channel = channel
        self.home: Path = channel.home
        self.entry_point = entry_point
        self.client = client
        self.clock = clock or channel.clock or SYSTEM_CLOCK
        self.notifier = notifier or default_notifier(channel.home, entry_point)
        self._lock = channel.server().acquire()
        self._waiting: dict[str, Request] = {}
        self._mutex = threading.Lock()
        self.watcher = Watcher(
            channel, liveness_recheck_s=liveness_recheck_s, on_warning=on_warning
        ).start()

    @property
    def server_id(self) -> str:
        return self._lock.id

    def _audit(self, event: str, request: Request, **fields: object) -> None:
        audit(
            self.home,
            event,
            {**request_fields(request), **fields},
            entry_point=self.entry_point,
            clock=self.clock,
        )

    def ask(
        self,
        kind: Kind,
        binding: Binding,
        *,
        title: str,
        body: Callable[[str], str],
        timeout_s: float,
        thread: str | None = None,
        on_filed: Callable[[Request], None] | None = None,
    ) -> Ending:
        """File a request and wait until it ends: the person's answer (checked and settled),
        or the deadline (`timed-out`), or a withdrawal. *body* gets the request's ID."""
        subscription, _ = self.watcher.subscribe()  # before filing: nothing can be missed
        try:
            request_id_holder = make_request(
                kind=kind,
                binding=binding,
                title=title,
                body="",
                server=self._server(thread),
                clock=self.clock,
                expires_in_s=timeout_s or None,
            )
            request = attrs.evolve(request_id_holder, body=body(request_id_holder.id))
            self.channel.file(request)
            with self._mutex:
                self._waiting[request.id] = request
            self._audit("approval.pending", request, expiresAt=_iso(request))
            if on_filed is not None:
                on_filed(request)
            self.announce(request)
            deadline = None if not timeout_s else self.clock.monotonic() + timeout_s
            while True:
                try:
                    status = self.channel.status(request.id)
                except PendingError as exc:  # our own request altered or removed under us
                    return self._fail(request, str(exc))
                if status.settled is not None or status.answer is not None:
                    return self._finish(request, status)
                remaining = None if deadline is None else deadline - self.clock.monotonic()
                if remaining is not None and remaining <= 0:
                    claimed = self.channel.claim(request, Outcome.TIMED_OUT, via=VIA_ASKER)
                    if claimed.won:
                        return self._finish(request, self.channel.status(request.id))
                    continue  # a person's answer got the slot first: it stands
                item = subscription.get(timeout=remaining)
                # Any transition of ours, a gap, or the deadline: re-read (events are hints).
                while isinstance(item, Transition) and item.id != request.id:
                    item = subscription.get(timeout=0)
        finally:
            self.watcher.unsubscribe(subscription)

    def announce(self, request: Request) -> None:
        """Post the notification for a request just filed (source `approval` for commands and
        facts, `inquiry` for questions). A notifier that cannot post changes nothing."""
        server = request.server
        who = [server.client or "wisp"]
        if isinstance(request.binding, FactBinding):
            who.insert(0, f"proposed by {request.binding.proposed_by}")
        if server.thread:
            who.append(f"thread {server.thread}")
        self.notifier.post(
            request.title,
            request.body,
            subtitle=" · ".join(who),
            source="inquiry" if request.kind is Kind.QUESTION else "approval",
            about=request_fields(request),
        )

    def _server(self, thread: str | None) -> Server:
        return self._lock.record(client=self.client, thread=thread, entry_point=self.entry_point)

    def _finish(self, request: Request, status: Status) -> Ending:
        """Settle what the slot decided (first outcome wins) and report it."""
        with self._mutex:
            self._waiting.pop(request.id, None)
        answer = status.answer
        if status.settled is not None:
            return _ending(request, status.settled, answer)
        assert answer is not None
        if answer.is_tombstone:
            outcome = TOMBSTONES[answer.decision]
            settled = self.channel.settle(request, outcome, by=VIA_ASKER, reason=answer.reason)
        else:
            problem = answer_problem(status.request, answer)
            if problem is not None:
                settled = self.channel.settle(
                    request, Outcome.FAILED, by=VIA_ASKER, decision=answer.decision, reason=problem
                )
            else:
                settled = self.channel.settle(
                    request,
                    Outcome.ANSWERED,
                    by=VIA_ASKER,
                    decision=answer.decision,
                    delivery=Delivery.WATCHED,
                )
        ending = _ending(request, settled.settled, answer)
        event = "approval.withdrawn" if ending.outcome is Outcome.WITHDRAWN else "approval.settled"
        self._audit(
            event,
            request,
            outcome=ending.outcome.value,
            decision=ending.decision,
            outcomeReason=ending.reason,
            answerText=answer.text,
        )
        return ending

    def _fail(self, request: Request, reason: str) -> Ending:
        """End a request we can no longer trust: `failed` (a command is then denied)."""
        with self._mutex:
            self._waiting.pop(request.id, None)
        settled = self.channel.settle(request, Outcome.FAILED, by=VIA_ASKER, reason=reason)
        ending = _ending(request, settled.settled, None)
        self._audit(
            "approval.settled", request, outcome=ending.outcome.value, outcomeReason=ending.reason
        )
        return ending

    def withdraw(self, request_id: str | None = None, *, thread: str | None = None) -> list[Ending]:
        """Withdraw waiting requests — one, a closing thread's, or all: claim each slot
        `withdrawn` and settle it. A person's answer that got there first stands."""
        with self._mutex:
            targets = [
                r
                for i, r in self._waiting.items()
                if request_id in (None, i) and thread in (None, r.server.thread)
            ]
        endings = []
        for request in targets:
            if request.kind is Kind.FACT:
                continue  # a fact request outlives its server: it is handed over
            self.channel.claim(
                request, Outcome.WITHDRAWN, via=VIA_ASKER, reason="the asker stopped waiting"
            )
            endings.append(self._finish(request, self.channel.status(request.id)))
        return endings

    def close(self) -> None:
        """A clean stop: withdraw what waits, stop watching, release the lock."""
        try:
            self.withdraw()
        finally:
            self.watcher.stop()
            self._lock.release()

    def __enter__(self) -> Asker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_notifier(home: Path, entry_point: str) -> Notifier:
    try:
        settings = load_config(home).values
    except ConfigError:
        settings = {}  # a broken config.json is reported by the commands that read it
    return Notifier(home, settings=settings, entry_point=entry_point)


def _iso(request: Request) -> str | None:
    return format_time(request.expires_at) if request.expires_at else None


def _ending(request: Request, settled: Settled, answer: Answer | None) -> Ending:
    return Ending(request=request, outcome=settled.outcome, answer=answer, reason=settled.reason)


# --- commands --------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Approval:
    """The gate's verdict on a command."""

    approved: bool
    outcome: str  # granted | answered | timed-out | withdrawn | failed | stale
    scope: str | None = None  # once | session | project | always, when approved
    request_id: str | None = None  # None when a grant covered it without asking
    grant: Grant | None = None
    reason: str | None = None


class ApprovalGate:
    """Asks the person before a command runs, and remembers the grants they give."""

    def __init__(self, asker: Asker, *, timeout_s: float, grants: GrantStore | None = None):
        self.asker = asker
        self.timeout_s = timeout_s
        self.grants = grants or GrantStore(asker.home, clock=asker.clock)
        self._session: dict[str, Grant] = {}  # command -> grant, for this server's life

    def _covering(self, command: str, cwd: str) -> Grant | None:
        grant = self._session.get(command)
        if grant is not None:
            return grant
        try:
            return self.grants.covering(command, cwd)
        except Exception:  # a damaged store grants nothing: the person is asked instead
            return None

    def request(
        self,
        command: str,
        cwd: str,
        *,
        reason: str | None = None,
        thread: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
    ) -> Approval:
        grant = self._covering(command, cwd)
        if grant is not None:
            audit(
                self.asker.home,
                "approval.granted",
                {
                    "kind": "command",
                    "command": command,
                    "cwd": cwd,
                    "grant": grant.id,
                    "scope": grant.scope,
                },
                entry_point=self.asker.entry_point,
            )
            return Approval(approved=True, outcome="granted", scope=grant.scope, grant=grant)
        ending = self.asker.ask(
            Kind.COMMAND,
            CommandBinding(command=command, cwd=cwd, thread=thread, reason=reason),
            title="wisp: run a command?",
            body=lambda rid: f"{command} — wisp approvals approve {rid}",
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
        )
        decision = ending.decision
        approved = ending.outcome is Outcome.ANSWERED and decision not in (None, "no")
        if not approved:
            denial = ending.answer.reason if ending.answer and decision == "no" else None
            return Approval(
                approved=False,
                outcome=ending.outcome.value,
                request_id=ending.request.id,
                reason=ending.reason or denial,
            )
        assert decision is not None
        try:
            grant, note = self._remember(decision, command, cwd, ending), None
        except StoreError as exc:  # the approval stands; only its standing grant is lost
            grant, note = None, f"approved, but the {decision} grant was not saved: {exc}"
        return Approval(
            approved=True,
            outcome="answered",
            scope=decision,
            request_id=ending.request.id,
            grant=grant,
            reason=note,
        )

    def _remember(self, scope: str, command: str, cwd: str, ending: Ending) -> Grant | None:
        user = ending.answer.user if ending.answer else current_user()
        if scope == "session":
            grant = Grant(
                id="session",
                scope="session",
                command=command,
                project=None,
                granted_at=record_time(self.asker.clock),
                request=ending.request.id,
                user=user,
            )
            self._session[command] = grant
            return grant
        if scope in ("project", "always"):
            return self.grants.add(
                scope=scope, command=command, cwd=cwd, request=ending.request.id, user=user
            )
        return None


# --- questions -------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Reply:
    outcome: str  # answered | declined | timed-out | withdrawn | failed | stale
    text: str | None = None
    request_id: str | None = None
    reason: str | None = None


class QuestionAsker:
    def __init__(self, asker: Asker, *, timeout_s: float) -> None:
        self.asker = asker
        self.timeout_s = timeout_s

    def ask(
        self,
        question: str,
        *,
        options: tuple[str, ...] | None = None,
        free_text: bool | None = None,
        thread: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
    ) -> Reply:
        free = (not options) if free_text is None else free_text
        ending = self.asker.ask(
            Kind.QUESTION,
            QuestionBinding(question=question, options=options or None, free_text=free),
            title="wisp: a question for you",
            body=lambda rid: f"{question} — wisp questions answer {rid} TEXT",
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
        )
        if ending.outcome is Outcome.ANSWERED:
            if ending.decision == "decline":
                return Reply(outcome="declined", request_id=ending.request.id)
            text = ending.answer.text if ending.answer else None
            return Reply(outcome="answered", text=text, request_id=ending.request.id)
        return Reply(
            outcome=ending.outcome.value, request_id=ending.request.id, reason=ending.reason
        )
