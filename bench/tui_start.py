"""How long `wisp tui` takes to show 1,000 waiting requests.

A fresh WISP_HOME holds N waiting requests (commands, facts and questions in turn) filed by
this process, whose server lock keeps them alive. Three measurements, each repeated:

- relay: spawn `wisp relay`, send the hello, until its `ready` line (every `approval` line
  written before it);
- tui (headless): `WispTui.run_test()` entered until its table holds N rows (textual's own
  headless driver; the relay is the real child process);
- terminal: `wisp tui` started in an 80x24 tmux pane until the screen reads "N waiting"
  (process start, imports and all; the screen is re-read every 10 ms, so within ~10 ms).

Run:  python bench/tui_start.py [--requests N] [--runs R] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pending import (
    Channel,
    CommandBinding,
    FactBinding,
    Kind,
    QuestionBinding,
    ServerLock,
    make_request,
)

SCREEN_POLL_S = 0.01
TIMEOUT_S = 60.0


def fill(channel: Channel, lock: ServerLock, count: int) -> None:
    bindings = [
        (Kind.COMMAND, lambda n: CommandBinding(command=f"make deploy-{n}", cwd="/srv/shop")),
        (
            Kind.FACT,
            lambda n: FactBinding(
                fact_id=f"c{n}",
                subject="release",
                name=f"codename{n}",
                value="BLUE HERON",
                source="chat",
                proposed_by="model",
            ),
        ),
        (Kind.QUESTION, lambda n: QuestionBinding(question=f"Which environment for {n}?")),
    ]
    for n in range(count):
        kind, binding = bindings[n % 3]
        channel.file(
            make_request(
                kind=kind,
                binding=binding(n),
                title="wisp: bench",
                body=f"request {n}",
                server=lock.record(client="bench"),
            )
        )


def relay_start(home: Path, count: int) -> float:
    env = {**os.environ, "WISP_HOME": str(home)}
    hello = b'{"type":"hello","effects":["approve-mcp","keep-facts","answer-questions"]}\n'
    t0 = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "wisp", "relay"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(hello)
    process.stdin.flush()
    approvals = 0
    for raw in process.stdout:
        line = json.loads(raw)
        if line["type"] == "approval":
            approvals += 1
        if line["type"] == "ready":
            break
    elapsed = time.perf_counter() - t0
    process.stdin.close()
    process.wait(timeout=TIMEOUT_S)
    assert approvals == count, approvals
    return elapsed


def tui_headless(home: Path, count: int) -> float:
    from wisp.tui._app import WispTui, default_relays
    from wisp.tui._link import SSH_RELAY

    app = WispTui(
        default_relays([], SSH_RELAY),
        env={**os.environ, "WISP_HOME": str(home)},
    )

    async def main() -> float:
        t0 = time.perf_counter()
        async with app.run_test(size=(80, 24)) as pilot:
            while app._table().row_count < count:
                if time.perf_counter() - t0 > TIMEOUT_S:
                    raise AssertionError(f"only {app._table().row_count} rows")
                await pilot.pause(0.002)
            return time.perf_counter() - t0

    return asyncio.run(main())


def terminal(home: Path, count: int, scratch: Path, run: int) -> float | None:
    tmux = shutil.which("tmux")
    if tmux is None:
        return None
    base = [tmux, "-S", str(scratch / f"tmux-{run}.sock")]
    t0 = time.perf_counter()
    subprocess.run(
        [
            *base,
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "24",
            "-e",
            f"WISP_HOME={home}",
            sys.executable,
            "-m",
            "wisp",
            "tui",
        ],
        check=True,
    )
    try:
        while True:
            screen = subprocess.run(
                [*base, "capture-pane", "-p"], capture_output=True, text=True
            ).stdout
            if f"{count} waiting" in screen:
                return time.perf_counter() - t0
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise AssertionError(f"the screen never showed {count} waiting:\n{screen}")
            time.sleep(SCREEN_POLL_S)
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True)


def summary(times: list[float]) -> dict[str, Any]:
    ms = sorted(t * 1000 for t in times)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "max_ms": round(ms[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as scratch:
        home = Path(scratch) / "home"
        with Channel.open(home) as channel, channel.server() as lock:
            fill(channel, lock, args.requests)
            results: dict[str, Any] = {"requests": args.requests}
            results["relay"] = summary([relay_start(home, args.requests) for _ in range(args.runs)])
            results["tui_headless"] = summary(
                [tui_headless(home, args.requests) for _ in range(args.runs)]
            )
            runs = [terminal(home, args.requests, Path(scratch), n) for n in range(args.runs)]
            results["terminal"] = (
                summary([t for t in runs if t is not None]) if runs and runs[0] else None
            )
    if args.json:
        print(json.dumps(results))
        return
    print(f"{args.requests} waiting requests, {args.runs} runs each:")
    for name in ("relay", "tui_headless", "terminal"):
        found = results[name]
        if found is None:
            print(f"  {name:<13} skipped (no tmux)")
        else:
            print(f"  {name:<13} p50 {found['p50_ms']} ms, max {found['max_ms']} ms")


if __name__ == "__main__":
    main()
