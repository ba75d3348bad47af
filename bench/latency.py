"""How long from an answer's link(2) to the waiting asker's wake-up.

An asker process files a request, waits (through the watcher) until it is idle, then asks an
answering process to answer. The answerer stages the answer exactly as the channel does and
reads CLOCK_MONOTONIC immediately before its link(2); the asker reads it when its subscription
hands it the `answered` transition. Same machine, same clock, two processes.

Run:  python bench/latency.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pending import Backend, Channel, CommandBinding, Event, Kind, Watcher, make_request
from pending._convert import to_json
from pending._ids import answer_name
from pending._json import dumps_record

POLLING_INTERVAL_S = 0.2  # the earlier Swift build polled the channel every 200 ms


def answerer(home: str, conn: Connection) -> None:
    """Answer each ID received; send back the CLOCK_MONOTONIC reading taken just before link.

    Each answer waits a random 0-200 ms first, as a person's would: an answer arrives at any
    phase of a polling interval, never just after a poll (the same wait on both backends).
    """
    rng = random.Random(52)
    with Channel.open(home) as channel:
        while True:
            request_id = conn.recv()
            if request_id is None:
                return
            request = channel.status(request_id).request
            answer = channel._new_answer(request, "once", via="cli")
            data = dumps_record(to_json(answer))
            tmp_name = f"bench-{os.getpid()}.tmp"
            fd = os.open(
                tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=channel.tmp_fd
            )
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
            time.sleep(rng.uniform(0, POLLING_INTERVAL_S))  # a person's pace, not a sync
            t0 = time.monotonic_ns()
            os.link(
                tmp_name,
                answer_name(request_id),
                src_dir_fd=channel.tmp_fd,
                dst_dir_fd=channel.dir_fd,
            )
            conn.send(t0)
            os.unlink(tmp_name, dir_fd=channel.tmp_fd)


def measure(backend: Backend, rounds: int) -> list[float]:
    """Latencies in milliseconds for *rounds* answers on *backend*."""
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        home = str(Path(tmp) / "home")
        with (
            Channel.open(home) as channel,
            channel.server() as lock,
            Watcher(channel, backend=backend, polling_interval_s=POLLING_INTERVAL_S) as watcher,
        ):
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=answerer, args=(home, theirs))
            proc.start()
            subscription, _ = watcher.subscribe()
            latencies = []
            try:
                for _ in range(rounds):
                    request = make_request(
                        kind=Kind.COMMAND,
                        binding=CommandBinding(command="make deploy", cwd="/srv"),
                        title="bench",
                        body="bench",
                        server=lock.record(),
                    )
                    channel.file(request)
                    wait_for(subscription, request.id, Event.FILED)
                    ours.send(request.id)
                    t1 = wait_for(subscription, request.id, Event.ANSWERED)
                    t0 = ours.recv()
                    latencies.append((t1 - t0) / 1e6)
            finally:
                ours.send(None)
                proc.join(timeout=30)
    return latencies


def wait_for(subscription: Any, request_id: str, event: Event) -> int:
    while True:
        item = subscription.get(timeout=30)
        woke = time.monotonic_ns()
        if item is None:
            raise SystemExit(f"no {event} event for {request_id} within 30 s")
        if getattr(item, "id", None) == request_id and getattr(item, "event", None) is event:
            return woke


def summary(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(p99, 3),
        "max_ms": round(ordered[-1], 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON line on stdout")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (about 30 s)")
    parser.add_argument("--rounds", type=int, help="rounds on inotify (default 500; 150 quick)")
    parser.add_argument(
        "--polling-rounds", type=int, help="rounds on polling (default 500; 50 quick)"
    )
    args = parser.parse_args(argv)
    native_rounds = args.rounds or (150 if args.quick else 500)
    polling_rounds = args.polling_rounds or (50 if args.quick else 500)
    native = summary(measure(Backend.NATIVE, native_rounds))
    polling = summary(measure(Backend.POLLING, polling_rounds))
    result = {
        "inotify": native,
        "polling": polling,
        "ratio_p50": round(polling["p50_ms"] / native["p50_ms"], 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for name in ("inotify", "polling"):
            row = result[name]
            print(
                f"{name:8} n={row['n']:<4} p50 {row['p50_ms']:8.3f} ms   "
                f"p99 {row['p99_ms']:8.3f} ms   max {row['max_ms']:8.3f} ms"
            )
        print(f"polling / inotify at p50: {result['ratio_p50']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
