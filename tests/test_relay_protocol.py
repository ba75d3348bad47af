"""The relay protocol (wisp.relay.protocol), as pure functions: lines split, decoded, encoded;
and the relay's own lines shaped from what the application reports (wisp.relay._lines)."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import chunkings, ids, opt_texts, relay_lines, requests, texts, times

from pending import KINDS, Decision, Kind, Outcome, Request, State, Status, Via
from wisp import AnswerFate, Decider, Verdict
from wisp.relay._lines import approval_line
from wisp.relay._lines import binding_fields as sent_fields
from wisp.relay.protocol import (
    MAX_LINE_BYTES,
    NO_HELLO,
    PERSON_DECISIONS,
    Answered,
    AnswerLine,
    ApprovalLine,
    Decided,
    Effect,
    Ended,
    ErrorCode,
    ErrorLine,
    Hello,
    HistoryReply,
    HistoryRequest,
    Line,
    LineError,
    LineSplitter,
    Notify,
    Ready,
    Server,
    TooLong,
    UnknownType,
    Winner,
    Withdrawal,
    Withdrawn,
    binding_fields,
    decode_front_end,
    decode_relay,
    effect_kinds,
    encode,
    to_json,
)


def split(data: bytes, cuts: list[int], limit: int = MAX_LINE_BYTES) -> list[bytes | TooLong]:
    splitter = LineSplitter(limit)
    out: list[bytes | TooLong] = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        out.extend(splitter.feed(data[start:cut]))
        start = max(start, cut)
    return out + splitter.end()


# --- records of every line, for the round trips -------------------------------------------

words = st.text("abcdefghij-", min_size=1, max_size=12)
winners = st.builds(
    Winner, decision=texts, via=opt_texts, user=opt_texts, answered_at=st.none() | times
)
hellos = st.builds(
    Hello,
    effects=st.lists(st.sampled_from([*effect_kinds(), *Effect]) | words, max_size=6).map(tuple),
    client=opt_texts,
    version=opt_texts,
    via=st.none() | st.sampled_from([Via.RELAY, Via.TUI]),
)
answer_lines = st.builds(
    AnswerLine,
    id=ids,
    decision=st.sampled_from(sorted(PERSON_DECISIONS)),
    kind=st.none() | st.sampled_from(Kind),
    text=opt_texts,
    reason=opt_texts,
)
history_requests = st.builds(HistoryRequest, limit=st.integers(1, 500))
readies = st.builds(
    Ready,
    effects=st.lists(words, max_size=4).map(tuple),
    ignored=st.lists(words, max_size=4).map(tuple),
    kinds=st.lists(st.sampled_from(Kind), max_size=3, unique=True).map(tuple),
    waiting=st.integers(0, 10_000),
    hostname=opt_texts,
    version=opt_texts,
    via=st.none() | st.sampled_from(Via),
    answers=st.none() | st.booleans(),
)
withdrawns = st.builds(
    Withdrawn,
    id=ids,
    state=st.sampled_from(Withdrawal),
    reason=texts,
    answer=st.none() | winners,
)
answereds = st.builds(
    Answered,
    id=ids,
    kind=st.none() | st.sampled_from(Kind),
    decision=st.sampled_from(Decision),
    text=opt_texts,
    won=st.booleans(),
    answer=st.none() | winners,
    outcome=st.none() | st.sampled_from(Outcome),
    result=opt_texts,
    reason=opt_texts,
    asker=st.none() | st.sampled_from(AnswerFate),
    applied=st.booleans(),
    apply_error=opt_texts,
)
notifies = st.builds(Notify, title=texts, subtitle=texts, body=texts, sound=st.booleans())
decideds = st.builds(
    Decided,
    ts=st.none() | times,
    verdict=st.sampled_from(Verdict),
    decider=st.sampled_from(Decider),
    said=texts,
    rule=opt_texts,
    grant=opt_texts,
    scope=opt_texts,
    harness=opt_texts,
    tool=opt_texts,
    command=opt_texts,
    input=st.none() | st.dictionaries(words, opt_texts, max_size=3),
    cwd=opt_texts,
    project=opt_texts,
)
ended = st.builds(
    Ended,
    ts=texts,
    id=texts,
    kind=texts,
    outcome=texts,
    decision=opt_texts,
    asked=texts,
    by=opt_texts,
)
history_replies = st.builds(HistoryReply, entries=st.lists(ended, max_size=4).map(tuple))
errors = st.builds(
    ErrorLine,
    error=st.sampled_from(ErrorCode),
    message=texts,
    id=st.none() | ids,
    kind=st.none() | st.sampled_from(Kind),
    allowed=st.none() | st.lists(words, max_size=4).map(tuple),
    fatal=st.booleans(),
)


@st.composite
def approvals(draw: st.DrawFn) -> ApprovalLine:
    request: Request = draw(requests())
    state = draw(st.sampled_from([State.FILED, State.HANDED_OVER]))
    alive = draw(st.none() | st.booleans())
    status = Status(
        id=request.id, kind=request.kind, state=state, request=request, server_alive=alive
    )
    return approval_line(status)


front_end_lines = hellos | answer_lines | history_requests
relay_lines_records = (
    readies | approvals() | withdrawns | answereds | notifies | decideds | history_replies | errors
)


class TestLineSplitter:
    @given(relay_lines, chunkings)
    def test_chunking_does_not_matter(self, lines: list[bytes], cuts: list[int]) -> None:
        """However the bytes arrive, the same lines come out, in order (blank lines and a
        trailing CR dropped)."""
        data = b"".join(line + b"\n" for line in lines)
        cuts = [c % (len(data) + 1) for c in cuts]
        expected = [line.rstrip(b"\r") for line in lines if line.rstrip(b"\r").strip()]
        assert split(data, cuts) == expected

    def test_an_overlong_line_is_counted_and_skipped(self) -> None:
        """A line over the limit becomes one TooLong with its size; the next line is intact."""
        data = b"x" * 50 + b"\n" + b"ok\n"
        assert split(data, [7, 13, 40], limit=16) == [TooLong(size=50), b"ok"]

    def test_never_holds_more_than_the_limit(self) -> None:
        """Feeding a 3 MiB line in pieces never buffers past the limit."""
        splitter = LineSplitter()
        piece = b"y" * (256 * 1024)
        for _ in range(12):
            assert splitter.feed(piece) == []
            assert len(splitter._buffer) <= MAX_LINE_BYTES
        assert splitter.feed(b"\n") == [TooLong(size=12 * len(piece))]

    def test_a_last_line_without_newline_counts(self) -> None:
        """At end of input, a final unterminated line is still a line."""
        splitter = LineSplitter()
        assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
        assert splitter.end() == [b'{"b"']
        assert splitter.end() == []


class TestDecodeFrontEnd:
    def test_hello(self) -> None:
        """A hello's effects are kept as sent; the known ones are taken, unknown ones listed,
        kinds derived, and its `via` read as a Via."""
        line = decode_front_end(
            b'{"type":"hello","effects":["keep-facts","notify","show-output","show-output"],'
            b'"client":"x","version":"1","via":"tui"}'
        )
        assert isinstance(line, Hello)
        assert line.via is Via.TUI and (line.client, line.version) == ("x", "1")
        assert line.known == {"keep-facts", Effect.NOTIFY}
        assert line.ignored == ("show-output",)
        assert line.kinds == {Kind.FACT}
        assert line.notify

    def test_an_empty_via_says_nothing(self) -> None:
        """A hello's empty `via` reads as none given (older TUIs sent one or the other)."""
        line = decode_front_end(b'{"type":"hello","effects":[],"via":""}')
        assert isinstance(line, Hello) and line.via is None

    def test_no_hello_is_commands_only(self) -> None:
        """Without a hello a front end is sent command approvals and nothing else."""
        assert NO_HELLO.kinds == {Kind.COMMAND}
        assert not NO_HELLO.notify

    @pytest.mark.parametrize(
        ("line", "decision"),
        [
            (b'{"type":"answer","id":"a1b2c3d4","decision":"approve"}', Decision.ONCE),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"approve","scope":"always"}',
                Decision.ALWAYS,
            ),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"deny","reason":"no"}', Decision.NO),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"session","scope":"session"}',
                Decision.SESSION,
            ),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"keep","kind":"fact"}', Decision.KEEP),
        ],
    )
    def test_answer_decisions(self, line: bytes, decision: Decision) -> None:
        """`approve` with a scope and `deny` read as the decisions they name, as enums."""
        parsed = decode_front_end(line)
        assert isinstance(parsed, AnswerLine)
        assert parsed.decision is decision

    def test_history(self) -> None:
        """A history line takes a limit, 50 by default."""
        assert decode_front_end(b'{"type":"history"}') == HistoryRequest(limit=50)
        assert decode_front_end(b'{"type":"history","limit":3}') == HistoryRequest(limit=3)

    @pytest.mark.parametrize(
        ("line", "code"),
        [
            (b"not json", ErrorCode.BAD_JSON),
            (b'{"type":"hello","effects":[NaN]}', ErrorCode.BAD_JSON),
            (b'{"type":"answer","type":"hello"}', ErrorCode.BAD_JSON),
            (b"\xff\xfe", ErrorCode.BAD_JSON),
            (b"[1,2]", ErrorCode.NOT_AN_OBJECT),
            (b'{"type":"launch"}', ErrorCode.UNKNOWN_TYPE),
            (b'{"kind":"command"}', ErrorCode.UNKNOWN_TYPE),
            (b'{"type":"approval","id":"a1b2c3d4"}', ErrorCode.UNKNOWN_TYPE),
            (b'{"type":"hello","effects":"notify"}', ErrorCode.BAD_FIELD),
            (b'{"type":"hello","via":"cli"}', ErrorCode.BAD_FIELD),
            (b'{"type":"answer","id":"a1b2c3d4"}', ErrorCode.BAD_FIELD),
            (b'{"type":"answer","id":7,"decision":"once"}', ErrorCode.BAD_FIELD),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"once","kind":"spell"}',
                ErrorCode.BAD_FIELD,
            ),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"approve","scope":"forever"}',
                ErrorCode.BAD_FIELD,
            ),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"no","scope":"once"}',
                ErrorCode.BAD_FIELD,
            ),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"frobnicate"}',
                ErrorCode.INVALID_DECISION,
            ),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"timed-out"}',
                ErrorCode.INVALID_DECISION,
            ),
            (b'{"type":"history","limit":0}', ErrorCode.BAD_FIELD),
            (b'{"type":"history","limit":true}', ErrorCode.BAD_FIELD),
            (b"[" * 100_000, ErrorCode.BAD_JSON),
        ],
    )
    def test_refusals(self, line: bytes, code: ErrorCode) -> None:
        """Each line the relay will not act on is refused with its code and a message."""
        with pytest.raises(LineError) as caught:
            decode_front_end(line)
        assert caught.value.code is code
        error = to_json(caught.value.line())
        assert error["type"] == "error" and error["error"] == code.value and error["message"]

    def test_too_long(self) -> None:
        """A line over 1 MiB is refused without being decoded."""
        with pytest.raises(LineError) as caught:
            decode_front_end(b"{" + b" " * MAX_LINE_BYTES + b"}")
        assert caught.value.code is ErrorCode.TOO_LONG

    @given(st.binary(max_size=200))
    def test_any_bytes_decode_or_refuse(self, data: bytes) -> None:
        """Whatever a front end sends, the result is a line or a LineError: never a crash."""
        try:
            decode_front_end(data)
        except LineError as exc:
            assert exc.code in ErrorCode


