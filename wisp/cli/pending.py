"""`wisp pending …`: what waits for you across every kind; watch it live, or sweep it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pending import Kind, PendingError, Via
from wisp import EntryPoint
from wisp.cli._common import (
    choice_of,
    choices,
    command_group,
    fail,
    json_line,
    me,
    open_channel,
    print_json,
    safe,
    say,
    tell,
)
from wisp.cli._exit import ExitCode
from wisp.cli._listing import WAITING, LimitOption, list_requests

if TYPE_CHECKING:
    from pending import Status

# The answering side and the renderings are imported by the commands that use them: the
# listing loads them only when something waits (see wisp.cli._listing).

pending_app = command_group(
    "List what waits for you across every kind; watch or sweep the channel.",
    epilog="""Examples:
  wisp pending                       what waits, for people (fits any width)
  wisp pending --kind fact --all     fact requests, the ended ones too
  wisp pending --json
  wisp pending watch""",
)


@pending_app.callback(invoke_without_command=True)
def pending(
    ctx: typer.Context,
    kind: Annotated[
        list[Kind] | None,
        typer.Option(
            "--kind",
            "-k",
            parser=choice_of(Kind),
            metavar=choices(Kind),
            help="Only this kind (repeatable).",
        ),
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", "-a", help="Also ended and stale requests.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
    limit: LimitOption = None,
) -> None:
    """Everything waiting for you, across kinds (oldest first)."""
    if ctx.invoked_subcommand is None:
        list_requests(kind, show_all, as_json, limit)


@pending_app.command("sweep", epilog="Examples:\n  wisp pending sweep\n  wisp pending sweep --json")
def sweep(
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
) -> None:
    """Tidy the channel: settle stale requests, remove old ended ones and crashed writers' files."""
    from wisp import Answerer

    with open_channel() as channel:
        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.PENDING, wait_s=0)
        report = answerer.sweep(on_problem=lambda problem: tell(f"wisp: {problem}"))
    summary = {
        "stale": list(report.stale),
        "finished": list(report.finished),
        "removed": list(report.removed),
        "tempFiles": report.temp_files,
        "locks": report.locks,
        "applied": list(report.applied),
        "awaiting": [s.id for s in report.awaiting],
        "skipped": [{"name": p.name, "reason": p.reason} for p in report.problems],
        "errors": list(report.errors),
    }
    if as_json:
        print_json(summary)
    else:
        say(
            f"swept: {len(report.stale)} stale, {len(report.finished)} finished, "
            f"{len(report.removed)} removed, {report.temp_files} temp files, "
            f"{report.locks} dead servers' locks"
        )
        if report.applied:
            say(
                f"applied {len(report.applied)} answered fact request(s) whose asker had "
                "stopped: " + ", ".join(report.applied)
            )
        if report.awaiting:
            say(
                f"{len(report.awaiting)} answered fact request(s) still wait to be applied: "
                + ", ".join(s.id for s in report.awaiting)
            )
        if report.problems:
            say(
                f"left alone {len(report.problems)} entr"
                f"{'y' if len(report.problems) == 1 else 'ies'} that cannot be read safely: "
                "`wisp doctor` lists them."
            )
    for error in report.errors:
        tell(f"wisp: {error}")
    if report.errors:  # the sweep could not write: what it left, a later sweep finishes
        raise typer.Exit(int(ExitCode.ERROR))


