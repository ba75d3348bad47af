"""The relay protocol: every line between `wisp relay` and a front end, typed (pure: no I/O).

Both ends speak through this module and nothing else. The relay decodes a front end's lines
with :func:`decode_front_end` and writes its own with :func:`encode`; `wisp tui` — and any
front end written in Python — writes its lines with :func:`encode` and reads the relay's with
:func:`decode_relay`. Every line is one frozen record:

- a front end sends :class:`Hello` (first, once), :class:`AnswerLine`, :class:`HistoryRequest`;
- the relay sends :class:`Ready`, :class:`ApprovalLine`, :class:`Withdrawn`,
  :class:`Answered`, :class:`Notify`, :class:`Decided`, :class:`HistoryReply` and
  :class:`ErrorLine`.

The decoders are strict: a line is a record, or a :class:`LineError` whose ``code`` is the
relay's `error` code and whose message says what is wrong. Words with a fixed vocabulary
(kinds, states, decisions, outcomes, vias, error codes) are decoded into their enums here, at
the edge, so neither end compares strings. Texts that come from request or audit files
(titles, commands, an answer's user and via as its file says them) stay text: a front end
shows them made visible, never compares them. docs/relay.md is the wire's reference; this
module writes exactly that, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

import attrs

from pending import (
    KINDS,
    Decision,
    DecodeError,
    Kind,
    Offers,
    Outcome,
    Scope,
    State,
    Via,
    answer_width,
    format_time,
    is_valid_id,
    loads_strict,
    must_ask_offers,
    offers_of,
    parse_time,
    width_json,
)
from wisp import ANSWERABLE, AnswerFate, Decider, Verdict, WispError
from wisp._lines import LINE_MAX_BYTES, LineSplitter, TooLong
from wisp.kinds import views

__all__ = [
    "ANSWERABLE",
    "APPROVE",
    "DENY",
    "HISTORY_DEFAULT",
    "HISTORY_MAX",
    "MAX_ID_ECHO",
    "MAX_LINE_BYTES",
    "NO_HELLO",
    "NO_HELLO_EFFECTS",
    "PERSON_DECISIONS",
    "VIAS",
    "AnswerLine",
    "Answered",
    "ApprovalLine",
    "Decided",
    "Effect",
    "Ended",
    "ErrorCode",
    "ErrorLine",
    "FrontEndLine",
    "Hello",
    "HistoryReply",
    "HistoryRequest",
    "Line",
    "LineError",
    "LineSplitter",
    "Notify",
    "Ready",
    "RelayLine",
    "Server",
    "TooLong",
    "UnknownType",
    "Winner",
    "Withdrawal",
    "Withdrawn",
    "binding_fields",
    "decode_front_end",
    "decode_relay",
    "echoed",
    "effect_kinds",
    "encode",
    "to_json",
]

# A line longer than this is refused unread (and skipped up to its newline): no request, answer
# or hello comes near it, and neither end must hold the other's megabytes.
MAX_LINE_BYTES = LINE_MAX_BYTES

# An `error` line names the request it concerns only when the id is at most this long (a
# valid one is 8-32 characters): a hostile front end's megabyte "id" is not echoed back.
MAX_ID_ECHO = 64

# The relay's exit statuses (docs/relay.md, Exit status): its input ended; the channel could
# not be opened or watched; interrupted (Ctrl-C, when run by hand).
EXIT_OK = 0
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

HISTORY_DEFAULT = 50
HISTORY_MAX = 500

E = TypeVar("E", bound=StrEnum)

# Unknown words are echoed in messages cut to this many characters.
_ECHO_CHARS = 40


class Effect(StrEnum):
    """What a front end can carry, declared in its hello (seed ADR 0044), beyond the kinds
    it answers (each kind's effect is its view's: :func:`effect_kinds`)."""

    NOTIFY = "notify"
    # A `decided` line for each tool call decided without asking (by a rule or a grant),
    # as the relay's audit log records it.
    SHOW_DECIDED = "show-decided"


class Withdrawal(StrEnum):
    """Why a request sent earlier can no longer be answered (a `withdrawn` line's `state`):
    the request's state or outcome, or the relay's own reasons (removed, undeclared)."""

    ANSWERED = "answered"  # someone else's answer holds the slot (or ended it: outcome)
    STALE = "stale"
    TIMED_OUT = "timed-out"
    WITHDRAWN = "withdrawn"
    FAILED = "failed"
    SETTLED = "settled"  # settled with no outcome a build knows
    FILED = "filed"  # (never sent for one still answerable; listed so every state reads)
    HANDED_OVER = "handed-over"
    REMOVED = "removed"  # its files are gone from the channel
    UNDECLARED = "undeclared"  # a late hello left its kind out


class ErrorCode(StrEnum):
    """An `error` line's code (docs/relay.md lists when each is sent)."""

    TOO_LONG = "too-long"
    BAD_JSON = "bad-json"
    NOT_AN_OBJECT = "not-an-object"
    UNKNOWN_TYPE = "unknown-type"
    BAD_FIELD = "bad-field"
    HELLO_NOT_FIRST = "hello-not-first"
    NOT_DECLARED = "not-declared"
    NOT_A_TERMINAL = "not-a-terminal"
    BUSY = "busy"
    INVALID_ID = "invalid-id"
    UNKNOWN_REQUEST = "unknown-request"
    UNREADABLE_REQUEST = "unreadable-request"
    WRONG_KIND = "wrong-kind"
    INVALID_DECISION = "invalid-decision"
    ALREADY_SETTLED = "already-settled"
    STALE = "stale"
    REQUEST_CHANGED = "request-changed"
    STORE = "store"
    CHANNEL = "channel"
    INTERNAL = "internal"


# --- per kind: read from the kinds, never written per kind here ----------------------------


def effect_kinds() -> dict[str, Kind]:
    """What each request-and-answer effect lets a front end be sent (seed ADR 0044, ADR 0048):
    each kind's effect, as its view (wisp/kinds/) names it."""
    return {v.effect: v.kind for v in views()}


def binding_fields(kind: Kind) -> tuple[tuple[str, bool], ...]:
    """An `approval` line's binding fields for *kind* (camelCase, in the order the relay
    writes them: its binding record's), each with whether a request can be without it."""
    found = _BINDING_FIELDS.get(kind)
    if found is None:
        record = KINDS[kind].binding_type
        found = _BINDING_FIELDS[kind] = tuple(
            (_camel(name), name in record._field_defaults)
            for name in record._fields
            if name != "extra"
        )
    return found


_BINDING_FIELDS: dict[Kind, tuple[tuple[str, bool], ...]] = {}


def _shape(kind: Kind, key: str) -> str:
    """What JSON a binding field holds, by its record's annotation: `flag` (a bool), `words`
    (a list of strings), `object` (a JSON object), else `text`."""
    record = KINDS[kind].binding_type
    for name, annotation in record.__annotations__.items():
        if _camel(name) == key:
            typed = (
                annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
            )
            typed = (
                (typed or str(annotation)).removeprefix("typing.").removeprefix("collections.abc.")
            )
            if typed.startswith("bool"):
                return "flag"
            if typed.startswith("tuple"):
                return "words"
            if typed.startswith(("Mapping", "dict")):
                return "object"
    return "text"


def _read_field(line: _Fields, key: str, shape: str) -> Any:
    if shape == "flag":
        return line.opt_flag(key)
    if shape == "words":
        return None if line.value.get(key) is None else list(line.words(key))
    if shape == "object":
        found = line.object(key)
        return None if found is None else dict(found.value)
    return line.opt_text(key)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# Short labels a front end may send for a command answer: `approve` (with a `scope`, default
# once) and `deny` read as the decisions they name.
APPROVE = "approve"
DENY = "deny"

# --- end of the per-kind words ------------------------------------------------------------

# A front end that sends no hello is a 0.16.0 one: it knows command approvals, nothing more.
NO_HELLO_EFFECTS = ("approve-mcp",)
# Whom a relay gives answers as (its `--via`), and what a hello's `via` may say.
VIAS: tuple[Via, ...] = (Via.RELAY, Via.TUI, Via.WEB)
# What an answer line may decide: a person's decisions of every kind (never a tombstone).
PERSON_DECISIONS: frozenset[Decision] = frozenset(d for s in KINDS.values() for d in s.decisions)


class LineError(WispError):
    """A line that is not a record of this protocol: ``code`` for programs, the message for
    people. The relay answers a front end's with :meth:`line`; a front end skips the relay's."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        request_id: str | None = None,
        kind: Kind | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id
        self.kind = kind

    def line(self) -> ErrorLine:
        return ErrorLine(error=self.code, message=str(self), id=echoed(self.request_id))


class UnknownType(LineError):
    """A line whose `type` this build does not know (``type``: it, if it is a string). A front
    end ignores a relay's (a newer relay's additions); the relay refuses a front end's."""

    def __init__(self, message: str, *, type_: str | None) -> None:
        super().__init__(ErrorCode.UNKNOWN_TYPE, message)
        self.type = type_