class TestDecodeRelay:
    def test_an_unknown_type_says_its_name(self) -> None:
        """A type this build does not know is UnknownType naming it (a front end skips it);
        a line with no string type names none."""
        with pytest.raises(UnknownType) as caught:
            decode_relay(b'{"type":"progress","n":1}')
        assert caught.value.type == "progress"
        with pytest.raises(UnknownType) as caught:
            decode_relay(b'{"kind":"command"}')
        assert caught.value.type is None

    def test_words_are_enums(self) -> None:
        """States, outcomes, decisions and the asker's fate read as their enums."""
        line = decode_relay(
            b'{"type":"answered","id":"a1b2c3d4","kind":"fact","decision":"keep","text":null,'
            b'"won":true,"answer":null,"outcome":"failed","result":null,"reason":"r",'
            b'"asker":"gone","applied":false,"applyError":null}'
        )
        assert isinstance(line, Answered)
        assert (line.kind, line.decision, line.outcome, line.asker) == (
            Kind.FACT,
            Decision.KEEP,
            Outcome.FAILED,
            AnswerFate.GONE,
        )
        gone = decode_relay(b'{"type":"withdrawn","id":"a1b2c3d4","state":"stale","reason":"x"}')
        assert isinstance(gone, Withdrawn) and gone.state is Withdrawal.STALE

    @given(st.binary(max_size=200))
    def test_any_bytes_decode_or_refuse(self, data: bytes) -> None:
        """Whatever a relay sends, the result is a line or a LineError: never a crash."""
        try:
            decode_relay(data)
        except LineError as exc:
            assert exc.code in ErrorCode


