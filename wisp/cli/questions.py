"""`wisp questions …`: ask the person from a script; answer or decline from any terminal."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pending import Decision, Kind, Outcome, PendingError, Request
from wisp._asking import QuestionAsker
from wisp._audit import EntryPoint
from wisp._store import StoreError
from wisp._text import one_line
from wisp.cli._answer import answer_from_terminal, render_command_or_question
from wisp.cli._ask import asking, timeout_or_fail, waiting_note
from wisp.cli._common import command_group, config_or_fail, fail, print_json, tell
from wisp.cli._exit import ExitCode
from wisp.cli._listing import pending_command

questions_app = command_group(
    "Questions to you: ask from a script; answer or decline from any terminal.",
    no_args_is_help=True,
)


@questions_app.command("answer")
def answer(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The question's ID.")],
    text: Annotated[str, typer.Argument(metavar="TEXT", help="Your answer.")],
) -> None:
    """Answer a question (one of its options, if it has them). Only from a terminal."""
    answer_from_terminal(
        "wisp questions answer",
        request_id,
        Kind.QUESTION,
        Decision.ANSWER,
        text=text,
        render=render_command_or_question("answered"),
    )


@questions_app.command("decline")
def decline(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The question's ID.")],
) -> None:
    """Decline to answer a question. Only from a terminal."""
    answer_from_terminal(
        "wisp questions decline",
        request_id,
        Kind.QUESTION,
        Decision.DECLINE,
        render=render_command_or_question("declined"),
    )


questions_app.command("pending")(pending_command(Kind.QUESTION, "Questions waiting for you."))


@questions_app.command("ask")
def ask_question(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What to ask.")],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option", help="An answer to offer (repeatable); then only these are taken."
        ),
    ] = None,
    free_text: Annotated[
        bool, typer.Option("--free-text", help="With --option: also take any other text.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", help="Seconds to wait (default approval.timeoutSeconds; 0 forever)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The reply as JSON.")] = False,
) -> None:
    """Ask the person a question, and wait; the answer alone goes to stdout. Exit 0 answered,
    1 declined or withdrawn, 124 timed out, 2 error."""
    config = config_or_fail()
    timeout_s = timeout_or_fail(timeout, config)
    options = tuple(option) if option else None

    def filed(request: Request) -> None:
        offered = f"  options: {', '.join(one_line(o, 40) for o in options)}\n" if options else ""
        tell(
            f"wisp: asking you: {one_line(question, 200)}\n{offered}"
            f"  answer:  wisp questions answer {request.id} TEXT\n"
            f"  decline: wisp questions decline {request.id}\n"
            f"  {waiting_note(timeout_s)}"
        )

    with asking(EntryPoint.QUESTIONS, config) as asker:
        try:
            reply = QuestionAsker(asker, timeout_s=timeout_s).ask(
                question, options=options, free_text=free_text or not options, on_filed=filed
            )
            outcome, text, request_id, reason = (
                reply.outcome,
                reply.text,
                reply.request_id,
                reply.reason,
            )
        except (PendingError, StoreError) as exc:
            fail(f"could not ask: {exc}")  # leaving `asking` withdraws what waits and closes
        except KeyboardInterrupt:
            endings = asker.withdraw()
            outcome, text, reason = Outcome.WITHDRAWN.value, None, "withdrawn with Ctrl-C"
            request_id = endings[0].request.id if endings else None
    if as_json:
        print_json({"id": request_id, "outcome": outcome, "text": text, "reason": reason})
    elif outcome == "answered" and text is not None:
        sys.stdout.write(text + "\n")
    else:
        word = {"timed-out": "timed out"}.get(outcome, outcome)
        tell(f"wisp: {word}" + (f": {reason}" if reason else ""))
    if outcome == "answered":
        return
    raise typer.Exit(int(ExitCode.TIMED_OUT if outcome == "timed-out" else ExitCode.NO))
