"""The answer's whole trip: from starting `wisp approvals approve ID` in a terminal to the
exit of the asker process that was waiting for it.

Each round starts an asker, `wisp approvals request -- CMD`, as its own process, and reads
the ID it prints. After a person's pause (so the asker is waiting, not still starting), the
clock starts and `wisp approvals approve ID` runs under a real pseudo-terminal (answers are
taken only from a terminal); the clock stops when the asker process exits. Both processes'
results are checked: the asker exits 0 saying `approved once`, the approver exits 0.

Also reported: when the approving command itself finished (it waits for the asker's outcome
before it returns). With `--waiting N`, N other requests wait in the channel throughout (their
asker alive), as on a busy day: what the answering command reads beyond its one request.

Run:  python bench/answer.py [--quick] [--json] [--rounds N] [--waiting N]
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from _common import (
    ExitClock,
    LockHolder,
    Report,
    bench_home,
    child_env,
    file_commands,
    machine,
    parser,
    settle_for,
    spread,
    under_pty,
    wisp_argv,
)

TARGET_P50_MS = 150.0  # issue 23 (issue 11 asked 300)
ROUNDS = 30
QUICK_ROUNDS = 10
# A person reads the prompt before answering; the asker is waiting by then. A pace, not a
# synchronisation: the asker reads its slots once it watches, so an earlier answer is not missed.
PERSON_READS_S = 0.3
STEP_TIMEOUT_S = 30.0
NO_INOTIFY_TRIES = 5
NO_INOTIFY_PAUSE_S = 2.0
POLLING = "falling back to polling"
ANSWER_LINE = re.compile(r"wisp approvals approve ([0-9a-f]{16})")


class Asker:
    """`wisp approvals request -- CMD` as its own process; its exit time is taken as it exits."""

    def __init__(self, env: dict[str, str], command: str) -> None:
        self.process = subprocess.Popen(
            [*wisp_argv(), "approvals", "request", "--timeout", "60", "--", command],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.exited_at: float | None = None
        self.prompt = ""
        assert self.process.stderr is not None
        for line in self.process.stderr:  # ends at the asker's exit at the latest
            self.prompt += line
            found = ANSWER_LINE.search(line)
            if found:
                self.id = found.group(1)
                break
        else:
            raise SystemExit(f"the asker filed nothing: {self.prompt}")
        self.clock = ExitClock(self.process)

    def result(self) -> tuple[int, str]:
        out, err = self.process.communicate(timeout=STEP_TIMEOUT_S)
        self.exited_at = self.clock.join(STEP_TIMEOUT_S)
        if self.process.returncode != 0 or "approved once" not in out:
            raise SystemExit(
                f"the asker exited {self.process.returncode}: {out!r} {self.prompt + err!r}"
            )
        return self.process.returncode, out


class NoInotify(Exception):
    """A round ran with a polling watcher: not a figure."""


def measured_round(env: dict[str, str], n: int) -> tuple[float, float]:
    """A round, tried again (up to NO_INOTIFY_TRIES) while no inotify instance is to be had."""
    for _ in range(NO_INOTIFY_TRIES - 1):
        try:
            return one_round(env, n)
        except NoInotify:
            time.sleep(NO_INOTIFY_PAUSE_S)
    try:
        return one_round(env, n)
    except NoInotify as exc:
        raise SystemExit(f"{exc}; rerun") from None


def one_round(env: dict[str, str], n: int) -> tuple[float, float]:
    """Seconds from starting the approver to the asker's exit, and to the approver's own."""
    asker = Asker(env, f"make deploy-{n}")
    time.sleep(PERSON_READS_S)  # a person's pace, see PERSON_READS_S
    argv = [*wisp_argv(), "approvals", "approve", asker.id]
    t0 = time.perf_counter()
    approver_done, status, said = under_pty(argv, env, STEP_TIMEOUT_S)
    asker.result()
    if status != 0 or "the asker has it" not in said:
        raise SystemExit(f"the approver exited {status}: {said!r}")
    if POLLING in said or POLLING in asker.prompt:
        # No inotify instance was left for this user (other programs hold them): the trip
        # would measure the polling interval, not wisp.
        raise NoInotify(f"a watcher fell back to polling: {said!r} {asker.prompt!r}")
    assert asker.exited_at is not None
    return asker.exited_at - t0, approver_done - t0


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, quick_help=f"{QUICK_ROUNDS} rounds (about 15 s)")
    p.add_argument("--rounds", type=int, help=f"rounds (default {ROUNDS}; {QUICK_ROUNDS} quick)")
    p.add_argument(
        "--waiting", type=int, default=0, help="other requests waiting meanwhile (default 0)"
    )
    args = p.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    report = Report("answer", args.json)
    with bench_home() as home:
        env = child_env(home, COLUMNS="200", TERM="xterm")
        report.machine(machine(Path(home), settle_s=settle_for(args), note=report.note))
        holder = LockHolder(home) if args.waiting else None
        try:
            if holder is not None:
                file_commands(home, holder.server, 0, args.waiting)
            measured_round(env, -1)  # warm-up: page cache, .pyc files; not counted
            to_asker: list[float] = []
            to_approver: list[float] = []
            for n in range(rounds):
                asker_s, approver_s = measured_round(env, n)
                to_asker.append(asker_s)
                to_approver.append(approver_s)
        finally:
            if holder is not None:
                holder.close()
    trip = spread(to_asker)
    met = trip["p50_ms"] <= TARGET_P50_MS
    report.line(
        "approve to asker exit",
        {**trip, "waiting": args.waiting, "target_p50_ms": TARGET_P50_MS, "met": met},
        f"approve -> asker exits    n={trip['n']:<3} p50 {trip['p50_ms']:7.1f} ms  "
        f"p90 {trip['p90_ms']:7.1f} ms  max {trip['max_ms']:7.1f} ms  "
        f"(target p50 <= {TARGET_P50_MS:g} ms: {'met' if met else 'NOT met'}); "
        f"{args.waiting} other requests waiting",
    )
    own = spread(to_approver)
    report.line(
        "approve command's own exit",
        {**own, "waiting": args.waiting},
        f"approve -> approver exits n={own['n']:<3} p50 {own['p50_ms']:7.1f} ms  "
        f"p90 {own['p90_ms']:7.1f} ms  max {own['max_ms']:7.1f} ms",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
