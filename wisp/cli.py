"""The `wisp` command: parses, calls the channel, renders. Exit codes are :class:`ExitCode`."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from pending import Channel, Kind, Missed, PendingError, State, Watcher, wisp_home
from wisp import __version__
from wisp._audit import audit
from wisp._console import command_group, fail, open_channel, out, print_json, safe, say, tell
from wisp._exit import ExitCode
from wisp._facts import apply_awaiting
from wisp._listing import WAITING, list_requests
from wisp._render import (
    transition_json,
    transition_line,
)
from wisp._text import visible

app = command_group(
    "wisp's pending channel: what your agents are waiting on you for, answered from any terminal.",
    name="wisp",
    no_args_is_help=True,
)
pending_app = command_group(
    "List what waits for you across every kind; watch or sweep the channel."
)
app.add_typer(pending_app, name="pending")


def _version(value: bool) -> None:
    if value:
        out.print(f"wisp {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """wisp's pending channel: what your agents are waiting on you for."""


@pending_app.callback(invoke_without_command=True)
def pending(
    ctx: typer.Context,
    kind: Annotated[
        list[Kind] | None, typer.Option("--kind", "-k", help="Only this kind (repeatable).")
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", "-a", help="Also ended and stale requests.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """Everything waiting for you, across kinds (oldest first)."""
    if ctx.invoked_subcommand is None:
        list_requests(kind, show_all, as_json)


@pending_app.command("sweep")
def sweep(
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
) -> None:
    """Tidy the channel: settle stale requests, remove old ended ones and crashed writers' files."""
    with open_channel() as channel:
        report = channel.sweep()
        for problem in apply_awaiting(channel, report.awaiting):
            tell(f"wisp: {problem}")
    summary = {
        "stale": list(report.stale),
        "finished": list(report.finished),
        "removed": list(report.removed),
        "tempFiles": report.temp_files,
        "locks": report.locks,
        "awaiting": [s.id for s in report.awaiting],
    }
    if as_json:
        print_json(summary)
        return
    out.print(
        f"swept: {len(report.stale)} stale, {len(report.finished)} finished, "
        f"{len(report.removed)} removed, {report.temp_files} temp files, "
        f"{report.locks} dead servers' locks"
    )
    if report.awaiting:
        out.print(
            f"{len(report.awaiting)} answered fact request(s) wait to be applied: "
            + ", ".join(s.id for s in report.awaiting)
        )


@pending_app.command("watch")
def watch(
    kind: Annotated[
        list[Kind] | None, typer.Option("--kind", "-k", help="Only this kind (repeatable).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per line on stdout.")
    ] = False,
) -> None:
    """What waits now, then one line per transition as it happens. Ctrl-C stops."""
    channel = open_channel()
    home = channel.home

    def warn(message: str) -> None:
        tell(f"wisp: {message}")
        audit(home, "watch.warning", {"message": message}, entry_point="pending")

    try:
        channel.sweep()
        watcher = Watcher(channel, on_warning=warn).start()
    except (OSError, PendingError) as exc:
        channel.close()
        fail(f"cannot watch {channel.path}: {exc}. Check it with `wisp doctor`.")
    kinds = set(kind) if kind else None
    try:
        subscription, snapshot = watcher.subscribe()
        backend = "inotify" if watcher.backend and watcher.backend.value == "native" else "polling"
        tell(f"wisp: watching {channel.path} ({backend}); Ctrl-C to stop")
        for status in snapshot:
            if status.state in WAITING and (kinds is None or status.kind in kinds):
                emit_transition(
                    "waiting",
                    status,
                    status.id,
                    status.kind.value,
                    status.request.filed_at,
                    as_json,
                )
        for item in subscription:
            if isinstance(item, Missed):
                tell(
                    f"wisp: missed {item.count} event(s): this terminal fell behind. "
                    "Run `wisp pending` for the current state."
                )
                continue
            if kinds is None or item.kind in kinds:
                emit_transition(
                    item.event.value, item.status, item.id, item.kind.value, item.ts, as_json
                )
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python from complaining.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        watcher.stop()
        channel.close()


def emit_transition(
    event: str, status: Any, request_id: str, kind: str, ts: Any, as_json: bool
) -> None:
    if as_json:
        line = json.dumps(
            transition_json(event, status, request_id=request_id, kind=kind, ts=ts),
            ensure_ascii=False,
        )
    else:
        line = safe(transition_line(event, status, request_id=request_id, kind=kind, ts=ts))
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


@app.command("doctor")
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="The findings as JSON.")] = False,
) -> None:
    """Check the channel (directory, watching, askers, what waits, skipped entries) and say
    which notification route would be taken here, and why the others would be skipped."""
    from wisp._asking import default_notifier

    home = wisp_home()
    try:
        channel = Channel.open(home)
    except PendingError as exc:
        if as_json:
            print_json({"channel": str(home / "pending"), "ok": False, "error": str(exc)})
        fail(str(exc))
    with channel:
        listing = channel.listing()
        st = os.fstat(channel.dir_fd)
        servers = sorted({s.request.server.id for s in listing.statuses if s.server_alive})
        counts = {state.value: 0 for state in State}
        for status in listing.statuses:
            counts[status.state.value] += 1
        watching = _watching(channel)
        path = str(channel.path)
    routes = default_notifier(home, "doctor").describe()
    route = next((r for r, why in routes if why is None), None)
    findings = {
        "channel": path,
        "ok": not listing.problems,
        "mode": f"{st.st_mode & 0o777:04o}",
        "owner": st.st_uid,
        "watching": watching,
        "liveServers": len(servers),
        "states": counts,
        "problems": [{"name": p.name, "reason": p.reason} for p in listing.problems],
        "notification": {
            "route": route,
            "skipped": [f"{r}: {why}" for r, why in routes if why is not None],
        },
    }
    if as_json:
        print_json(findings)
    else:
        say(f"channel   {path} (mode {findings['mode']}, owner uid {st.st_uid}): ok")
        limits = ", ".join(f"{k} {v}" for k, v in watching["limits"].items())
        say(
            f"watching  {watching['backend']}"
            + (f" ({watching['note']})" if watching["note"] else "")
            + (f"; inotify {limits}" if limits else "")
        )
        say(f"servers   {len(servers)} alive with waiting requests")
        say(
            "requests  " + (", ".join(f"{n} {state}" for state, n in counts.items() if n) or "none")
        )
        say(f"notify    would post via {route}" if route else "notify    no route would post")
        for r, why in routes:
            if why is not None:
                say(f"          {r}: skipped, {why}")
        for problem in listing.problems:
            say(f"skipped   {visible(problem.name)}: {problem.reason}")
        if listing.problems:
            say(
                "          Skipped entries are never acted on. Remove them if you did not put "
                "them there."
            )
    if listing.problems:
        raise typer.Exit(int(ExitCode.NO))


