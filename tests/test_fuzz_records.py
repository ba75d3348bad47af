"""Fuzzed records: any field of a good request, answer or outcome, at any depth, made hostile.

Each example copies every good fixture into a fresh channel, edits one field of one file, and
drives the channel as its users do: a listing, a status, a watcher's snapshot, a sweep, and a
new asker filing beside it. None may raise anything but a documented refusal. Whether the edited
file must be refused is decided by this module's own reading of the record format (the design's
table of fields), not by the converter under test: a file that breaks it is skipped and reported
as a problem, left untouched by the sweep; one that still fits is read with the value it holds.

Examples: ``WISP_FUZZ_EXAMPLES`` (default 120, a few seconds); raise it for a longer hunt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, command
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import RAW_VALUES, Edit, Raw, apply_edit, edits

from pending import (
    MAX_RECORD_BYTES,
    Backend,
    Channel,
    Event,
    State,
    Subscription,
    Transition,
    UnreadableRequest,
    Watcher,
    to_json,
)
from pending.testing import FakeClock

EXAMPLES = int(os.environ.get("WISP_FUZZ_EXAMPLES", "120"))
NOW = datetime(2026, 11, 29, 12, 5, tzinfo=UTC)  # after every good fixture was written
GOOD = sorted(p for p in (FIXTURES / "good").iterdir() if p.suffix == ".json")
TARGETS = [p for p in GOOD if not p.name.endswith(".poll.json")]  # a kind nobody reads
# Native where the machine has inotify instances to spare, else polling (as in use): the
# machine is shared, and the fuzz must not fail for another process's watches.
WATCH: dict[str, Any] = {"backend": Backend.AUTO, "polling_interval_s": 0.05}
WAIT_S = 10.0  # for the watcher to deliver an event; far beyond what it takes
GOOD_IDS = {"a1b2c3d4", "b2c3d4e5", "c3d4e5f6a7", "d4e5f6a7", "e5f6a7b8", "f6a7b8c9"}

# --- the record format, as the design states it (independent of pending's converter) -------

MAX_DEPTH = 16  # the nesting a record may have (pending._json.MAX_JSON_DEPTH documents it)
PID_MAX = 2**31 - 1
_ID = re.compile(r"[0-9a-f]{8,32}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
Check = Callable[[Any], bool]


def is_str(v: Any) -> bool:
    return type(v) is str


def is_id(v: Any) -> bool:
    return is_str(v) and _ID.fullmatch(v) is not None


def is_pid(v: Any) -> bool:
    return type(v) is int and 1 <= v <= PID_MAX


def is_digest(v: Any) -> bool:
    return is_str(v) and _DIGEST.fullmatch(v) is not None


def is_time(v: Any) -> bool:
    if not is_str(v):
        return False
    try:
        moment = datetime.fromisoformat(v)
        return moment.tzinfo is not None and moment.astimezone(UTC) is not None
    except (ValueError, OverflowError):
        return False


def one_of(*values: str) -> Check:
    return lambda v: is_str(v) and v in values


def optional(check: Check) -> Check:
    return lambda v: v is None or check(v)


def is_str_list(v: Any) -> bool:
    return type(v) is list and all(is_str(item) for item in v)


# name -> (required, check); an object's other keys are kept and may hold any JSON.
Spec = dict[str, tuple[bool, Check]]
SERVER: Spec = {
    "id": (True, is_id),
    "pid": (True, is_pid),
    "client": (False, optional(is_str)),
    "thread": (False, optional(is_str)),
    "entryPoint": (False, optional(is_str)),
}
BINDINGS: dict[str, Spec] = {
    "command": {
        "command": (True, is_str),
        "cwd": (True, is_str),
        "thread": (False, optional(is_str)),
        "reason": (False, optional(is_str)),
    },
    "fact": {
        name: (True, is_str)
        for name in ("factId", "subject", "name", "value", "source", "proposedBy")
    },
    "question": {
        "question": (True, is_str),
        "options": (False, optional(is_str_list)),
        "freeText": (False, lambda v: type(v) is bool),
    },
}
FORMAT: tuple[bool, Check] = (False, lambda v: type(v) is int and v == 1)
ANSWER: Spec = {
    "format": FORMAT,
    "id": (True, is_id),
    "kind": (True, one_of("command", "fact", "question")),
    "decision": (True, is_str),
    "bindingDigest": (True, is_digest),
    "answeredAt": (True, is_time),
    "via": (True, is_str),
    "pid": (True, is_pid),
    "user": (True, is_str),
    "text": (False, optional(is_str)),
    "reason": (False, optional(is_str)),
}
SETTLED: Spec = {
    "format": FORMAT,
    "id": (True, is_id),
    "kind": (True, one_of("command", "fact", "question")),
    "outcome": (True, one_of("answered", "timed-out", "withdrawn", "failed", "stale")),
    "settledAt": (True, is_time),
    "by": (True, is_str),
    "decision": (False, optional(is_str)),
    "result": (False, optional(is_str)),
    "reason": (False, optional(is_str)),
    "delivery": (False, optional(one_of("watched", "applied"))),
}
REQUEST_KINDS = {"request.json": "command", "fact.json": "fact", "question.json": "question"}


def fits(obj: Any, spec: Spec) -> bool:
    if type(obj) is not dict:
        return False
    return all(
        check(obj[name]) if name in obj else not required
        for name, (required, check) in spec.items()
    )


def digest(binding: Any) -> str:
    canonical = json.dumps(binding, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def has_raw(value: Any) -> bool:
    if isinstance(value, Raw):
        return True
    if isinstance(value, dict):
        return any(has_raw(v) for v in value.values())
    if isinstance(value, list):
        return any(has_raw(v) for v in value)
    return False


def readable(name: str, tree: Any, size: int) -> bool:
    """Whether a channel file *name* holding *tree* (*size* bytes) is one to act on."""
    if size > MAX_RECORD_BYTES or has_raw(tree) or depth(tree) > MAX_DEPTH:
        return False
    request_id, _, suffix = name.partition(".")
    if type(tree) is not dict or tree.get("id") != request_id:
        return False
    if suffix == "answer.json":
        return fits(tree, ANSWER)
    if suffix == "settled.json":
        return fits(tree, SETTLED)
    kind = REQUEST_KINDS[suffix]
    if "format" not in tree:
        return readable_legacy(kind, tree)
    # A request without `kind` is 0.16.0's: a command.
    if tree.get("kind", "command") != kind or not is_str(tree.get("kind", "command")):
        return False
    spec: Spec = {
        "format": FORMAT,
        "filedAt": (True, is_time),
        "expiresAt": (True, optional(is_time)),
        "server": (True, lambda v: fits(v, SERVER)),
        "title": (True, is_str),
        "body": (True, is_str),
        "binding": (True, lambda v: fits(v, BINDINGS[kind])),
        "bindingDigest": (True, is_str),
    }
    return fits(tree, spec) and tree["bindingDigest"] == digest(tree["binding"])


def readable_legacy(kind: str, tree: dict[str, Any]) -> bool:
    """An earlier build's request (no `format`): what it leaves out is forgiven (all but its
    binding, and a fact's `proposedBy` within it), what it holds is checked as ever."""
    if not is_str(tree.get("kind", kind)) or tree.get("kind", kind) != kind:
        return False
    server: Spec = {**SERVER, "id": (False, is_id), "pid": (False, is_pid)}
    binding: Spec = dict(BINDINGS[kind])
    if kind == "fact":
        binding["proposedBy"] = (False, is_str)
    spec: Spec = {
        "filedAt": (False, is_time),
        "expiresAt": (False, optional(is_time)),
        "server": (False, lambda v: fits(v, server)),
        "title": (False, is_str),
        "body": (False, is_str),
        "binding": (True, lambda v: fits(v, binding)),
        "bindingDigest": (False, is_str),
    }
    if not fits(tree, spec):
        return False
    return bool(tree.get("bindingDigest", digest(tree["binding"])) == digest(tree["binding"]))


