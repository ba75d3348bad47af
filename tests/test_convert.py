"""Records to JSON and back: camelCase, unknown keys kept, strict decoding, the digest."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, command
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import (
    JSON_VALUES,
    Edit,
    Raw,
    answers,
    apply_edit,
    command_bindings,
    edits,
    fact_bindings,
    json_values,
    paths_of,
    question_bindings,
    requests,
    servers,
    settleds,
    tool_bindings,
)

from pending import (
    SYSTEM_CLOCK,
    Answer,
    Channel,
    CommandBinding,
    DecodeError,
    FactBinding,
    Kind,
    QuestionBinding,
    Request,
    Server,
    ServerLock,
    Settled,
    ToolBinding,
    binding_digest,
    format_now,
    format_time,
    from_json,
    known_json,
    loads_strict,
    to_json,
)
from pending._convert import (
    _PLAIN_FROM_JSON,
    _PLAIN_TO_JSON,
    ANSWER_KEYS,
    COMMAND_KEYS,
    FACT_KEYS,
    QUESTION_KEYS,
    REQUEST_KEYS,
    SERVER_KEYS,
    SETTLED_KEYS,
    TOOL_KEYS,
    _converter,
    _NotPlain,
    camel,
)
from pending._json import _DECODER, _decode, canonical_json, digest, dumps_record
from pending.testing import FakeClock


def round_trip(record: object, cls: type) -> object:
    return from_json(loads_strict(dumps_record(to_json(record))), cls)


ZONES = st.sampled_from(
    [
        UTC,
        timezone(timedelta(0)),
        timezone(timedelta(hours=5, minutes=30)),
        timezone(-timedelta(hours=11)),
    ]
)


class TestFormatTime:
    @given(st.datetimes(timezones=ZONES))
    def test_the_text_isoformat_writes(self, moment: datetime) -> None:
        """A record's time is written as isoformat writes it in UTC to the millisecond (cut,
        not rounded), `Z` for `+00:00`, for any zoned time from year 1 to 9999: a time that
        cannot be put in UTC fails as it did."""
        try:
            expected = moment.astimezone(UTC).isoformat(timespec="milliseconds")
        except OverflowError:
            with pytest.raises(OverflowError):
                format_time(moment)
            return
        assert format_time(moment) == expected.replace("+00:00", "Z")


class TestFormatNow:
    def test_the_system_clock_is_written_as_format_time_writes_it(self) -> None:
        """The system clock's time, read from `time` alone, is the text format_time writes of
        datetime's now: between the two taken before and after it."""
        before = format_time(datetime.now(UTC))
        written = format_now(SYSTEM_CLOCK)
        after = format_time(datetime.now(UTC))
        assert before <= written <= after
        assert len(written) == len(before) and written.endswith("Z")

    def test_any_other_clock_is_read_through_its_now(self) -> None:
        """A clock that is not the system's (a test's) is read through its own now()."""
        clock = FakeClock(datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC))
        assert format_now(clock) == format_time(clock.now()) == "2030-01-02T03:04:05.678Z"


class TestRoundTrip:
    @given(requests())
    def test_requests_survive_the_disk(self, request: Request) -> None:
        """Any request written and read back is equal to itself, extra keys included."""
        assert round_trip(request, Request) == request

    @given(answers)
    def test_answers_survive_the_disk(self, answer: Answer) -> None:
        """Any answer written and read back is equal to itself."""
        assert round_trip(answer, Answer) == answer

    @given(settleds)
    def test_outcomes_survive_the_disk(self, settled: Settled) -> None:
        """Any outcome written and read back is equal to itself."""
        assert round_trip(settled, Settled) == settled

    def test_keys_are_camel_case(self) -> None:
        """Multi-word fields are written camelCase, as the design names them."""
        answer = Answer(
            id="a1b2c3d4",
            kind=Kind.COMMAND,
            decision="once",
            binding_digest="0" * 64,
            answered_at=datetime(2026, 11, 29, tzinfo=UTC),
            via="cli",
            pid=1,
            user="ana",
        )
        data = to_json(answer)
        assert {"bindingDigest", "answeredAt"} <= set(data)
        assert "binding_digest" not in data and "extra" not in data
        assert data["answeredAt"] == "2026-11-29T00:00:00.000Z"