class TestRoundTrip:
    @given(front_end_lines)
    def test_a_front_ends_lines(self, line: Line) -> None:
        """Every line a front end can send decodes, at the relay, to the record it was, and
        encodes again to the same bytes: ASCII only (a terminal may carry them)."""
        data = encode(line)
        assert data.endswith(b"\n") and data.count(b"\n") == 1 and data.isascii()
        assert decode_front_end(data[:-1]) == line
        assert encode(decode_front_end(data[:-1])) == data

    @given(relay_lines_records)
    def test_a_relays_lines(self, line: Line) -> None:
        """Every line a relay can send decodes, at a front end, to the record it was, and
        encodes again to the same bytes."""
        data = encode(line)
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        assert decode_relay(data[:-1]) == line
        assert encode(decode_relay(data[:-1])) == data


class TestWire:
    """The bytes docs/relay.md shows, exactly."""

    def test_the_tuis_hello(self) -> None:
        """The hello is written as documented, key for key."""
        hello = Hello(
            effects=("approve-mcp", "keep-facts", "answer-questions", "notify"),
            client="wisp-tui",
            version="0.1.0",
        )
        assert encode(hello) == (
            b'{"type":"hello","effects":["approve-mcp","keep-facts","answer-questions",'
            b'"notify"],"client":"wisp-tui","version":"0.1.0"}\n'
        )

    def test_an_answer_and_a_history_request(self) -> None:
        """An answer leaves out what it does not carry; a history request says its limit."""
        answer = AnswerLine(id="77aa00bb11cc22dd", kind=Kind.QUESTION, decision=Decision.ANSWER)
        assert encode(attrs.evolve(answer, text="é")) == (
            b'{"type":"answer","id":"77aa00bb11cc22dd","kind":"question","decision":"answer",'
            b'"text":"\\u00e9"}\n'
        )
        assert encode(HistoryRequest(limit=50)) == b'{"type":"history","limit":50}\n'

    def test_the_relay_writes_utf8(self) -> None:
        """The relay's lines carry text as UTF-8, not escapes."""
        line = Notify(title="wisp: run a command?", subtitle="", body="é ✓", sound=False)
        assert (
            encode(line)
            == (
                '{"type":"notify","title":"wisp: run a command?","subtitle":"","body":"é ✓",'
                '"sound":false}\n'
            ).encode()
        )

    def test_a_decided_line(self) -> None:
        """A call decided without asking is written as docs/relay.md shows it, key for key,
        its verdict and decider read back as enums."""
        line = Decided(
            ts=datetime(2026, 12, 7, 10, 41, 35, tzinfo=UTC),
            verdict=Verdict.ALLOW,
            decider=Decider.RULE,
            said="allowed by rule read-only: git status — claude-code, ~/src/app",
            rule="read-only",
            harness="claude-code",
            tool="Bash",
            command="git status",
            cwd="/home/you/src/app",
            project="/home/you/src/app",
        )
        data = encode(line)
        docs = Path(__file__).resolve().parent.parent / "docs" / "relay.md"
        assert data.decode() in docs.read_text()
        back = decode_relay(data[:-1])
        assert isinstance(back, Decided) and back.decider is Decider.RULE
        assert back.verdict is Verdict.ALLOW

    def test_an_error_names_only_what_it_has(self) -> None:
        """An error line carries id, kind, allowed and fatal only when there are any."""
        line = ErrorLine(
            error=ErrorCode.WRONG_KIND,
            message="m",
            id="9d1c2b3a4f5e6d7c",
            kind=Kind.FACT,
            allowed=("keep", "drop"),
        )
        assert encode(line) == (
            b'{"type":"error","error":"wrong-kind","message":"m","id":"9d1c2b3a4f5e6d7c",'
            b'"kind":"fact","allowed":["keep","drop"]}\n'
        )
        fatal = ErrorLine(error=ErrorCode.CHANNEL, message="m", fatal=True)
        assert encode(fatal) == b'{"type":"error","error":"channel","message":"m","fatal":true}\n'


