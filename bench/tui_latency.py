"""How soon `wisp tui` shows a request: filed → its row on the screen, and the first screen.

Both are measured inside the TUI's own process, with textual's own hooks, never by reading a
terminal: the TUI runs headless (`App.run_test`, textual's headless driver, which renders
every frame as a terminal's would and only skips writing it out) over a real `wisp relay`
child, and the bench wraps two render methods of the TUI's classes:

- `filed_to_screen`: another process holds an asker's lock and files command requests, one at
  a time. The figure is from the request's own `filedAt` (the record's time, milliseconds, as
  the asker wrote it) to the moment the requests table renders a line holding that request's
  command (`RequestTable.render_line`, called by textual's compositor while it paints a
  frame). Each request is withdrawn once seen, so the next one's row is in view.
- `first_screen`: N waiting requests (default 200) from M live askers (default 100: each a
  server lock held by a helper process), filed before the TUI starts. The figure is from
  constructing the app (its relay spawned and greeted first, as `wisp tui` does) to the
  first frame painted (`RequestsScreen._compositor_refresh`) with every request in the table
  and the summary saying `N waiting`.

Prints JSON lines as the other benches do (`--json`): the machine, then one line a figure,
with its target and whether it was met. `--quick` (a dozen filings, two first screens) ends
well under 40 s on a quiet machine.

Run:  python bench/tui_latency.py [--quick] [--json] [--filings N] [--runs R]
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    Report,
    bench_home,
    child_env,
    file_commands,
    machine,
    parser,
    spread,
)

FILED_TARGET_MS = 50.0  # issue 23: filedAt → the row on screen, median
FIRST_SCREEN_TARGET_MS = 600.0  # issue 23: 200 waiting from 100 live askers, median
GAP_S = 0.15  # between filings: each is seen alone, as a person's requests come
TIMEOUT_S = 30.0  # any one wait; a bench that waits longer says so and stops

# Files a command request per `file N` line, printing its ID and filedAt (epoch seconds);
# withdraws it on `drop ID`; holds the asker's lock until stdin closes.
_FILER = """\
import json, sys
from pending import Channel, CommandBinding, Kind, Outcome, make_request
with Channel.open(sys.argv[1]) as channel, channel.server() as lock:
    server = lock.record(client="bench")
    filed = {}
    print("ready", flush=True)
    for line in sys.stdin:
        verb, arg = line.split()
        if verb == "file":
            request = make_request(
                kind=Kind.COMMAND,
                binding=CommandBinding(command=f"bench-latency-{arg}", cwd="/srv/shop"),
                title="wisp: bench", body=f"bench-latency-{arg}", server=server,
            )
            channel.file(request)
            filed[request.id] = request
            print(json.dumps([request.id, request.filed_at.timestamp()]), flush=True)
        else:
            channel.settle(filed.pop(arg), Outcome.WITHDRAWN, by="bench", reason="seen")
            print("dropped", flush=True)
"""

# Holds M server locks (M askers, as far as liveness goes) until stdin closes.
_HOLDERS = """\
import sys
from contextlib import ExitStack
from pending import Channel
with Channel.open(sys.argv[1]) as channel, ExitStack() as stack:
    for _ in range(int(sys.argv[2])):
        print(stack.enter_context(channel.server()).id, flush=True)
    print("held", flush=True)
    sys.stdin.read()