class TestUnknownKeys:
    def test_unknown_keys_survive_a_read_modify_cycle(self) -> None:
        """A newer build's keys, at every level, are kept through read, evolve, write."""
        raw = {
            "format": 1,
            "id": "a1b2c3d4",
            "kind": "command",
            "filedAt": "2026-11-29T12:00:00.000Z",
            "expiresAt": None,
            "title": "t",
            "body": "b",
            "priority": {"level": 3},
            "server": {"id": "5e5e5e5e", "pid": 7, "host": "laptop"},
            "binding": {"command": "ls", "cwd": "/", "sandbox": ["net"]},
        }
        raw["bindingDigest"] = digest(raw["binding"])
        request = from_json(raw, Request)
        assert request.extra == {"priority": {"level": 3}}
        changed = request._replace(title="new title")
        written = to_json(changed)
        assert written["priority"] == {"level": 3}
        assert written["server"]["host"] == "laptop"
        assert written["binding"]["sandbox"] == ["net"]
        assert written["title"] == "new title"

    def test_extra_cannot_shadow_a_known_field(self) -> None:
        """A known key smuggled into `extra` never overrides the field."""
        binding = CommandBinding(command="ls", cwd="/", extra={"command": "rm -rf /"})
        assert to_json(binding)["command"] == "ls"


class TestLegacy:
    def test_a_request_without_kind_is_a_command(self) -> None:
        """0.16.0 wrote no `kind` (nor `format`): such a request reads as a command."""
        binding = {"command": "make", "cwd": "/"}
        raw = {
            "id": "a1b2c3d4",
            "filedAt": "2026-09-20T10:00:00Z",
            "expiresAt": None,
            "server": {"id": "5e5e5e5e", "pid": 1},
            "title": "t",
            "body": "b",
            "binding": binding,
            "bindingDigest": digest(binding),
        }
        request = from_json(raw, Request)
        assert request.kind is Kind.COMMAND
        assert isinstance(request.binding, CommandBinding)