# --- applying an edit and writing the file --------------------------------------------------


def edited(tree: Any, edit: Edit) -> Any:
    """*tree* with *edit* made (a fresh copy); a binding edit re-signs the binding, so that
    the field itself, not the digest, decides whether the request reads."""
    tree = apply_edit(tree, edit)
    if not edit.path and edit.action == "replace":
        return tree
    touched_binding = edit.path[:1] == ("binding",) and len(edit.path) + (edit.action == "add") > 1
    if touched_binding and isinstance(tree, dict) and not has_raw(tree.get("binding")):
        tree["bindingDigest"] = digest(tree["binding"])
    return tree


def encode(tree: Any) -> bytes:
    """JSON bytes of *tree*, each :class:`Raw` spliced in as it is."""
    raws: list[bytes] = []

    def mark(value: Any) -> Any:
        if isinstance(value, Raw):
            raws.append(value.data)
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    data = json.dumps(mark(tree), indent=2, ensure_ascii=False).encode()
    for index, raw in enumerate(raws):
        data = data.replace(f'"\\u0000RAW{index}\\u0000"'.encode(), raw)
    return data


@contextmanager
def fresh_channel() -> Iterator[Channel]:
    """A new channel holding every good fixture (0600, ours), on a clock just after them."""
    with tempfile.TemporaryDirectory() as home, Channel.open(home, clock=FakeClock(NOW)) as ch:
        for path in GOOD:
            shutil.copyfile(path, ch.path / path.name)
            os.chmod(ch.path / path.name, 0o600)
        yield ch


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, a timestamp equal to the same instant however it is spelt."""
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and same(v, b[k]) for k, v in a.items())
    if is_time(a) and is_time(b):
        return datetime.fromisoformat(a) == datetime.fromisoformat(b)
    return bool(json.loads(json.dumps(a)) == json.loads(json.dumps(b)))


# --- the test ---------------------------------------------------------------------------------


def wait_for_filed(subscription: Subscription[Transition], request_id: str) -> None:
    """Take transitions until *request_id*'s `filed` (bounded: a lost event fails the test)."""
    deadline = time.monotonic() + WAIT_S
    while (remaining := deadline - time.monotonic()) > 0:
        item = subscription.get(timeout=remaining)
        if isinstance(item, Transition) and (item.id, item.event) == (request_id, Event.FILED):
            return
    raise AssertionError(f"the watcher never saw {request_id} filed")


