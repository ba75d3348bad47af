"""The routes wing: how the person is told that something waits.

One module per route, each a :class:`wisp.routes.route.RouteModule` (its name, why it cannot
post here, posting), named in :data:`ROUTES` in the order they are tried: the routes on this
machine, then push, for the person who is not at it. `notify.py` is the notifier (the limits,
the order, the push policy, the audit); `tmux.py` also holds the tmux server and its clients,
`push.py` sending through Apprise (imported only to send); `subproc.py` the bounded child
processes the routes run. It reads the kinds' views (a request's notice) and the settings, and
is read by the asking core above it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from wisp.routes.route import RouteModule

# Every route, by its module, in the order they are tried; push, the route away from this
# machine, last. A new route is one module and one line here (docs/architecture.md).
ROUTES: tuple[str, ...] = (
    "wisp.routes.host",
    "wisp.routes.terminal",
    "wisp.routes.tmux",
    "wisp.routes.app",
    "wisp.routes.osascript",
    "wisp.routes.desktop",
    "wisp.routes.push",
)


def routes() -> tuple[RouteModule, ...]:
    """The routes :data:`ROUTES` names, in its order (read when called: a route added to the
    table is tried from then on)."""
    return tuple(cast("RouteModule", import_module(name)) for name in ROUTES)


def route_names() -> tuple[str, ...]:
    """The routes' names, in order (what config, JSON, the audit and `--route` say)."""
    return tuple(route.NAME for route in routes())
