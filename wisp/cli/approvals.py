"""`wisp approvals …`: ask to run a command from a script; approve or deny from any terminal."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple, NoReturn

import typer

from pending import (
    Decision,
    Kind,
    Outcome,
    PendingError,
    Scope,
    format_time,
)
from wisp import EntryPoint, wisp_home
from wisp._text import one_line, visible
from wisp.cli._answer import (
    JsonFlag,
    PathOption,
    PrefixOption,
    WidthOption,
    answer_from_terminal,
    optional_id_argument,
    width_typed,
)
from wisp.cli._ask import (
    TimeoutOption,
    asking,
    command_prompt,
    timeout_in_effect,
    withdraw_on_signal,
    withdrawn_how,
)
from wisp.cli._common import (
    choice_of,
    choices,
    command_group,
    config_or_fail,
    fail,
    out,
    print_json,
    refuse,
    require_text,
    say,
    tell,
)
from wisp.cli._exit import ExitCode
from wisp.cli._listing import pending_command, show_rows
from wisp.cli.show import SHOW_EXAMPLES, show_command
from wisp.kinds import view
from wisp.program.writes import render_command_or_question

if TYPE_CHECKING:
    from pending import Request
    from wisp import AnswerReport, ApprovalOutcome, Config

COMMANDS = view(Kind.COMMAND)
APPROVE, DENY = COMMANDS.answering

approvals_app = command_group(
    "Command approvals: ask from a script; approve or deny from any terminal.",
    no_args_is_help=True,
    epilog=f"""Examples:
  wisp approvals pending
  {APPROVE.line("3f9c")}
  wisp approvals request -- make deploy""",
)

SCOPE_HELP = (
    "once: this request only. session: also the same command from the same asking program, "
    "while it runs (for `wisp approvals request`, which asks once, that is this request "
    "only). project: the same command anywhere in this project, kept. always: the same "
    "command anywhere, kept. Default: once."
)


@approvals_app.command(
    "approve",
    epilog=f"""Examples:
  {APPROVE.line("3f9c0a1b2c3d4e5f")}
  {APPROVE.line("3f9c"):<46}(a unique prefix)
  {APPROVE.line("3f9c") + " --scope project":<46}(and the same command in this project)
  {APPROVE.line("3f9c")} --scope project --width command
  {"":<46}(and this command with any arguments, in this project)""",
)
def approve(
    request_id: Annotated[str | None, optional_id_argument(Kind.COMMAND)] = None,
    scope: Annotated[
        Scope,
        typer.Option("--scope", parser=choice_of(Scope), metavar=choices(Scope), help=SCOPE_HELP),
    ] = Scope.ONCE,
    width: WidthOption = None,
    prefix: PrefixOption = None,
    path: PathOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Approve a command, once or with a standing scope, for this call or wider.

    Only from a terminal. After answering, waits up to answer.waitSeconds for the asker and
    says what it made of the answer. Exit 0 answered, 1 refused (nothing written: a scope or
    width the request does not offer included) or the request ended otherwise, 2 error."""
    answer_from_terminal(
        APPROVE.invocation,
        request_id,
        Kind.COMMAND,
        Decision(scope.value),
        as_json=as_json,
        render=render_command_or_question(approved_words),
        width=width_typed(width, prefix, path),
    )


def approved_words(report: AnswerReport) -> str:
    r"""What an approval recorded, in words: its scope, and its width when wider than the
    exact call (`approved always for \`npm test *\``)."""
    from pending import EXACT_WIDTH, answer_width, width_words

    named = answer_width(report.answer.width)
    wider = "" if named == EXACT_WIDTH else f" for {width_words(named)}"
    return f"approved {report.answer.decision}{wider}"