def echoed(request_id: str | None) -> str | None:
    """An id as an `error` line may name it: a longer one is no ID, never echoed back."""
    return request_id if request_id is not None and len(request_id) <= MAX_ID_ECHO else None


# --- the records: what a front end sends ------------------------------------------------


@attrs.frozen(kw_only=True)
class Hello:
    """A front end's first line: what it can carry (every effect as sent), and who it is."""

    effects: tuple[str, ...]
    client: str | None = None
    version: str | None = None
    via: Via | None = None  # read, never taken: the relay's --via says who answers

    @property
    def known(self) -> frozenset[str]:
        """The effects this build knows."""
        return frozenset(e for e in self.effects if e in _known_effects())

    @property
    def ignored(self) -> tuple[str, ...]:
        """The effects this build does not know, once each (cut for echoing)."""
        known = _known_effects()
        unknown = (e[:_ECHO_CHARS] for e in self.effects if e not in known)
        return tuple(dict.fromkeys(unknown))

    @property
    def kinds(self) -> frozenset[Kind]:
        kinds = effect_kinds()
        return frozenset(kinds[e] for e in self.known if e in kinds)

    @property
    def notify(self) -> bool:
        return Effect.NOTIFY in self.known


def _known_effects() -> frozenset[str]:
    return frozenset([*effect_kinds(), *Effect])


