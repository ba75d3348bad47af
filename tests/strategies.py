"""Hypothesis strategies for the channel's records."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import attrs
from hypothesis import strategies as st

from pending import (
    FORMAT,
    Answer,
    CommandBinding,
    Delivery,
    FactBinding,
    Group,
    Kind,
    Outcome,
    QuestionBinding,
    Request,
    Server,
    Settled,
    ToolBinding,
    binding_digest,
)
from pending._ids import ID_MAX_CHARS, ID_MIN_CHARS

ids = st.text("0123456789abcdef", min_size=ID_MIN_CHARS, max_size=ID_MAX_CHARS)
# Any text JSON can carry (no lone surrogates), including controls and bidi characters.
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
opt_texts = st.none() | texts
times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts
extras = st.dictionaries(
    st.text("xyzqw", min_size=3, max_size=8).map(lambda k: "x" + k), json_scalars, max_size=3
)

# What a command or tool request offers (pending._offers), and how wide an answer approves.
_words = st.lists(st.text("abcnpmtesgi-", min_size=1, max_size=6), min_size=1, max_size=3)
_paths = st.text("abc/._", max_size=12).map(lambda p: "/" + p)
_wide_scopes = st.lists(st.sampled_from(["session", "project", "always"]), min_size=1, unique=True)
widths = st.one_of(
    st.builds(lambda w: {"name": "command", "prefix": w}, _words),
    st.builds(lambda p: {"name": "file", "path": p}, _paths),
    st.builds(lambda p: {"name": "project", "path": p}, _paths),
)
offers = (
    st.none()
    | st.just(
        {"mustAsk": ["it reaches the network"], "widths": [{"name": "exact", "scopes": ["once"]}]}
    )
    | st.builds(
        lambda wide, scopes: {
            "mustAsk": [],
            "widths": [
                {"name": "exact", "scopes": ["once", "session", "project", "always"]},
                *({**w, "scopes": scopes} for w in wide),
            ],
        },
        st.lists(widths, max_size=3, unique_by=lambda w: json.dumps(w, sort_keys=True)),
        _wide_scopes,
    )
)

servers = st.builds(
    Server,
    id=ids,
    pid=st.integers(1, 2**22),
    client=opt_texts,
    thread=opt_texts,
    entry_point=opt_texts,
    extra=extras,
)
command_bindings = st.builds(
    CommandBinding,
    command=texts,
    cwd=texts,
    thread=opt_texts,
    reason=opt_texts,
    options=st.none(),
    offers=offers,
    extra=extras,
)
fact_bindings = st.builds(
    FactBinding,
    fact_id=texts,
    subject=texts,
    name=texts,
    value=texts,
    source=texts,
    proposed_by=texts,
    extra=extras,
)
question_bindings = st.builds(
    QuestionBinding,
    question=texts,
    options=st.none() | st.lists(texts, max_size=4).map(tuple),
    free_text=st.booleans(),
    extra=extras,
)
# A tool's arguments: any JSON object, nested a few levels (its keys any text).
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
tool_bindings = st.builds(
    ToolBinding,
    tool=texts,
    input=st.dictionaries(texts, json_values, max_size=4),
    cwd=texts,
    thread=opt_texts,
    reason=opt_texts,
    offers=offers,
    extra=extras,
)
BINDINGS = {
    Kind.COMMAND: command_bindings,
    Kind.FACT: fact_bindings,
    Kind.QUESTION: question_bindings,
    Kind.TOOL: tool_bindings,
}


@st.composite
def requests(draw: st.DrawFn, kind: Kind | None = None) -> Request:
    kind = kind or draw(st.sampled_from(Kind))
    binding = draw(BINDINGS[kind])
    return Request(
        id=draw(ids),
        kind=kind,
        filed_at=draw(times),
        expires_at=draw(st.none() | times),
        server=draw(servers),
        title=draw(texts),
        body=draw(texts),
        binding=binding,
        binding_digest=binding_digest(binding),
        extra=draw(extras),
    )


answers = st.builds(
    Answer,
    id=ids,
    kind=st.sampled_from(Kind),
    decision=st.sampled_from(["once", "no", "keep", "drop", "answer", "timed-out"]),
    binding_digest=st.text("0123456789abcdef", min_size=64, max_size=64),
    answered_at=times,
    via=st.sampled_from(["cli", "tui", "relay", "mcp", "asker", "sweep"]),
    pid=st.integers(1, 2**22),
    user=texts,
    text=opt_texts,
    reason=opt_texts,
    width=st.none() | widths,
    format=st.just(FORMAT),
    extra=extras,
)
settleds = st.builds(
    Settled,
    id=ids,
    kind=st.sampled_from(Kind),
    outcome=st.sampled_from(Outcome),
    settled_at=times,
    by=texts,
    decision=opt_texts,
    result=opt_texts,
    reason=opt_texts,
    delivery=st.none() | st.sampled_from(Delivery),
    format=st.just(FORMAT),
    extra=extras,
)


@st.composite
def groups(draw: st.DrawFn) -> Group:
    """One ID's files as a reader could find them: any of the three may be missing, and the
    answer and outcome share the request's ID and kind (a slot's contents are otherwise free)."""
    request = draw(st.none() | requests())
    request_id = request.id if request is not None else draw(ids)
    kind = request.kind if request is not None else draw(st.sampled_from(Kind))
    answer = draw(st.none() | answers.map(lambda a: a._replace(id=request_id, kind=kind)))
    settled = draw(st.none() | settleds.map(lambda s: s._replace(id=request_id, kind=kind)))
    return Group(id=request_id, request=request, answer=answer, settled=settled)


# --- hostile edits of a record's JSON (tests/test_fuzz_records.py) ------------------------


@attrs.frozen
class Raw:
    """Bytes spliced into a record's JSON text as they are: what `json.dumps` will not write
    (NaN, an infinite number, a lone surrogate, bytes that are not UTF-8, a 5000-digit int)."""

    data: bytes


def _nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


RAW_VALUES = [
    Raw(b"NaN"),
    Raw(b"Infinity"),
    Raw(b"-Infinity"),
    Raw(b"1e999"),
    Raw(b"-1e400"),
    Raw(b"1" + b"0" * 5000),
    Raw(b'"\xff\xfe"'),
    Raw(b'"caf\xe9"'),
    Raw(b'"\\ud800"'),
    Raw(b'"x\\udfffy"'),
]
# Values JSON can carry that a field may or may not take: wrong types, edge numbers, IDs good
# and bad, zoned and unzoned and out-of-range times, enum spellings, control and bidi text,
# containers shallow and absurdly deep, and a string over the record size cap.
JSON_VALUES: list[object] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    7,
    2**31 - 1,
    2**31,
    2**63,
    -(2**63),
    10**30,
    1.5,
    -0.0,
    1e300,
    "",
    " ",
    "x",
    "0",
    "a1b2c3d4",
    "A1B2C3D4",
    "a1b2c3d4" * 5,
    "../../etc/passwd",
    "a1b2c3d4/../x",
    "\u202egnp.exe",
    "\x1b]0;owned\x07",
    "\x00",
    "é" * 1000,
    "x" * 70_000,
    "2026-11-29T12:00:00Z",
    "2026-11-29T12:00:00",
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00",
    "command",
    "fact",
    "question",
    "answered",
    "stale",
    "watched",
    "once",
    "0" * 64,
    "F" * 64,
    [],
    [1],
    ["a"],
    ["staging", 1],
    [[["x"]]],
    {},
    {"a": 1},
    {"id": "a1b2c3d4", "pid": 1},
    _nested(3),
    _nested(40),
]
hostile_values = (
    st.sampled_from(JSON_VALUES)
    | st.sampled_from(RAW_VALUES)
    | st.integers()
    | texts
    | st.floats(allow_nan=False, allow_infinity=False)
)

JsonPath = tuple[str | int, ...]


@attrs.frozen
class Edit:
    """One change to a record's JSON tree: at *path*, replace the value, delete it (in an
    object), or add *key* (to an object)."""

    path: JsonPath
    action: str  # "replace" | "delete" | "add"
    value: object = None
    key: str | None = None


def paths_of(tree: object, path: JsonPath = ()) -> list[JsonPath]:
    """Every path into a JSON tree, the root's included."""
    found = [path]
    if isinstance(tree, dict):
        for key, value in tree.items():
            found.extend(paths_of(value, (*path, key)))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            found.extend(paths_of(value, (*path, index)))
    return found


