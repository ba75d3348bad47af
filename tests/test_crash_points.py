"""A process killed at every step boundary of every transition, then recovery.

For each transition (filing, answering, keeping a handed-over fact, an asker settling a
command, a keeper settling a fact, a time-out, a sweep) a real process performs it once with
a hook at the channel's I/O seam recording every step. Then, for each boundary — before the
temp is created, and after each create, write, fsync, link, unlink and directory fsync (so:
after the temp write, after fsync, after link, after the outcome, before the temp is
removed), and around the lock — a fresh run ends the process there (``os._exit``: no
cleanup). Recovery is what a person and the next process do: retry the answer, run a sweep.
After it, every promise holds (tests/invariants.py): no partial file under a final name, no
request in two states, an outcome only after a decision, a kept fact kept exactly once, and
every temp file removed.

Every transition runs staged both ways a publication is (docs/channel.md, "Publishing"): as
where O_TMPFILE works (a nameless file: skipped where this system offers none) and as on NFS
(a named temp in `.tmp/`, unlinked once linked), the killed process and the recovering ones
alike. Right after each kill, `.tmp/` holds what the staging promises: nothing of a nameless
writer's; a named writer's staged file from its create until its unlink, its final name
absent before the link and, after it, the same file (published whole, a second link to it).

``WISP_FAULT_TRIALS`` runs every kill that many times.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

import crash_children
import pytest
from crash_children import KILLED, sweeper_clock
from figures import TRIALS, note
from helpers import command, fact, wait_until
from invariants import kept_facts, temp_files, violations

from pending import AlreadySettled, Channel, Kind, Outcome, State, Via
from pending.testing import Fault, Op, Phase
from wisp._answering import Answerer
from wisp._asking import Asker
from wisp.kinds.command_gate import ApprovalGate
from wisp.routes.notify import Notifier

CTX = multiprocessing.get_context("forkserver")
CTX.set_forkserver_preload(crash_children.preload())
EXIT_WAIT_S = 30.0
# The boundaries at which a named publication's staged file is in `.tmp/` (from its create to
# its unlink), and whether it is linked to its final name by then.
STAGED_LINKED = {
    (Op.CREATE, Phase.AFTER): False,
    (Op.WRITE, Phase.AFTER): False,
    (Op.FSYNC, Phase.AFTER): False,
    (Op.LINK, Phase.AFTER): True,
}


def suffix(name: str) -> str:
    return "." + name.split(".", 1)[1] if "." in name else name


def boundaries(steps: list[dict[str, Any]]) -> list[Fault]:
    """Every boundary of a recorded run: before each publication's (or lock's) first step,
    and after every step. The nth step of its kind names it, so that a rerun (with fresh
    IDs) stops at the same place."""
    seen: Counter[tuple[str, str, str, bool]] = Counter()
    found = []
    for step in steps:
        key = (step["op"], step["phase"], suffix(step["name"]), step["staged"])
        seen[key] += 1
        first = step["op"] in (Op.CREATE, Op.LOCK) and step["phase"] == Phase.BEFORE
        if first or step["phase"] == Phase.AFTER:
            found.append(
                Fault(
                    op=Op(step["op"]),
                    phase=Phase(step["phase"]),
                    suffix=key[2],
                    staged=step["staged"],
                    nth=seen[key],
                )
            )
    return found


class Trial(NamedTuple):
    """One run of a transition in *home*, every process staging its files *staging*
    ("nameless" or "named"), the child ended at *fault* (None: it runs whole, recording)."""

    home: Path
    staging: str
    fault: Fault | None


@contextmanager
def child(trial: Trial, scenario: str) -> Iterator[tuple[Any, Connection]]:
    """A process performing *scenario* (ended at the trial's fault); yields it and its end of a
    pipe."""
    ours, theirs = CTX.Pipe()
    fields = None if trial.fault is None else trial.fault._asdict()
    process = CTX.Process(
        target=crash_children.run,
        args=(str(trial.home), scenario, trial.staging, fields, theirs),
    )
    process.start()
    theirs.close()
    try:
        yield process, ours
    finally:
        process.join(EXIT_WAIT_S)
        if process.is_alive():
            process.kill()
            process.join()
        ours.close()


def ended(trial: Trial, process: Any, conn: Connection) -> list[dict[str, Any]]:
    """The steps the child recorded (none: killed), once it has ended as it was to (whole, or
    killed at its step), leaving staged what it must (:func:`check_staged`)."""
    steps: list[dict[str, Any]] = conn.recv() if trial.fault is None else []
    process.join(EXIT_WAIT_S)
    assert process.exitcode is not None, "the child did not end"
    assert process.exitcode == (0 if trial.fault is None else KILLED)
    check_staged(trial, process.pid)
    return steps


def check_staged(trial: Trial, pid: int) -> None:
    """What the child *pid* left in `.tmp/` is what its staging leaves at its step: nothing
    of a nameless file (it goes with its writer), nor of a whole run; a named file from its
    create until its unlink, nothing under its final name before the link, and after it the
    very file (published whole: the staged name a second link to it)."""
    channel = trial.home / "pending"
    left = [n for n in os.listdir(channel / ".tmp") if n.split(".")[-3:-2] == [str(pid)]]
    if trial.staging == "nameless" or trial.fault is None:
        assert left == []
        return
    # The killed publication's (an asker's other thread may be staging another file).
    staged = [n for n in left if n.rsplit(".", 3)[0].endswith(trial.fault.suffix)]
    linked = STAGED_LINKED.get((trial.fault.op, trial.fault.phase))
    if linked is None:
        assert staged == []  # not created yet, or unlinked
        return
    assert len(staged) == 1, left
    final = channel / staged[0].rsplit(".", 3)[0]
    if not linked:
        assert not final.exists()  # nothing published, half-written or whole
        return
    published, copy = final.stat(), (channel / ".tmp" / staged[0]).stat()
    assert (published.st_ino, published.st_nlink) == (copy.st_ino, 2)


def quiet(home: Path) -> Notifier:
    return Notifier(home, settings={"notifications.enabled": False}, entry_point="test")


def finish(home: Path) -> None:
    """What the next process does at once: a sweep, finishing what the killed one left."""
    with Channel.open(home) as channel:
        report = Answerer(channel, via=Via.CLI, entry_point="pending", wait_s=0).sweep()
        assert report.errors == ()
        assert report.temp_files == 0  # a dead writer's staged file is kept while young
        assert violations(channel) == []


def recover(home: Path) -> None:
    """What a later process does: a sweep, its clock past every grace (temps, old groups)."""
    with Channel.open(home, clock=sweeper_clock()) as channel:
        report = Answerer(channel, via=Via.CLI, entry_point="pending", wait_s=0).sweep()
        assert report.errors == ()
        assert violations(channel) == []
        assert temp_files(channel) == []


# --- each transition: set up, drive the child, recover, check ------------------------------


def file_requests(trial: Trial) -> list[dict[str, Any]]:
    with child(trial, "file") as (process, conn):
        steps = ended(trial, process, conn)
    finish(trial.home)
    with Channel.open(trial.home) as channel:
        for status in channel.listing().statuses:  # whatever was filed whole reads so
            if status.kind is Kind.FACT:
                assert status.state is State.HANDED_OVER
            else:
                assert status.outcome is Outcome.STALE
        assert list((channel.path / ".servers").iterdir()) == []  # the dead lock swept
    recover(trial.home)
    return steps


def answer_command(trial: Trial) -> list[dict[str, Any]]:
    with (
        Channel.open(trial.home) as channel,
        Asker(channel, entry_point="approvals", notifier=quiet(trial.home)) as asker,
    ):
        request = ApprovalGate(asker, timeout_s=0).file("make deploy", "/srv")
        with child(trial, "answer") as (process, conn):
            conn.send(request.id)
            steps = ended(trial, process, conn)
        if channel.read(request.id).answer is None:  # killed before its answer was linked
            Answerer(channel, via=Via.CLI, entry_point="approvals", wait_s=0).answer(
                request.id, "once", kind=Kind.COMMAND
            )
        ending = asker.wait(request.id, 10)
        assert ending is not None and (ending.outcome, ending.decision) == (
            Outcome.ANSWERED,
            "once",
        )
        assert ApprovalGate(asker, timeout_s=0).verdict(ending).approved
        assert violations(channel) == []
    recover(trial.home)
    return steps


def keep_handed_over(trial: Trial) -> list[dict[str, Any]]:
    with Channel.open(trial.home) as channel:
        with channel.server() as lock:
            request = fact(lock)
            channel.file(request)
        with child(trial, "keep-handed-over") as (process, conn):
            conn.send(request.id)
            steps = ended(trial, process, conn)
        assert violations(channel) == []
        with suppress(AlreadySettled):  # the person, seeing no result, keeps it again
            Answerer(channel, via=Via.CLI, entry_point="facts", wait_s=0).answer(
                request.id, "keep", kind=Kind.FACT
            )
        settled = channel.status(request.id).settled
        assert settled is not None and settled.outcome is Outcome.ANSWERED
        assert [f["id"] for f in kept_facts(trial.home)] == [settled.result]
    recover(trial.home)
    return steps


def settle_watched(trial: Trial) -> list[dict[str, Any]]:
    with child(trial, "settle-watched") as (process, conn), Channel.open(trial.home) as ch:
        request_id = conn.recv()
        ch.answer(request_id, "once", kind=Kind.COMMAND, via="cli")
        steps = ended(trial, process, conn)
    finish(trial.home)
    with Channel.open(trial.home) as channel:
        status = channel.status(request_id)
        # Settled by the asker before it died, or by the sweep: the person's decision kept.
        assert status.settled is not None and status.settled.decision == "once"
        assert status.outcome in (Outcome.ANSWERED, Outcome.STALE)
    recover(trial.home)
    return steps


def keep_watched(trial: Trial) -> list[dict[str, Any]]:
    with child(trial, "keep-watched") as (process, conn), Channel.open(trial.home) as ch:
        request_id = conn.recv()
        ch.answer(request_id, "keep", kind=Kind.FACT, via="cli")
        wait_until(
            lambda: not process.is_alive() or ch.read(request_id).settled is not None,
            what="the keeper to settle, or to be ended",
        )
        if process.is_alive():
            with suppress(OSError):  # (it may be ending at its step just now)
                conn.send("done")
        steps = ended(trial, process, conn)
    finish(trial.home)  # the keeper died: the sweep applies its answer (keyed: kept once)
    with Channel.open(trial.home) as channel:
        settled = channel.status(request_id).settled
        assert settled is not None and settled.outcome is Outcome.ANSWERED
        assert [f["id"] for f in kept_facts(trial.home)] == [settled.result]
    recover(trial.home)
    return steps


def time_out(trial: Trial) -> list[dict[str, Any]]:
    with child(trial, "time-out") as (process, conn):
        request_id = conn.recv()
        steps = ended(trial, process, conn)
    finish(trial.home)
    with Channel.open(trial.home) as channel:
        # Its own tombstone, settled (by it or the sweep), or stale if it died unclaimed.
        assert channel.status(request_id).outcome in (Outcome.TIMED_OUT, Outcome.STALE)
    recover(trial.home)
    return steps


def sweep(trial: Trial) -> list[dict[str, Any]]:
    with Channel.open(trial.home) as channel, channel.server() as lock:
        stale, claimed, old, kept = command(lock), command(lock), command(lock), fact(lock)
        for request in (stale, claimed, old, kept):
            channel.file(request)
        channel.claim(claimed, Outcome.WITHDRAWN, via="asker")  # its asker died here
        channel.claim(old, Outcome.WITHDRAWN, via="asker")
        channel.settle(old, Outcome.WITHDRAWN, by="asker")
        channel.answer(kept.id, "keep", kind=Kind.FACT, via="cli")  # its applier died
    # The lock file a killed asker leaves: no process holds it (the kernel let it go).
    (trial.home / "pending" / ".servers" / f"{lock.id}.lock").write_text("4242\n")
    with child(trial, "sweep") as (process, conn):
        steps = ended(trial, process, conn)
    finish(trial.home)
    with Channel.open(trial.home) as channel:
        assert channel.status(stale.id).outcome is Outcome.STALE
        assert channel.status(claimed.id).outcome is Outcome.WITHDRAWN
        assert len(kept_facts(trial.home)) == 1
    recover(trial.home)
    with Channel.open(trial.home) as channel:
        assert not any(p.name.startswith(old.id) for p in channel.path.iterdir())
    return steps


TRANSITIONS: dict[str, Callable[[Trial], list[dict[str, Any]]]] = {
    "file": file_requests,
    "answer": answer_command,
    "keep-handed-over": keep_handed_over,
    "settle-watched": settle_watched,
    "keep-watched": keep_watched,
    "time-out": time_out,
    "sweep": sweep,
}
# The files whose steps each transition is killed at (those it exists to write), and which
# it must be seen to write (so that the list of boundaries is whole). Filing within another
# transition is killed in "file".
KILL_AT = {
    "file": {".lock", ".request.json", ".fact.json"},
    "answer": {".answer.json"},
    "keep-handed-over": {".answer.json", ".settled.json"},
    "settle-watched": {".settled.json"},
    "keep-watched": {".settled.json"},
    "time-out": {".answer.json", ".settled.json"},
    "sweep": {".answer.json", ".settled.json", ".request.json", ".lock"},
}


class TestKilledAtEveryStep:
    @pytest.mark.parametrize("transition", list(TRANSITIONS))
    def test_recovery_after_a_kill_at_each_boundary(
        self, tmp_path: Path, transition: str, staging: str
    ) -> None:
        """Recorded once, then killed at each boundary in turn, staged nameless or named (its
        staged name unlinked after each link: boundaries of their own); after each kill,
        `.tmp/` holds what the staging leaves there, and recovery leaves every promise kept
        (and the transition's own outcome as it must be)."""
        run = TRANSITIONS[transition]
        steps = run(Trial(tmp_path / "recorded", staging, None))
        assert {suffix(s["name"]) for s in steps} >= KILL_AT[transition]
        done = Counter((s["op"], s["staged"]) for s in steps if s["phase"] == Phase.BEFORE)
        named = staging == "named"  # the child staged as told: a staged name for every link
        assert done[Op.UNLINK, True] == (done[Op.LINK, False] if named else 0)
        points = [f for f in boundaries(steps) if f.suffix in KILL_AT[transition]]
        for trial in range(TRIALS):  # more than once: the askers' threads race their steps
            for index, fault in enumerate(points):
                run(Trial(tmp_path / f"killed-{trial}-{index}", staging, fault))
        note(
            "crash-points",
            transition=transition,
            staging=staging,
            steps=len(steps),
            boundaries=len(points),
            kills=len(points) * TRIALS,
        )
