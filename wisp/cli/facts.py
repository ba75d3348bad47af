"""`wisp facts …`: ask to keep a fact, keep or drop it from any terminal, forget a kept one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pending import Decision, Kind, Outcome, PendingError, format_time
from wisp import EntryPoint, wisp_home
from wisp._text import one_line, visible
from wisp.cli._answer import JsonFlag, answer_from_terminal, chosen_id, optional_id_argument
from wisp.cli._ask import asking, how_to_answer
from wisp.cli._common import (
    command_group,
    config_or_fail,
    fail,
    me,
    open_channel,
    out,
    print_json,
    refuse,
    require_terminal,
    require_text,
    say,
    tell,
)
from wisp.cli._listing import pending_command, show_rows
from wisp.cli.show import SHOW_EXAMPLES, show_command
from wisp.kinds import view
from wisp.kinds.fact import also_kept

if TYPE_CHECKING:
    from pending import FactBinding
    from wisp import AnswerReport, Fact

# The stores, the ID lookup and the answering side are imported by the commands that use
# them: `wisp facts pending` on an empty channel loads none of them (wisp.cli._listing).

FACTS = view(Kind.FACT)
KEEP, DROP = FACTS.answering

facts_app = command_group(
    "Permanent facts: only you keep them. Ask from a script; keep or drop from any "
    "terminal, even after the asking program has stopped.",
    no_args_is_help=True,
    epilog=f"""Examples:
  wisp facts pending
  {KEEP.line("9d1c")}
  wisp facts list
  wisp facts forget p3e8""",
)


def _said(binding: FactBinding) -> str:
    return visible(f"{binding.subject} {binding.name} = {binding.value}")


def answer_fact(typed_id: str | None, decision: Decision, as_json: bool) -> None:
    command = (KEEP if decision == Decision.KEEP else DROP).invocation
    request_id = chosen_id(typed_id, command, Kind.FACT)
    require_terminal(command)  # before anything is read
    differs = _contradicting(request_id) if decision == Decision.KEEP else []
    report = answer_from_terminal(
        command, request_id, Kind.FACT, decision, as_json=as_json, render=_report
    )
    settled = report.settled
    kept = settled is not None and settled.outcome is Outcome.ANSWERED
    if decision == Decision.KEEP and kept:
        for fact in differs:
            tell(f"wisp: note: {visible(also_kept(fact.said, fact.id))}")


def _contradicting(typed_id: str) -> list[Fact]:
    """The kept facts a keep of this request would contradict (read before answering, so a
    warning can follow; the answer itself decides nothing here)."""
    from wisp import contradicted
    from wisp.program.lookup import LookupRefused, find_request

    try:
        with open_channel() as channel:
            return contradicted(find_request(channel, typed_id).request, channel.home)
    except (LookupRefused, PendingError):
        return []  # answering says what is wrong, in its own words


def _report(report: AnswerReport) -> None:
    from pending import FactBinding
    from wisp import AnswerFate

    binding = report.request.binding
    assert isinstance(binding, FactBinding)
    decision, request_id, said = report.answer.decision, report.request.id, _said(binding)
    settled = report.settled
    if settled is None:
        if report.apply_error is not None:
            tell(
                f"wisp: your answer is recorded, but {report.apply_error.rstrip('.')}. It will "
                "be applied once the store can be written: run `wisp pending sweep` then."
            )
            return
        if report.asker is AnswerFate.GONE:
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
        return
    if decision == Decision.KEEP:
        say(f"kept {said} as permanent fact {settled.result} ({request_id}){again}")
    else:
        say(f"dropped {said} ({request_id}); it stays where it was, not permanent{again}")


@facts_app.command(
    "keep", epilog=f"Examples:\n  {KEEP.line('9d1c2b3a4f5e6d7c')}\n  {KEEP.line('9d1c')}"
)
def keep(
    request_id: Annotated[str | None, optional_id_argument(Kind.FACT)] = None,
    as_json: JsonFlag = False,
) -> None:
    """Keep a fact as permanent (yours).

    Only from a terminal. If you already keep another value for the same subject and name,
    you are told so (both are then kept: `wisp facts forget` removes one). Exit 0 answered,
    1 refused (nothing written) or failed, 2 error (the store cannot be used)."""
    answer_fact(request_id, Decision.KEEP, as_json)


@facts_app.command("drop", epilog=f"Example:\n  {DROP.line('9d1c')}")
def drop(
    request_id: Annotated[str | None, optional_id_argument(Kind.FACT)] = None,
    as_json: JsonFlag = False,
) -> None:
    """Drop a fact request: the fact stays where it was.

    Only from a terminal. Exit 0 answered, 1 refused (nothing written), 2 error."""
    answer_fact(request_id, Decision.DROP, as_json)


facts_app.command("pending", epilog="Examples:\n  wisp facts pending\n  wisp facts pending --json")(
    pending_command(
        Kind.FACT, "Fact requests waiting for you (handed-over ones too: no time limit)."
    )
)
facts_app.command("show", epilog=SHOW_EXAMPLES.replace("wisp show", "wisp facts show"))(
    show_command(Kind.FACT)
)


def _stored_facts() -> list[Fact]:
    from wisp import FactStore, StoreError

    try:
        return FactStore(wisp_home()).list()
    except StoreError as exc:
        fail(str(exc))


@facts_app.command("list", epilog="Examples:\n  wisp facts list\n  wisp facts list --json")
def list_facts(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """Your permanent facts."""
    from wisp.cli._layout import Column, Role

    facts = _stored_facts()
    show_rows(
        [f.to_json() for f in facts],
        (
            Column(header="FACT", role=Role.KEY),
            Column(header="SUBJECT"),
            Column(header="NAME"),
            Column(header="VALUE", role=Role.FLEX),
            Column(header="SOURCE", role=Role.FIELD, label="source"),
            Column(header="KEPT", role=Role.FIELD, label="kept"),
        ),
        [
            (f.id, f.subject, f.name, [("value", f.value)], f.source, format_time(f.kept_at))
            for f in facts
        ],
        empty="No permanent facts yet.",
        as_json=as_json,
    )


@facts_app.command(
    "forget",
    epilog="Examples:\n  wisp facts forget p3e8a91c0\n  wisp facts forget p3e8   (a unique prefix)",
)
def forget(
    fact_id: Annotated[
        str,
        typer.Argument(
            metavar="FACT_ID",
            help="The permanent fact's ID (from `wisp facts list`), or its start: the p and "
            "at least 4 characters after it.",
            autocompletion=lambda incomplete: _fact_ids(incomplete),
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="The fact removed, as one JSON object.")
    ] = False,
) -> None:
    """Remove one of your permanent facts.

    Only from a terminal: only you keep facts, and only you forget them. Recorded in the
    audit log (fact.scope.changed, to "forgotten"). Exit 0 forgotten, 1 refused (nothing
    written), 2 error (the store cannot be used)."""
    require_terminal("wisp facts forget")
    from wisp import FactStore, StoreError
    from wisp.program.lookup import LookupRefused, typed_hex, unique

    try:
        typed = typed_hex(fact_id, what="fact", exact=True)
        chosen = unique(
            typed, ((f.id, visible(one_line(f.said, 40))) for f in _stored_facts()), what="fact"
        )
    except LookupRefused as exc:
        refuse(str(exc))
    try:
        removed = FactStore(wisp_home()).forget(chosen, entry_point=EntryPoint.FACTS)
    except StoreError as exc:
        fail(f"{exc} Nothing was removed.")
    if removed is None:  # removed by someone else since it was listed
        refuse(f"no fact {chosen} any more: `wisp facts list` lists your permanent facts.")
    if as_json:
        print_json(removed.to_json())
        return
    say(f"forgot {removed.id}: {visible(removed.said)} is no longer a permanent fact.")


def _fact_ids(incomplete: str) -> list[tuple[str, str]]:
    from wisp import FactStore

    try:
        facts = FactStore(wisp_home()).list()
    except Exception:  # a completion must never print an error into the command line
        return []
    return [(f.id, "fact") for f in facts if f.id.startswith(incomplete.lower())]


@facts_app.command(
    "request",
    epilog='Examples:\n  wisp facts request release codename "BLUE HERON"\n'
    "  wisp facts request --source README.md shop database postgres",
)
def request_fact(
    subject: Annotated[str, typer.Argument(metavar="SUBJECT", help="What the fact is about.")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="Which of its properties.")],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="Its value.")],
    source: Annotated[
        str, typer.Option("--source", metavar="TEXT", help="Where the fact comes from.")
    ] = "wisp facts request",
    as_json: Annotated[bool, typer.Option("--json", help="The result as JSON.")] = False,
) -> None:
    """Ask the person to keep a fact as permanent; returns at once, printing the request ID.

    The request waits, with no time limit, until they keep or drop it. Exit 0 asked (or
    already kept), 1 refused, 2 error."""
    for text, what in ((subject, "the subject"), (name, "the name"), (value, "the value")):
        require_text(text, what, '`wisp facts request release codename "BLUE HERON"`')
    config = config_or_fail()
    # The asking side loads only when it asks.
    from wisp import FactKeeper, FactRefused, FactScope, KeepState, StoreError, new_fact_id

    with asking(EntryPoint.FACTS, config) as asker:
        keeper = FactKeeper(asker)
        try:
            asked = keeper.request(
                fact_id=new_fact_id(FactScope.SESSION),  # this command's session's
                subject=subject,
                name=name,
                value=value,
                source=source,
                proposed_by="wisp facts request",
            )
        except FactRefused as exc:
            refuse(str(exc))
        except StoreError as exc:  # the store cannot be used: an error, as documented (2)
            fail(f"{exc} Nothing was filed.")
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
    said = visible(f"{subject} {name} = {value}")
    if asked.state is KeepState.KEPT and asked.fact is not None:
        tell(f"wisp: {said} is already a permanent fact ({asked.fact.id}); nothing to ask.")
        out.print(asked.fact.id)
        return
    again = "" if asked.new else " (already waiting: the same request)"
    request_id = str(asked.request_id)  # a request waits: it has an ID
    how = how_to_answer(Kind.FACT, request_id)
    lines = [f"wisp: asked you to keep {said}{again}", *how, "it waits with no time limit"]
    tell("\n  ".join(lines))
    out.print(asked.request_id)


_ = me  # the person, for messages that name them
