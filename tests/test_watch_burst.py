"""Exactly once, in order, under load: a burst of 5,000 requests from 4 processes."""

from __future__ import annotations

import multiprocessing
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import burst_filer, take

from pending import Backend, Channel, Event, Missed, Watcher

PROCESSES = 4
PER_PROCESS = 1250


@pytest.mark.usefixtures("native_watching")
class TestBurst:
    def test_five_thousand_filed_and_answered(self, home: Path) -> None:
        """4 processes file and answer 5,000 requests while one subscriber counts: every
        request is `filed` then `answered`, each exactly once, nothing missed."""
        ctx = multiprocessing.get_context("forkserver")  # forked from a clean server, not started
        with Channel.open(home) as channel, Watcher(channel, backend=Backend.NATIVE) as watcher:
            subscription, _ = watcher.subscribe(backlog=2 * PROCESSES * PER_PROCESS)
            start = ctx.Barrier(PROCESSES + 1)
            results = ctx.Queue()
            workers = [
                ctx.Process(target=burst_filer, args=(str(home), PER_PROCESS, start, results))
                for _ in range(PROCESSES)
            ]
            for w in workers:
                w.start()
            start.wait(timeout=60)
            filed = {i for _ in workers for i in results.get(timeout=120)}
            got = take(subscription, 2 * len(filed), timeout=120)
            start.wait(timeout=60)
            for w in workers:
                w.join(timeout=60)
            assert not any(isinstance(t, Missed) for t in got)
            seen: dict[str, list[Event]] = defaultdict(list)
            for t in got:
                seen[t.id].append(t.event)
            assert len(filed) == PROCESSES * PER_PROCESS
            assert set(seen) == filed
            assert all(e == [Event.FILED, Event.ANSWERED] for e in seen.values())
            assert subscription.get(timeout=0.3) is None
