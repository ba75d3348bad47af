"""The fact kind's gate, the keeper: asks the person to keep a thread or session fact as
permanent, and applies their answer.

A caller asks; only the person keeps (seed ADR 0048). :class:`FactKeeper` files a fact request
through the asker it is handed and returns at once: it never waits for the person. It is the
asker's :class:`~wisp.kinds._asker.Applier` for facts, so the asker's one settler applies the
answer when it comes (`delivery: watched`); if the asker has stopped, the request is handed over and
the process the person answers in applies it (:func:`apply_answered`, `delivery: applied`).
Either way a fact is kept only if it still says what the person was shown, and keeping is
idempotent: the store is keyed by request, so applying twice keeps once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum

import attrs

from pending import (
    Channel,
    Decision,
    Delivery,
    FactBinding,
    Kind,
    Outcome,
    Request,
    Settled,
    SettleResult,
    Status,
    Via,
    format_time,
    settlement_for,
)
from wisp._entry import EntryPoint
from wisp.audit.writer import AuditEvent, audit, request_fields
from wisp.kinds import view
from wisp.kinds._asker import AskingServer
from wisp.kinds._view import WAITING
from wisp.stores.factids import asked_from, is_permanent
from wisp.stores.facts import Fact, FactRefused, FactStore

_FACTS = view(Kind.FACT)


class KeepState(StrEnum):
    """Where a fact the keeper was asked about stands."""

    PENDING = "pending"  # a request waits for the person
    KEPT = "kept"  # already permanent: nothing asked


@attrs.frozen(kw_only=True)
class KeepRequest:
    """What the keeper tells its caller at once."""

    state: KeepState
    request_id: str | None = None
    fact: Fact | None = None  # when already kept
    uri: str | None = None  # where the outcome shows
    new: bool = False  # whether this call filed the request


@attrs.frozen(kw_only=True)
class _Drop:
    at: datetime
    request: str


class FactKeeper:
    """Asks the person to keep facts permanent, for one asking server, and applies answers."""

    def __init__(
        self,
        asker: AskingServer,
        *,
        store: FactStore | None = None,
        lookup: Callable[[str], FactBinding | None] | None = None,
    ) -> None:
        """*lookup* gives the server's current view of a thread or session fact by id (None
        if it is gone); a keep is applied only if the fact still says what was shown."""
        self.asker = asker
        self._lookup = lookup
        self.channel = asker.channel
        self.store = store or FactStore(asker.home, clock=asker.clock)
        self._mutex = threading.Lock()
        self._drops: dict[str, dict[tuple[str, str, str], _Drop]] = {}  # thread -> drops
        self._closed = False
        asker.apply_with(Kind.FACT, self)  # the asker's settler applies our answers

    def request(
        self,
        *,
        fact_id: str,
        subject: str,
        name: str,
        value: str,
        source: str,
        proposed_by: str,
        thread: str | None = None,
    ) -> KeepRequest:
        """Ask the person to keep this fact; returns at once (never waits for them)."""
        if is_permanent(fact_id):
            raise FactRefused(
                f"{fact_id} is already a permanent fact, and permanent facts are the person's: "
                "a caller cannot move or demote one. Record a newer fact in your thread instead."
            )
        if asked_from(fact_id) is None:
            raise FactRefused(
                f"{fact_id!r} is not a thread (c…) or session (s…) fact; only those can be "
                "asked about."
            )
        held = self.store.holding(subject, name, value)
        if held is not None:
            return KeepRequest(state=KeepState.KEPT, fact=held, uri=_uri(fact_id))
        with self._mutex:
            drop = self._drops.get(thread or "", {}).get((subject, name, value))
        if drop is not None:
            raise FactRefused(
                f"the person dropped {subject} {name} = {value} on {format_time(drop.at)} "
                f"(request {drop.request}); it is not asked again while this thread is open."
            )
        waiting = self._waiting_for(subject, name, value)
        if waiting is not None:
            return KeepRequest(state=KeepState.PENDING, request_id=waiting.id, uri=_uri(fact_id))
        binding = FactBinding(
            fact_id=fact_id,
            subject=subject,
            name=name,
            value=value,
            source=source,
            proposed_by=proposed_by,
        )
        # Filed as every request is (audited, announced); never waited for, no deadline. A
        # channel that cannot be written raises ChannelUnwritable: nothing was filed.
        request = self.asker.file(
            Kind.FACT,
            binding,
            title=_FACTS.title,
            body=lambda rid: _FACTS.body(f"{subject} {name} = {value}", rid),
            timeout_s=0,
            thread=thread,
        )
        return KeepRequest(
            state=KeepState.PENDING, request_id=request.id, uri=_uri(fact_id), new=True
        )

    def _waiting_for(self, subject: str, name: str, value: str) -> Request | None:
        for status in self.channel.listing(kinds=[Kind.FACT], states=WAITING).statuses:
            b = status.request.binding
            if isinstance(b, FactBinding) and (b.subject, b.name, b.value) == (
                subject,
                name,
                value,
            ):
                return status.request
        return None

    def close_thread(self, thread: str) -> None:
        """A thread closed: its drops are forgotten; its requests stay, still watched."""
        with self._mutex:
            self._drops.pop(thread, None)

    def apply(self, request: Request, status: Status) -> Settled:
        """Apply an answer to one of our requests (the asker's settler calls it, as its
        :class:`~wisp.kinds._asker.Applier` for facts): keep or drop, settled
        `delivery: watched`."""
        if status.settled is not None:  # settled elsewhere (and audited there)
            return status.settled
        binding, answer = request.binding, status.answer
        if answer is not None and answer.decision == Decision.DROP:
            assert isinstance(binding, FactBinding)
            # Remembered before the outcome is written: whoever sees the outcome sees the drop.
            key = (binding.subject, binding.name, binding.value)
            with self._mutex:
                self._drops.setdefault(request.server.thread or "", {})[key] = _Drop(
                    at=answer.answered_at, request=request.id
                )
        return apply_answered(
            self.channel,
            status,  # its request checked by the asker against the one it filed
            store=self.store,
            delivery=Delivery.WATCHED,
            by=Via.ASKER,
            entry_point=self.asker.entry_point,
            still_shown=self._changed,
        ).settled

    def _changed(self, request: Request) -> str | None:
        """Why the fact no longer says what the person was shown, or None."""
        binding = request.binding
        if self._lookup is None or not isinstance(binding, FactBinding):
            return None
        now = self._lookup(binding.fact_id)
        if now is None:
            return f"the fact {binding.fact_id} is gone from its thread"
        shown = (binding.subject, binding.name, binding.value, binding.source)
        if (now.subject, now.name, now.value, now.source) != shown:
            return (
                f"the fact changed after you were asked: it now says {now.subject} "
                f"{now.name} = {now.value}"
            )
        return None

    def close(self) -> None:
        """The server stops: its fact requests stay, handed over to whoever the person answers
        in (audited as handed-over)."""
        if self._closed:
            return
        self._closed = True
        self.asker.hand_over(Kind.FACT)


def _uri(fact_id: str) -> str:
    """Where a fact's outcome shows (the MCP server's fact resource)."""
    return f"wisp://facts/{fact_id}"


def apply_answered(
    channel: Channel,
    status: Status,
    *,
    store: FactStore,
    delivery: Delivery,
    by: Via,
    entry_point: EntryPoint,
    still_shown: Callable[[Request], str | None] | None = None,
) -> SettleResult:
    """Apply a fact request's answer (keep or drop) and settle it, first outcome wins (the
    result says whether this call's outcome won).

    Keep admits the fact only if the request still says what the person was shown (and, with
    *still_shown*, the asking server's own view agrees: it returns why not, or None);
    otherwise it ends `failed` and the store is untouched. Raises :class:`StoreError` if the
    store cannot be written: the answer stays in its slot, to be applied when it can.
    """
    request, answer = status.request, status.answer
    assert answer is not None and request.kind is Kind.FACT
    binding = request.binding
    assert isinstance(binding, FactBinding)
    fields = request_fields(request)
    settlement = settlement_for(request, answer, delivery=delivery)
    if settlement.outcome is Outcome.ANSWERED and answer.decision == Decision.KEEP:
        changed = still_shown(request) if still_shown is not None else None
        if changed is not None:  # the server's own view says the fact is not what was shown
            settlement = settlement._replace(
                outcome=Outcome.FAILED, reason=changed, delivery=delivery
            )
    if settlement.outcome is Outcome.ANSWERED and answer.decision == Decision.KEEP:
        from wisp.stores.factids import asked_from
        from wisp.stores.facts import KEPT_BY_PERSON

        fact, new = store.keep(binding, request=request.id, via=answer.via)
        result = channel.settle_with(request, settlement, by=by, result=fact.id)
        if new:
            audit(
                channel.home,
                AuditEvent.FACT_SCOPE_CHANGED,
                {
                    **fields,
                    "fact": binding.fact_id,
                    "permanent": fact.id,
                    "from": asked_from(binding.fact_id) or "unknown",
                    "to": "permanent",
                    "by": KEPT_BY_PERSON,
                },
                entry_point=entry_point,
            )
    else:
        if settlement.outcome is Outcome.FAILED:
            settlement = settlement._replace(delivery=delivery)
        result = channel.settle_with(request, settlement, by=by)
    settled = result.settled
    if result.won:
        audit(
            channel.home,
            AuditEvent.APPROVAL_SETTLED,
            {
                **fields,
                "outcome": settled.outcome.value,
                "decision": settled.decision,
                "result": settled.result,
                "outcomeReason": settled.reason,
                "delivery": delivery.value,
            },
            entry_point=entry_point,
        )
    return result
