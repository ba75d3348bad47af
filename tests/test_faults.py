"""Faults injected at the channel's own I/O seam: ENOSPC, EIO, EROFS and EPERM at each create,
write, fsync, link and unlink of each transition (filing, answering, claiming, settling,
sweeping, locking), then the application's transitions (asking, answering, keeping, listing)
under the same faults.

Every fault must end in a :class:`pending.ChannelUnwritable` naming the path, its errno and
what to do, or (where the step cannot undo what was done: the staged copy's removal, the
directory's fsync) in a publication that stands; never a partial file under a final name,
never a request in two states, and never an approval by error.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import command, fact, nameless_here, wait_until
from invariants import kept_facts, temp_files, violations

from pending import (
    STALE_TMP_AFTER_S,
    Channel,
    ChannelUnwritable,
    Delivery,
    Kind,
    Outcome,
    Request,
    ServerLock,
    State,
    Via,
)
from pending.testing import FakeClock, Fault, IoStep, Op, Phase, Recorder, io_hook, raise_at
from wisp._answering import Answerer, AnswerFate
from wisp._asking import Asker
from wisp.kinds.command_gate import ApprovalGate
from wisp.kinds.fact_keeper import FactKeeper
from wisp.routes.notify import Notifier

ERRNOS = {
    "ENOSPC": errno.ENOSPC,
    "EIO": errno.EIO,
    "EROFS": errno.EROFS,
    "EPERM": errno.EPERM,
}
# The steps of a publication that, failing, mean nothing was published (the link after it
# took effect but was reported failed is recognised by its inode: it is published).
FATAL = [
    Fault(op=Op.CREATE, staged=True),
    Fault(op=Op.WRITE, staged=True),
    Fault(op=Op.FSYNC, staged=True),
    Fault(op=Op.LINK),
]
# Steps after the link: failing, they leave the publication standing (and maybe a temp).
AFTER_LINK = [
    Fault(op=Op.LINK, phase=Phase.AFTER),
    Fault(op=Op.UNLINK, staged=True),
    Fault(op=Op.FSYNC_DIR),
]


def step_id(fault: Fault) -> str:
    return f"{fault.phase}-{fault.op}"


@pytest.fixture
def clocked(home: Path) -> Iterator[tuple[Channel, FakeClock]]:
    clock = FakeClock()
    with Channel.open(home, clock=clock) as channel:
        yield channel, clock


def quiet_notifier(home: Path) -> Notifier:
    return Notifier(home, settings={"notifications.enabled": False}, entry_point="test")


def assert_names_path(exc: ChannelUnwritable, path: Path, code: int) -> None:
    """The message says where, what, and what to do."""
    text = str(exc)
    assert str(path) in text, text
    assert errno.errorcode[code] in text, text
    assert exc.errno == code
    assert any(
        remedy in text for remedy in ("free some space", "read-only", "chattr -i", "dmesg")
    ), text


def dead_pid() -> int:
    """A pid that was a process a moment ago and is none now."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def at(fault: Fault, suffix: str) -> Fault:
    return Fault(op=fault.op, phase=fault.phase, staged=fault.staged, suffix=suffix)