"""


def _app(home: Path) -> Any:
    """The app as `wisp tui` makes it: its relay spawned, and greeted, first."""
    from wisp.tui._app import WispTui
    from wisp.tui._link import Link, hello_line, local_argv

    link = Link(host="local", argv=local_argv(), env=child_env(home))
    link.spawn(hello_line(notify=False))
    return WispTui(links=[link])


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"tui_latency: timed out waiting for {what}")
        await asyncio.sleep(0.001)


def filed_to_screen(home: Path, filings: int) -> list[float]:
    """Seconds from each request's filedAt to the frame that first shows its row."""
    from wisp.tui._app import RequestTable

    seen: dict[str, float] = {}  # marker -> wall time its row was first rendered
    original = RequestTable.render_line

    def render_line(self: Any, y: int) -> Any:
        strip = original(self, y)
        text = strip.text
        if "bench-latency-" in text:
            marker = text.split("bench-latency-", 1)[1].split()[0]
            seen.setdefault(marker, time.time())
        return strip

    RequestTable.render_line = render_line  # type: ignore[method-assign]
    filer = subprocess.Popen(
        [sys.executable, "-c", _FILER, str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert filer.stdin is not None and filer.stdout is not None
    filer.stdout.readline()
    app = _app(home)
    delays: list[float] = []

    async def ask(line: str) -> str:
        assert filer.stdin is not None and filer.stdout is not None
        filer.stdin.write(line + "\n")
        filer.stdin.flush()
        return await asyncio.to_thread(filer.stdout.readline)

    async def main() -> None:
        async with app.run_test(size=(100, 30)):
            await _until(lambda: all(e.is_set() for e in app.ready.values()), "the relay")
            for n in range(filings):
                request_id, filed_at = json.loads(await ask(f"file {n}"))
                marker = str(n)
                await _until(functools.partial(dict.__contains__, seen, marker), f"row {n}")
                delays.append(seen[marker] - filed_at)
                await ask(f"drop {request_id}")
                await _until(lambda: app._table().row_count == 0, "the row to go")
                await asyncio.sleep(GAP_S)

    try:
        asyncio.run(main())
    finally:
        RequestTable.render_line = original  # type: ignore[method-assign]
        filer.stdin.close()
        filer.wait(timeout=TIMEOUT_S)
    return delays


def first_screen(home: Path, count: int) -> float:
    """Seconds from the app's construction to the first frame showing all *count* rows."""
    from wisp.tui._app import RequestsScreen

    shown: list[float] = []
    original = RequestsScreen._compositor_refresh

    def refresh(self: Any) -> None:
        original(self)
        if shown:
            return
        app = self.app
        summary = str(self.query_one("#summary").render())
        if app._table().row_count == count and summary.startswith(f"{count} waiting"):
            shown.append(time.perf_counter())

    RequestsScreen._compositor_refresh = refresh  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        app = _app(home)

        async def main() -> None:
            async with app.run_test(size=(80, 24)):
                await _until(lambda: bool(shown), f"{count} rows on the first screen")

        asyncio.run(main())
    finally:
        RequestsScreen._compositor_refresh = original  # type: ignore[method-assign]
    return shown[0] - t0


def fill(home: Path, count: int, askers: int) -> subprocess.Popen[str]:
    """*count* command requests from *askers* live servers (held by the returned process)."""
    from pending import Server

    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDERS, str(home), str(askers)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    ids = [line.strip() for line in iter(holder.stdout.readline, "held\n")]
    servers = [Server(id=i, pid=holder.pid, client="bench", entry_point="approvals") for i in ids]
    file_commands(home, servers, 0, count)
    return holder


def main() -> None:
    p = parser(__doc__, quick_help="a dozen filings and two first screens (under 40 s)")
    p.add_argument("--filings", type=int, default=None, help="requests filed one at a time")
    p.add_argument("--runs", type=int, default=None, help="first screens measured")
    p.add_argument("--waiting", type=int, default=200, help="requests on the first screen")
    p.add_argument("--askers", type=int, default=100, help="live askers holding them")
    args = p.parse_args()
    filings = args.filings or (12 if args.quick else 60)
    runs = args.runs or (2 if args.quick else 7)
    report = Report("tui_latency", args.json)
    report.machine(machine(note=report.note))

    with bench_home() as home:
        report.note(f"filing {filings} requests one at a time ...")
        delays = filed_to_screen(home, filings)
    fields: dict[str, Any] = {**spread(delays), "target_p50_ms": FILED_TARGET_MS}
    fields["met"] = fields["p50_ms"] <= FILED_TARGET_MS
    report.line(
        "filed_to_screen",
        fields,
        f"filedAt -> row on screen: p50 {fields['p50_ms']} ms, p90 {fields['p90_ms']} ms, "
        f"max {fields['max_ms']} ms (target p50 <= {FILED_TARGET_MS} ms)",
    )

    with bench_home() as home:
        holder = fill(home, args.waiting, args.askers)
        try:
            report.note(f"{runs} first screens, {args.waiting} waiting from {args.askers} ...")
            starts = [first_screen(home, args.waiting) for _ in range(runs)]
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=TIMEOUT_S)
    fields = {
        "waiting": args.waiting,
        "askers": args.askers,
        **spread(starts),
        "target_p50_ms": FIRST_SCREEN_TARGET_MS,
    }
    fields["met"] = fields["p50_ms"] <= FIRST_SCREEN_TARGET_MS
    report.line(
        "first_screen",
        fields,
        f"first screen, {args.waiting} waiting from {args.askers} askers: "
        f"p50 {fields['p50_ms']} ms, max {fields['max_ms']} ms "
        f"(target p50 <= {FIRST_SCREEN_TARGET_MS} ms)",
    )


if __name__ == "__main__":
    main()
