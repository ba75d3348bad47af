"""The one converter: records to JSON and back, strictly.

JSON keys are camelCase; keys a record does not know are kept in its ``extra`` and written
back untouched. Decoding is defensive: strict UTF-8, no NaN or Infinity (nor a number too large
to be finite), no duplicate keys, no lone surrogates, bounded nesting, and every field checked,
nested ones included: types exactly (``"1"`` is not an int, ``"ab"`` is not a list), IDs as IDs,
pids as positive pids, digests as sha256 hex, timestamps zoned and in range. A record that
fails any check is a :class:`DecodeError`, so the file is skipped and reported like any other
unreadable one; nothing downstream (a liveness probe building a lock name from a server ID, a
list of options) ever meets a malformed value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pending._bindings import (
    NO_EXTRA,
    Binding,
    CommandBinding,
    FactBinding,
    QuestionBinding,
    ToolBinding,
)
from pending._clock import format_time
from pending._dates import parse_time
from pending._ids import is_valid_id
from pending._json import (
    DecodeError,
    digest,
)
from pending._kinds import BINDING_TYPES, KINDS, Delivery, Kind, Outcome
from pending._offers import parse_offers, parse_width
from pending._records import (
    FORMAT,
    UNKNOWN_PID,
    UNKNOWN_SERVER_ID,
    Answer,
    Request,
    Server,
    Settled,
    from_fields,
)

if TYPE_CHECKING:  # cattrs loads with the converter: a listing of nothing parses nothing
    import cattrs

T = TypeVar("T")

# pid_t is a signed 32-bit integer on Linux and macOS; anything outside 1..PID_MAX is no process.
PID_MAX = 2**31 - 1
DIGEST_HEX_CHARS = 64  # sha256, as lowercase hex

_DIGEST_RE = re.compile(rf"[0-9a-f]{{{DIGEST_HEX_CHARS}}}")


class _Refused(ValueError):
    """A field's value is the right JSON type but not a value the field takes (its message is
    shown as it is, with the field's path)."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# --- the converter -----------------------------------------------------------------------


def _strict(kind: type[Any]) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        # bool is an int in Python; a JSON true is never a pid.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


def _structure_enum(value: Any, cls: type[Any]) -> Any:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return cls(value)


def _structure_time(value: Any, _: Any) -> datetime:
    if not isinstance(value, str):
        raise TypeError(f"expected a timestamp string, got {type(value).__name__}")
    try:
        return parse_time(value)
    except (ValueError, OverflowError) as exc:  # year 1 an hour east of UTC overflows
        raise _Refused(f"{_shown(value)} is not a zoned timestamp in range ({exc})") from None


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def _structure_id(value: Any, _: Any) -> str:
    # Checked here, on read, because IDs become file names (a server's lock): a malformed one
    # must make its record unreadable, never an error where the name is built.
    if not isinstance(value, str):
        raise TypeError(f"expected an ID string, got {type(value).__name__}")
    if not is_valid_id(value):
        raise _Refused(f"{_shown(value)} is not an ID (8 to 32 lowercase hex characters)")
    return value