class TestStrictJson:
    @pytest.mark.parametrize(
        ("data", "why"),
        [
            (b'{"a": NaN}', "NaN"),
            (b'{"a": Infinity}', "Infinity"),
            (b'{"a": 1, "a": 2}', "duplicate key"),
            (b"\xff\xfe{}", "not UTF-8"),
            (b'{"a": "\\ud800"}', "surrogate"),
            (b"[" * 50 + b"]" * 50, "nested"),
            (b"[" * 100000 + b"]" * 100000, "nested"),
            (b'{"a": ', "not valid JSON"),
            (b'{"a": 1' + b"0" * 5000 + b"}", "not valid JSON"),
            (b'{"a": 1e999}', "finite"),
            (b'{"a": [-1e400]}', "finite"),
        ],
    )
    def test_hostile_json_is_refused(self, data: bytes, why: str) -> None:
        """Each hostile input is a DecodeError that says why, never another exception."""
        with pytest.raises(DecodeError, match=why):
            loads_strict(data)

    @given(
        st.sampled_from(["", " ", "\n", "\t\r\n ", "\u00a0", "x", "{}"]),
        json_values,
        st.sampled_from(["", "\n", " \n\t", "\u2028", ",", "]", "1", "\ufeff"]),
    )
    def test_a_record_is_decoded_as_the_decoder_decodes_it(
        self, before: str, value: object, after: str
    ) -> None:
        """The direct scan (_decode) returns what JSONDecoder.decode returns, and raises what
        it raises, whatever comes before and after the value."""
        text = before + json.dumps(value, ensure_ascii=False) + after
        try:
            expected = _DECODER.decode(text)
        except ValueError as exc:
            with pytest.raises(type(exc)) as raised:
                _decode(text)
            assert str(raised.value) == str(exc)
        else:
            assert _decode(text) == expected

    @pytest.mark.parametrize(
        "change",
        [
            {"id": 5},
            {"server": {"id": "5e5e5e5e", "pid": "7"}},
            {"server": {"id": "5e5e5e5e", "pid": True}},
            {"kind": "poll"},
            {"filedAt": "yesterday"},
            {"filedAt": "2026-11-29T12:00:00"},
            {"format": 2},
            {"binding": None},
            {"title": None},
        ],
    )
    def test_wrong_types_are_refused(self, change: dict[str, object]) -> None:
        """Types are checked exactly: no string-to-int, no bool pid, zoned times only."""
        binding = {"command": "ls", "cwd": "/"}
        raw = {
            "id": "a1b2c3d4",
            "kind": "command",
            "filedAt": "2026-11-29T12:00:00Z",
            "expiresAt": None,
            "server": {"id": "5e5e5e5e", "pid": 7},
            "title": "t",
            "body": "b",
            "binding": binding,
            "bindingDigest": digest(binding),
        }
        raw.update(change)
        with pytest.raises(DecodeError):
            from_json(raw, Request)

    @pytest.mark.parametrize("pid", [True, 1.0, "1", 0, -1, 2**31])
    def test_a_server_already_read_vouches_for_no_other_value(self, pid: object) -> None:
        """Plain servers are kept by their values once checked: a pid that equals (and hashes
        as) a valid one, `true` or `1.0` for 1, is still refused after the valid one was read."""
        assert from_json({"id": "5e5e5e5e", "pid": 1}, Server).pid == 1
        with pytest.raises(DecodeError):
            from_json({"id": "5e5e5e5e", "pid": pid}, Server)
        with pytest.raises(DecodeError):
            from_json({"id": "5E5E5E5E", "pid": 1}, Server)


def _request_json(**change: object) -> dict[str, object]:
    binding = {"question": "which?", "options": ["a", "b"], "freeText": False}
    raw: dict[str, object] = {
        "id": "a1b2c3d4",
        "kind": "question",
        "filedAt": "2026-11-29T12:00:00Z",
        "expiresAt": None,
        "server": {"id": "5e5e5e5e", "pid": 7},
        "title": "t",
        "body": "b",
        "binding": binding,
        "bindingDigest": digest(binding),
    }
    raw.update(change)
    return raw


