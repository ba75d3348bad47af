"""The person's answer from a terminal: one path for approve, deny, answer, decline, keep and
drop. It finds the request the person typed (a unique prefix will do), and leaves deciding to
:class:`wisp.Answerer`; this renders what came of it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pending import Decision, Kind, Width
from wisp._text import one_line, visible
from wisp.cli._common import choice_of, choices, fail, open_channel, tell
from wisp.cli._exit import ExitCode
from wisp.kinds import view
from wisp.program.writes import WidthTyped, answer_typed

if TYPE_CHECKING:
    from wisp import AnswerReport

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
        from wisp import open_channel as open_home_channel
        from wisp._render import asked_text
        from wisp.program.lookup import answerable

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
    from wisp._render import asked_text
    from wisp.program.lookup import answerable

    with open_channel() as channel:
        waiting = answerable(channel, kinds=(kind,))
    if len(waiting) == 1 and sys.stdin.isatty():
        (status,) = waiting
        tell(f"wisp: one {kind.value} request waits, {status.id}:")
        for line in visible(asked_text(status.request)).splitlines() or [""]:
            tell(f"  {line}")
        if not _confirmed(f"{command} {status.id}?", status.id):
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


def _confirmed(prompt: str, request_id: str) -> bool:
    """`[y/N]` asked on stderr: True for `y`. Ctrl-D is a no; Ctrl-C is an interruption (exit
    130, saying nothing was written: docs/cli.md), not Click's bare `Aborted!` (exit 1)."""
    from wisp.program.writes import interrupted

    try:
        return typer.confirm(prompt, default=False, err=True)
    except typer.Abort as exc:
        typer.echo(err=True)  # the prompt's line ends, as a typed answer would end it
        if isinstance(exc.__context__, EOFError):  # Ctrl-D: Click raises Abort for both
            return False
        interrupted(False, request_id)


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
    width: WidthTyped | None = None,
) -> AnswerReport:
    """Answer through the application layer (:func:`wisp.program.writes.answer_typed`): refusals
    exit 1 (nothing written); a store that cannot take a keep exits 2; Ctrl-C says whether
    the answer was written. No ID typed: see :func:`chosen_id`."""
    return answer_typed(
        command,
        chosen_id(typed_id, command, kind),
        kind,
        decision,
        text=text,
        literal=literal,
        reason=reason,
        as_json=as_json,
        render=render,
        width=width,
    )


def width_typed(width: Width | None, prefix: str | None, path: str | None) -> WidthTyped | None:
    """`--width`, `--prefix` and `--path` as typed, for :func:`answer_from_terminal` (None:
    the exact call). A prefix is split into words as a shell would split it."""
    if width is None:
        if prefix is not None or path is not None:
            raise typer.BadParameter("name the width too: `--width command` or `--width file`.")
        return None
    words = None
    if prefix is not None:
        import shlex

        try:
            words = tuple(shlex.split(prefix))
        except ValueError as exc:
            raise typer.BadParameter(f"{prefix[:40]!r}: {exc}", param_hint="--prefix") from None
    return (width, words, path)


JsonFlag = Annotated[
    bool, typer.Option("--json", help="What came of the answer, as one JSON object.")
]


def question_answered(report: AnswerReport) -> str:
    """What was recorded for a question, as said back: the text (made visible), and which
    option it is, so `wisp questions answer ID 2` says what 2 was."""
    from pending import QuestionBinding

    text = report.answer.text or ""
    binding = report.request.binding
    options = (binding.options or ()) if isinstance(binding, QuestionBinding) else ()
    which = f" (option {options.index(text) + 1})" if text in options else ""
    return f'answered "{visible(text)}"{which}'


WIDTH_HELP = (
    "How wide the approval reaches, if the request offers it (`wisp show ID` says "
    "what it offers): exact (the default: this call), command (this command with any "
    "arguments: its first words), file (edits to this file), project (edits in this "
    "project). Not for once; a call asked every time takes none."
)
WidthOption = Annotated[
    Width | None,
    typer.Option("--width", parser=choice_of(Width), metavar=choices(Width), help=WIDTH_HELP),
]
PrefixOption = Annotated[
    str | None,
    typer.Option(
        "--prefix",
        metavar="WORDS",
        help="With --width command, where several are offered: which command's first words.",
    ),
]
PathOption = Annotated[
    str | None,
    typer.Option(
        "--path", metavar="PATH", help="With --width file, where several are offered: which."
    ),
]