def _structure_pid(value: Any, _: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected int, got {type(value).__name__}")
    if not 1 <= value <= PID_MAX:
        raise _Refused(f"{value if abs(value) < 10**20 else 'a huge number'} is not a pid")
    return value


def _structure_digest(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a digest string, got {type(value).__name__}")
    if _DIGEST_RE.fullmatch(value) is None:
        raise _Refused(f"{_shown(value)} is not a sha256 digest ({DIGEST_HEX_CHARS} hex)")
    return value


def _structure_options(value: Any, _: Any) -> tuple[str, ...] | None:
    # cattrs would make a tuple of any iterable: "ab" as ("a", "b"), an object as its keys.
    if value is None:
        return None
    if not isinstance(value, list):
        raise TypeError(f"expected a list of strings, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _Refused(f"option {index} is not a string")
    return tuple(value)


def _structure_object(value: Any, _: Any) -> dict[str, Any]:
    # A tool's arguments, as given: any JSON object. Its values were checked as JSON when the
    # record was decoded (strictly: depth, numbers, surrogates); here only that it is one.
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    if not all(isinstance(key, str) for key in value):
        raise _Refused("a JSON object's keys are strings")
    return value


def _structure_offers(value: Any, _: Any) -> dict[str, Any] | None:
    # What a request offers (pending._offers): checked strictly, kept as the JSON it is.
    if value is None:
        return None
    try:
        parse_offers(value)
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    return dict(value)


def _structure_width(value: Any, _: Any) -> dict[str, Any] | None:
    # How wide an answer approves (pending._offers): checked strictly, kept as its JSON.
    if value is None:
        return None
    try:
        parse_width(value)
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    return dict(value)


# Fields whose values are checked beyond their JSON type, record by record.
_FIELD_HOOKS: dict[type[Any], dict[str, Callable[[Any, Any], Any]]] = {
    Server: {"id": _structure_id, "pid": _structure_pid},
    CommandBinding: {"offers": _structure_offers},
    QuestionBinding: {"options": _structure_options},
    ToolBinding: {"input": _structure_object, "offers": _structure_offers},
    Request: {"id": _structure_id, "binding_digest": _structure_digest},
    Answer: {
        "id": _structure_id,
        "pid": _structure_pid,
        "binding_digest": _structure_digest,
        "width": _structure_width,
    },
    Settled: {"id": _structure_id},
}


# Record fields that are not JSON keys: the unknown keys kept, and a request's legacy mark.
_INTERNAL = frozenset({"extra", "legacy"})
# Fields added after records were first written: absent from the file when None, so that a
# record without them is written, and digested, as it always was.
_OMITTED_WHEN_NONE: dict[type[Any], dict[str, Any]] = {}


def _omitted_when_none() -> None:
    from cattrs.gen import override

    _OMITTED_WHEN_NONE[CommandBinding] = {
        "options": override(rename="options", omit_if_default=True),
        "offers": override(rename="offers", struct_hook=_structure_offers, omit_if_default=True),
    }
    _OMITTED_WHEN_NONE[ToolBinding] = {
        "offers": override(rename="offers", struct_hook=_structure_offers, omit_if_default=True),
    }
    _OMITTED_WHEN_NONE[Answer] = {
        "width": override(rename="width", struct_hook=_structure_width, omit_if_default=True),
    }


def _make_converter() -> cattrs.Converter:
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=False)  # unknown keys go to `extra`
    _omitted_when_none()
    for kind in (str, int, bool):
        conv.register_structure_hook(kind, _strict(kind))
    for enum in (Kind, Outcome, Delivery):
        conv.register_structure_hook(enum, _structure_enum)
    conv.register_structure_hook(datetime, _structure_time)
    conv.register_unstructure_hook(datetime, format_time)
    bindings = dict.fromkeys(spec.binding_type for spec in KINDS.values())  # in table order
    for cls in (Server, *bindings, Answer, Settled):
        _register_record(conv, cls, **_OMITTED_WHEN_NONE.get(cls, {}))
    _register_request(conv)
    return conv


def _register_record(conv: cattrs.Converter, cls: type[Any], **extra_overrides: Any) -> None:
    """camelCase keys, unknown keys into ``extra`` and back out again."""
    from cattrs.cols import namedtuple_dict_structure_factory, namedtuple_dict_unstructure_factory
    from cattrs.gen import override

    fields: tuple[str, ...] = cls._fields
    hooks = _FIELD_HOOKS.get(cls, {})
    overrides = {
        name: override(rename=camel(name), struct_hook=hooks.get(name))
        for name in fields
        if name not in _INTERNAL
    }
    overrides.update({name: override(omit=True) for name in fields if name in _INTERNAL})
    overrides.update(extra_overrides)
    known = frozenset(camel(name) for name in fields if name not in _INTERNAL)
    structure = namedtuple_dict_structure_factory(cls, conv, "from_converter", False, **overrides)
    unstructure = namedtuple_dict_unstructure_factory(cls, conv, False, **overrides)

    def structure_keeping_extra(data: Any, _: Any) -> Any:
        if not isinstance(data, dict):
            raise TypeError(f"expected an object, got {type(data).__name__}")
        record = structure(data, cls)
        if data.keys() <= known:  # the common case, checked in C: nothing to keep
            return record
        unknown = {key: value for key, value in data.items() if key not in known}
        return record._replace(extra=unknown)

    def unstructure_with_extra(record: Any) -> dict[str, Any]:
        data = {key: value for key, value in record.extra.items() if key not in known}
        written = unstructure(record)
        if "format" in written:  # first, as records have always been written (a tuple's
            data["format"] = written.pop("format")  # defaults come after its other fields)
        data.update(written)
        return data

    conv.register_structure_hook(cls, structure_keeping_extra)
    conv.register_unstructure_hook(cls, unstructure_with_extra)


def _register_request(conv: cattrs.Converter) -> None:
    """A request's binding type follows its kind; a 0.16.0 request has no kind: a command."""
    import cattrs
    from cattrs.gen import override

    _register_record(
        conv,
        Request,
        binding=override(rename="binding", struct_hook=lambda value, _: value),
    )
    structure = conv.get_structure_hook(Request)

    def structure_request(data: Any, _: Any) -> Request:
        if not isinstance(data, dict):
            raise TypeError(f"expected an object, got {type(data).__name__}")
        data = dict(data)
        kind = Kind(data.setdefault("kind", Kind.COMMAND.value))
        try:
            data["binding"] = conv.structure(data.get("binding"), BINDING_TYPES[kind])
        except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"binding: {_explain(exc)}") from None
        request: Request = structure(data, Request)
        return request

    conv.register_structure_hook(Request, structure_request)


@functools.cache
def _converter() -> cattrs.Converter:
    """The one converter, built on first use (it costs more to build than most commands)."""
    return _make_converter()


def to_json(record: Any) -> dict[str, Any]:
    """A record's JSON object (unknown keys it carried included)."""
    plain = _PLAIN_TO_JSON.get(type(record))
    if plain is not None and not record.extra:
        return plain(record)
    data: dict[str, Any] = _converter().unstructure(record)
    return data


def known_json(record: Any) -> dict[str, Any]:
    """A record's JSON object with only the keys this build knows: none of the unknown keys
    it carried (for a protocol, where such a key could name one of its own fields)."""
    plain = _PLAIN_TO_JSON.get(type(record))
    if plain is not None:
        return plain(record)
    return to_json(record._replace(extra={}))


def from_json(data: Any, cls: type[T]) -> T:
    """Structure a decoded JSON value as *cls*, or raise :class:`DecodeError`."""
    if isinstance(data, dict):
        version = data.get("format", FORMAT)
        if version != FORMAT:
            raise DecodeError(f"format {version!r} is not one this build understands ({FORMAT})")
    plain = _PLAIN_FROM_JSON.get(cls)
    if plain is not None:
        try:
            record: T = plain(data)
            return record
        except (_NotPlain, KeyError, ValueError, TypeError, OverflowError):
            pass  # not the plain case: the converter structures it, or says what is wrong
    conv = _converter()
    import cattrs  # loaded by the converter

    try:
        return conv.structure(data, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise DecodeError(_explain(exc)) from None


# --- the plain path ----------------------------------------------------------------------
#
# Most records are plain: every key one the record knows, every value of its exact type. A
# listing of 10,000 requests structures 10,000 of them, and through the converter each costs
# ~10 µs (some 75 calls: hooks per field, the unknown-keys wrapper, three records deep); that
# was a sixth of `wisp pending --json` at 10,000. The functions below structure (and write
# back) the plain case in straight code, with every check the converter's hooks make, and
# hand anything else to the converter: a record with unknown keys, a missing or mistyped
# field, a value a hook refuses. So the converter alone still decides what is not plain and
# explains every refusal. tests/test_convert.py checks that the two agree, on generated
# records valid and mutated, and that these functions name every field of their records.


class _NotPlain(Exception):
    """Not the plain case: the converter decides."""


_KIND_BY_VALUE = {kind.value: kind for kind in Kind}
_COMMAND = Kind.COMMAND.value  # a request's kind where it names none (0.16.0's: a command)
_OUTCOME_BY_VALUE = {outcome.value: outcome for outcome in Outcome}
_DELIVERY_BY_VALUE = {delivery.value: delivery for delivery in Delivery}

SERVER_KEYS = frozenset({"id", "pid", "client", "thread", "entryPoint"})
COMMAND_KEYS = frozenset({"command", "cwd", "thread", "reason", "options", "offers"})
FACT_KEYS = frozenset({"factId", "subject", "name", "value", "source", "proposedBy"})
QUESTION_KEYS = frozenset({"question", "options", "freeText"})
TOOL_KEYS = frozenset({"tool", "input", "cwd", "thread", "reason", "offers"})
REQUEST_KEYS = frozenset(
    {"format", "id", "kind", "filedAt", "expiresAt", "server", "title", "body", "binding"}
    | {"bindingDigest"}
)
ANSWER_KEYS = frozenset(
    {"format", "id", "kind", "decision", "bindingDigest", "answeredAt", "via", "pid", "user"}
    | {"text", "reason", "width"}
)
SETTLED_KEYS = frozenset(
    {"format", "id", "kind", "outcome", "settledAt", "by", "decision", "result", "reason"}
    | {"delivery"}
)


def _object(data: Any, keys: frozenset[str]) -> dict[str, Any]:
    if type(data) is not dict or not data.keys() <= keys:
        raise _NotPlain
    return data


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _NotPlain
    return value


def _text_or_none(value: Any) -> str | None:
    if value is not None and type(value) is not str:
        raise _NotPlain
    return value


def _id(value: Any) -> str:
    if type(value) is not str or not is_valid_id(value):
        raise _NotPlain
    return value


def _pid(value: Any) -> int:
    if type(value) is not int or not 1 <= value <= PID_MAX:
        raise _NotPlain
    return value


def _digest(value: Any) -> str:
    if type(value) is not str or _DIGEST_RE.fullmatch(value) is None:
        raise _NotPlain
    return value


def _format(data: dict[str, Any]) -> int:
    version = data.get("format", FORMAT)
    if type(version) is not int:  # `true` equals 1, and is no format
        raise _NotPlain
    return version


def _time(value: Any) -> datetime:
    return parse_time(_text(value))  # ValueError, OverflowError: the converter explains


# Plain servers already structured, by their fields' values: the requests of one asker name
# the same server, and a listing of 10,000 of them checked and built it 10,000 times (~1.2 µs
# each). A key is looked up only once its values' types are exactly the ones a plain server
# holds (True equals 1 and hashes as 1: a `"pid": true` must never find a cached pid 1).
PLAIN_SERVER_CACHE_SIZE = 256
_PLAIN_SERVERS: dict[tuple[str, int, str | None, str | None, str | None], Server] = {}


def _plain_server(data: Any) -> Server:
    # The checks written out, not called: a listing of 10,000 requests structures 10,000
    # servers and bindings, and a call per field was most of their time.
    if type(data) is not dict or not data.keys() <= SERVER_KEYS:
        raise _NotPlain
    server_id = data["id"]
    pid = data["pid"]
    client = data.get("client")
    thread = data.get("thread")
    entry_point = data.get("entryPoint")
    if (
        type(server_id) is not str
        or type(pid) is not int
        or (client is not None and type(client) is not str)
        or (thread is not None and type(thread) is not str)
        or (entry_point is not None and type(entry_point) is not str)
    ):
        raise _NotPlain
    key = (server_id, pid, client, thread, entry_point)
    server = _PLAIN_SERVERS.get(key)
    if server is not None:
        return server
    if not is_valid_id(server_id) or not 1 <= pid <= PID_MAX:
        raise _NotPlain
    server = Server(id=server_id, pid=pid, client=client, thread=thread, entry_point=entry_point)
    if len(_PLAIN_SERVERS) >= PLAIN_SERVER_CACHE_SIZE:
        _PLAIN_SERVERS.clear()
    _PLAIN_SERVERS[key] = server
    return server


def _plain_command(data: Any) -> CommandBinding:
    if type(data) is not dict or not data.keys() <= COMMAND_KEYS:
        raise _NotPlain
    command = data["command"]
    cwd = data["cwd"]
    thread = data.get("thread")
    reason = data.get("reason")
    options = data.get("options")
    offers = data.get("offers")
    if (
        type(command) is not str
        or type(cwd) is not str
        or (thread is not None and type(thread) is not str)
        or (reason is not None and type(reason) is not str)
        or (options is not None and type(options) is not dict)
    ):
        raise _NotPlain
    if offers is not None:
        parse_offers(offers)  # ValueError: the converter explains
    return from_fields(CommandBinding, (command, cwd, thread, reason, options, offers, NO_EXTRA))


def _plain_fact(data: Any) -> FactBinding:
    data = _object(data, FACT_KEYS)
    return FactBinding(
        fact_id=_text(data["factId"]),
        subject=_text(data["subject"]),
        name=_text(data["name"]),
        value=_text(data["value"]),
        source=_text(data["source"]),
        proposed_by=_text(data["proposedBy"]),
    )


def _plain_question(data: Any) -> QuestionBinding:
    data = _object(data, QUESTION_KEYS)
    options = data.get("options")
    if options is not None:
        if type(options) is not list or not all(type(item) is str for item in options):
            raise _NotPlain
        options = tuple(options)
    free_text = data.get("freeText", True)
    if type(free_text) is not bool:
        raise _NotPlain
    return QuestionBinding(question=_text(data["question"]), options=options, free_text=free_text)


def _plain_tool(data: Any) -> ToolBinding:
    data = _object(data, TOOL_KEYS)
    tool_input = data["input"]
    if type(tool_input) is not dict:  # its keys are strings: JSON's are
        raise _NotPlain
    offers = data.get("offers")
    if offers is not None:
        parse_offers(offers)  # ValueError: the converter explains
    return ToolBinding(
        tool=_text(data["tool"]),
        input=tool_input,
        cwd=_text(data["cwd"]),
        thread=_text_or_none(data.get("thread")),
        reason=_text_or_none(data.get("reason")),
        offers=offers,
    )


_PLAIN_BINDING: dict[Kind, Callable[[Any], Binding]] = {
    Kind.COMMAND: _plain_command,
    Kind.FACT: _plain_fact,
    Kind.QUESTION: _plain_question,
    Kind.TOOL: _plain_tool,
}


def _plain_request(data: Any) -> Request:
    if type(data) is not dict or not data.keys() <= REQUEST_KEYS:
        raise _NotPlain
    kind = _KIND_BY_VALUE[_text(data.get("kind", _COMMAND))]
    request_id = data["id"]
    filed_at = data["filedAt"]
    expires_at = data["expiresAt"]
    title = data["title"]
    body = data["body"]
    binding_digest = data["bindingDigest"]
    if (
        type(request_id) is not str
        or not is_valid_id(request_id)
        or type(filed_at) is not str
        or (expires_at is not None and type(expires_at) is not str)
        or type(title) is not str
        or type(body) is not str
        or type(binding_digest) is not str
        or _DIGEST_RE.fullmatch(binding_digest) is None
    ):
        raise _NotPlain
    # parse_time's ValueError or OverflowError: the converter explains.
    return from_fields(  # see pending._records.from_fields
        Request,
        (
            request_id,
            kind,
            parse_time(filed_at),
            None if expires_at is None else parse_time(expires_at),
            _plain_server(data["server"]),
            title,
            body,
            _PLAIN_BINDING[kind](data["binding"]),
            binding_digest,
            _format(data),
            NO_EXTRA,  # extra: none (a key not known is no plain record's)
            False,  # legacy: a legacy request is read apart (is_legacy)
        ),
    )


def _plain_answer(data: Any) -> Answer:
    data = _object(data, ANSWER_KEYS)
    return Answer(
        format=_format(data),
        id=_id(data["id"]),
        kind=_KIND_BY_VALUE[_text(data["kind"])],
        decision=_text(data["decision"]),
        binding_digest=_digest(data["bindingDigest"]),
        answered_at=_time(data["answeredAt"]),
        via=_text(data["via"]),
        pid=_pid(data["pid"]),
        user=_text(data["user"]),
        text=_text_or_none(data.get("text")),
        reason=_text_or_none(data.get("reason")),
        width=_width_or_none(data.get("width")),
    )


def _width_or_none(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    parse_width(value)  # ValueError: the converter explains
    return dict(value)


def _plain_settled(data: Any) -> Settled:
    data = _object(data, SETTLED_KEYS)
    delivery = data.get("delivery")
    return Settled(
        format=_format(data),
        id=_id(data["id"]),
        kind=_KIND_BY_VALUE[_text(data["kind"])],
        outcome=_OUTCOME_BY_VALUE[_text(data["outcome"])],
        settled_at=_time(data["settledAt"]),
        by=_text(data["by"]),
        decision=_text_or_none(data.get("decision")),
        result=_text_or_none(data.get("result")),
        reason=_text_or_none(data.get("reason")),
        delivery=None if delivery is None else _DELIVERY_BY_VALUE[_text(delivery)],
    )


_PLAIN_FROM_JSON: dict[type[Any], Callable[[Any], Any]] = {
    Request: _plain_request,
    Answer: _plain_answer,
    Settled: _plain_settled,
    Server: _plain_server,
    CommandBinding: _plain_command,
    FactBinding: _plain_fact,
    QuestionBinding: _plain_question,
    ToolBinding: _plain_tool,
}


def _server_to_json(server: Server) -> dict[str, Any]:
    return {
        "id": server.id,
        "pid": server.pid,
        "client": server.client,
        "thread": server.thread,
        "entryPoint": server.entry_point,
    }


def _command_to_json(binding: CommandBinding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "command": binding.command,
        "cwd": binding.cwd,
        "thread": binding.thread,
        "reason": binding.reason,
    }
    if binding.options is not None:
        data["options"] = binding.options
    if binding.offers is not None:
        data["offers"] = binding.offers
    return data


def _fact_to_json(binding: FactBinding) -> dict[str, Any]:
    return {
        "factId": binding.fact_id,
        "subject": binding.subject,
        "name": binding.name,
        "value": binding.value,
        "source": binding.source,
        "proposedBy": binding.proposed_by,
    }


def _question_to_json(binding: QuestionBinding) -> dict[str, Any]:
    return {
        "question": binding.question,
        "options": None if binding.options is None else list(binding.options),
        "freeText": binding.free_text,
    }


def _tool_to_json(binding: ToolBinding) -> dict[str, Any]:
    data = {
        "tool": binding.tool,
        "input": binding.input,
        "cwd": binding.cwd,
        "thread": binding.thread,
        "reason": binding.reason,
    }
    if binding.offers is not None:
        data["offers"] = binding.offers
    return data


def _time_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else format_time(moment)


# A request's server and binding are written by to_json in turn: either may carry unknown
# keys, which only the converter writes back.
def _request_to_json(request: Request) -> dict[str, Any]:
    return {
        "format": request.format,
        "id": request.id,
        "kind": request.kind.value,
        "filedAt": format_time(request.filed_at),
        "expiresAt": _time_or_none(request.expires_at),
        "server": to_json(request.server),
        "title": request.title,
        "body": request.body,
        "binding": to_json(request.binding),
        "bindingDigest": request.binding_digest,
    }


def _answer_to_json(answer: Answer) -> dict[str, Any]:
    return {
        "format": answer.format,
        "id": answer.id,
        "kind": answer.kind.value,
        "decision": answer.decision,
        "bindingDigest": answer.binding_digest,
        "answeredAt": format_time(answer.answered_at),
        "via": answer.via,
        "pid": answer.pid,
        "user": answer.user,
        "text": answer.text,
        "reason": answer.reason,
        **({"width": answer.width} if answer.width is not None else {}),
    }


def _settled_to_json(settled: Settled) -> dict[str, Any]:
    return {
        "format": settled.format,
        "id": settled.id,
        "kind": settled.kind.value,
        "outcome": settled.outcome.value,
        "settledAt": format_time(settled.settled_at),
        "by": settled.by,
        "decision": settled.decision,
        "result": settled.result,
        "reason": settled.reason,
        "delivery": None if settled.delivery is None else settled.delivery.value,
    }


# Records written on every round trip or shown in every listing: a command that files, answers
# or settles one loads no cattrs (its import and the converter's build cost a cold start
# ~20 ms). The rest (and any record carrying unknown keys, which must be written back
# untouched) go through the converter; tests/test_convert.py holds the two to the same bytes.
_PLAIN_TO_JSON: dict[type[Any], Callable[[Any], dict[str, Any]]] = {
    Request: _request_to_json,
    Answer: _answer_to_json,
    Settled: _settled_to_json,
    Server: _server_to_json,
    CommandBinding: _command_to_json,
    FactBinding: _fact_to_json,
    QuestionBinding: _question_to_json,
    ToolBinding: _tool_to_json,
}


# --- legacy records ------------------------------------------------------------------------

# What an earlier build's request is titled, where it left the title out: how earlier builds
# titled each kind (a fact of their format; a kind they never had has no legacy record).
LEGACY_TITLES = {
    Kind.COMMAND: "wisp: run a command?",
    Kind.FACT: "wisp: keep as a permanent fact?",
    Kind.QUESTION: "wisp: a question for you",
}
# A fact binding's `proposedBy` where an earlier build left it out (the seeds name none).
LEGACY_PROPOSER = "unknown"
# Placeholders that pass the strict field checks while the rest of a legacy record is
# structured; the record then holds UNKNOWN_SERVER_ID / UNKNOWN_PID in their place.
_PLACEHOLDER_SERVER_ID = "00000000"
_PLACEHOLDER_PID = 1


def is_legacy(raw: Any) -> bool:
    """Whether a decoded request was written by an earlier build: it has no `format`."""
    return isinstance(raw, dict) and "format" not in raw


def legacy_request(raw: Any, *, kind: Kind, file_time: datetime) -> Request:
    """An earlier build's request, read leniently but never unsafely; raises DecodeError.

    Only *absence* is forgiven, never a wrong value: every field present is checked as in a
    current record. What is absent is filled in: `kind` from the file name (*kind*),
    `filedAt` from the file's time (*file_time*), `expiresAt` as none, `server` (or its `id`
    or `pid`) as unknown, `title` and `body` from the binding, a fact's `proposedBy` as
    unknown, and `bindingDigest` as the digest of the binding exactly as read: the digest an
    answer to it is bound to, and the one the earlier build's asker will compare.
    """
    if not isinstance(raw, dict):
        raise DecodeError(f"expected an object, got {type(raw).__name__}")
    binding = raw.get("binding")
    if not isinstance(binding, dict):
        raise DecodeError("binding: a request needs its binding (an object)")
    data = dict(raw)
    data.setdefault("kind", kind.value)
    data.setdefault("filedAt", format_time(file_time))
    data.setdefault("expiresAt", None)
    data.setdefault("bindingDigest", digest(binding))
    data.setdefault("title", "")
    data.setdefault("body", "")
    server = data.setdefault("server", {})
    if not isinstance(server, dict):
        raise DecodeError(f"server: expected an object, got {type(server).__name__}")
    data["server"] = {
        "id": _PLACEHOLDER_SERVER_ID,
        "pid": _PLACEHOLDER_PID,
        **server,
    }
    if data["kind"] == Kind.FACT.value:
        data["binding"] = {"proposedBy": LEGACY_PROPOSER, **binding}
    request = from_json(data, Request)
    if request.kind not in LEGACY_TITLES:
        raise DecodeError(f"no earlier build wrote {request.kind} requests: it needs its format")
    title = request.title if "title" in raw else LEGACY_TITLES[request.kind]
    body = request.body if "body" in raw else legacy_body(request.binding)
    return request._replace(
        title=title,
        body=body,
        legacy=True,
        server=request.server._replace(
            id=request.server.id if "id" in server else UNKNOWN_SERVER_ID,
            pid=request.server.pid if "pid" in server else UNKNOWN_PID,
        ),
    )


def legacy_body(binding: Binding) -> str:
    """What the person is shown of a legacy request that carried no body: its binding."""
    if isinstance(binding, CommandBinding):
        return f"{binding.command} (in {binding.cwd})"
    if isinstance(binding, FactBinding):
        return f"{binding.subject} {binding.name} = {binding.value}"
    if isinstance(binding, ToolBinding):  # never legacy (legacy_request refuses it); for mypy
        return f"{binding.tool} (in {binding.cwd})"
    return binding.question


def _explain(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        lines = cattrs.transform_error(exc, path="record", format_exception=_describe)
        return "; ".join(lines[:3])
    return str(exc) or type(exc).__name__


def _describe(exc: BaseException, type_: type | None) -> str:
    from cattrs.v import format_exception

    if isinstance(exc, _Refused):
        return str(exc)
    return format_exception(exc, type_)


def binding_digest(binding: Binding) -> str:
    """The digest of a binding record, as it is written to disk."""
    return digest(to_json(binding))