@pytest.mark.usefixtures("staging")
class TestPublicationUnderFaults:
    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize("fault", FATAL, ids=step_id)
    def test_filing_fails_whole(
        self, clocked: tuple[Channel, FakeClock], fault: Fault, code: int
    ) -> None:
        """Filing that fails leaves no request and no temp file: it raises, naming the path."""
        channel, _ = clocked
        with channel.server() as lock:
            req = command(lock)
            with (
                io_hook(raise_at(at(fault, ".request.json"), code)),
                pytest.raises(ChannelUnwritable) as caught,
            ):
                channel.file(req)
        assert_names_path(caught.value, channel.path / f"{req.id}.request.json", code)
        assert not (channel.path / f"{req.id}.request.json").exists()
        assert temp_files(channel) == []
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize("fault", FATAL, ids=step_id)
    def test_an_answer_that_fails_leaves_the_slot_free(
        self, clocked: tuple[Channel, FakeClock], fault: Fault, code: int
    ) -> None:
        """A person's answer that cannot be written is not recorded; the request still waits
        and takes the next answer."""
        channel, _ = clocked
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            with (
                io_hook(raise_at(at(fault, ".answer.json"), code)),
                pytest.raises(ChannelUnwritable) as caught,
            ):
                channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            assert_names_path(caught.value, channel.path / f"{req.id}.answer.json", code)
            assert channel.status(req.id).state is State.FILED
            assert channel.answer(req.id, "no", kind=Kind.COMMAND, via="cli").won
        assert temp_files(channel) == []
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize("fault", FATAL, ids=step_id)
    @pytest.mark.parametrize("ending", [Outcome.TIMED_OUT, Outcome.WITHDRAWN, Outcome.STALE])
    def test_a_claim_that_fails_decides_nothing(
        self, clocked: tuple[Channel, FakeClock], fault: Fault, code: int, ending: Outcome
    ) -> None:
        """A tombstone that cannot be written leaves the slot free: nothing was decided."""
        channel, _ = clocked
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            with (
                io_hook(raise_at(at(fault, ".answer.json"), code)),
                pytest.raises(ChannelUnwritable),
            ):
                channel.claim(req, ending, via="asker")
            assert channel.read(req.id).answer is None
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize("fault", FATAL, ids=step_id)
    def test_an_outcome_that_fails_leaves_the_decision_standing(
        self, clocked: tuple[Channel, FakeClock], fault: Fault, code: int
    ) -> None:
        """The answer stays in its slot, unsettled: a later settle (or sweep) finishes it."""
        channel, _ = clocked
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            with (
                io_hook(raise_at(at(fault, ".settled.json"), code)),
                pytest.raises(ChannelUnwritable) as caught,
            ):
                channel.settle(req, Outcome.ANSWERED, by="asker", decision="once")
            assert_names_path(caught.value, channel.path / f"{req.id}.settled.json", code)
            status = channel.status(req.id)
            assert status.state is State.ANSWERED and status.settled is None
            assert channel.settle(req, Outcome.ANSWERED, by="asker", decision="once").won
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize("fault", AFTER_LINK, ids=step_id)
    def test_a_fault_after_the_link_leaves_the_publication_standing(
        self, clocked: tuple[Channel, FakeClock], fault: Fault, code: int, staging: str
    ) -> None:
        """Once linked, the file is published (others may have read it already): a link
        reported failed that took effect is recognised as won, and a staged copy that cannot
        be removed is left for the sweep, which removes it once it is old."""
        channel, clock = clocked
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            with io_hook(raise_at(at(fault, ".answer.json"), code)):
                result = channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            assert result.won
            assert channel.status(req.id).state is State.ANSWERED
            left = temp_files(channel)
            named = staging == "named"  # a nameless file has no name to leave
            assert len(left) == (1 if fault.op is Op.UNLINK and named else 0)
            assert channel.sweep().temp_files == 0  # young: a writer's, for all a sweep knows
            clock.advance(STALE_TMP_AFTER_S + 1)
            for name in left:  # (the fake clock is behind the files' real times)
                old = clock.now().timestamp() - STALE_TMP_AFTER_S - 1
                os.utime(channel.path / ".tmp" / name, (old, old))
            assert channel.sweep().temp_files == 0  # old, but its writer (we) lives
            for name in left:  # as it is once its writer has gone
                gone = name.replace(f".{os.getpid()}.", f".{dead_pid()}.")
                os.rename(channel.path / ".tmp" / name, channel.path / ".tmp" / gone)
            assert channel.sweep().temp_files == len(left)
        assert temp_files(channel) == []
        assert violations(channel) == []

    def test_a_lost_race_reported_as_a_failure_is_still_lost(self, channel: Channel) -> None:
        """EEXIST is first-wins losing, even with a fault after: the winner is read back."""
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            assert channel.answer(req.id, "no", kind=Kind.COMMAND, via="cli").won
            claimed = channel.claim(req, Outcome.TIMED_OUT, via="asker")
        assert not claimed.won and claimed.answer.decision == "no"

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_a_lock_that_cannot_be_made_is_said(self, channel: Channel, code: int) -> None:
        """An asker that cannot create its lock file is told where and why."""
        lock = ServerLock(channel.servers_fd, shown=str(channel.path / ".servers"))
        with io_hook(raise_at(Fault(op=Op.LOCK), code)), pytest.raises(ChannelUnwritable) as c:
            lock.acquire()
        assert_names_path(c.value, channel.path / ".servers" / f"{lock.id}.lock", code)
        assert not lock.held

    def test_every_step_passes_through_the_seam(self, channel: Channel, staging: str) -> None:
        """The seam sees every operation of a publication, in order, around each."""
        recorder = Recorder()
        with channel.server() as lock, io_hook(recorder):
            req = command(lock)
            channel.file(req)
        name = f"{req.id}.request.json"
        ops = [(s.op, s.phase) for s in recorder.steps if s.name == name]
        expected = [Op.CREATE, Op.WRITE, Op.FSYNC, Op.LINK, Op.UNLINK, Op.FSYNC_DIR]
        if staging == "nameless":
            expected.remove(Op.UNLINK)  # no staged name to remove
        assert ops == [(op, phase) for op in expected for phase in (Phase.BEFORE, Phase.AFTER)]