NO_HELLO = Hello(effects=NO_HELLO_EFFECTS)


@attrs.frozen(kw_only=True)
class AnswerLine:
    """A front end's answer to one request."""

    id: str
    decision: Decision
    kind: Kind | None = None  # as the front end saw it; None: as the relay sent it
    text: str | None = None  # a question's answer
    reason: str | None = None  # told to the asker with a `no`
    # How wide an approval reaches: one the request's binding offers (docs/channel.md,
    # "Widths": `{"name": "command", "prefix": [...]}`); None: the exact call.
    width: Mapping[str, Any] | None = None


@attrs.frozen(kw_only=True)
class HistoryRequest:
    """A front end asks for what ended lately (from the relay's audit log)."""

    limit: int = HISTORY_DEFAULT


# --- the records: what the relay sends --------------------------------------------------


@attrs.frozen(kw_only=True)
class Ready:
    """The relay's reply to a hello, once every waiting request of its kinds is sent."""

    effects: tuple[str, ...]  # the hello's effects this relay took, sorted
    ignored: tuple[str, ...] = ()
    kinds: tuple[Kind, ...] = ()
    waiting: int = 0
    hostname: str | None = None
    version: str | None = None
    via: Via | None = None  # whom its answers are given as (None: an older relay)
    answers: bool | None = None  # False: it takes no answers (None: an older relay)


@attrs.frozen(kw_only=True)
class Server:
    """Who asks: the server that filed a request."""

    id: str
    pid: int | None = None
    client: str | None = None
    thread: str | None = None
    entry_point: str | None = None
    alive: bool | None = None


class _Offering:
    """A binding's `offers`, as :func:`pending.offers_of` reads one."""

    def __init__(self, offers: Any) -> None:
        self.offers = offers


@attrs.frozen(kw_only=True)
class ApprovalLine:
    """A request the front end may answer."""

    kind: Kind
    id: str
    state: State  # filed, or handed-over
    title: str
    body: str
    filed_at: datetime | None
    expires_at: datetime | None
    server: Server
    # The binding's fields as the relay sends them, camelCase, in binding_fields() order.
    fields: Mapping[str, Any] = attrs.field(eq=True, hash=False)
    # A fact's: the kept facts it would contradict, (permanent ID, "subject name = value"),
    # as they were when the line was sent (`wisp show` says them as `differs`).
    differs: tuple[tuple[str, str], ...] = ()

    @property
    def options(self) -> tuple[str, ...]:
        found = self.fields.get("options")
        return tuple(found) if isinstance(found, list | tuple) else ()

    @property
    def offered(self) -> Offers:
        """What a command or tool request offers (docs/channel.md, "Widths"): its `offers`,
        or every scope of the exact call where it has none. Offers a front end cannot read
        (a far relay's malformed line) offer `once` only: never wider than was said."""
        found = self.fields.get("offers")
        if found is None:
            return offers_of(None)
        try:
            return offers_of(_Offering(found))
        except (ValueError, TypeError):
            return must_ask_offers(("what it offers could not be read",))

    @property
    def free_text(self) -> bool:
        """Whether any text is an answer: as the relay says, and always for a question with
        no options (a line with neither — an old or hostile relay's — still takes text)."""
        return self.fields.get("freeText") is True or not self.options


