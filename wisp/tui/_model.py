"""What the TUI knows, read from relay lines (pure: no I/O, no textual).

A relay may be on another machine (``ssh HOST wisp relay``), so its lines are read by the
protocol's strict decoder (:func:`wisp.relay.protocol.decode_relay`): a line that does not
fit is skipped with the decoder's reason, and every text that came from a request is shown
through :func:`wisp._text.visible` by the functions here, never raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from pending import KINDS, Decision, Kind, Outcome, State, format_time
from wisp import AnswerFate
from wisp._render import age as render_age
from wisp._text import one_line, visible
from wisp.relay.protocol import (
    ANSWERABLE,
    Answered,
    ApprovalLine,
    ErrorLine,
    HistoryReply,
    Notify,
    Ready,
    RelayLine,
    Server,
    UnknownType,
    Winner,
    Withdrawn,
    decode_relay,
)

LOCAL = "local"  # the host label of the relay on this machine


@attrs.frozen(kw_only=True)
class Waiting:
    """A request the person may answer, as *host*'s relay sent it; ``state`` is the TUI's
    view of it (as sent, or `stale` once its asker is gone)."""

    host: str
    line: ApprovalLine
    state: State

    @property
    def id(self) -> str:
        return self.line.id

    @property
    def kind(self) -> Kind:
        return self.line.kind

    @property
    def fields(self) -> Mapping[str, Any]:
        return self.line.fields

    @property
    def asker(self) -> Server:
        return self.line.server

    @property
    def filed_at(self) -> datetime | None:
        return self.line.filed_at

    @property
    def expires_at(self) -> datetime | None:
        return self.line.expires_at

    @property
    def options(self) -> tuple[str, ...]:
        return self.line.options

    @property
    def free_text(self) -> bool:
        return self.line.free_text

    @property
    def key(self) -> str:
        return row_key(self.host, self.id)

    @property
    def asker_key(self) -> str:
        """One asker across hosts: its host and server id."""
        return f"{self.host}/{self.asker.id}"

    @property
    def answerable(self) -> bool:
        return self.state in ANSWERABLE


Message = Waiting | Withdrawn | Answered | ErrorLine | Notify | Ready | HistoryReply


def row_key(host: str, request_id: str) -> str:
    return f"{host}/{request_id}"


def read_relay_line(host: str, data: bytes) -> Message | None:
    """One line from *host*'s relay; None for a type this TUI does not know (a newer relay's
    additions are ignored); :class:`wisp.relay.protocol.LineError` for one it cannot use."""
    try:
        line: RelayLine = decode_relay(data)
    except UnknownType as exc:
        if exc.type is not None:
            return None
        raise
    if isinstance(line, ApprovalLine):
        return Waiting(host=host, line=line, state=line.state)
    return line


def describe(winner: Winner) -> str:
    """Who holds a slot, for people: `no by bob via cli at …`."""
    when = f" at {format_time(winner.answered_at)}" if winner.answered_at else ""
    user = one_line(winner.user or "?", 32)
    return f"{visible(winner.decision)} by {user} via {visible(winner.via or '?')}{when}"


# --- showing -----------------------------------------------------------------------------


def asked(item: Waiting) -> str:
    """What is asked, whole, with every hidden character made visible (never cut)."""
    fields = item.fields
    if item.kind is Kind.COMMAND:
        return visible(fields["command"])
    if item.kind is Kind.FACT:
        return visible(f"{fields['subject']} {fields['name']} = {fields['value']}")
    return visible(fields["question"])


def who(item: Waiting, *, short: bool = False) -> str:
    """Who asks: the asking program and its pid (`short`: without the word, for the table)."""
    asker = item.asker
    name = one_line(asker.client or asker.entry_point or "?", 20)
    if asker.pid is None:
        return name
    return f"{name} {asker.pid}" if short else f"{name} pid {asker.pid}"


def age(moment: datetime | None, now: datetime) -> str:
    """How long ago, as every listing says it (`4s`, `3m`, `2h`, `5d`); `?` when unknown."""
    return "?" if moment is None else render_age(moment, now)


def detail(item: Waiting, now: datetime) -> list[tuple[str, str]]:
    """The whole request, label and text, every text visible and nothing cut."""
    fields = item.fields
    rows: list[tuple[str, str]] = []
    if item.kind is Kind.COMMAND:
        rows.append(("command", visible(fields["command"])))
        rows.append(("in", visible(fields["cwd"])))
        if fields.get("reason"):
            rows.append(("reason", visible(fields["reason"])))
    elif item.kind is Kind.FACT:
        rows.append(("fact", visible(f"{fields['subject']} {fields['name']}")))
        rows.append(("value", visible(fields["value"])))
        if fields.get("source"):
            rows.append(("source", visible(fields["source"])))
        if fields.get("proposedBy"):
            rows.append(("proposed", visible(fields["proposedBy"])))
    else:
        rows.append(("question", visible(fields["question"])))
        if item.options:
            rows.append(("options", " | ".join(visible(o) for o in item.options)))
            rows.append(("free text", "also taken" if item.free_text else "not taken"))
    asker = item.asker
    by = who(item)
    if asker.thread:
        by += f", thread {visible(asker.thread)}"
    if asker.alive is False:
        by += " (stopped)"
    rows.append(("asked by", by))
    rows.append(("host", visible(item.host)))
    when = age(item.filed_at, now) + " ago"
    if item.expires_at is not None:
        left = int((item.expires_at - now).total_seconds())
        when += f", expires in {left}s" if left > 0 else ", past its deadline"
    else:
        when += ", no deadline"
    rows.append(("filed", when))
    rows.append(("state", item.state.value))
    rows.append(("id", item.id))
    return rows


# How each kind's answers read to the person (per-kind words: the kinds package will own them).
_ANSWER_WORDS: dict[Decision, str] = {
    Decision.KEEP: "kept",
    Decision.DROP: "dropped",
    Decision.ANSWER: "answered",
    Decision.DECLINE: "declined",
}


def answer_word(kind: Kind, decision: Decision) -> str:
    """How an answer reads to the person: `approved once`, `denied`, `kept`, …"""
    if kind is Kind.COMMAND:
        return "denied" if decision is Decision.NO else f"approved {decision.value}"
    return _ANSWER_WORDS.get(decision, decision.value)


def report(item: Waiting | None, message: Answered) -> str:
    """The status line after the relay reports on an answer this TUI gave."""
    kind = item.kind if item is not None else None
    if not message.won:
        winner = describe(message.answer) if message.answer else "someone else"
        return f"{message.id}: too late, already answered {winner}"
    said = answer_word(kind, message.decision) if kind else message.decision.value
    if message.text is not None and message.decision is Decision.ANSWER:
        said += f' "{one_line(message.text, 40)}"'
    head = f"{said} ({message.id})"
    if message.outcome is not None and message.outcome is not Outcome.ANSWERED:
        why = f": {one_line(message.reason, 80)}" if message.reason else ""
        return f"{head}, but it ended {message.outcome.value}{why}"
    if message.result:
        head += f" as {visible(message.result)}"
    if message.applied:
        return f"{head}; applied here (its asker had stopped)"
    if message.asker is AnswerFate.GONE:
        return f"{head}; no asker is watching, nothing will act on it"
    if message.asker is AnswerFate.LATE:
        return f"{head}; the asker has not picked it up yet"
    return f"{head}; the asker has it"


def decisions_of(kind: Kind) -> tuple[str, ...]:
    return tuple(KINDS[kind].decisions)
