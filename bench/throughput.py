"""Round trips under load: A asker processes and B answerer processes on one channel, through
the library, and the check that every request settled exactly once.

Each asker process is one asking server (`wisp.Asker`) asking through `wisp.ApprovalGate`, one
command at a time, each a new command (no grant covers it), for the measured seconds; pumped,
as the hooks' and the asking commands' askers are (its wait reads the events and settles:
no reader or settler thread). Each
answerer process watches the channel (`pending.Watcher`) and answers `once` the requests it
sees filed: by default each request is answered by one answerer (chosen by its ID), and each
answerer's watcher follows only the IDs it answers (`Watcher(only=…)`, as an asker's follows
its own: the others' files are not read); `--watch-all` makes every answerer's watcher follow
every request, as before (it answers only its own all the same); with `--race` every answerer
follows and tries every request and the first wins. Answering goes through the
application layer, `wisp.Answerer`, where it exists; before it, as `wisp approvals approve`
does it (the channel's answer(), then the `approval.answered` audit record).

A round trip is one `ApprovalGate.request()` call, from before filing to the verdict in hand;
the rate is round trips over the measured window, across all askers. At the end the channel
is counted: one request, one answer and one outcome file per round trip, every outcome
`answered` by the asker with the decision `once`, every ID won by exactly one answerer, one
`approval.settled` audit record per ID, and no asker timed out (an answer lost).

Run:  python bench/throughput.py [--quick] [--json] [--askers A] [--answerers B] [--race]
      [--watch-all]
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

from _common import Report, bench_home, machine, parser, percentile, settle_for

from pending import (
    AlreadyAnswered,
    AlreadySettled,
    Channel,
    Event,
    Kind,
    Missed,
    Outcome,
    State,
    SubscriptionClosed,
    Transition,
    Watcher,
)

SECONDS = 10.0
QUICK_SECONDS = 5.0
WARMUP_ROUND_TRIPS = 3  # per asker, before the measured window: imports, caches; checked too
ASK_TIMEOUT_S = 20  # an answer lost shows up as a time-out, not as a hang
START_TIMEOUT_S = 60.0
# Issue 23's targets (issue 11's were 500/s and 50 ms).
TARGET_RATE = 600.0
TARGET_P99_MS = 20.0


def quiet_watchdog() -> None:
    """As `wisp` does: watchdog logs a benign shutdown race; the watcher reports what matters."""
    log = logging.getLogger("watchdog")
    log.addHandler(logging.NullHandler())
    log.propagate = False


# --- the answering side ------------------------------------------------------------------


def answering(channel: Channel) -> tuple[str, Callable[[str], str]]:
    """How this process answers one request `once`: "won", "lost" (another answer got the
    slot first) or "refused" (already answered or settled when checked)."""
    try:
        from wisp import Answerer
    except ImportError:  # before wisp.Answerer (461d010): answer as the CLI did then
        Answerer = None
    if Answerer is not None:
        from pending import Decision, Via
        from wisp import EntryPoint

        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.APPROVALS)

        # wait_s=0: an answering process here does not wait for the asker's outcome (the
        # asker's own round trip measures that), so it can answer the next request at once.
        def through_answerer(request_id: str) -> str:
            try:
                report = answerer.answer(request_id, Decision.ONCE, kind=Kind.COMMAND, wait_s=0)
            except (AlreadyAnswered, AlreadySettled):
                return "refused"
            return "won" if report.won else "lost"

        return "wisp.Answerer", through_answerer

    # Before wisp.Answerer: what `wisp approvals approve` did, less its terminal and its wait.
    from wisp.audit.writer import audit, request_fields

    def as_the_cli_does(request_id: str) -> str:
        try:
            result = channel.answer(request_id, "once", kind=Kind.COMMAND, via="cli")
        except (AlreadyAnswered, AlreadySettled):
            return "refused"
        if not result.won:
            return "lost"
        request = channel.status(request_id).request
        audit(
            channel.home,
            "approval.answered",
            {**request_fields(request), "via": "cli", "decision": "once"},
            entry_point="approvals",
        )
        return "won"

    return "channel.answer + audit", as_the_cli_does


def answerer_main(
    home: str,
    index: int,
    count: int,
    race: bool,
    watch_all: bool,
    ready: Queue,
    go: EventType,
    stop: EventType,
    results: Queue,
) -> None:
    """Answer what is filed until *stop*; report the IDs this process won, its tallies, and
    its CPU from *go* (the askers' warm-up done) to *stop*."""
    quiet_watchdog()
    channel = Channel.open(home)
    how, answer = answering(channel)
    tally: Counter[str] = Counter()
    won: list[str] = []
    tried: set[str] = set()

    def mine(request_id: str) -> bool:
        return race or zlib.crc32(request_id.encode()) % count == index

    def consider(request_id: str, kind: Kind, state: State | None) -> None:
        if kind is not Kind.COMMAND or state is not State.FILED or request_id in tried:
            return
        if not mine(request_id):
            return
        tried.add(request_id)
        verdict = answer(request_id)
        tally[verdict] += 1
        if verdict == "won":
            won.append(request_id)

    # A sharded answerer follows its own IDs only: reading the others' requests, answers and
    # outcomes (three quarters of what a 4-answerer channel publishes) is work it never uses.
    with Watcher(channel, only=None if race or watch_all else mine) as watcher:
        backend = str(watcher.backend)
        # Only what it answers wakes it: a request filed (and a gap, Missed, which is never
        # refused). Its answer's and the outcome's transitions would wake it for nothing.
        subscription, snapshot = watcher.subscribe(accept=lambda t: t.event is Event.FILED)
        for status in snapshot:
            consider(status.id, status.kind, status.state)
        # The measured window's CPU starts at *go* (process-wide: every thread's), once the
        # askers' warm-up trips are done. Stopping closes the subscription, which ends the
        # loop below: no polling for it.
        measured_from: list[float] = []
        threading.Thread(
            target=lambda: (
                go.wait(),
                measured_from.append(time.process_time()),
                stop.wait(),
                watcher.unsubscribe(subscription),
            ),
            daemon=True,
        ).start()
        ready.put(("answerer", index, f"{how}|{backend}"))
        try:
            for item in subscription:
                if isinstance(item, Missed):  # fell behind: look at everything it knows
                    tally["missed"] += item.count
                    for status in watcher.statuses():
                        consider(status.id, status.kind, status.state)
                elif isinstance(item, Transition) and item.event is Event.FILED:
                    consider(item.id, item.kind, item.status.state if item.status else None)
        except SubscriptionClosed:
            pass
        cpu = time.process_time() - measured_from[0]
    channel.close()
    results.put(("answerer", index, won, dict(tally), cpu))


# --- the asking side ---------------------------------------------------------------------


def asker_main(
    home: str, index: int, seconds: float, ready: Queue, go: EventType, results: Queue
) -> None:
    """Ask one command at a time for *seconds* after *go*; report each round trip."""
    quiet_watchdog()
    from wisp import ApprovalGate, Asker

    channel = Channel.open(home)
    # As `wisp approvals request` and the hooks ask: one request at a time, each waited on
    # at once, so the wait reads the events and settles (`pumped`: no reader or settler).
    asker = Asker(channel, entry_point="approvals", client=f"bench-asker-{index}", pumped=True)
    gate = ApprovalGate(asker, timeout_s=ASK_TIMEOUT_S)
    trips: list[tuple[str | None, str, str | None, float, float]] = []
    warmup: list[tuple[str | None, str, str | None]] = []
    n = 0

    def ask() -> tuple[str | None, str, str | None, float, float]:
        nonlocal n
        n += 1
        t0 = time.monotonic()  # CLOCK_MONOTONIC: the same clock in every process
        approval = gate.request(f"make deploy-{index}-{n}", "/srv/shop")
        t1 = time.monotonic()
        return approval.request_id, approval.outcome, approval.scope, t0, t1

    try:
        for _ in range(WARMUP_ROUND_TRIPS):
            warmup.append(ask()[:3])
        ready.put(("asker", index, str(asker.watcher.backend)))
        go.wait()
        cpu0 = time.process_time()  # the measured window's: the warm-up's imports left out
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            trips.append(ask())
        cpu = time.process_time() - cpu0
    finally:
        asker.close()
        channel.close()
    results.put(("asker", index, trips, warmup, cpu))


# --- the run -----------------------------------------------------------------------------


def collect(queue: Queue, count: int, what: str) -> list[Any]:
    got = []
    deadline = time.monotonic() + START_TIMEOUT_S + 10 * ASK_TIMEOUT_S
    while len(got) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SystemExit(f"only {len(got)} of {count} {what} reported")
        got.append(queue.get(timeout=remaining))
    return got


def check_channel(home: Path, ids: list[str], won: Counter[str]) -> dict[str, Any]:
    """Count what the channel holds: exactly one request, answer and outcome per round trip."""
    names = os.listdir(home / "pending")
    counts = {
        suffix: sum(n.endswith(suffix) for n in names)
        for suffix in (".request.json", ".answer.json", ".settled.json")
    }
    with Channel.open(home) as channel:
        listing = channel.listing()
    by_id = {s.id: s for s in listing.statuses}
    wrong = [
        i
        for i in ids
        if i not in by_id
        or by_id[i].state is not State.SETTLED
        or by_id[i].settled is None
        or by_id[i].settled.outcome is not Outcome.ANSWERED
        or by_id[i].settled.by != "asker"
        or by_id[i].answer is None
        or by_id[i].answer.decision != "once"
    ]
    audit = (home / "logs" / "audit.jsonl").read_text().splitlines()
    settled_records = Counter(
        line.split('"id":"', 1)[1][:16]
        for line in audit
        if '"event":"approval.settled"' in line and '"id":"' in line
    )
    expected = len(ids)
    return {
        "requests": expected,
        "files": counts,
        "not_settled_answered_once": len(wrong),
        "unreadable": len(listing.problems),
        "won_by_none": sum(1 for i in ids if won[i] == 0),
        "won_twice": sum(1 for i in ids if won[i] > 1),
        "won_unknown": sum(1 for i in won if i not in set(ids)),
        "settled_audits_not_one": sum(1 for i in ids if settled_records[i] != 1),
        "ok": (
            all(c == expected for c in counts.values())
            and not wrong
            and not listing.problems
            and all(won[i] == 1 for i in ids)
            and len(won) == expected
            and all(settled_records[i] == 1 for i in ids)
        ),
    }


def run(
    askers: int,
    answerers: int,
    seconds: float,
    race: bool,
    home: Path,
    *,
    watch_all: bool = False,
) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    ready: Queue = ctx.Queue()
    results: Queue = ctx.Queue()
    go, stop = ctx.Event(), ctx.Event()
    procs = [
        ctx.Process(
            target=answerer_main,
            args=(str(home), i, answerers, race, watch_all, ready, go, stop, results),
        )
        for i in range(answerers)
    ]
    for p in procs:
        p.start()
    hows = [how for _, _, how in collect(ready, answerers, "answerers ready")]
    backends = Counter(how.split("|")[1] for how in hows)
    askers_procs = [
        ctx.Process(target=asker_main, args=(str(home), i, seconds, ready, go, results))
        for i in range(askers)
    ]
    for p in askers_procs:
        p.start()
    backends.update(backend for _, _, backend in collect(ready, askers, "askers ready"))
    started = time.monotonic()
    go.set()
    asked = collect(results, askers, "askers")
    stop.set()
    answered = collect(results, answerers, "answerers")
    for p in [*procs, *askers_procs]:
        p.join(timeout=30)
        if p.exitcode != 0:
            raise SystemExit(f"a bench process exited {p.exitcode}")

    trips = [t for _, _, ts, _, _ in asked for t in ts]
    warm = [w for _, _, _, ws, _ in asked for w in ws]
    ended = max(t[4] for t in trips)
    latencies = [t[4] - t[3] for t in trips]
    outcomes = Counter((t[1], t[2]) for t in [*trips, *warm])
    ids = [t[0] for t in [*trips, *warm] if t[0] is not None]
    won: Counter[str] = Counter(i for _, _, w, _, _ in answered for i in w)
    tallies: Counter[str] = Counter()
    for _, _, _, tally, _ in answered:
        tallies.update(tally)
    # CPU per round trip, both sides, every process, over the measured window only: start-up,
    # imports and the warm-up trips (whose first pays the lazy imports, ~30 ms of an asker's
    # CPU) left out. On a shared machine, the figure the load does not change much (2 idle
    # cores give at most 2000 / cpu_ms_per_trip round trips a second).
    asking_cpu = sum(r[4] for r in asked)
    answering_cpu = sum(r[4] for r in answered)
    cpu = asking_cpu + answering_cpu
    measured = max(len(trips), 1)
    check = check_channel(home, ids, won)
    lost = sum(n for (outcome, _), n in outcomes.items() if outcome != "answered")
    check["ok"] = check["ok"] and lost == 0 and len(ids) == len(trips) + len(warm)
    rate = len(trips) / (ended - started)
    return {
        "askers": askers,
        "answerers": answerers,
        "race": race,
        "answerers_follow": "all" if race or watch_all else "their own",
        "answering": sorted({how.split("|")[0] for how in hows}),
        # A process that fell back to polling (no inotify instance left for this user) would
        # measure the polling interval, not wisp: such a run is not a figure.
        "watchers": dict(backends),
        "seconds": round(ended - started, 2),
        "round_trips": len(trips),
        "per_s": round(rate, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p90_ms": round(percentile(latencies, 90) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "max_ms": round(max(latencies) * 1000, 1),
        "cpu_ms_per_trip": round(cpu / measured * 1000, 2),
        "cpu_ms_per_trip_askers": round(asking_cpu / measured * 1000, 2),
        "cpu_ms_per_trip_answerers": round(answering_cpu / measured * 1000, 2),
        "outcomes": {f"{o}/{s}": n for (o, s), n in outcomes.items()},
        "lost": lost,
        "answer_attempts": dict(tallies),
        "check": check,
    }


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, quick_help=f"{QUICK_SECONDS:g} s measured (about 15 s in all)")
    p.add_argument("--askers", type=int, default=4, help="asker processes (default 4)")
    p.add_argument("--answerers", type=int, default=4, help="answerer processes (default 4)")
    p.add_argument("--race", action="store_true", help="every answerer tries every request")
    p.add_argument(
        "--watch-all",
        action="store_true",
        help="every answerer's watcher follows every request (it answers its own only)",
    )
    p.add_argument("--seconds", type=float, help=f"measured seconds (default {SECONDS:g})")
    args = p.parse_args(argv)
    seconds = args.seconds or (QUICK_SECONDS if args.quick else SECONDS)
    report = Report("throughput", args.json)
    with bench_home() as home:
        report.machine(machine(home, settle_s=settle_for(args), note=report.note))
        result = run(
            args.askers, args.answerers, seconds, args.race, home, watch_all=args.watch_all
        )
    if set(result["watchers"]) != {"native"}:
        report.note(f"WARNING: not every watcher was native: {result['watchers']}; rerun")
    met = (
        set(result["watchers"]) == {"native"}
        and result["per_s"] >= TARGET_RATE
        and result["p99_ms"] <= TARGET_P99_MS
        and result["check"]["ok"]
    )
    fields = {**result, "target_per_s": TARGET_RATE, "target_p99_ms": TARGET_P99_MS, "met": met}
    check = result["check"]
    variant = " race" if args.race else " watch-all" if args.watch_all else ""
    shape = f"{args.askers} askers x {args.answerers} answerers" + (
        " racing" if args.race else " (each watching all)" if args.watch_all else ""
    )
    report.line(
        f"{args.askers}x{args.answerers}{variant}",
        fields,
        lambda: (
            f"{shape} ({', '.join(result['answering'])}): {result['round_trips']} round trips "
            f"in {result['seconds']} s = {result['per_s']}/s; latency p50 {result['p50_ms']} ms, "
            f"p90 {result['p90_ms']} ms, p99 {result['p99_ms']} ms, max {result['max_ms']} ms; "
            f"{result['cpu_ms_per_trip']} ms CPU per round trip (askers "
            f"{result['cpu_ms_per_trip_askers']}, "
            f"answerers {result['cpu_ms_per_trip_answerers']})\n"
            f"  check: {check['requests']} requests, files {check['files']}, "
            f"{result['lost']} lost, {check['won_twice']} won twice, "
            f"{check['won_by_none']} won by none, {check['not_settled_answered_once']} not "
            f"settled answered/once, {check['settled_audits_not_one']} without exactly one "
            f"settled audit: {'OK' if check['ok'] else 'FAILED'}\n"
            f"  answer attempts: {result['answer_attempts']}\n"
            f"  (target >= {TARGET_RATE:g}/s and p99 <= {TARGET_P99_MS:g} ms, 0 lost, 0 "
            f"doubled: {'met' if met else 'NOT met'})"
        ),
    )
    return 0 if check["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
