"""Listings at scale: `wisp pending --json`, the `wisp pending` table, `wisp facts pending`,
`wisp pending sweep` and a watcher's memory, at 0, 1,000 and 10,000 waiting requests.

Waiting requests are written with the library (`make_request` + `Channel.file`), exactly as an
asker files them. Command requests name a server whose lock a helper process holds for the
whole run, so they read as `filed` and no sweep touches them; fact requests name a server that
is gone, so they read as `handed-over` (a fact waits for its answer forever). Nothing a
command does changes either channel, so every repetition sees the same one.

Each size has its own pair of channels, all filed first; then each repetition runs every
figure at every size, interleaved, so a burst of load on the shared machine falls on all
sizes alike (measured one size after another, load that came and went made the 1k -> 10k
ratio swing from 5x to 21x).

Each command runs as a new process, its output to a file (the table at COLUMNS=160), and is
checked (the JSON array has every request, the table a row for each of the newest 50 and a
closing line counting the rest). The watcher figure is a
process that starts `pending.Watcher` on the channel and reports its resident memory once the
watcher's first scan is done. Also measured in this process: `Channel.listing()` on a freshly
opened channel (no cached parses), the library's share of a listing.

The 1k -> 10k ratio is given for whole commands (medians), and for the work above the empty
channel's time (the command's start-up subtracted: what scales with the requests), which is the
difference of two small numbers at 1k and so sensitive to load. It is taken from the fastest
repetition at each size (load only ever adds time: the fastest run is the least disturbed), and
again from CPU time (medians).

Run:  python bench/scale.py [--quick] [--json] [--sizes 0,1000,10000] [--reps N]
      (--quick: 0, 500 and 5,000 waiting, once each: the same tenfold step, for iterating)
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _common import (
    LockHolder,
    Report,
    bench_home,
    child_env,
    file_commands,
    file_requests,
    machine,
    ms,
    parser,
    run_timed,
    wisp_argv,
)

from pending import Channel, FactBinding, Kind, Server, make_request, new_id

SIZES = (0, 1000, 10000)
# Quick: the same tenfold step at half the size, for iterating (filing 22,000 requests takes
# 10 s on a quiet machine, and fsyncs queue behind everyone else's on a busy one).
QUICK_SIZES = (0, 500, 5000)
REPS = 7
QUICK_REPS = 1
# Targets at 10,000 waiting (seconds, MB) and for 1k -> 10k (ratio): issue 11's, but for
# `--json`, issue 23's (issue 11 asked 0.6 s).
TARGET_S = {"pending --json": 0.4, "pending table": 1.0}
TARGET_RATIO = 11.0  # listing cost: the work above the empty channel's time
LISTINGS = ("pending --json", "pending table", "facts pending")
NO_INOTIFY_TRIES = 10
NO_INOTIFY_PAUSE_S = 2.0
NOISE_S = 0.005  # work above the empty channel smaller than this makes no ratio
TARGET_WATCHER_MB = 80.0
ROWS_NOT_TERMINAL = 50  # wisp.cli._listing: rows a listing shows when not on a terminal
ID_ROW = re.compile(r"^[0-9a-f]{16}\s", re.MULTILINE)

# Starts a watcher on the channel and reports its memory once the first scan is done. The peak
# is VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec(2), so a child of this (large)
# process would report this process's size as its own.
WATCHER_PROBE = """\
import json, sys, time
from pending import Channel, Watcher
with Channel.open(sys.argv[1]) as channel:
    t0 = time.perf_counter()
    watcher = Watcher(channel).start()
    started = time.perf_counter() - t0
    known = len(watcher.statuses())
    status = dict(
        line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
    )
    kb = lambda key: int(status[key].split()[0])
    found = {
        "backend": str(watcher.backend),
        "known": known,
        "start_s": started,
        "vmrss_kb": kb("VmRSS"),
        "vmhwm_kb": kb("VmHWM"),
    }
    watcher.stop()
