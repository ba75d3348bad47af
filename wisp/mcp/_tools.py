"""The MCP face's tools, declared: each one a module-level function whose arguments (their
types and limits in :mod:`wisp.mcp._args`) are its input schema, reaching the application
through its `Context` (the server's lifespan state, :func:`~wisp.mcp._updates.served`).

A tool only parses, calls the application (:class:`wisp.AgentSession`, on a worker thread: it
reads and writes files) and renders. :func:`tool` writes the rest once: the client's name
noted, the notifications the call posted collected into its result, and a refusal (an argument
that does not fit, or the application's) made a tool error in words that say what to do.

No `from __future__ import annotations` here: the SDK reads the tools' signatures (argument
types, the `Context` parameter) at registration.
"""

import functools
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import attrs
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp_types import CallToolResult

from pending import Kind, Request, is_valid_id
from wisp import (
    Ending,
    FactRefused,
    FactScope,
    KeepState,
    NotFiled,
    NotOurs,
    StoreError,
    UnknownFact,
    collecting,
)
from wisp.kinds import view
from wisp.mcp import _views as views
from wisp.mcp._args import (
    WAIT_DEFAULT_S,
    BadArgument,
    Command,
    Cwd,
    FactId,
    FreeText,
    Message,
    Name,
    Options,
    Question,
    Reason,
    RequestId,
    Scope,
    Subject,
    Title,
    ToolInput,
    ToolName,
    ToolUseId,
    Value,
    WaitSeconds,
    no_nul,
    required,
)
from wisp.mcp._dialog import dialog_for, wait_for_person
from wisp.mcp._results import Said, refusal, result
from wisp.mcp._updates import PROPOSED_URI, Served, fact_uri, served
from wisp.mcp._views import Rendered, fact_said, request_outcome

T = TypeVar("T")
_APPROVE_ID = view(Kind.COMMAND).answering[0].line("ID")  # as tool descriptions name it

CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"  # a 2026-era request's client name
RECORD_FACT_SOURCE = "mcp record_fact"  # a recorded fact's `source`, as documented

# What a tool refuses with: a bad argument, and the application's refusals, each of whose
# message says what happened and what to do.
REFUSALS = (BadArgument, FactRefused, UnknownFact, StoreError, NotOurs, NotFiled)


def _client_name(ctx: Context) -> str | None:
    """The client's name: from its handshake, or (2026-era) from the request's envelope."""
    session: ServerSession = ctx.session
    params = session.client_params
    if params is not None and params.client_info is not None:
        return params.client_info.name
    meta = ctx.request_context.meta or {}
    info = meta.get(CLIENT_INFO_META) if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


