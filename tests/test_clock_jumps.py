"""The wall clock set forward and back: nothing expires or revives wrongly.

An asker's deadline runs on the monotonic clock from the moment it published its request, so
setting the wall clock (by hand, or NTP stepping it) neither ends a request early nor keeps
it waiting late; no sweep claims a request whose asker lives; a request the wall clock says
expired reads as waiting for LIVE_EXPIRY_GRACE_S (a small step forward does not end it); and
what ended stays ended when the clock goes back, as the ending is a file, not a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from figures import note
from helpers import command, fact, run_wisp
from invariants import violations

from pending import LIVE_EXPIRY_GRACE_S, Channel, Kind, Outcome, State
from pending.testing import FakeClock
from wisp._asking import Asker
from wisp.kinds.command_gate import ApprovalGate
from wisp.routes.notify import Notifier

DEADLINE_S = 0.6  # the asker's own deadline in these tests (real, monotonic seconds)
DAY_S = 86400.0


@pytest.fixture
def clocked(home: Path) -> Iterator[tuple[Channel, FakeClock]]:
    clock = FakeClock()
    with Channel.open(home, clock=clock) as channel:
        yield channel, clock


def quiet(home: Path) -> Notifier:
    return Notifier(home, settings={"notifications.enabled": False}, entry_point="test")


class TestClockJumps:
    @pytest.mark.parametrize("jump_s", [DAY_S, -DAY_S, LIVE_EXPIRY_GRACE_S / 2, -3600.0])
    def test_the_askers_deadline_is_its_own(
        self, clocked: tuple[Channel, FakeClock], jump_s: float
    ) -> None:
        """Filed, then the wall clock is set forward or back: a sweep (by that clock) claims
        nothing, the request is still waiting a moment later, and the asker times out on its
        own clock, no sooner and not much later: timed-out, as the slot says (exit 124)."""
        channel, clock = clocked
        with Asker(channel, entry_point="approvals", notifier=quiet(channel.home)) as asker:
            gate = ApprovalGate(asker, timeout_s=DEADLINE_S)
            started = time.monotonic()
            request = gate.file("make deploy", "/srv")
            clock.jump(jump_s)
            assert channel.sweep().stale == ()
            assert channel.read(request.id).answer is None
            assert [r.id for r in asker.waiting()] == [request.id]
            ending = asker.wait(request.id, 30)
            waited = time.monotonic() - started
        assert ending is not None and ending.outcome is Outcome.TIMED_OUT
        assert DEADLINE_S <= waited < DEADLINE_S + 10
        slot = channel.read(request.id).answer
        assert slot is not None and slot.decision == "timed-out"
        assert not gate.verdict(ending).approved
        assert violations(channel) == []
        note("clock-jumps", jump_s=jump_s)

    def test_a_small_step_forward_leaves_it_answerable(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """Stepped past expiresAt by less than the grace, with its asker alive: still filed,
        and a person's answer then is the one applied."""
        channel, clock = clocked
        with Asker(channel, entry_point="approvals", notifier=quiet(channel.home)) as asker:
            gate = ApprovalGate(asker, timeout_s=600)
            request = gate.file("make deploy", "/srv")
            clock.jump(600 + LIVE_EXPIRY_GRACE_S / 2)
            assert channel.status(request.id).state is State.FILED
            channel.answer(request.id, "once", kind=Kind.COMMAND, via="cli")
            ending = asker.wait(request.id, 10)
            assert ending is not None and gate.verdict(ending).approved

    def test_a_large_step_forward_leaves_it_to_its_asker(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """Far past expiresAt by the wall clock while its asker waits (its lock held): it
        still reads waiting, no sweep writes its ending; the asker, on its own clock, does."""
        channel, clock = clocked
        with Asker(channel, entry_point="approvals", notifier=quiet(channel.home)) as asker:
            request = ApprovalGate(asker, timeout_s=DEADLINE_S).file("make deploy", "/srv")
            clock.jump(DAY_S)
            assert channel.status(request.id).state is State.FILED
            assert channel.sweep().stale == ()
            ending = asker.wait(request.id, 30)
        assert ending is not None and ending.outcome is Outcome.TIMED_OUT

    @pytest.mark.parametrize("ending", [Outcome.TIMED_OUT, Outcome.STALE, Outcome.WITHDRAWN])
    def test_nothing_ended_revives_when_the_clock_goes_back(
        self, clocked: tuple[Channel, FakeClock], ending: Outcome
    ) -> None:
        """An ending is a file in the slot: setting the clock back a day (or a year) changes
        nothing about it."""
        channel, clock = clocked
        with channel.server() as lock:
            request = command(lock, clock=clock, expires_in_s=60)
            channel.file(request)
            channel.claim(request, ending, via="asker")
            for back in (-DAY_S, -365 * DAY_S):
                clock.jump(back)
                status = channel.status(request.id)
                assert (status.state, status.outcome) == (State.SETTLED, ending)
        assert channel.sweep().finished == (request.id,)
        assert channel.status(request.id).outcome is ending

    def test_a_dead_askers_expired_fact_is_swept_and_stays_ended(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """A 0.22.0-style fact (with an expiry) whose asker is gone: stale by the wall clock,
        claimed by the sweep; the clock set back then does not bring it back."""
        channel, clock = clocked
        with channel.server() as lock:
            request = fact(lock, clock=clock, expires_in_s=60)
            channel.file(request)
        assert channel.status(request.id).state is State.HANDED_OVER
        clock.jump(61)
        assert channel.sweep().stale == (request.id,)
        clock.jump(-DAY_S)
        assert channel.status(request.id).outcome is Outcome.STALE


class TestABusySweeper:
    """The issue's case: a sweep near a deadline once claimed a plain time-out `stale`."""

    def test_a_sweeper_never_beats_the_askers_own_time_out(self, channel: Channel) -> None:
        """Ten requests time out while another thread sweeps without pause: each ends
        `timed-out` by its asker (exit 124), none `stale`."""
        stop = threading.Event()
        sweeps = 0

        def sweep() -> None:
            nonlocal sweeps
            with Channel.open(channel.home) as other:
                while not stop.is_set():
                    other.sweep()
                    sweeps += 1

        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        try:
            with Asker(channel, entry_point="approvals", notifier=quiet(channel.home)) as asker:
                gate = ApprovalGate(asker, timeout_s=0.2)
                verdicts = [gate.request(f"make t{n}", "/srv") for n in range(10)]
        finally:
            stop.set()
            sweeper.join(30)
        assert [v.outcome for v in verdicts] == ["timed-out"] * 10
        assert sweeps > 10
        note("busy-sweeper", requests=len(verdicts), sweeps=sweeps)

    def test_from_the_command_line(self, home: Path) -> None:
        """`wisp approvals request --timeout 0.5` beside a busy sweeper exits 124."""
        stop = threading.Event()

        def sweep() -> None:
            with Channel.open(home) as other:
                while not stop.is_set():
                    other.sweep()

        Channel.open(home).close()
        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        try:
            done = run_wisp("approvals", "request", "--json", "--timeout", "0.5", "--", "ls")
        finally:
            stop.set()
            sweeper.join(30)
        assert done.returncode == 124, done.stderr
        assert '"outcome": "timed-out"' in done.stdout