def _at(tree: object, path: JsonPath) -> object:
    for step in path:
        tree = tree[step]  # type: ignore[index]
    return tree


@st.composite
def edits(draw: st.DrawFn, tree: object) -> Edit:
    """A hostile edit anywhere in *tree*, at any depth."""
    path = draw(st.sampled_from(paths_of(tree)))
    actions = ["replace"]
    if path and isinstance(_at(tree, path[:-1]), dict):
        actions.append("delete")
    if isinstance(_at(tree, path), dict):
        actions.append("add")
    action = draw(st.sampled_from(actions))
    if action == "delete":
        return Edit(path=path, action=action)
    key = draw(st.sampled_from(["xNew", "extra", "kind", "id"])) if action == "add" else None
    return Edit(path=path, action=action, value=draw(hostile_values), key=key)


def apply_edit(tree: Any, edit: Edit) -> Any:
    """*tree* with *edit* made, as a fresh copy (*tree* is left as it was)."""
    tree = json.loads(json.dumps(tree))
    if not edit.path and edit.action == "replace":
        return edit.value
    *parents, last = edit.path if edit.action != "add" else (*edit.path, edit.key)
    holder = tree
    for step in parents:
        holder = holder[step]
    if edit.action == "delete":
        del holder[last]
    else:
        holder[last] = edit.value
    return tree


