"""`wisp pending watch` across its channel directory removed and made again, then filled with
what the old one held: only real transitions are printed."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import command, events, fact, quiet, read_line, run_wisp, take
from test_cli_watch import WatchProcess

from pending import Channel, Kind, Outcome, Via, Watcher


@pytest.fixture
def watch(channel: Channel, native_watching: None) -> Iterator[WatchProcess]:
    proc = WatchProcess("--json")
    yield proc
    if proc.process.poll() is None:
        proc.process.kill()
        proc.process.wait()


def warning(proc: WatchProcess, words: str) -> None:
    """Read the watch's stderr up to the line that says *words*."""
    while words not in (line := read_line(proc.process.stderr)):
        assert line, f"watch ended before saying {words!r}"


def restore(files: Path, into: Path) -> None:
    """Put each file back as a restore does, one at a time, each whole (staged, renamed in)."""
    for source in sorted(files.iterdir()):
        if source.is_file():
            staged = into.parent / f".{source.name}.restoring"
            shutil.copy2(source, staged)
            os.rename(staged, into / source.name)


@contextmanager
def removed_and_restored(channel: Channel, proc: WatchProcess) -> Iterator[Channel]:
    """The channel directory copied aside, removed, made again (as any wisp command makes
    it) and, once the watch follows the new one, its files put back: the new channel."""
    with tempfile.TemporaryDirectory() as backup:
        kept = Path(backup) / "pending"
        shutil.copytree(channel.path, kept, symlinks=True)
        shutil.rmtree(channel.path)
        warning(proc, "was removed")
        with Channel.open(channel.home) as again:
            warning(proc, "made again")
            restore(kept, again.path)
            yield again


def until_filed(proc: WatchProcess, request_id: str) -> list[tuple[str, str]]:
    """The (event, ID) lines the watch prints before *request_id*'s `filed`."""
    lines = []
    while (line := proc.json_line())["id"] != request_id:
        lines.append((line["event"], line["id"]))
    assert line["event"] == "filed", line
    return lines


class TestWatchAcrossARestoredDirectory:
    def test_restored_history_is_no_transition(
        self, channel: Channel, home: Path, watch: WatchProcess
    ) -> None:
        """Requests answered, settled and gone stale before the directory was removed, put
        back file by file once it is made again, print nothing: the next line is the filing
        of a new request."""
        with channel.server() as lock:
            answered = command(lock, text="make answered")
            channel.file(answered)
            assert watch.json_line()["event"] == "filed"
            channel.answer(answered.id, "no", kind=Kind.COMMAND, via=Via.CLI)
            assert watch.json_line()["event"] == "answered"
            stale = command(lock, text="make stale")
            channel.file(stale)
            assert watch.json_line()["event"] == "filed"
        # The asker stopped: one answered (the sweep finishes it), one stale (settled).
        assert run_wisp("pending", "sweep").returncode == 0
        seen = {watch.json_line()["event"] for _ in range(3)}
        assert seen <= {"stale", "settled"}, seen
        with removed_and_restored(channel, watch) as again, again.server() as lock:
            new = command(lock, text="make new")
            again.file(new)
            before = until_filed(watch, new.id)
        # Only what really happened: each old request's files removed, once.
        assert sorted(before) == sorted([("removed", answered.id), ("removed", stale.id)]), before

    def test_a_waiting_request_restored_is_shown_waiting(
        self, channel: Channel, home: Path, watch: WatchProcess
    ) -> None:
        """A request still waiting when its directory went (a fact handed over: it waits for
        the person with no asker), put back after it is made again, is shown as `waiting`,
        not as newly `filed` or `handed-over`."""
        with channel.server() as lock:
            old = fact(lock)
            channel.file(old)
            assert watch.json_line()["event"] == "filed"
        assert watch.json_line()["event"] == "handed-over"
        with removed_and_restored(channel, watch):
            lines = [watch.json_line() for _ in range(2)]
        assert [(x["event"], x["id"]) for x in lines] == [("removed", old.id), ("waiting", old.id)]


class TestWatcherNeverGoesBack:
    def test_files_removed_one_by_one_are_one_removal(
        self, channel: Channel, native_watching: None
    ) -> None:
        """An ended request whose outcome is removed first, then its answer, then itself (as
        `rm -rf` may take them) gives `removed` alone: never `answered` or `stale` again."""
        with channel.server() as lock, Watcher(channel) as watcher:
            subscription, _ = watcher.subscribe()
            request = command(lock)
            channel.file(request)
            channel.answer(request.id, "no", kind=Kind.COMMAND, via=Via.CLI)
            channel.settle(request, Outcome.ANSWERED, by="asker", decision="no")
            assert events(take(subscription, 3)) == [
                ("filed", request.id),
                ("answered", request.id),
                ("settled", request.id),
            ]
            for suffix in ("settled", "answer", "request"):
                (channel.path / f"{request.id}.{suffix}.json").unlink()
                if suffix != "request":
                    quiet(subscription)
            assert events(take(subscription, 1)) == [("removed", request.id)]
