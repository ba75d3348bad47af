"""`wisp log`: the audit log, filtered; `-f` follows it as it is written."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from pending import Kind
from wisp import (
    DECIDERS,
    EVENTS,
    AuditLogError,
    LogFilter,
    LogFollower,
    is_legacy,
    known_event,
    parse_since,
    read_log,
    wisp_home,
)
from wisp._render import log_line
from wisp._text import wrap
from wisp.cli._common import choice_of, choices, emit, fail, json_line, say, tell, width
from wisp.program.lookup import LookupRefused, typed_hex

HANG = 2  # a record's further lines are indented this much

LOG_EXAMPLES = """Examples:
  wisp log                              everything recorded
  wisp log --request 3f9c               one request's story (a unique prefix will do)
  wisp log --kind fact --since 2h       fact events of the last two hours
  wisp log --event approval.answered --json
  wisp log --decider rule               the calls a rule decided, without asking
  wisp log -f                           follow: each record as it is written (Ctrl-C stops)"""


def _usage(message: str) -> typer.BadParameter:
    return typer.BadParameter(message)


def log(
    request: Annotated[
        str | None,
        typer.Option(
            "--request",
            "-r",
            "--id",
            metavar="ID",
            help="Only records about this request (its ID, or its first 4 or more characters).",
        ),
    ] = None,
    kind: Annotated[
        list[Kind] | None,
        typer.Option(
            "--kind",
            "-k",
            parser=choice_of(Kind),
            metavar=choices(Kind),
            help="Only records about this kind of request (repeatable).",
        ),
    ] = None,
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            "-e",
            metavar="EVENT",
            help="Only this event, or family of events: approval for every approval.* "
            "(repeatable). Events: " + ", ".join(EVENTS) + " (the last three written by "
            "earlier builds).",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="WHEN",
            help="Only records from then on: an age (90s, 10m, 2h, 3d, 1w) or a time "
            "(2026-11-29, 2026-11-29T12:00; local time unless a zone is given).",
        ),
    ] = None,
    decider: Annotated[
        list[str] | None,
        typer.Option(
            "--decider",
            "-d",
            metavar="|".join(DECIDERS[:5]),
            help="Only the calls this decided (repeatable): a rule, a grant, the person, a "
            "time-out, or the self-guard (a call it put to you); also "
            + ", ".join(DECIDERS[5:])
            + ".",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Each record as it is stored: one JSON object a line.")
    ] = False,
    follow: Annotated[
        bool,
        typer.Option("--follow", "-f", help="Then each new record as it is written; Ctrl-C stops."),
    ] = False,
) -> None:
    """Read the audit log: every request filed, answered and settled, every grant and fact.

    Records of earlier builds (fact.approved, fact.approval.asked, fact.approval.decided)
    are read too, marked (legacy). Exit 0; 2 a usage error, or the log cannot be read."""
    where = _filter(request, kind, event, since, decider)
    home = wisp_home()
    if follow:
        _follow(home, where, as_json)
        return
    try:
        records, skipped = read_log(home, where)
    except AuditLogError as exc:
        fail(str(exc))
    for record in records:
        _print(record, as_json)
    if skipped:
        tell(f"wisp: skipped {skipped} line(s) of the audit log that are not records.")
    if not records and not as_json:
        say("No audit records match." if _filtering(where) else "The audit log is empty.")


def _filter(
    request: str | None,
    kinds: list[Kind] | None,
    events: list[str] | None,
    since: str | None,
    deciders: list[str] | None = None,
) -> LogFilter:
    """The filter, or a usage error (exit 2) that says what each option takes."""
    typed = None
    if request is not None:
        try:
            typed = typed_hex(request)
        except LookupRefused as exc:
            raise _usage(str(exc)) from None
    for wanted in events or ():
        if not known_event(wanted):
            raise _usage(
                f"--event takes an event or a family of them ({', '.join(EVENTS)}); not {wanted!r}."
            )
    for wanted in deciders or ():
        if wanted not in DECIDERS:
            raise _usage(f"--decider takes one of {', '.join(DECIDERS)}; not {wanted!r}.")
    moment = None
    if since is not None:
        try:
            moment = parse_since(since, datetime.now(UTC))
        except ValueError as exc:
            raise _usage(str(exc)) from None
    return LogFilter(
        request=typed,
        kinds=frozenset(k.value for k in kinds) if kinds else None,
        events=tuple(events) if events else None,
        since=moment,
        deciders=tuple(deciders) if deciders else None,
    )


def _filtering(where: LogFilter) -> bool:
    shown = (where.request, where.kinds, where.events, where.since, where.deciders)
    return any(v is not None for v in shown)


def _print(record: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json_line(record) + "\n")
    else:
        columns = width()
        lines = wrap(log_line(record, legacy=is_legacy(record)), columns, then=columns - HANG)
        emit([lines[0], *(" " * HANG + line for line in lines[1:])])
    sys.stdout.flush()


def _follow(home: Path, where: LogFilter, as_json: bool) -> None:
    follower = LogFollower(home, on_warning=lambda message: tell(f"wisp: {message}"))
    try:
        follower.start()
        backend = "inotify" if follower.backend == "native" else "polling"
        tell(f"wisp: following {follower.reader.path} ({backend}); Ctrl-C to stop")
        for record in follower.backlog():
            if where.matches(record):
                _print(record, as_json)
        for record in follower:
            if where.matches(record):
                _print(record, as_json)
    except AuditLogError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        pass
    finally:
        follower.close()