# The relay's lines: bytes without a newline (some with a trailing CR, some blank), and
# the points a stream of them is cut at as it arrives.
relay_lines = st.lists(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")) | st.just(b"\r") | st.just(b""),
    max_size=12,
)
chunkings = st.lists(st.integers(0, 10_000), max_size=8)


# --- hostile directory entries (tests/test_hostile_entries.py) -----------------------------

# What can sit in a slot instead of a record this build wrote: links of every sort, special
# files, directories, and bytes that are no record.
ENTRY_KINDS = (
    "symlink-to-good",  # a symlink to a perfectly good record elsewhere
    "symlink-dangling",
    "symlink-loop",
    "fifo",  # a reader that opened it blocking would hang
    "directory",
    "hardlink-other-id",  # a hard link to another request's record (its id disagrees)
    "hardlink-three",  # a record with three links (one more than publication makes)
    "garbage",  # bytes that are not JSON
    "empty",
    "truncated",  # half a good record
)
# Every slot of a group: the three request kinds, the answer, the outcome.
SLOT_SUFFIXES = (".request.json", ".fact.json", ".question.json", ".answer.json", ".settled.json")


@attrs.frozen
class HostileEntry:
    """One hostile entry: in the slot *suffix* of the group *target* ("live": a request a
    live asker waits on; "fresh": an ID nothing else uses), of the sort *kind*."""

    target: str
    suffix: str
    kind: str


hostile_entries = st.lists(
    st.builds(
        HostileEntry,
        target=st.sampled_from(["live", "fresh-1", "fresh-2"]),
        suffix=st.sampled_from(SLOT_SUFFIXES),
        kind=st.sampled_from(ENTRY_KINDS),
    ).filter(lambda e: (e.target, e.suffix) != ("live", ".request.json")),  # the live one's
    min_size=1,
    max_size=6,
    unique_by=lambda e: (e.target, e.suffix),
)
