"""The sweep, planned: what to do about what the channel holds, as a pure function (no I/O).

:meth:`pending.Channel.sweep` reads every group, asks :func:`plan_sweep` what to do with them,
and does it. Keeping the decisions here lets them be tested on records alone, and keeps the
rules (when a request is stale, what a claimed slot settles as, what may be removed, what must
never be) in one place with the state derivation they build on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import NamedTuple

from pending._kinds import DIES_WITH_SERVER, Outcome, State
from pending._records import Group, Request, Status
from pending._state import (
    LIVE_EXPIRY_GRACE_S,
    Settlement,
    derive_status,
    settlement_for,
)

# How long an ended request's files stay, so a late answerer is told how it ended rather than
# that it never existed, and a list of recent requests can show it.
SETTLED_GRACE_S = 24 * 3600.0

# Why a person's answer to a command or question ends stale: nobody is left to act on it.
ABANDONED_REASON = "the program that asked stopped before acting on the answer"


class SweepStep(StrEnum):
    """What a sweep does to one group."""

    CLAIM_STALE = "claim-stale"  # a waiting request is stale: claim its slot `stale`, settle
    SETTLE = "settle"  # the slot is decided but no outcome written: write the planned one
    REMOVE = "remove"  # an ended group past the grace period: remove its files
    AWAIT = "await"  # an answered fact whose server is gone: the answering process applies it


class SweepAction(NamedTuple):
    """One planned step for one group."""

    step: SweepStep
    id: str
    request: Request | None = None  # every step but REMOVE (whose request may be gone)
    settlement: Settlement | None = None  # SETTLE: the outcome to write
    reason: str | None = None  # CLAIM_STALE: why it is stale (the tombstone's reason)
    status: Status | None = None  # CLAIM_STALE and AWAIT: the status it was planned from


def plan_sweep(
    groups: Iterable[Group],
    *,
    now: datetime,
    alive: Callable[[Request], bool | None],
    settled_grace_s: float = SETTLED_GRACE_S,
    unreadable: Collection[str] = (),
    live_grace_s: float = LIVE_EXPIRY_GRACE_S,
) -> tuple[SweepAction, ...]:
    """What a sweep at *now* should do with *groups*, in their order.

    *alive* tells whether a request's asker lives (its lock is held; for a legacy request,
    its pid exists), or None where that cannot be told (a legacy request naming neither):
    then nothing is claimed or settled on a guess, but an answered fact is awaited, for
    the process at hand to apply. It is asked only about the requests whose plan depends
    on it. *unreadable* are the IDs with a file that could not be read: those groups
    are left entirely alone, as nothing unreadable is ever acted on (nor removed: the doctor
    reports it). *live_grace_s* is how long past its expiry a request whose asker seems alive
    still reads as waiting (:data:`pending.LIVE_EXPIRY_GRACE_S`).

    - An ended group (an outcome written, or an answer whose request is gone) past
      *settled_grace_s* since it ended: REMOVE.
    - A tombstone in the slot, no outcome yet (its claimer died before settling): SETTLE as
      :func:`pending.settlement_for` says.
    - A person's answer, no outcome, its server gone: a command or question SETTLEs ``stale``
      keeping the decision (nobody is left to act on it); a fact is AWAITed, for the process
      at hand to apply (a fact outlives its server). While the server lives, its asker settles.
    - A waiting request whose asker holds its lock: left to that asker, which keeps its own
      deadline on its monotonic clock and claims `timed-out` itself (a sweep that claimed it
      `stale` would turn a plain time-out, exit 124, into stale, exit 1; and a wall clock
      set forward would make it expire early). It reads stale to others once
      *live_grace_s* past ``expiresAt``, but only its asker (or, once it is gone, a sweep)
      ends it.
    - A waiting request that derives stale (server gone, or past ``expiresAt``; a legacy
      request judged alive by its pid, or not judged at all, past it by *live_grace_s*):
      CLAIM_STALE.
    - Anything else (filed, handed over) is left as it is. A fact request that no outcome
      ended is never removed.
    """
    grace = timedelta(seconds=settled_grace_s)
    skip = frozenset(unreadable)
    plan: list[SweepAction] = []
    for group in groups:
        if group.id in skip:
            continue
        request, answer = group.request, group.answer
        if group.settled is not None or request is None:
            action = _plan_ended(group, now=now, grace=grace)
        elif answer is not None and answer.is_tombstone:
            settlement = settlement_for(request, answer)
            action = SweepAction(
                step=SweepStep.SETTLE, id=group.id, request=request, settlement=settlement
            )
        elif answer is not None:
            action = _plan_answered(group, request, now=now, alive=alive)
        else:
            action = _plan_waiting(group, request, now=now, alive=alive, live_grace_s=live_grace_s)
        if action is not None:
            plan.append(action)
    return tuple(plan)


def _plan_ended(group: Group, *, now: datetime, grace: timedelta) -> SweepAction | None:
    """An ended group (or an answer whose request is gone): REMOVE once past its grace."""
    ended = group.settled.settled_at if group.settled is not None else None
    if ended is None and group.answer is not None:
        ended = group.answer.answered_at  # an answer whose request was already removed
    if ended is not None and now - ended >= grace:
        return SweepAction(step=SweepStep.REMOVE, id=group.id)
    return None


def _plan_answered(
    group: Group, request: Request, *, now: datetime, alive: Callable[[Request], bool | None]
) -> SweepAction | None:
    """A person's answer, no outcome: its asker settles it while it lives; then a command or
    question settles stale (keeping the decision), and a fact is awaited."""
    assert group.answer is not None
    verdict = alive(request)
    if verdict:
        return None  # its asker is watching: it settles
    if request.kind not in DIES_WITH_SERVER:
        status = derive_status(group, now=now, server_alive=False)
        return SweepAction(step=SweepStep.AWAIT, id=group.id, request=request, status=status)
    if verdict is None:
        return None  # an asker we cannot judge may yet act on it: never on a guess
    settlement = Settlement(
        outcome=Outcome.STALE, decision=group.answer.decision, reason=ABANDONED_REASON
    )
    return SweepAction(step=SweepStep.SETTLE, id=group.id, request=request, settlement=settlement)


def _plan_waiting(
    group: Group,
    request: Request,
    *,
    now: datetime,
    alive: Callable[[Request], bool | None],
    live_grace_s: float,
) -> SweepAction | None:
    """A waiting request: CLAIM_STALE when it derives stale, unless its live asker keeps its
    own deadline."""
    verdict = alive(request)
    if verdict and not request.legacy:
        # Its asker holds its lock, and keeps its own deadline on a monotonic clock:
        # it claims `timed-out` itself, however the wall clock was set meanwhile.
        return None
    status = derive_status(
        group,
        now=now,
        server_alive=verdict is not False,  # unknown: as alive
        live_grace_s=live_grace_s,
    )
    if status is None or status.state is not State.STALE:
        return None
    return SweepAction(
        step=SweepStep.CLAIM_STALE,
        id=group.id,
        request=request,
        reason=status.reason,
        status=status,
    )
