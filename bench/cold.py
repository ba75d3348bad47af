"""Cold start: `wisp approvals pending` (empty channel) and `wisp --help`, against a minimal
one-command typer app, in the same run; and, for what an empty listing does not pay, the same
listing with one request waiting (from a live asker).

Each round runs every variant once, as a new process, in a rotating order (so a burst of load
on the shared machine falls on all of them alike); the figures are medians over the rounds,
and the ratio is wisp's median over the minimal app's. "Cold" is a new interpreter each time;
the files themselves are in the page cache after the warm-up rounds (dropping it needs root).

The reference variants: the minimal app importing just wisp's declared dependencies (typer,
attrs, cattrs, rich.table) — what any typer CLI with these dependencies pays — and a bare
interpreter, the floor under everything.

Run:  python bench/cold.py [--quick] [--json] [--rounds N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from _common import (
    LockHolder,
    Report,
    bench_home,
    child_env,
    file_commands,
    judge,
    machine,
    ms,
    ratio_note,
    run_timed,
    wisp_argv,
)

# The target, as a ratio of medians over the minimal app in the same run: issue 23's (issue
# 11 asked 1.4).
TARGET_RATIO = 1.1
ROUNDS = 30
QUICK_ROUNDS = 10
WARMUP_ROUNDS = 2  # fills the page cache and writes .pyc files; not counted

FLOOR_TYPER = Path(__file__).resolve().parent / "floor_typer.py"
MINIMAL_APP = FLOOR_TYPER.read_text()

# The same app importing just what wisp declares and uses on every command.
DEPS_APP = MINIMAL_APP.replace(
    "import typer\n",
    "import typer\nimport attrs  # noqa: F401\nimport cattrs  # noqa: F401\n"
    "import rich.table  # noqa: F401\n",
)

# The minimal app's command with the options `wisp approvals pending` takes: typer (0.29 and
# later) loads pydantic to coerce parameters, so any command with an option pays this.
OPTIONS_APP = MINIMAL_APP.replace(
    "def pending() -> None:",
    "def pending(\n"
    '    show_all: bool = typer.Option(False, "--all"),\n'
    '    as_json: bool = typer.Option(False, "--json"),\n'
    '    limit: int = typer.Option(0, "--limit"),\n'
    ") -> None:",
)


# The listing with a request to show: it opens the channel, sweeps, and loads the records, the
# answering side and the layout (what an empty listing is spared; bench/README.md).
ONE_WAITING = "wisp approvals pending, 1 waiting"


def variants(tmp: Path) -> dict[str, list[str]]:
    minimal = FLOOR_TYPER
    deps = tmp / "minimal_deps_app.py"
    deps.write_text(DEPS_APP)
    options = tmp / "minimal_options_app.py"
    options.write_text(OPTIONS_APP)
    wisp = wisp_argv()
    return {
        "wisp approvals pending": [*wisp, "approvals", "pending"],
        ONE_WAITING: [*wisp, "approvals", "pending"],
        "wisp --help": [*wisp, "--help"],
        "wisp --version": [*wisp, "--version"],
        "minimal typer app": [sys.executable, str(minimal)],
        "minimal app + declared deps": [sys.executable, str(deps)],
        "minimal app with wisp's options": [sys.executable, str(options)],
        "bare python": [sys.executable, "-c", "pass"],
    }


def check_output(argv: Sequence[str], env: dict[str, str], expect: str) -> None:
    """Once, before timing: the command does what it should (an empty channel says so)."""
    done = subprocess.run(list(argv), env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or expect not in done.stdout:
        raise SystemExit(
            f"{' '.join(argv)} exited {done.returncode} without {expect!r}:\n"
            f"{done.stdout}{done.stderr}"
        )


def main(argv: list[str] | None = None) -> int:
    from _common import parser

    p = parser(__doc__, quick_help=f"{QUICK_ROUNDS} rounds (about 20 s)")
    p.add_argument("--rounds", type=int, help=f"rounds (default {ROUNDS}; {QUICK_ROUNDS} quick)")
    args = p.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    report = Report("cold", args.json)

    with (
        bench_home() as home,
        bench_home() as waiting_home,
        tempfile.TemporaryDirectory(prefix="wisp-bench-app-") as tmp,
    ):
        env = child_env(home, COLUMNS="120")
        commands = variants(Path(tmp))
        holder = LockHolder(waiting_home)
        file_commands(waiting_home, holder.server, 0, 1)
        envs = {ONE_WAITING: child_env(waiting_home, COLUMNS="120")}
        check_output(commands["wisp approvals pending"], env, "Nothing waits for you")
        check_output(commands[ONE_WAITING], envs[ONE_WAITING], "make deploy-0")
        check_output(commands["wisp --help"], env, "approvals")
        check_output(commands["minimal typer app"], env, "Nothing waits for you")
        check_output(commands["minimal app + declared deps"], env, "Nothing waits for you")
        check_output(commands["minimal app with wisp's options"], env, "Nothing waits for you")
        report.machine(machine(home, note=report.note))
        names = list(commands)
        wall: dict[str, list[float]] = {n: [] for n in names}
        cpu: dict[str, list[float]] = {n: [] for n in names}
        for r in range(WARMUP_ROUNDS + rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:  # rotate who goes first
                run = run_timed(commands[name], env=envs.get(name, env))
                if r >= WARMUP_ROUNDS:
                    wall[name].append(run.wall_s)
                    cpu[name].append(run.cpu_s)
        holder.close()

    base = statistics.median(wall["minimal typer app"])
    base_cpu = statistics.median(cpu["minimal typer app"])
    for name in names:
        med, med_cpu = statistics.median(wall[name]), statistics.median(cpu[name])
        fields = {
            "command": name,
            "n": len(wall[name]),
            "median_ms": ms(med),
            "min_ms": ms(min(wall[name])),
            "cpu_median_ms": ms(med_cpu),
            "ratio": round(med / base, 2),
            "cpu_ratio": round(med_cpu / base_cpu, 2),
        }
        if name == "wisp approvals pending":
            judge(fields, fields["ratio"], TARGET_RATIO)
        report.line(
            name,
            fields,
            f"{name:28} median {ms(med):7.1f} ms (min {ms(min(wall[name])):6.1f}, "
            f"cpu {ms(med_cpu):6.1f})  {fields['ratio']:.2f}x the minimal app"
            + ratio_note(fields, TARGET_RATIO),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
