"""What every route is: a module that says why it cannot post here, and posts.

A route is one module of this package (or, at test time, anywhere) named in the table
:data:`wisp.routes.ROUTES`; it holds the three names of :class:`RouteModule`. The notifier
(`notify.py`) keeps what no route decides: the limits, the order, the push policy, the audit.
Here too what a route is given: :class:`Here`, the posting process as routes see it, and
:class:`Notice`, the text already cleaned and cut.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, Protocol

import attrs

from wisp.routes.subproc import run_bounded

ROUTE_TIMEOUT_S = 5.0  # a route's helper program that hangs is given up on, never waited on


class Face(StrEnum):
    """What the posting process is to the person: which routes it may use."""

    TERMINAL = "terminal"  # a command in the person's terminal
    JSON = "json"  # a JSON-lines front end owns stdout (the relay): the host route
    MCP = "mcp"  # an MCP server: stdout is the protocol, the client owns the terminal


@attrs.frozen(kw_only=True)
class Notice:
    """A notification's text, cleaned and cut by the notifier; *about* is the request it
    announces (its fields), if any."""

    title: str
    subtitle: str
    body: str
    sound: bool = False
    about: Mapping[str, Any] | None = None


@attrs.frozen(kw_only=True)
class Posted:
    """What became of a route's post: *failed* says why it did not take it (None: it did);
    *detail* how it posted ("shown on 2 tmux clients"); *deliveries* each push target's."""

    failed: str | None = None
    detail: str | None = None
    deliveries: tuple[Any, ...] = ()


class Here(Protocol):
    """The posting process as a route sees it (the notifier is one)."""

    face: Face
    host: Callable[[dict[str, Any]], None] | None  # a front end that declared `notify`
    environ: dict[str, str]
    platform: str
    settings: dict[str, Any]
    tty_path: str
    osascript: str
    push_timeout_s: float  # how long a push waited for is given

    def push_message(self, notice: Notice, about: Mapping[str, Any] | None) -> tuple[str, str]:
        """The push's title and text."""
        ...

    def push_extras(self, about: Mapping[str, Any] | None) -> Any:
        """What the push carries besides its text (a `push.Extras`)."""
        ...


class RouteModule(Protocol):
    """A route: its name (in config, JSON, the audit and `wisp notify --route NAME`), why it
    cannot post here (None: it can be tried; *forced*: named alone by `--route`; *deep*: also
    check what posting would find, without posting — the doctor's truth), and posting.

    A module may also hold ``goes_before(here) -> str | None``: the route it is tried ahead
    of, here (the app route, in iTerm2)."""

    NAME: str

    def why_not(self, here: Here, *, forced: bool, deep: bool) -> str | None: ...

    def post(self, here: Here, notice: Notice) -> Posted: ...


def run(here: Here, argv: list[str]) -> Posted:
    """Run a route's helper program with the argv given (never a shell), bounded."""
    return Posted(failed=run_bounded(argv, timeout_s=ROUTE_TIMEOUT_S, env=here.environ)[1])
