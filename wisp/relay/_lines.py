"""The relay's own lines, as records of :mod:`wisp.relay.protocol`, from what the application
reports (pure: no I/O): a request's status, why one went away, an answer's report."""

from __future__ import annotations

from pending import Answer, Kind, Request, State, Status, known_json, parse_time
from wisp import AnswerReport, DecidedCall
from wisp._render import decided_line
from wisp._text import one_line
from wisp.kinds import view
from wisp.relay.protocol import (
    Answered,
    AnswerLine,
    ApprovalLine,
    Decided,
    ErrorCode,
    ErrorLine,
    Server,
    Winner,
    Withdrawal,
    Withdrawn,
    echoed,
)
from wisp.relay.protocol import binding_fields as protocol_binding_fields


def error_line(
    code: ErrorCode,
    message: str,
    *,
    request_id: str | None = None,
    kind: Kind | None = None,
    allowed: tuple[str, ...] | None = None,
    fatal: bool = False,
) -> ErrorLine:
    """An `error` line; it names the request only by an id short enough to be one."""
    return ErrorLine(
        error=code,
        message=message,
        id=echoed(request_id),
        kind=kind,
        allowed=allowed,
        fatal=fatal,
    )


def binding_fields(request: Request) -> dict[str, object]:
    """The binding's own fields, camelCase (never the unknown keys a file carried: they could
    name a protocol field such as `type`), each of them, in its record's order: one a record
    leaves out when unset (a command's `options`) is sent as null."""
    fields = known_json(request.binding)
    return {key: fields.get(key) for key, _ in protocol_binding_fields(request.kind)}


def approval_line(status: Status, differs: tuple[tuple[str, str], ...] = ()) -> ApprovalLine:
    """A request the front end may answer: its fields, its state, who asks (and, for a fact,
    the kept facts it would contradict: *differs*)."""
    request = status.request
    server = request.server
    return ApprovalLine(
        kind=request.kind,
        id=request.id,
        state=status.state,
        title=request.title,
        body=request.body,
        filed_at=request.filed_at,
        expires_at=request.expires_at,
        server=Server(
            id=server.id,
            pid=server.pid,
            client=server.client,
            thread=server.thread,
            entry_point=server.entry_point,
            alive=status.server_alive,
        ),
        fields=binding_fields(request),
        differs=differs,
    )


def why_gone(status: Status | None) -> tuple[Withdrawal, str]:
    """Why a request the front end was sent can no longer be answered: (state, reason)."""
    if status is None:
        return Withdrawal.REMOVED, "it was removed from the channel"
    answer = status.answer
    if status.state is State.ANSWERED and answer is not None:
        said = answered(status.kind, answer)
        return Withdrawal.ANSWERED, f"{said} by {answer.user} via {answer.via}"
    if status.state is State.STALE:
        return Withdrawal.STALE, f"stale: {status.reason}" if status.reason else "stale"
    if status.state is State.SETTLED:
        ended = Withdrawal(status.outcome.value) if status.outcome else Withdrawal.SETTLED
        if answer is not None and not answer.is_tombstone:
            said = answered(status.kind, answer)
            return ended, f"{said} by {answer.user} via {answer.via}; ended {ended}"
        detail = f": {status.reason}" if status.reason else ""
        return ended, f"ended {ended}{detail}"
    return Withdrawal(status.state.value), status.state.value


def answered(kind: Kind, answer: Answer) -> str:
    """An answer as its kind's view words it (`approved once`, `kept`), a question's with
    what was answered (`answered "staging"`), never the bare decision (`answered answer`)."""
    said = view(kind).answered_word(answer.decision)
    if answer.text is not None:
        said += f' "{one_line(answer.text, 60)}"'
    return said


def winner_of(answer: Answer) -> Winner:
    """An answer as `answered` and `withdrawn` lines show it."""
    return Winner(
        decision=answer.decision,
        via=answer.via,
        user=answer.user,
        answered_at=answer.answered_at,
        text=answer.text,
    )


def withdrawn_line(request_id: str, status: Status | None) -> Withdrawn:
    state, reason = why_gone(status)
    answer = status.answer if status is not None else None
    winner = winner_of(answer) if answer is not None and not answer.is_tombstone else None
    return Withdrawn(id=request_id, state=state, reason=reason, answer=winner)


def undeclared_line(request_id: str, kind: Kind) -> Withdrawn:
    """A request sent before a late hello that left its kind out."""
    return Withdrawn(
        id=request_id,
        state=Withdrawal.UNDECLARED,
        reason=f"the hello did not declare {effect_of(kind)}",
    )


def answered_line(line: AnswerLine, kind: Kind, report: AnswerReport) -> Answered:
    settled = report.settled
    return Answered(
        id=line.id,
        kind=kind,
        decision=line.decision,
        text=line.text,
        won=report.won,
        answer=winner_of(report.answer),
        outcome=settled.outcome if settled is not None else None,
        result=settled.result if settled is not None else None,
        reason=settled.reason if settled is not None else None,
        asker=report.asker,
        applied=report.applied,
        apply_error=report.apply_error,
    )


def effect_of(kind: Kind) -> str:
    """The effect that carries *kind*, quoted as messages name it."""
    return f"`{view(kind).effect}`"


def decided_of(call: DecidedCall) -> Decided:
    """A `decided` line: a call decided without asking, as its audit record says it, with
    its words as `wisp pending watch` says them (this machine's home as `~`)."""
    try:
        ts = parse_time(call.ts)
    except ValueError:
        ts = None
    found = call.record.get("input")
    return Decided(
        ts=ts,
        verdict=call.verdict,
        decider=call.decider,
        said=decided_line(dict(call.record)),
        rule=call.text("rule"),
        grant=call.text("grant"),
        scope=call.text("scope"),
        harness=call.text("harness"),
        tool=call.text("tool"),
        command=call.text("command"),
        input=dict(found) if isinstance(found, dict) else None,
        cwd=call.text("cwd"),
        project=call.text("project"),
    )
