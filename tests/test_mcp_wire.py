"""`wisp mcp`'s stdio edge, spoken to in raw JSON-RPC lines by a real server process: what a
client nobody here wrote may send (bytes that are not JSON, lone surrogates, a 40 MB line, no
stdin at all) always gets an answer, and the server carries on."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp_harness import BOUND_S, INITIALIZE, RawWire, recorder, server_env, wisp_mcp_command

NOTIFY = '{"title":"still","message":"alive"}'
HIGH_WATER_SLACK_KIB = 16 * 1024  # what reading may add to the peak; a line held whole is more


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return recorder(tmp_path)[0]


@pytest.fixture
def raw(home: Path, bin_dir: Path) -> Iterator[RawWire]:
    with closing_raw(RawWire(home, bin_dir)) as wire:
        yield wire


@contextmanager
def closing_raw(wire: RawWire) -> Iterator[RawWire]:
    """*wire*, then EOF: the server must exit 0 without a traceback."""
    try:
        yield wire
    finally:
        code, stderr = wire.close()
        assert code == 0 and b"Traceback" not in stderr, stderr.decode(errors="replace")


def served_from(stdin: Path, home: Path, bin_dir: Path) -> subprocess.CompletedProcess[bytes]:
    """`wisp mcp` run to its end with *stdin* as its standard input."""
    with stdin.open("rb") as source:
        return subprocess.run(
            wisp_mcp_command(),
            stdin=source,
            capture_output=True,
            env=server_env(home, bin_dir),
            timeout=BOUND_S,
        )


def alive(raw: RawWire) -> None:
    result = raw.call("notify", NOTIFY)["result"]
    assert result["isError"] is False, result


def high_water_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


# (case, line, JSON-RPC error code, what its message says)
MALFORMED = [
    ("not JSON", b"not json", -32700, "not JSON"),
    ("a truncated object", b'{"jsonrpc":"2.0","id":7,"method":', -32700, "not JSON"),
    ("invalid UTF-8", b'\xff\xfe{"jsonrpc":"2.0"}', -32700, "not UTF-8"),
    ("a JSON array", b"[1, 2]", -32600, "not a JSON-RPC 2.0 message"),
    ("a JSON string", b'"a string"', -32600, "not a JSON-RPC 2.0 message"),
]

# (tool, arguments as raw JSON, the start of the tool error's text)
SURROGATES = [
    ("notify", r'{"title":"\ud800","message":"m"}', "title holds a lone UTF-16"),
    (
        "ask_person",
        r'{"question":"q","options":["a","\udc00"],"wait_seconds":0}',
        "options[1] holds a lone UTF-16",
    ),
    (
        "permission_prompt",
        r'{"tool_name":"Edit","input":{"pa\ud800th":"x"}}',
        r"input[pa\ud800th] holds",
    ),
]


class TestMalformedLines:
    def test_answered_with_id_null(self, raw: RawWire) -> None:
        """A line that is not JSON, a truncated object, invalid UTF-8 or JSON that is no
        message: the JSON-RPC error JSON-RPC 2.0 names, with `id: null`; then it carries on.
        Every case goes to one server, one after another (a server must survive each), and
        a failure names its case."""
        for case, line, code, said in MALFORMED:
            raw.send(line + b"\n")
            reply = raw.reply()
            assert (reply["id"], reply["error"]["code"]) == (None, code), (case, reply)
            assert said in reply["error"]["message"], (case, reply)
            alive(raw)

    def test_an_object_that_is_no_message_keeps_its_id(self, raw: RawWire) -> None:
        """A JSON-RPC object with an id but no method, result or error: -32600 with its id."""
        raw.send(b'{"jsonrpc":"2.0","id":8}\n')
        reply = raw.reply()
        assert (reply["id"], reply["error"]["code"]) == (8, -32600), reply
        alive(raw)


class TestLoneSurrogates:
    def test_a_tool_error_naming_the_argument(self, raw: RawWire) -> None:
        """A lone surrogate (which a TypeScript client's JSON.stringify can send) in any
        argument, a key included: a tool error that says which and what to send, never a
        hang. Every tool's case goes to one server; a failure names its tool."""
        for tool, arguments, named in SURROGATES:
            result = raw.call(tool, arguments)["result"]
            assert result["isError"] is True, (tool, result)
            assert result["content"][0]["text"].startswith(f"error: {named}"), (tool, result)
            assert result["structuredContent"]["notifications"] == [], (tool, result)
            alive(raw)

    def test_elsewhere_invalid_params(self, raw: RawWire) -> None:
        """In another request's params: -32602 with the request's id."""
        raw.send(
            rb'{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"\ud800"}}' + b"\n"
        )
        reply = raw.reply()
        assert (reply["id"], reply["error"]["code"]) == (9, -32602), reply
        assert "params[uri] holds a lone UTF-16 surrogate" in reply["error"]["message"]


class TestLongLines:
    def test_a_40_mb_line_is_refused_unread(self, home: Path, bin_dir: Path) -> None:
        """A line over the 1 MiB cap is skipped as it streams, never held: -32600 with
        `id: null` saying the cap, the server's peak memory barely moves, and the next call
        is served. Started cold: the peak read is the server process's own."""
        with closing_raw(RawWire(home, bin_dir, cold=True)) as raw:
            self._refused_unread(raw)

    def _refused_unread(self, raw: RawWire) -> None:
        # wisp's own start runs after the answer to `initialize` (wisp/mcp/_start.py) and
        # raises the peak as it loads the application: a tool call waits for it, so the
        # peak is read once it is done (read before, on a busy machine the start ran during
        # the line and counted against it).
        alive(raw)
        before = high_water_kib(raw.process.pid)
        raw.send(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"' + b"x" * 40_000_000)
        raw.send(b'"}}\n')
        reply = raw.reply(timeout=BOUND_S)
        assert (reply["id"], reply["error"]["code"]) == (None, -32600), reply
        assert "at most 1048576 bytes" in reply["error"]["message"]
        assert high_water_kib(raw.process.pid) - before < HIGH_WATER_SLACK_KIB
        alive(raw)


class TestStdinThatCannotBeWaitedOn:
    def test_dev_null_is_an_empty_session(self, home: Path, bin_dir: Path) -> None:
        """`wisp mcp </dev/null` (which epoll refuses): the end of input at once, exit 0, no
        traceback."""
        done = served_from(Path("/dev/null"), home, bin_dir)
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
        assert b"Traceback" not in done.stderr

    def test_a_file_is_read_and_answered(self, home: Path, bin_dir: Path, tmp_path: Path) -> None:
        """stdin from a regular file (epoll refuses those too): each line is answered."""
        script = tmp_path / "session.jsonl"
        script.write_text(INITIALIZE + "\nnot json\n")
        done = served_from(script, home, bin_dir)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
        replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
        assert set(replies) == {0, None} and replies[None]["error"]["code"] == -32700
