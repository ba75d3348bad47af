"""A JSON object's text edited in place: the person's layout kept, only what changes rewritten.

`wisp agents setup` and `remove` change a few members of a person's config file. Parsing it
and dumping it again would re-lay every line (their one-line objects spread out, their
indentation replaced), so the diff shows lines they never touched. :func:`splice` instead
compares the old data with the new and edits the text at the deepest object that changes: a
member whose value changes has that value rewritten, a new member is added after the object's
last one (in the object's own layout: its indentation, its separators, one line or many), a
member that goes is taken out with its comma. Every other byte stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"
DEFAULT_UNIT = "  "  # the indentation step of an object with nothing to match (an empty file)


@attrs.frozen(kw_only=True)
class _Member:
    key: str
    start: int  # the key's opening quote
    key_end: int  # just past the key's closing quote
    value_start: int
    value_end: int
    node: _Object | None  # the value's members, when it is an object


@attrs.frozen(kw_only=True)
class _Object:
    start: int  # its `{`
    end: int  # just past its `}`
    members: tuple[_Member, ...]


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _parse_object(text: str, i: int) -> _Object:
    """The object whose `{` is at *i*, with where each member lies (the text is JSON)."""
    start = i
    members: list[_Member] = []
    i = _skip(text, i + 1)
    if text[i] == "}":
        return _Object(start=start, end=i + 1, members=())
    while True:
        key, key_end = _DECODER.raw_decode(text, i)
        at = _skip(text, _skip(text, key_end) + 1)  # past the colon
        node = _parse_object(text, at) if text[at] == "{" else None
        end = node.end if node is not None else _DECODER.raw_decode(text, at)[1]
        members.append(
            _Member(key=key, start=i, key_end=key_end, value_start=at, value_end=end, node=node)
        )
        i = _skip(text, end)
        if text[i] == "}":
            return _Object(start=start, end=i + 1, members=tuple(members))
        i = _skip(text, i + 1)  # past the comma


def root(text: str) -> _Object:
    """Where the text's top-level object lies (the text holds one JSON object)."""
    return _parse_object(text, _skip(text, 0))


def same(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same JSON (`true` is not `1`, `1` not `1.0`)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _line_indent(text: str, i: int) -> str:
    """The whitespace that starts the line *i* is on."""
    line = text.rfind("\n", 0, i) + 1
    j = line
    while j < len(text) and text[j] in " \t":
        j += 1
    return text[line:j]


@attrs.frozen(kw_only=True)
class _Layout:
    """How an object's members are laid out: on lines of their own or one line."""

    multiline: bool
    indent: str  # a member's indentation (multi-line)
    separator: str  # between two members
    colon: str  # between a key and its value
    closing: str  # before the `}` (multi-line)


def _layout(text: str, obj: _Object, parent_multiline: bool, is_root: bool) -> _Layout:
    base = _line_indent(text, obj.start)
    ms = obj.members
    if not ms:
        multiline = is_root or parent_multiline
        indent = base + DEFAULT_UNIT
        return _Layout(
            multiline=multiline,
            indent=indent,
            separator=",\n" + indent if multiline else ", ",
            colon=": ",
            closing="\n" + base if multiline else "",
        )
    first = ms[0]
    multiline = "\n" in text[obj.start : first.start]
    indent = _line_indent(text, first.start) if multiline else ""
    if len(ms) > 1:
        separator = text[ms[-2].value_end : ms[-1].start]
    else:
        separator = ",\n" + indent if multiline else ", "
    last = ms[-1]
    return _Layout(
        multiline=multiline,
        indent=indent,
        separator=separator,
        colon=text[first.key_end : first.value_start] or ": ",
        closing=text[last.value_end : obj.end - 1],
    )


def _unit(text: str, obj: _Object, layout: _Layout) -> str:
    base = _line_indent(text, obj.start)
    if layout.multiline and layout.indent.startswith(base) and len(layout.indent) > len(base):
        return layout.indent[len(base) :]
    return DEFAULT_UNIT


def _dump(value: Any, *, multiline: bool, indent: str, unit: str, colon: str) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", colon))
    text = json.dumps(value, ensure_ascii=False, indent=unit, separators=(",", colon))
    return text.replace("\n", "\n" + indent)


Edit = tuple[int, int, str]  # replace text[start:end] with the string


def _edits(
    text: str,
    obj: _Object,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    parent_multiline: bool,
    is_root: bool = False,
) -> list[Edit]:
    layout = _layout(text, obj, parent_multiline, is_root)
    unit = _unit(text, obj, layout)
    ms = obj.members
    # JSON's last duplicate wins: that one is edited (the others stay as they are, unread),
    # and every one of a key that goes, goes.
    last = {m.key: i for i, m in enumerate(ms)}
    gone = [m.key not in new for m in ms]
    out: list[Edit] = []
    for i, m in enumerate(ms):
        if gone[i] or last[m.key] != i or same(old[m.key], new[m.key]):
            continue
        value = new[m.key]
        if m.node is not None and isinstance(value, Mapping):
            out += _edits(text, m.node, old[m.key], value, parent_multiline=layout.multiline)
            continue
        was = text[m.value_start : m.value_end]
        multiline = "\n" in was or (was[0] not in "[{" and layout.multiline)
        indent = _line_indent(text, m.start)
        out.append(
            (
                m.value_start,
                m.value_end,
                _dump(value, multiline=multiline, indent=indent, unit=unit, colon=layout.colon),
            )
        )
    added = [
        json.dumps(k, ensure_ascii=False)
        + layout.colon
        + _dump(v, multiline=layout.multiline, indent=layout.indent, unit=unit, colon=layout.colon)
        for k, v in new.items()
        if k not in old
    ]
    kept = [i for i in range(len(ms)) if not gone[i]]
    if not kept:  # nothing of it stays: its members are written anew
        if not ms and not added:
            return out
        inner = layout.separator.join(added)
        if inner and layout.multiline:
            inner = "\n" + layout.indent + inner + layout.closing
        return [*out, (obj.start + 1, obj.end - 1, inner)]
    tail = kept[-1]  # the members after the last kept one go with the comma before them
    for i in range(tail):
        if gone[i]:
            out.append((ms[i].start, ms[i + 1].start, ""))
    end = ms[-1].value_end if tail < len(ms) - 1 else ms[tail].value_end
    insert = "".join(layout.separator + a for a in added)
    if insert or end != ms[tail].value_end:
        out.append((ms[tail].value_end, end, insert))
    return out


def splice(text: str | None, new: Mapping[str, Any]) -> str:
    """*text* (a JSON object's text) edited so that it holds *new*, its layout kept; with no
    text (or only whitespace), *new* laid out as setup lays a new file."""
    if text is None or not text.strip():
        return json.dumps(new, indent=len(DEFAULT_UNIT), ensure_ascii=False) + "\n"
    old = json.loads(text)
    edits = _edits(text, root(text), old, new, parent_multiline=True, is_root=True)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