@attrs.frozen(kw_only=True)
class Winner:
    """The answer that holds a request's slot. Its decision and via are as its answer file
    says them: texts to show (made visible), never compared."""

    decision: str
    via: str | None
    user: str | None
    answered_at: datetime | None
    text: str | None = None  # a question's answer, as typed or picked


@attrs.frozen(kw_only=True)
class Withdrawn:
    """A request sent earlier can no longer be answered here."""

    id: str
    state: Withdrawal
    reason: str
    answer: Winner | None = None


@attrs.frozen(kw_only=True)
class Answered:
    """The relay's report on one of the front end's answers."""

    id: str
    kind: Kind | None  # None: an older relay's line
    decision: Decision
    text: str | None
    won: bool
    answer: Winner | None
    outcome: Outcome | None
    result: str | None
    reason: str | None
    asker: AnswerFate | None
    applied: bool = False
    apply_error: str | None = None


@attrs.frozen(kw_only=True)
class Notify:
    """A notification for the front end to post (only with `notify` declared)."""

    title: str
    subtitle: str
    body: str
    sound: bool = False


@attrs.frozen(kw_only=True)
class Decided:
    """A tool call decided without asking — by a rule or a grant — as the relay's audit log
    recorded it (only with `show-decided` declared). Its verdict and decider are enums; every
    other field is text from the audit log, to be shown made visible, never compared."""

    ts: datetime | None
    verdict: Verdict
    decider: Decider
    said: str  # the call and what decided it, in words, as `wisp pending watch` says it
    rule: str | None = None
    grant: str | None = None
    scope: str | None = None
    harness: str | None = None
    tool: str | None = None
    command: str | None = None  # a shell line
    input: Mapping[str, Any] | None = attrs.field(default=None, eq=False)  # any other tool's
    cwd: str | None = None
    project: str | None = None


@attrs.frozen(kw_only=True)
class Ended:
    """One entry of a `history` line: a request's ending as the audit log tells it (texts
    from the log, older events' words among them: shown, never compared)."""

    ts: str
    id: str
    kind: str
    outcome: str
    decision: str | None
    asked: str
    by: str | None


@attrs.frozen(kw_only=True)
class HistoryReply:
    """What ended lately, newest first."""

    entries: tuple[Ended, ...]


@attrs.frozen(kw_only=True)
class ErrorLine:
    """A line the relay did not act on, or (``fatal``) why it is ending."""

    error: ErrorCode
    message: str
    id: str | None = None  # the request the line concerned
    kind: Kind | None = None  # wrong-kind: its real kind; invalid-decision: the kind asked
    allowed: tuple[str, ...] | None = None  # the decisions (or kinds) that would be taken
    fatal: bool = False


FrontEndLine = Hello | AnswerLine | HistoryRequest
RelayLine = (
    Ready | ApprovalLine | Withdrawn | Answered | Notify | Decided | HistoryReply | ErrorLine
)
Line = FrontEndLine | RelayLine


# --- the encoder ------------------------------------------------------------------------


def encode(line: Line) -> bytes:
    """One record as its line: compact JSON and a newline, keys in the documented order.
    The relay writes UTF-8; a front end writes ASCII only (``\\u`` escapes), since a relay
    behind `ssh -tt` reads through a terminal, where a stray byte could be taken as a key
    before the relay has set it raw."""
    ascii_only = isinstance(line, Hello | AnswerLine | HistoryRequest)
    text = json.dumps(to_json(line), ensure_ascii=ascii_only, separators=(",", ":"))
    return (text + "\n").encode()


def to_json(line: Line) -> dict[str, Any]:
    """One record as the JSON object its line carries."""
    return _WRITERS[type(line)](line)


def _time(moment: datetime | None) -> str | None:
    return format_time(moment) if moment is not None else None


def _hello_json(line: Hello) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "hello", "effects": list(line.effects)}
    _put(out, client=line.client, version=line.version, via=line.via)
    return out


