"""The relay's JSON-lines protocol (pure: no I/O): reading a front end's lines, shaping ours.

Every line is one JSON object with a ``type``. A front end sends ``hello`` (first, once),
``answer`` and ``history``; the relay sends ``ready``, ``approval``, ``withdrawn``,
``answered``, ``notify``, ``history`` and ``error``. docs/relay.md is the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from pending import (
    APPROVALS,
    Answer,
    DecodeError,
    Kind,
    Request,
    State,
    Status,
    format_time,
    known_json,
    loads_strict,
)

# A line longer than this is refused unread (and skipped up to its newline): no request, answer
# or hello comes near it, and the relay must not hold a hostile front end's megabytes.
MAX_LINE_BYTES = 1 << 20

# What each request-and-answer effect lets a front end be sent (seed ADR 0044, ADR 0048).
EFFECT_KINDS: dict[str, Kind] = {
    "approve-mcp": Kind.COMMAND,
    "keep-facts": Kind.FACT,
    "answer-questions": Kind.QUESTION,
}
NOTIFY = "notify"
EFFECTS = (*EFFECT_KINDS, NOTIFY)
# A front end that sends no hello is a 0.16.0 one: it knows command approvals, nothing more.
NO_HELLO_EFFECTS = frozenset({"approve-mcp"})

# Whom an answer is given as (`via` on the answer file, `entryPoint` in the audit log). A front
# end that draws its own screen over the relay (wisp tui) says so in its hello.
VIA_RELAY = "relay"
VIA_TUI = "tui"
VIAS = (VIA_RELAY, VIA_TUI)

# An `error` line names the request it concerns only when the id is at most this long (a
# valid one is 8-32 characters): a hostile front end's megabyte "id" is not echoed back.
MAX_ID_ECHO = 64

HISTORY_DEFAULT = 50
HISTORY_MAX = 500

# States a front end may still answer in; every other state ends a request for it.
ANSWERABLE = (State.FILED, State.HANDED_OVER)

# Short labels a front end may send for a command answer, beside the decisions themselves.
_COMMAND_ALIASES = {"approve": None, "deny": "no"}


class LineError(Exception):
    """A line the relay will not act on: ``code`` for programs, the message for people."""

    def __init__(self, code: str, message: str, *, request_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id

    def line(self) -> dict[str, Any]:
        return error_line(self.code, str(self), request_id=self.request_id)


@attrs.frozen(kw_only=True)
class Hello:
    """A front end's first line: what it can carry, and who it is."""

    effects: frozenset[str]
    ignored: tuple[str, ...] = ()  # effects this relay does not know, left out
    client: str | None = None
    version: str | None = None
    via: str = VIA_RELAY

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(EFFECT_KINDS[e] for e in self.effects if e in EFFECT_KINDS)

    @property
    def notify(self) -> bool:
        return NOTIFY in self.effects


NO_HELLO = Hello(effects=NO_HELLO_EFFECTS)


@attrs.frozen(kw_only=True)
class AnswerLine:
    """A front end's answer to one request."""

    id: str
    decision: str
    kind: Kind | None = None  # as the front end saw it; None: as the relay sent it
    text: str | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class HistoryLine:
    """A front end asks for what ended lately (from the audit log)."""

    limit: int = HISTORY_DEFAULT


Incoming = Hello | AnswerLine | HistoryLine


@attrs.frozen(kw_only=True)
class TooLong:
    """Stands in the stream where a line over :data:`MAX_LINE_BYTES` was skipped."""

    size: int  # bytes skipped (at least MAX_LINE_BYTES + 1)


