"""The answering side: one path for every face (CLI, TUI, relay, MCP elicitation).

:class:`Answerer` answers a request as the person: it checks the answer against the request
(as it is now, and as the person was shown it), publishes it first-wins, audits it, then waits
— for that one request only — for the asker's outcome. When no asker lives to apply it (a fact
request handed over, or one whose server died before settling), it applies the answer here
(`delivery: applied`). It returns an :class:`AnswerReport`; faces only render that.

:class:`Inbox` is the live view every face shows: what waits now, then each transition.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from pending import (
    LIVENESS_RECHECK_S,
    AlreadyAnswered,
    Answer,
    Channel,
    ChannelUnwritable,
    CommandBinding,
    Decision,
    Delivery,
    Kind,
    Listing,
    Liveness,
    Outcome,
    PendingError,
    Request,
    Settled,
    State,
    Status,
    SweepReport,
    ToolBinding,
    Via,
    pid_alive,
)
from wisp.audit.writer import (
    AuditEvent,
    EntryPoint,
    audit,
    check_log,
    ending_record,
    request_fields,
)
from wisp.stores.jsonstore import StoreError

if TYPE_CHECKING:
    from pending import Subscription, Transition
    from wisp.stores.facts import FactStore

T = TypeVar("T")

LOGGER_NAME = "wisp.answering"  # logging is imported by the one warning that needs it

# The states a request the sweep ends can be in when it is scanned: stale (settled `stale`),
# answered with its asker gone (settled as answered), a fact handed over or answered (applied).
SWEPT_FROM = (State.STALE, State.ANSWERED, State.HANDED_OVER)

# How long an answering face waits for the asker to settle, unless config says otherwise.
ANSWER_WAIT_S = 5.0


class _Wake(Protocol):
    def wait(self, timeout: float | None) -> bool: ...

    def stop(self) -> None: ...


class _NoWake:
    """The wake of a caller that does not wait: nothing to watch, nothing to stop."""

    def wait(self, timeout: float | None) -> bool:
        return False

    def stop(self) -> None:
        return None


class AnswerFate(StrEnum):
    """What became of an answer once published, as the answerer saw it (an
    :class:`AnswerReport`'s ``asker``: whether an asker settled it)."""

    SETTLED = "settled"  # its outcome is written (by the asker, or here)
    GONE = "gone"  # no asker lives to settle it, and it was not applied here
    LATE = "late"  # the asker lives, but had not settled it within the wait


class AnswerReport(NamedTuple):
    """What answering did: who won the slot, and what became of the answer."""

    request: Request
    won: bool  # this answer holds the slot; else ``answer`` is the earlier one that does
    answer: Answer
    settled: Settled | None
    asker: AnswerFate
    applied: bool = False  # this process applied it (no asker was watching)
    apply_error: str | None = None  # why a handed-over answer could not be applied here
    # Why a standing scope asked for was given as `once` (the request names wisp's home).
    narrowed: str | None = None

    @property
    def outcome(self) -> Outcome | None:
        return self.settled.outcome if self.settled else None


def wait_until(
    check: Callable[[], T | None],
    wake: Callable[[float | None], object],
    *,
    timeout_s: float | None,
    monotonic: Callable[[], float],
    recheck_s: float | None = None,
) -> T | None:
    """Re-run *check* after each *wake* until it gives a result, or *timeout_s* passes (None:
    never). *wake(seconds)* blocks until an event or the seconds pass; events are only hints,
    so *check* re-reads. *recheck_s* bounds each wake (for what makes no event: a crash)."""
    deadline = None if timeout_s is None else monotonic() + timeout_s
    while True:
        result = check()
        if result is not None:
            return result
        remaining = None if deadline is None else deadline - monotonic()
        if remaining is not None and remaining <= 0:
            return None
        if recheck_s is not None:
            remaining = recheck_s if remaining is None else min(remaining, recheck_s)
        wake(remaining)


# The approvals the asker keeps as a standing grant in a store (`session` lives in memory).
_STANDING = (Decision.PROJECT, Decision.ALWAYS)


def _narrowed(request: Request, decision: Decision, home: Path) -> str | None:
    """Why *decision* (project or always) is given as `once` for *request*: it names wisp's
    own directory, or runs a program file with no digest (:mod:`wisp.kinds.programs`), which
    no standing grant ever covers (the gate asks each time), so a grant saved for it could
    never apply. None: it is given as asked."""
    from wisp._home import names_home
    from wisp._text import texts_in

    binding = request.binding
    if isinstance(binding, CommandBinding):
        from wisp.kinds.programs import coverable

        if not coverable(binding.options):
            return (
                f"approved once only, not {decision}: a program file it runs has no digest "
                "(gone, not a regular file, unreadable or too large to hash), and a standing "
                "grant never covers one (it is asked each time), so none was saved"
            )
        texts = [binding.command]
    elif isinstance(binding, ToolBinding):
        texts = list(texts_in(binding.input))
    else:
        return None
    if not names_home(texts, binding.cwd, home):
        return None
    return (
        f"approved once only, not {decision}: this {request.kind.value} names wisp's own "
        f"directory ({home}), and a standing grant never covers one that does (it is asked "
        "each time), so none was saved"
    )


def _check_grants(home: Path, decision: Decision, *, tool: bool, wide: bool = False) -> None:
    """Refuse (:class:`StoreError`) a `project`/`always` approval whose grant could not be
    saved, before it is written: else the person would be told a grant stands that never
    was (the asker would approve this request only). *wide*: a grant wider than the exact
    call (kept in a file of its own)."""
    from wisp.stores.grants import GrantStore

    try:
        store = GrantStore(home)
        if wide:
            store.check_wide_writable()
        else:
            store.check_writable(tool=tool)
    except StoreError as exc:
        raise StoreError(
            f"{exc} An {decision} approval could not be kept as a standing grant, so it was "
            "not given: approve it once (`--scope once`; a tool call: `--as once`), for this "
            "request only, or make room first."
        ) from None


class Answerer:
    """The person's answers, from one face (*via*), checked, audited, awaited and applied."""

    def __init__(
        self,
        channel: Channel,
        *,
        via: Via,
        entry_point: EntryPoint,
        wait_s: float | None = None,
        store: FactStore | None = None,
        liveness_recheck_s: float = LIVENESS_RECHECK_S,
        device: str | None = None,
    ) -> None:
        """*device*: the paired device an answer comes from (`wisp web`), audited with it."""
        self.channel = channel
        self.home: Path = channel.home
        self.via = via
        self.device = device
        self.entry_point = entry_point
        self.wait_s = _configured_wait(channel.home) if wait_s is None else wait_s
        self._store = store
        self._liveness_recheck_s = liveness_recheck_s

    @property
    def store(self) -> FactStore:
        """The facts store a kept fact goes to, made when an answer first needs it: a listing
        never does, and loads no facts store (issue 23)."""
        if self._store is None:
            from wisp.stores.facts import FactStore

            self._store = FactStore(self.home, clock=self.channel.clock)
        return self._store

    # --- answering -----------------------------------------------------------------------

    def answer(
        self,
        request_id: str,
        decision: Decision,
        *,
        kind: Kind | None = None,
        text: str | None = None,
        reason: str | None = None,
        shown: Request | None = None,
        wait_s: float | None = None,
        width: Mapping[str, Any] | None = None,
    ) -> AnswerReport:
        """Answer *request_id* with *decision*, as the kind *kind* (the kind the person meant;
        None: whatever it is), as wide as *width* (an answer's `width`: one the request
        offers, docs/channel.md "Widths"; None: the exact call). A refusal raises a
        :class:`pending.PendingError` (or :class:`StoreError` for a keep the facts store
        cannot take) with nothing written. Losing the race is not an error: the report says
        who won."""
        wait = self.wait_s if wait_s is None else wait_s
        check_log(self.home)  # a FIFO or a stranger's log: refused before answering
        if (
            kind is not None
            and not wait > 0
            and not (kind is Kind.FACT and decision == Decision.KEEP)
            and decision not in _STANDING
        ):
            # Nothing to do before answering (no store to check for room, no watch to start):
            # the channel's own check reads the request, once, and hands it back.
            return self._publish_and_wait(
                request_id,
                None,
                decision,
                kind,
                text=text,
                reason=reason,
                shown=shown,
                wait_s=0,
                width=width,
            )
        status = self.channel.status(request_id)  # checks the ID; Unknown/Unreadable raise
        request = status.request
        asked_as = request.kind if kind is None else kind
        if request.kind is Kind.FACT and decision == Decision.KEEP and asked_as is Kind.FACT:
            self.store.check_writable()  # before answering, so the request keeps waiting
        narrowed = None
        if decision in _STANDING and request.kind is asked_as:
            narrowed = _narrowed(request, decision, self.home)
            if narrowed is not None:
                decision, width = Decision.ONCE, None
            else:
                _check_grants(
                    self.home, decision, tool=request.kind is Kind.TOOL, wide=width is not None
                )
        report = self._publish_and_wait(
            request.id,
            request,
            decision,
            asked_as,
            text=text,
            reason=reason,
            shown=shown,
            wait_s=wait,
            width=width,
        )
        return report._replace(narrowed=narrowed) if narrowed and report.won else report

    def _publish_and_wait(
        self,
        request_id: str,
        read: Request | None,
        decision: Decision,
        kind: Kind,
        *,
        text: str | None,
        reason: str | None,
        shown: Request | None,
        wait_s: float,
        width: Mapping[str, Any] | None = None,
    ) -> AnswerReport:
        """Answer, audit, and wait for the outcome. *read*: the request as read before
        answering, if it was (it must be to wait: the watch needs its server)."""
        given = self._publish(
            request_id, read, decision, kind, text=text, reason=reason, shown=shown, width=width
        )
        if isinstance(given, AnswerReport):  # an earlier answer holds the slot
            return given
        request, answer = given
        outcome = self._follow(request, wait_s)
        if outcome is None and self._nobody_known_to_apply(request):
            # A legacy fact naming no asker: after the wait, nothing shows one applying it.
            return self._unwatched(request, answer)
        if outcome is None:
            return AnswerReport(
                request=request, won=True, answer=answer, settled=None, asker=AnswerFate.LATE
            )
        settled, _alive = outcome
        if settled is not None:
            return AnswerReport(
                request=request,
                won=True,
                answer=answer,
                settled=settled,
                asker=AnswerFate.SETTLED,
            )
        return self._unwatched(request, answer)

    def _publish(
        self,
        request_id: str,
        read: Request | None,
        decision: Decision,
        kind: Kind,
        *,
        text: str | None,
        reason: str | None,
        shown: Request | None,
        width: Mapping[str, Any] | None = None,
    ) -> tuple[Request, Answer] | AnswerReport:
        """Answer and audit: the request and the answer given, or the report of the earlier
        answer that holds the slot."""
        try:
            result = self.channel.answer(
                request_id,
                str(decision),
                kind=kind,
                via=self.via,
                text=text,
                reason=reason,
                shown=shown,
                width=width,
            )
        except AlreadyAnswered as exc:
            if read is None:
                try:
                    read = self.channel.status(request_id).request
                except PendingError:  # removed since: it was answered, and that is all
                    raise exc from None
            return self._lost(read, exc.answer)
        request = read or result.request
        assert request is not None  # answer() hands back the request it checked
        if not result.won:
            return self._lost(request, result.answer)
        self._audit(
            AuditEvent.APPROVAL_ANSWERED,
            request,
            via=self.via.value,
            device=self.device,
            decision=str(decision),
            answerText=text,
            answerReason=reason,
            **({"width": dict(width)} if width is not None else {}),
        )
        return request, result.answer

    def _follow(self, request: Request, wait_s: float) -> tuple[Settled | None, bool] | None:
        """The answered request's outcome, as :meth:`_outcome` says it, within *wait_s*; None
        if it is not known by then."""
        # The watch starts once the answer is out: the asker it wakes is what a person waits
        # for, and watchdog's import and an observer's start (~10 ms) are not. No outcome
        # slips in between: wait_until reads the slot once the watch is on, before it first
        # waits. A caller that will not wait (wait_s 0: a face that follows its own Inbox)
        # needs no watch at all.
        watch: _Wake = _NoWake()
        try:
            if wait_s > 0:
                from pending import RequestWatch  # watchdog loads only for a wait

                watch = RequestWatch(self.channel, request.id, request.server.id).start()
            return wait_until(
                lambda: self._outcome(request),
                watch.wait,
                timeout_s=wait_s,
                monotonic=self.channel.clock.monotonic,
                recheck_s=self._liveness_recheck_s,
            )
        except Exception as exc:
            # The answer stands, whatever fails after it (no descriptor or thread left to
            # watch or read with): it is reported as not picked up yet, never as an error.
            import logging

            logging.getLogger(LOGGER_NAME).warning(
                "wisp: the answer to %s is given, but the asker's outcome cannot be "
                "followed (%s); `wisp show %s` shows what it makes of it",
                request.id,
                exc,
                request.id,
            )
            return None
        finally:
            watch.stop()

    def _outcome(self, request: Request) -> tuple[Settled | None, bool] | None:
        """(outcome, alive) once settled or the asker is gone; None while it may yet settle.
        Only the outcome slot is read: the request and the answer are known here."""
        settled = self.channel.outcome(request.id)
        if settled is not None:
            return settled, True
        if not self.channel.request_alive(request):
            # An asker settles, then releases its lock as it ends: it may have done both since
            # the slot was read. Read once more before saying nobody acted on the answer.
            settled = self.channel.outcome(request.id)
            return (settled, True) if settled is not None else (None, False)
        return None

    def _nobody_known_to_apply(self, request: Request) -> bool:
        """Whether a fact's answer has no asker known to be applying it: its asker is gone,
        or (a legacy request naming none) cannot be judged. Settling is first-wins and the
        store is keyed by request, so an earlier build's asker applying it too keeps once."""
        return request.kind is Kind.FACT and self.channel.liveness(request) is not Liveness.ALIVE

    def _lost(self, request: Request, winner: Answer) -> AnswerReport:
        """An earlier answer holds the slot. If it is a fact answer that nobody lives to apply
        (the answering process died after publishing it), it is the person's own: apply it."""
        status = self.channel.status(request.id)
        if status.settled is not None:
            return AnswerReport(
                request=request,
                won=False,
                answer=winner,
                settled=status.settled,
                asker=AnswerFate.SETTLED,
            )
        if (
            status.state is State.ANSWERED
            and self._nobody_known_to_apply(request)
            and not pid_alive(winner.pid)  # else its own process is applying it now
        ):
            applied = self._unwatched(request, winner)
            return applied._replace(won=False)
        return AnswerReport(
            request=request, won=False, answer=winner, settled=None, asker=AnswerFate.LATE
        )

    def _unwatched(self, request: Request, answer: Answer) -> AnswerReport:
        """No asker lives to settle it: a fact is applied here; nothing acts on a command or
        a question (the sweep settles it `stale`)."""
        gone = AnswerReport(
            request=request, won=True, answer=answer, settled=None, asker=AnswerFate.GONE
        )
        if request.kind is not Kind.FACT:
            return gone
        from wisp.kinds.fact_keeper import apply_answered  # the fact kind's own applying

        try:
            result = apply_answered(
                self.channel,
                self.channel.status(request.id),
                store=self.store,
                delivery=Delivery.APPLIED,
                by=self.via,
                entry_point=self.entry_point,
            )
        except (StoreError, ChannelUnwritable) as exc:
            # The answer holds the slot; applying it is left for a later sweep (idempotent).
            return gone._replace(apply_error=str(exc))
        return AnswerReport(
            request=request,
            won=True,
            answer=answer,
            settled=result.settled,
            asker=AnswerFate.SETTLED,
            applied=result.won,
        )

    def _audit(self, event: AuditEvent, request: Request, **fields: object) -> None:
        audit(
            self.home,
            event,
            {**request_fields(request), **fields},
            entry_point=self.entry_point,
            clock=self.channel.clock,
        )

    def _audit_ending(self, request: Request, settled: Settled) -> None:
        """Audit an outcome this process wrote as a sweep (it won the write: of sweeps racing
        over one request, only one does), as an asker audits its own: `approval.withdrawn`
        for a withdrawal a crashed asker claimed, `approval.settled` for any other."""
        event, fields = ending_record(settled.outcome, settled.decision, settled.reason)
        self._audit(event, request, **fields, by=settled.by)

    # --- reading -------------------------------------------------------------------------

    def status(self, request_id: str) -> Status:
        """One request's state (raises UnknownRequest or UnreadableRequest)."""
        return self.channel.status(request_id)

    def listing(
        self,
        *,
        kinds: Collection[Kind] | None = None,
        states: Collection[State] | None = None,
        on_problem: Callable[[str], None] | None = None,
    ) -> Listing:
        """A sweep (stale requests settled, answered facts whose applier died applied here),
        then what the channel holds in *states* (None: every state). A request the sweep
        ended is shown as it ended (settled, with why), so a listing of what waits never holds
        what it has just ended. *on_problem* hears what could not be done: a sweep that could
        not write (a stale request it could not end is then listed as stale, with why) or a
        fact not applied."""
        # One scan serves both; the few requests the sweep ended are read again afterwards.
        # They were waiting (or stale) when scanned, so those states are asked for too, and
        # each is then kept only if the state it ended in is one *states* holds.
        scanned_states = None if states is None else {*states, *SWEPT_FROM}
        listing, swept = self.channel.listing_and_sweep(kinds=kinds, states=scanned_states)
        report = self.sweep(on_problem=on_problem, swept=swept)
        ended = {*report.stale, *report.finished, *report.applied}
        statuses = []
        for status in listing.statuses:
            if status.id in ended:
                try:
                    status = self.channel.status(status.id)
                except PendingError:  # removed or spoilt since: not there to be shown
                    continue
            if states is None or status.state in states:
                statuses.append(status)
        return listing._replace(statuses=tuple(statuses))

    def sweep(
        self,
        *,
        on_problem: Callable[[str], None] | None = None,
        swept: SweepReport | None = None,
    ) -> SweepReport:
        """Tidy the channel, and apply answered facts nobody lives to apply. The report's
        ``applied`` are the facts applied here; ``awaiting`` only those still to be applied;
        ``errors`` the writes that failed (each also told to *on_problem*). *swept*: the
        channel's sweep, if one was just done (by :meth:`pending.Channel.listing_and_sweep`)."""
        report = self.channel.sweep() if swept is None else swept
        for ending in report.endings:  # what this sweep ended, audited as every ending is
            self._audit_ending(ending.request, ending.settled)
        applied, problems = _apply_all(
            self.channel, report.awaiting, by=Via.SWEEP, entry_point=self.entry_point
        )
        if on_problem is not None:
            for error in report.errors:
                on_problem(f"the channel was not tidied: {error}")
            for problem in problems:
                on_problem(problem)
        done = set(applied)
        return report._replace(
            applied=tuple(applied),
            awaiting=tuple(s for s in report.awaiting if s.id not in done),
        )


class Inbox:
    """What waits for the person, live: a snapshot, then each transition as it happens."""

    def __init__(
        self,
        channel: Channel,
        *,
        entry_point: EntryPoint,
        on_warning: Callable[[str], None] | None = None,
        liveness_recheck_s: float = LIVENESS_RECHECK_S,
    ) -> None:
        self.channel = channel
        self.entry_point = entry_point
        self._on_warning = on_warning

        def warn(message: str) -> None:
            audit(
                channel.home,
                AuditEvent.WATCH_WARNING,
                {"message": message},
                entry_point=entry_point,
            )
            if on_warning is not None:
                on_warning(message)

        from pending import Watcher  # watchdog loads only for a live view

        self._watcher = Watcher(channel, on_warning=warn, liveness_recheck_s=liveness_recheck_s)
        self._started = False

    def start(self) -> Inbox:
        if not self._started:
            self._watcher.start()
            self._started = True
        return self

    @property
    def backend(self) -> str | None:
        """`native` (inotify, FSEvents) or `polling`, once started."""
        return self._watcher.backend.value if self._watcher.backend else None

    def subscribe(self, backlog: int = 256) -> tuple[Subscription[Transition], list[Status]]:
        """A bounded subscription (a slow reader loses the oldest and reads a
        :class:`pending.Missed`), and the statuses known when it began."""
        self.start()
        return self._watcher.subscribe(backlog)

    def unsubscribe(self, subscription: Subscription[Transition]) -> None:
        self._watcher.unsubscribe(subscription)

    def statuses(self, *, kinds: Collection[Kind] | None = None) -> list[Status]:
        return self._watcher.statuses(kinds=kinds)

    def close(self) -> None:
        self._watcher.stop()

    def __enter__(self) -> Inbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _configured_wait(home: Path) -> float:
    from wisp.stores.config import ConfigError, load_config  # only when no wait was given

    try:
        return float(load_config(home)["answer.waitSeconds"])
    except ConfigError:
        return ANSWER_WAIT_S


def _apply_all(
    channel: Channel,
    awaiting: Iterable[Status],
    *,
    by: Via,
    entry_point: EntryPoint,
) -> tuple[list[str], list[str]]:
    """Apply answered facts whose applier died, in the process at hand (idempotent): the
    IDs applied, and what could not be, for the caller to say."""
    applied: list[str] = []
    problems: list[str] = []
    store: FactStore | None = None  # made for the first fact to apply: most listings have none
    for status in awaiting:
        if status.kind is Kind.FACT and status.state is State.ANSWERED:
            if store is None:
                from wisp.stores.facts import FactStore

                store = FactStore(channel.home)
            from wisp.kinds.fact_keeper import apply_answered  # the fact kind's own applying

            try:
                apply_answered(
                    channel,
                    status,
                    store=store,
                    delivery=Delivery.APPLIED,
                    by=by,
                    entry_point=entry_point,
                )
            except (StoreError, PendingError) as exc:  # unwritable, or a slot turned to junk
                problems.append(f"could not apply answered fact {status.id}: {exc}")
                continue
            applied.append(status.id)
    return applied, problems
