"""The MCP face: tools and resources over the official MCP SDK (`MCPServer`).

A face only parses, calls the application (:class:`wisp.mcp._app.App`, on a worker thread:
the application reads and writes files) and renders. It never files, answers, settles or
audits anything itself.

No `from __future__ import annotations` here: the SDK reads the tools' signatures (argument
types, the `Context` parameter) at registration.
"""

import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
import attrs
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ElicitResult,
    EmptyResult,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from pydantic import Field

from pending import (
    CommandBinding,
    Decision,
    Kind,
    Missed,
    PendingError,
    QuestionBinding,
    Request,
    State,
    Transition,
    is_valid_id,
)
from wisp import __version__
from wisp._asking import Cancel, Ending
from wisp._text import visible
from wisp.mcp import _views as views
from wisp.mcp._app import App, FactRefused, NotOurs, StoreError, UnknownFact, collecting
from wisp.mcp._threads import FactScope
from wisp.mcp._views import fact_said, pending_entry, permanent_fact, request_outcome

# --- bounds: what the tools take ------------------------------------------------------------

# A request is at most MAX_RECORD_BYTES (64 KiB) on disk, text shown twice (binding and body),
# JSON-escaped at up to 6 bytes a character: these keep every request well inside it.
COMMAND_MAX_CHARS = 4096
CWD_MAX_CHARS = 1024
REASON_MAX_CHARS = 1024
QUESTION_MAX_CHARS = 2048
OPTION_MAX_CHARS = 200
OPTIONS_MAX = 20
FACT_WORD_MAX_CHARS = 200  # a fact's subject and name
FACT_VALUE_MAX_CHARS = 2000
NOTIFY_INPUT_MAX_CHARS = 4096  # notify cuts to 64/256 itself; beyond this it is not a message

WAIT_DEFAULT_S = 45.0  # under common clients' tool-call timeouts (60 s is usual)
WAIT_MAX_S = 3600.0  # one call's wait; the request keeps its own bound (approval.timeoutSeconds)
PROGRESS_EVERY_S = 5.0  # while a tool waits: clients that reset their timeout on progress

PENDING_URI = "wisp://pending"
PROPOSED_URI = "wisp://facts/proposed"
PERMANENT_URI = "wisp://facts/permanent"
FACT_URI = "wisp://facts/{fact_id}"
_FACT_ID_RE = re.compile(r"[csp][0-9a-z]{1,32}")

JSON_MIME = "application/json"

T = TypeVar("T")


class BadArgument(ValueError):
    """An argument the tool cannot take; the message says which and what would do."""


def fact_uri(fact_id: str) -> str:
    return f"wisp://facts/{fact_id}"


def _text(name: str, value: str, limit: int, *, required: bool = True) -> str:
    if required and not value.strip():
        raise BadArgument(f"{name} is empty: it needs some text.")
    if len(value) > limit:
        raise BadArgument(
            f"{name} is {len(value)} characters long; at most {limit} are taken. Shorten it."
        )
    return value


