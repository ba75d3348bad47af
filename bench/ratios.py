"""Issue 41, "fast, measured against the floor": each figure as a ratio to a floor measured in
the same run, interleaved, medians.

Figures (targets), each against its floor, a small program in bench/:

- `wisp hook claude-code`, a call a standing grant covers, start -> exit (<= 1.6x), and a call
  no grant covers, start -> request filed (<= 2.0x); a call a built-in rule decides (`ls -la
  && git status` in a git project) and one a person's allow rule decides, start -> exit (each
  <= 1.6x, issue 57); floor: `floor_hook.py`, which reads the event JSON and prints a JSON
  object, start -> exit;
- `wisp approvals request`, start -> request filed (<= 1.2x), and the start of
  `wisp approvals approve ID` under a pty -> the waiting asker's exit (<= 1.2x); floors:
  `floor_typer.py` (a one-command typer app, bench/cold.py's), start -> exit, the second under
  a pty too;
- `wisp pending --json`, 10,000 waiting (<= 1.3x); floor: `floor_list.py`, which lists the
  directory, reads and `json.loads` every request and `json.dumps` the list;
- CPU per 1x1 round trip, bench/throughput.py's (asker + answerer, start-up left out; <= 3x);
  floor: `floor_publish.py`, the trip's three publications done raw in one process on the
  same disk (create, write, fsync, link, unlink, directory fsync), at wisp's files' sizes;
  beside it, a reference with no target: `floor_trip.py`, the bare protocol's round trip
  between two Python processes (inotify, read, `json.loads`, publish), against the same
  floor, and wisp's trip against it;
- `wisp mcp`, start -> its answer to `initialize` (hold <= 1.0x); floor: `floor_mcp.py`, a
  one-tool `MCPServer` on the same SDK;
- cold `wisp approvals pending`, empty channel (hold <= 1.05x); floor: the typer app;
- a request's `filedAt` -> its row on the TUI's screen (bench/tui_latency.py's; hold <= 50
  ms, absolute: no floor).

"Filed" is the request's own `filedAt` (what the asker wrote as it published it), heard by a
`pending.Watcher` in this process (an inotify event, no polling), less the wall clock just
before the process was started. Every other span ends at an exit (wait4), at a line read, or
at a terminal's end closing.

How the run goes: the machine line (a full run first waits for a settled disk); the round
trips, wisp's 1x1 run and the floor's publications in alternating order on that disk, each
round in a home kept until the end (nothing is deleted while anything is measured); then the
process rounds, every figure and floor once a round in a rotating order; then 10,000 requests
filed and `--json` and its floor alternated; then the TUI. One JSON line per figure (`--json`):
`figure`, `value`, `floor`, `ratio` (of the medians), `target`, `met`, with `unit`, `n`,
`kind` (`cut`: a target still to reach; `hold`: one met, to keep) and `ratio_iqr`: the middle
half of the rounds' own ratios (each round's figure over the same round's floor), how far one
run can tell a ratio from its target (one inside it is the run's luck as much as the code's).

Run:  python bench/ratios.py [--quick] [--json] [--rounds N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import hook
import throughput
import tui_latency
from _common import (
    ExitClock,
    LockHolder,
    Report,
    await_filed,
    bench_home,
    child_env,
    file_commands,
    machine,
    ms,
    parser,
    percentile,
    run_timed,
    settle_for,
    start,
    under_pty,
    wisp_argv,
)
from cold import FLOOR_TYPER
from scale import json_check, timed_command

from pending import Channel, Kind, Scope, Via, Watcher

HERE = Path(__file__).resolve().parent
FLOOR_HOOK = HERE / "floor_hook.py"
FLOOR_LIST = HERE / "floor_list.py"
FLOOR_PUBLISH = HERE / "floor_publish.py"
FLOOR_TRIP = HERE / "floor_trip.py"
FLOOR_MCP = HERE / "floor_mcp.py"

ROUNDS = 20
# Quick: medians of 5, no warm-up round, for iterating (an `import mcp` alone takes 1-3 s on
# this machine's slow hours); a figure is a full run's.
QUICK_ROUNDS = 5
WARMUP_ROUNDS = 1  # page cache, .pyc files; not counted (a full run's)
TRIP_SECONDS = 1.0  # each 1x1 round trip run's measured window (200-600 trips)
QUICK_TRIP_SECONDS = 0.5
WAITING = 10_000
PERSON_READS_S = 0.3  # after the filing, before the answer: the asker is waiting by then
STEP_TIMEOUT_S = 60.0
GRANTED = 0  # the hook's granted call is `make deploy-0`, the command the grant covers
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    )
    + "\n"
).encode()

# figure -> (its floor, target ratio, kind); the TUI's, absolute, is apart.
FIGURES: dict[str, tuple[str, float, str]] = {
    "hook granted: start -> exit": ("floor_hook: start -> exit", 1.6, "cut"),
    # Issue 57: a call the policy decides without asking (a built-in rule's `ls -la` in a
    # git project; a person's allow rule in $WISP_HOME/policy.toml).
    "hook by a built-in rule: start -> exit": ("floor_hook: start -> exit", 1.6, "cut"),
    "hook by a person's rule: start -> exit": ("floor_hook: start -> exit", 1.6, "cut"),
    "hook ungranted: start -> filed": ("floor_hook: start -> exit", 2.0, "cut"),
    "approvals request: start -> filed": ("floor_typer: start -> exit", 1.2, "cut"),
    "approvals approve (pty) -> asker exits": (
        "floor_typer under a pty: start -> exit",
        1.2,
        "cut",
    ),
    "pending --json @ 10000": ("floor_list @ 10000", 1.3, "cut"),
    "round trip 1x1: CPU per trip": ("floor_publish: CPU per trip", 3.0, "cut"),
    "mcp: start -> initialize answered": ("floor_mcp: start -> initialize answered", 1.0, "hold"),
    "cold approvals pending (empty)": ("floor_typer: start -> exit", 1.05, "hold"),
}
TUI_FIGURE = "tui: filedAt -> row on screen"
BARE_FIGURE = "reference: bare 2-process trip, CPU"
TUI_TARGET_MS = 50.0


# --- the round trips ---------------------------------------------------------------------


def publication_sizes(home: Path) -> list[int]:
    """The median size of each of a trip's three files, as wisp wrote them in *home*."""
    where = home / "pending"
    names = os.listdir(where)
    return [
        int(statistics.median(os.path.getsize(where / n) for n in names if n.endswith(suffix)))
        for suffix in (".request.json", ".answer.json", ".settled.json")
    ]


