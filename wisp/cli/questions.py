"""`wisp questions …`: ask the person from a script; answer or decline from any terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pending import Decision, Kind, PendingError
from wisp import EntryPoint
from wisp.cli._answer import (
    JsonFlag,
    answer_from_terminal,
    id_argument,
    optional_id_argument,
    question_answered,
)
from wisp.cli._ask import (
    TimeoutOption,
    asking,
    prompt,
    timeout_in_effect,
    waiting_note,
    withdraw_on_signal,
    withdrawn_how,
)
from wisp.cli._common import (
    command_group,
    config_or_fail,
    fail,
    print_json,
    require_text,
    say,
    tell,
)
from wisp.cli._exit import ExitCode
from wisp.cli._listing import pending_command
from wisp.cli.show import SHOW_EXAMPLES, show_command
from wisp.kinds import view
from wisp.program.writes import render_command_or_question

if TYPE_CHECKING:
    from pending import Request

QUESTIONS = view(Kind.QUESTION)
ANSWER, DECLINE = QUESTIONS.answering
_ANSWER = ANSWER.invocation

questions_app = command_group(
    "Questions to you: ask from a script; answer or decline from any terminal.",
    no_args_is_help=True,
    epilog=f"""Examples:
  wisp questions pending
  {_ANSWER} 3f9c 2
  wisp questions ask "Which environment?" --option staging --option production""",
)


@questions_app.command(
    "answer",
    epilog=f"""Examples:
  {_ANSWER} 3f9c0a1b2c3d4e5f production
  {_ANSWER} 3f9c 2            (the second option)
  {_ANSWER} 3f9c 2 --literal  (the text "2", where free text is taken)""",
)
def answer(
    request_id: Annotated[str, id_argument(Kind.QUESTION)],
    text: Annotated[
        str,
        typer.Argument(
            metavar="TEXT",
            help="Your answer: one of the options (or its number: 1 is the first), or any "
            "text where the question takes free text.",
        ),
    ],
    literal: Annotated[
        bool,
        typer.Option("--literal", help="Take TEXT as it is, even if it is an option's number."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Answer a question.

    Only from a terminal. Exit 0 answered, 1 refused (nothing written; not one of the
    options, for one), 2 error."""
    answer_from_terminal(
        _ANSWER,
        request_id,
        Kind.QUESTION,
        Decision.ANSWER,
        text=text,
        literal=literal,
        as_json=as_json,
        render=render_command_or_question(question_answered),
    )


@questions_app.command("decline", epilog=f"Example:\n  {DECLINE.line('3f9c')}")
def decline(
    request_id: Annotated[str | None, optional_id_argument(Kind.QUESTION)] = None,
    as_json: JsonFlag = False,
) -> None:
    """Decline to answer a question.

    Only from a terminal. Exit 0 answered, 1 refused (nothing written), 2 error."""
    answer_from_terminal(
        DECLINE.invocation,
        request_id,
        Kind.QUESTION,
        Decision.DECLINE,
        as_json=as_json,
        render=render_command_or_question("declined"),
    )


questions_app.command(
    "pending", epilog="Examples:\n  wisp questions pending\n  wisp questions pending --json"
)(pending_command(Kind.QUESTION, "Questions waiting for you, with their options."))
questions_app.command("show", epilog=SHOW_EXAMPLES.replace("wisp show", "wisp questions show"))(
    show_command(Kind.QUESTION)
)


@questions_app.command(
    "ask",
    epilog="""Examples:
  wisp questions ask "Which environment?" --option staging --option production
  env=$(wisp questions ask "Deploy where?" --option staging --option production)
  wisp questions ask --timeout 0 "What is the release codename?"   (waits until answered)""",
)
def ask_question(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What to ask.")],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            metavar="TEXT",
            help="An answer to offer (repeat it for each); then only these are taken.",
        ),
    ] = None,
    free_text: Annotated[
        bool, typer.Option("--free-text", help="With --option: also take any other text.")
    ] = False,
    timeout: TimeoutOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The reply as JSON.")] = False,
) -> None:
    """Ask the person a question, and wait.

    The answer alone goes to stdout. Exit 0 answered, 1 declined or withdrawn (Ctrl-C
    withdraws), 124 timed out, 2 error (a bad --timeout included)."""
    require_text(question, "the question", '`wisp questions ask "Which environment?"`')
    for offered in option or ():
        require_text(offered, "an --option", "`--option staging`")
    config = config_or_fail()
    timeout_s = timeout_in_effect(timeout, config)
    options = tuple(option) if option else None

    filed_ids: list[str] = []

    def filed(request: Request) -> None:
        filed_ids.append(request.id)
        offered = [("options", "  ".join(f"{n}) {o}" for n, o in enumerate(options or (), 1)))]
        tell(
            prompt(
                "wisp: asking you:",
                question,
                offered if options else [],
                [
                    *_with_numbers(QUESTIONS.prompt_lines(request.id), bool(options)),
                    waiting_note(timeout_s),
                ],
            )
        )

    # The asking side loads only when it asks.
    from wisp import QuestionAsker, ReplyOutcome, StoreError

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
        except KeyboardInterrupt as interrupt:  # Ctrl-C, SIGTERM or SIGHUP
            endings = withdraw_on_signal(asker, filed_ids)
            outcome, text = ReplyOutcome.WITHDRAWN, None
            reason = withdrawn_how(interrupt, endings)
            request_id = endings[0].request.id if endings else None
    if as_json:
        print_json({"id": request_id, "outcome": outcome, "text": text, "reason": reason})
    elif outcome is ReplyOutcome.ANSWERED and text is not None:
        say(text)  # made visible, as every human face shows it (--json: the text exactly)
    else:
        word = "timed out" if outcome is ReplyOutcome.TIMED_OUT else outcome
        said = reason if reason and reason.startswith(word) else None
        tell(f"wisp: {said or word + (f': {reason}' if reason else '')}")
    if outcome is ReplyOutcome.ANSWERED:
        return
    raise typer.Exit(int(ExitCode.TIMED_OUT if outcome is ReplyOutcome.TIMED_OUT else ExitCode.NO))


def _with_numbers(lines: list[str], numbered: bool) -> list[str]:
    """The asker's answering lines, the first saying an option's number will do."""
    return [lines[0] + " (or an option's number)", *lines[1:]] if numbered else lines
