"""The channel's rules as pure functions of records, a time and liveness (no I/O).

State derivation, answer checking, and how what holds the answer slot becomes an outcome
(:func:`settlement_for`, :func:`ending_of`): the asker, the sweeper and any process applying
an answer call these, so the rules are written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from pending._clock import format_time
from pending._kinds import (
    DECISIONS,
    DIES_WITH_SERVER,
    KINDS,
    TOMBSTONES,
    WIDENED,
    Delivery,
    Outcome,
    State,
)
from pending._offers import width_problem
from pending._records import Answer, Group, Request, Settled, Status, from_fields

# Kinds whose request dies with its server (DIES_WITH_SERVER, read from the kinds table): only
# the asking thread can take their answer.

# How long past its `expiresAt` a request whose asker still lives goes on reading as waiting.
# The asker keeps its deadline on its own monotonic clock, from the moment its request was
# published (a little after `expiresAt` was computed), and claims the slot `timed-out`
# itself; until then a person may still answer it. The grace absorbs that gap, a timer
# delayed by a busy machine, and a wall clock stepped forward by up to this much. Past it,
# the request reads stale (an asker that hangs cannot hold it open), though no sweep claims
# a live asker's request: only its asker, or a sweep once it is gone, ends it.
LIVE_EXPIRY_GRACE_S = 60.0


def is_expired(request: Request, now: datetime) -> bool:
    return request.expires_at is not None and now >= request.expires_at


def needs_liveness(group: Group) -> bool:
    """Whether deriving this group's state needs to know if its server lives."""
    return group.request is not None and group.settled is None and group.answer is None


def derive_status(
    group: Group,
    *,
    now: datetime,
    server_alive: bool | None,
    live_grace_s: float = LIVE_EXPIRY_GRACE_S,
) -> Status | None:
    """A request's state by the design's precedence, first match wins.

    1. settled: its outcome is written (or a tombstone holds the slot: it reads as its outcome);
    2. answered: a person's answer holds the slot;
    3. stale: a command or question whose server is gone, or any request past ``expiresAt``
       whose asker holds no lock (a legacy request whose pid lives: *live_grace_s* past it,
       see :data:`LIVE_EXPIRY_GRACE_S`); while its asker holds its lock, that asker's own
       deadline decides;
    4. handed-over: a fact request whose server is gone (it waits for the person, unbounded);
    5. filed.

    ``server_alive`` may be None only when :func:`needs_liveness` is false. Returns None for a
    group with no request (an ended group whose request was already swept).
    """
    request = group.request
    if request is None:
        return None
    if group.settled is not None or group.answer is not None:
        return _slot_held(group, request)
    if server_alive is None:
        raise ValueError("deriving a waiting request's state needs its server's liveness")
    return _waiting(
        group.id, request, now=now, server_alive=server_alive, live_grace_s=live_grace_s
    )


def _slot_held(group: Group, request: Request) -> Status:
    """The state of a request whose answer slot is held: settled (its outcome written, or a
    tombstone that reads as its outcome), else answered."""
    request_id, kind = group.id, request.kind
    if group.settled is not None:
        settled = group.settled
        return Status(
            id=request_id,
            kind=kind,
            request=request,
            state=State.SETTLED,
            answer=group.answer,
            settled=settled,
            outcome=settled.outcome,
            reason=settled.reason,
        )
    answer = group.answer
    assert answer is not None  # the slot is held: by an outcome, or else by an answer
    if answer.is_tombstone:
        ending = ending_of(answer)
        return Status(
            id=request_id,
            kind=kind,
            request=request,
            state=State.SETTLED,
            answer=answer,
            outcome=ending.outcome,
            reason=ending.reason,
        )
    return Status(id=request_id, kind=kind, request=request, state=State.ANSWERED, answer=answer)


def _waiting(
    request_id: str,
    request: Request,
    *,
    now: datetime,
    server_alive: bool,
    live_grace_s: float,
) -> Status:
    """The state of a request nothing has answered: stale, handed-over or filed."""
    kind = request.kind
    expires_at = request.expires_at
    # An asker that holds its lock keeps its own deadline (on its monotonic clock): its
    # request waits until that asker claims `timed-out`, whatever this clock says (a clock
    # ahead of the asker's must not turn the person away). Only a legacy request, judged
    # alive by its pid, is held to the wall clock, *live_grace_s* past its expiry.
    held = server_alive and not request.legacy
    if (
        expires_at is not None
        and not held
        and (
            now >= expires_at + timedelta(seconds=live_grace_s)
            if server_alive
            else is_expired(request, now)
        )
    ):
        return Status(
            id=request_id,
            kind=kind,
            request=request,
            state=State.STALE,
            server_alive=server_alive,
            reason=f"it expired at {format_time(expires_at)}",
        )
    if not server_alive:
        if request.kind in DIES_WITH_SERVER:
            return Status(
                id=request_id,
                kind=kind,
                request=request,
                state=State.STALE,
                server_alive=False,
                reason=f"the program that asked (pid {request.server.pid}) has stopped",
            )
        return Status(
            id=request_id, kind=kind, request=request, state=State.HANDED_OVER, server_alive=False
        )
    # Built from its fields in order: most of a long listing's are (see from_fields).
    return from_fields(
        Status, (request_id, kind, State.FILED, request, None, None, None, True, None)
    )