@pending_app.command(
    "watch",
    epilog="Examples:\n  wisp pending watch\n  wisp pending watch --kind command --json",
)
def watch(
    kind: Annotated[
        list[Kind] | None,
        typer.Option(
            "--kind",
            "-k",
            parser=choice_of(Kind),
            metavar=choices(Kind),
            help="Only this kind (repeatable).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per line on stdout.")
    ] = False,
) -> None:
    """What waits now, then one line per transition as it happens, and one per tool call
    decided without asking (by a rule or a grant) as it is recorded.

    Ctrl-C stops (exit 0). If the channel directory is removed, it says so and waits for it
    to be made again, then goes on there. Exit 2 if the channel cannot be used."""
    # Here, not at the top: these load watchdog, which a listing or a sweep never needs.
    from pending import Missed, Transition
    from wisp import Answerer, ChannelBack, Found, HomeGone, LiveInbox, _startup

    _startup.resume()  # it lives on, watching (wisp._startup)
    channel = open_channel()
    live = LiveInbox(
        channel.home, entry_point=EntryPoint.PENDING, on_warning=lambda m: tell(f"wisp: {m}")
    )
    try:
        Answerer(channel, via=Via.CLI, entry_point=EntryPoint.PENDING, wait_s=0).sweep()
        snapshot = live.start(channel)
    except (OSError, PendingError) as exc:
        live.close()
        channel.close()
        fail(f"cannot watch {channel.path}: {exc}. Check it with `wisp doctor`.")
    kinds = set(kind) if kind else None
    person = me()

    def waiting(statuses: Iterable[Status]) -> None:
        for status in statuses:
            if status.state in WAITING and (kinds is None or status.kind in kinds):
                emit_transition(
                    "waiting",
                    status,
                    status.id,
                    status.kind.value,
                    status.request.filed_at,
                    as_json,
                    person,
                )

    stop_decided: Callable[[], None] = _nothing
    try:
        backend = "inotify" if live.backend == "native" else "polling"
        tell(f"wisp: watching {channel.path} ({backend}); Ctrl-C to stop")
        # The calls decided without asking come on a thread of their own, one line at a time
        # (where native watching is unavailable, the watch has said so once already).
        stop_decided = _show_decided(channel.home, kinds, as_json, said=backend == "inotify")
        waiting(snapshot)
        for item in live:
            if isinstance(item, Missed):
                tell(
                    f"wisp: missed {item.count} event(s): this terminal fell behind. "
                    "Run `wisp pending` for the current state."
                )
            elif isinstance(item, ChannelBack):
                waiting(item.statuses)
            elif isinstance(item, Found):
                waiting((item.status,))
            elif isinstance(item, HomeGone):
                fail(
                    f"{item.path} was removed, so there is nothing left to watch. Run `wisp "
                    "pending watch` again once it is back (any wisp command makes it)."
                )
            elif isinstance(item, Transition) and (kinds is None or item.kind in kinds):
                emit_transition(
                    item.event.value,
                    item.status,
                    item.id,
                    item.kind.value,
                    item.ts,
                    as_json,
                    person,
                )
    except KeyboardInterrupt:
        pass
    finally:
        stop_decided()
        live.close()


_said = threading.Lock()


def _nothing() -> None:
    return None


def emit_transition(
    event: str, status: Any, request_id: str, kind: str, ts: Any, as_json: bool, person: str
) -> None:
    from wisp._render import transition_json, transition_line

    if as_json:
        line = json_line(transition_json(event, status, request_id=request_id, kind=kind, ts=ts))
    else:
        line = safe(
            transition_line(event, status, request_id=request_id, kind=kind, ts=ts, me=person)
        )
    with _said:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _show_decided(
    home: Path, kinds: set[Kind] | None, as_json: bool, *, said: bool
) -> Callable[[], None]:
    """Start showing each tool call decided without asking (a `call.decided` record of a
    rule or a grant) as the audit log records it, driven by its file events (the audit
    log's follower, :func:`wisp.follow_decided`: the relay's and the web page's too); what
    is recorded before is not shown. Its warnings are *said* (else the watch has said them
    already: native watching is unavailable). Returns what stops it."""
    from wisp import AuditLogError, DecidedCall, follow_decided
    from wisp._render import decided_json, decided_watch_line

    def kind_of(call: DecidedCall) -> Kind | None:
        """Its kind (`command` for a shell line, else `tool`), None if unknown."""
        try:
            return Kind(str(call.record.get("kind")))
        except ValueError:
            return None

    def show(call: DecidedCall) -> None:
        if kinds is not None and kind_of(call) not in kinds:
            return
        record = dict(call.record)
        line = json_line(decided_json(record)) if as_json else safe(decided_watch_line(record))
        with _said:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    try:
        # It makes nothing in the home (no logs/: a home being removed is not made again).
        follower = follow_decided(
            home,
            show,
            on_error=lambda why: tell(f"wisp: calls decided without asking no longer shown: {why}"),
            on_warning=lambda m: tell(f"wisp: {m}") if said else None,
        )
    except (AuditLogError, OSError, PendingError) as exc:
        tell(f"wisp: calls decided without asking are not shown ({exc}).")
        return lambda: None
    return follower.close
