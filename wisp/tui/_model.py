"""What the TUI knows, read from relay lines (pure: no I/O, no textual).

A relay may be on another machine (``ssh HOST wisp relay``), so its lines are read as
defensively as the channel reads its files: each field is type-checked, a line that does not
fit is skipped with a reason, and every text that came from a request is shown through
:func:`wisp._text.visible` by the functions here, never raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from pending import KINDS, Decision, DecodeError, Kind, is_valid_id, loads_strict, parse_time
from wisp._render import age as render_age
from wisp._text import one_line, visible

LOCAL = "local"  # the host label of the relay on this machine


class BadLine(ValueError):
    """A relay line the TUI will not act on; the message says why."""


@attrs.frozen(kw_only=True)
class Asker:
    """Who asks: the server that filed a request."""

    id: str
    pid: int | None
    client: str | None
    thread: str | None
    entry_point: str | None
    alive: bool | None


@attrs.frozen(kw_only=True)
class Waiting:
    """A request the person may answer, as a relay sent it."""

    host: str
    id: str
    kind: Kind
    state: str  # filed | handed-over (or `stale`, `answering…` as the TUI marks it)
    title: str
    body: str
    filed_at: datetime | None
    expires_at: datetime | None
    fields: Mapping[str, Any]  # the binding's fields (command, cwd, … / subject, … / question, …)
    asker: Asker

    @property
    def key(self) -> str:
        return row_key(self.host, self.id)

    @property
    def asker_key(self) -> str:
        """One asker across hosts: its host and server id."""
        return f"{self.host}/{self.asker.id}"

    @property
    def options(self) -> tuple[str, ...]:
        found = self.fields.get("options")
        return tuple(found) if isinstance(found, list) else ()

    @property
    def free_text(self) -> bool:
        """Whether any text is an answer: as the relay says, and always for a question with
        no options (a line with neither — an old or hostile relay's — still takes text)."""
        return self.fields.get("freeText") is True or not self.options

    @property
    def answerable(self) -> bool:
        return self.state in ("filed", "handed-over")


@attrs.frozen(kw_only=True)
class Winner:
    """The answer that holds a request's slot."""

    decision: str
    via: str
    user: str
    answered_at: str | None

    def describe(self) -> str:
        when = f" at {visible(self.answered_at)}" if self.answered_at else ""
        return (
            f"{visible(self.decision)} by {one_line(self.user, 32)} via {visible(self.via)}{when}"
        )


@attrs.frozen(kw_only=True)
class Gone:
    """A request sent earlier that can no longer be answered here."""

    id: str
    state: str
    reason: str
    answer: Winner | None


@attrs.frozen(kw_only=True)
class Answered:
    """The relay's report on an answer this TUI gave."""

    id: str
    won: bool
    decision: str
    answer: Winner | None
    outcome: str | None
    result: str | None
    reason: str | None
    asker: str | None
    applied: bool
    text: str | None = None


@attrs.frozen(kw_only=True)
class RelayError:
    code: str
    message: str
    id: str | None
    fatal: bool


@attrs.frozen(kw_only=True)
class Notice:
    title: str
    subtitle: str
    body: str


@attrs.frozen(kw_only=True)
class Ready:
    effects: tuple[str, ...]
    hostname: str | None
    version: str | None
    waiting: int


@attrs.frozen(kw_only=True)
class Ended:
    """One line of the history view: a request that ended, from the relay's audit log."""

    ts: str
    id: str
    kind: str
    outcome: str
    decision: str | None
    asked: str
    by: str | None


@attrs.frozen(kw_only=True)
class History:
    entries: tuple[Ended, ...]


Message = Waiting | Gone | Answered | RelayError | Notice | Ready | History


def row_key(host: str, request_id: str) -> str:
    return f"{host}/{request_id}"


# --- reading lines -----------------------------------------------------------------------


def _str(value: Mapping[str, Any], key: str, *, default: str | None = None) -> str:
    found = value.get(key, default)
    if not isinstance(found, str):
        raise BadLine(f"`{key}` is not a string")
    return found


def _opt_str(value: Mapping[str, Any], key: str) -> str | None:
    found = value.get(key)
    if found is None:
        return None
    if not isinstance(found, str):
        raise BadLine(f"`{key}` is not a string")
    return found


def _time(value: Mapping[str, Any], key: str) -> datetime | None:
    text = _opt_str(value, key)
    if text is None:
        return None
    try:
        return parse_time(text)
    except (ValueError, DecodeError):
        raise BadLine(f"`{key}` is not a time") from None


def _id(value: Mapping[str, Any]) -> str:
    found = _str(value, "id")
    if not is_valid_id(found):
        raise BadLine("`id` is not a request ID")
    return found


def _winner(value: Any) -> Winner | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadLine("`answer` is not an object")
    return Winner(
        decision=_str(value, "decision"),
        via=_str(value, "via", default="?"),
        user=_str(value, "user", default="?"),
        answered_at=_opt_str(value, "answeredAt"),
    )


_BINDING_KEYS: dict[Kind, tuple[str, ...]] = {
    Kind.COMMAND: ("command", "cwd", "thread", "reason"),
    Kind.FACT: ("factId", "subject", "name", "value", "source", "proposedBy"),
    Kind.QUESTION: ("question", "options", "freeText"),
}
_REQUIRED: dict[Kind, tuple[str, ...]] = {
    Kind.COMMAND: ("command", "cwd"),
    Kind.FACT: ("subject", "name", "value"),
    Kind.QUESTION: ("question",),
}


def _approval(host: str, value: Mapping[str, Any]) -> Waiting:
    try:
        kind = Kind(_str(value, "kind", default="command"))  # 0.16.0 relays sent no kind
    except ValueError:
        raise BadLine("`kind` is not one this TUI knows") from None
    fields: dict[str, Any] = {}
    for key in _BINDING_KEYS[kind]:
        found = value.get(key)
        if key == "options":
            if found is not None and (
                not isinstance(found, list) or not all(isinstance(o, str) for o in found)
            ):
                raise BadLine("`options` is not a list of strings")
        elif key == "freeText":
            if found is not None and not isinstance(found, bool):
                raise BadLine("`freeText` is not true or false")
        elif found is not None and not isinstance(found, str):
            raise BadLine(f"`{key}` is not a string")
        if found is None and key in _REQUIRED[kind]:
            raise BadLine(f"a {kind.value} request needs `{key}`")
        fields[key] = found
    server = value.get("server", {})
    if not isinstance(server, dict):
        raise BadLine("`server` is not an object")
    pid = server.get("pid")
    alive = server.get("alive")
    asker = Asker(
        id=_opt_str(server, "id") or "?",
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        client=_opt_str(server, "client"),
        thread=_opt_str(server, "thread"),
        entry_point=_opt_str(server, "entryPoint"),
        alive=alive if isinstance(alive, bool) else None,
    )
    return Waiting(
        host=host,
        id=_id(value),
        kind=kind,
        state=_str(value, "state", default="filed"),
        title=_str(value, "title", default=""),
        body=_str(value, "body", default=""),
        filed_at=_time(value, "filedAt"),
        expires_at=_time(value, "expiresAt"),
        fields=fields,
        asker=asker,
    )


def _history(value: Mapping[str, Any]) -> History:
    entries = value.get("entries")
    if not isinstance(entries, list):
        raise BadLine("`entries` is not a list")
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise BadLine("a history entry is not an object")
        out.append(
            Ended(
                ts=_str(entry, "ts", default=""),
                id=_str(entry, "id", default="?"),
                kind=_str(entry, "kind", default="?"),
                outcome=_str(entry, "outcome", default="?"),
                decision=_opt_str(entry, "decision"),
                asked=_str(entry, "asked", default=""),
                by=_opt_str(entry, "by"),
            )
        )
    return History(entries=tuple(out))


def parse_relay_line(host: str, data: bytes) -> Message | None:
    """One line from *host*'s relay; None for a type this TUI does not know (a newer relay's
    additions are ignored); :class:`BadLine` for one it cannot use."""
    try:
        value = loads_strict(data)
    except DecodeError as exc:
        raise BadLine(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise BadLine("not a JSON object")
    kind = value.get("type")
    if kind == "approval":
        return _approval(host, value)
    if kind == "withdrawn":
        return Gone(
            id=_id(value),
            state=_str(value, "state", default="withdrawn"),
            reason=_str(value, "reason", default="withdrawn"),
            answer=_winner(value.get("answer")),
        )
    if kind == "answered":
        won = value.get("won")
        applied = value.get("applied", False)
        if not isinstance(won, bool) or not isinstance(applied, bool):
            raise BadLine("`won` and `applied` must be true or false")
        return Answered(
            id=_id(value),
            won=won,
            decision=_str(value, "decision", default="?"),
            answer=_winner(value.get("answer")),
            outcome=_opt_str(value, "outcome"),
            result=_opt_str(value, "result"),
            reason=_opt_str(value, "reason"),
            asker=_opt_str(value, "asker"),
            applied=applied,
            text=_opt_str(value, "text"),
        )
    if kind == "error":
        fatal = value.get("fatal", False)
        request_id = value.get("id")
        return RelayError(
            code=_str(value, "error", default="error"),
            message=_str(value, "message", default="the relay reported an error"),
            id=request_id if isinstance(request_id, str) and is_valid_id(request_id) else None,
            fatal=fatal is True,
        )
    if kind == "notify":
        return Notice(
            title=_str(value, "title", default="wisp"),
            subtitle=_str(value, "subtitle", default=""),
            body=_str(value, "body", default=""),
        )
    if kind == "ready":
        effects = value.get("effects", [])
        waiting = value.get("waiting", 0)
        if not isinstance(effects, list) or not all(isinstance(e, str) for e in effects):
            raise BadLine("`effects` is not a list of strings")
        if not isinstance(waiting, int) or isinstance(waiting, bool):
            raise BadLine("`waiting` is not a number")
        return Ready(
            effects=tuple(effects),
            hostname=_opt_str(value, "hostname"),
            version=_opt_str(value, "version"),
            waiting=waiting,
        )
    if kind == "history":
        return _history(value)
    if isinstance(kind, str):
        return None
    raise BadLine("no `type`")


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
    rows.append(("state", visible(item.state)))
    rows.append(("id", item.id))
    return rows


def answer_word(kind: Kind, decision: str) -> str:
    """How an answer reads to the person: `approved once`, `denied`, `kept`, …"""
    if kind is Kind.COMMAND:
        return "denied" if decision == Decision.NO else f"approved {decision}"
    words = {
        Decision.KEEP.value: "kept",
        Decision.DROP.value: "dropped",
        Decision.ANSWER.value: "answered",
        Decision.DECLINE.value: "declined",
    }
    return words.get(decision, visible(decision))


def report(item: Waiting | None, message: Answered) -> str:
    """The status line after the relay reports on an answer this TUI gave."""
    kind = item.kind if item is not None else None
    if not message.won:
        winner = message.answer.describe() if message.answer else "someone else"
        return f"{message.id}: too late, already answered {winner}"
    said = answer_word(kind, message.decision) if kind else visible(message.decision)
    if message.text is not None:
        said += f' "{one_line(message.text, 40)}"' if message.decision == Decision.ANSWER else ""
    head = f"{said} ({message.id})"
    if message.outcome and message.outcome != "answered":
        why = f": {one_line(message.reason, 80)}" if message.reason else ""
        return f"{head}, but it ended {visible(message.outcome)}{why}"
    if message.result:
        head += f" as {visible(message.result)}"
    if message.applied:
        return f"{head}; applied here (its asker had stopped)"
    if message.asker == "gone":
        return f"{head}; no asker is watching, nothing will act on it"
    if message.asker == "late":
        return f"{head}; the asker has not picked it up yet"
    return f"{head}; the asker has it"


def decisions_of(kind: Kind) -> tuple[str, ...]:
    return tuple(KINDS[kind].decisions)
