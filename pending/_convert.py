"""The one converter: records to JSON and back, strictly.

JSON keys are camelCase; keys a record does not know are kept in its ``extra`` and written
back untouched. Decoding is defensive: strict UTF-8, no NaN or Infinity, no duplicate keys, no
lone surrogates, bounded nesting, and field types checked exactly (``"1"`` is not an int).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from pending._bindings import Binding, CommandBinding, FactBinding, QuestionBinding
from pending._clock import format_time, parse_time
from pending._kinds import BINDING_TYPES, Delivery, Kind, Outcome
from pending._records import FORMAT, Answer, Request, Server, Settled

T = TypeVar("T")

MAX_JSON_DEPTH = 16  # records nest 3 deep; anything far deeper is hostile, not a newer format

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")


class DecodeError(ValueError):
    """A record's bytes are not a record this build will act on. The message says why."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# --- strict JSON -------------------------------------------------------------------------


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DecodeError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    raise DecodeError(f"{name} is not a JSON number")


def _check_depth(value: Any) -> None:
    """Refuse absurd nesting, iteratively (no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > MAX_JSON_DEPTH:
            raise DecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


def _check_surrogates(value: Any) -> None:
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(_SURROGATE_RE.search(key) for key in item):
                raise DecodeError("a key holds a lone surrogate")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and _SURROGATE_RE.search(item):
            raise DecodeError("a string holds a lone surrogate")


def loads_strict(data: bytes) -> Any:
    """Decode JSON bytes as the channel accepts them, or raise :class:`DecodeError`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_refuse_constant)
    except RecursionError:
        raise DecodeError("nested too deeply to parse") from None
    except DecodeError:
        raise
    except ValueError as exc:  # json.JSONDecodeError, and int digits over the limit
        raise DecodeError(f"not valid JSON ({exc})") from None
    if isinstance(value, (dict, list)):
        _check_depth(value)
    # Strict UTF-8 has no surrogates: a lone one can only come from a \\uD800-style escape.
    if _SURROGATE_ESCAPE_RE.search(text):
        _check_surrogates(value)
    return value


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def digest(binding: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of a binding's JSON form."""
    return hashlib.sha256(canonical_json(binding)).hexdigest()


def dumps_record(value: Mapping[str, Any]) -> bytes:
    """How records are written: indented for people, UTF-8, newline-terminated."""
    return (json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


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
    return parse_time(value)


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False)  # unknown keys go to `extra`
    for kind in (str, int, bool):
        conv.register_structure_hook(kind, _strict(kind))
    for enum in (Kind, Outcome, Delivery):
        conv.register_structure_hook(enum, _structure_enum)
    conv.register_structure_hook(datetime, _structure_time)
    conv.register_unstructure_hook(datetime, format_time)
    for cls in (Server, CommandBinding, FactBinding, QuestionBinding, Answer, Settled):
        _register_record(conv, cls)
    _register_request(conv)
    return conv


def _register_record(conv: cattrs.Converter, cls: type[Any], **extra_overrides: Any) -> None:
    """camelCase keys, unknown keys into ``extra`` and back out again."""
    fields = attrs.fields(cls)
    overrides = {f.name: override(rename=camel(f.name)) for f in fields if f.name != "extra"}
    overrides["extra"] = override(omit=True)
    overrides.update(extra_overrides)
    known = {camel(f.name) for f in fields if f.name != "extra"}
    structure = make_dict_structure_fn(cls, conv, **overrides)  # type: ignore[arg-type]
    unstructure = make_dict_unstructure_fn(cls, conv, **overrides)  # type: ignore[arg-type]

    def structure_keeping_extra(data: Any, _: Any) -> Any:
        if not isinstance(data, dict):
            raise TypeError(f"expected an object, got {type(data).__name__}")
        record = structure(data, cls)
        unknown = {key: value for key, value in data.items() if key not in known}
        return attrs.evolve(record, extra=unknown) if unknown else record

    def unstructure_with_extra(record: Any) -> dict[str, Any]:
        data = {key: value for key, value in record.extra.items() if key not in known}
        data.update(unstructure(record))
        return data

    conv.register_structure_hook(cls, structure_keeping_extra)
    conv.register_unstructure_hook(cls, unstructure_with_extra)


def _register_request(conv: cattrs.Converter) -> None:
    """A request's binding type follows its kind; a 0.16.0 request has no kind: a command."""
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


converter = _make_converter()


def to_json(record: Any) -> dict[str, Any]:
    """A record's JSON object (unknown keys it carried included)."""
    data: dict[str, Any] = converter.unstructure(record)
    return data


def from_json(data: Any, cls: type[T]) -> T:
    """Structure a decoded JSON value as *cls*, or raise :class:`DecodeError`."""
    if isinstance(data, dict):
        version = data.get("format", FORMAT)
        if version != FORMAT:
            raise DecodeError(f"format {version!r} is not one this build understands ({FORMAT})")
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise DecodeError(_explain(exc)) from None


def _explain(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        lines = cattrs.transform_error(exc, path="record")
        return "; ".join(lines[:3])
    return str(exc) or type(exc).__name__


def binding_digest(binding: Binding) -> str:
    """The digest of a binding record, as it is written to disk."""
    return digest(to_json(binding))
