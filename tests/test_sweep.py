"""Sweeping: stale requests settled, ended groups and crashed writers' leftovers removed,
and a fact request that no outcome ended never removed. The plan is tested on records alone;
the channel's execution of it on a real directory."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import command, fact, question
from hypothesis import given
from hypothesis import strategies as st
from strategies import groups, ids

from pending import (
    LIVE_EXPIRY_GRACE_S,
    SETTLED_GRACE_S,
    STALE_TMP_AFTER_S,
    Answer,
    Channel,
    CommandBinding,
    FactBinding,
    Group,
    Kind,
    Outcome,
    QuestionBinding,
    Request,
    Server,
    Settled,
    Settlement,
    State,
    SweepAction,
    SweepStep,
    ToolBinding,
    binding_digest,
    derive_status,
    make_request,
    plan_sweep,
)
from pending.testing import FakeClock

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
LIVE, DEAD = "11111111", "dead0000"
PLAIN = {
    Kind.COMMAND: CommandBinding(command="ls", cwd="/"),
    Kind.FACT: FactBinding(
        fact_id="c1", subject="s", name="n", value="v", source="x", proposed_by="model"
    ),
    Kind.QUESTION: QuestionBinding(question="which?"),
    Kind.TOOL: ToolBinding(tool="WebFetch", input={"url": "https://e.x"}, cwd="/"),
}


def req(kind: Kind, server: str = LIVE, expires_in_s: float | None = None) -> Request:
    return make_request(
        kind=kind,
        binding=PLAIN[kind],
        title="t",
        body="b",
        server=Server(id=server, pid=4242),
        clock=FakeClock(NOW - timedelta(seconds=10)),
        expires_in_s=expires_in_s,
    )


def ans(request: Request, decision: str, reason: str | None = None) -> Answer:
    return Answer(
        id=request.id,
        kind=request.kind,
        decision=decision,
        reason=reason,
        binding_digest=binding_digest(request.binding),
        answered_at=NOW - timedelta(seconds=5),
        via="cli",
        pid=7,
        user="ana",
    )


def ended(request_id: str, kind: Kind, at: datetime) -> Settled:
    return Settled(id=request_id, kind=kind, outcome=Outcome.ANSWERED, settled_at=at, by="asker")


class Liveness:
    """A liveness oracle that records which servers it was asked about."""

    def __init__(self, *alive: str) -> None:
        self.alive = set(alive)
        self.asked: list[str] = []

    def __call__(self, request: Request) -> bool:
        self.asked.append(request.server.id)
        return request.server.id in self.alive


def plan(
    *found: Group,
    alive: Liveness | None = None,
    settled_grace_s: float = SETTLED_GRACE_S,
    unreadable: Collection[str] = (),
) -> list[SweepAction]:
    actions = plan_sweep(
        found,
        now=NOW,
        alive=alive or Liveness(LIVE),
        settled_grace_s=settled_grace_s,
        unreadable=unreadable,
    )
    return list(actions)


def steps(actions: list[SweepAction]) -> list[tuple[SweepStep, str]]:
    return [(a.step, a.id) for a in actions]


class TestPlanSweep:
    def test_a_dead_servers_commands_and_questions_are_claimed_stale(self) -> None:
        """Server gone: a command and a question are claimed stale with why; a fact waits."""
        cmd, qst, fct = req(Kind.COMMAND, DEAD), req(Kind.QUESTION, DEAD), req(Kind.FACT, DEAD)
        actions = plan(*(Group(id=r.id, request=r) for r in (cmd, qst, fct)))
        assert steps(actions) == [(SweepStep.CLAIM_STALE, cmd.id), (SweepStep.CLAIM_STALE, qst.id)]
        assert all("4242" in (a.reason or "") for a in actions)
        assert all(a.status is not None and a.status.state is State.STALE for a in actions)

    def test_a_live_servers_requests_are_left_alone(self) -> None:
        """Filed and alive, of every kind: no step."""
        assert plan(*(Group(id=r.id, request=r) for r in map(req, Kind))) == []

    def test_expiry_is_stale_once_the_server_is_gone(self) -> None:
        """Past expiresAt by the grace, a live server's request (even a fact's) still reads
        waiting and no sweep claims it while its asker holds its lock: that asker claims its
        own time-out. Once the asker is gone, the sweep claims it at once."""
        r = req(Kind.FACT, LIVE, expires_in_s=5)
        late = NOW + timedelta(seconds=LIVE_EXPIRY_GRACE_S)
        status = derive_status(Group(id=r.id, request=r), now=late, server_alive=True)
        assert status is not None and status.state is State.FILED
        assert plan_sweep([Group(id=r.id, request=r)], now=late, alive=Liveness(LIVE)) == ()
        [action] = plan_sweep([Group(id=r.id, request=r)], now=late, alive=Liveness())
        assert action.step is SweepStep.CLAIM_STALE and "expired" in (action.reason or "")

    def test_a_legacy_request_alive_by_its_pid_is_claimed_past_the_grace(self) -> None:
        """An earlier build's request judged alive by a pid (which may be reused), or not
        judged at all: claimed once past expiresAt and the grace, never before."""
        r = req(Kind.COMMAND, LIVE, expires_in_s=5)._replace(legacy=True)
        assert r.expires_at is not None
        group = Group(id=r.id, request=r)
        for verdict in (True, None):
            just = r.expires_at + timedelta(seconds=LIVE_EXPIRY_GRACE_S - 1)
            assert plan_sweep([group], now=just, alive=lambda _, v=verdict: v) == ()
            late = r.expires_at + timedelta(seconds=LIVE_EXPIRY_GRACE_S)
            [action] = plan_sweep([group], now=late, alive=lambda _, v=verdict: v)
            assert action.step is SweepStep.CLAIM_STALE

    @pytest.mark.parametrize("kind", list(Kind))
    def test_a_live_askers_expired_request_is_left_to_it_within_the_grace(self, kind: Kind) -> None:
        """Just past expiresAt, its asker alive: no claim. The asker's own deadline runs from
        when it published the request, a little after expiresAt was set; a sweep claiming it
        `stale` in that gap would turn the asker's plain time-out (exit 124) into stale (1).
        A dead asker's expired request is claimed at once."""
        r = req(kind, LIVE, expires_in_s=5)
        assert r.expires_at is not None
        for past in (0.0, 0.5, LIVE_EXPIRY_GRACE_S / 2, LIVE_EXPIRY_GRACE_S - 0.001):
            now = r.expires_at + timedelta(seconds=past)
            assert plan_sweep([Group(id=r.id, request=r)], now=now, alive=Liveness(LIVE)) == ()
        dead = plan_sweep([Group(id=r.id, request=r)], now=r.expires_at, alive=Liveness())
        assert [a.step for a in dead] == [SweepStep.CLAIM_STALE]

    def test_a_tombstone_without_outcome_is_settled_as_it_says(self) -> None:
        """A crashed claimer's tombstone: settled with its own outcome and reason, no probe."""
        r = req(Kind.QUESTION, DEAD)
        alive = Liveness()
        [action] = plan(
            Group(id=r.id, request=r, answer=ans(r, "timed-out", "deadline")), alive=alive
        )
        assert (action.step, action.request) == (SweepStep.SETTLE, r)
        assert action.settlement == Settlement(outcome=Outcome.TIMED_OUT, reason="deadline")
        assert alive.asked == []

    @pytest.mark.parametrize(
        ("kind", "decision"), [(Kind.COMMAND, "no"), (Kind.QUESTION, "decline")]
    )
    def test_an_answer_its_asker_died_before_acting_on_ends_stale(
        self, kind: Kind, decision: str
    ) -> None:
        """Answered, asker alive: its asker settles. Asker gone: stale, the decision kept."""
        live, dead = req(kind, LIVE), req(kind, DEAD)
        assert plan(Group(id=live.id, request=live, answer=ans(live, decision))) == []
        [action] = plan(Group(id=dead.id, request=dead, answer=ans(dead, decision)))
        assert action.step is SweepStep.SETTLE and action.settlement is not None
        assert (action.settlement.outcome, action.settlement.decision) == (Outcome.STALE, decision)
        assert "stopped before acting" in (action.settlement.reason or "")

    def test_an_answered_fact_of_a_dead_server_is_awaited(self) -> None:
        """The channel cannot keep a fact: it is planned for the answering process to apply."""
        r = req(Kind.FACT, DEAD)
        [action] = plan(Group(id=r.id, request=r, answer=ans(r, "keep")))
        assert action.step is SweepStep.AWAIT
        assert action.status is not None and action.status.state is State.ANSWERED

    def test_ended_groups_go_after_the_grace_period(self) -> None:
        """An outcome (or an answer whose request is gone) older than the grace: removed."""
        r = req(Kind.COMMAND)
        just = Group(id=r.id, request=r, settled=ended(r.id, r.kind, NOW))
        assert plan(just, settled_grace_s=60) == []
        old = NOW - timedelta(seconds=60)
        orphan = Group(
            id="0a0a0a0a", answer=ans(r, "once")._replace(id="0a0a0a0a", answered_at=old)
        )
        gone = Group(id=r.id, request=r, settled=ended(r.id, r.kind, old))
        assert steps(plan(gone, orphan, settled_grace_s=60)) == [
            (SweepStep.REMOVE, r.id),
            (SweepStep.REMOVE, "0a0a0a0a"),
        ]

    def test_a_fact_request_no_outcome_ended_is_never_removed(self) -> None:
        """A handed-over fact filed a century ago is still left for the person."""
        r = req(Kind.FACT, DEAD)
        assert plan(Group(id=r.id, request=r), settled_grace_s=0) == []

    def test_unreadable_groups_are_never_acted_on(self) -> None:
        """A group with a file that could not be read is skipped whatever else it holds."""
        stale, old = req(Kind.COMMAND, DEAD), req(Kind.COMMAND)
        found = [
            Group(id=stale.id, request=stale),
            Group(id=old.id, request=old, settled=ended(old.id, old.kind, NOW - timedelta(days=9))),
        ]
        assert len(plan(*found)) == 2
        assert plan(*found, unreadable={stale.id, old.id}) == []

    def test_liveness_is_asked_only_where_it_decides(self) -> None:
        """Settled groups and tombstones cost no probe; a waiting request's server is asked."""
        r = req(Kind.COMMAND, DEAD)
        alive = Liveness()
        plan(
            Group(id=r.id, request=r, settled=ended(r.id, r.kind, NOW)),
            Group(id=r.id, request=r, answer=ans(r, "withdrawn")),
            alive=alive,
        )
        assert alive.asked == []
        plan(Group(id=r.id, request=r), alive=alive)
        assert alive.asked == [DEAD]

    @given(found=st.lists(groups(), max_size=6), alive_ids=st.sets(ids, max_size=3), data=st.data())
    def test_the_plans_invariants(
        self, found: list[Group], alive_ids: set[str], data: st.DataObject
    ) -> None:
        """For any groups: at most one step per ID, none for an unreadable ID, a removal only
        of an ended group, a settle only of a decided slot with no outcome, a claim only of a
        waiting request, an await only of an answered fact."""
        unreadable = data.draw(st.sets(st.sampled_from([g.id for g in found] or ["00000000"])))
        by_id = {g.id: g for g in found}
        found = list(by_id.values())
        actions = plan_sweep(
            found, now=NOW, alive=lambda r: r.server.id in alive_ids, unreadable=unreadable
        )
        assert len({a.id for a in actions}) == len(actions)
        for action in actions:
            group = by_id[action.id]
            assert action.id not in unreadable
            if action.step is SweepStep.REMOVE:
                assert group.settled is not None or group.request is None
            elif action.step is SweepStep.SETTLE:
                assert group.settled is None and group.answer is not None
                assert action.settlement is not None and action.request is group.request
            elif action.step is SweepStep.CLAIM_STALE:
                assert group.request is not None
                assert group.answer is None and group.settled is None
            else:
                assert group.request is not None and group.request.kind is Kind.FACT
                assert group.answer is not None and not group.answer.is_tombstone


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
        """Past expiresAt, a request is swept stale once its asker is gone; while the asker
        holds its lock, it ends its request itself (however far the clock went)."""
        channel, clock = clocked
        with channel.server() as lock:
            req = command(lock, clock=clock, expires_in_s=60)
            channel.file(req)
            clock.advance(61 + LIVE_EXPIRY_GRACE_S)
            assert channel.status(req.id).state is State.FILED  # its asker decides
            assert channel.sweep().stale == ()
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
        """Old staged files of writers that are gone go; one being written now stays, and
        so does an old one whose writer lives (its age may be a clock set forward)."""
        channel, clock = clocked
        tmp = channel.path / ".tmp"
        gone = 2**31 - 2  # no process can have this pid
        old, fresh = (
            tmp / f"a1b2c3d4.answer.json.{gone}.x.tmp",
            tmp / "b1b2c3d4.answer.json.2.y.tmp",
        )
        living = tmp / f"c1b2c3d4.answer.json.{os.getpid()}.z.tmp"
        for path in (old, fresh, living):
            path.write_text("{")
        past = clock.now().timestamp() - STALE_TMP_AFTER_S - 1
        os.utime(old, (past, past))
        os.utime(living, (past, past))
        now = clock.now().timestamp()
        os.utime(fresh, (now, now))
        assert channel.sweep().temp_files == 1
        assert not old.exists() and fresh.exists() and living.exists()

    def test_dead_servers_locks_are_removed(self, clocked: tuple[Channel, FakeClock]) -> None:
        """A lock file nobody holds is removed; a held one stays."""
        channel, _ = clocked
        servers = channel.path / ".servers"
        (servers / "deadbeef.lock").write_text("1\n")
        with channel.server() as lock:
            assert channel.sweep().locks == 1
            assert (servers / f"{lock.id}.lock").exists()
            assert not (servers / "deadbeef.lock").exists()

    def test_an_unreadable_file_stops_nothing_and_is_left_alone(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """A stale command whose slot holds an unreadable answer: the sweep neither raises nor
        claims or settles it, reports the file, and still sweeps the rest."""
        channel, _ = clocked
        with channel.server() as lock:
            blocked, other = command(lock), command(lock, "make test")
            channel.file(blocked)
            channel.file(other)
        slot = channel.path / f"{blocked.id}.answer.json"
        slot.write_bytes(b'{"id": ')
        slot.chmod(0o600)
        report = channel.sweep()
        assert report.stale == (other.id,)
        assert [p.name for p in report.problems] == [slot.name]
        assert slot.read_bytes() == b'{"id": '
        assert not (channel.path / f"{blocked.id}.settled.json").exists()
        assert channel.status(blocked.id).state is State.STALE

    def test_odd_entries_among_the_locks_stop_nothing(
        self, clocked: tuple[Channel, FakeClock]
    ) -> None:
        """A directory or a FIFO where a lock file would be is left alone, the sweep goes on."""
        channel, _ = clocked
        servers = channel.path / ".servers"
        (servers / "0d0d0d0d.lock").mkdir()
        os.mkfifo(servers / "0f0f0f0f.lock", 0o600)
        (servers / "deadbeef.lock").write_text("1\n")
        assert channel.sweep().locks == 1
        assert (servers / "0d0d0d0d.lock").is_dir()
        assert (servers / "0f0f0f0f.lock").exists()
