"""Strict JSON, as the channel reads and writes it: what a record's bytes must be before any
field is looked at, the canonical form its digest is taken of, and how a record is written.

Only the standard library: a hook deciding a call a grant covers reads its event with
:func:`loads_strict` and loads none of the records or their converter (bench/README.md,
issue 41).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from json.encoder import (  # type: ignore[attr-defined]
    c_make_encoder,
    encode_basestring,
    encode_basestring_ascii,
)

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

MAX_JSON_DEPTH = 16  # records nest 3 deep; anything far deeper is hostile, not a newer format
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")


class DecodeError(ValueError):
    """A record's bytes are not a record this build will act on. The message says why."""


# --- strict JSON -------------------------------------------------------------------------


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) == len(pairs):  # no key twice (checked in C; the loop only to name it)
        return result
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DecodeError(f"duplicate key {key!r}")
        seen.add(key)
    raise AssertionError("unreachable: a shorter dict has a repeated key")


def _refuse_constant(name: str) -> Any:
    raise DecodeError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    # `1e999` is valid JSON that Python reads as infinity, which no record can write back.
    value = float(text)
    if not math.isfinite(value):
        raise DecodeError(f"{text[:20]} is too large to be a finite number")
    return value


def _check_depth(value: Any) -> None:
    """Refuse absurd nesting, iteratively (no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > MAX_JSON_DEPTH:
            raise DecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


@functools.cache
def _surrogate_re() -> re.Pattern[str]:
    # Compiled when first needed (a lone surrogate escaped, which real records never hold):
    # a class over 2,048 characters is ~0.4 ms of every start that reads JSON (issue 41).
    return re.compile("[\ud800-\udfff]")


def _check_surrogates(value: Any) -> None:
    surrogate = _surrogate_re()
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(surrogate.search(key) for key in item):
                raise DecodeError("a key holds a lone surrogate")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and surrogate.search(item):
            raise DecodeError("a string holds a lone surrogate")


# One decoder for every record (json.loads would build one per call when given hooks).
_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_pairs,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
)


_SCAN_ONCE: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"  # what JSON takes as whitespace (json.decoder.WHITESPACE)


def _decode(text: str) -> Any:
    """``_DECODER.decode(text)``: the same value, or the same error. A record starts with its
    value and ends with at most whitespace, so its scan is called directly, without the two
    Python calls and two whitespace matches around it (~7 ms of reading 10,000 requests);
    anything else (whitespace first, no value, data after it) is decoded as before, which
    returns or raises what it always did."""
    try:
        value, end = _SCAN_ONCE(text, 0)
    except StopIteration:
        return _DECODER.decode(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return _DECODER.decode(text)
    return value


def loads_strict(data: bytes) -> Any:
    """Decode JSON bytes as the channel accepts them, or raise :class:`DecodeError`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 (byte {exc.start})") from None
    try:
        value = _decode(text)
    except RecursionError:
        raise DecodeError("nested too deeply to parse") from None
    except DecodeError:
        raise
    except ValueError as exc:  # json.JSONDecodeError, and int digits over the limit
        raise DecodeError(f"not valid JSON ({exc})") from None
    # Each level of nesting opens with a `{` or `[` byte, so bytes with no more of them than
    # the limit cannot nest deeper: the walk is spared for every real record.
    if isinstance(value, (dict, list)) and data.count(b"{") + data.count(b"[") > MAX_JSON_DEPTH:
        _check_depth(value)
    # Strict UTF-8 has no surrogates: a lone one can only come from a \\uD800-style escape.
    # The pattern is searched only in text with an escape at all (records write non-ASCII raw:
    # most have none), a scan at memory speed where the pattern's costs ~5,000 instructions.
    if "\\u" in text and _SURROGATE_ESCAPE_RE.search(text):
        _check_surrogates(value)
    return value


