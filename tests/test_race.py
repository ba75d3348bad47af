"""First answer wins: many processes race to answer each request."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from helpers import command, partial_read_watcher, race_worker

from pending import Channel, State

PROCESSES = 16
ROUNDS = 200


class TestFirstAnswerWins:
    def test_sixteen_processes_two_hundred_times(self, home: Path) -> None:
        """16 processes answer each of 200 requests at once: exactly one wins each time,
        every loser is told the winner's decision, and no reader ever sees a partial file."""
        ctx = multiprocessing.get_context("forkserver")  # forked from a clean server, not started
        with Channel.open(home) as channel, channel.server() as lock:
            requests = [command(lock, text=f"deploy {n}") for n in range(ROUNDS)]
            for req in requests:
                channel.file(req)
            ids = [r.id for r in requests]
            barrier = ctx.Barrier(PROCESSES)
            results = ctx.Queue()
            reads = ctx.Queue()
            stop = ctx.Event()
            reader = ctx.Process(target=partial_read_watcher, args=(str(home), ids, stop, reads))
            reader.start()
            workers = [
                ctx.Process(target=race_worker, args=(str(home), i, ids, barrier, results))
                for i in range(PROCESSES)
            ]
            for w in workers:
                w.start()
            outcomes = [results.get(timeout=120) for _ in range(PROCESSES * ROUNDS)]
            for w in workers:
                w.join(timeout=60)
                assert w.exitcode == 0
            stop.set()
            read_count, bad_reads = reads.get(timeout=60)
            reader.join(timeout=60)

            by_id: dict[str, list[tuple[str, int, bool, str, int]]] = {}
            for outcome in outcomes:
                by_id.setdefault(outcome[0], []).append(outcome)
            assert set(by_id) == set(ids)
            pids = {w.pid for w in workers}
            for request_id, rows in by_id.items():
                assert len(rows) == PROCESSES
                winners = [r for r in rows if r[2]]
                assert len(winners) == 1, f"{request_id}: {len(winners)} winners"
                _, _, _, decision, pid = winners[0]
                assert pid in pids and pid != os.getpid()
                assert all(r[3] == decision and r[4] == pid for r in rows), request_id
                status = channel.status(request_id)
                assert status.state is State.ANSWERED
                assert status.answer is not None and status.answer.decision == decision
                assert status.answer.pid == pid
            assert bad_reads == 0
            assert read_count > 0
            assert not list((channel.path / ".tmp").iterdir())