class TestFieldChecks:
    @pytest.mark.parametrize(
        ("change", "why"),
        [
            ({"server": {"id": "x", "pid": 7}}, "'x' is not an ID"),
            ({"server": {"id": "5E5E5E5E", "pid": 7}}, "is not an ID"),
            ({"server": {"id": "5e5e5e5e", "pid": 0}}, "0 is not a pid"),
            ({"server": {"id": "5e5e5e5e", "pid": -4}}, "-4 is not a pid"),
            ({"server": {"id": "5e5e5e5e", "pid": 2**31}}, "is not a pid"),
            ({"server": {"id": "5e5e5e5e", "pid": 10**40}}, "a huge number is not a pid"),
            ({"server": {"id": "5e5e5e5e", "pid": 7.0}}, "expected int"),
            ({"server": "5e5e5e5e"}, "expected Server"),
            ({"id": "../../etc"}, "is not an ID"),
            ({"bindingDigest": "abc"}, "is not a sha256 digest"),
            ({"bindingDigest": "A" * 64}, "is not a sha256 digest"),
            ({"expiresAt": "0001-01-01T00:00:00+01:00"}, "in range"),
            ({"filedAt": 1764417600}, "expected"),
        ],
    )
    def test_malformed_request_fields_are_refused(
        self, change: dict[str, object], why: str
    ) -> None:
        """Each nested field is checked on read, with its path in the reason."""
        with pytest.raises(DecodeError, match=re.escape(why)) as caught:
            from_json(_request_json(**change), Request)
        assert " @ record." in str(caught.value)

    @pytest.mark.parametrize(
        ("options", "why"),
        [
            ("ab", "expected"),  # a string is iterable; it is not a list of options
            ({"a": 1}, "expected"),
            (["a", 1], "option 1 is not a string"),
            ([["a"]], "option 0 is not a string"),
        ],
    )
    def test_options_must_be_a_list_of_strings(self, options: object, why: str) -> None:
        """A question's options are a JSON list of strings, nothing else that iterates."""
        binding = {"question": "which?", "options": options, "freeText": False}
        raw = _request_json(binding=binding, bindingDigest=digest(binding))
        with pytest.raises(DecodeError, match=why):
            from_json(raw, Request)

    @pytest.mark.parametrize(
        "change",
        [{"id": "nope"}, {"pid": 0}, {"pid": True}, {"bindingDigest": "0" * 63}, {"via": 3}],
    )
    def test_malformed_answers_are_refused(self, change: dict[str, object]) -> None:
        """An answer's ID, pid and digest are checked like a request's."""
        raw = {
            "id": "a1b2c3d4",
            "kind": "command",
            "decision": "once",
            "bindingDigest": "0" * 64,
            "answeredAt": "2026-11-29T12:00:00Z",
            "via": "cli",
            "pid": 7,
            "user": "ana",
        }
        assert from_json(raw, Answer).pid == 7
        with pytest.raises(DecodeError):
            from_json({**raw, **change}, Answer)

    @pytest.mark.parametrize(
        "change",
        [{"id": "a1b2c3d4x"}, {"settledAt": "9999-12-31T23:59:59-01:00"}, {"delivery": "mail"}],
    )
    def test_malformed_outcomes_are_refused(self, change: dict[str, object]) -> None:
        """An outcome's ID, time and enums are checked."""
        raw = {
            "id": "a1b2c3d4",
            "kind": "command",
            "outcome": "answered",
            "settledAt": "2026-11-29T12:00:00Z",
            "by": "asker",
        }
        assert from_json(raw, Settled).outcome == "answered"
        with pytest.raises(DecodeError):
            from_json({**raw, **change}, Settled)


class TestDigest:
    def test_digest_ignores_key_order_and_spacing(self) -> None:
        """The canonical JSON sorts keys and drops spaces: order does not change the digest."""
        a = json.loads('{"command": "ls", "cwd": "/"}')
        b = json.loads('{ "cwd":"/",   "command":"ls" }')
        assert digest(a) == digest(b)
        assert canonical_json(a) == b'{"command":"ls","cwd":"/"}'

    @given(json_values | st.lists(st.floats(allow_nan=False, allow_infinity=False)))
    def test_canonical_json_is_the_sorted_compact_encoding(self, value: Any) -> None:
        """canonical_json (its C encoder kept across calls) writes any JSON value exactly as
        a sorted, compact, non-ASCII-escaping json encoder does."""
        expected = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        assert canonical_json(value) == expected.encode("utf-8")

    def test_canonical_json_refuses_what_is_no_json_value_as_before(self) -> None:
        """A cycle, NaN and an object JSON has no form for are refused as json refuses them,
        and a value still encodes after each refusal."""
        cycle: list[Any] = []
        cycle.append(cycle)
        with pytest.raises(ValueError, match="Circular reference detected"):
            canonical_json({"a": cycle})
        with pytest.raises(ValueError, match="Out of range float"):
            canonical_json({"a": [float("nan")]})
        with pytest.raises(TypeError, match="not JSON serializable"):
            canonical_json({"a": object()})
        assert canonical_json({"b": [1], "a": None}) == b'{"a":null,"b":[1]}'

    @given(
        st.fixed_dictionaries(
            {
                "command": st.text(),
                "cwd": st.text(),
                "reason": st.none() | st.text(),
                "thread": st.none() | st.text(),
            }
        )
        | st.dictionaries(st.sampled_from(["command", "cwd", "reason", "thread"]), json_values)
    )
    def test_a_command_bindings_digest_is_that_of_its_canonical_json(self, value: Any) -> None:
        """The digest writes a command binding's canonical JSON itself (a listing checks one
        a request): for that shape and any other value under its keys, the digest is the
        sha256 of the general encoder's bytes, or fails as that encoding fails."""
        try:
            expected = hashlib.sha256(canonical_json(value)).hexdigest()
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 for it, either way
            with pytest.raises(UnicodeEncodeError):
                digest(value)
            return
        assert digest(value) == expected

    def test_digest_is_sha256_of_the_written_binding(self) -> None:
        """The digest of a binding record is that of the JSON written for it."""
        binding = CommandBinding(command="rm -rf build/", cwd="/srv", thread="c1")
        expected = hashlib.sha256(canonical_json(to_json(binding))).hexdigest()
        assert binding_digest(binding) == expected

    def test_any_change_to_the_binding_changes_the_digest(self) -> None:
        """One character of the command changes the digest."""
        one = CommandBinding(command="rm -rf build/", cwd="/srv")
        two = CommandBinding(command="rm -rf build /", cwd="/srv")
        assert binding_digest(one) != binding_digest(two)


