"""Listing: what waits, laid out for the terminal's width, or JSON for scripts."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pending import Kind, State
from wisp.cli._common import emit, no_collections, out, print_json, say, typed_as, width
from wisp.kinds import view
from wisp.program.writes import (
    ExitCode,
    listed_states,
    listing,
    nothing_waits_line,
    print_listing_json,
)

if TYPE_CHECKING:
    from wisp.cli._layout import Cell, Column, Line

# What a listing shows by default (wisp.program.writes.listed_states, shared with what is served
# before the CLI loads): what waits, and stale when its sweep could not end it.
LISTED = listed_states()
WAITING = tuple(state for state in LISTED if state is not State.STALE)

# Rows a listing shows people when its output is not a terminal (a file, a pipe): a screenful
# of a common terminal. On a terminal, as many as its height leaves room for (at least
# ROWS_MIN). The rest are counted on a closing line; `--json` always holds every request.
ROWS_NOT_TERMINAL = 50
ROWS_MIN = 10
# Lines of a terminal a listing leaves for its header, its closing line and the next prompt.
ROWS_RESERVED_LINES = 3
LIMIT_HELP = "Show at most N requests, the newest (0: all). Default: what fits the terminal."


def _limit(text: str) -> int:
    """--limit: a whole number of requests, 0 (all) or more."""
    takes = f"a whole number of requests, 0 (all) or more, not {text[:40]!r}."
    try:
        limit = int(text)
    except ValueError:
        raise ValueError(f"it takes {takes}") from None
    if limit < 0:
        raise ValueError(f"it takes {takes}")
    return limit


LimitOption = Annotated[
    int | None,
    typer.Option("--limit", "-n", metavar="N", parser=typed_as(_limit), help=LIMIT_HELP),
]


@functools.cache
def request_columns() -> tuple[Column, ...]:
    """The columns of a listing of requests. (The layout, its column and line records, is
    loaded by what lays rows out: an empty listing says one line and loads none of it.)"""
    from wisp.cli._layout import Column, Role

    return (
        Column(header="ID", role=Role.KEY),
        Column(header="KIND"),
        Column(header="AGE"),
        Column(header="ASKED", role=Role.FLEX),
        Column(header="BY", role=Role.FIELD, label="by"),
        Column(header="STATE"),
    )


def cut_pointer(request_id: str) -> str:
    return f"{request_id} is cut short above: `wisp show {request_id}` prints all of it."


def screenful() -> int:
    """How many rows a listing shows people by default (see :data:`ROWS_NOT_TERMINAL`)."""
    if not out.is_terminal:
        return ROWS_NOT_TERMINAL
    return max(out.size.height - ROWS_RESERVED_LINES, ROWS_MIN)


def shown_rows(count: int, limit: int | None) -> int:
    """How many of *count* rows to show for *limit* (None: a screenful; 0: all)."""
    if limit is None:
        limit = screenful()
    return count if limit <= 0 else min(count, limit)


def more_line(left: int, oldest: str, command: str) -> str:
    """The closing line of a listing that left *left* older requests out."""
    return (
        f"… and {left:,} older request{'' if left == 1 else 's'} not shown (the oldest "
        f"filed {oldest} ago): `{command} --limit N` shows the newest N, `--limit 0` all, "
        "`--json` all of them for scripts."
    )


def list_requests(
    kinds: list[Kind] | None,
    show_all: bool,
    as_json: bool,
    limit: int | None = None,
    command: str = "wisp pending",
) -> None:
    """The listing of *kinds* (None: all), as JSON (every request) or for people (the newest
    that fit, see :func:`shown_rows`, and a line saying how many more and how to see them)."""
    with no_collections():
        _list_requests(kinds, show_all, as_json, limit, command)


def _list_requests(
    kinds: list[Kind] | None, show_all: bool, as_json: bool, limit: int | None, command: str
) -> None:
    found = listing(kinds, show_all=show_all)
    if found is None:  # the channel cannot be used: said
        raise typer.Exit(int(ExitCode.ERROR))
    statuses, now = found.statuses, found.now
    if as_json:  # as `wisp pending --json` is served before the CLI loads (wisp.__main__)
        print_listing_json(statuses)
        return
    what = " and ".join(k.value for k in kinds) if kinds else "anything"
    if now is None or not statuses:  # no rows, no screen to measure: rich is never loaded
        show_rows([], (), [], empty=nothing_waits_line(what), as_json=False)
        return
    # The rendering (and the records under it) is loaded once there is something to render.
    from wisp._render import age, listed, state_text, who

    # Oldest first, so the newest are the last: a person's screen shows those, in order.
    shown = statuses[len(statuses) - shown_rows(len(statuses), limit) :]
    show_rows(
        [],
        request_columns(),
        [
            (
                s.id,
                s.kind.value,
                age(s.request.filed_at, now),
                listed(s),
                who(s.request),
                state_text(s),
            )
            for s in shown
        ],
        empty=nothing_waits_line(what),
        as_json=False,
        pointer=cut_pointer,
    )
    if len(shown) < len(statuses):
        say(more_line(len(statuses) - len(shown), age(statuses[0].request.filed_at, now), command))


def show_rows(
    as_objects: list[Any],
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    *,
    empty: str,
    as_json: bool,
    pointer: Callable[[str], str] | None = None,
) -> None:
    """A JSON array for scripts, or rows laid out for people (cells shown as plain text).
    Without a *pointer* (a command that shows a row whole), nothing is ever cut."""
    if as_json:
        print_json(as_objects)
        return
    if not rows:
        say(empty)
        return
    from wisp.cli._layout import TABLE_PARAGRAPH_LINES, layout

    lines = layout(
        columns,
        rows,
        width(),
        pointer=pointer or (lambda key: key),
        limit=TABLE_PARAGRAPH_LINES if pointer else None,
    )
    print_lines(lines)


def print_lines(lines: Sequence[Line]) -> None:
    for line in lines:
        emit([line.text], style="bold" if line.header else None)


def pending_command(kind: Kind, doc: str) -> Callable[..., None]:
    """`wisp approvals|facts|questions pending`: the one listing, narrowed to *kind*."""

    def pending(
        show_all: Annotated[
            bool, typer.Option("--all", "-a", help="Also requests that have ended.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
        limit: LimitOption = None,
    ) -> None:
        list_requests([kind], show_all, as_json, limit, f"wisp {view(kind).group} pending")

    pending.__doc__ = doc
    return pending
