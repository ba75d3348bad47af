"""`wisp approvals …`: ask to run a command from a script; approve or deny from any terminal."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from pending import (
    APPROVALS,
    Decision,
    Kind,
    Outcome,
    PendingError,
    Request,
    format_time,
)
from wisp._asking import ApprovalGate
from wisp._audit import EntryPoint
from wisp._grants import GrantsError, GrantStore, is_grant_id
from wisp._home import wisp_home
from wisp._store import StoreError
from wisp._text import one_line, visible
from wisp.cli._answer import answer_from_terminal, render_command_or_question
from wisp.cli._ask import asking, timeout_or_fail, waiting_note
from wisp.cli._common import command_group, config_or_fail, fail, out, print_json, refuse, say, tell
from wisp.cli._exit import ExitCode
from wisp.cli._listing import pending_command, show_rows

approvals_app = command_group(
    "Command approvals: ask from a script; approve or deny from any terminal.",
    no_args_is_help=True,
)


@approvals_app.command("approve")
def approve(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The request's ID.")],
    scope: Annotated[
        str, typer.Option("--scope", help="once | session | project | always")
    ] = "once",
) -> None:
    """Approve a command: once, or with a standing scope. Only from a terminal."""
    if scope not in APPROVALS:
        fail(f"--scope takes one of {', '.join(APPROVALS)}, not {scope!r}.")
    answer_from_terminal(
        "wisp approvals approve",
        request_id,
        Kind.COMMAND,
        Decision(scope),
        render=render_command_or_question(f"approved {scope}"),
    )


@approvals_app.command("deny")
def deny(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The request's ID.")],
    reason: Annotated[str | None, typer.Option("--reason", help="Told to the asker.")] = None,
) -> None:
    """Deny a command. Only from a terminal."""
    answer_from_terminal(
        "wisp approvals deny",
        request_id,
        Kind.COMMAND,
        Decision.NO,
        reason=reason,
        render=render_command_or_question("denied"),
    )


approvals_app.command("pending")(pending_command(Kind.COMMAND, "Command approvals waiting."))


# --- grants ----------------------------------------------------------------------------


@approvals_app.command("grants")
def grants(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """Standing approvals (project and always) your answers have made."""
    try:
        found = GrantStore(wisp_home()).list()
    except GrantsError as exc:
        fail(str(exc))
    show_rows(
        [g.to_json() for g in found],
        [
            (
                g.id,
                g.scope,
                visible(g.command),
                visible(g.project or "anywhere"),
                format_time(g.granted_at),
            )
            for g in found
        ],
        columns=("GRANT", "SCOPE", "COMMAND", "WHERE", "GRANTED"),
        empty="No standing approvals.",
        as_json=as_json,
    )


@approvals_app.command("revoke")
def revoke(
    grant_id: Annotated[str, typer.Argument(metavar="GRANT_ID", help="From `grants`.")],
) -> None:
    """Remove a standing approval: that command will be asked about again."""
    if not is_grant_id(grant_id):
        refuse(f"{grant_id!r} is not a grant ID (like g1a2b3c4): see `wisp approvals grants`.")
    try:
        removed = GrantStore(wisp_home()).revoke(grant_id, entry_point=EntryPoint.APPROVALS)
    except GrantsError as exc:
        fail(str(exc))
    if removed is None:
        refuse(f"no grant {grant_id}: see `wisp approvals grants`.")
    say(f"revoked {removed.id}: {visible(removed.command)} will be asked about again.")


@approvals_app.command("request", context_settings={"allow_interspersed_args": False})
def request_approval(
    command: Annotated[
        list[str],
        typer.Argument(
            metavar="COMMAND",
            help="The command to approve, after -- (one argument: a shell line as it is).",
        ),
    ],
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Where it would run.")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why it should run.")] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", help="Seconds to wait (default approval.timeoutSeconds; 0 forever)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The verdict as JSON.")] = False,
) -> None:
    """Ask the person to approve a command, and wait. Exit 0 approved, 1 denied or withdrawn,
    124 timed out, 2 error."""
    config = config_or_fail()
    timeout_s = timeout_or_fail(timeout, config)
    text = command[0] if len(command) == 1 else shlex.join(command)
    where = str((cwd or Path.cwd()).resolve())

    def filed(request: Request) -> None:
        tell(
            f"wisp: asking you to approve: {one_line(text, 200)}  (in {visible(where)})\n"
            f"  approve: wisp approvals approve {request.id} [--scope {'|'.join(APPROVALS)}]\n"
            f"  deny:    wisp approvals deny {request.id} [--reason TEXT]\n"
            f"  {waiting_note(timeout_s)}"
        )

    with asking(EntryPoint.APPROVALS, config) as asker:
        try:
            approval = ApprovalGate(asker, timeout_s=timeout_s).request(
                text, where, reason=reason, on_filed=filed
            )
            outcome, scope, verdict_reason = approval.outcome, approval.scope, approval.reason
            request_id = approval.request_id
            grant = approval.grant.id if approval.grant and approval.grant.id != "session" else None
            approved = approval.approved
        except (PendingError, StoreError) as exc:
            fail(f"could not ask: {exc}")  # leaving `asking` withdraws what waits and closes
        except KeyboardInterrupt:
            endings = asker.withdraw()
            approved, outcome, scope, grant = False, Outcome.WITHDRAWN.value, None, None
            request_id = endings[0].request.id if endings else None
            verdict_reason = "withdrawn with Ctrl-C"
            if endings and endings[0].outcome is Outcome.ANSWERED and endings[0].decision:
                verdict_reason = "withdrawn with Ctrl-C after it was answered"
    if as_json:
        print_json(
            {
                "id": request_id,
                "approved": approved,
                "outcome": outcome,
                "scope": scope,
                "grant": grant,
                "reason": verdict_reason,
            }
        )
    elif approved:
        how = f"granted by {grant or 'this session'}" if outcome == "granted" else "approved"
        out.print(f"{how} {scope}" if outcome != "granted" else f"approved {scope} ({how})")
        if verdict_reason:
            tell(f"wisp: {verdict_reason}")
    else:
        word = {"answered": "denied", "timed-out": "timed out"}.get(outcome, outcome)
        say(word + (f": {verdict_reason}" if verdict_reason else ""))
    if approved:
        return
    raise typer.Exit(int(ExitCode.TIMED_OUT if outcome == "timed-out" else ExitCode.NO))
