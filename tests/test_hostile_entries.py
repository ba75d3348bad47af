"""Hostile entries in every slot: symlinks, FIFOs, directories, hard links and junk bytes
where a request, an answer or an outcome should be.

Whatever sits there, the channel still lists (reporting each entry), watches, answers a good
request and lets a new asker file; the hostile entry is never acted on, never removed, never
a traceback and never a hang. A live asker whose slot fills with junk ends `failed` cleanly.

Examples: ``WISP_HOSTILE_EXAMPLES`` (default 40 times ``WISP_FAULT_TRIALS``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from figures import note, scaled
from helpers import FIXTURES, AskingCommand, command, in_terminal, read_line, run_wisp, wisp_command
from hypothesis import HealthCheck, given, settings
from strategies import ENTRY_KINDS, SLOT_SUFFIXES, HostileEntry, hostile_entries

from pending import (
    Backend,
    Channel,
    Kind,
    Outcome,
    PendingError,
    Request,
    State,
    Via,
    Watcher,
)
from wisp._answering import Answerer
from wisp._asking import Asker
from wisp.kinds.command_gate import ApprovalGate
from wisp.routes.notify import Notifier

EXAMPLES = scaled("WISP_HOSTILE_EXAMPLES", 40)
GOOD_RECORD = FIXTURES / "good" / "d4e5f6a7.fact.json"
FRESH = {"fresh-1": "feed0001", "fresh-2": "feed0002"}


def plant(channel: Channel, name: str, kind: str, outside: Path, other: Path) -> None:
    """Put a hostile entry of sort *kind* at *name* in the channel (*outside*: a directory
    outside it; *other*: another request's published file)."""
    path = channel.path / name
    if kind == "symlink-to-good":
        target = outside / f"good-{name}"
        shutil.copyfile(GOOD_RECORD, target)
        path.symlink_to(target)
    elif kind == "symlink-dangling":
        path.symlink_to(outside / "nothing-here")
    elif kind == "symlink-loop":
        path.symlink_to(path)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        path.mkdir(mode=0o700)
    elif kind == "hardlink-other-id":
        os.link(other, path)
    elif kind == "hardlink-three":
        source = outside / f"three-{name}"
        shutil.copyfile(GOOD_RECORD, source)
        os.link(source, outside / f"three-again-{name}")
        os.link(source, path)
    elif kind == "garbage":
        path.write_bytes(b"\x00\xffnot json at all\x1b[2J")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(GOOD_RECORD.read_bytes()[:100])
    else:  # pragma: no cover - the strategy names only these
        raise AssertionError(kind)
    if not path.is_symlink() and path.exists() and not stat.S_ISFIFO(path.stat().st_mode):
        os.chmod(path, 0o700 if path.is_dir() else 0o600)


def shape(path: Path) -> tuple[str, int]:
    """What an entry is, to tell that nothing touched it: its type and inode."""
    st = os.lstat(path)
    return stat.filemode(st.st_mode)[0], st.st_ino


def quiet(home: Path) -> Notifier:
    return Notifier(home, settings={"notifications.enabled": False}, entry_point="test")


@contextmanager
def channel_with(entries: list[HostileEntry]) -> Iterator[tuple[Channel, Request, Request]]:
    """A fresh channel: a live asker's command (the "live" target), a second good command
    (never touched), and every entry planted."""
    with (
        tempfile.TemporaryDirectory() as scratch,
        Channel.open(Path(scratch) / "home") as channel,
        channel.server() as lock,
    ):
        live, good, other = command(lock), command(lock), command(lock)
        for request in (live, good, other):
            channel.file(request)
        ids = {"live": live.id, **FRESH}
        outside = Path(scratch)
        for entry in entries:
            name = ids[entry.target] + entry.suffix
            plant(channel, name, entry.kind, outside, channel.path / f"{other.id}.request.json")
        yield channel, live, good


class TestHostileEntries:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(entries=hostile_entries)
    def test_never_acted_on_always_reported_and_the_rest_goes_on(
        self, entries: list[HostileEntry]
    ) -> None:
        """Listing, a watcher, an answer to a good request, a new asker and a sweep all go on;
        every hostile entry is reported and left exactly as it was."""
        with channel_with(entries) as (channel, live, good):
            names = {
                (live.id if e.target == "live" else FRESH[e.target]) + e.suffix for e in entries
            }
            before = {n: shape(channel.path / n) for n in names}
            started = time.monotonic()

            listing = channel.listing()
            reported = {p.name for p in listing.problems}
            assert names <= reported, (names, reported)
            listed = {s.id for s in listing.statuses}
            assert good.id in listed and not listed & set(FRESH.values())

            with Watcher(channel, backend=Backend.AUTO, polling_interval_s=0.05) as watcher:
                _, snapshot = watcher.subscribe()
                assert {s.id for s in snapshot} == listed

            answerer = Answerer(channel, via=Via.CLI, entry_point="approvals", wait_s=0)
            assert answerer.answer(good.id, "once", kind=Kind.COMMAND).won
            for target in {e.target for e in entries}:  # a group holding junk takes nothing
                request_id = live.id if target == "live" else FRESH[target]
                with pytest.raises(PendingError):
                    channel.answer(request_id, "no", kind=Kind.COMMAND, via="cli")

            with channel.server() as lock:
                newcomer = command(lock)
                channel.file(newcomer)
                assert channel.status(newcomer.id).state is State.FILED

            report = channel.sweep()
            assert names <= {p.name for p in report.problems}
            assert {n: shape(channel.path / n) for n in names} == before
            assert time.monotonic() - started < 30  # nothing blocked (a FIFO opened for read)
        note("hostile", entries=len(entries), kinds=sorted({e.kind for e in entries}))

    @pytest.mark.parametrize("kind", ENTRY_KINDS)
    @pytest.mark.parametrize("suffix", [".answer.json", ".settled.json"])
    def test_a_live_asker_with_junk_in_its_slot_ends_failed(
        self, channel: Channel, tmp_path: Path, kind: str, suffix: str
    ) -> None:
        """Junk appears in a waiting request's answer or outcome slot: the asker ends it
        `failed` (never approved), naming the file; closing it raises nothing."""
        other = tmp_path / "other.json"
        shutil.copyfile(FIXTURES / "good" / "c3d4e5f6a7.request.json", other)
        asker = Asker(channel, entry_point="approvals", notifier=quiet(channel.home))
        try:
            gate = ApprovalGate(asker, timeout_s=30)

            def junk(request: Request) -> None:
                plant(channel, request.id + suffix, kind, tmp_path, other)

            approval = gate.request("make deploy", "/srv", on_filed=junk)
        finally:
            asker.close()
        assert (approval.approved, approval.outcome) == (False, "failed")
        assert approval.reason is not None and suffix in approval.reason
        assert approval.request_id is not None
        status = channel.status(approval.request_id)
        if suffix == ".answer.json":
            assert status.outcome is Outcome.FAILED  # its outcome written beside the junk


class TestJunkInEverySlotFromTheCommandLine:
    def test_lists_watches_answers_and_asks(self, home: Path, tmp_path: Path) -> None:
        """Junk of every sort in every slot type: `wisp pending` (and --json) lists the good
        request and says what it skipped, `watch` starts, a good request is approved from a
        terminal, and a new asker files and times out as it should (124)."""
        with Channel.open(home) as channel, channel.server() as lock:
            good, other = command(lock), command(lock)
            channel.file(good)
            channel.file(other)
            count = 0
            for index, kind in enumerate(ENTRY_KINDS):
                for suffix in SLOT_SUFFIXES:
                    name = f"bad{index:02d}{count:03d}{suffix}"
                    plant(channel, name, kind, tmp_path, channel.path / f"{other.id}.request.json")
                    count += 1
            listed = run_wisp("pending", "--json")
            assert listed.returncode == 0, listed.stderr
            assert good.id in {r["id"] for r in json.loads(listed.stdout)}
            # Each planted entry, and the request they hard-linked (six links now: refused).
            assert f"skipped {count + 1} " in listed.stderr, listed.stderr
            assert "Traceback" not in listed.stderr
            table = run_wisp("pending")
            assert table.returncode == 0 and good.id in table.stdout
            assert "Traceback" not in table.stderr

            code, out = in_terminal("approvals", "approve", good.id, timeout=60)
            assert code == 0 and "Traceback" not in out, out
            assert channel.status(good.id).answer is not None

            asking = AskingCommand("approvals", "request", "--timeout", "0.5", "--", "ls")
            code, _, err = asking.result()
            assert code == 124 and "Traceback" not in err, err

            watch = WatchOnce(home)
            assert "watching" in watch.first_line


class WatchOnce:
    """`wisp pending watch` started, its first stderr line read, then stopped."""

    def __init__(self, home: Path) -> None:
        import signal
        import subprocess

        process = subprocess.Popen(
            wisp_command("pending", "watch"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "WISP_HOME": str(home)},
        )
        try:
            assert process.stderr is not None
            self.first_line = read_line(process.stderr, timeout=30)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