async def _off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run an application call on a worker thread (it reads and writes files, and a
    notification route may run a helper program): the protocol keeps flowing meanwhile."""
    return await anyio.to_thread.run_sync(fn, *args)


# --- declaring a tool -----------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class DeclaredTool:
    """A tool as the server registers it."""

    fn: Callable[..., Awaitable[CallToolResult]]
    description: str


TOOLS: list[DeclaredTool] = []


def tool(
    description: str, *, text_only: bool = False
) -> Callable[[Callable[..., Awaitable[Said]]], DeclaredTool]:
    """Declare a tool: *body* takes the tool's arguments and `ctx`, and says what it has to
    say; a refusal it raises (:data:`REFUSALS`) becomes a tool error. Either way the result
    lists the notifications the call posted, unless *text_only* (the words alone)."""

    def declare(body: Callable[..., Awaitable[Said]]) -> DeclaredTool:
        @functools.wraps(body)
        async def call(**arguments: Any) -> CallToolResult:
            ctx: Context = arguments["ctx"]
            served(ctx).app.name_client(_client_name(ctx))
            with collecting() as posted:
                try:
                    said = await body(**arguments)
                except REFUSALS as exc:
                    return refusal(views.refusal_text(exc), posted, text_only=text_only)
                return result(said, posted, text_only=text_only)

        # The SDK reads the body's arguments; what the client gets back is a CallToolResult.
        call.__signature__ = inspect.signature(body).replace(  # type: ignore[attr-defined]
            return_annotation=CallToolResult
        )
        call.__annotations__ = {**body.__annotations__, "return": CallToolResult}
        declared = DeclaredTool(fn=call, description=description)
        TOOLS.append(declared)
        return declared

    return declare


# --- facts --------------------------------------------------------------------------------


@tool(
    "Record a fact in this thread (an id c…). It lives as long as the thread; move it with "
    "set_fact_scope."
)
async def record_fact(subject: Subject, name: Name, value: Value, ctx: Context) -> Said:
    face = served(ctx)
    for argument, text in (("subject", subject), ("name", name), ("value", value)):
        required(argument, text)
    fact = await _off_loop(
        lambda: face.app.record_fact(subject, name, value, source=RECORD_FACT_SOURCE)
    )
    held = await _off_loop(face.app.conflicts, subject, name, value)
    data = views.note_fact(fact, held)
    text = f"recorded {fact_said(fact)} as {fact.id} in this thread ({fact_uri(fact.id)})"
    if held:
        text += (
            "; the person's permanent facts say otherwise: "
            + "; ".join(f"{p.id}: {fact_said(p)}" for p in held)
            + ". They settle that; yours stays in this thread."
        )
    face.updates.changed([fact_uri(fact.id)])
    return await _noting_proposed(face, Said(text=text, data=data))


@tool(
    "Move a fact: to 'thread' (this thread, c…) or 'session' (this server's session, s…), or "
    "ask the person to keep it 'permanent'. Permanent returns at once with state 'pending' and "
    "the request id; the person keeps or drops it from a terminal (no time limit), and the "
    "outcome shows at the fact's URI as 'request'. Permanent facts (p…) are the person's and "
    "cannot be moved."
)
async def set_fact_scope(fact: FactId, scope: Scope, ctx: Context) -> Said:
    face = served(ctx)
    required("fact", fact)
    return await _noting_proposed(face, await _set_scope(face, fact, scope))


async def _set_scope(face: Served, fact: str, scope: str) -> Said:
    change = await _off_loop(face.app.set_scope, fact, FactScope(scope))
    moved = change.fact
    uri = fact_uri(moved.id)
    if change.keep is None:
        face.updates.changed([uri, PROPOSED_URI] + ([fact_uri(moved.was)] if moved.was else []))
        data = {**moved.to_json(), "uri": uri, "state": moved.scope.value}
        if not change.changed:
            return Said(text=f"{moved.id} is already a {scope} fact ({uri})", data=data)
        text = f"moved {moved.was} to the {scope}: it is now {moved.id} ({uri})"
        return Said(text=text, data=data)
    keep = change.keep
    if keep.state is KeepState.KEPT and keep.fact is not None:
        return Said.of(views.already_kept(moved, keep.fact, uri))
    face.updates.changed([uri, PROPOSED_URI])  # the filing itself is heard from the channel
    assert keep.request_id is not None
    return Said.of(views.asked_to_keep(moved, keep.request_id, uri, new=keep.new))


async def _noting_proposed(face: Served, said: Said) -> Said:
    """*said*, with how many facts wait for the person to keep them: ADR 0048's
    `factsProposed`, on the results where the caller learns of its facts (the seed put it on
    `respond`'s result; there is no `respond` here, no model: docs/mcp.md)."""
    proposed = await _off_loop(face.app.proposed)
    counts = views.facts_proposed([note for note, _ in proposed], face.app.thread)
    return Said(
        text=said.text + views.proposed_said(counts),
        data={**said.data, "factsProposed": counts},
        error=said.error,
    )


# --- commands and questions -----------------------------------------------------------------


def _ended(face: Served, ending: Ending) -> Rendered:
    if ending.request.kind is Kind.COMMAND:
        return views.approval(ending, face.app.verdict(ending))
    return views.reply(ending, face.app.reply(ending))


async def await_outcome(face: Served, request: Request, wait_s: float, ctx: Context) -> Said:
    """What became of the request, waiting at most *wait_s* for the person: how it ended, or
    that it still waits. (The application's asker settles it; this only waits and says.)"""
    # A request that has already ended is reported as it ended: no dialog is opened on it
    # (await_request after the person answered elsewhere).
    ended = await _off_loop(face.app.ended, request.id)
    if ended is not None:
        return Said.of(await _off_loop(_ended, face, ended))
    # No dialog for a call that will not wait: it would be cancelled as it opened.
    dialog = dialog_for(request, ctx) if wait_s > 0 else None
    ending = await wait_for_person(face.app, request, wait_s, ctx, dialog)
    if ending is None:
        return Said.of(views.still_waiting(request))
    return Said.of(await _off_loop(_ended, face, ending))


@tool(
    "Ask the person to approve a shell command before you run it. Waits at most wait_seconds "
    f"(default 45) for the answer, from any terminal (`{_APPROVE_ID}`) or this "
    "client's dialog; if none by then, returns state 'pending' with the id: call await_request "
    "to wait again. A standing grant approves at once. Run the command only if 'approved' is "
    "true; no answer is never a yes."
)
async def request_approval(
    command: Command,
    ctx: Context,
    cwd: Cwd = None,
    reason: Reason = None,
    wait_seconds: WaitSeconds = WAIT_DEFAULT_S,
) -> Said:
    face = served(ctx)
    no_nul("command", required("command", command))
    where = no_nul("cwd", required("cwd", cwd)) if cwd is not None else str(Path.cwd())
    if not Path(where).is_absolute():
        raise BadArgument(f"cwd must be an absolute directory, not {where!r}.")
    granted = await _off_loop(face.app.granted, command, where)
    if granted is not None:
        return Said.of(views.granted(granted, command))
    request = await _off_loop(face.app.file_command, command, where, reason or None)
    return await await_outcome(face, request, wait_seconds, ctx)


@tool(
    "Ask the person a question. With options, the answer is one of them (unless free_text); "
    "without, free text. Waits at most wait_seconds (default 45); if no answer by then, "
    "returns state 'pending' with the id: call await_request to wait again."
)
async def ask_person(
    question: Question,
    ctx: Context,
    options: Options = None,
    free_text: FreeText = None,
    wait_seconds: WaitSeconds = WAIT_DEFAULT_S,
) -> Said:
    face = served(ctx)
    required("question", question)
    choices = tuple(options or ())
    for choice in choices:
        required("an option", choice)
    if len(set(choices)) != len(choices):
        raise BadArgument("options repeat one another: give each once.")
    if free_text is False and not choices:
        raise BadArgument("free_text is false but there are no options to choose.")
    request = await _off_loop(face.app.file_question, question, choices or None, free_text)
    return await await_outcome(face, request, wait_seconds, ctx)


@tool(
    "Wait again for a request this server filed (request_approval, ask_person), at most "
    "wait_seconds (default 45): its answer, or state 'pending' still. For a fact request "
    "(set_fact_scope permanent) it returns where it stands at once."
)
async def await_request(
    id: RequestId, ctx: Context, wait_seconds: WaitSeconds = WAIT_DEFAULT_S
) -> Said:
    face = served(ctx)
    if not is_valid_id(id):
        raise BadArgument(f"{id[:40]!r} is not a request id (8 to 32 lowercase hex characters).")
    try:
        request = await _off_loop(face.app.request, id)
    except NotOurs as exc:
        try:
            status = await _off_loop(face.app.fact_request, id)
        except NotOurs:
            raise exc from None
        data = request_outcome(status)
        text = (
            f"fact request {id}: {data['state']} (a fact request does not block: the person "
            "answers it with no time limit)"
        )
        return await _noting_proposed(face, Said(text=text, data=data))
    return await await_outcome(face, request, wait_seconds, ctx)


# --- a permission prompt ---------------------------------------------------------------


@tool(
    "Claude Code's permission prompt for headless runs (`claude -p --permission-prompt-tool "
    "mcp__wisp__permission_prompt`): asks the person whether the tool call may run (a Bash "
    f"call as a command, `{_APPROVE_ID}`; any other as a tool call), waiting up to "
    "approval.timeoutSeconds. A standing grant allows at once. The text is Claude Code's "
    'JSON: {"behavior":"allow","updatedInput":…} or {"behavior":"deny","message":…}; no '
    "answer is a deny.",
    text_only=True,  # Claude Code rejects a result with anything beside its one text block
)
async def permission_prompt(
    tool_name: ToolName, input: ToolInput, ctx: Context, tool_use_id: ToolUseId = None
) -> Said:
    face = served(ctx)
    no_nul("tool_name", required("tool_name", tool_name))
    asked = await _off_loop(face.app.ask_permission, tool_name, input, str(Path.cwd()))
    if not isinstance(asked, Request):
        return Said.of(views.permission(asked, input))
    # The client's dialog is a command's accept/decline; a tool call is answered elsewhere.
    dialog = dialog_for(asked, ctx) if asked.kind is Kind.COMMAND else None
    try:
        ending = await wait_for_person(face.app, asked, face.app.permission_wait_s, ctx, dialog)
    except anyio.get_cancelled_exc_class():
        # The client gave up (its tool timeout): nobody can act on a later answer, so the
        # request is withdrawn rather than left waiting.
        with anyio.CancelScope(shield=True):
            await _off_loop(face.app.permission_verdict, asked, None)
        raise
    verdict = await _off_loop(face.app.permission_verdict, asked, ending)
    return Said.of(views.permission(verdict, input))


# --- notify -------------------------------------------------------------------------------


@tool(
    "Show the person a desktop notification (title cut to 64 characters, message to 256; "
    "either over 4096 is refused). At most notifications.perMinute a minute; off with "
    "notifications.enabled."
)
async def notify(title: Title, message: Message, ctx: Context) -> Said:
    shown = await _off_loop(served(ctx).app.notify, title, message)
    data = {"posted": shown.posted, "route": shown.route, "reason": shown.reason}
    if shown.posted:
        return Said(text=str(shown), data=data)
    return Said(text=f"error: {shown}", data=data, error=True)
