"""A hypothesis state machine over the whole channel: askers file commands, questions and
facts; people answer (two at once, racing); deadlines fire; askers withdraw, stop or are
killed; sweeps run; facts are kept after hand-over; wall-clock time passes.

Everything runs for real — Askers with their watchers and settler threads, FactKeepers, the
Answerer, sweeps — on a real directory. After every step, once each live asker has settled
what its slot decided, the invariants are checked against the files:

- one decision per request: the slot, once taken, never changes;
- an outcome only after a decision, and the outcome the decision leads to;
- a fact request never removed before its outcome, and a kept fact kept exactly once;
- a request once seen stale (its slot empty) is never answered by a person;
- each asker's ending gives the exit code its slot calls for (0, 1, or 124 for its own
  time-out), as the CLI computes it.

A "kill" here ends an asker as the kernel would end its process: its lock's descriptor is
closed without unlinking the file (so the flock goes and the lock file stays), and its
threads stop, writing nothing more. (Real kills, at every step boundary, are in
tests/test_crash_points.py.) Deadlines are its deadline timer's own callback, called when
the model says so, so runs are deterministic.

Examples: ``WISP_MODEL_EXAMPLES`` (default 40 times ``WISP_FAULT_TRIALS``), steps per example
``WISP_MODEL_STEPS`` (20).
Choices never depend on the random request IDs (requests are drawn in the order filed), so
hypothesis can replay and shrink a failing run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from contextlib import suppress
from pathlib import Path

import attrs
from figures import note, scaled
from helpers import wait_until
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from invariants import violations

from pending import (
    Answer,
    Channel,
    Kind,
    Outcome,
    PendingError,
    State,
    Via,
)
from pending.testing import FakeClock
from wisp._answering import Answerer
from wisp._asking import Asker
from wisp.kinds._asker import Ending
from wisp.kinds.command_gate import ApprovalGate
from wisp.kinds.fact_keeper import FactKeeper
from wisp.kinds.question_gate import QuestionAsker
from wisp.routes.notify import Notifier

EXAMPLES = scaled("WISP_MODEL_EXAMPLES", 40)
STEPS = int(os.environ.get("WISP_MODEL_STEPS", "20"))
TIMEOUT_S = 600.0  # each request's deadline (its timer is fired by the model, never by time)
SETTLE_WAIT_S = 15.0  # for a live asker to settle what its slot decided (events: ms)
DECISIONS = {
    Kind.COMMAND: ("once", "session", "always", "no"),
    Kind.QUESTION: ("answer", "decline"),
    Kind.FACT: ("keep", "drop"),
    Kind.TOOL: ("once", "session", "always", "no"),
}
APPROVED_KINDS = (Kind.COMMAND, Kind.TOOL)  # answered yes by any decision but "no"


@attrs.define
class Actor:
    """One asking server: its asker, its gate and question asker, its fact keeper."""

    name: str
    asker: Asker
    gate: ApprovalGate
    keeper: FactKeeper
    alive: bool = True


def exit_code(actor: Actor, kind: Kind, ending: Ending) -> int:
    """What `wisp approvals request` / `wisp questions ask` exit with for *ending* (their
    mapping, over the gate's verdict and the question asker's reply)."""
    if kind in APPROVED_KINDS:
        gate = actor.gate
        verdict = gate.verdict(ending) if kind is Kind.COMMAND else gate.tool_verdict(ending)
        outcome, ok = verdict.outcome, verdict.approved
    else:
        reply = QuestionAsker.reply(ending)
        outcome, ok = reply.outcome, reply.outcome == "answered"
    return 0 if ok else 124 if outcome == "timed-out" else 1


def expected_exit(kind: Kind, slot: Answer, outcome: Outcome) -> int:
    """The exit code the slot and outcome on disk call for."""
    if slot.is_tombstone:
        return 124 if slot.decision == "timed-out" else 1
    if outcome is not Outcome.ANSWERED:
        return 1
    yes = slot.decision != "no" if kind in APPROVED_KINDS else slot.decision == "answer"
    return 0 if yes else 1


class ChannelModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.scratch = tempfile.mkdtemp(prefix="wisp-model-")
        self.home = Path(self.scratch) / "home"
        self.clock = FakeClock()
        self.channel = Channel.open(self.home, clock=self.clock)
        self.actors: dict[str, Actor] = {}
        self.kinds: dict[str, Kind] = {}  # request ID -> kind
        self.owner: dict[str, str] = {}  # request ID -> actor name
        self.first_slot: dict[str, Answer] = {}
        self.stale_seen: set[str] = set()
        self.settled_seen: set[str] = set()
        self.serial = 0
        self.counts = {"steps": 0, "answers": 0, "races": 0, "kills": 0, "sweeps": 0}

    # --- actors ------------------------------------------------------------------------

    def live(self) -> list[Actor]:
        return [a for a in self.actors.values() if a.alive]

    @initialize()
    def first_asker(self) -> None:
        """Every run starts with an asker waiting on one request of each kind."""
        self.start_asker()
        actor = self.live()[0]
        for kind in Kind:
            self.file_as(actor, kind)

    @precondition(lambda self: len(self.live()) < 2)
    @rule()
    def start_asker(self) -> None:
        self.serial += 1
        notifier = Notifier(self.home, settings={"notifications.enabled": False})
        asker = Asker(self.channel, entry_point="approvals", notifier=notifier, clock=self.clock)
        name = f"asker{self.serial}"
        gate = ApprovalGate(asker, timeout_s=TIMEOUT_S)
        self.actors[name] = Actor(name=name, asker=asker, gate=gate, keeper=FactKeeper(asker))

    @precondition(lambda self: self.live())
    @rule(data=st.data(), kind=st.sampled_from(Kind))
    def file(self, data: st.DataObject, kind: Kind) -> None:
        self.file_as(data.draw(st.sampled_from(self.live()), label="actor"), kind)

    def file_as(self, actor: Actor, kind: Kind) -> None:
        self.serial += 1
        if kind is Kind.COMMAND:
            request_id = actor.gate.file(f"make t{self.serial}", "/").id
        elif kind is Kind.TOOL:
            request_id = actor.gate.file_tool("Edit", {"file_path": f"/t{self.serial}"}, "/").id
        elif kind is Kind.QUESTION:
            request_id = QuestionAsker(actor.asker, timeout_s=TIMEOUT_S).file("which?").id
        else:
            asked = actor.keeper.request(
                fact_id=f"s{self.serial}",
                subject="shop",
                name="db",
                value=f"v{self.serial}",
                source="chat",
                proposed_by="model",
            )
            assert asked.request_id is not None
            request_id = asked.request_id
        self.kinds[request_id] = kind
        self.owner[request_id] = actor.name

    @precondition(lambda self: self.live())
    @rule(data=st.data())
    def kill(self, data: st.DataObject) -> None:
        """As the kernel ends a process: threads stop, the flock goes, the lock file stays."""
        actor = data.draw(st.sampled_from(self.live()), label="actor")
        asker = actor.asker
        if asker.watcher is not None:  # it watches once it has filed
            assert asker._subscription is not None and asker._settler is not None
            asker.watcher.unsubscribe(asker._subscription)
            asker._settler.join(10)
            asker.watcher.stop()
        asker._deadlines.stop()  # its deadlines die with it
        lock = asker._lock
        assert lock._fd is not None
        os.close(lock._fd)
        lock._fd = None
        actor.alive = False
        self.counts["kills"] += 1

    @precondition(lambda self: self.live())
    @rule(data=st.data())
    def stop(self, data: st.DataObject) -> None:
        """A clean stop: commands and questions withdrawn, facts handed over."""
        actor = data.draw(st.sampled_from(self.live()), label="actor")
        actor.keeper.close()
        actor.asker.close()
        actor.alive = False

    # --- the person ----------------------------------------------------------------------

    def answerer(self) -> Answerer:
        return Answerer(self.channel, via=Via.CLI, entry_point="approvals", wait_s=0)

    @precondition(lambda self: self.kinds)
    @rule(data=st.data())
    def answer(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(list(self.kinds)), label="request")
        kind = self.kinds[request_id]
        decision = data.draw(st.sampled_from(DECISIONS[kind]), label="decision")
        text = "staging" if decision == "answer" else None
        with suppress(PendingError):  # refused: answered, ended, stale or gone
            self.answerer().answer(request_id, decision, kind=kind, text=text)
        self.counts["answers"] += 1

    @precondition(lambda self: self.kinds)
    @rule(data=st.data())
    def race(self, data: st.DataObject) -> None:
        """Two people answer the same request at once: at most one of them wins."""
        request_id = data.draw(st.sampled_from(list(self.kinds)), label="request")
        kind = self.kinds[request_id]
        first, second = DECISIONS[kind][0], DECISIONS[kind][-1]
        won: list[bool] = []
        gate = threading.Barrier(2)

        def person(decision: str) -> None:
            text = "staging" if decision == "answer" else None
            gate.wait(10)
            try:
                report = self.answerer().answer(request_id, decision, kind=kind, text=text)
                won.append(report.won)
            except PendingError:
                won.append(False)

        threads = [threading.Thread(target=person, args=(d,)) for d in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sum(won) <= 1, won
        self.counts["races"] += 1

    # --- time, deadlines, withdrawals, sweeps ---------------------------------------------

    @precondition(lambda self: any(a.asker.waiting() for a in self.live()))
    @rule(data=st.data())
    def time_out(self, data: st.DataObject) -> None:
        """An asker's deadline timer fires (its own clock, not the wall's)."""
        actor = data.draw(st.sampled_from([a for a in self.live() if a.asker.waiting()]))
        request = data.draw(st.sampled_from(actor.asker.waiting()), label="request")
        actor.asker._expire(request.id)

    @precondition(lambda self: any(a.asker.waiting() for a in self.live()))
    @rule(data=st.data())
    def withdraw(self, data: st.DataObject) -> None:
        actor = data.draw(st.sampled_from([a for a in self.live() if a.asker.waiting()]))
        request = data.draw(st.sampled_from(actor.asker.waiting()), label="request")
        actor.asker.withdraw(request.id)

    @rule()
    def sweep(self) -> None:
        self.answerer().sweep()
        self.counts["sweeps"] += 1

    @rule(seconds=st.sampled_from([1.0, 59.0, 601.0, 700.0, 90000.0]))
    def time_passes(self, seconds: float) -> None:
        """Wall-clock time passes for everyone (expiry as others judge it)."""
        self.clock.advance(seconds)

    @precondition(
        lambda self: any(
            k is Kind.FACT and not self.actors[self.owner[i]].alive for i, k in self.kinds.items()
        )
    )
    @rule(data=st.data(), decision=st.sampled_from(DECISIONS[Kind.FACT]))
    def keep_after_hand_over(self, data: st.DataObject, decision: str) -> None:
        """A fact whose asker stopped or died, kept (or dropped) from a terminal."""
        handed = [  # in the order filed: IDs are random, and a draw must not depend on them
            i
            for i, k in self.kinds.items()
            if k is Kind.FACT and not self.actors[self.owner[i]].alive
        ]
        request_id = data.draw(st.sampled_from(handed), label="request")
        with suppress(PendingError):  # refused: answered, ended
            self.answerer().answer(request_id, decision, kind=Kind.FACT)

    # --- invariants ------------------------------------------------------------------------

    def settle_down(self) -> None:
        """Wait until every live asker and keeper has settled what its slot decided."""
        for actor in self.live():
            # One the settler has taken to finish is off the waiting list until its ending
            # is recorded, its outcome written first: wait for every such one too.
            wait_until(
                lambda a=actor: not a.asker._finishing,
                timeout=SETTLE_WAIT_S,
                what=f"{actor.name} to finish what it took",
            )
            for request in actor.asker.waiting():
                group = self.channel.read(request.id)
                if group.answer is not None:
                    # Ended, not just taken from the waiting list: a request leaves it when
                    # the settler takes it to finish, before its outcome is written.
                    wait_until(
                        lambda r=request, a=actor: r.id in a.asker._ended,
                        timeout=SETTLE_WAIT_S,
                        what=f"{actor.name} to settle {request.id}",
                    )
        for request_id, kind in self.kinds.items():
            actor = self.actors[self.owner[request_id]]
            if kind is Kind.FACT and actor.alive:
                wait_until(
                    lambda i=request_id: (
                        self.channel.read(i).answer is None
                        or self.channel.read(i).settled is not None
                    ),
                    timeout=SETTLE_WAIT_S,
                    what=f"{actor.name}'s keeper to settle {request_id}",
                )

    @invariant()
    def promises_hold(self) -> None:
        self.counts["steps"] += 1
        self.settle_down()
        assert violations(self.channel) == []
        for request_id, kind in self.kinds.items():
            group = self.channel.read(request_id)
            if group.request is None and group.settled is None and group.answer is None:
                # Removed whole (after the grace): only ever once it had ended.
                assert request_id in self.settled_seen, f"{request_id} removed unended"
                continue
            if group.settled is not None:
                self.settled_seen.add(request_id)
            slot = group.answer
            if slot is not None:
                first = self.first_slot.setdefault(request_id, slot)
                assert slot == first, f"{request_id}: the slot changed from {first} to {slot}"
                if not slot.is_tombstone:
                    assert request_id not in self.stale_seen, f"{request_id} answered once stale"
            elif group.request is not None:
                status = self.channel.derive(group)
                if status is not None and status.state is State.STALE:
                    self.stale_seen.add(request_id)
            if kind is Kind.FACT:
                continue
            actor = self.actors[self.owner[request_id]]
            ending = actor.asker._ended.get(request_id)
            if ending is not None:
                assert slot is not None and group.settled is not None, request_id
                code = exit_code(actor, kind, ending)
                assert code == expected_exit(kind, slot, group.settled.outcome), (
                    request_id,
                    ending,
                    slot,
                    group.settled,
                )

    def teardown(self) -> None:
        try:
            for actor in self.live():
                actor.keeper.close()
                actor.asker.close()
            self.settle_down_after_close()
            assert violations(self.channel) == []
        finally:
            note("model", **self.counts, requests=len(self.kinds), askers=len(self.actors))
            self.channel.close()
            shutil.rmtree(self.scratch, ignore_errors=True)

    def settle_down_after_close(self) -> None:
        for actor in self.actors.values():
            actor.alive = False


TestChannelModel = ChannelModel.TestCase
TestChannelModel.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