print(json.dumps(found))
"""


class Population:
    """A pair of channels holding *size* waiting requests: commands (server alive) and
    facts (server gone)."""

    def __init__(self, size: int, stack: ExitStack) -> None:
        self.size = size
        self.commands_home = stack.enter_context(bench_home())
        self.facts_home = stack.enter_context(bench_home())
        self.holder = LockHolder(self.commands_home)
        stack.callback(self.holder.close)
        # The facts' channel holds a live asker's lock too (its requests name a gone one): at
        # 0 waiting, neither channel is empty, so every size pays the listing's opening and
        # sweep, and the work above 0 is the requests' alone (an empty channel is listed
        # without opening it: bench/cold.py times that).
        facts_holder = LockHolder(self.facts_home)
        stack.callback(facts_holder.close)
        file_commands(self.commands_home, self.holder.server, 0, size)
        gone = Server(id=new_id(), pid=os.getpid(), client="bench", entry_point="facts")
        file_requests(
            self.facts_home,
            lambda i: make_request(
                kind=Kind.FACT,
                binding=FactBinding(
                    fact_id=f"s{i:08x}",
                    subject="release",
                    name=f"codename {i}",
                    value="BLUE HERON",
                    source="bench",
                    proposed_by="bench",
                ),
                title="wisp: keep as a permanent fact?",
                body=f"release codename {i} = BLUE HERON",
                server=gone,
            ),
            0,
            size,
        )


def rows_check(n: int) -> Callable[[str], str | None]:
    def check(out: str) -> str | None:
        if n == 0:
            return None if "Nothing waits" in out else "no 'Nothing waits' line"
        # A person's listing shows a screenful (50 rows when not a terminal) and counts the
        # rest on its closing line; the facts listing the same.
        shown = min(n, ROWS_NOT_TERMINAL)
        found = len(ID_ROW.findall(out))
        if found != shown:
            return f"{found} rows for {n} requests (expected {shown})"
        if n > shown and f"… and {n - shown:,} older requests not shown" not in out:
            return f"no closing line counting the {n - shown:,} requests not shown"
        return None

    return check


def json_check(n: int) -> Callable[[str], str | None]:
    def check(out: str) -> str | None:
        found = len(json.loads(out))
        return None if found == n else f"{found} objects for {n} requests"

    return check


def sweep_check(out: str) -> str | None:
    return None if out.startswith("swept: 0 stale, 0 finished, 0 removed") else "it changed things"


def timed_command(
    argv: list[str], env: dict[str, str], check: Callable[[str], str | None], tmp: Path
) -> tuple[float, float, int]:
    """Wall s, CPU s, peak RSS KB of one run, its output checked."""
    out_path = tmp / "out.txt"
    with out_path.open("w") as out:
        run = run_timed(argv, env=env, stdout=out)
    problem = check(out_path.read_text())
    if problem:
        raise SystemExit(f"{' '.join(argv[1:])}: {problem}")
    return run.wall_s, run.cpu_s, run.maxrss_kb


def watcher_probe(home: Path, n: int) -> dict[str, Any]:
    """The watcher process's report; tried again while no inotify instance is to be had (other
    programs of this user can hold all of them for a moment), as a polling watcher would
    measure something else."""
    for _ in range(NO_INOTIFY_TRIES):
        done = subprocess.run(
            [sys.executable, "-c", WATCHER_PROBE, str(home)],
            capture_output=True,
            text=True,
            check=True,
        )
        found = json.loads(done.stdout)
        if found["backend"] == "native":
            break
        time.sleep(NO_INOTIFY_PAUSE_S)
    else:
        raise SystemExit("the watcher fell back to polling every time: no inotify; rerun")
    if found["known"] != n:
        raise SystemExit(f"the watcher knew {found['known']} of {n} requests")
    return found


def library_listing(home: Path, n: int) -> float:
    """Seconds for Channel.listing() on a freshly opened channel (nothing cached)."""
    with Channel.open(home) as channel:
        t0 = time.perf_counter()
        listing = channel.listing()
        took = time.perf_counter() - t0
    if len(listing.statuses) != n:
        raise SystemExit(f"the listing had {len(listing.statuses)} of {n} requests")
    return took


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, quick_help="0, 500 and 5,000 waiting, one repetition (about 20 s)")
    p.add_argument("--sizes", help="waiting requests, comma-separated (default 0,1000,10000)")
    p.add_argument("--reps", type=int, help=f"repetitions per figure (default {REPS})")
    args = p.parse_args(argv)
    if args.sizes:
        sizes = sorted({int(s) for s in args.sizes.split(",")})
    else:
        sizes = list(QUICK_SIZES if args.quick else SIZES)
    reps = args.reps or (QUICK_REPS if args.quick else REPS)
    report = Report("scale", args.json)
    wisp = wisp_argv()
    commands: dict[str, tuple[list[str], str]] = {
        "pending --json": ([*wisp, "pending", "--json"], "commands"),
        "pending table": ([*wisp, "pending"], "commands"),
        "facts pending": ([*wisp, "facts", "pending"], "facts"),
        "pending sweep": ([*wisp, "pending", "sweep"], "commands"),
    }
    # (figure, size) -> (wall s, cpu s, peak RSS KB) of each repetition
    runs: dict[tuple[str, int], list[tuple[float, float, int]]] = {}
    library: dict[int, list[float]] = {size: [] for size in sizes}
    probes: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wisp-bench-out-")))
        populations = {}
        for size in sizes:
            t0 = time.perf_counter()
            populations[size] = Population(size, stack)
            report.note(f"[{size} waiting: filed in {time.perf_counter() - t0:.1f} s]")
        report.machine(machine(populations[sizes[0]].commands_home, note=report.note))
        for rep in range(reps):
            shift = rep % len(sizes)
            for size in sizes[shift:] + sizes[:shift]:  # rotate which size goes first
                pop = populations[size]
                homes = {"commands": pop.commands_home, "facts": pop.facts_home}
                checks: dict[str, Callable[[str], str | None]] = {
                    "pending --json": json_check(size),
                    "pending table": rows_check(size),
                    "facts pending": rows_check(size),
                    "pending sweep": sweep_check,
                }
                for name, (cmd, which) in commands.items():
                    env = child_env(homes[which], COLUMNS="160")
                    runs.setdefault((name, size), []).append(
                        timed_command(cmd, env, checks[name], tmp)
                    )
                library[size].append(library_listing(pop.commands_home, size))
                probes[size].append(watcher_probe(pop.commands_home, size))

    wall: dict[str, dict[int, float]] = {name: {} for name in [*commands, "library listing"]}
    fastest: dict[str, dict[int, float]] = {name: {} for name in commands}
    cpu: dict[str, dict[int, float]] = {name: {} for name in commands}
    for size in sizes:
        for name in commands:
            got = runs[(name, size)]
            wall[name][size] = statistics.median(r[0] for r in got)
            fastest[name][size] = min(r[0] for r in got)
            cpu[name][size] = statistics.median(r[1] for r in got)
            fields: dict[str, Any] = {
                "command": f"wisp {name}",
                "waiting": size,
                "n": len(got),
                "median_s": round(wall[name][size], 3),
                "min_s": round(fastest[name][size], 3),
                "cpu_median_s": round(cpu[name][size], 3),
            }
            if name in TARGET_S and size == 10000:
                fields["target_s"] = TARGET_S[name]
                fields["met"] = wall[name][size] <= TARGET_S[name]
            report.line(
                f"{name} @ {size}",
                fields,
                f"{size:>6} waiting  wisp {name:15} median {fields['median_s']:7.3f} s "
                f"(cpu {fields['cpu_median_s']:.3f} s)"
                + _verdict(fields, lambda f: f"<= {f['target_s']:g} s"),
            )
        lib = statistics.median(library[size])
        wall["library listing"][size] = lib
        report.line(
            f"library listing @ {size}",
            {"waiting": size, "n": len(library[size]), "median_s": round(lib, 4)},
            f"{size:>6} waiting  Channel.listing()    median {lib:7.3f} s (in process)",
        )
        found = probes[size]
        fields = {
            "waiting": size,
            "n": len(found),
            "vmrss_mb": round(max(pr["vmrss_kb"] for pr in found) / 1024, 1),
            "vmhwm_mb": round(max(pr["vmhwm_kb"] for pr in found) / 1024, 1),
            "start_ms": ms(statistics.median(pr["start_s"] for pr in found)),
        }
        if size == 10000:
            fields["target_mb"] = TARGET_WATCHER_MB
            fields["met"] = fields["vmhwm_mb"] <= TARGET_WATCHER_MB
        report.line(
            f"watcher rss @ {size}",
            fields,
            f"{size:>6} waiting  watcher              RSS {fields['vmrss_mb']} MB "
            f"(peak {fields['vmhwm_mb']} MB), started in {fields['start_ms']} ms"
            + _verdict(fields, lambda f: f"peak <= {f['target_mb']:g} MB"),
        )
    if len(sizes) >= 2:
        low, high = sizes[-2], sizes[-1]
        for name, by_size in wall.items():
            ratio = by_size[high] / by_size[low]
            fields = {"figure_of": name, "from": low, "to": high, "ratio": round(ratio, 2)}
            if 0 in by_size and low != 0 and name in cpu:
                for key, seconds in (("work_ratio", fastest[name]), ("cpu_work_ratio", cpu[name])):
                    above = _above(seconds, low, high)
                    fields[key] = None if above is None else round(above, 2)
            if (low, high) == (1000, 10000) and name in LISTINGS:
                fields["target_ratio"] = TARGET_RATIO
                fields["met"] = (fields.get("work_ratio") or ratio) <= TARGET_RATIO
            report.line(
                f"{name} ratio",
                fields,
                f"{name:16} {low} -> {high}: {ratio:5.2f}x whole"
                + (
                    f", {_x(fields['work_ratio'])} above empty "
                    f"({_x(fields['cpu_work_ratio'])} in CPU time)"
                    if "work_ratio" in fields
                    else ""
                )
                + _verdict(fields, lambda f: f"<= {f['target_ratio']:g}x"),
            )
    return 0


def _above(by_size: dict[int, float], low: int, high: int) -> float | None:
    """How much more the work above the empty channel's time costs at *high* than at *low*;
    None where the work at *low* is lost in the noise (under NOISE_S)."""
    work_low = by_size[low] - by_size[0]
    if work_low < NOISE_S:
        return None
    return (by_size[high] - by_size[0]) / work_low


def _x(ratio: float | None) -> str:
    return "n/a (too small to tell)" if ratio is None else f"{ratio:5.2f}x"


def _verdict(fields: dict[str, Any], target: Callable[[dict[str, Any]], str]) -> str:
    if "met" not in fields:
        return ""
    return f"  (target {target(fields)}: {'met' if fields['met'] else 'NOT met'})"


if __name__ == "__main__":
    sys.exit(main())