class LineSplitter:
    """Bytes in, lines out, holding at most :data:`MAX_LINE_BYTES` of any one line: the rest
    of a longer line is counted and dropped up to its newline, never buffered."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._skipping = 0  # >0: inside a line that was too long, this many bytes so far

    def feed(self, data: bytes) -> list[bytes | TooLong]:
        out: list[bytes | TooLong] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if self._skipping:
                self._skipping += len(piece)
            else:
                self._buffer += piece
                if len(self._buffer) > self._limit:
                    self._skipping = len(self._buffer)
                    self._buffer.clear()
            if end < 0:
                break
            if self._skipping:
                out.append(TooLong(size=self._skipping))
                self._skipping = 0
            else:
                line = bytes(self._buffer).rstrip(b"\r")
                self._buffer.clear()
                if line.strip():
                    out.append(line)
            start = end + 1
        return out

    def end(self) -> list[bytes | TooLong]:
        """At end of input: a last line without its newline still counts."""
        return self.feed(b"\n") if self._buffer or self._skipping else []


def parse_line(data: bytes) -> Incoming:
    """One line from the front end (without its newline), or :class:`LineError`."""
    if len(data) > MAX_LINE_BYTES:
        raise LineError("too-long", f"a line over {MAX_LINE_BYTES} bytes was skipped unread.")
    try:
        value = loads_strict(data)
    except DecodeError as exc:
        raise LineError(
            "bad-json", f"the line is not JSON the relay reads ({exc}); it was ignored."
        ) from None
    if not isinstance(value, dict):
        raise LineError("not-an-object", "each line must be one JSON object with a `type`.")
    kind = value.get("type")
    if kind == "hello":
        return _hello(value)
    if kind == "answer":
        return _answer(value)
    if kind == "history":
        return _history(value)
    shown = kind if isinstance(kind, str) else None
    raise LineError(
        "unknown-type",
        f"unknown line type {shown[:40]!r}; the relay takes hello, answer and history."
        if shown is not None
        else "the line has no string `type`; the relay takes hello, answer and history.",
    )


def _text(value: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    found = value.get(key)
    if found is None and not required:
        return None
    if not isinstance(found, str):
        need = "a string" if required else "a string or null"
        raise LineError("bad-field", f"`{key}` must be {need}.", request_id=_id_of(value))
    return found


def _id_of(value: Mapping[str, Any]) -> str | None:
    found = value.get("id")
    return found if isinstance(found, str) and len(found) <= MAX_ID_ECHO else None


def _hello(value: Mapping[str, Any]) -> Hello:
    effects = value.get("effects", [])
    if not isinstance(effects, list) or not all(isinstance(e, str) for e in effects):
        raise LineError("bad-field", "`effects` must be a list of strings.")
    via = _text(value, "via") or VIA_RELAY
    if via not in VIAS:
        raise LineError("bad-field", f"`via` takes {' or '.join(VIAS)}, not {via[:40]!r}.")
    known = frozenset(e for e in effects if e in EFFECTS)
    ignored = tuple(dict.fromkeys(e[:40] for e in effects if e not in EFFECTS))
    return Hello(
        effects=known,
        ignored=ignored,
        client=_text(value, "client"),
        version=_text(value, "version"),
        via=via,
    )


def _answer(value: Mapping[str, Any]) -> AnswerLine:
    request_id = _text(value, "id", required=True)
    decision = _text(value, "decision", required=True)
    assert request_id is not None and decision is not None
    kind_text = _text(value, "kind")
    kind = None
    if kind_text is not None:
        try:
            kind = Kind(kind_text)
        except ValueError:
            raise LineError(
                "bad-field",
                f"`kind` takes {', '.join(k.value for k in Kind)}, not {kind_text[:40]!r}.",
                request_id=_id_of(value),
            ) from None
    scope = _text(value, "scope")
    if decision in _COMMAND_ALIASES and (kind in (None, Kind.COMMAND)):
        # `approve` with a `scope` (default once) and `deny` read as the decisions they name.
        if decision == "approve":
            scope = scope or "once"
            if scope not in APPROVALS:
                raise LineError(
                    "bad-field",
                    f"`scope` takes {', '.join(APPROVALS)}, not {scope[:40]!r}.",
                    request_id=_id_of(value),
                )
            decision = scope
        else:
            decision = "no"
    elif scope is not None and decision != scope:
        raise LineError(
            "bad-field",
            "`scope` goes with decision `approve` (or equals the decision).",
            request_id=_id_of(value),
        )
    return AnswerLine(
        id=request_id,
        decision=decision,
        kind=kind,
        text=_text(value, "text"),
        reason=_text(value, "reason"),
    )


def _history(value: Mapping[str, Any]) -> HistoryLine:
    limit = value.get("limit", HISTORY_DEFAULT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= HISTORY_MAX:
        raise LineError("bad-field", f"`limit` takes a whole number from 1 to {HISTORY_MAX}.")
    return HistoryLine(limit=limit)


# --- what the relay sends ----------------------------------------------------------------


def error_line(
    code: str, message: str, *, request_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "error", "error": code, "message": message}
    if request_id is not None and len(request_id) <= MAX_ID_ECHO:
        line["id"] = request_id  # a longer one is no ID: never echoed back whole
    line.update({k: v for k, v in extra.items() if v is not None})
    return line


def binding_fields(request: Request) -> dict[str, Any]:
    """The binding's own fields, camelCase (never the unknown keys a file carried: they could
    name a protocol field such as `type`)."""
    return known_json(request.binding)


def approval_line(status: Status) -> dict[str, Any]:
    """A request the front end may answer: its fields, its state, who asks."""
    request = status.request
    server = request.server
    return {
        **binding_fields(request),
        "type": "approval",
        "kind": request.kind.value,
        "id": request.id,
        "state": status.state.value,
        "title": request.title,
        "body": request.body,
        "filedAt": format_time(request.filed_at),
        "expiresAt": format_time(request.expires_at) if request.expires_at else None,
        "server": {
            "id": server.id,
            "pid": server.pid,
            "client": server.client,
            "thread": server.thread,
            "entryPoint": server.entry_point,
            "alive": status.server_alive,
        },
    }


def why_gone(status: Status | None) -> tuple[str, str]:
    """Why a request the front end was sent can no longer be answered: (state, reason)."""
    if status is None:
        return "removed", "it was removed from the channel"
    answer = status.answer
    if status.state is State.ANSWERED and answer is not None:
        return "answered", f"answered {answer.decision} by {answer.user} via {answer.via}"
    if status.state is State.STALE:
        return "stale", f"stale: {status.reason}" if status.reason else "stale"
    if status.state is State.SETTLED:
        outcome = status.outcome.value if status.outcome else "settled"
        if answer is not None and not answer.is_tombstone:
            return (
                outcome,
                f"answered {answer.decision} by {answer.user} via {answer.via}; ended {outcome}",
            )
        detail = f": {status.reason}" if status.reason else ""
        return outcome, f"ended {outcome}{detail}"
    return status.state.value, status.state.value


def winner_fields(status: Status | None) -> dict[str, Any] | None:
    """Who holds a request's answer slot, for a `withdrawn` line (None: a tombstone or none)."""
    answer = status.answer if status is not None else None
    if answer is None or answer.is_tombstone:
        return None
    return winner_fields_of(answer)


def winner_fields_of(answer: Answer) -> dict[str, Any]:
    """An answer as `answered` and `withdrawn` lines show it."""
    return {
        "decision": answer.decision,
        "via": answer.via,
        "user": answer.user,
        "answeredAt": format_time(answer.answered_at),
    }


def withdrawn_line(request_id: str, status: Status | None) -> dict[str, Any]:
    state, reason = why_gone(status)
    line: dict[str, Any] = {"type": "withdrawn", "id": request_id, "state": state}
    line["reason"] = reason
    winner = winner_fields(status)
    if winner is not None:
        line["answer"] = winner
    return line
