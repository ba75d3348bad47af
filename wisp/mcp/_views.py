"""What the MCP server tells its caller: structured results and their text, from the
application's records. Plain functions of records; no SDK, no I/O.

Every tool result carries `structuredContent` (for programs) and the same in words (for the
model). Field names are camelCase, as in the channel's files.
"""

from __future__ import annotations

from typing import Any, Protocol

from pending import Kind, Outcome, Request, State, Status, format_time
from wisp._facts import Fact

WAITING = (State.FILED, State.ANSWERED, State.HANDED_OVER)

# How a person answers each kind from a terminal (named in texts and results).
ANSWER_HINTS = {
    Kind.COMMAND: "wisp approvals approve {id} (or: wisp approvals deny {id})",
    Kind.FACT: "wisp facts keep {id} (or: wisp facts drop {id})",
    Kind.QUESTION: "wisp questions answer {id} TEXT (or: wisp questions decline {id})",
}


def answer_hint(kind: Kind, request_id: str) -> str:
    return ANSWER_HINTS[kind].format(id=request_id)


def request_outcome(status: Status) -> dict[str, Any]:
    """A request's standing in the caller's words: `pending` while it waits (even answered,
    until the answer is applied), then how it ended. For a fact: `kept` (with the permanent
    fact's id), `dropped`, `failed` (with why), `withdrawn`, `timed-out` or `stale`."""
    view: dict[str, Any] = {"id": status.id, "kind": status.kind.value}
    if status.state in WAITING:
        view["state"] = "pending"
        view["channelState"] = status.state.value
        view["answer"] = answer_hint(status.kind, status.id)
        return view
    if status.state is State.STALE:
        view["state"] = "stale"
        view["reason"] = status.reason
        return view
    settled = status.settled
    outcome = settled.outcome if settled is not None else status.outcome
    decision = settled.decision if settled is not None else None
    if outcome is Outcome.ANSWERED and status.kind is Kind.FACT:
        view["state"] = "kept" if decision == "keep" else "dropped"
        if decision == "keep" and settled is not None:
            view["permanent"] = settled.result
    else:
        view["state"] = outcome.value if outcome is not None else status.state.value
        view["decision"] = decision
    if settled is not None and settled.reason:
        view["reason"] = settled.reason
    answer = status.answer
    if answer is not None and not answer.is_tombstone:
        view["answeredBy"] = answer.user
        view["via"] = answer.via
        view["answeredAt"] = format_time(answer.answered_at)
    return view


def pending_entry(status: Status) -> dict[str, Any]:
    """One of this server's waiting requests, for `wisp://pending`."""
    request = status.request
    return {
        "id": request.id,
        "kind": request.kind.value,
        "state": status.state.value,
        "title": request.title,
        "body": request.body,
        "filedAt": format_time(request.filed_at),
        "expiresAt": format_time(request.expires_at) if request.expires_at else None,
        "thread": request.server.thread,
        "answer": answer_hint(request.kind, request.id),
    }


def permanent_fact(fact: Fact) -> dict[str, Any]:
    return {**fact.to_json(), "scope": "permanent"}


class _Said(Protocol):
    @property
    def subject(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str: ...


def fact_said(fact: _Said) -> str:
    """A fact as one says it: `release codename = BLUE HERON`."""
    return f"{fact.subject} {fact.name} = {fact.value}"


def filed_at(request: Request) -> str:
    return format_time(request.filed_at)
