"""A throwaway route, `toy`, added as docs/architecture.md says a route is added: one module
(this one: its name, why it cannot post here, and posting) and one line in the table
wisp.routes.ROUTES. The notifier, the doctor and `wisp notify --route` know nothing else of it.

It posts by appending the notice, as a JSON line, to the file $TOY_ROUTE_TO names; without
that variable it cannot post here, and says so.

`python tests/toyroute.py ARGS` is `wisp ARGS` in a process whose table has the toy route
(tried after the host route), so a test can drive the real CLI on a route no face was
written for.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import wisp.routes
from wisp.routes.route import Here, Notice, Posted

NAME = "toy"
TO = "TOY_ROUTE_TO"  # the variable naming the file the toy route posts to


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    if not here.environ.get(TO):
        return f"{TO} is unset (the file the toy route posts to)"
    return None


def post(here: Here, notice: Notice) -> Posted:
    line = {"title": notice.title, "subtitle": notice.subtitle, "body": notice.body}
    with Path(here.environ[TO]).open("a") as out:
        out.write(json.dumps(line) + "\n")
    return Posted(detail=f"written to {here.environ[TO]}")


def table_with_toy() -> tuple[str, ...]:
    """The table with the toy route after the host route: its one line."""
    host, *rest = wisp.routes.ROUTES
    return (host, __name__, *rest)  # run as a program: `__main__`, this very module


@contextmanager
def toy_route() -> Iterator[str]:
    """The toy route in the table, for the length of the block; its name."""
    before = wisp.routes.ROUTES
    wisp.routes.ROUTES = table_with_toy()
    try:
        yield NAME
    finally:
        wisp.routes.ROUTES = before


if __name__ == "__main__":
    wisp.routes.ROUTES = table_with_toy()
    from wisp.cli import app

    sys.argv[0] = "wisp"
    app(prog_name="wisp")
