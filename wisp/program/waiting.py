"""What waits for the person, as a listing shows it: :func:`waiting`.

An empty channel (nothing filed, nothing to tidy) is read without being opened, and so without
loading a record or the answering side: the listing a person most often sees pays for three
directory reads (bench/README.md, issue 23). Anything else is swept and listed by
:meth:`wisp.Answerer.listing`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pending import Kind, State, Via
from wisp._entry import EntryPoint

if TYPE_CHECKING:
    from datetime import datetime

    from pending import Problem, Status


class Waiting(NamedTuple):
    """A listing: the requests (oldest first), the entries that could not be read safely,
    and when it looked (None: the channel holds nothing at all and was not opened)."""

    statuses: tuple[Status, ...]
    problems: tuple[Problem, ...]
    now: datetime | None


def waiting(
    *,
    kinds: Collection[Kind] | None,
    states: Collection[State] | None,
    via: Via,
    entry_point: EntryPoint,
    on_problem: Callable[[str], None] | None = None,
    home: Path | None = None,
) -> Waiting:
    """The requests of *kinds* (None: all) in *states* (None: every state) in the person's
    channel (under *home*, default `$WISP_HOME`), after the sweep :meth:`Answerer.listing`
    does; *on_problem* hears what the sweep could not do. Raises :class:`pending.PendingError`
    when the channel cannot be used (opening it says why)."""
    from pending import channel_empty
    from wisp._home import open_channel, wisp_home

    if channel_empty(home if home is not None else wisp_home()):
        # Nothing filed, no temp file, no lock: the sweep has nothing to do, and no answered
        # fact waits to be applied (it would be a file here).
        return Waiting((), (), None)
    from wisp._answering import Answerer

    # One scan, each file read once, and the process is done with them: nothing is kept.
    with open_channel(home, keep_requests=False) as channel:
        listing = Answerer(channel, via=via, entry_point=entry_point, wait_s=0).listing(
            kinds=kinds, states=states, on_problem=on_problem
        )
        return Waiting(listing.statuses, listing.problems, channel.clock.now())
