"""Listing: what waits, laid out for the terminal's width, or JSON for scripts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

from pending import Kind, State, Via
from wisp._answering import Answerer
from wisp._audit import EntryPoint
from wisp._render import age, paragraphs, state_text, status_json, who
from wisp.cli._common import emit, open_channel, print_json, say, tell, width
from wisp.cli._layout import TABLE_PARAGRAPH_LINES, Cell, Column, Line, Role, layout

WAITING = (State.FILED, State.ANSWERED, State.HANDED_OVER)
# What a listing shows by default: what waits, and what went stale (with why) before the
# sweep that follows the listing settles it.
LISTED = (*WAITING, State.STALE)

REQUEST_COLUMNS = (
    Column(header="ID", role=Role.KEY),
    Column(header="KIND"),
    Column(header="AGE"),
    Column(header="ASKED", role=Role.FLEX),
    Column(header="BY", role=Role.FIELD, label="by"),
    Column(header="STATE"),
)


def cut_pointer(request_id: str) -> str:
    return f"{request_id} is cut short above: `wisp show {request_id}` prints all of it."


def list_requests(kinds: list[Kind] | None, show_all: bool, as_json: bool) -> None:
    with open_channel() as channel:
        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.PENDING, wait_s=0)
        listing = answerer.listing(
            kinds=kinds,
            states=None if show_all else LISTED,
            on_problem=lambda problem: tell(f"wisp: {problem}"),
        )
        now = channel.clock.now()
    if listing.problems:  # on stderr: with --json too, the array alone stays on stdout
        count = len(listing.problems)
        tell(
            f"wisp: skipped {count} entr{'y' if count == 1 else 'ies'} that cannot "
            "be read safely; run `wisp doctor` to see them."
        )
    what = " and ".join(k.value for k in kinds) if kinds else "anything"
    show_rows(
        [status_json(s) for s in listing.statuses],
        REQUEST_COLUMNS,
        [
            (
                s.id,
                s.kind.value,
                age(s.request.filed_at, now),
                paragraphs(s.request),
                who(s.request),
                state_text(s),
            )
            for s in listing.statuses
        ],
        empty=f"Nothing waits for you ({what}).",
        as_json=as_json,
        pointer=cut_pointer,
    )


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
    ) -> None:
        list_requests([kind], show_all, as_json)

    pending.__doc__ = doc
    return pending