class TestStaging:
    def test_where_o_tmpfile_is_refused_a_named_file_is_staged(self, channel: Channel) -> None:
        """A filesystem that refuses a nameless file (EOPNOTSUPP, as NFS does) gets the
        publication staged as a named file in .tmp/, linked, then removed: published all the
        same, nothing left."""
        if not nameless_here(channel.path / ".tmp"):
            pytest.skip("no O_TMPFILE on this filesystem, or no /proc: staged by name")
        recorder = Recorder()
        refused = raise_at(Fault(op=Op.CREATE, staged=True), errno.EOPNOTSUPP)

        def hook(step: IoStep) -> None:
            refused(step)  # the first create (the nameless one) only
            recorder(step)

        with channel.server() as lock:
            req = command(lock)
            with io_hook(hook):
                channel.file(req)
            assert channel.status(req.id).state is State.FILED
        ops = [s.op for s in recorder.steps if s.phase is Phase.BEFORE]
        assert ops == [Op.CREATE, Op.WRITE, Op.FSYNC, Op.LINK, Op.UNLINK, Op.FSYNC_DIR]
        assert temp_files(channel) == []

    def test_a_nameless_link_that_names_another_file_is_undone(self, channel: Channel) -> None:
        """The nameless file is linked through /proc/self/fd, a path: if what gets linked is
        not the file written (here the seam puts another file under the name as the link
        returns, as a /proc that is not the kernel's would), the name is removed and the
        publication refused, naming the path: another file is never published as it."""
        if not nameless_here(channel.path / ".tmp"):
            pytest.skip("no O_TMPFILE on this filesystem, or no /proc: staged by name")

        def swap(step: IoStep) -> None:
            if step.op is Op.LINK and step.phase is Phase.AFTER:
                target = channel.path / step.name
                target.unlink()
                target.write_text('{"decision": "approve"}')

        with channel.server() as lock:
            req = command(lock)
            with io_hook(swap), pytest.raises(ChannelUnwritable) as caught:
                channel.file(req)
        assert str(channel.path / f"{req.id}.request.json") in str(caught.value)
        assert not (channel.path / f"{req.id}.request.json").exists()
        assert temp_files(channel) == []


