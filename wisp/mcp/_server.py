"""The MCP face assembled: the declared tools (:mod:`wisp.mcp._tools`) and resources
(:mod:`wisp.mcp._resources`) on one `MCPServer`, whose lifespan holds the application's
:class:`~wisp.AgentSession` and follows the channel for resource updates while it serves.

A face only parses, calls the application and renders. It never files, answers, settles or
audits anything itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import (
    CallToolResult,
    InputRequiredResult,
)
from pydantic import ValidationError

from wisp import __version__
from wisp.agents.session import AgentSession
from wisp.mcp import _resources as resources
from wisp.mcp._args import refused_arguments
from wisp.mcp._results import refusal
from wisp.mcp._tools import TOOLS
from wisp.mcp._updates import Served, Updates

INSTRUCTIONS = (
    "wisp reaches the person who runs you, wherever they are: approvals for commands "
    "(request_approval), questions (ask_person), facts to keep (set_fact_scope permanent), "
    "and notifications (notify). A request that is not answered within your call's "
    "wait_seconds comes back as state 'pending' with its id: call await_request(id) to wait "
    "again. No answer is never a yes."
)


@asynccontextmanager
async def _serving(server: MCPServer[Served]) -> AsyncIterator[Served]:
    """The lifespan: the face's state for every request, and the channel followed for
    resource updates until the server stops."""
    assert isinstance(server, WispServer)
    updates = Updates(server.app, server.bus)
    async with anyio.create_task_group() as group:
        group.start_soon(updates.run)
        yield Served(app=server.app, updates=updates)
        group.cancel_scope.cancel()


class WispServer(MCPServer[Served]):
    """`wisp mcp`'s server: the declared tools and resources, for one session."""

    def __init__(self, app: AgentSession) -> None:
        self.app = app
        self.bus = InMemorySubscriptionBus()
        super().__init__(
            "wisp",
            version=__version__,
            instructions=INSTRUCTIONS,
            subscriptions=self.bus,
            log_level="WARNING",
            lifespan=_serving,
        )
        for declared in TOOLS:
            self.add_tool(declared.fn, description=declared.description)
        resources.register(self, app)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Served, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """A tool call; arguments that do not fit the tool's input schema are refused here,
        in wisp's words, as any other refusal (the SDK validates them before the tool runs,
        and its own text never reaches the caller)."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            return refusal(refused_arguments(cause.errors()), [])


def build(app: AgentSession) -> WispServer:
    """The MCP server for *app*; its lifespan runs while it serves a connection."""
    return WispServer(app)
