"""What the MCP server tells its caller: structured results and their text, from the
application's records. Plain functions of records; no SDK, no I/O.

Every tool result carries `structuredContent` (for programs) and the same in words (for the
model). Field names are camelCase, as in the channel's files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from pending import (
    Answer,
    CommandBinding,
    Decision,
    Kind,
    Outcome,
    Request,
    Scope,
    State,
    Status,
    format_time,
)
from wisp import (
    PERMANENT_PREFIX,
    WAITING,
    Approval,
    Ending,
    Fact,
    FactScope,
    NoteFact,
    NotOurs,
    PermissionVerdict,
    Reply,
    ReplyOutcome,
    UnknownFact,
)
from wisp.kinds import view as kind_view
from wisp.mcp._updates import PROPOSED_URI, fact_uri

Rendered = tuple[str, dict[str, Any]]  # the words for the model, and the structured content

# How a person answers each kind from a terminal (named in texts and results).


def answer_hint(kind: Kind, request_id: str) -> str:
    return kind_view(kind).answer_hint(request_id)


def refusal_text(exc: Exception) -> str:
    """A refusal's words, with where the caller finds what it can use instead."""
    if isinstance(exc, NotOurs):
        return f"{exc} wisp://pending lists the ones that wait."
    if isinstance(exc, UnknownFact):
        if exc.fact_id.startswith(PERMANENT_PREFIX):
            return f"{exc} wisp://facts/permanent lists them."
        return (
            f"{exc} Facts this thread can use are listed at wisp://facts/proposed and in "
            "record_fact's results."
        )
    return str(exc)


def request_outcome(status: Status) -> dict[str, Any]:
    """A request's standing in the caller's words: `pending` while it waits (even answered,
    until the answer is applied), then how it ended. For a fact: `kept` (with the permanent
    fact's id), `dropped`, `failed` (with why), `withdrawn`, `timed-out` or `stale`."""
    view: dict[str, Any] = {"id": status.id, "kind": status.kind.value}
    if status.state in WAITING:
        view["state"] = "pending"
        view["channelState"] = status.state.value
        view["answerWith"] = answer_hint(status.kind, status.id)
        return view
    if status.state is State.STALE:
        view["state"] = "stale"
        view["reason"] = status.reason
        return view
    settled = status.settled
    outcome = settled.outcome if settled is not None else status.outcome
    decision = settled.decision if settled is not None else None
    if outcome is Outcome.ANSWERED and status.kind is Kind.FACT:
        view["state"] = "kept" if decision == Decision.KEEP else "dropped"
        if decision == Decision.KEEP and settled is not None:
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
        "answerWith": answer_hint(request.kind, request.id),
    }


def note_fact(note: NoteFact, held: list[Fact]) -> dict[str, Any]:
    """A thread's or the session's fact, as record_fact returns it and its resources show it:
    with its URI and, where the person's permanent facts say otherwise (*held*), `conflict`."""
    view: dict[str, Any] = {**note.to_json(), "uri": fact_uri(note.id)}
    if held:
        view["conflict"] = [permanent_fact(p) for p in held]
    return view


def facts_proposed(proposed: Iterable[NoteFact], thread: str) -> dict[str, Any]:
    """ADR 0048's `factsProposed`: how many facts wait for the person to keep them — `count`
    for the server (its session's and its threads'), `thread` for *thread*'s own — and `uri`,
    where they are listed."""
    facts = list(proposed)
    in_thread = sum(1 for f in facts if f.scope is FactScope.THREAD and f.thread == thread)
    return {"count": len(facts), "thread": in_thread, "uri": PROPOSED_URI}


def proposed_said(counts: Mapping[str, Any]) -> str:
    """`factsProposed` in words, for the model to mention: nothing when none waits."""
    count = counts["count"]
    if not count:
        return ""
    return (
        f". {count} proposed fact{'' if count == 1 else 's'} ({counts['thread']} of this "
        f"thread's) wait for the person to keep or drop: {counts['uri']}"
    )


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


def already_kept(fact: NoteFact, kept: Fact, uri: str) -> Rendered:
    """Asked to keep a fact the person already keeps: nothing is asked."""
    data = {"state": "kept", "fact": fact.id, "permanent": kept.id, "uri": uri, "request": None}
    text = f"{fact_said(fact)} is already the person's permanent fact {kept.id}; nothing to ask."
    return text, data


def asked_to_keep(fact: NoteFact, request_id: str, uri: str, *, new: bool) -> Rendered:
    """The person is asked to keep a fact (or already was: the same request)."""
    data = {
        "state": "pending",
        "id": request_id,
        "request": request_id,
        "fact": fact.id,
        "uri": uri,
        "new": new,
    }
    again = "" if new else " (already asked: the same request, no new notification)"
    text = (
        f"asked the person to keep {fact_said(fact)} as a permanent fact{again}. "
        f"Request {request_id} waits with no time limit; they answer with "
        f"{kind_view(Kind.FACT).how_to_answer(request_id)} "
        f"from a terminal, or in wisp-tui. The outcome shows at {uri} (request)."
    )
    return text, data


# --- commands and questions ------------------------------------------------------------------


def _who(answer: Answer | None) -> dict[str, Any]:
    """Who answered, and how: none for an ending nobody gave (a time-out, a withdrawal)."""
    if answer is None or answer.is_tombstone:
        return {"answeredBy": None, "via": None, "answeredAt": None}
    return {
        "answeredBy": answer.user,
        "via": answer.via,
        "answeredAt": format_time(answer.answered_at),
    }