class TestSweepUnderFaults:
    def stale_pair(self, channel: Channel) -> tuple[Request, Request]:
        """A dead asker's command (to claim stale) and an old ended one (to remove)."""
        with channel.server() as lock:
            stale, ended = command(lock, clock=channel.clock), command(lock, clock=channel.clock)
            channel.file(stale)
            channel.file(ended)
            channel.claim(ended, Outcome.WITHDRAWN, via="asker")
            channel.settle(ended, Outcome.WITHDRAWN, by="asker")
        return stale, ended

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize(
        "fault",
        [
            *(at(f, ".answer.json") for f in FATAL),
            *(at(f, ".settled.json") for f in FATAL),
            Fault(op=Op.UNLINK, staged=False, suffix=".request.json"),
            Fault(op=Op.UNLINK, staged=False, suffix=".answer.json"),
            Fault(op=Op.UNLINK, staged=False, suffix=".settled.json"),
        ],
        ids=lambda f: f"{step_id(f)}{f.suffix}",
    )
    def test_a_sweep_that_cannot_write_reports_and_a_later_one_finishes(
        self, clocked: tuple[Channel, FakeClock], fault: Fault, code: int
    ) -> None:
        """A sweep never raises for a write that fails: it says so in ``errors`` (path and
        remedy) and stops writing; what it left half done reads as it should, and the next
        sweep finishes it."""
        channel, clock = clocked
        stale, ended = self.stale_pair(channel)
        clock.advance(2 * 86400)
        with io_hook(raise_at(fault, code)):
            report = channel.sweep()
        assert report.errors and errno.errorcode[code] in report.errors[0]
        assert str(channel.path) in report.errors[0]
        assert violations(channel) == []
        again = channel.sweep()
        assert again.errors == ()
        assert channel.status(stale.id).outcome is Outcome.STALE
        assert not any(p.name.startswith(ended.id) for p in channel.path.iterdir())
        assert violations(channel) == []


class TestAskingUnderFaults:
    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    @pytest.mark.parametrize("fault", FATAL, ids=step_id)
    def test_an_outcome_the_asker_cannot_write_is_never_an_approval(
        self, channel: Channel, fault: Fault, code: int
    ) -> None:
        """The person approves; the asker cannot record it: the gate raises (the CLI exits
        2, saying where and why), approves nothing, and leaves the person's answer in the
        slot for a sweep to settle `stale` once the asker is gone: not acted on."""
        home = channel.home
        with Asker(channel, entry_point="approvals", notifier=quiet_notifier(home)) as asker:
            gate = ApprovalGate(asker, timeout_s=30)

            def approve(request: Request) -> None:
                channel.answer(request.id, "always", kind=Kind.COMMAND, via="cli")

            with (
                io_hook(raise_at(at(fault, ".settled.json"), code)),
                pytest.raises(ChannelUnwritable) as caught,
            ):
                gate.request("make deploy", "/srv", on_filed=approve)
            request_id = caught.value.path.rsplit("/", 1)[-1].split(".")[0]
            assert gate.grants.list() == []  # no standing grant either
        status = channel.status(request_id)
        assert status.state is State.ANSWERED and status.settled is None
        report = channel.sweep()
        assert report.finished == (request_id,)
        assert channel.status(request_id).outcome is Outcome.STALE
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_a_time_out_the_asker_cannot_write_is_still_a_time_out(
        self, channel: Channel, code: int
    ) -> None:
        """The deadline passes and the tombstone cannot be written: the request ends
        `timed-out` for the asker (exit 124), saying it was not recorded and why."""
        home = channel.home
        with Asker(channel, entry_point="approvals", notifier=quiet_notifier(home)) as asker:
            gate = ApprovalGate(asker, timeout_s=0.2)
            with io_hook(raise_at(Fault(op=Op.LINK, suffix=".answer.json"), code)):
                approval = gate.request("make deploy", "/srv")
        assert (approval.approved, approval.outcome) == (False, "timed-out")
        assert approval.reason is not None and "not be recorded" in approval.reason
        assert errno.errorcode[code] in approval.reason
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_closing_an_asker_that_cannot_withdraw_never_raises(
        self, channel: Channel, code: int
    ) -> None:
        """A clean stop on an unwritable channel: each request ends withdrawn for the asker
        (unrecorded), the lock is let go, and the requests then read stale."""
        asker = Asker(channel, entry_point="approvals", notifier=quiet_notifier(channel.home))
        gate = ApprovalGate(asker, timeout_s=0)
        filed = [gate.file("make deploy", "/srv"), gate.file("make test", "/srv")]
        with io_hook(raise_at(Fault(op=Op.CREATE, suffix=".answer.json", nth=None), code)):
            endings = asker.withdraw()
            asker.close()
        assert [e.outcome for e in endings] == [Outcome.WITHDRAWN] * 2
        assert all("not be recorded" in (e.reason or "") for e in endings)
        assert {channel.status(r.id).state for r in filed} == {State.STALE}

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_an_asker_that_cannot_lock_does_not_start(self, channel: Channel, code: int) -> None:
        """No lock, no asker: the error says where and why, and nothing is left running."""
        with io_hook(raise_at(Fault(op=Op.LOCK), code)), pytest.raises(ChannelUnwritable):
            Asker(channel, entry_point="approvals", notifier=quiet_notifier(channel.home))
        assert os.listdir(channel.path / ".servers") == []