def trip_rounds(stack: ExitStack, rounds: int, seconds: float) -> dict[str, list[float]]:
    """CPU per round trip: wisp's 1x1 run (`throughput.run`), the floor's publications of as
    many trips and the bare two-process trip (`floor_trip.py`, a reference), in rotating
    order, each in a directory kept until the run ends."""
    got: dict[str, list[float]] = {"wisp": [], "floor": [], "bare": []}
    sizes: list[int] = []
    trips = 0

    def wisp_trip() -> None:
        nonlocal sizes, trips
        home = stack.enter_context(bench_home())
        result = throughput.run(1, 1, seconds, False, home)
        if not result["check"]["ok"] or set(result["watchers"]) != {"native"}:
            raise SystemExit(f"a 1x1 round trip run failed its check: {result}")
        got["wisp"].append(result["cpu_ms_per_trip"] / 1000)
        if not sizes:
            sizes, trips = publication_sizes(home), result["round_trips"]

    def raw(program: Path, into: str) -> None:
        where = stack.enter_context(tempfile.TemporaryDirectory(prefix="wisp-bench-floor-"))
        done = subprocess.run(
            [sys.executable, str(program), where, str(trips), *map(str, sizes)],
            capture_output=True,
            text=True,
            check=True,
            timeout=STEP_TIMEOUT_S,
        )
        got[into].append(json.loads(done.stdout)["cpu_s_per_trip"])

    steps = [wisp_trip, lambda: raw(FLOOR_PUBLISH, "floor"), lambda: raw(FLOOR_TRIP, "bare")]
    wisp_trip()  # first: the files' sizes and the trips' count for the raw programs
    got["wisp"].clear()
    for r in range(rounds):
        for step in steps[r % 3 :] + steps[: r % 3]:
            step()
    return got