@st.composite
def cases(draw: st.DrawFn) -> tuple[Path, Edit]:
    target = draw(st.sampled_from(TARGETS))
    return target, draw(edits(json.loads(target.read_bytes())))


class TestFuzzedRecords:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(case=cases())
    def test_a_hostile_field_anywhere_is_a_problem_never_a_traceback(
        self, case: tuple[Path, Edit]
    ) -> None:
        """Listing, status, a watcher's snapshot, a sweep and a new asker all go on; the edited
        file is reported (and left as it is) exactly when the format says it is unreadable."""
        target, edit = case
        tree = edited(json.loads(target.read_bytes()), edit)
        data = encode(tree)
        expect_readable = readable(target.name, tree, len(data))
        request_id = target.name.partition(".")[0]
        event("still readable" if expect_readable else "refused")
        with (
            fresh_channel() as channel,
            Watcher(channel, **WATCH) as watching,
            channel.server() as lock,
        ):
            # Written while a watcher runs, so its event path re-reads it too; then a new
            # asker files, and once the watcher has that, it has had the edit's events.
            subscription, _ = watching.subscribe()
            path = channel.path / target.name
            path.write_bytes(data)
            filed = command(lock)
            channel.file(filed)
            wait_for_filed(subscription, filed.id)
            assert channel.status(filed.id).state is State.FILED

            listing = channel.listing()
            problems = {p.name: p.reason for p in listing.problems}
            listed = {s.id for s in listing.statuses}
            assert listed >= GOOD_IDS - {request_id} | {filed.id}  # the others go on
            if expect_readable:
                assert target.name not in problems, problems
                self._check_read(channel, target.name, tree)
            else:
                assert problems.get(target.name), f"{target.name} was not reported"
                self._check_skipped(channel, target.name, listed)

            assert {s.id for s in watching.statuses()} == listed
            with Watcher(channel, **WATCH) as starting:
                _, snapshot = starting.subscribe()
                assert {s.id for s in snapshot} == listed

            report = channel.sweep()
            if not expect_readable:
                assert path.read_bytes() == data  # never acted on, never removed
                assert target.name in {p.name for p in report.problems}

    @staticmethod
    def _check_read(channel: Channel, name: str, tree: Any) -> None:
        request_id, _, suffix = name.partition(".")
        group, problems = channel.read_group(request_id)
        assert name not in {p.name for p in problems}
        record = {"answer.json": group.answer, "settled.json": group.settled}.get(
            suffix, group.request
        )
        assert record is not None
        assert same(tree, to_json(record)), (tree, to_json(record))

    @staticmethod
    def _check_skipped(channel: Channel, name: str, listed: set[str]) -> None:
        request_id, _, suffix = name.partition(".")
        if suffix == "answer.json":
            assert channel.status(request_id).answer is None
        elif suffix == "settled.json":
            assert channel.status(request_id).settled is None
        else:
            assert request_id not in listed
            with pytest.raises(UnreadableRequest):
                channel.status(request_id)


class TestTheOracle:
    """The test's own reading of the format agrees with the fixtures it starts from."""

    @pytest.mark.parametrize("path", TARGETS, ids=lambda p: p.name)
    def test_every_good_fixture_fits_the_format(self, path: Path) -> None:
        """Unedited, each good fixture is readable by the format's rules."""
        data = path.read_bytes()
        assert readable(path.name, json.loads(data), len(data))

    @pytest.mark.parametrize("raw", RAW_VALUES, ids=lambda r: repr(r.data[:12]))
    def test_raw_values_are_spliced_as_they_are(self, raw: Raw) -> None:
        """A raw value lands in the written bytes verbatim."""
        assert raw.data in encode({"a": [raw]})
