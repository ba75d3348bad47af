"""The fact keeper: asks the person to keep a thread or session fact as permanent.

A caller asks; only the person keeps (seed ADR 0048). :class:`FactKeeper` files a fact request
and returns at once: it never waits for the person. Its watch settles the answer when it comes
(`delivery: watched`); if its server has stopped, the request is handed over and the process
the person answers in applies it (:func:`apply_answered`, `delivery: applied`). Either way a
fact is kept only if it still says what the person was shown, and keeping is idempotent: the
store is keyed by request, so applying twice keeps once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

import attrs

from pending import (
    Delivery,
    FactBinding,
    Kind,
    PendingError,
    Request,
    State,
    Status,
    Transition,
    format_time,
    make_request,
)
from wisp._answering import apply_answered
from wisp._asking import Asker
from wisp._audit import AuditEvent, audit, request_fields
from wisp._factstore import Fact, FactRefused, FactStore
from wisp._store import StoreError


@attrs.frozen(kw_only=True)
class KeepRequest:
    """What the keeper tells its caller at once."""

    state: str  # pending | kept (already permanent)
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
        asker: Asker,
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
        self._mine: dict[str, Request] = {}  # fact requests this keeper filed, not yet settled
        self._drops: dict[str, dict[tuple[str, str, str], _Drop]] = {}  # thread -> drops
        self._subscription, _ = asker.watcher.subscribe(backlog=1024)
        self._closed = False
        self._thread = threading.Thread(target=self._watch, name="fact-keeper", daemon=True)
        self._thread.start()

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
        if fact_id.startswith("p"):
            raise FactRefused(
                f"{fact_id} is already a permanent fact, and permanent facts are the person's: "
                "a caller cannot move or demote one. Record a newer fact in your thread instead."
            )
        if not fact_id.startswith(("c", "s")):
            raise FactRefused(
                f"{fact_id!r} is not a thread (c…) or session (s…) fact; only those can be "
                "asked about."
            )
        held = self.store.holding(subject, name, value)
        if held is not None:
            return KeepRequest(state="kept", fact=held, uri=_uri(fact_id))
        drop = self._drops.get(thread or "", {}).get((subject, name, value))
        if drop is not None:
            raise FactRefused(
                f"the person dropped {subject} {name} = {value} on {format_time(drop.at)} "
                f"(request {drop.request}); it is not asked again while this thread is open."
            )
        waiting = self._waiting_for(subject, name, value)
        if waiting is not None:
            return KeepRequest(state="pending", request_id=waiting.id, uri=_uri(fact_id))
        binding = FactBinding(
            fact_id=fact_id,
            subject=subject,
            name=name,
            value=value,
            source=source,
            proposed_by=proposed_by,
        )
        blank = make_request(
            kind=Kind.FACT,
            binding=binding,
            title="wisp: keep as a permanent fact?",
            body="",
            server=self.asker._server(thread),
            clock=self.asker.clock,
        )
        request = attrs.evolve(
            blank, body=f"{subject} {name} = {value} — wisp facts keep {blank.id}"
        )
        with self._mutex:
            self._mine[request.id] = request
        try:
            self.channel.file(request)
        except PendingError:  # ChannelUnwritable: nothing was filed; the caller says so
            with self._mutex:
                self._mine.pop(request.id, None)
            raise
        audit(
            self.asker.home,
            AuditEvent.APPROVAL_PENDING,
            request_fields(request),
            entry_point=self.asker.entry_point,
        )
        self.asker.announce(request)
        return KeepRequest(state="pending", request_id=request.id, uri=_uri(fact_id), new=True)

    def _waiting_for(self, subject: str, name: str, value: str) -> Request | None:
        waiting = (State.FILED, State.ANSWERED, State.HANDED_OVER)
        for status in self.channel.listing(kinds=[Kind.FACT], states=waiting).statuses:
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
        self._drops.pop(thread, None)

    def _watch(self) -> None:
        """Apply answers to this keeper's requests as they come (delivery: watched)."""
        for item in self._subscription:
            if not isinstance(item, Transition) or item.event.value != "answered":
                if not isinstance(item, Transition):
                    self._sweep_mine()  # missed events: look at everything of ours again
                continue
            with self._mutex:
                mine = item.id in self._mine
            if mine and item.status is not None:
                self._apply(item.status)

    def _sweep_mine(self) -> None:
        with self._mutex:
            ids = list(self._mine)
        for request_id in ids:
            try:
                status = self.channel.status(request_id)
            except (OSError, PendingError):  # gone, or unreadable: nothing to apply here
                continue
            if status.state is State.ANSWERED:
                self._apply(status)

    def _apply(self, status: Status) -> None:
        binding, answer = status.request.binding, status.answer
        if answer is not None and answer.decision == "drop" and isinstance(binding, FactBinding):
            # Remembered before the outcome is written: whoever sees the outcome sees the drop.
            thread = status.request.server.thread or ""
            key = (binding.subject, binding.name, binding.value)
            self._drops.setdefault(thread, {})[key] = _Drop(
                at=answer.answered_at, request=status.id
            )
        try:
            apply_answered(
                self.channel,
                status,
                store=self.store,
                delivery=Delivery.WATCHED,
                by="asker",
                entry_point=self.asker.entry_point,
                still_shown=self._changed,
            )
        except (StoreError, PendingError, OSError):
            # Left answered (a store or channel that cannot be written, a slot turned to
            # junk): the answering process or a later sweep applies it, or the doctor shows it.
            return
        with self._mutex:
            self._mine.pop(status.id, None)

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
        self.asker.watcher.unsubscribe(self._subscription)
        self._thread.join(10)
        with self._mutex:
            left = list(self._mine.values())
            self._mine.clear()
        for request in left:
            audit(
                self.asker.home,
                AuditEvent.APPROVAL_SETTLED,
                {**request_fields(request), "outcome": "handed-over"},
                entry_point=self.asker.entry_point,
            )


def _uri(fact_id: str) -> str:
    return f"wisp://facts/{fact_id}"