@approvals_app.command(
    "deny",
    epilog=f"""Examples:
  {DENY.line("3f9c0a1b2c3d4e5f")}
  {DENY.line("3f9c")} --reason "not on a Friday\"""",
)
def deny(
    request_id: Annotated[str | None, optional_id_argument(Kind.COMMAND)] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", metavar="TEXT", help="Told to the asker.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Deny a command.

    Only from a terminal. Exit 0 answered, 1 refused (nothing written), 2 error."""
    answer_from_terminal(
        DENY.invocation,
        request_id,
        Kind.COMMAND,
        Decision.NO,
        reason=reason,
        as_json=as_json,
        render=render_command_or_question("denied"),
    )


approvals_app.command(
    "pending", epilog="Examples:\n  wisp approvals pending\n  wisp approvals pending --json"
)(pending_command(Kind.COMMAND, "Command approvals waiting for you."))
approvals_app.command("show", epilog=SHOW_EXAMPLES.replace("wisp show", "wisp approvals show"))(
    show_command(Kind.COMMAND)
)


# --- grants ----------------------------------------------------------------------------


@approvals_app.command(
    "grants", epilog="Examples:\n  wisp approvals grants\n  wisp approvals grants --json"
)
def grants(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """Standing approvals (project and always) your answers have made, and the session
    approvals kept for an agent's session (until it ends, or 24 hours): each with what it
    covers (the exact call, or its pattern: `npm test *`, edits to a file, edits in a
    project), its scope, where it reaches, and the request and person it came from."""
    # The grants store and the ID lookup are imported by the commands that use them: a
    # listing of approvals pays for neither (issue 23).
    from wisp import GrantsError, GrantStore
    from wisp.cli._layout import Column, Role

    try:
        found = GrantStore(wisp_home()).list(sessions=True)
    except GrantsError as exc:
        fail(str(exc))
    show_rows(
        [{**g.to_json(), "width": g.width.value, "pattern": g.pattern} for g in found],
        (
            Column(header="GRANT", role=Role.KEY),
            Column(header="SCOPE"),
            Column(header="WIDTH"),
            Column(header="COVERS", role=Role.FLEX),
            Column(header="WHERE", role=Role.FIELD, label="where"),
            Column(header="FROM", role=Role.FIELD, label="from"),
            Column(header="GRANTED", role=Role.FIELD, label="granted"),
        ),
        [
            (
                g.name,
                g.scope,
                g.width,
                [("covers", g.pattern), *([("with", g.options)] if g.options else [])],
                _where(g.project, g.thread),
                f"request {g.request} by {g.user}",
                format_time(g.granted_at),
            )
            for g in found
        ],
        empty="No standing approvals.",
        as_json=as_json,
    )


def _where(project: str | None, thread: str | None) -> str:
    """Where a grant reaches, in words: its project, an agent's session, or anywhere."""
    if thread is not None:
        return f"session {thread}"
    return project or "anywhere"


@approvals_app.command("revoke", epilog="Example:\n  wisp approvals revoke g1a2b3c4d")
def revoke(
    grant_id: Annotated[
        str,
        typer.Argument(
            metavar="GRANT_ID",
            help="The grant's ID, from `wisp approvals grants`, or its start: the g and at "
            "least 4 characters after it.",
        ),
    ],
) -> None:
    """Remove a standing approval: that command will be asked about again."""
    from wisp import GrantsError, GrantStore
    from wisp.program.lookup import LookupRefused, typed_hex, unique

    store = GrantStore(wisp_home())
    try:
        typed = typed_hex(grant_id, what="grant", exact=True)
        chosen = unique(
            typed,
            (
                (g.id, f"{g.scope}: {visible(one_line(g.pattern, 40))}")
                for g in store.list(sessions=True)
                if g.id is not None
            ),
            what="grant",
        )
        removed = store.revoke(chosen, entry_point=EntryPoint.APPROVALS)
    except LookupRefused as exc:
        refuse(str(exc))
    except GrantsError as exc:
        fail(str(exc))
    if removed is None:  # revoked by someone else since it was listed
        refuse(
            f"no grant {chosen} any more: `wisp approvals grants` lists your standing approvals."
        )
    say(f"revoked {removed.id}: {visible(removed.pattern)} will be asked about again.")


def _print_verdict(
    request_id: str | None,
    *,
    approved: bool,
    outcome: StrEnum,
    scope: Scope | None = None,
    grant: str | None = None,
    reason: str | None,
) -> None:
    """`wisp approvals request --json`'s one verdict (docs/cli.md, "Asking")."""
    print_json(
        {
            "id": request_id,
            "approved": approved,
            "outcome": outcome,
            "scope": scope,
            "grant": grant,
            "reason": reason,
        }
    )


def _could_not_ask(exc: Exception, request_id: str | None, *, as_json: bool) -> NoReturn:
    """Exit 2 saying what failed; with --json, as a verdict too (a script reads the shape it
    always reads). Leaving `asking` then withdraws what waits and closes the channel."""
    if as_json:
        _print_verdict(
            request_id, approved=False, outcome=Outcome.FAILED, reason=f"could not ask: {exc}"
        )
    fail(f"could not ask: {exc}")


@approvals_app.command(
    "request",
    context_settings={"allow_interspersed_args": False},
    epilog="""Examples:
  wisp approvals request -- make deploy
  wisp approvals request --reason "ship 1.4" --timeout 300 -- make deploy
  wisp approvals request --json -- 'rm -rf build'   (one argument: a shell line)""",
)
def request_approval(
    command: Annotated[
        list[str],
        typer.Argument(
            metavar="-- COMMAND...",
            help="The command to approve, after -- (one argument is a shell line, as it is; "
            "several are joined as a shell would quote them).",
        ),
    ],
    cwd: Annotated[
        Path | None,
        typer.Option("--cwd", metavar="DIR", help="Where it would run (default: here)."),
    ] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", metavar="TEXT", help="Why it should run (shown).")
    ] = None,
    timeout: TimeoutOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The verdict as JSON.")] = False,
) -> None:
    """Ask the person to approve a command, and wait.

    Tells you on stderr how to answer it; stdout gets the verdict. Exit 0 approved, 1 denied
    or withdrawn (Ctrl-C withdraws), 124 timed out, 2 error (a bad --timeout included)."""
    config = config_or_fail()
    timeout_s = timeout_in_effect(timeout, config)
    import shlex  # here: only a request asked with its words apart needs it

    text = command[0] if len(command) == 1 else shlex.join(command)
    require_text(text, "the command", "`wisp approvals request -- make deploy`")
    where = str((cwd or Path.cwd()).resolve())
    verdict = _ask_approval(
        config, text, where, reason=reason, timeout_s=timeout_s, as_json=as_json
    )
    if as_json:
        _print_verdict(
            verdict.request_id,
            approved=verdict.approved,
            outcome=verdict.outcome,
            scope=verdict.scope,
            grant=verdict.grant,
            reason=verdict.reason,
        )
    else:
        _say_verdict(verdict)
    if verdict.approved:
        return
    from wisp import ApprovalOutcome  # loaded already: it asked

    timed_out = verdict.outcome is ApprovalOutcome.TIMED_OUT
    raise typer.Exit(int(ExitCode.TIMED_OUT if timed_out else ExitCode.NO))


