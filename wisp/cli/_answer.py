"""The person's answer from a terminal: one path for approve, deny, answer, decline, keep and
drop. It finds the request the person typed (a unique prefix will do), and leaves deciding to
:class:`wisp.Answerer`; this renders what came of it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pending import (
    AlreadyAnswered,
    ChannelUnwritable,
    Decision,
    Kind,
    Outcome,
    PendingError,
    RecordTooLarge,
    Via,
    WrongKind,
)
from wisp._entry import EntryPoint
from wisp._text import one_line, visible
from wisp.cli._common import (
    config_or_fail,
    fail,
    me,
    open_channel,
    print_json,
    refuse,
    require_terminal,
    say,
    tell,
)
from wisp.cli._exit import ExitCode
from wisp.kinds import view

if TYPE_CHECKING:
    from wisp._answering import AnswerReport

# The answering side (the application's Answerer, the renderings of its reports) is imported
# by the functions that answer: a group's listing and `show` declare this module's arguments,
# and an empty listing loads neither the channel's records nor the audit log (issue 23).

# Completion hints may reach a shell that evaluates them (zsh's completion script does):
# only these characters of a request's text are shown there.
_HINT_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,_/+=@%-")
HINT_CHARS = 40


def complete_ids(*kinds: Kind) -> Callable[[str], list[tuple[str, str]]]:
    """Shell completion for an ID argument: the waiting requests of *kinds*, each with a
    short hint. Reads only; says nothing on failure (its output is the completion)."""

    def complete(incomplete: str) -> list[tuple[str, str]]:
        from wisp._home import open_channel as open_home_channel
        from wisp._lookup import answerable
        from wisp._render import asked_text

        try:
            with open_home_channel() as channel:
                found = answerable(channel, kinds=kinds or None, prefix=incomplete)
        except Exception:  # a completion must never print an error into the command line
            return []
        return [(s.id, _hint(s.kind.value, asked_text(s.request))) for s in found]

    return complete


def _hint(kind: str, text: str) -> str:
    shown = "".join(c if c in _HINT_SAFE else "?" for c in text[:HINT_CHARS])
    return f"{kind}: {shown}"


ID_HELP = "The request's ID, or its first 4 or more characters (any case)."


def id_argument(*kinds: Kind) -> Any:
    """The ID argument of an answering command: completes the waiting IDs of *kinds*."""
    return typer.Argument(metavar="ID", help=ID_HELP, autocompletion=complete_ids(*kinds))


OPTIONAL_ID_HELP = (
    ID_HELP + " Left out: the waiting ones are named, with the command for each; from a "
    "terminal, when only one waits, it is shown and you are asked first."
)


def optional_id_argument(*kinds: Kind) -> Any:
    """:func:`id_argument` that may be left out (see :func:`chosen_id`)."""
    return typer.Argument(
        metavar="[ID]", help=OPTIONAL_ID_HELP, autocompletion=complete_ids(*kinds)
    )


def chosen_id(typed_id: str | None, command: str, kind: Kind) -> str:
    """The ID typed; or, with none typed, the one request of *kind* waiting, shown and
    confirmed from a terminal. Otherwise exit 2 naming what waits and the command that
    answers each: nothing is answered unasked."""
    if typed_id is not None:
        return typed_id
    from wisp._lookup import answerable
    from wisp._render import asked_text

    with open_channel() as channel:
        waiting = answerable(channel, kinds=(kind,))
    if len(waiting) == 1 and sys.stdin.isatty():
        (status,) = waiting
        tell(f"wisp: one {kind.value} request waits, {status.id}:")
        for line in visible(asked_text(status.request)).splitlines() or [""]:
            tell(f"  {line}")
        if not typer.confirm(f"{command} {status.id}?", default=False, err=True):
            fail(f"nothing was answered; {status.id} still waits.", ExitCode.NO)
        return status.id
    if not waiting:
        said = f"no {kind.value} request waits ({view(kind).noun}): nothing to answer."
    else:
        count = f"{len(waiting)} wait" if len(waiting) > 1 else "one waits"
        said = f"{count}; answer one with:" + "".join(
            f"\n  {command} {s.id}    {one_line(asked_text(s.request), 50)}" for s in waiting
        )
    tell(f"wisp: `{command}` needs the ID of the request to answer; {said}")
    raise typer.Exit(int(ExitCode.ERROR))


JsonFlag = Annotated[
    bool, typer.Option("--json", help="What came of the answer, as one JSON object.")
]


def answer_from_terminal(
    command: str,
    typed_id: str | None,
    kind: Kind,
    decision: Decision,
    *,
    text: str | None = None,
    literal: bool = False,
    reason: str | None = None,
    as_json: bool = False,
    render: Callable[[AnswerReport], None],
) -> AnswerReport:
    """Answer through the application layer. Refusals exit 1 (nothing written); a store that
    cannot take a keep exits 2; Ctrl-C says whether the answer was written. No ID typed:
    see :func:`chosen_id`."""
    typed_id = chosen_id(typed_id, command, kind)
    require_terminal(command)  # before anything, the store's probe included
    # Imported here: the answering groups' listings and `show` build this module's
    # arguments, but only an answer looks a request up (issue 23).
    from wisp._answering import Answerer
    from wisp._lookup import LookupRefused, answer_of_this_process, find_request, option_answer
    from wisp._render import refusal, report_json
    from wisp.stores.jsonstore import StoreError

    config = config_or_fail()
    person = me()
    with open_channel() as channel:
        answerer = Answerer(
            channel,
            via=Via.CLI,
            entry_point=view(kind).entry_point,
            wait_s=config["answer.waitSeconds"],
            liveness_recheck_s=config["watch.livenessSeconds"],
        )
        try:
            status = find_request(channel, typed_id)
            if text is not None:
                text = option_answer(status.request, text, literal=literal)
        except LookupRefused as exc:
            refuse(str(exc))
        except PendingError as exc:
            refuse(refusal(exc, me=person))
        try:
            report = answerer.answer(
                status.id,
                decision,
                kind=kind,
                text=text,
                reason=reason,
                shown=status.request,
            )
        except (ChannelUnwritable, RecordTooLarge) as exc:  # an error, not a refusal: exit 2
            fail(f"{exc} Your answer was not recorded; the request still waits.")
        except WrongKind as exc:
            refuse(
                f"request {status.id} is a {exc.kind} request, not a {exc.asked_as} "
                f"request: answer it with {view(exc.kind).how_to_answer(status.id)}."
            )
        except PendingError as exc:
            refuse(refusal(exc, me=person))
        except StoreError as exc:
            fail(f"{exc} The request still waits; nothing was written.")
        except KeyboardInterrupt:
            interrupted(answer_of_this_process(channel, status.id) is not None, status.id)
    if not report.won and not report.applied:
        refuse(refusal(AlreadyAnswered(report.answer), me=person))
    if as_json:
        print_json(report_json(report))
    else:
        render(report)
    code = exit_code(report)
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))
    return report


def interrupted(written: bool, request_id: str) -> None:
    """Ctrl-C while answering: say whether the answer was written (it then stands)."""
    if written:
        tell(
            f"wisp: interrupted while waiting for the asker; your answer to {request_id} was "
            f"recorded and stands. `wisp show {request_id}` shows what becomes of it."
        )
        raise typer.Exit(int(ExitCode.OK))
    tell(
        f"wisp: interrupted before your answer was written; nothing was written and "
        f"{request_id} still waits."
    )
    raise typer.Exit(int(ExitCode.INTERRUPTED))


def exit_code(report: AnswerReport) -> ExitCode:
    if report.apply_error is not None and report.settled is None:
        return ExitCode.ERROR  # recorded, but the store could not take it: not applied yet
    if report.settled is not None and report.settled.outcome is not Outcome.ANSWERED:
        return ExitCode.NO
    return ExitCode.OK


def question_answered(report: AnswerReport) -> str:
    """What was recorded for a question, as said back: the text (made visible), and which
    option it is, so `wisp questions answer ID 2` says what 2 was."""
    from pending import QuestionBinding

    text = report.answer.text or ""
    binding = report.request.binding
    options = (binding.options or ()) if isinstance(binding, QuestionBinding) else ()
    which = f" (option {options.index(text) + 1})" if text in options else ""
    return f'answered "{visible(text)}"{which}'


def _project_named(report: AnswerReport) -> str:
    """For a `project` approval, the directory its grant will reach (and all below it)."""
    cwd = getattr(report.request.binding, "cwd", None)
    if report.answer.decision != Decision.PROJECT or not isinstance(cwd, str):
        return ""
    from wisp.stores.grants import project_of

    return f" {visible(project_of(cwd))}"


def render_command_or_question(
    verb: str | Callable[[AnswerReport], str],
) -> Callable[[AnswerReport], None]:
    """How an answer to a command or a question reads: what the asker made of it. *verb*
    says what was recorded (or makes it from the report)."""

    def render(report: AnswerReport) -> None:
        from wisp._answering import AnswerFate

        word = verb if isinstance(verb, str) else verb(report)
        said = f"{word}{_project_named(report)} ({report.request.id})"
        if report.narrowed is not None:  # a standing scope asked for, given as once
            said = f"approved once ({report.request.id})"
            tell(f"wisp: {report.narrowed}.")
        settled = report.settled
        if settled is not None:
            if settled.outcome is not Outcome.ANSWERED:
                reason_text = f": {settled.reason}" if settled.reason else ""
                say(f"{said}, but it ended {settled.outcome}{reason_text}.")
                return
            say(f"{said}; the asker has it.")
        elif report.asker is AnswerFate.GONE:
            say(
                f"{said}, but no asker is watching: the program that asked has "
                "stopped, so nothing will act on it."
            )
        else:
            say(
                f"{said}; the asker has not picked it up yet. It will when it next "
                f"looks; `wisp show {report.request.id}` shows it."
            )
        if report.answer.decision == Decision.SESSION:
            tell(f"wisp: {session_note(report)}")

    return render


def session_note(report: AnswerReport) -> str:
    """What a session approval covers, said where it is given (it is easy to expect more)."""
    from wisp.cli._ask import ASKING_CLIENT

    server = report.request.server
    if server.client == ASKING_CLIENT:
        return (
            "a session approval lasts as long as the program that asked; this one is a single "
            "`wisp approvals request`, which ends with your answer, so it approves this request "
            "only."
        )
    what = "command"
    binding = report.request.binding
    if report.request.kind is Kind.TOOL:
        what = f"{getattr(binding, 'tool', 'tool')} call (the same tool, the same input)"
    thread = getattr(binding, "thread", None)
    if server.entry_point == EntryPoint.HOOK and thread:  # kept for the harness's session
        from wisp.stores.grants import SESSION_GRANT_MAX_AGE_S

        return (
            f"a session approval also lets {server.client or 'the agent'} make this same "
            f"{what} again without asking in its session {thread} only, until that session "
            f"ends or for {SESSION_GRANT_MAX_AGE_S // 3600} hours at most; nothing else."
        )
    return (
        f"a session approval also lets {server.client or 'the program that asked'} (pid "
        f"{server.pid}) run this same {what} again without asking, until it stops; nothing "
        "else."
    )
