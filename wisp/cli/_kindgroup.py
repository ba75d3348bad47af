"""The command group of a kind that has no hand-written one: `wisp GROUP pending|show|VERB`.

Built from the kind's view (:mod:`wisp.kinds`) alone, so a kind added as docs/architecture.md
says is listed, shown and answered from a terminal without a line of CLI code: `pending` and
`show` narrowed to the kind, and one command per answering command of its view (a command
that can give several decisions takes `--as DECISION`, the first by default; one that denies
takes `--reason TEXT`).

No `from __future__ import annotations` here: typer reads each command's annotations, and
those name the kind this group was built for, a local of the builder.
"""

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from pending import KINDS, Decision
from wisp.cli._answer import (
    JsonFlag,
    PathOption,
    PrefixOption,
    WidthOption,
    answer_from_terminal,
    optional_id_argument,
    width_typed,
)
from wisp.cli._common import command_group
from wisp.cli._listing import pending_command
from wisp.cli.show import show_command
from wisp.kinds import Answering, KindView
from wisp.program.writes import render_command_or_question

if TYPE_CHECKING:  # the answering side is loaded by an answer, not by the group's listing
    from wisp import AnswerReport


def kind_group(kind_view: KindView) -> typer.Typer:
    """The group that lists, shows and answers *kind_view*'s kind."""
    group = command_group(f"Requests of kind {kind_view.kind.value}: {kind_view.noun}.")
    group.command("pending")(
        pending_command(kind_view.kind, f"Requests of kind {kind_view.kind.value} waiting.")
    )
    group.command("show")(show_command(kind_view.kind))
    for answering in kind_view.answering:
        group.command(answering.label)(_verb(kind_view, answering))
    return group


def _verb(kind_view: KindView, answering: Answering) -> Callable[..., None]:
    """One answering command: `--as DECISION` only where it can give several decisions, and
    `--reason TEXT` where it denies (the reason is told to the asker, as `wisp approvals deny
    --reason` tells it)."""
    kind, label = kind_view.kind, answering.label
    default = answering.decisions[0]
    choices = ", ".join(answering.decisions)

    def answer(
        request_id: Annotated[str | None, optional_id_argument(kind)] = None,
        decision: Annotated[
            str, typer.Option("--as", metavar="DECISION", help=f"One of: {choices}.")
        ] = default.value,
        reason: Annotated[
            str | None, typer.Option("--reason", metavar="TEXT", help="Told to the asker.")
        ] = None,
        width: WidthOption = None,
        prefix: PrefixOption = None,
        path: PathOption = None,
        as_json: JsonFlag = False,
    ) -> None:
        chosen = _decision(decision, answering)
        answer_from_terminal(
            f"wisp {kind_view.group} {label}",
            request_id,
            kind,
            chosen,
            reason=reason,
            as_json=as_json,
            render=_render(kind_view, chosen),
            width=width_typed(width, prefix, path),
        )

    signature = inspect.signature(answer)
    dropped = {"decision"} if len(answering.decisions) == 1 else set()
    if Decision.NO not in answering.decisions:
        dropped.add("reason")
    # `--width` (and which prefix or path) where the kind's approvals may be wider than the
    # exact call, on the command that approves (docs/cli.md, "Widths").
    if not KINDS[kind].widths or answering.decisions == (Decision.NO,):
        dropped |= {"width", "prefix", "path"}
    answer.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for n, p in signature.parameters.items() if n not in dropped]
    )
    answer.__doc__ = (
        f"Answer {label} ({choices}). Only from a terminal."
        if len(answering.decisions) > 1
        else f"Answer {label}. Only from a terminal."
    )
    return answer


def _decision(typed: str, answering: Answering) -> Decision:
    for decision in answering.decisions:
        if decision.value == typed:
            return decision
    choices = ", ".join(answering.decisions)
    raise typer.BadParameter(f"{typed!r} is not one of: {choices}.", param_hint="--as")


def _render(kind_view: KindView, decision: Decision) -> "Callable[[AnswerReport], None]":
    word = kind_view.answered_word(decision)

    def said(report: "AnswerReport") -> str:
        """The kind's word for the answer, and its width when wider than the exact call."""
        from pending import EXACT_WIDTH, answer_width, width_words

        named = answer_width(report.answer.width)
        return word if named == EXACT_WIDTH else f"{word} for {width_words(named)}"

    return render_command_or_question(said)
