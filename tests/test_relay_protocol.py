"""The relay's protocol, as pure functions: lines split, read and shaped."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import chunkings, relay_lines, requests

from pending import Kind, Request, State, Status
from wisp.relay._protocol import (
    MAX_LINE_BYTES,
    NO_HELLO,
    AnswerLine,
    Hello,
    HistoryLine,
    LineError,
    LineSplitter,
    TooLong,
    approval_line,
    parse_line,
)


def split(data: bytes, cuts: list[int], limit: int = MAX_LINE_BYTES) -> list[bytes | TooLong]:
    splitter = LineSplitter(limit)
    out: list[bytes | TooLong] = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        out.extend(splitter.feed(data[start:cut]))
        start = max(start, cut)
    return out + splitter.end()


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


class TestParseLine:
    def test_hello(self) -> None:
        """A hello's known effects are taken, unknown ones listed, kinds derived."""
        line = parse_line(
            b'{"type":"hello","effects":["keep-facts","notify","show-output"],'
            b'"client":"x","version":"1","via":"tui"}'
        )
        assert line == Hello(
            effects=frozenset({"keep-facts", "notify"}),
            ignored=("show-output",),
            client="x",
            version="1",
            via="tui",
        )
        assert isinstance(line, Hello)
        assert line.kinds == {Kind.FACT}
        assert line.notify

    def test_no_hello_is_commands_only(self) -> None:
        """Without a hello a front end is sent command approvals and nothing else."""
        assert NO_HELLO.kinds == {Kind.COMMAND}
        assert not NO_HELLO.notify

    @pytest.mark.parametrize(
        ("line", "decision"),
        [
            (b'{"type":"answer","id":"a1b2c3d4","decision":"approve"}', "once"),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"approve","scope":"always"}', "always"),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"deny","reason":"no"}', "no"),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"session","scope":"session"}',
                "session",
            ),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"keep","kind":"fact"}', "keep"),
        ],
    )
    def test_answer_decisions(self, line: bytes, decision: str) -> None:
        """`approve` with a scope and `deny` read as the decisions they name."""
        parsed = parse_line(line)
        assert isinstance(parsed, AnswerLine)
        assert parsed.decision == decision

    def test_history(self) -> None:
        """A history line takes a limit, 50 by default."""
        assert parse_line(b'{"type":"history"}') == HistoryLine(limit=50)
        assert parse_line(b'{"type":"history","limit":3}') == HistoryLine(limit=3)

    @pytest.mark.parametrize(
        ("line", "code"),
        [
            (b"not json", "bad-json"),
            (b'{"type":"hello","effects":[NaN]}', "bad-json"),
            (b'{"type":"answer","type":"hello"}', "bad-json"),
            (b"\xff\xfe", "bad-json"),
            (b"[1,2]", "not-an-object"),
            (b'{"type":"launch"}', "unknown-type"),
            (b'{"kind":"command"}', "unknown-type"),
            (b'{"type":"hello","effects":"notify"}', "bad-field"),
            (b'{"type":"hello","via":"cli"}', "bad-field"),
            (b'{"type":"answer","id":"a1b2c3d4"}', "bad-field"),
            (b'{"type":"answer","id":7,"decision":"once"}', "bad-field"),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"once","kind":"spell"}', "bad-field"),
            (
                b'{"type":"answer","id":"a1b2c3d4","decision":"approve","scope":"forever"}',
                "bad-field",
            ),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"no","scope":"once"}', "bad-field"),
            (b'{"type":"history","limit":0}', "bad-field"),
            (b'{"type":"history","limit":true}', "bad-field"),
            (b"[" * 100_000, "bad-json"),
        ],
    )
    def test_refusals(self, line: bytes, code: str) -> None:
        """Each line the relay will not act on is refused with its code and a message."""
        with pytest.raises(LineError) as caught:
            parse_line(line)
        assert caught.value.code == code
        error = caught.value.line()
        assert error["type"] == "error" and error["error"] == code and error["message"]

    def test_too_long(self) -> None:
        """A line over 1 MiB is refused without being decoded."""
        with pytest.raises(LineError) as caught:
            parse_line(b"{" + b" " * MAX_LINE_BYTES + b"}")
        assert caught.value.code == "too-long"

    @given(st.binary(max_size=200))
    def test_any_bytes_parse_or_refuse(self, data: bytes) -> None:
        """Whatever a front end sends, the result is a line or a LineError: never a crash."""
        try:
            parse_line(data)
        except LineError as exc:
            assert exc.code


class TestApprovalLine:
    @given(requests())
    def test_protocol_fields_win(self, request: Request) -> None:
        """A request's own fields (and any unknown keys its file carried) can never stand in
        for a protocol field: type, kind and id are the relay's."""
        hostile = attrs.evolve(
            request.binding, extra={"type": "withdrawn", "id": "evil", "kind": "fact"}
        )
        request = attrs.evolve(request, binding=hostile)
        status = Status(id=request.id, kind=request.kind, state=State.FILED, request=request)
        line = approval_line(status)
        assert (line["type"], line["id"], line["kind"]) == (
            "approval",
            request.id,
            request.kind.value,
        )
        json.dumps(line)