def _watching(channel: Channel) -> dict[str, Any]:
    """Whether native watching starts here, and the kernel's inotify limits."""
    notes: list[str] = []
    watcher = Watcher(channel, on_warning=notes.append)
    try:
        watcher.start()
        backend = "inotify" if watcher.backend and watcher.backend.value == "native" else "polling"
    except OSError as exc:
        backend, notes = "unavailable", [str(exc)]
    finally:
        watcher.stop()
    limits = {}
    for name in ("max_user_watches", "max_user_instances", "max_queued_events"):
        try:
            limits[name] = int(Path(f"/proc/sys/fs/inotify/{name}").read_text())
        except (OSError, ValueError):
            continue
    return {"backend": backend, "note": "; ".join(notes) or None, "limits": limits}


def _register_faces() -> None:
    from wisp._cli_admin import config_app, notify
    from wisp._cli_facts import facts_app
    from wisp._cli_requests import approvals_app, questions_app

    app.command("notify")(notify)
    app.add_typer(config_app, name="config")
    app.add_typer(approvals_app, name="approvals")
    app.add_typer(facts_app, name="facts")
    app.add_typer(questions_app, name="questions")


_register_faces()


def main() -> None:
    # watchdog logs a benign shutdown race at ERROR, and inotify overflows as warnings; the
    # watcher hears the overflow through its own handler and says what matters itself.
    watchdog_log = logging.getLogger("watchdog")
    watchdog_log.addHandler(logging.NullHandler())
    watchdog_log.propagate = False
    app()