def decision_problem(
    request: Request,
    decision: str,
    text: str | None,
    width: Mapping[str, Any] | None = None,
) -> tuple[str, str] | None:
    """Why *decision* (with *text*, and *width*: an answer's `width`) cannot answer *request*,
    and the remedy; None if it can. An approval must be one the request offers
    (:mod:`pending._offers`): a must-ask call takes `once` or `no` only.

    Tombstones are not decisions a person gives; they are checked by :func:`answer_problem`.
    """
    allowed = DECISIONS[request.kind]
    if decision not in allowed:
        return (
            f"{decision!r} is not an answer to a {request.kind} request",
            f"Answer with one of: {', '.join(allowed)}.",
        )
    if request.kind in WIDENED:
        problem = width_problem(request.binding, decision, width)
        if problem is not None:
            return problem
    elif width is not None:
        return (f"a {request.kind} answer takes no width", "Leave the width out.")
    binding, takes_text = request.binding, KINDS[request.kind].text_decision
    if takes_text is not None and decision == takes_text:
        options = getattr(binding, "options", None)
        free_text = getattr(binding, "free_text", True)
        if text is None or not text.strip():
            return ("an answer needs text", "Give the answer's text, or decline the question.")
        if options and not free_text and text not in options:
            return (
                f"{text!r} is not one of the question's options",
                f"Answer with one of: {', '.join(repr(o) for o in options)}.",
            )
    elif text is not None and takes_text is None:
        return (f"a {request.kind} answer takes no text", "Leave the text out.")
    return None


def answer_problem(request: Request, answer: Answer) -> str | None:
    """Why *answer* must not be applied to *request* (as it is on disk now); None if it may.

    Checked by whoever applies an answer: the kinds agree, the decision is one the kind takes,
    and the answer is bound to the request's current binding (the person saw what will run).
    """
    if answer.id != request.id:
        return f"the answer is for {answer.id}, not {request.id}"
    if answer.kind is not request.kind:
        return f"the answer is a {answer.kind} answer but the request is a {request.kind} request"
    if answer.is_tombstone:
        return None
    problem = decision_problem(request, answer.decision, answer.text, answer.width)
    if problem is not None:
        return problem[0]
    if answer.binding_digest != request.binding_digest:
        return "the request changed after the person answered it (its binding digest differs)"
    return None


class Settlement(NamedTuple):
    """What an outcome record is to say: the fields :meth:`pending.Channel.settle` writes
    (:meth:`pending.Channel.settle_with` takes one whole)."""

    outcome: Outcome
    decision: str | None = None
    reason: str | None = None
    delivery: Delivery | None = None


def settlement_for(
    request: Request, answer: Answer, *, delivery: Delivery = Delivery.WATCHED
) -> Settlement:
    """The outcome that what holds *request*'s answer slot decides: the one tombstone-to-settle
    rule, for the asker, the sweeper and a process applying an answer nobody watches.

    *request* is the request as it is on disk now; *answer* is the record in its slot.

    - A tombstone (``timed-out``, ``withdrawn``, ``stale``) settles as the outcome of the same
      name, with the tombstone's reason and no decision.
    - A person's answer that must not be applied (:func:`answer_problem`: another kind, a
      decision the kind does not take, or bound to a binding that has changed since) settles
      ``failed``, keeping the decision, with the problem as the reason. (For a command, failed
      means denied.)
    - A person's answer that may be applied settles ``answered`` with its decision and
      *delivery* (``watched`` when the asker applies it, ``applied`` when the answering process
      does). This is what to write *after* applying it: the caller applies the decision first,
      adds a ``result`` if applying made one (a kept fact's id), and settles ``failed`` with its
      own reason instead if applying failed.
    """
    if answer.is_tombstone:
        return Settlement(outcome=TOMBSTONES[answer.decision], reason=answer.reason)
    problem = answer_problem(request, answer)
    if problem is not None:
        return Settlement(outcome=Outcome.FAILED, decision=answer.decision, reason=problem)
    return Settlement(outcome=Outcome.ANSWERED, decision=answer.decision, delivery=delivery)


def ending_of(answer: Answer) -> Settled:
    """The outcome a tombstone in the slot stands for, before its settled file is written
    (by whoever claimed the slot, at the time it claimed it). Raises ValueError for a person's
    answer: that one ends only when it is applied."""
    if not answer.is_tombstone:
        raise ValueError(f"{answer.decision!r} is a person's answer, not an ending")
    return Settled(
        id=answer.id,
        kind=answer.kind,
        outcome=TOMBSTONES[answer.decision],
        settled_at=answer.answered_at,
        by=answer.via,
        reason=answer.reason,
    )