def _wait(value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise BadArgument(
            f"wait_seconds must be a finite number of seconds, 0 or more (got {value!r})."
        )
    if value > WAIT_MAX_S:
        raise BadArgument(
            f"wait_seconds is {value:g}; one call waits at most {WAIT_MAX_S:g} s. Wait less, "
            "and call await_request again if you need to."
        )
    return value


def _result(
    text: str, data: dict[str, Any], posted: list[dict[str, Any]], *, error: bool = False
) -> CallToolResult:
    """Every tool result: the words, the structured content, and the notifications posted."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={**data, "notifications": posted},
        is_error=error,
    )


def _refusal(message: str, posted: list[dict[str, Any]]) -> CallToolResult:
    return _result(f"error: {message}", {"error": message}, posted, error=True)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


async def _off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run an application call on a worker thread (it reads and writes files, and a
    notification route may run a helper program): the protocol keeps flowing meanwhile."""
    return await anyio.to_thread.run_sync(fn, *args)


# --- resource updates -----------------------------------------------------------------------


class Updates:
    """Tells subscribed clients when a resource changes: handshake-era clients subscribed
    with `resources/subscribe` get `notifications/resources/updated`; 2026-era clients listen
    with `subscriptions/listen` (the SDK's bus filters by URI). Changes made elsewhere (an
    answer from a terminal) are heard from the channel, through the application's inbox."""

    def __init__(self, app: App, bus: InMemorySubscriptionBus) -> None:
        self.app = app
        self.bus = bus
        self._sessions: dict[str, list[ServerSession]] = {}
        self._send, self._receive = anyio.create_memory_object_stream[str](math.inf)

    def subscribe(self, session: ServerSession, uri: str) -> None:
        sessions = self._sessions.setdefault(uri, [])
        if session not in sessions:
            sessions.append(session)

    def unsubscribe(self, session: ServerSession, uri: str) -> None:
        sessions = self._sessions.get(uri, [])
        if session in sessions:
            sessions.remove(session)

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
            for session in list(self._sessions.get(uri, ())):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a client gone away is told nothing more
                    self.unsubscribe(session, uri)
            # The SDK's subscription bus (for `subscriptions/listen` clients), not the channel:
            # nothing here writes a request, an answer or an outcome.
            await self.bus.publish(ResourceUpdated(uri=uri))

    async def _follow(self) -> None:
        """Channel transitions, as the resources they change."""
        subscription, _ = self.app.inbox.subscribe(backlog=1024)
        try:
            async for item in subscription:
                if isinstance(item, Missed):
                    self.changed(self._everything())
                elif isinstance(item, Transition):
                    self.changed(self._touched(item))
        finally:
            self.app.inbox.unsubscribe(subscription)

    def _everything(self) -> list[str]:
        facts = [fact_uri(f.id) for f in self.app.book.seen_by(self.app.thread)]
        return [PENDING_URI, PROPOSED_URI, PERMANENT_URI, *facts]

    def _touched(self, item: Transition) -> list[str]:
        status = item.status
        uris = []
        if status is not None and status.request.server.id == self.app.server_id:
            uris.append(PENDING_URI)
        if item.kind is Kind.FACT:
            asking = self.app.book.asking(item.id)
            uris.extend(fact_uri(f.id) for f in asking)
            if asking:
                uris.append(PROPOSED_URI)
            if status is not None and status.state is State.SETTLED:
                uris.append(PERMANENT_URI)
                settled = status.settled
                if settled is not None and settled.result:
                    uris.append(fact_uri(settled.result))
        return uris


# --- waiting for the person ---------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Dialog:
    """The client's own dialog for a request (elicitation): what it shows, the form it asks
    for, and the answer a reply gives (None: no answer, as for a dismissed dialog)."""

    message: str
    schema: dict[str, Any]
    answer: Callable[[ElicitResult], tuple[Decision, str | None] | None]


def command_dialog(request: Request) -> Dialog:
    """A fieldless accept/decline: accept approves once, decline denies."""
    binding = request.binding
    assert isinstance(binding, CommandBinding)
    why = f"\nwhy: {visible(binding.reason)}" if binding.reason else ""
    message = (
        f"Run this command?\n\n{visible(binding.command)}\n\nin {visible(binding.cwd)}{why}\n\n"
        f"Accept approves it once; decline denies it. (Or from a terminal: "
        f"wisp approvals approve {request.id})"
    )

    def answer(reply: ElicitResult) -> tuple[Decision, str | None] | None:
        if reply.action == "accept":
            return Decision.ONCE, None
        if reply.action == "decline":
            return Decision.NO, None
        return None

    return Dialog(message=message, schema={"type": "object", "properties": {}}, answer=answer)


def question_dialog(request: Request) -> Dialog:
    """The question's options (or a text field); decline declines to answer."""
    binding = request.binding
    assert isinstance(binding, QuestionBinding)
    options = list(binding.options or ())
    field: dict[str, Any] = {"type": "string", "title": "Answer"}
    if options and not binding.free_text:
        field["enum"] = options
    elif options:
        field["description"] = "For example: " + ", ".join(options)
    message = (
        f"{visible(binding.question)}\n\n(Or from a terminal: wisp questions answer "
        f"{request.id} TEXT)"
    )

    def answer(reply: ElicitResult) -> tuple[Decision, str | None] | None:
        if reply.action == "decline":
            return Decision.DECLINE, None
        text = (reply.content or {}).get("answer") if reply.action == "accept" else None
        if isinstance(text, str) and text.strip():
            return Decision.ANSWER, text
        return None

    schema = {"type": "object", "properties": {"answer": field}, "required": ["answer"]}
    return Dialog(message=message, schema=schema, answer=answer)


def _dialog_for(request: Request, ctx: Context) -> Dialog | None:
    """The client's dialog, where it has one: it declared elicitation, and this connection
    lets the server ask mid-call (the handshake era's; a 2026-era call cannot)."""
    session: ServerSession = ctx.session
    if not session.can_send_request:
        return None
    declared = session.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    if elicitation is None:
        return None
    if elicitation.form is None and elicitation.url is not None:
        return None  # URL mode only: it cannot show a form (an empty declaration means form)
    return command_dialog(request) if request.kind is Kind.COMMAND else question_dialog(request)


async def wait_for_person(
    app: App, request: Request, wait_s: float, ctx: Context, dialog: Dialog | None
) -> Ending | None:
    """Wait at most *wait_s* for the request to end: its answer from any terminal, from the
    client's dialog if there is one (first answer wins; the loser's dialog is cancelled), or
    its own deadline. None if it still waits. Progress is reported meanwhile; a call the
    client cancels stops waiting at once, and the request waits on."""
    cancel = Cancel()
    ended: list[Ending | None] = []
    hint = views.answer_hint(request.kind, request.id)
    try:
        async with anyio.create_task_group() as group:

            async def waiter() -> None:
                ended.append(
                    await anyio.to_thread.run_sync(
                        app.wait, request.id, wait_s, cancel, abandon_on_cancel=True
                    )
                )
                group.cancel_scope.cancel()  # the dialog and the progress go with it

            async def progress() -> None:
                # A heartbeat, not a poll: clients that reset their tool timeout on progress
                # keep the call open while the person is away. No token: nothing is sent.
                beat = 0
                while True:
                    await ctx.report_progress(beat, None, f"waiting for the person: {hint}")
                    beat += 1
                    await anyio.sleep(PROGRESS_EVERY_S)

            async def ask_in_dialog(dialog: Dialog) -> None:
                session: ServerSession = ctx.session
                try:
                    reply = await session.elicit_form(
                        dialog.message, dialog.schema, related_request_id=ctx.request_id
                    )
                except Exception as exc:  # the peer's failure: the terminal can still answer
                    _say(f"the client's dialog failed: {exc}")
                    return
                given = dialog.answer(reply)
                if given is None:
                    return  # dismissed: the request waits on for an answer elsewhere
                decision, text = given
                with anyio.CancelScope(shield=True):  # an answer given is published whole
                    try:
                        await _off_loop(lambda: app.answer_in_dialog(request, decision, text=text))
                    except (PendingError, StoreError) as exc:
                        # Refused (already ended, or the answer does not fit): the waiter
                        # reports what the request says.
                        _say(f"the dialog's answer was not taken: {exc}")

            group.start_soon(waiter)
            group.start_soon(progress)
            if dialog is not None:
                group.start_soon(ask_in_dialog, dialog)
    finally:
        cancel.cancel()  # the worker thread returns at once if the call was cancelled
    return ended[0] if ended else None


def _say(message: str) -> None:
    """A message for people (the client's log of our stderr), never for stdout."""
    sys.stderr.write(f"wisp mcp: {visible(message)}\n")


def _ended(app: App, ending: Ending) -> tuple[str, dict[str, Any]]:
    if ending.request.kind is Kind.COMMAND:
        return views.approval(ending, app.verdict(ending))
    return views.reply(ending, app.reply(ending))


# --- the server ------------------------------------------------------------------------------


def _client_name(ctx: Context) -> str | None:
    """The client's name: from its handshake, or (2026-era) from the request's envelope."""
    session: ServerSession = ctx.session
    params = session.client_params
    if params is not None and params.client_info is not None:
        return params.client_info.name
    meta = ctx.request_context.meta or {}
    info = meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


INSTRUCTIONS = (
    "wisp reaches the person who runs you, wherever they are: approvals for commands "
    "(request_approval), questions (ask_person), facts to keep (set_fact_scope permanent), "
    "and notifications (notify). A request that is not answered within your call's "
    "wait_seconds comes back as state 'pending' with its id: call await_request(id) to wait "
    "again. No answer is never a yes."
)


def build(app: App) -> tuple[MCPServer, Updates]:
    """The MCP server for *app*, and the updater its runner must run alongside it."""
    bus = InMemorySubscriptionBus()
    server: MCPServer = MCPServer(
        "wisp",
        version=__version__,
        instructions=INSTRUCTIONS,
        subscriptions=bus,
        log_level="WARNING",
    )
    updates = Updates(app, bus)

    def seen(ctx: Context) -> None:
        app.name_client(_client_name(ctx))

    # --- facts ---------------------------------------------------------------------------

    @server.tool(
        description=(
            "Record a fact in this thread (an id c…). It lives as long as the thread; move it "
            "with set_fact_scope."
        )
    )
    async def record_fact(
        subject: Annotated[str, Field(description="What the fact is about, e.g. 'release'.")],
        name: Annotated[str, Field(description="Which property, e.g. 'codename'.")],
        value: Annotated[str, Field(description="Its value, e.g. 'BLUE HERON'.")],
        ctx: Context,
    ) -> CallToolResult:
        seen(ctx)
        with collecting() as posted:
            try:
                _text("subject", subject, FACT_WORD_MAX_CHARS)
                _text("name", name, FACT_WORD_MAX_CHARS)
                _text("value", value, FACT_VALUE_MAX_CHARS)
            except BadArgument as exc:
                return _refusal(str(exc), posted)
            fact = await _off_loop(app.record_fact, subject, name, value)
            held = await _off_loop(_holding, app, subject, name, value)
            data: dict[str, Any] = {**fact.to_json(), "uri": fact_uri(fact.id)}
            text = f"recorded {fact_said(fact)} as {fact.id} in this thread ({fact_uri(fact.id)})"
            if held:
                data["conflict"] = [permanent_fact(p) for p in held]
                text += (
                    "; the person's permanent facts say otherwise: "
                    + "; ".join(f"{p.id}: {fact_said(p)}" for p in held)
                    + ". They settle that; yours stays in this thread."
                )
            updates.changed([fact_uri(fact.id)])
            return _result(text, data, posted)

    @server.tool(
        description=(
            "Move a fact: to 'thread' (this thread, c…) or 'session' (this server's session, "
            "s…), or ask the person to keep it 'permanent'. Permanent returns at once with "
            "state 'pending' and the request id; the person keeps or drops it from a "
            "terminal (no time limit), and the outcome shows at the fact's URI as 'request'. "
            "Permanent facts (p…) are the person's and cannot be moved."
        )
    )
    async def set_fact_scope(
        fact: Annotated[str, Field(description="The fact's id: c…, s… (or p…, refused).")],
        scope: Annotated[
            Literal["thread", "session", "permanent"], Field(description="Where it goes.")
        ],
        ctx: Context,
    ) -> CallToolResult:
        seen(ctx)
        with collecting() as posted:
            try:
                _text("fact", fact, 64)
                change = await _off_loop(app.set_scope, fact, FactScope(scope))
            except BadArgument as exc:
                return _refusal(str(exc), posted)
            except (FactRefused, UnknownFact, StoreError) as exc:
                return _refusal(str(exc), posted)
            except (OSError, PendingError) as exc:
                return _refusal(_unfiled(exc), posted)
            moved = change.fact
            assert moved is not None
            uri = fact_uri(moved.id)
            if change.keep is None:
                updates.changed([uri, PROPOSED_URI] + ([fact_uri(moved.was)] if moved.was else []))
                data = {**moved.to_json(), "uri": uri, "state": moved.scope.value}
                if not change.changed:
                    return _result(f"{moved.id} is already a {scope} fact ({uri})", data, posted)
                return _result(
                    f"moved {moved.was} to the {scope}: it is now {moved.id} ({uri})", data, posted
                )
            keep = change.keep
            if keep.state == "kept" and keep.fact is not None:
                data = {
                    "state": "kept",
                    "fact": moved.id,
                    "permanent": keep.fact.id,
                    "uri": uri,
                    "request": None,
                }
                return _result(
                    f"{fact_said(moved)} is already the person's permanent fact {keep.fact.id}; "
                    "nothing to ask.",
                    data,
                    posted,
                )
            updates.changed([uri, PROPOSED_URI, PENDING_URI])
            data = {
                "state": "pending",
                "id": keep.request_id,
                "request": keep.request_id,
                "fact": moved.id,
                "uri": uri,
                "new": keep.new,
            }
            again = "" if keep.new else " (already asked: the same request, no new notification)"
            return _result(
                f"asked the person to keep {fact_said(moved)} as a permanent fact{again}. "
                f"Request {keep.request_id} waits with no time limit; they answer with "
                f"`wisp facts keep {keep.request_id}` or `wisp facts drop {keep.request_id}` "
                f"from a terminal, or in wisp-tui. The outcome shows at {uri} (request).",
                data,
                posted,
            )

    # --- commands and questions -----------------------------------------------------------

    async def settle(request: Request, wait_s: float, ctx: Context) -> tuple[str, dict[str, Any]]:
        # A request that has already ended is reported as it ended: no dialog is opened on
        # it (await_request after the person answered elsewhere).
        ended = await _off_loop(app.wait, request.id, 0, Cancel())
        if ended is not None:
            return await _off_loop(_ended, app, ended)
        # No dialog for a call that will not wait: it would be cancelled as it opened.
        dialog = _dialog_for(request, ctx) if wait_s > 0 else None
        ending = await wait_for_person(app, request, wait_s, ctx, dialog)
        if ending is None:
            return views.still_waiting(request)
        updates.changed([PENDING_URI])
        return await _off_loop(_ended, app, ending)

    @server.tool(
        description=(
            "Ask the person to approve a shell command before you run it. Waits at most "
            "wait_seconds (default 45) for the answer, from any terminal (`wisp approvals "
            "approve ID`) or this client's dialog; if none by then, returns state 'pending' "
            "with the id: call await_request to wait again. A standing grant approves at once. "
            "Run the command only if 'approved' is true; no answer is never a yes."
        )
    )
    async def request_approval(
        command: Annotated[str, Field(description="The command, exactly as it will run.")],
        ctx: Context,
        cwd: Annotated[
            str | None, Field(description="Absolute directory it runs in (default: the server's).")
        ] = None,
        reason: Annotated[str | None, Field(description="Why it should run.")] = None,
        wait_seconds: Annotated[
            float, Field(description="How long this call waits for the answer, in seconds.")
        ] = WAIT_DEFAULT_S,
    ) -> CallToolResult:
        seen(ctx)
        with collecting() as posted:
            try:
                _text("command", command, COMMAND_MAX_CHARS)
                where = _text("cwd", cwd, CWD_MAX_CHARS) if cwd is not None else str(Path.cwd())
                for name, value in (("command", command), ("cwd", where)):
                    if "\x00" in value:
                        raise BadArgument(
                            f"{name} holds a NUL character, which no command line or path "
                            "can: send it as it will really run."
                        )
                if not Path(where).is_absolute():
                    raise BadArgument(f"cwd must be an absolute directory, not {where!r}.")
                if reason is not None:
                    _text("reason", reason, REASON_MAX_CHARS, required=False)
                wait_s = _wait(wait_seconds)
            except BadArgument as exc:
                return _refusal(str(exc), posted)
            granted = await _off_loop(app.granted, command, where)
            if granted is not None:
                text, data = views.granted(granted, command)
                return _result(text, data, posted)
            try:
                request = await _off_loop(app.file_command, command, where, reason or None)
            except (OSError, PendingError) as exc:
                return _refusal(_unfiled(exc), posted)
            updates.changed([PENDING_URI])
            text, data = await settle(request, wait_s, ctx)
            return _result(text, data, posted)

    @server.tool(
        description=(
            "Ask the person a question. With options, the answer is one of them (unless "
            "free_text); without, free text. Waits at most wait_seconds (default 45); if no "
            "answer by then, returns state 'pending' with the id: call await_request to wait "
            "again."
        )
    )
    async def ask_person(
        question: Annotated[str, Field(description="The question, for a person to read.")],
        ctx: Context,
        options: Annotated[
            list[str] | None, Field(description="The answers to choose from.")
        ] = None,
        free_text: Annotated[
            bool | None,
            Field(description="Whether any text is an answer (default: only without options)."),
        ] = None,
        wait_seconds: Annotated[
            float, Field(description="How long this call waits for the answer, in seconds.")
        ] = WAIT_DEFAULT_S,
    ) -> CallToolResult:
        seen(ctx)
        with collecting() as posted:
            try:
                _text("question", question, QUESTION_MAX_CHARS)
                choices = tuple(options or ())
                if len(choices) > OPTIONS_MAX:
                    raise BadArgument(f"{len(choices)} options; at most {OPTIONS_MAX} are taken.")
                for choice in choices:
                    _text("an option", choice, OPTION_MAX_CHARS)
                if len(set(choices)) != len(choices):
                    raise BadArgument("options repeat one another: give each once.")
                if free_text is False and not choices:
                    raise BadArgument("free_text is false but there are no options to choose.")
                wait_s = _wait(wait_seconds)
            except BadArgument as exc:
                return _refusal(str(exc), posted)
            try:
                request = await _off_loop(app.file_question, question, choices or None, free_text)
            except (OSError, PendingError) as exc:
                return _refusal(_unfiled(exc), posted)
            updates.changed([PENDING_URI])
            text, data = await settle(request, wait_s, ctx)
            return _result(text, data, posted)

    @server.tool(
        description=(
            "Wait again for a request this server filed (request_approval, ask_person), at "
            "most wait_seconds (default 45): its answer, or state 'pending' still. For a fact "
            "request (set_fact_scope permanent) it returns where it stands at once."
        )
    )
    async def await_request(
        id: Annotated[str, Field(description="The request's id, as a result gave it.")],
        ctx: Context,
        wait_seconds: Annotated[
            float, Field(description="How long this call waits for the answer, in seconds.")
        ] = WAIT_DEFAULT_S,
    ) -> CallToolResult:
        seen(ctx)
        with collecting() as posted:
            try:
                if not is_valid_id(id):
                    raise BadArgument(
                        f"{id[:40]!r} is not a request id (8 to 32 lowercase hex characters)."
                    )
                wait_s = _wait(wait_seconds)
            except BadArgument as exc:
                return _refusal(str(exc), posted)
            try:
                request = await _off_loop(app.request, id)
            except NotOurs as exc:
                try:
                    status = await _off_loop(app.fact_request, id)
                except NotOurs:
                    return _refusal(str(exc), posted)
                data = request_outcome(status)
                return _result(
                    f"fact request {id}: {data['state']} (a fact request does not block: "
                    "the person answers it with no time limit)",
                    data,
                    posted,
                )
            text, data = await settle(request, wait_s, ctx)
            return _result(text, data, posted)

    # --- notify ---------------------------------------------------------------------------

    @server.tool(
        description=(
            "Show the person a desktop notification (title cut to 64 characters, message to "
            "256). At most notifications.perMinute a minute; off with notifications.enabled."
        )
    )
    async def notify(
        title: Annotated[str, Field(description="A few words.")],
        message: Annotated[str, Field(description="One or two sentences.")],
        ctx: Context,
    ) -> CallToolResult:
        seen(ctx)
        with collecting() as posted:
            try:
                _text("title", title, NOTIFY_INPUT_MAX_CHARS, required=False)
                _text("message", message, NOTIFY_INPUT_MAX_CHARS, required=False)
            except BadArgument as exc:
                return _refusal(str(exc), posted)
            shown = await _off_loop(app.notify, title, message)
            data = {"posted": shown.posted, "route": shown.route, "reason": shown.reason}
            if shown.posted:
                return _result(str(shown), data, posted)
            return _result(f"error: {shown}", data, posted, error=True)

    # --- resources ------------------------------------------------------------------------

    @server.resource(
        PROPOSED_URI,
        name="proposed facts",
        description="This thread's and the session's facts waiting for the person to keep.",
        mime_type=JSON_MIME,
    )
    async def proposed() -> str:
        found = await _off_loop(app.proposed)
        return _json(
            {
                "thread": app.thread,
                "proposed": [
                    {
                        **fact.to_json(),
                        "uri": fact_uri(fact.id),
                        "request": request_outcome(status) if status else {"id": fact.request},
                    }
                    for fact, status in found
                ],
            }
        )

    @server.resource(
        PERMANENT_URI,
        name="permanent facts",
        description="The person's permanent facts (read-only here).",
        mime_type=JSON_MIME,
    )
    async def permanent() -> str:
        try:
            facts = await _off_loop(app.permanent)
        except StoreError as exc:
            raise ResourceError(str(exc)) from None
        return _json({"facts": [permanent_fact(f) for f in facts]})

    @server.resource(
        PENDING_URI,
        name="waiting requests",
        description="This server's requests waiting for the person.",
        mime_type=JSON_MIME,
    )
    async def pending() -> str:
        try:
            statuses = await _off_loop(app.waiting)
        except (OSError, PendingError) as exc:
            raise ResourceError(str(exc)) from None
        return _json({"server": app.server_id, "requests": [pending_entry(s) for s in statuses]})

    @server.resource(
        FACT_URI,
        name="fact",
        description="One fact: this thread's (c…), the session's (s…), or the person's (p…).",
        mime_type=JSON_MIME,
    )
    async def fact(fact_id: str) -> str:
        if not _FACT_ID_RE.fullmatch(fact_id):
            raise ResourceNotFoundError(f"{fact_id!r} is not a fact id (c…, s… or p…)")
        try:
            if fact_id.startswith("p"):
                kept = await _off_loop(app.permanent_fact, fact_id)
                return _json(permanent_fact(kept))
            note = await _off_loop(app.fact, fact_id)
        except UnknownFact as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except StoreError as exc:
            raise ResourceError(str(exc)) from None
        view: dict[str, Any] = {**note.to_json(), "uri": fact_uri(note.id)}
        if note.request is not None:
            try:
                status = await _off_loop(app.status, note.request)
                view["request"] = request_outcome(status)
            except PendingError as exc:
                view["request"] = {"id": note.request, "state": "failed", "reason": str(exc)}
        else:
            view["request"] = None
        return _json(view)

    # Handshake-era clients (most today) subscribe with `resources/subscribe`, which MCPServer
    # does not serve itself; the lowlevel server takes the handler (2026-era clients listen
    # with `subscriptions/listen` instead, which MCPServer serves from the bus).
    def _ours(uri: str) -> bool:
        if uri in (PENDING_URI, PROPOSED_URI, PERMANENT_URI):
            return True
        head = "wisp://facts/"
        return uri.startswith(head) and bool(_FACT_ID_RE.fullmatch(uri[len(head) :]))

    async def on_subscribe(
        ctx: ServerRequestContext, params: SubscribeRequestParams
    ) -> EmptyResult:
        if not _ours(params.uri):
            raise MCPError(code=INVALID_PARAMS, message=f"no resource {params.uri!r} to follow")
        updates.subscribe(ctx.session, params.uri)
        return EmptyResult()

    async def on_unsubscribe(
        ctx: ServerRequestContext, params: UnsubscribeRequestParams
    ) -> EmptyResult:
        updates.unsubscribe(ctx.session, params.uri)
        return EmptyResult()

    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, on_subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, on_unsubscribe)

    return server, updates


def _unfiled(exc: Exception) -> str:
    return f"the request could not be filed: {exc}. Check the channel with `wisp doctor`."


def _holding(app: App, subject: str, name: str, value: str) -> list[Any]:
    """The person's permanent facts that say otherwise about the same subject and name."""
    try:
        return [
            f
            for f in app.permanent()
            if (f.subject, f.name) == (subject, name) and f.value != value
        ]
    except StoreError:
        return []
