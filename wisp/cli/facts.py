"""`wisp facts …`: ask to keep a fact, and keep or drop it from any terminal."""

from __future__ import annotations

import secrets
from typing import Annotated

import typer

from pending import Decision, FactBinding, Kind, Outcome, format_time
from wisp._answering import AnswerReport, AskerWatch
from wisp._audit import EntryPoint
from wisp._factstore import FactRefused, FactStore
from wisp._home import wisp_home
from wisp._keeper import FactKeeper
from wisp._store import StoreError
from wisp._text import one_line, visible
from wisp.cli._answer import answer_from_terminal
from wisp.cli._ask import asking
from wisp.cli._common import command_group, config_or_fail, fail, out, print_json, refuse, say, tell
from wisp.cli._exit import ExitCode
from wisp.cli._listing import pending_command, show_rows

facts_app = command_group(
    "Permanent facts: only you keep them. Ask from a script; keep or drop from any "
    "terminal, even after the asking program has stopped.",
    no_args_is_help=True,
)


def _said(binding: FactBinding) -> str:
    return one_line(f"{binding.subject} {binding.name} = {binding.value}", 120)


def answer_fact(request_id: str, decision: Decision) -> None:
    answer_from_terminal(f"wisp facts {decision}", request_id, Kind.FACT, decision, render=_report)


def _report(report: AnswerReport) -> None:
    binding = report.request.binding
    assert isinstance(binding, FactBinding)
    decision, request_id, said = report.answer.decision, report.request.id, _said(binding)
    settled = report.settled
    if settled is None:
        if report.apply_error is not None:
            fail(
                f"your answer is recorded, but {report.apply_error.rstrip('.')}. It will be "
                "applied once the store can be written: run `wisp pending sweep` then."
            )
        if report.asker is AskerWatch.GONE:
            say(f"{decision} {said} ({request_id}); nobody applied it yet: `wisp pending sweep`.")
            return
        say(
            f"{decision} {said} ({request_id}); the program that asked will apply "
            "it. `wisp facts list` shows it once kept."
        )
        return
    again = " (your earlier answer, applied now)" if report.applied and not report.won else ""
    if settled.outcome is not Outcome.ANSWERED:
        reason = f": {settled.reason}" if settled.reason else ""
        say(
            f"{decision} {said} ({request_id}), but it ended {settled.outcome}"
            f"{reason}. Nothing was kept."
        )
        raise typer.Exit(int(ExitCode.NO))
    if decision == Decision.KEEP:
        say(f"kept {said} as permanent fact {settled.result} ({request_id}){again}")
    else:
        say(f"dropped {said} ({request_id}); it stays where it was, not permanent{again}")


@facts_app.command("keep")
def keep(request_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Keep a fact as permanent (yours). Only from a terminal."""
    answer_fact(request_id, Decision.KEEP)


@facts_app.command("drop")
def drop(request_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Drop a fact request: the fact stays where it was. Only from a terminal."""
    answer_fact(request_id, Decision.DROP)


facts_app.command("pending")(
    pending_command(
        Kind.FACT, "Fact requests waiting for you (handed-over ones too: no time limit)."
    )
)


@facts_app.command("list")
def list_facts(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """Your permanent facts."""
    try:
        facts = FactStore(wisp_home()).list()
    except StoreError as exc:
        fail(str(exc))
    show_rows(
        [f.to_json() for f in facts],
        [
            (
                f.id,
                visible(f.subject),
                visible(f.name),
                visible(f.value),
                visible(f.source),
                format_time(f.kept_at),
            )
            for f in facts
        ],
        columns=("FACT", "SUBJECT", "NAME", "VALUE", "SOURCE", "KEPT"),
        empty="No permanent facts yet.",
        as_json=as_json,
    )


@facts_app.command("request")
def request_fact(
    subject: Annotated[str, typer.Argument(metavar="SUBJECT")],
    name: Annotated[str, typer.Argument(metavar="NAME")],
    value: Annotated[str, typer.Argument(metavar="VALUE")],
    source: Annotated[
        str, typer.Option("--source", help="Where the fact comes from.")
    ] = "wisp facts request",
    as_json: Annotated[bool, typer.Option("--json", help="The result as JSON.")] = False,
) -> None:
    """Ask the person to keep a fact as permanent; returns at once, printing the request ID.
    The request waits, with no time limit, until they keep or drop it."""
    config = config_or_fail()
    with asking(EntryPoint.FACTS, config) as asker:
        keeper = FactKeeper(asker)
        try:
            asked = keeper.request(
                fact_id="s" + secrets.token_hex(4),
                subject=subject,
                name=name,
                value=value,
                source=source,
                proposed_by="wisp facts request",
            )
        except (FactRefused, StoreError) as exc:
            refuse(str(exc))
        finally:
            keeper.close()
    if as_json:
        print_json(
            {
                "state": asked.state,
                "id": asked.request_id,
                "new": asked.new,
                "uri": asked.uri,
                "fact": asked.fact.to_json() if asked.fact else None,
            }
        )
        return
    if asked.state == "kept" and asked.fact is not None:
        tell(
            f"wisp: {one_line(subject)} {one_line(name)} = {one_line(value)} is "
            f"already a permanent fact ({asked.fact.id}); nothing to ask."
        )
        out.print(asked.fact.id)
        return
    again = "" if asked.new else " (already waiting: the same request)"
    tell(
        f"wisp: asked you to keep {one_line(subject)} {one_line(name)} = {one_line(value)}"
        f"{again}\n  keep: wisp facts keep {asked.request_id}\n"
        f"  drop: wisp facts drop {asked.request_id}\n  it waits with no time limit"
    )
    out.print(asked.request_id)
