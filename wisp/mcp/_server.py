"""The MCP face assembled: one `MCPServer` that answers `initialize` before wisp has started,
and serves the declared tools (:mod:`wisp.mcp._tools`) and resources
(:mod:`wisp.mcp._resources`) once it has (:mod:`wisp.mcp._start`). Its lifespan yields the
start, and follows the channel for resource updates once wisp has started.

A face only parses, calls the application and renders. It never files, answers, settles or
audits anything itself.

This module is imported before the answer to `initialize`: it loads the SDK and nothing of
wisp's application (:meth:`WispServer.declare`, on the start's worker thread, loads the rest).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import (
    CallToolResult,
    EmptyResult,
    InputRequiredResult,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from mcp_types import Resource as MCPResource
from mcp_types import ResourceTemplate as MCPResourceTemplate
from mcp_types import Tool as MCPTool
from pydantic import AnyUrl, ValidationError

from wisp import __version__
from wisp.mcp._args import refused_arguments
from wisp.mcp._results import refusal
from wisp.mcp._start import Startup

if TYPE_CHECKING:
    from wisp import AgentSession
    from wisp.mcp._updates import Served

INSTRUCTIONS = (
    "wisp reaches the person who runs you, wherever they are: approvals for commands "
    "(request_approval), questions (ask_person), facts to keep (set_fact_scope permanent), "
    "and notifications (notify). A request that is not answered within your call's "
    "wait_seconds comes back as state 'pending' with its id: call await_request(id) to wait "
    "again. No answer is never a yes."
)


@asynccontextmanager
async def _serving(server: MCPServer[Startup[Any]]) -> AsyncIterator[Startup[Served]]:
    """The lifespan: wisp's start, for every request (those that need the session wait for
    it), and the channel followed for resource updates once wisp has started, until the
    server stops."""
    assert isinstance(server, WispServer)
    startup = server.startup

    async def follow() -> None:
        await startup.ended()
        if startup.served is not None:
            await startup.served.updates.run()

    async with anyio.create_task_group() as group:
        group.start_soon(follow)
        yield startup
        group.cancel_scope.cancel()


class WispServer(MCPServer[Startup[Any]]):
    """`wisp mcp`'s server, for one session: it answers `initialize` at once; every request
    that needs the session (the tools, the resources, subscriptions) waits for wisp's start
    (:meth:`Startup.ready`), which :meth:`declare` completes."""

    def __init__(self, startup: Startup[Served]) -> None:
        self.startup = startup
        self.bus = InMemorySubscriptionBus()
        super().__init__(
            "wisp",
            version=__version__,
            instructions=INSTRUCTIONS,
            subscriptions=self.bus,
            log_level="WARNING",
            lifespan=_serving,
        )
        # Handshake-era clients (most today) subscribe with `resources/subscribe`, which
        # MCPServer does not serve itself; the low-level server takes these handlers, and
        # declares `subscribe` in the answer to `initialize` because they are registered.
        lowlevel = self._lowlevel_server
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        lowlevel.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe
        )

    def declare(self, app: AgentSession) -> Served:
        """The face for *app*, once wisp has started (on the start's worker thread, before
        any request that needs it is served): the declared tools and resources, the channel's
        watch begun, and the :class:`~wisp.mcp._updates.Updates` that will follow it."""
        from wisp.mcp import _resources as resources
        from wisp.mcp._tools import TOOLS
        from wisp.mcp._updates import Served, Updates

        for declared in TOOLS:
            self.add_tool(declared.fn, description=declared.description)
        resources.register(self, app)
        app.inbox.start()  # here, off the event loop: it scans the channel
        return Served(app=app, updates=Updates(app, self.bus))

    # --- what waits for wisp's start ----------------------------------------------------------

    async def list_tools(self) -> list[MCPTool]:
        await self.startup.ready()
        return await super().list_tools()

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Startup[Any], Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """A tool call; arguments that do not fit the tool's input schema are refused here,
        in wisp's words, as any other refusal (the SDK validates them before the tool runs,
        and its own text never reaches the caller)."""
        await self.startup.ready()
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            return refusal(refused_arguments(cause.errors()), [])

    async def list_resources(self) -> list[MCPResource]:
        await self.startup.ready()
        return await super().list_resources()

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        await self.startup.ready()
        return await super().list_resource_templates()

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Startup[Any], Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        await self.startup.ready()
        return await super().read_resource(uri, context)

    async def _subscribe(
        self, ctx: ServerRequestContext[Startup[Any], Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        await self.startup.ready()
        from wisp.mcp._resources import on_subscribe  # loaded by the start

        return await on_subscribe(ctx, params)

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Startup[Any], Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        await self.startup.ready()
        from wisp.mcp._resources import on_unsubscribe  # loaded by the start

        return await on_unsubscribe(ctx, params)