# One encoder for every canonical form: json.dumps with these options builds a new one per
# call, a third of a binding digest's time (a listing of 10,000 digests 10,000 bindings).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def kept_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """*encoder*'s encode(), its C encoder built once: JSONEncoder.encode builds a new one for
    every call (and a closure, and a markers dict), two fifths of a digest's encoding of a
    command binding and as much of an audit line. It keeps no markers (no check for cycles,
    which no JSON value or record has): a cycle recurses, and is then encoded by *encoder*
    itself, which says what it is as before. Without the C encoder, *encoder*'s encode."""
    if c_make_encoder is None or encoder.indent is not None:
        return encoder.encode
    fast = c_make_encoder(
        None,  # markers
        encoder.default,
        encode_basestring_ascii if encoder.ensure_ascii else encode_basestring,
        None,  # indent
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )

    def encode(value: Any) -> str:
        try:
            return "".join(fast(value, 0))
        except RecursionError:
            return encoder.encode(value)  # nested too deep, or a cycle: as it says it

    return encode


_canonical_text = kept_encoder(_CANONICAL)


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no spaces, UTF-8."""
    return _canonical_text(value).encode("utf-8")


def _canonical_command(binding: Mapping[str, Any]) -> bytes | None:
    """``canonical_json(binding)`` for a command binding's JSON form as wisp writes it (its
    four keys, strings or null), written out: the general encoder sorts the items and walks
    them for every request a listing checks (~13,000 instructions against ~5,000 here, of a
    request's ~230,000). None for any other value: the general encoder writes that one."""
    if type(binding) is not dict or binding.keys() != _COMMAND_JSON_KEYS:
        return None
    command, cwd = binding["command"], binding["cwd"]
    reason, thread = binding["reason"], binding["thread"]
    if (
        type(command) is not str
        or type(cwd) is not str
        or (reason is not None and type(reason) is not str)
        or (thread is not None and type(thread) is not str)
    ):
        return None
    shown_reason = "null" if reason is None else encode_basestring(reason)
    shown_thread = "null" if thread is None else encode_basestring(thread)
    return (
        f'{{"command":{encode_basestring(command)},"cwd":{encode_basestring(cwd)},'
        f'"reason":{shown_reason},"thread":{shown_thread}}}'
    ).encode()


_COMMAND_JSON_KEYS = frozenset({"command", "cwd", "reason", "thread"})
_sha256: Callable[[bytes], Any] | None = None


def _load_sha256() -> Callable[[bytes], Any]:
    """sha256, loaded on first use: CPython's own (`_sha2`, `_sha256` before 3.12) where it is
    built in, else hashlib's. hashlib loads OpenSSL first, ~11 M instructions (a sixth of the
    interpreter's own start) before a hook can file its request (bench/README.md, issue 41);
    the digest is the same."""
    for name in ("_sha2", "_sha256"):
        try:
            sha256: Callable[[bytes], Any] = __import__(name).sha256
        except (ImportError, AttributeError):
            continue
        return sha256
    import hashlib

    return hashlib.sha256


def digest(binding: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of a binding's JSON form."""
    global _sha256
    if _sha256 is None:
        _sha256 = _load_sha256()
    return str(_sha256(_canonical_command(binding) or canonical_json(binding)).hexdigest())


def dumps_record(value: Mapping[str, Any]) -> bytes:
    """How records are written: indented for people, UTF-8, newline-terminated.

    Exactly what ``json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)`` writes,
    the same bytes: with an indent, json's encoder is its pure-Python one, a generator per
    level and a call per item, and every round trip writes a request and an outcome and
    answers one (issue 41). Anything but a record's plain JSON values (a non-finite float,
    a key that is not text, another type) is left to json itself, error and all."""
    try:
        text = _indented(value, "")
    except (_NotPlain, RecursionError):
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode()


class _NotPlain(Exception):
    """A value :func:`_indented` leaves to json."""


_INFINITIES = (math.inf, -math.inf)


def _indented(value: Any, pad: str) -> str:
    """*value* as json's indent=2 encoder writes it at the indent *pad* (its order of type
    tests: text, null, booleans, integers, floats, arrays, objects)."""
    if isinstance(value, str):
        return str(encode_basestring(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value or value in _INFINITIES:
            raise _NotPlain
        return float.__repr__(value)
    inner = pad + "  "
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [_indented(item, inner) for item in value]
    elif isinstance(value, dict):
        if not value:
            return "{}"
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlain
            items.append(f"{encode_basestring(key)}: {_indented(item, inner)}")
    else:
        raise _NotPlain
    opening, closing = ("[", "]") if isinstance(value, list | tuple) else ("{", "}")
    return f"{opening}\n{inner}" + f",\n{inner}".join(items) + f"\n{pad}{closing}"
