"""The MCP face's resources, declared: what each one reads from the application, and the
handlers that let handshake-era clients follow them.

A static resource is read with no request context (the SDK gives it none), so each is a
:class:`SessionResource`: registered with the session it reads. The one template,
`wisp://facts/{fact_id}`, reaches the session through its `Context`, as the tools do.

No `from __future__ import annotations` here: the SDK reads the template's signature.
"""

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.resources import Resource
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    EmptyResult,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from pydantic import ConfigDict, Field

from pending import PendingError
from wisp import PERMANENT_PREFIX, AgentSession, NoteFact, StoreError, UnknownFact
from wisp.mcp._start import Startup
from wisp.mcp._updates import (
    FACT_ID_RE,
    FACT_URI,
    PENDING_URI,
    PERMANENT_URI,
    PROPOSED_URI,
    is_our_uri,
    served,
    started,
)
from wisp.mcp._views import (
    note_fact,
    pending_entry,
    permanent_fact,
    refusal_text,
    request_outcome,
)

JSON_MIME = "application/json"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _note_view(app: AgentSession, note: NoteFact) -> dict[str, Any]:
    """A fact as record_fact returns it, with any conflict read now (on a worker thread)."""
    return note_fact(note, app.conflicts(note.subject, note.name, note.value))


class SessionResource(Resource):
    """A static resource, read from the session it was registered with."""

    app: AgentSession = Field(exclude=True)
    reader: Callable[[AgentSession], Awaitable[str]] = Field(exclude=True)
    model_config = ConfigDict(arbitrary_types_allowed=True)

    async def read(self) -> str:
        return await self.reader(self.app)


async def proposed(app: AgentSession) -> str:
    def read() -> list[dict[str, Any]]:
        return [
            {
                **_note_view(app, fact),
                "request": request_outcome(status) if status else {"id": fact.request},
            }
            for fact, status in app.proposed()
        ]

    found = await anyio.to_thread.run_sync(read)
    return _json({"thread": app.thread, "proposed": found})


async def permanent(app: AgentSession) -> str:
    try:
        facts = await anyio.to_thread.run_sync(app.permanent)
    except StoreError as exc:
        raise ResourceError(str(exc)) from None
    return _json({"facts": [permanent_fact(f) for f in facts]})


async def pending(app: AgentSession) -> str:
    try:
        statuses = await anyio.to_thread.run_sync(app.waiting)
    except (OSError, PendingError) as exc:
        raise ResourceError(str(exc)) from None
    return _json({"server": app.server_id, "requests": [pending_entry(s) for s in statuses]})


# (uri, name, description, reader): the static resources, as the server registers them.
STATIC = (
    (
        PROPOSED_URI,
        "proposed facts",
        "This thread's and the session's facts waiting for the person to keep.",
        proposed,
    ),
    (PERMANENT_URI, "permanent facts", "The person's permanent facts (read-only here).", permanent),
    (PENDING_URI, "waiting requests", "This server's requests waiting for the person.", pending),
)


async def fact(fact_id: str, ctx: Context) -> str:
    """`wisp://facts/{fact_id}`: a thread's or the session's fact with its keep request, or
    one of the person's permanent facts."""
    app = served(ctx).app
    if not FACT_ID_RE.fullmatch(fact_id):
        raise ResourceNotFoundError(f"{fact_id!r} is not a fact id (c…, s… or p…)")
    try:
        if fact_id.startswith(PERMANENT_PREFIX):
            kept = await anyio.to_thread.run_sync(app.permanent_fact, fact_id)
            return _json(permanent_fact(kept))
        note = await anyio.to_thread.run_sync(app.fact, fact_id)
        view = await anyio.to_thread.run_sync(_note_view, app, note)
    except UnknownFact as exc:
        raise ResourceNotFoundError(refusal_text(exc)) from None
    except StoreError as exc:
        raise ResourceError(str(exc)) from None
    view["request"] = None
    if note.request is not None:
        try:
            status = await anyio.to_thread.run_sync(app.status, note.request)
            view["request"] = request_outcome(status)
        except PendingError as exc:
            view["request"] = {"id": note.request, "state": "failed", "reason": str(exc)}
    return _json(view)


# Handshake-era clients (most today) subscribe with `resources/subscribe`, which MCPServer does
# not serve itself; the server registers these handlers on its low-level server (before it
# answers `initialize`, whose answer declares them), and calls them once wisp has started
# (2026-era clients listen with `subscriptions/listen` instead, which MCPServer serves from the
# bus).


async def on_subscribe(
    ctx: ServerRequestContext[Startup[Any], Any], params: SubscribeRequestParams
) -> EmptyResult:
    if not is_our_uri(params.uri):
        raise MCPError(code=INVALID_PARAMS, message=f"no resource {params.uri!r} to follow")
    started(ctx.lifespan_context).updates.subscribe(ctx.session, params.uri)
    return EmptyResult()


async def on_unsubscribe(
    ctx: ServerRequestContext[Startup[Any], Any], params: UnsubscribeRequestParams
) -> EmptyResult:
    started(ctx.lifespan_context).updates.unsubscribe(ctx.session, params.uri)
    return EmptyResult()


def register(server: MCPServer[Any], app: AgentSession) -> None:
    """Declare the resources on *server*: the static ones read from *app*, the template
    from each request's context."""
    for uri, name, description, reader in STATIC:
        resource = SessionResource(
            uri=uri, name=name, description=description, mime_type=JSON_MIME, app=app, reader=reader
        )
        server.add_resource(resource)
    server.resource(
        FACT_URI,
        name="fact",
        description="One fact: this thread's (c…), the session's (s…), or the person's (p…).",
        mime_type=JSON_MIME,
    )(fact)
