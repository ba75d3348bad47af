"""Waiting for the person while a tool call is open: any terminal's answer, the client's own
dialog (elicitation) where it has one, or the request's own deadline, with progress meanwhile.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import attrs
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp_types import ElicitResult

from pending import (
    CommandBinding,
    Decision,
    Kind,
    PendingError,
    QuestionBinding,
    Request,
    offers_of,
)
from wisp import AgentSession, Cancel, Ending, StoreError
from wisp._text import visible
from wisp.kinds import view
from wisp.mcp import _views as views

PROGRESS_EVERY_S = 5.0  # while a tool waits: clients that reset their timeout on progress
DECLINED_IN_DIALOG = "declined in the MCP client's dialog"  # a denial's reason, as audited
APPROVE_ONCE, DENY = "Approve once", "Deny"  # the command dialog's choices
DIALOG_REASON_MAX = 2000  # characters of a reason typed in the client's dialog


@attrs.frozen(kw_only=True)
class Dialog:
    """The client's own dialog for a request (elicitation): what it shows, the form it asks
    for, and the answer a reply gives (None: no answer, as for a dismissed dialog)."""

    message: str
    schema: dict[str, Any]
    answer: Callable[[ElicitResult], tuple[Decision, str | None] | None]


def command_dialog(request: Request) -> Dialog:
    """Approve once or deny, with an optional reason the agent is told: accept answers as
    chosen (approve once unless Deny is chosen), decline denies."""
    binding = request.binding
    assert isinstance(binding, CommandBinding)
    why = f"\nwhy: {visible(binding.reason)}" if binding.reason else ""
    # A must-ask call (docs/channel.md, "Widths") says so: this dialog gives once or no,
    # which it always offers, and nothing wider is ever given here.
    why += "".join(f"\nasked every time: {visible(said)}" for said in offers_of(binding).must_ask)
    message = (
        f"Run this command?\n\n{visible(binding.command)}\n\nin {visible(binding.cwd)}{why}\n\n"
        f"Choose, and accept; declining denies it too. (Or from a terminal: "
        f"{view(Kind.COMMAND).answering[0].line(request.id)})"
    )
    schema = {
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Your answer",
                "enum": [APPROVE_ONCE, DENY],
                "default": APPROVE_ONCE,
            },
            "reason": {
                "type": "string",
                "title": "If you deny: why (the agent is told)",
                "maxLength": DIALOG_REASON_MAX,
            },
        },
    }

    def answer(reply: ElicitResult) -> tuple[Decision, str | None] | None:
        if reply.action == "accept":
            content = reply.content or {}
            if content.get("answer") == DENY:
                said = content.get("reason")
                return Decision.NO, said.strip() if isinstance(said, str) and said.strip() else None
            return Decision.ONCE, None
        if reply.action == "decline":
            return Decision.NO, None
        return None

    return Dialog(message=message, schema=schema, answer=answer)


def question_dialog(request: Request) -> Dialog:
    """The question's options (or a text field); decline declines to answer."""
    binding = request.binding
    assert isinstance(binding, QuestionBinding)
    options = list(binding.options or ())
    # Options are shown made visible, as the question is (no raw control or bidi character
    # reaches the client's dialog); the choice comes back as shown and is answered as filed.
    shown = {visible(option): option for option in options}
    if len(shown) < len(options):  # two differ only in what cannot be shown: number them
        shown = {f"{n}. {visible(option)}": option for n, option in enumerate(options, 1)}
    field: dict[str, Any] = {"type": "string", "title": "Answer"}
    choose = bool(options) and not binding.free_text
    if choose:
        field["enum"] = list(shown)
    elif options:
        field["description"] = "For example: " + ", ".join(shown)
    message = (
        f"{visible(binding.question)}\n\n(Or from a terminal: "
        f"{view(Kind.QUESTION).answering[0].line(request.id)})"
    )

    def answer(reply: ElicitResult) -> tuple[Decision, str | None] | None:
        if reply.action == "decline":
            return Decision.DECLINE, None
        text = (reply.content or {}).get("answer") if reply.action == "accept" else None
        if choose:
            text = shown.get(text) if isinstance(text, str) else None
        if isinstance(text, str) and text.strip():
            return Decision.ANSWER, text
        return None

    schema = {"type": "object", "properties": {"answer": field}, "required": ["answer"]}
    return Dialog(message=message, schema=schema, answer=answer)


def dialog_for(request: Request, ctx: Context) -> Dialog | None:
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
    app: AgentSession, request: Request, wait_s: float, ctx: Context, dialog: Dialog | None
) -> Ending | None:
    """Wait at most *wait_s* for the request to end: its answer from any terminal, from the
    client's dialog if there is one (first answer wins; the loser's dialog is cancelled), or
    its own deadline. None if it still waits. Progress is reported meanwhile; a call the
    client cancels stops waiting at once, and the request waits on."""
    cancel = Cancel()
    ended: list[Ending | None] = []
    try:
        async with anyio.create_task_group() as group:

            async def waiter() -> None:
                ended.append(
                    await anyio.to_thread.run_sync(
                        app.wait, request.id, wait_s, cancel, abandon_on_cancel=True
                    )
                )
                group.cancel_scope.cancel()  # the dialog and the progress go with it

            group.start_soon(waiter)
            group.start_soon(_progress, request, ctx)
            if dialog is not None:
                group.start_soon(_ask_in_dialog, app, request, dialog, ctx)
    finally:
        cancel.cancel()  # the worker thread returns at once if the call was cancelled
    return ended[0] if ended else None


async def _progress(request: Request, ctx: Context) -> None:
    """A heartbeat, not a poll: clients that reset their tool timeout on progress keep the
    call open while the person is away. (Without a progress token, nothing is sent.)"""
    hint = views.answer_hint(request.kind, request.id)
    beat = 0
    while True:
        await ctx.report_progress(beat, None, f"waiting for the person: {hint}")
        beat += 1
        await anyio.sleep(PROGRESS_EVERY_S)


async def _ask_in_dialog(app: AgentSession, request: Request, dialog: Dialog, ctx: Context) -> None:
    """Show the client's dialog; an answer given there is answered like any other."""
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
    # A command's deny carries the reason typed in the dialog (as `text`), else that it was
    # declined there; a question's decline has none of its own.
    reason = (text or DECLINED_IN_DIALOG) if decision is Decision.NO else None
    text = None if decision is Decision.NO else text
    with anyio.CancelScope(shield=True):  # an answer given is published whole
        try:
            await anyio.to_thread.run_sync(
                lambda: app.answer_in_dialog(request, decision, text=text, reason=reason)
            )
        except (PendingError, StoreError) as exc:
            # Refused (already ended, or the answer does not fit): the waiter reports what
            # the request says.
            _say(f"the dialog's answer was not taken: {exc}")


def _say(message: str) -> None:
    """A message for people (the client's log of our stderr), never for stdout."""
    sys.stderr.write(f"wisp mcp: {visible(message)}\n")