# --- the plain path --------------------------------------------------------------------------


def _without_extras(record: Any) -> Any:
    """*record* (and the records in it) with no unknown keys: the plain case."""
    changes: dict[str, Any] = {"extra": {}}
    for field in ("server", "binding"):
        if hasattr(record, field):
            changes[field] = getattr(record, field)._replace(extra={})
    return record._replace(**changes)


def _record_class(name: str) -> type | None:
    for suffix, cls in (
        (".request.json", Request),
        (".fact.json", Request),
        (".question.json", Request),
        (".answer.json", Answer),
        (".settled.json", Settled),
    ):
        if name.endswith(suffix):
            return cls
    return None


def _by_converter(data: Any, cls: type) -> Any:
    """What the converter alone makes of *data*: the record, or the refusal's type."""
    try:
        return _converter().structure(data, cls)
    except Exception as exc:  # any refusal: compared, not swallowed
        return type(exc)


_PLAIN_KEYS = {Request: REQUEST_KEYS, Answer: ANSWER_KEYS, Settled: SETTLED_KEYS}
GOOD_RECORDS = sorted(
    p for p in (FIXTURES / "good").iterdir() if p.suffix == ".json" and _record_class(p.name)
)


PLAIN_RECORDS = st.one_of(
    requests().map(lambda r: (r, Request)),
    answers.map(lambda a: (a, Answer)),
    settleds.map(lambda s: (s, Settled)),
)