# --- the process rounds ------------------------------------------------------------------


class Homes:
    """The process rounds' homes: one with a standing grant (the hook's granted call), one an
    asker files in (followed by this process's watcher), an empty one, one for `wisp mcp`."""

    def __init__(self, stack: ExitStack) -> None:
        from wisp import GrantStore, current_user

        self.granted = stack.enter_context(bench_home())
        self.asking = stack.enter_context(bench_home())
        self.empty = stack.enter_context(bench_home())
        self.mcp = stack.enter_context(bench_home())
        self.project = self.asking.parent / "project"
        self.project.mkdir()
        # With the call's shell options (its `timeout`, `run_in_background`), as approving
        # that call `always` records them: a command grant covers those options only.
        _, event = hook_event(self.granted, self.project, GRANTED)
        tool_input = json.loads(event)["tool_input"]
        GrantStore(self.granted).add(
            scope=Scope.ALWAYS,
            command=f"make deploy-{GRANTED}",
            cwd=str(self.project),
            request="bench",
            user=current_user(),
            options={k: v for k, v in tool_input.items() if k not in ("command", "description")},
        )
        # A git project, an empty home (the built-in rules only) and a home whose person's
        # policy file allows `make deploy-N` (issue 57).
        self.ruled = stack.enter_context(bench_home())
        self.persons = stack.enter_context(bench_home())
        self.git_project = self.ruled.parent / "git-project"
        (self.git_project / ".git").mkdir(parents=True)
        policy = self.persons / "policy.toml"
        policy.write_text(PERSONS_POLICY)
        policy.chmod(0o600)
        self.channel = stack.enter_context(Channel.open(self.asking))
        self.watcher = stack.enter_context(Watcher(self.channel))
        self.subscription, _ = self.watcher.subscribe()


def hook_event(home: Path, project: Path, n: int) -> tuple[list[str], bytes]:
    """`wisp hook claude-code` and its PreToolUse event for `make deploy-N` (bench/hook.py's)."""
    return hook.commands(home, project, n)["wisp hook claude-code"]


PERSONS_POLICY = """\
[[rule]]
name = "deploys"
action = "allow"
command = ["make", "*"]
match = ["make deploy-0"]
not_match = ["rm -rf build"]
"""
RULED_LINE = "ls -la && git status"  # read-only, in the project: the `read-only` rule's


def ruled_event(home: Path, project: Path, command: str) -> tuple[list[str], bytes]:
    """`wisp hook claude-code` and its PreToolUse event for *command* in *project*."""
    argv, event = hook_event(home, project, GRANTED)
    data = json.loads(event)
    data["tool_input"]["command"] = command
    return argv, json.dumps(data).encode()


def exited_ok(proc: Any) -> None:
    code = proc.wait(timeout=STEP_TIMEOUT_S)
    if code != 0:
        raise SystemExit(f"{proc.args!r} exited {code}")


def hook_ungranted(homes: Homes, n: int) -> float:
    """Start -> filed of the hook on a call no grant covers; then it is answered `no`."""
    argv, event = hook_event(homes.asking, homes.project, n)
    started = time.time()
    proc = start(argv, env=child_env(homes.asking), stdin=event)
    request = await_filed(homes.subscription, proc, STEP_TIMEOUT_S)
    homes.channel.answer(request.id, "no", kind=Kind.COMMAND, via=Via.CLI)
    exited_ok(proc)
    return request.filed_at.timestamp() - started


def request_and_approve(homes: Homes, n: int) -> tuple[float, float]:
    """`wisp approvals request`'s start -> filed; then, once it waits, the start of
    `wisp approvals approve ID` under a pty -> the asker's exit."""
    env = child_env(homes.asking, COLUMNS="200", TERM="xterm")
    argv = [*wisp_argv(), "approvals", "request", "--timeout", "60", "--", f"make ship-{n}"]
    started = time.time()
    proc = start(argv, env=env)
    request = await_filed(homes.subscription, proc, STEP_TIMEOUT_S)
    filed = request.filed_at.timestamp() - started
    clock = ExitClock(proc)
    time.sleep(PERSON_READS_S)
    t0 = time.perf_counter()
    _, status, said = under_pty([*wisp_argv(), "approvals", "approve", request.id], env, 60)
    exited = clock.join(STEP_TIMEOUT_S)
    if status != 0 or proc.returncode != 0:
        raise SystemExit(f"approve exited {status}, the asker {proc.returncode}: {said!r}")
    return filed, exited - t0


