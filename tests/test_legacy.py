"""Files others wrote: requests an earlier build filed with only the fields the seeds name.

A record with no `format` is read leniently but never unsafely: only absence is forgiven;
title and body come from the binding; the digest an answer is bound to is the digest of the
binding exactly as read; liveness falls back from the lock to the recorded pid, and where
neither is named nothing is ever swept on a guess. Such requests are listed and answered
(a kept fact is applied), from Python and from the command line.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, in_terminal, run_wisp
from invariants import kept_facts, violations

from pending import (
    LIVE_EXPIRY_GRACE_S,
    UNKNOWN_PID,
    UNKNOWN_SERVER_ID,
    Channel,
    CommandBinding,
    Delivery,
    FactBinding,
    Kind,
    Liveness,
    Outcome,
    State,
    Via,
)
from pending.testing import FakeClock
from wisp._answering import Answerer, AnswerFate

LEGACY = FIXTURES / "legacy"
COMMAND = LEGACY / "0160c0de.request.json"  # 0.16.0: id, expiresAt, binding{command, cwd}
FACT = LEGACY / "0220fac7.fact.json"  # a fact: id, binding{factId, subject, name, value, source}
DEAD = LEGACY / "0160dead.request.json"  # a command naming a pid no process can have


def seeded(channel: Channel, source: Path, **changes: Any) -> Path:
    """Write *source* (edited by *changes*) into the channel, as its writer left it."""
    tree = json.loads(source.read_bytes())
    tree.update(changes)
    target = channel.path / source.name
    target.write_text(json.dumps(tree, indent=2))
    os.chmod(target, 0o600)
    return target


def raw_digest(path: Path) -> str:
    """sha256 of the canonical JSON of the binding exactly as written (the design's rule)."""
    binding = json.loads(path.read_bytes())["binding"]
    canonical = json.dumps(binding, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def dead_pid() -> int:
    """A pid that was a process a moment ago and is none now."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


class TestReadingLegacyRecords:
    def test_a_0_16_0_command_from_the_seeds_fields_alone(self, channel: Channel) -> None:
        """No kind, no format, no server, title or body: a command, titled and described from
        its binding, bound to the digest of the binding as read, filed when its file was."""
        path = seeded(channel, COMMAND)
        status = channel.status("0160c0de")
        request = status.request
        assert request.legacy and request.kind is Kind.COMMAND
        assert request.binding == CommandBinding(command="make deploy", cwd="/home/ana/src/shop")
        assert request.title == "wisp: run a command?"
        assert request.body == "make deploy (in /home/ana/src/shop)"
        assert request.binding_digest == raw_digest(path)
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        assert abs(request.filed_at - mtime) < timedelta(milliseconds=1)
        assert (request.server.id, request.server.pid) == (UNKNOWN_SERVER_ID, UNKNOWN_PID)
        assert channel.liveness(request) is Liveness.UNKNOWN
        assert status.state is State.FILED  # nothing says its asker is gone

    def test_a_fact_from_the_seeds_fields_alone(self, channel: Channel) -> None:
        """A fact whose binding has no proposedBy: read as proposed by someone unknown, its
        digest still the binding's as written."""
        path = seeded(channel, FACT)
        request = channel.status("0220fac7").request
        assert request.kind is Kind.FACT and request.legacy
        assert isinstance(request.binding, FactBinding)
        assert request.binding.proposed_by == "unknown"
        assert request.body == "release codename = BLUE HERON"
        assert request.binding_digest == raw_digest(path)

    @pytest.mark.parametrize(
        ("changes", "reason"),
        [
            ({"title": 5}, "title"),
            ({"server": "me"}, "server"),
            ({"server": {"pid": "4242"}}, "pid"),
            ({"server": {"id": "NOT-AN-ID"}}, "not an ID"),
            ({"bindingDigest": "0" * 64}, "altered"),
            ({"kind": "fact"}, "binding"),  # read as a fact's, it lacks a fact's fields
            ({"binding": ["make"]}, "binding"),
            ({"expiresAt": "tomorrow"}, "timestamp"),
        ],
        ids=lambda v: str(v)[:30],
    )
    def test_only_absence_is_forgiven(
        self, channel: Channel, changes: dict[str, Any], reason: str
    ) -> None:
        """A field an earlier build did write must be right: else the file is refused."""
        seeded(channel, COMMAND, **changes)
        problems = {p.name: p.reason for p in channel.listing().problems}
        assert reason in problems.get(COMMAND.name, ""), problems

    def test_an_earlier_builds_full_record_reads_as_written(self, channel: Channel) -> None:
        """0.16.0's own fixture (every field, no format) reads with its own title and body."""
        shutil.copyfile(FIXTURES / "good" / "a1b2c3d4.request.json", channel.path / "x")
        os.replace(channel.path / "x", channel.path / "a1b2c3d4.request.json")
        request = channel.status("a1b2c3d4").request
        assert request.legacy and request.title == "wisp: run a command?"
        assert request.body == "make deploy — wisp approvals approve a1b2c3d4"


class TestLegacyLiveness:
    def test_a_dead_pid_is_gone_and_its_request_is_swept(self, channel: Channel) -> None:
        """No lock, a pid no process has: stale, claimed by the sweep (that is no guess)."""
        seeded(channel, DEAD)
        assert channel.status("0160dead").state is State.STALE
        assert channel.sweep().stale == ("0160dead",)

    def test_a_living_pid_is_alive(self, channel: Channel) -> None:
        """No lock, its pid alive (here, this process: as a reused pid would be)."""
        seeded(channel, DEAD, server={"pid": os.getpid()})
        assert channel.status("0160dead").state is State.FILED
        assert channel.sweep().stale == ()

    def test_a_pid_that_died_is_gone(self, channel: Channel) -> None:
        """A pid that was alive and is not any more."""
        seeded(channel, DEAD, server={"pid": dead_pid()})
        assert channel.status("0160dead").state is State.STALE

    def test_a_lock_where_there_is_one_decides(self, channel: Channel) -> None:
        """A legacy request naming a server with a lock file: the lock decides, not the pid."""
        with channel.server() as lock:
            seeded(channel, DEAD, server={"id": lock.id, "pid": dead_pid()})
            assert channel.status("0160dead").state is State.FILED  # held, whatever the pid
        (channel.path / ".servers" / f"{lock.id}.lock").write_text("")  # left free
        seeded(channel, DEAD, server={"id": lock.id, "pid": os.getpid()})
        assert channel.status("0160dead").state is State.STALE  # free, whatever the pid

    def test_never_swept_on_a_guess_only_once_expired(self, home: Path) -> None:
        """Naming no asker: left alone by every sweep until it expires (and its grace)."""
        clock = FakeClock(datetime(2098, 12, 31, 23, 0, tzinfo=UTC))
        with Channel.open(home, clock=clock) as channel:
            seeded(channel, COMMAND)
            assert channel.sweep().stale == ()
            clock.advance(3600)  # expired; an asker (if any) has its grace
            assert channel.sweep().stale == ()
            clock.advance(LIVE_EXPIRY_GRACE_S)
            assert channel.sweep().stale == ("0160c0de",)
            assert violations(channel) == []

    def test_an_answered_command_naming_no_asker_is_never_settled_on_a_guess(
        self, channel: Channel
    ) -> None:
        """Answered, its asker unknown: an earlier build's asker may yet act on it, so no
        sweep settles it stale (nor does anything here act on it)."""
        seeded(channel, COMMAND)
        channel.answer("0160c0de", "once", kind=Kind.COMMAND, via="cli")
        report = channel.sweep()
        assert report.finished == () and report.stale == ()
        assert channel.status("0160c0de").state is State.ANSWERED


class TestAnsweringLegacyRequests:
    def test_an_answer_is_bound_to_the_binding_as_read(self, channel: Channel) -> None:
        """The answer carries the digest of the binding as the earlier build wrote it, the
        one its asker will compare."""
        path = seeded(channel, COMMAND)
        result = channel.answer("0160c0de", "once", kind=Kind.COMMAND, via="cli")
        assert result.won and result.answer.binding_digest == raw_digest(path)
        written = json.loads((channel.path / "0160c0de.answer.json").read_text())
        assert written["bindingDigest"] == raw_digest(path)

    def test_a_kept_fact_naming_no_asker_is_applied_after_the_wait(self, channel: Channel) -> None:
        """No asker known to apply it: the answering process keeps it (once)."""
        seeded(channel, FACT)
        report = Answerer(channel, via=Via.CLI, entry_point="facts", wait_s=0.2).answer(
            "0220fac7", "keep", kind=Kind.FACT
        )
        assert report.won and report.applied and report.asker is AnswerFate.SETTLED
        assert report.settled is not None and report.settled.delivery is Delivery.APPLIED
        assert [f["request"] for f in kept_facts(channel.home)] == ["0220fac7"]
        assert violations(channel) == []


class TestFromTheCommandLine:
    def test_listed_answered_and_kept(self, home: Path) -> None:
        """`wisp pending --json` lists both (and says what it skipped); `approve` answers the
        command; `keep` keeps the fact."""
        with Channel.open(home) as channel:
            seeded(channel, COMMAND)
            seeded(channel, FACT)
            (channel.path / "0badbad0.request.json").write_text("{")
            os.chmod(channel.path / "0badbad0.request.json", 0o600)
        assert run_wisp("config", "set", "answer.waitSeconds", "0.2").returncode == 0
        listed = run_wisp("pending", "--json")
        assert listed.returncode == 0, listed.stderr
        rows = {r["id"]: r for r in json.loads(listed.stdout)}
        assert set(rows) == {"0160c0de", "0220fac7"}
        assert rows["0160c0de"]["body"] == "make deploy (in /home/ana/src/shop)"
        assert "skipped 1 entry" in listed.stderr

        code, out = in_terminal("approvals", "approve", "0160c0de")
        assert code == 0 and "approved once (0160c0de)" in out, out
        code, out = in_terminal("facts", "keep", "0220fac7")
        assert code == 0 and "kept release codename = BLUE HERON" in out, out
        with Channel.open(home) as channel:
            status = channel.status("0220fac7")
            assert status.outcome is Outcome.ANSWERED and status.settled is not None
            assert [f["id"] for f in kept_facts(home)] == [status.settled.result]
