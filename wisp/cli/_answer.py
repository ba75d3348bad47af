"""The person's answer from a terminal: one path for approve, deny, answer, decline, keep and
drop. It parses nothing and decides nothing: :class:`wisp.Answerer` does; this renders."""

from __future__ import annotations

from collections.abc import Callable

import typer

from pending import KINDS, AlreadyAnswered, Decision, Kind, Outcome, PendingError, Via, WrongKind
from wisp._answering import Answerer, AnswerReport, AskerWatch
from wisp._audit import EntryPoint
from wisp._store import StoreError
from wisp.cli._common import config_or_fail, fail, open_channel, refuse, require_terminal, say
from wisp.cli._exit import ExitCode


def answer_from_terminal(
    command: str,
    request_id: str,
    kind: Kind,
    decision: Decision,
    *,
    text: str | None = None,
    reason: str | None = None,
    render: Callable[[AnswerReport], None],
) -> None:
    """Answer through the application layer; refusals exit 1 (nothing written), a store that
    cannot take a keep exits 2."""
    require_terminal(command)  # before anything, the store's probe included
    config = config_or_fail()
    with open_channel() as channel:
        answerer = Answerer(
            channel,
            via=Via.CLI,
            entry_point=EntryPoint(KINDS[kind].entry_point),
            wait_s=config["answer.waitSeconds"],
            liveness_recheck_s=config["watch.livenessSeconds"],
        )
        try:
            report = answerer.answer(request_id, decision, kind=kind, text=text, reason=reason)
        except WrongKind as exc:
            refuse(
                f"request {request_id} is a {exc.kind} request, not a {exc.asked_as} "
                f"request: answer it with {KINDS[exc.kind].how_to_answer(request_id)}."
            )
        except PendingError as exc:
            refuse(str(exc))
        except StoreError as exc:
            fail(f"{exc} The request still waits; nothing was written.")
    if not report.won and not report.applied:
        refuse(str(AlreadyAnswered(report.answer)))
    render(report)


def render_command_or_question(verb: str) -> Callable[[AnswerReport], None]:
    """How an answer to a command or a question reads: what the asker made of it."""

    def render(report: AnswerReport) -> None:
        said = f"{verb} ({report.request.id})"
        settled = report.settled
        if settled is not None:
            if settled.outcome is not Outcome.ANSWERED:
                reason_text = f": {settled.reason}" if settled.reason else ""
                say(f"{said}, but it ended {settled.outcome}{reason_text}.")
                raise typer.Exit(int(ExitCode.NO))
            say(f"{said}; the asker has it.")
        elif report.asker is AskerWatch.GONE:
            say(
                f"{said}, but no asker is watching: the program that asked has "
                "stopped, so nothing will act on it."
            )
        else:
            say(
                f"{said}; the asker has not picked it up yet. It will when it next "
                "looks; `wisp pending` shows it."
            )

    return render