def _answer_json(line: AnswerLine) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "answer", "id": line.id}
    _put(out, kind=line.kind)
    out["decision"] = line.decision.value
    _put(out, text=line.text, reason=line.reason)
    if line.width is not None:
        out["width"] = dict(line.width)
    return out


def _put(out: dict[str, Any], **optional: Any) -> None:
    """Add the keys whose value is not None (enums as their words)."""
    for key, value in optional.items():
        if value is not None:
            out[key] = value.value if isinstance(value, StrEnum) else value


def _word(value: StrEnum | None) -> str | None:
    return value.value if value is not None else None


def _ready_json(line: Ready) -> dict[str, Any]:
    return {
        "type": "ready",
        "effects": list(line.effects),
        "ignored": list(line.ignored),
        "kinds": [k.value for k in line.kinds],
        "waiting": line.waiting,
        "hostname": line.hostname,
        "version": line.version,
        "via": _word(line.via),
        "answers": line.answers,
    }


def _approval_json(line: ApprovalLine) -> dict[str, Any]:
    server = line.server
    return {
        # The binding's fields first: the protocol's own, after them, always win.
        **{k: list(v) if isinstance(v, tuple) else v for k, v in line.fields.items()},
        "type": "approval",
        "kind": line.kind.value,
        "id": line.id,
        "state": line.state.value,
        "title": line.title,
        "body": line.body,
        "filedAt": _time(line.filed_at),
        "expiresAt": _time(line.expires_at),
        "server": {
            "id": server.id,
            "pid": server.pid,
            "client": server.client,
            "thread": server.thread,
            "entryPoint": server.entry_point,
            "alive": server.alive,
        },
        **(
            {"differs": [{"id": i, "said": said} for i, said in line.differs]}
            if line.differs
            else {}
        ),
    }


def _winner_json(winner: Winner | None) -> dict[str, Any] | None:
    if winner is None:
        return None
    return {
        "decision": winner.decision,
        "via": winner.via,
        "user": winner.user,
        "answeredAt": _time(winner.answered_at),
        "text": winner.text,
    }


def _withdrawn_json(line: Withdrawn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "withdrawn",
        "id": line.id,
        "state": line.state.value,
        "reason": line.reason,
    }
    _put(out, answer=_winner_json(line.answer))
    return out


def _answered_json(line: Answered) -> dict[str, Any]:
    return {
        "type": "answered",
        "id": line.id,
        "kind": _word(line.kind),
        "decision": line.decision.value,
        "text": line.text,
        "won": line.won,
        "answer": _winner_json(line.answer),
        "outcome": _word(line.outcome),
        "result": line.result,
        "reason": line.reason,
        "asker": _word(line.asker),
        "applied": line.applied,
        "applyError": line.apply_error,
    }


def _notify_json(line: Notify) -> dict[str, Any]:
    return {
        "type": "notify",
        "title": line.title,
        "subtitle": line.subtitle,
        "body": line.body,
        "sound": line.sound,
    }


def _decided_json(line: Decided) -> dict[str, Any]:
    return {
        "type": "decided",
        "ts": _time(line.ts),
        "verdict": line.verdict.value,
        "decider": line.decider.value,
        "said": line.said,
        "rule": line.rule,
        "grant": line.grant,
        "scope": line.scope,
        "harness": line.harness,
        "tool": line.tool,
        "command": line.command,
        "input": dict(line.input) if line.input is not None else None,
        "cwd": line.cwd,
        "project": line.project,
    }


def _history_request_json(line: HistoryRequest) -> dict[str, Any]:
    return {"type": "history", "limit": line.limit}


def _history_reply_json(line: HistoryReply) -> dict[str, Any]:
    return {"type": "history", "entries": [attrs.asdict(e) for e in line.entries]}


def _error_json(line: ErrorLine) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "error", "error": line.error.value, "message": line.message}
    allowed = list(line.allowed) if line.allowed is not None else None
    _put(out, id=line.id, kind=line.kind, allowed=allowed, fatal=line.fatal or None)
    return out


_WRITERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    Hello: _hello_json,
    AnswerLine: _answer_json,
    HistoryRequest: _history_request_json,
    Ready: _ready_json,
    ApprovalLine: _approval_json,
    Withdrawn: _withdrawn_json,
    Answered: _answered_json,
    Notify: _notify_json,
    Decided: _decided_json,
    HistoryReply: _history_reply_json,
    ErrorLine: _error_json,
}