def typer_under_pty(env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done, status, said = under_pty([sys.executable, str(FLOOR_TYPER)], env, STEP_TIMEOUT_S)
    if status != 0 or "Nothing waits" not in said:
        raise SystemExit(f"the typer floor under a pty exited {status}: {said!r}")
    return done - t0


def until_initialized(argv: list[str], env: dict[str, str]) -> float:
    """Start -> the first line the server writes, its answer to `initialize`; then EOF."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = time.perf_counter() - t0
    proc.kill()  # how it stops is not measured, and its files are left as a crash leaves them
    proc.wait(timeout=STEP_TIMEOUT_S)
    proc.stdin.close()
    proc.stdout.close()
    answer = json.loads(line) if line.strip() else {}
    if answer.get("id") != 1 or "result" not in answer:
        raise SystemExit(f"{argv!r} did not answer initialize: {line!r}")
    return took


def process_steps(homes: Homes) -> dict[str, Callable[[int], dict[str, float]]]:
    """Each step of a round: what it runs, and the spans (s) it gives, by figure or floor."""
    granted_argv, granted_event = hook_event(homes.granted, homes.project, GRANTED)
    floor_hook = [sys.executable, str(FLOOR_HOOK)]
    typer = [sys.executable, str(FLOOR_TYPER)]
    pending = [*wisp_argv(), "approvals", "pending"]
    mcp = [*wisp_argv(), "mcp"]
    floor_mcp = [sys.executable, str(FLOOR_MCP)]
    env_granted, env_empty = child_env(homes.granted), child_env(homes.empty, COLUMNS="120")
    env_mcp, env_pty = child_env(homes.mcp), child_env(homes.empty, TERM="xterm")

    ruled_argv, ruled_input = ruled_event(homes.ruled, homes.git_project, RULED_LINE)
    persons_argv, persons_input = ruled_event(
        homes.persons, homes.git_project, f"make deploy-{GRANTED}"
    )
    env_ruled, env_persons = child_env(homes.ruled), child_env(homes.persons)

    def request_approve(n: int) -> dict[str, float]:
        filed, exited = request_and_approve(homes, n)
        return {
            "approvals request: start -> filed": filed,
            "approvals approve (pty) -> asker exits": exited,
        }

    return {
        "hook granted": lambda n: {
            "hook granted: start -> exit": run_timed(
                granted_argv, env=env_granted, stdin=granted_event
            ).wall_s
        },
        "hook by a built-in rule": lambda n: {
            "hook by a built-in rule: start -> exit": run_timed(
                ruled_argv, env=env_ruled, stdin=ruled_input
            ).wall_s
        },
        "hook by a person's rule": lambda n: {
            "hook by a person's rule: start -> exit": run_timed(
                persons_argv, env=env_persons, stdin=persons_input
            ).wall_s
        },
        "floor hook": lambda n: {
            "floor_hook: start -> exit": run_timed(
                floor_hook, env=env_granted, stdin=granted_event
            ).wall_s
        },
        "hook ungranted": lambda n: {"hook ungranted: start -> filed": hook_ungranted(homes, n)},
        "floor typer": lambda n: {
            "floor_typer: start -> exit": run_timed(typer, env=env_empty).wall_s
        },
        "request, approve": request_approve,
        "floor typer, pty": lambda n: {
            "floor_typer under a pty: start -> exit": typer_under_pty(env_pty)
        },
        "cold pending": lambda n: {
            "cold approvals pending (empty)": run_timed(pending, env=env_empty).wall_s
        },
        "mcp": lambda n: {"mcp: start -> initialize answered": until_initialized(mcp, env_mcp)},
        "floor mcp": lambda n: {
            "floor_mcp: start -> initialize answered": until_initialized(floor_mcp, env_mcp)
        },
    }


def check_granted(homes: Homes) -> None:
    """Once, before timing: the granted call is allowed by the grant, the floor's output is
    JSON, and the empty listing says so."""
    argv, event = hook_event(homes.granted, homes.project, GRANTED)
    for command in (argv, [sys.executable, str(FLOOR_HOOK)]):
        done = subprocess.run(
            command, input=event, env=child_env(homes.granted), capture_output=True, check=False
        )
        out = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {})
        if done.returncode != 0 or out.get("permissionDecision") != "allow":
            raise SystemExit(f"{command!r} did not allow the granted call: {done!r}")
    done = subprocess.run(
        [*wisp_argv(), "approvals", "pending"],
        env=child_env(homes.empty),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or "Nothing waits" not in done.stdout:
        raise SystemExit(f"the empty listing: {done!r}")
    for home, command, rule in (
        (homes.ruled, RULED_LINE, "read-only"),
        (homes.persons, f"make deploy-{GRANTED}", "deploys"),
    ):
        argv, event = ruled_event(home, homes.git_project, command)
        done = subprocess.run(argv, input=event, env=child_env(home), capture_output=True)
        out = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {})
        said = out.get("permissionDecisionReason", "")
        if out.get("permissionDecision") != "allow" or f"by rule {rule} " not in said:
            raise SystemExit(f"{command!r} was not allowed by the rule {rule}: {done!r}")


def process_rounds(
    homes: Homes, rounds: int, warmup: int, note: Callable[[str], None]
) -> dict[str, list[float]]:
    steps = process_steps(homes)
    names = list(steps)
    got: dict[str, list[float]] = {}
    took = dict.fromkeys(names, 0.0)
    for r in range(warmup + rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:  # rotate who goes first
            t0 = time.perf_counter()
            for span, seconds in steps[name](1000 * (r + 1)).items():
                if r >= warmup:
                    got.setdefault(span, []).append(seconds)
            took[name] += time.perf_counter() - t0
    note("[process rounds' steps, s: " + ", ".join(f"{n} {t:.1f}" for n, t in took.items()) + "]")
    return got


# --- 10,000 waiting ----------------------------------------------------------------------


def listing_rounds(
    stack: ExitStack, rounds: int, note: Callable[[str], None]
) -> dict[str, list[float]]:
    """`wisp pending --json` and floor_list.py, alternated, over WAITING requests held by a
    live asker (filed as an asker files them)."""
    home = stack.enter_context(bench_home())
    holder = LockHolder(home)
    stack.callback(holder.close)
    t0 = time.perf_counter()
    file_commands(home, holder.server, 0, WAITING)
    note(f"[{WAITING} waiting: filed in {time.perf_counter() - t0:.1f} s]")
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wisp-bench-out-")))
    env = child_env(home)
    check = json_check(WAITING)
    commands = {
        "pending --json @ 10000": [*wisp_argv(), "pending", "--json"],
        "floor_list @ 10000": [sys.executable, str(FLOOR_LIST), str(home / "pending")],
    }
    got: dict[str, list[float]] = {name: [] for name in commands}
    for r in range(rounds):  # no warm-up: the files are in the page cache, just written
        for name in list(commands)[:: 1 if r % 2 == 0 else -1]:
            got[name].append(timed_command(commands[name], env, check, tmp)[0])
    return got


# --- the report --------------------------------------------------------------------------


def ratio_iqr(values: list[float], floors: list[float]) -> list[float]:
    """The 25th and 75th percentiles of the rounds' own ratios: round r's value over round
    r's floor (both lists hold one span a round, in the rounds' order)."""
    ratios = [v / f for v, f in zip(values, floors, strict=False)]
    return [round(percentile(ratios, 25), 2), round(percentile(ratios, 75), 2)]


def report_figures(report: Report, spans: dict[str, list[float]]) -> None:
    for figure, (floor, target, kind) in FIGURES.items():
        cpu = figure.startswith("round trip")
        value, base = statistics.median(spans[figure]), statistics.median(spans[floor])
        ratio = round(value / base, 2)
        fields = {
            "value": ms(value) if not cpu else round(value * 1000, 3),
            "floor": ms(base) if not cpu else round(base * 1000, 3),
            "ratio": ratio,
            "target": target,
            "met": ratio <= target,
            "unit": "ms CPU" if cpu else "ms",
            "n": min(len(spans[figure]), len(spans[floor])),
            "kind": kind,
            "floor_is": floor,
            "ratio_iqr": ratio_iqr(spans[figure], spans[floor]),
        }
        low, high = fields["ratio_iqr"]
        report.line(
            figure,
            fields,
            f"{figure:40} {fields['value']:9} {fields['unit']:6} floor {fields['floor']:9}  "
            f"{ratio:5.2f}x [{low:.2f}-{high:.2f}] (target <= {target}x: "
            f"{'met' if fields['met'] else 'NOT met'})",
        )


def report_bare_trip(report: Report, spans: dict[str, list[float]], bare: list[float]) -> None:
    """The reference: the bare two-process trip against the trip's floor, and wisp's trip
    against it (no target: what the interpreter's two processes take before wisp's own work)."""
    value = statistics.median(bare)
    base = statistics.median(spans["floor_publish: CPU per trip"])
    wisp = statistics.median(spans["round trip 1x1: CPU per trip"])
    fields = {
        "value": round(value * 1000, 3),
        "floor": round(base * 1000, 3),
        "ratio": round(value / base, 2),
        "wisp_over_bare": round(wisp / value, 2),
        "target": None,
        "met": None,
        "unit": "ms CPU",
        "n": len(bare),
        "kind": "reference",
        "floor_is": "floor_publish: CPU per trip",
    }
    report.line(
        BARE_FIGURE,
        fields,
        f"{BARE_FIGURE:40} {fields['value']:9} ms CPU floor {fields['floor']:9}  "
        f"{fields['ratio']:5.2f}x (reference; wisp's trip is {fields['wisp_over_bare']}x it)",
    )


def main(argv: list[str] | None = None) -> int:
    p = parser(
        __doc__, quick_help=f"{QUICK_ROUNDS} rounds, no warm-up, short trip runs (under 60 s)"
    )
    p.add_argument("--rounds", type=int, help=f"rounds (default {ROUNDS}; {QUICK_ROUNDS} quick)")
    args = p.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    report = Report("ratios", args.json)
    spans: dict[str, list[float]] = {}
    with ExitStack() as stack:
        first = stack.enter_context(bench_home())
        report.machine(machine(first, settle_s=settle_for(args), note=report.note))
        t0 = time.perf_counter()
        trips = trip_rounds(stack, rounds, QUICK_TRIP_SECONDS if args.quick else TRIP_SECONDS)
        spans["round trip 1x1: CPU per trip"] = trips["wisp"]
        spans["floor_publish: CPU per trip"] = trips["floor"]
        bare = trips["bare"]
        report.note(f"[round trips: {time.perf_counter() - t0:.1f} s]")
        t0 = time.perf_counter()
        homes = Homes(stack)
        check_granted(homes)
        warmup = 0 if args.quick else WARMUP_ROUNDS
        spans.update(process_rounds(homes, rounds, warmup, report.note))
        report.note(f"[process rounds: {time.perf_counter() - t0:.1f} s]")
        t0 = time.perf_counter()
        spans.update(listing_rounds(stack, rounds, report.note))
        report.note(f"[10,000 waiting: {time.perf_counter() - t0:.1f} s]")
        t0 = time.perf_counter()
        tui = tui_latency.filed_to_screen(stack.enter_context(bench_home()), max(rounds, 10) + 2)[
            2:
        ]
        report.note(f"[tui: {time.perf_counter() - t0:.1f} s]")
    report_figures(report, spans)
    report_bare_trip(report, spans, bare)
    value = statistics.median(tui)
    met = ms(value) <= TUI_TARGET_MS
    report.line(
        TUI_FIGURE,
        {
            "value": ms(value),
            "floor": None,
            "ratio": None,
            "target": TUI_TARGET_MS,
            "met": met,
            "unit": "ms",
            "n": len(tui),
            "kind": "hold",
        },
        f"{TUI_FIGURE:40} {ms(value):9} ms     (absolute; target <= {TUI_TARGET_MS:g} ms: "
        f"{'met' if met else 'NOT met'})",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
