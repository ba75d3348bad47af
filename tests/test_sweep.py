"""Sweeping: stale requests settled, ended groups and crashed writers' leftovers removed,
and a fact request that no outcome ended never removed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import command, fact, question

from pending import SETTLED_GRACE_S, STALE_TMP_AFTER_S, Channel, Kind, Outcome, State
from pending.testing import FakeClock


@pytest.fixture
def clocked(home: Path) -> Iterator[tuple[Channel, FakeClock]]:
    clock = FakeClock()
    with Channel.open(home, clock=clock) as channel:
        yield channel, clock


class TestSweep:
    def test_stale_commands_and_questions_are_settled_stale(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """A dead server's command and question are claimed and settled `stale`; its fact is not."""
        channel, _ = clocked
        with channel.server() as lock:
            cmd, fct, qst = command(lock), fact(lock), question(lock)
            for req in (cmd, fct, qst):
                channel.file(req)
        report = channel.sweep()
        assert set(report.stale) == {cmd.id, qst.id}
        for req in (cmd, qst):
            status = channel.status(req.id)
            assert status.state is State.SETTLED and status.outcome is Outcome.STALE
            assert status.settled is not None and status.settled.by == "sweep"
        assert channel.status(fct.id).state is State.HANDED_OVER

    def test_a_handed_over_fact_is_never_removed(self, clocked: tuple[Channel, FakeClock]) -> None:
        """However long it waits, a fact request no outcome ended stays for the person."""
        channel, clock = clocked
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
        clock.advance(SETTLED_GRACE_S * 100)
        channel.sweep()
        assert channel.status(req.id).state is State.HANDED_OVER

    def test_live_requests_are_left_alone(
        self,
        clocked: tuple[Channel, FakeClock],
    ) -> None:
        """A waiting request of a live server is untouched."""
        channel, _ = clocked
        with channel.server() as lock:
            req = command(lock, expires_in_s=None)
            channel.file(req)
            assert channel.sweep().stale == ()
            assert channel.status(req.id).state is State.FILED

    def test_expired_requests_are_settled_stale(self, clocked: tuple[Channel, FakeClock]) -> None:
        """Past expiresAt, even with a live server, a request is swept stale."""
        channel, clock = clocked
        with channel.server() as lock:
            req = command(lock, clock=clock, expires_in_s=60)
            channel.file(req)
            clock.advance(61)
            assert channel.sweep().stale == (req.id,)

    def test_ended_groups_are_removed_after_the_grace_period(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """Settled groups stay for the grace period, then every file of them goes."""
        channel, clock = clocked
        with channel.server() as lock:
            req = command(lock, clock=clock)
            channel.file(req)
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            channel.settle(req, Outcome.ANSWERED, by="asker", decision="once")
            clock.advance(SETTLED_GRACE_S - 1)
            assert channel.sweep().removed == ()
            clock.advance(2)
            assert channel.sweep().removed == (req.id,)
        assert not [p for p in channel.path.iterdir() if p.name.startswith(req.id)]

    def test_a_claimed_slot_without_outcome_is_finished(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """A process claimed the slot (timed-out) and died before settling: the sweep settles."""
        channel, _ = clocked
        with channel.server() as lock:
            req = question(lock)
            channel.file(req)
            channel.claim(req, Outcome.TIMED_OUT, via="asker")
            assert channel.sweep().finished == (req.id,)
            settled = channel.status(req.id).settled
            assert settled is not None and settled.outcome is Outcome.TIMED_OUT

    def test_an_answered_command_of_a_dead_server_ends_stale(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """Answered, but the asker died before acting: settled stale, keeping the decision."""
        channel, _ = clocked
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            assert channel.sweep().finished == ()  # alive: the asker will settle it
        assert channel.sweep().finished == (req.id,)
        settled = channel.status(req.id).settled
        assert settled is not None and settled.outcome is Outcome.STALE
        assert settled.decision == "once"

    def test_an_answered_fact_of_a_dead_server_awaits_application(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """The channel cannot apply a fact: it reports it for the answering face to apply."""
        channel, _ = clocked
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
        channel.answer(req.id, "keep", kind=Kind.FACT, via="cli")
        report = channel.sweep()
        assert [s.id for s in report.awaiting] == [req.id]
        assert channel.status(req.id).state is State.ANSWERED

    def test_crashed_writers_temp_files_are_removed(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """Old staged files go; one being written now stays."""
        channel, clock = clocked
        tmp = channel.path / ".tmp"
        old, fresh = tmp / "a1b2c3d4.answer.json.1.x.tmp", tmp / "b1b2c3d4.answer.json.2.y.tmp"
        old.write_text("{")
        fresh.write_text("{")
        past = clock.now().timestamp() - STALE_TMP_AFTER_S - 1
        os.utime(old, (past, past))
        now = clock.now().timestamp()
        os.utime(fresh, (now, now))
        assert channel.sweep().temp_files == 1
        assert not old.exists() and fresh.exists()

    def test_dead_servers_locks_are_removed(self, clocked: tuple[Channel, FakeClock]) -> None:
        """A lock file nobody holds is removed; a held one stays."""
        channel, _ = clocked
        servers = channel.path / ".servers"
        (servers / "deadbeef.lock").write_text("1\n")
        with channel.server() as lock:
            assert channel.sweep().locks == 1
            assert (servers / f"{lock.id}.lock").exists()
            assert not (servers / "deadbeef.lock").exists()