# --- the decoder --------------------------------------------------------------------------


def decode_front_end(data: bytes) -> FrontEndLine:
    """One line a front end sent (without its newline), or :class:`LineError`."""
    value = _object(data)
    reader = _FRONT_END_READERS.get(value.get("type"))  # type: ignore[arg-type]
    if reader is None:
        raise _unknown_type(value, "the relay takes hello, answer and history")
    line: FrontEndLine = reader(_Fields(value))
    return line


def decode_relay(data: bytes) -> RelayLine:
    """One line a relay sent (without its newline), or :class:`LineError` —
    :class:`UnknownType` for a type this build does not know (a front end skips those
    quietly: a newer relay's additions)."""
    value = _object(data)
    reader = _RELAY_READERS.get(value.get("type"))  # type: ignore[arg-type]
    if reader is None:
        raise _unknown_type(value, "a relay sends " + ", ".join(_RELAY_READERS))
    line: RelayLine = reader(_Fields(value))
    return line


def _object(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_LINE_BYTES:
        raise LineError(
            ErrorCode.TOO_LONG, f"a line over {MAX_LINE_BYTES} bytes was skipped unread."
        )
    try:
        value = loads_strict(data)
    except DecodeError as exc:
        raise LineError(
            ErrorCode.BAD_JSON, f"the line is not JSON the relay reads ({exc}); it was ignored."
        ) from None
    if not isinstance(value, dict):
        raise LineError(ErrorCode.NOT_AN_OBJECT, "each line must be one JSON object with a `type`.")
    return value


def _unknown_type(value: Mapping[str, Any], takes: str) -> UnknownType:
    found = value.get("type")
    if isinstance(found, str):
        return UnknownType(f"unknown line type {found[:_ECHO_CHARS]!r}; {takes}.", type_=found)
    return UnknownType(f"the line has no string `type`; {takes}.", type_=None)


class _Fields:
    """A line's object, read field by field: each a type-checked value, or a bad-field
    :class:`LineError` naming the field (and the request, when the line names one)."""

    def __init__(self, value: Mapping[str, Any]) -> None:
        self.value = value
        found = value.get("id")
        self.request_id = echoed(found) if isinstance(found, str) else None

    def bad(self, message: str) -> LineError:
        return LineError(ErrorCode.BAD_FIELD, message, request_id=self.request_id)

    def text(self, key: str, default: str | None = None) -> str:
        found = self.value.get(key, default)
        if not isinstance(found, str):
            raise self.bad(f"`{key}` must be a string.")
        return found

    def opt_text(self, key: str, value: Mapping[str, Any] | None = None) -> str | None:
        found = (self.value if value is None else value).get(key)
        if found is not None and not isinstance(found, str):
            raise self.bad(f"`{key}` must be a string or null.")
        return found

    def flag(self, key: str, default: bool | None = None) -> bool:
        found = self.value.get(key, default)
        if not isinstance(found, bool):
            raise self.bad(f"`{key}` must be true or false.")
        return found

    def opt_flag(self, key: str, value: Mapping[str, Any] | None = None) -> bool | None:
        found = (self.value if value is None else value).get(key)
        if found is not None and not isinstance(found, bool):
            raise self.bad(f"`{key}` must be true, false or null.")
        return found

    def number(self, key: str, default: int) -> int:
        found = self.value.get(key, default)
        if isinstance(found, bool) or not isinstance(found, int):
            raise self.bad(f"`{key}` must be a whole number.")
        return found

    def words(self, key: str, default: tuple[str, ...] | None = ()) -> tuple[str, ...]:
        found = self.value.get(key, default)
        if not isinstance(found, list | tuple) or not all(isinstance(e, str) for e in found):
            raise self.bad(f"`{key}` must be a list of strings.")
        return tuple(found)

    def enum(self, key: str, enum: type[E], default: str | None = None) -> E:
        word = self.text(key, default)
        try:
            return enum(word)
        except ValueError:
            takes = ", ".join(e.value for e in enum)
            raise self.bad(f"`{key}` takes {takes}, not {word[:_ECHO_CHARS]!r}.") from None

    def opt_enum(self, key: str, enum: type[E]) -> E | None:
        return None if self.value.get(key) is None else self.enum(key, enum)

    def time(self, key: str) -> datetime | None:
        text = self.opt_text(key)
        if text is None:
            return None
        try:
            return parse_time(text)
        except ValueError:
            raise self.bad(f"`{key}` must be an ISO 8601 time with its zone.") from None

    def request(self) -> str:
        """The request's ID, which must be one (8-32 lowercase hex)."""
        found = self.text("id")
        if not is_valid_id(found):
            raise self.bad("`id` is not a request ID (8-32 lowercase hex).")
        return found

    def object(self, key: str) -> _Fields | None:
        found = self.value.get(key)
        if found is None:
            return None
        if not isinstance(found, dict):
            raise self.bad(f"`{key}` must be an object.")
        return _Fields(found)


def _read_hello(line: _Fields) -> Hello:
    via = line.opt_text("via") or None  # an empty one says nothing, as before
    if via is not None and via not in VIAS:
        takes = " or ".join(VIAS)
        raise line.bad(f"`via` takes {takes}, not {via[:_ECHO_CHARS]!r}.")
    return Hello(
        effects=line.words("effects"),
        client=line.opt_text("client"),
        version=line.opt_text("version"),
        via=Via(via) if via is not None else None,
    )


def _read_answer(line: _Fields) -> AnswerLine:
    request_id = line.text("id")
    word = line.text("decision")
    kind = line.opt_enum("kind", Kind)
    scope = line.opt_text("scope")
    if word in (APPROVE, DENY) and kind in (None, Kind.COMMAND):
        if word == DENY:
            word = Decision.NO.value
        else:
            scope = scope or Scope.ONCE.value
            if scope not in set(Scope):
                takes = ", ".join(Scope)
                raise line.bad(f"`scope` takes {takes}, not {scope[:_ECHO_CHARS]!r}.")
            word = scope
    elif scope is not None and word != scope:
        raise line.bad("`scope` goes with decision `approve` (or equals the decision).")
    if word not in PERSON_DECISIONS:
        raise LineError(
            ErrorCode.INVALID_DECISION,
            f"{word[:_ECHO_CHARS]!r} is not a decision: {_decisions_said()}. Nothing was written.",
            request_id=line.request_id,
            kind=kind,
        )
    width = line.value.get("width")
    if width is not None:
        try:
            width = width_json(answer_width(width))
        except (ValueError, TypeError) as exc:
            raise line.bad(f"`width` {exc}.") from None
    return AnswerLine(
        id=request_id,
        decision=Decision(word),
        kind=kind,
        text=line.opt_text("text"),
        reason=line.opt_text("reason"),
        width=width,
    )


def _decisions_said() -> str:
    return "; ".join(f"a {k.value} takes {', '.join(s.decisions)}" for k, s in KINDS.items())


def _read_history_request(line: _Fields) -> HistoryRequest:
    limit = line.value.get("limit", HISTORY_DEFAULT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= HISTORY_MAX:
        raise line.bad(f"`limit` takes a whole number from 1 to {HISTORY_MAX}.")
    return HistoryRequest(limit=limit)


def _read_ready(line: _Fields) -> Ready:
    kinds = line.words("kinds")
    try:
        known = tuple(Kind(k) for k in kinds)
    except ValueError:
        raise line.bad("`kinds` names a kind this build does not know.") from None
    via = line.opt_enum("via", Via)
    return Ready(
        effects=line.words("effects"),
        ignored=line.words("ignored"),
        kinds=known,
        waiting=line.number("waiting", 0),
        hostname=line.opt_text("hostname"),
        version=line.opt_text("version"),
        via=via,
        answers=line.opt_flag("answers"),
    )


def _read_approval(line: _Fields) -> ApprovalLine:
    kind = line.enum("kind", Kind, default=Kind.COMMAND.value)  # 0.16.0 relays sent no kind
    fields: dict[str, Any] = {}
    for key, optional in binding_fields(kind):
        found = _read_field(line, key, _shape(kind, key))
        if found is None and not optional:
            raise line.bad(f"a {kind.value} request needs `{key}`.")
        fields[key] = found
    server = line.object("server") or _Fields({})
    pid = server.value.get("pid")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int)):
        raise line.bad("`server.pid` must be a whole number or null.")
    return ApprovalLine(
        kind=kind,
        id=line.request(),
        state=line.enum("state", State, default=State.FILED.value),
        title=line.text("title", ""),
        body=line.text("body", ""),
        filed_at=line.time("filedAt"),
        expires_at=line.time("expiresAt"),
        server=Server(
            id=server.opt_text("id") or "?",
            pid=pid,
            client=server.opt_text("client"),
            thread=server.opt_text("thread"),
            entry_point=server.opt_text("entryPoint"),
            alive=server.opt_flag("alive"),
        ),
        fields=fields,
        differs=_read_differs(line),
    )


