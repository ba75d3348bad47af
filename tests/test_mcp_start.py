"""`wisp mcp`'s start: the answer to `initialize` first, wisp's own start after
(wisp/mcp/_start.py), driven for real over pipes. Every server here starts cold (`python -m
wisp mcp` itself): what is loaded before the answer, and what after, is what is tested. What
the answer waits for, and the garbage collector paused while wisp starts, are read in a child
interpreter of their own (this one has loaded everything).

What shows wisp has started is a real effect of it: the session's lock in the channel
(`pending/.servers/ID.lock`, which :meth:`wisp.AgentSession.start` takes), seen through
inotify as it is made. The client's first lines are in the pipe before the server starts, as
an MCP client writes them at once; nothing waits by sleeping.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers import command, read_line
from mcp_harness import BOUND_S, INITIALIZE, INITIALIZED, recorder, server_env, wisp_mcp_command

from pending import Channel, ServerLock

IN_CREATE = 0x100
EVENT_HEAD = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name
# Requests another asker has waiting in the channel: a busy channel, which the server's start
# reads (its watch scans the channel) - a start slowed by what the person's home holds.
BUSY_CHANNEL = 300
CALL = (
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"record_fact",'
    '"arguments":{"subject":"release","name":"codename","value":"BLUE HERON"}}}'
)
LIST = '{"jsonrpc":"2.0","id":8,"method":"tools/list"}'


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return recorder(tmp_path)[0]


@contextmanager
def made_in(directory: Path) -> Iterator[int]:
    """An inotify descriptor that hears every file made in *directory* from now on."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
    if fd < 0:
        pytest.skip(f"missing capability: inotify ({os.strerror(ctypes.get_errno())})")
    try:
        if libc.inotify_add_watch(fd, str(directory).encode(), IN_CREATE) < 0:
            raise OSError(ctypes.get_errno(), f"cannot watch {directory}")
        yield fd
    finally:
        os.close(fd)


def next_made(fd: int) -> list[str]:
    """The names of the next files made (waiting for them within a bounded deadline)."""
    if not select.select([fd], [], [], BOUND_S)[0]:
        raise AssertionError(f"nothing was made within {BOUND_S}s")
    data, names = os.read(fd, 64 * 1024), []
    while data:
        _, _, _, size = EVENT_HEAD.unpack_from(data)
        end = EVENT_HEAD.size + size
        names.append(data[EVENT_HEAD.size : end].rstrip(b"\0").decode())
        data = data[end:]
    return names


def readable(fd: int) -> bool:
    """Whether *fd* has something to read right now (one look, no waiting)."""
    return bool(select.select([fd], [], [], 0)[0])


class Server:
    """A cold `wisp mcp` whose stdin already holds *lines* when it starts (a pipe whose
    writing end the test keeps: the client stays connected until :meth:`close`)."""

    def __init__(self, home: Path, bin_dir: Path, *lines: str) -> None:
        read_end, self.stdin = os.pipe()
        os.write(self.stdin, "".join(line + "\n" for line in lines).encode())
        try:
            self.process = subprocess.Popen(
                wisp_mcp_command(cold=True),
                stdin=read_end,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=server_env(home, bin_dir),
            )
        finally:
            os.close(read_end)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.stdout = self.process.stdout.fileno()

    def send(self, line: str) -> None:
        os.write(self.stdin, line.encode() + b"\n")

    def reply(self) -> dict[str, Any]:
        """The server's next line (within a bounded deadline)."""
        assert self.process.stdout is not None
        message = json.loads(read_line(self.process.stdout, BOUND_S))
        assert isinstance(message, dict), message
        return message

    def replies_to(self, *idents: int) -> dict[Any, dict[str, Any]]:
        """The replies to the requests *idents*, in whatever order they come."""
        got: dict[Any, dict[str, Any]] = {}
        while not set(idents) <= set(got):
            message = self.reply()
            got[message.get("id")] = message  # (a notification's id is None)
        return got

    def ended(self) -> tuple[int, bytes, bytes]:
        """Its exit status, once it has stopped by itself (the client still connected), with
        what it wrote to stdout and stderr."""
        assert self.process.stdout is not None and self.process.stderr is not None
        try:
            code = self.process.wait(timeout=BOUND_S)
        finally:
            self.close()
        return code, self.process.stdout.read(), self.process.stderr.read()

    def close(self) -> int:
        """EOF on stdin: the server stops; its exit status."""
        if self.stdin >= 0:
            os.close(self.stdin)
            self.stdin = -1
        try:
            return self.process.wait(timeout=BOUND_S)
        finally:
            self.process.kill()
            self.process.wait()


