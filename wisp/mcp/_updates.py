"""What the MCP face holds while it serves, and the resource updates it tells clients of.

:class:`Served` is the face's state once wisp has started: the application's
:class:`~wisp.AgentSession` and the :class:`Updates` that follows the channel for it. The
server's lifespan yields the start (:class:`~wisp.mcp._start.Startup`), which holds it; tools
and resource templates reach it through their `Context` (:func:`served`), the subscription
handlers through their request context (:func:`started`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, cast

import anyio
import attrs
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from pending import Event, Kind, Missed, State, Transition
from wisp import PERMANENT_PREFIX, SESSION_PREFIX, THREAD_PREFIX, AgentSession
from wisp.mcp._start import Startup

PENDING_URI = "wisp://pending"
PROPOSED_URI = "wisp://facts/proposed"
PERMANENT_URI = "wisp://facts/permanent"
FACTS_URI_HEAD = "wisp://facts/"
FACT_URI = FACTS_URI_HEAD + "{fact_id}"
FACT_ID_RE = re.compile(f"[{THREAD_PREFIX}{SESSION_PREFIX}{PERMANENT_PREFIX}][0-9a-z]{{1,32}}")
UPDATES_BACKLOG = 1024  # channel transitions held for the follower before it hears "missed"


def fact_uri(fact_id: str) -> str:
    return FACTS_URI_HEAD + fact_id


def is_our_uri(uri: str) -> bool:
    """A resource this server serves (and so one a client may follow)."""
    if uri in (PENDING_URI, PROPOSED_URI, PERMANENT_URI):
        return True
    return uri.startswith(FACTS_URI_HEAD) and bool(FACT_ID_RE.fullmatch(uri[len(FACTS_URI_HEAD) :]))


def _connection(session: ServerSession) -> object:
    """What a subscriber is known by: its connection. The SDK makes a new session object for
    every request, so a `resources/unsubscribe` never carries the object that subscribed; all
    of a client's requests share its connection."""
    return cast(object, session._connection)  # the SDK offers no public name for it


class Updates:
    """Tells subscribed clients when a resource changes: handshake-era clients subscribed
    with `resources/subscribe` get `notifications/resources/updated`, once per change however
    often they subscribed; 2026-era clients listen with `subscriptions/listen` (the SDK's bus
    filters by URI).

    Each change is said once, by whoever sees it happen: a tool says what it changed in this
    process (a fact recorded, moved or asked about); the channel's transitions, heard through
    the session's inbox, say the rest (every change to this server's requests, so
    `wisp://pending`, and what the person does to a keep request)."""

    def __init__(self, app: AgentSession, bus: InMemorySubscriptionBus) -> None:
        self.app = app
        self.bus = bus
        # uri -> {a subscriber's connection: the latest of its session objects, to send with}
        self._subscribers: dict[str, dict[object, ServerSession]] = {}
        self._send, self._receive = anyio.create_memory_object_stream[str](math.inf)

    def subscribe(self, session: ServerSession, uri: str) -> None:
        self._subscribers.setdefault(uri, {})[_connection(session)] = session

    def unsubscribe(self, session: ServerSession, uri: str) -> None:
        self._subscribers.get(uri, {}).pop(_connection(session), None)

    def changed(self, uris: Iterable[str]) -> None:
        """These resources changed (said on the event loop; delivered in order)."""
        for uri in uris:
            self._send.send_nowait(uri)

    async def run(self) -> None:
        """Deliver updates, and follow the channel, until cancelled."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._deliver)
            await self._follow()

    async def _deliver(self) -> None:
        async for uri in self._receive:
            for session in list(self._subscribers.get(uri, {}).values()):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a client gone away is told nothing more
                    self.unsubscribe(session, uri)
            # The SDK's subscription bus (for `subscriptions/listen` clients), not the channel:
            # nothing here writes a request, an answer or an outcome.
            await self.bus.publish(ResourceUpdated(uri=uri))

    async def _follow(self) -> None:
        """Channel transitions, as the resources they change."""
        subscription, _ = self.app.inbox.subscribe(backlog=UPDATES_BACKLOG)
        try:
            async for item in subscription:
                if isinstance(item, Missed):
                    self.changed(self._everything())
                elif isinstance(item, Transition):
                    self.changed(self._touched(item))
        finally:
            self.app.inbox.unsubscribe(subscription)

    def _everything(self) -> list[str]:
        facts = [fact_uri(f.id) for f in self.app.facts_seen()]
        return [PENDING_URI, PROPOSED_URI, PERMANENT_URI, *facts]

    def _touched(self, item: Transition) -> list[str]:
        status = item.status
        uris = []
        if status is not None and status.request.server.id == self.app.server_id:
            uris.append(PENDING_URI)
        # A keep request's filing is said by set_fact_scope, which filed it.
        if item.kind is Kind.FACT and item.event is not Event.FILED:
            asking = self.app.asking(item.id)
            uris.extend(fact_uri(f.id) for f in asking)
            if asking:
                uris.append(PROPOSED_URI)
            if status is not None and status.state is State.SETTLED:
                uris.append(PERMANENT_URI)
                settled = status.settled
                if settled is not None and settled.result:
                    uris.append(fact_uri(settled.result))
        return uris


@attrs.frozen(kw_only=True)
class Served:
    """What the server's lifespan yields, for every request it serves."""

    app: AgentSession
    updates: Updates


def started(startup: Startup[Served]) -> Served:
    """The face's state, from the server's lifespan state: every request that reaches a tool,
    a resource or a subscription has waited for wisp's start (:meth:`Startup.ready`)."""
    assert startup.served is not None, "served before wisp started"
    return startup.served


def served(ctx: Context[Any, Any]) -> Served:
    """The face's state, from a tool's or a resource template's context."""
    return started(cast(Startup[Served], ctx.request_context.lifespan_context))
