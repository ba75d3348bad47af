"""How the CLI shows requests: JSON shapes for scripts, rows for people."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pending import (
    CommandBinding,
    FactBinding,
    QuestionBinding,
    Request,
    State,
    Status,
    format_time,
    to_json,
)
from wisp._text import one_line


def status_json(status: Status) -> dict[str, Any]:
    """One request as `wisp pending --json` prints it (documented in docs/cli.md)."""
    request = status.request
    server = to_json(request.server)
    server["alive"] = status.server_alive
    answer = status.answer
    settled = status.settled
    return {
        "id": status.id,
        "kind": status.kind.value,
        "state": status.state.value,
        "outcome": status.outcome.value if status.outcome else None,
        "reason": status.reason,
        "filedAt": format_time(request.filed_at),
        "expiresAt": format_time(request.expires_at) if request.expires_at else None,
        "title": request.title,
        "body": request.body,
        "binding": to_json(request.binding),
        "server": server,
        "answer": None
        if answer is None
        else {
            "decision": answer.decision,
            "text": answer.text,
            "reason": answer.reason,
            "via": answer.via,
            "user": answer.user,
            "pid": answer.pid,
            "answeredAt": format_time(answer.answered_at),
        },
        "settled": None if settled is None else to_json(settled),
    }


def asked(request: Request, limit: int = 60) -> str:
    """What is asked, in one visible line."""
    binding = request.binding
    if isinstance(binding, CommandBinding):
        text = binding.command
    elif isinstance(binding, FactBinding):
        text = f"{binding.subject} {binding.name} = {binding.value}"
    elif isinstance(binding, QuestionBinding):
        text = binding.question
    else:  # pragma: no cover - the binding types are closed
        text = request.body
    return one_line(text, limit)


def who(request: Request) -> str:
    server = request.server
    parts = [one_line(server.client or server.entry_point or "?", 20), f"pid {server.pid}"]
    return " ".join(parts)


def age(moment: datetime, now: datetime) -> str:
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def state_text(status: Status) -> str:
    if status.state is State.SETTLED and status.outcome is not None:
        decision = ""
        if status.settled is not None and status.settled.decision:
            decision = f" {status.settled.decision}"
        return f"{status.outcome.value}{decision}"
    if status.state is State.ANSWERED and status.answer is not None:
        return f"answered {status.answer.decision}"
    return status.state.value


def transition_json(
    event: str, status: Status | None, *, request_id: str, kind: str, ts: datetime
) -> dict[str, Any]:
    """One line of `wisp pending watch --json` (documented in docs/cli.md)."""
    base: dict[str, Any] = {"event": event, "id": request_id, "kind": kind, "ts": format_time(ts)}
    if status is None:
        base["state"] = None
        return base
    return {**base, **status_json(status)}


def transition_line(
    event: str, status: Status | None, *, request_id: str, kind: str, ts: datetime
) -> str:
    """One line of `wisp pending watch` for people."""
    clock = ts.astimezone().strftime("%H:%M:%S")
    if status is None:
        return f"{clock}  {event:<11}  {request_id}  {kind}"
    detail = state_text(status) if event == "settled" else ""
    if status.answer is not None and event == "answered":
        answer = status.answer
        detail = f"{answer.decision} by {one_line(answer.user, 20)} via {answer.via}"
    if status.reason and event in ("stale", "settled"):
        detail += f" ({one_line(status.reason, 60)})"
    line = f"{clock}  {event:<11}  {request_id}  {kind:<8}  {asked(status.request)}"
    line += f"  [{who(status.request)}]"
    return f"{line}  {detail}".rstrip()