class TestPlainPath:
    """The converter's plain path (pending._convert): straight code for the common case,
    which must make exactly what the converter makes, or hand the record to it."""

    @given(PLAIN_RECORDS)
    def test_a_plain_record_takes_the_plain_path_and_reads_as_the_converter_reads_it(
        self, case: tuple[Any, type]
    ) -> None:
        """A record with no unknown keys is structured by the plain path, to the record the
        converter makes of the same JSON."""
        record, cls = case
        data = json.loads(dumps_record(to_json(_without_extras(record))))
        assert _PLAIN_FROM_JSON[cls](data) == _converter().structure(data, cls)

    @given(PLAIN_RECORDS, st.data())
    def test_an_edited_record_reads_as_the_converter_reads_it_or_goes_to_it(
        self, case: tuple[Any, type], data: st.DataObject
    ) -> None:
        """Any field, at any depth, replaced, deleted or added: the plain path either makes
        the converter's record or declines (and the converter decides, as from_json does)."""
        record, cls = case
        good = json.loads(dumps_record(to_json(record)))
        edit = data.draw(edits(good))
        assume(not isinstance(edit.value, Raw))
        tree = apply_edit(good, edit)
        try:
            plain = _PLAIN_FROM_JSON[cls](tree)
        except (_NotPlain, KeyError, ValueError, TypeError, OverflowError):
            return
        assert plain == _by_converter(tree, cls)

    @pytest.mark.parametrize("fixture", GOOD_RECORDS, ids=lambda p: p.name)
    def test_every_field_made_hostile_reads_as_the_converter_reads_it(self, fixture: Path) -> None:
        """Each field of each good fixture, at every depth, replaced by each of the hostile
        JSON values, or deleted: the plain path makes the converter's record or declines."""
        good = json.loads(fixture.read_bytes())
        cls = _record_class(fixture.name)
        assert cls is not None
        cases = [Edit(path=path, action="delete") for path in paths_of(good)[1:]]
        cases += [
            Edit(path=path, action="replace", value=value)
            for path in paths_of(good)
            for value in JSON_VALUES
        ]
        taken = 0
        for edit in cases:
            tree = apply_edit(good, edit)
            try:
                plain = _PLAIN_FROM_JSON[cls](tree)
            except (_NotPlain, KeyError, ValueError, TypeError, OverflowError):
                continue
            taken += 1
            assert plain == _by_converter(tree, cls), edit
        if good.keys() <= _PLAIN_KEYS[cls]:  # some edits (a title's text, say) stay plain
            assert taken > 0

    @given(
        st.one_of(
            servers,
            command_bindings,
            fact_bindings,
            question_bindings,
            tool_bindings,
            requests(),
            answers,
            settleds,
        )
    )
    def test_plain_records_are_written_as_the_converter_writes_them(self, record: Any) -> None:
        """The plain path writes a record with no unknown keys to the bytes the converter
        writes, key order included; a request's server or binding carrying unknown keys is
        written as the converter writes it too."""
        record = record._replace(extra={})
        assert type(record) in _PLAIN_TO_JSON
        assert dumps_record(to_json(record)) == dumps_record(_converter().unstructure(record))

    @given(
        st.one_of(
            servers, command_bindings, fact_bindings, question_bindings, tool_bindings, answers
        )
    )
    def test_known_json_is_the_record_without_its_unknown_keys(self, record: Any) -> None:
        """known_json writes what to_json writes, less the unknown keys the record carried."""
        expected = {k: v for k, v in to_json(record).items() if k not in record.extra}
        assert known_json(record) == expected == to_json(record._replace(extra={}))

    @pytest.mark.parametrize(
        ("keys", "cls"),
        [
            (SERVER_KEYS, Server),
            (COMMAND_KEYS, CommandBinding),
            (FACT_KEYS, FactBinding),
            (QUESTION_KEYS, QuestionBinding),
            (TOOL_KEYS, ToolBinding),
            (REQUEST_KEYS, Request),
            (ANSWER_KEYS, Answer),
            (SETTLED_KEYS, Settled),
        ],
    )
    def test_the_plain_path_names_every_field(self, keys: frozenset[str], cls: type) -> None:
        """A field added to a record and not to the plain path would be read as its default:
        the plain path's keys are exactly the record's JSON keys."""
        fields = {camel(name) for name in cls._fields if name not in ("extra", "legacy")}
        assert keys == fields

    def test_a_listing_of_plain_requests_never_builds_the_converter(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """`wisp pending --json` over plain requests loads no cattrs (loading it and building
        the converter cost a cold start ~20 ms): listed in a fresh interpreter."""
        channel.file(command(server))
        script = (
            "import sys\n"
            "from pending import Channel\n"
            f"with Channel.open({str(home)!r}) as channel:\n"
            "    listing = channel.listing()\n"
            "print(len(listing.statuses), len(listing.problems), 'cattrs' in sys.modules)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        assert done.stdout.split() == ["1", "0", "False"]