class _Verdict(NamedTuple):
    """How `wisp approvals request` ended: the request asked (None: none was filed), whether
    the command may run, the outcome, the scope and grant of an approval, and why. (A named
    tuple: this command's start loads no attrs, tests/test_cli_imports.)"""

    request_id: str | None
    approved: bool
    outcome: ApprovalOutcome
    scope: Scope | None
    grant: str | None
    reason: str | None


def _ask_approval(
    config: Config, text: str, where: str, *, reason: str | None, timeout_s: float, as_json: bool
) -> _Verdict:
    """Ask the person to approve *text* (to run in *where*), telling them how on stderr, and
    wait: the verdict, or withdrawn on Ctrl-C; exit 2 if it could not be asked."""
    filed_ids: list[str] = []

    told = command_prompt(
        f"wisp: asking you to approve (in {visible(where)}):", text, reason, timeout_s
    )

    def filed(request: Request) -> None:
        filed_ids.append(request.id)
        told(request)

    # The asking side loads only when it asks.
    from wisp import ApprovalGate, ApprovalOutcome, StoreError

    with asking(EntryPoint.APPROVALS, config) as asker:
        try:
            approval = ApprovalGate(asker, timeout_s=timeout_s).request(
                text, where, reason=reason, on_filed=filed
            )
        except (PendingError, StoreError) as exc:
            _could_not_ask(exc, filed_ids[0] if filed_ids else None, as_json=as_json)
        except KeyboardInterrupt as interrupt:  # Ctrl-C, SIGTERM or SIGHUP
            endings = withdraw_on_signal(asker, filed_ids)
            return _Verdict(
                request_id=endings[0].request.id if endings else None,
                approved=False,
                outcome=ApprovalOutcome.WITHDRAWN,
                scope=None,
                grant=None,
                reason=withdrawn_how(interrupt, endings),
            )
    return _Verdict(
        request_id=approval.request_id,
        approved=approval.approved,
        outcome=approval.outcome,
        scope=approval.scope,
        grant=approval.grant.id if approval.grant else None,  # a session grant has none
        reason=approval.reason,
    )


def _say_verdict(verdict: _Verdict) -> None:
    """The verdict in words: approved on stdout, a refusal's why on stderr."""
    from wisp import STORED_SCOPES, ApprovalOutcome

    approved, outcome, scope, grant = (
        verdict.approved,
        verdict.outcome,
        verdict.scope,
        verdict.grant,
    )
    if approved and outcome is ApprovalOutcome.ANSWERED and scope in STORED_SCOPES and not grant:
        # The grant could not be saved (the store said why: the verdict's reason, on stderr).
        out.print(f"approved once: the {scope} grant was not saved")
        tell(f"wisp: {verdict.reason}")
    elif approved:
        granted = outcome is ApprovalOutcome.GRANTED
        how = f"granted by {grant or 'this session'}" if granted else "approved"
        out.print(f"approved {scope} ({how})" if granted else f"{how} {scope}")
        if verdict.reason:
            tell(f"wisp: {verdict.reason}")
        if scope is Scope.SESSION and not granted:
            tell("wisp: a session approval lasts as long as this command: this request only.")
    else:
        words = {ApprovalOutcome.ANSWERED: "denied", ApprovalOutcome.TIMED_OUT: "timed out"}
        word = words.get(outcome, outcome)
        why = verdict.reason
        said = why if why and why.startswith(word) else None
        say(said or word + (f": {why}" if why else ""))
