"""Listing: what waits, as a table for people or JSON for scripts; one command per kind."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from pending import Kind, State, Via
from wisp._answering import Answerer
from wisp._audit import EntryPoint
from wisp._render import age, asked, state_text, status_json, who
from wisp._text import visible
from wisp.cli._common import open_channel, out, print_json, tell

WAITING = (State.FILED, State.ANSWERED, State.HANDED_OVER)
# What a listing shows by default: what waits, and what went stale (with why) before the
# sweep that follows the listing settles it.
LISTED = (*WAITING, State.STALE)


def list_requests(kinds: list[Kind] | None, show_all: bool, as_json: bool) -> None:
    with open_channel() as channel:
        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.PENDING, wait_s=0)
        listing = answerer.listing(
            kinds=kinds,
            states=None if show_all else LISTED,
            on_problem=lambda problem: tell(f"wisp: {problem}"),
        )
        now = channel.clock.now()
    if not as_json and listing.problems:
        count = len(listing.problems)
        tell(
            f"wisp: skipped {count} entr{'y' if count == 1 else 'ies'} that cannot "
            "be read safely; run `wisp doctor` to see them."
        )
    what = " and ".join(k.value for k in kinds) if kinds else "anything"
    show_rows(
        [status_json(s) for s in listing.statuses],
        [
            (
                s.id,
                s.kind.value,
                age(s.request.filed_at, now),
                asked(s.request),
                who(s.request),
                state_text(s),
            )
            for s in listing.statuses
        ],
        columns=("ID", "KIND", "AGE", "ASKED", "BY", "STATE"),
        wrap="ASKED",
        empty=f"Nothing waits for you ({what}).",
        as_json=as_json,
    )


def show_rows(
    as_objects: list[Any],
    rows: Sequence[Sequence[str]],
    *,
    columns: Sequence[str],
    empty: str,
    as_json: bool,
    wrap: str | None = None,
) -> None:
    """A JSON array for scripts, or a table for people (cells are shown as plain text)."""
    if as_json:
        print_json(as_objects)
        return
    if not rows:
        out.print(empty, highlight=False)
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column, no_wrap=wrap is not None and column != wrap, overflow="fold")
    for row in rows:
        table.add_row(*(Text(visible(cell)) for cell in row))
    out.print(table)


def pending_command(kind: Kind, doc: str) -> Callable[..., None]:
    """`wisp approvals|facts|questions pending`: the one listing, narrowed to *kind*."""

    def pending(
        show_all: Annotated[bool, typer.Option("--all", "-a", help="Also ended ones.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
    ) -> None:
        list_requests([kind], show_all, as_json)

    pending.__doc__ = doc
    return pending