def busy(channel: Channel, lock: ServerLock) -> None:
    """*channel* holding requests another asker (*lock*, alive) waits on."""
    for n in range(BUSY_CHANNEL):
        channel.file(command(lock, text=f"make step-{n}"))


class TestAnswerFirst:
    def test_initialize_is_answered_before_wisp_starts(
        self, home: Path, bin_dir: Path, channel: Channel, server: ServerLock
    ) -> None:
        """The answer to `initialize` is on stdout before the session takes its lock, in a
        busy channel whose scan slows wisp's start: the client's wait for it is the SDK's
        alone (issue 41). A tool call and `tools/list` sent with `initialize`, before wisp
        could serve them, wait for its start and are answered as ever."""
        busy(channel, server)
        with made_in(channel.path / ".servers") as made:
            mcp = Server(home, bin_dir, INITIALIZE, INITIALIZED, CALL, LIST)
            try:
                while not [name for name in next_made(made) if name.endswith(".lock")]:
                    pass  # another file: not the session's lock
                assert readable(mcp.stdout), "the session started before the answer"
                answer = mcp.reply()
                assert answer["id"] == 0 and answer["result"]["serverInfo"]["name"] == "wisp"
                replies = mcp.replies_to(7, 8)
                recorded = replies[7]["result"]
                assert recorded["isError"] is False, recorded
                assert recorded["structuredContent"]["value"] == "BLUE HERON"
                tools = replies[8]["result"]["tools"]
                assert "request_approval" in [tool["name"] for tool in tools]
            finally:
                code = mcp.close()
        assert code == 0


