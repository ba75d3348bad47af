"""The processes tests/test_crash_points.py ends at a step boundary: each performs one
transition of the channel, with a hook at the channel's I/O seam that either records every
step (to enumerate the boundaries) or ends the process at one of them (``os._exit``, as a
SIGKILL would: no cleanup, no ``finally``).

Run in their own processes (a forkserver with these modules preloaded, so each start is a
fork, not an interpreter start). Each stages its publications as its parent's test says: as
the system offers (a nameless file, where O_TMPFILE works) or named, as where it does not
(NFS), this test code setting the channel's own switch in the child before it publishes.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import command, fact

import pending._fsio
from pending import Channel, Kind, Via
from pending.testing import FakeClock, Fault, IoStep, Recorder, end_process_at, io_hook
from wisp._answering import Answerer
from wisp._asking import Asker
from wisp.kinds.command_gate import ApprovalGate
from wisp.kinds.fact_keeper import FactKeeper
from wisp.routes.notify import Notifier

KILLED = 86  # the exit status of a process ended at its step
SWEEP_AHEAD_S = 2 * 86400.0  # a sweeper's clock this far ahead: every ended group is old


def sweeper_clock() -> FakeClock:
    return FakeClock(datetime.now(UTC) + timedelta(seconds=SWEEP_AHEAD_S))


def quiet(home: Path) -> Notifier:
    return Notifier(home, settings={"notifications.enabled": False}, entry_point="test")


def run(home: str, scenario: str, staging: str, fault: dict[str, Any] | None, conn: Any) -> None:
    """Perform *scenario* in *home*, its files staged *staging* ("nameless": as the system
    offers; "named": a named temp in .tmp/), ended at *fault* (a :class:`Fault`'s fields), or,
    with none, recording its steps and sending them back on *conn* at the end."""
    if staging == "named":  # as where O_TMPFILE is refused: this process only (a fork)
        pending._fsio._NAMELESS = False
    recorder = Recorder()
    hook = end_process_at(Fault(**fault), KILLED) if fault else recorder
    with io_hook(hook):
        SCENARIOS[scenario](Path(home), conn)
    conn.send([_plain(step) for step in recorder.steps])
    conn.close()


def _plain(step: IoStep) -> dict[str, Any]:
    return {
        "op": step.op.value,
        "phase": step.phase.value,
        "name": step.name,
        "staged": step.staged,
    }


def file_requests(home: Path, conn: Any) -> None:
    """An asker takes its lock and files a command and a fact."""
    with Channel.open(home) as channel:
        lock = channel.server().acquire()
        channel.file(command(lock))
        channel.file(fact(lock))


def answer_command(home: Path, conn: Any) -> None:
    """A person answers the request the parent's asker filed (its ID comes on *conn*)."""
    request_id = conn.recv()
    with Channel.open(home) as channel:
        Answerer(channel, via=Via.CLI, entry_point="approvals", wait_s=0).answer(
            request_id, "once", kind=Kind.COMMAND
        )


def keep_handed_over(home: Path, conn: Any) -> None:
    """A person keeps a fact whose asker has stopped: this process applies it."""
    request_id = conn.recv()
    with Channel.open(home) as channel:
        Answerer(channel, via=Via.CLI, entry_point="facts", wait_s=0).answer(
            request_id, "keep", kind=Kind.FACT
        )


def settle_watched(home: Path, conn: Any) -> None:
    """An asker files a command and settles the answer the parent gives it."""
    with (
        Channel.open(home) as channel,
        Asker(channel, entry_point="approvals", notifier=quiet(home)) as asker,
    ):
        request = ApprovalGate(asker, timeout_s=0).file("make deploy", "/srv")
        conn.send(request.id)
        asker.wait(request.id, 30)


def keep_watched(home: Path, conn: Any) -> None:
    """An asker's fact keeper applies the keep the parent gives it."""
    with (
        Channel.open(home) as channel,
        Asker(channel, entry_point="facts", notifier=quiet(home)) as asker,
    ):
        keeper = FactKeeper(asker)
        asked = keeper.request(
            fact_id="s1", subject="shop", name="db", value="pg", source="x", proposed_by="m"
        )
        conn.send(asked.request_id)
        conn.recv()  # the parent saw it settled
        keeper.close()


def time_out(home: Path, conn: Any) -> None:
    """An asker files a command with a short deadline and claims `timed-out` itself."""
    with (
        Channel.open(home) as channel,
        Asker(channel, entry_point="approvals", notifier=quiet(home)) as asker,
    ):
        request = ApprovalGate(asker, timeout_s=0.2).file("make deploy", "/srv")
        conn.send(request.id)
        asker.wait(request.id, 30)


def sweep(home: Path, conn: Any) -> None:
    """A sweep, its clock two days ahead: stale claims, a crashed claim finished, removals."""
    with Channel.open(home, clock=sweeper_clock()) as channel:
        Answerer(channel, via=Via.CLI, entry_point="pending", wait_s=0).sweep()


SCENARIOS = {
    "file": file_requests,
    "answer": answer_command,
    "keep-handed-over": keep_handed_over,
    "settle-watched": settle_watched,
    "keep-watched": keep_watched,
    "time-out": time_out,
    "sweep": sweep,
}


def preload() -> list[str]:
    """What the forkserver imports once, so that each child is a fork, not a start."""
    return [__name__, "pending", "wisp._answering", "wisp._asking", "wisp.kinds.fact_keeper"]