def _read_differs(line: _Fields) -> tuple[tuple[str, str], ...]:
    """An approval's `differs`: a list of {"id", "said"} objects, or none."""
    found = line.value.get("differs")
    if found is None:
        return ()
    if not isinstance(found, list) or not all(isinstance(e, dict) for e in found):
        raise line.bad("`differs` must be a list of objects with `id` and `said`.")
    return tuple((_Fields(e).text("id"), _Fields(e).text("said")) for e in found)


def _read_winner(line: _Fields) -> Winner | None:
    answer = line.object("answer")
    if answer is None:
        return None
    return Winner(
        decision=answer.text("decision"),
        via=answer.opt_text("via"),
        user=answer.opt_text("user"),
        answered_at=answer.time("answeredAt"),
        text=answer.opt_text("text"),
    )


def _read_withdrawn(line: _Fields) -> Withdrawn:
    return Withdrawn(
        id=line.request(),
        state=line.enum("state", Withdrawal, default=Withdrawal.WITHDRAWN.value),
        reason=line.text("reason", Withdrawal.WITHDRAWN.value),
        answer=_read_winner(line),
    )


def _read_answered(line: _Fields) -> Answered:
    return Answered(
        id=line.request(),
        kind=line.opt_enum("kind", Kind),
        decision=line.enum("decision", Decision),
        text=line.opt_text("text"),
        won=line.flag("won"),
        answer=_read_winner(line),
        outcome=line.opt_enum("outcome", Outcome),
        result=line.opt_text("result"),
        reason=line.opt_text("reason"),
        asker=line.opt_enum("asker", AnswerFate),
        applied=line.flag("applied", False),
        apply_error=line.opt_text("applyError"),
    )