class TestApprovalLine:
    @given(requests())
    def test_protocol_fields_win(self, request: Request) -> None:
        """A request's own fields (and any unknown keys its file carried) can never stand in
        for a protocol field: type, kind and id are the relay's."""
        hostile = request.binding._replace(
            extra={"type": "withdrawn", "id": "evil", "kind": "fact"}
        )
        request = request._replace(binding=hostile)
        status = Status(id=request.id, kind=request.kind, state=State.FILED, request=request)
        line: dict[str, Any] = json.loads(encode(approval_line(status)))
        assert (line["type"], line["id"], line["kind"]) == (
            "approval",
            request.id,
            request.kind.value,
        )

    @given(requests())
    def test_the_binding_fields_are_the_tables(self, request: Request) -> None:
        """The fields a relay sends for a kind are exactly the ones the protocol reads for it,
        in its order (both are read from the binding record: they cannot drift)."""
        read = tuple(key for key, _ in binding_fields(request.kind))
        assert tuple(sent_fields(request)) == read

    def test_every_kind_has_its_fields(self) -> None:
        """Each kind in pending's table has its binding fields, and its effect, here."""
        assert all(binding_fields(kind) for kind in KINDS)
        assert set(effect_kinds().values()) == set(KINDS)

    def test_a_server_is_who_asks(self) -> None:
        """A line without a server (an old relay's) reads as an unknown asker."""
        line = decode_relay(b'{"type":"approval","id":"a1b2c3d4","command":"c","cwd":"/"}')
        assert isinstance(line, ApprovalLine)
        assert line.server == Server(id="?") and line.state is State.FILED


class TestOneEncoder:
    @pytest.mark.parametrize(
        "path",
        sorted((Path(__file__).resolve().parent.parent / "wisp" / "relay").glob("*.py")),
        ids=lambda p: p.name,
    )
    def test_only_the_protocol_speaks_json(self, path: Path) -> None:
        """No relay module but the protocol imports json: every line in or out is a record,
        encoded and decoded in one place."""
        if path.name == "protocol.py":
            return
        tree = ast.parse(path.read_text(), filename=str(path))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "json" not in imported