class TestAnsweringUnderFaults:
    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_an_answer_that_cannot_be_written_raises_and_writes_nothing(
        self, channel: Channel, code: int
    ) -> None:
        """The Answerer raises ChannelUnwritable (the CLI exits 2); the request still waits."""
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            answerer = Answerer(channel, via=Via.CLI, entry_point="approvals", wait_s=0)
            fault = Fault(op=Op.FSYNC, suffix=".answer.json")
            with io_hook(raise_at(fault, code)), pytest.raises(ChannelUnwritable):
                answerer.answer(req.id, "once", kind=Kind.COMMAND)
            assert channel.status(req.id).state is State.FILED
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_a_handed_over_keep_whose_outcome_fails_is_applied_once_later(
        self, channel: Channel, code: int
    ) -> None:
        """Keep: the fact is kept, its outcome cannot be written; the report says so (the
        CLI exits 2) and the next sweep settles it, keeping nothing twice."""
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
        answerer = Answerer(channel, via=Via.CLI, entry_point="facts", wait_s=0)
        with io_hook(raise_at(Fault(op=Op.LINK, suffix=".settled.json"), code)):
            report = answerer.answer(req.id, "keep", kind=Kind.FACT)
        assert report.won and report.settled is None and report.apply_error
        assert errno.errorcode[code] in report.apply_error
        assert report.asker is AnswerFate.GONE
        swept = answerer.sweep()
        assert swept.applied == (req.id,) and swept.awaiting == ()
        status = channel.status(req.id)
        assert status.settled is not None and status.settled.delivery is Delivery.APPLIED
        assert [f["request"] for f in kept_facts(channel.home)] == [req.id]
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_a_listing_whose_sweep_cannot_write_still_lists(
        self, channel: Channel, code: int
    ) -> None:
        """The listing is whole (it only reads); what the sweep could not do is told."""
        with channel.server() as lock:
            dead = command(lock)
            channel.file(dead)
        told: list[str] = []
        answerer = Answerer(channel, via=Via.CLI, entry_point="pending", wait_s=0)
        with io_hook(raise_at(Fault(op=Op.CREATE, suffix=".answer.json"), code)):
            listing = answerer.listing(on_problem=told.append)
        assert [s.id for s in listing.statuses] == [dead.id]
        assert len(told) == 1 and "not tidied" in told[0] and errno.errorcode[code] in told[0]
        assert violations(channel) == []

    @pytest.mark.parametrize("code", ERRNOS.values(), ids=ERRNOS.keys())
    def test_a_keeper_whose_outcome_fails_goes_on_and_a_sweep_finishes(
        self, channel: Channel, code: int
    ) -> None:
        """The watching keeper cannot settle a keep: its thread survives (no traceback), and
        once the asker stops, a sweep applies the answer (kept once)."""
        home = channel.home
        hook = Recorder(raise_at(Fault(op=Op.CREATE, suffix=".settled.json"), code))
        with Asker(channel, entry_point="facts", notifier=quiet_notifier(home)) as asker:
            keeper = FactKeeper(asker)
            asked = keeper.request(
                fact_id="s1",
                subject="shop",
                name="db",
                value="pg",
                source="chat",
                proposed_by="model",
            )
            assert asked.request_id is not None
            with io_hook(hook):
                channel.answer(asked.request_id, "keep", kind=Kind.FACT, via="cli")
                wait_until(
                    lambda: any(st.name.endswith(".settled.json") for st in hook.steps),
                    what="the keeper to try to settle",
                )
            assert len(kept_facts(home)) == 1
            assert asker._settler.is_alive()
            keeper.close()
        report = Answerer(channel, via=Via.CLI, entry_point="facts", wait_s=0).sweep()
        assert report.applied == (asked.request_id,)
        assert len(kept_facts(home)) == 1
        assert violations(channel) == []