class TestStartErrors:
    def test_a_start_error_after_the_answer_stops_the_server_saying_why(
        self, home: Path, bin_dir: Path
    ) -> None:
        """A config.json that does not parse, found once `initialize` is answered: the
        server stops by itself (the client still connected), exit 2, the reason and the fix
        on stderr, and on stdout only the answer and, for the call it could not serve, an
        error saying why."""
        home.mkdir()
        (home / "config.json").write_text("{not json")
        code, out, err = Server(home, bin_dir, INITIALIZE, INITIALIZED, CALL).ended()
        said = err.decode()
        assert code == 2, said
        assert said.startswith("wisp mcp: ") and "config.json" in said, said
        assert "Traceback" not in said
        replies = [json.loads(line) for line in out.splitlines()]
        assert replies and replies[0]["id"] == 0 and "result" in replies[0], replies
        for reply in replies[1:]:
            assert reply["id"] == 7 and "config.json" in reply["error"]["message"], reply

    def test_a_silent_client_hears_of_it_at_once(self, home: Path, bin_dir: Path) -> None:
        """A client that has sent nothing yet (a person trying `wisp mcp` in a terminal):
        wisp starts without waiting for a first answer, so an unsafe channel stops it at
        once, exit 2, saying why, nothing on stdout."""
        (home / "pending").mkdir(parents=True)
        (home / "pending").chmod(0o777)
        code, out, err = Server(home, bin_dir).ended()
        said = err.decode()
        assert (code, out) == (2, b""), said
        assert said.startswith("wisp mcp: ") and "chmod 700" in said, said

    def test_without_the_sdk_it_says_which_extra(
        self, home: Path, out_of_tree_wisp: Path, tmp_path: Path
    ) -> None:
        """Run by a wisp installed without the `mcp` extra (the run's out-of-tree install):
        exit 2, naming the missing library in plain words and how to add the extra, never
        Python's "No module named"."""
        done = subprocess.run(
            [str(out_of_tree_wisp), "mcp"],
            env={**os.environ, "WISP_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 2, done.stderr
        assert "the MCP SDK is not installed (" in done.stderr, done.stderr
        assert "is missing)" in done.stderr and "mcp" in done.stderr, done.stderr
        assert "No module named" not in done.stderr and "Traceback" not in done.stderr


# What `wisp mcp` loads before it can answer `initialize` (wisp/mcp/_run.py's main, _serve):
# the SDK and these, and nothing of wisp's application.
BEFORE_THE_ANSWER = """
import json, sys
import wisp.mcp._run, wisp.mcp._server, wisp.mcp._start, wisp.mcp._stdio
print(json.dumps(sorted(sys.modules)))
"""


def loaded_before_the_answer() -> list[str]:
    """The modules loaded by what the answer to `initialize` needs (BEFORE_THE_ANSWER)."""
    done = subprocess.run(
        [sys.executable, "-c", BEFORE_THE_ANSWER],
        capture_output=True,
        text=True,
        timeout=BOUND_S * 3,
        check=True,
    )
    loaded: list[str] = json.loads(done.stdout)
    return loaded


class TestWhatTheAnswerWaitsFor:
    def test_nothing_of_wisps_application_is_loaded_before_the_answer(self) -> None:
        """The modules the answer to `initialize` needs load no application module: not
        the session, the channel's records (pending), the tools or the resources. Each of
        those is loaded by wisp's start, after the answer (~90-130 ms of imports)."""
        loaded = loaded_before_the_answer()
        application = ("pending", "wisp.agents", "wisp.kinds", "wisp.stores", "wisp.routes")
        early = [m for m in loaded if m.split(".")[0] == "pending" or m.startswith(application)]
        assert early == [], early
        later = ("wisp.mcp._tools", "wisp.mcp._resources", "wisp.mcp._updates")
        assert [m for m in later if m in loaded] == []

    def test_nor_attrs(self) -> None:
        """Nor attrs (~25 ms to import, bench/README.md): what the edge itself uses (the
        line splitter's TooLong, a tool's Said) are named tuples."""
        loaded = loaded_before_the_answer()
        assert [m for m in loaded if m.split(".")[0] in ("attr", "attrs")] == []


# wisp's start run as `wisp mcp` runs it (wisp/mcp/_run.py's _start), in a home whose
# config.json is broken and then in a sound one; the collector's state after each.
COLLECTOR = """
import gc, json, os, sys
from wisp import _startup
from wisp.mcp._run import _start
from wisp.mcp._server import WispServer
from wisp.mcp._start import CannotStart, Startup

said = {}
for home in sys.argv[1:]:
    os.environ["WISP_HOME"] = home
    gc.unfreeze()
    _startup.pause()  # as `wisp mcp` does (wisp/mcp/_run.py's main)
    started = []
    try:
        _start(WispServer(Startup()), started)
        said[home] = "started"
    except CannotStart:
        said[home] = "cannot start"
    said[home] += f", collecting: {gc.isenabled()}, frozen: {gc.get_freeze_count() > 0}"
    for app in started:
        app.close()
print(json.dumps(said))
"""


class TestTheCollector:
    def test_it_runs_again_once_wisp_has_started_or_cannot(self, tmp_path: Path) -> None:
        """`wisp mcp` pauses Python's cyclic garbage collector while it starts (wisp/mcp/
        _run.py's main); wisp's start, whether it starts or cannot, resumes it, with what
        the start made frozen (never scanned again)."""
        broken, sound = tmp_path / "broken", tmp_path / "sound"
        broken.mkdir(mode=0o700)
        (broken / "config.json").write_text("{not json")
        done = subprocess.run(
            [sys.executable, "-c", COLLECTOR, str(broken), str(sound)],
            capture_output=True,
            text=True,
            timeout=BOUND_S * 3,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {
            str(broken): "cannot start, collecting: True, frozen: True",
            str(sound): "started, collecting: True, frozen: True",
        }