def _by(answer: Answer | None) -> str:
    if answer is None or answer.is_tombstone:
        return ""
    return f" by {answer.user} (via {answer.via})"


def still_waiting(request: Request) -> Rendered:
    """A request the call stopped waiting for: it waits on, to be awaited again."""
    hint = answer_hint(request.kind, request.id)
    expires = format_time(request.expires_at) if request.expires_at else None
    data: dict[str, Any] = {
        "id": request.id,
        "kind": request.kind.value,
        "state": "pending",
        "outcome": None,
        "decision": None,
        "scope": None,
        **_who(None),
        "expiresAt": expires,
        "answerWith": hint,
    }
    text = (
        f"still waiting for the person (request {request.id}); they answer with `{hint}`. "
        f"Call await_request with id {request.id} to wait again."
    )
    # The fields an ended result fills, here too (null until it ends; a command's `command`
    # as asked): one shape for a program to read, pending or ended.
    data["reason"] = None
    if request.kind is Kind.COMMAND:
        assert isinstance(request.binding, CommandBinding)
        data.update(approved=False, grant=None, command=request.binding.command)
        text += " Do not run the command until it is approved."
    elif request.kind is Kind.QUESTION:
        data["answer"] = None
    if expires:
        ends = "denied" if request.kind is Kind.COMMAND else "unanswered"
        text += f" If nobody answers by {expires} it ends {ends}."
    return text, data


def granted(approval: Approval, command: str) -> Rendered:
    """A standing grant approved the command at once: nobody was asked."""
    grant = approval.grant
    assert grant is not None
    data = {
        "id": None,
        "kind": Kind.COMMAND.value,
        "state": "ended",
        "approved": True,
        "outcome": "granted",
        "decision": approval.scope,
        "scope": approval.scope,
        "grant": grant.id,
        "answeredBy": grant.user,
        "via": "grant",
        "answeredAt": format_time(grant.granted_at),
        "command": command,
    }
    text = (
        f"approved at once by a standing {approval.scope} grant ({grant.id}, from request "
        f"{grant.request} answered by {grant.user}): you may run {command}"
    )
    return text, data


def permission(verdict: PermissionVerdict, tool_input: Mapping[str, Any]) -> Rendered:
    """A permission prompt's answer: its text is the JSON Claude Code reads, `allow` with
    the input unchanged, or `deny` with why (who decided, how and when, or why nobody did)."""
    decision: dict[str, Any] = (
        {"behavior": "allow", "updatedInput": dict(tool_input)}
        if verdict.allowed
        else {"behavior": "deny", "message": verdict.message}
    )
    data = {**decision, "id": verdict.request_id, "reason": verdict.message}
    return json.dumps(decision, ensure_ascii=False), data


def approval(ending: Ending, verdict: Approval) -> Rendered:
    """An ended command request: approved (with its scope), or why not."""
    binding = ending.request.binding
    assert isinstance(binding, CommandBinding)
    answer = ending.answer
    data: dict[str, Any] = {
        "id": ending.request.id,
        "kind": Kind.COMMAND.value,
        "state": "ended",
        "approved": verdict.approved,
        "outcome": verdict.outcome,
        "decision": ending.decision,
        "scope": verdict.scope,
        "grant": verdict.grant.id if verdict.grant and verdict.grant.stored else None,
        "reason": verdict.reason,
        **_who(answer),
        "command": binding.command,
    }
    if verdict.approved:
        text = f"approved ({verdict.scope}){_by(answer)}: you may run {binding.command}"
        if verdict.scope in (Scope.SESSION, Scope.PROJECT, Scope.ALWAYS):
            text += f". Asked again, it is approved at once ({verdict.scope} grant)"
        if verdict.reason:
            text += f". Note: {verdict.reason}"
        return text, data
    if ending.decision == Decision.NO:
        why = f": {verdict.reason}" if verdict.reason else ""
        return f"denied{_by(answer)}{why}. Do not run it.", data
    if ending.outcome is Outcome.TIMED_OUT:
        return (
            "nobody answered before the request's time limit, so it is denied: no answer is "
            "never a yes. Do not run it.",
            data,
        )
    why = f" ({verdict.reason})" if verdict.reason else ""
    return f"not approved: the request ended {verdict.outcome}{why}. Do not run it.", data


def reply(ending: Ending, answer_to: Reply) -> Rendered:
    """An ended question: the person's answer, their declining, or why there is none."""
    answer = ending.answer
    data: dict[str, Any] = {
        "id": ending.request.id,
        "kind": Kind.QUESTION.value,
        "state": "ended",
        "outcome": answer_to.outcome,
        "decision": ending.decision,
        "scope": None,
        "answer": answer_to.text,
        "reason": answer_to.reason,
        **_who(answer),
    }
    if answer_to.outcome is ReplyOutcome.ANSWERED:
        return f"the person answered{_by(answer)}: {answer_to.text}", data
    if answer_to.outcome is ReplyOutcome.DECLINED:
        return f"the person declined to answer{_by(answer)}.", data
    why = f" ({answer_to.reason})" if answer_to.reason else ""
    return f"no answer: the question ended {answer_to.outcome}{why}.", data