def _read_notify(line: _Fields) -> Notify:
    return Notify(
        title=line.text("title", "wisp"),
        subtitle=line.text("subtitle", ""),
        body=line.text("body", ""),
        sound=line.flag("sound", False),
    )


def _read_decided(line: _Fields) -> Decided:
    found = line.object("input")
    return Decided(
        ts=line.time("ts"),
        verdict=line.enum("verdict", Verdict),
        decider=line.enum("decider", Decider),
        said=line.text("said"),
        rule=line.opt_text("rule"),
        grant=line.opt_text("grant"),
        scope=line.opt_text("scope"),
        harness=line.opt_text("harness"),
        tool=line.opt_text("tool"),
        command=line.opt_text("command"),
        input=None if found is None else dict(found.value),
        cwd=line.opt_text("cwd"),
        project=line.opt_text("project"),
    )


def _read_history_reply(line: _Fields) -> HistoryReply:
    entries = line.value.get("entries")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise line.bad("`entries` must be a list of objects.")
    out = []
    for value in entries:
        entry = _Fields(value)
        out.append(
            Ended(
                ts=entry.text("ts", ""),
                id=entry.text("id", "?"),
                kind=entry.text("kind", "?"),
                outcome=entry.text("outcome", "?"),
                decision=entry.opt_text("decision"),
                asked=entry.text("asked", ""),
                by=entry.opt_text("by"),
            )
        )
    return HistoryReply(entries=tuple(out))


def _read_error(line: _Fields) -> ErrorLine:
    allowed = line.value.get("allowed")
    return ErrorLine(
        error=line.enum("error", ErrorCode),
        message=line.text("message", "the relay reported an error"),
        id=line.opt_text("id"),
        kind=line.opt_enum("kind", Kind),
        allowed=line.words("allowed") if allowed is not None else None,
        fatal=line.flag("fatal", False),
    )


_FRONT_END_READERS: dict[str, Callable[[_Fields], FrontEndLine]] = {
    "hello": _read_hello,
    "answer": _read_answer,
    "history": _read_history_request,
}
_RELAY_READERS: dict[str, Callable[[_Fields], RelayLine]] = {
    "ready": _read_ready,
    "approval": _read_approval,
    "withdrawn": _read_withdrawn,
    "answered": _read_answered,
    "notify": _read_notify,
    "decided": _read_decided,
    "history": _read_history_reply,
    "error": _read_error,
}
