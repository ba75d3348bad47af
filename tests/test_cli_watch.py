"""`wisp pending watch`, driven in a real process and read line by line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import command, fact, question, read_line, wait_until, wisp_command
from isolation import own_inotify_limit

from pending import Channel, Kind, Outcome

# The line `wisp pending watch` prints once its snapshot is taken: it is watching.
READY = "wisp: watching "


class WatchProcess:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            wisp_command("pending", "watch", *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self.stdout = self.process.stdout
        self.warnings: list[str] = []
        # Ready once it says what it watches, after its snapshot; a warning before that (the
        # polling fallback's says "watching" too) is kept, not taken for the ready line.
        while not (line := read_line(self.process.stderr)).startswith(READY):
            assert line, f"watch ended before it was ready: {self.warnings!r}"
            self.warnings.append(line)

    def json_line(self) -> dict[str, Any]:
        line = read_line(self.stdout)
        assert line, "watch ended early"
        return json.loads(line)  # type: ignore[no-any-return]

    def interrupt(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=30)
        return self.process.returncode, err


@pytest.fixture
def watching_json(channel: Channel) -> Iterator[WatchProcess]:
    proc = WatchProcess("--json")
    yield proc
    if proc.process.poll() is None:
        proc.process.kill()
        proc.process.wait()


class TestWatchJson:
    def test_snapshot_then_transitions(self, channel: Channel, home: Path) -> None:
        """What waits comes first (`waiting`), then each transition as one JSON object."""
        with channel.server() as lock:
            waiting = fact(lock)
            channel.file(waiting)
            proc = WatchProcess("--json")
            try:
                first = proc.json_line()
                assert (first["event"], first["id"], first["state"]) == (
                    "waiting",
                    waiting.id,
                    "filed",
                )
                req = command(lock)
                channel.file(req)
                line = proc.json_line()
                assert (line["event"], line["id"], line["kind"], line["state"]) == (
                    "filed",
                    req.id,
                    "command",
                    "filed",
                )
                assert line["binding"]["command"] == "make deploy" and "ts" in line
                channel.answer(req.id, "no", kind=Kind.COMMAND, via="cli")
                line = proc.json_line()
                assert (line["event"], line["answer"]["decision"]) == ("answered", "no")
                channel.settle(req, Outcome.ANSWERED, by="asker", decision="no")
                line = proc.json_line()
                assert (line["event"], line["outcome"]) == ("settled", "answered")
            finally:
                code, err = proc.interrupt()
        assert code == 0 and "Traceback" not in err

    def test_kind_filter(self, channel: Channel) -> None:
        """`--kind question` shows questions only."""
        proc = WatchProcess("--json", "--kind", "question")
        try:
            with channel.server() as lock:
                channel.file(command(lock))
                q = question(lock)
                channel.file(q)
                line = proc.json_line()
                assert (line["event"], line["id"]) == ("filed", q.id)
        finally:
            proc.interrupt()

    def test_keeps_running_across_the_directory_being_emptied(
        self, channel: Channel, watching_json: WatchProcess
    ) -> None:
        """Every file removed by hand: `removed`; the next request still shows."""
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            assert watching_json.json_line()["event"] == "filed"
            for path in channel.path.iterdir():
                if path.is_file():
                    path.unlink()
            line = watching_json.json_line()
            assert (line["event"], line["id"], line["state"]) == ("removed", req.id, None)
            again = command(lock)
            channel.file(again)
            assert watching_json.json_line()["id"] == again.id

    def test_ctrl_c_ends_cleanly(self, channel: Channel, watching_json: WatchProcess) -> None:
        """SIGINT (Ctrl-C) ends it with exit 0 and no traceback."""
        code, err = watching_json.interrupt()
        assert code == 0 and "Traceback" not in err


class TestWatchHuman:
    def test_lines_for_people(self, channel: Channel) -> None:
        """Human lines show the event, ID, kind and what is asked, hidden characters visible."""
        proc = WatchProcess()
        try:
            with channel.server() as lock:
                req = command(lock, text="ls\x1b[2J")
                channel.file(req)
                line = read_line(proc.stdout)
            assert "filed" in line and req.id in line and "ls⟨ESC⟩[2J" in line
            assert "\x1b" not in line
        finally:
            proc.interrupt()


class TestWatchFallback:
    def test_fallback_is_said_once_and_audited(self, home: Path) -> None:
        """Native watching exhausted: a warning on stderr and in the audit log, then polling.
        (In a user namespace of its own inotify limit: the suite's user keeps its instances.)"""
        code = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
hoard = []
while (fd := libc.inotify_init1(os.O_CLOEXEC)) >= 0:
    hoard.append(fd)
pid = os.fork()
if pid == 0:
    os.execvp(sys.executable, [sys.executable, "-m", "wisp", "pending", "watch"])
os.waitpid(pid, 0)
"""
        proc = subprocess.Popen(
            own_inotify_limit(sys.executable, "-c", code),
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stderr is not None
        try:
            # Wide margins: a loaded machine can take seconds to start the interpreter.
            first = read_line(proc.stderr, timeout=60)
            second = read_line(proc.stderr, timeout=60)
        finally:
            os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        assert "falling back to polling" in first
        assert "(polling)" in second
        log = home / "logs" / "audit.jsonl"
        wait_until(log.exists, what="the audit log")
        records = [json.loads(line) for line in log.read_text().splitlines()]
        assert [r["event"] for r in records] == ["watch.warning"]
        assert "falling back" in records[0]["message"]
