"""`wisp approvals …` and `wisp questions …`: asking from scripts, answering from a terminal."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, NoReturn

import typer

from pending import (
    APPROVALS,
    AlreadyAnswered,
    Channel,
    Kind,
    Outcome,
    PendingError,
    Request,
    Settled,
    Status,
    Subscription,
    Transition,
    Watcher,
    WrongKind,
    format_time,
    wisp_home,
)
from wisp._asking import ApprovalGate, Asker, QuestionAsker
from wisp._audit import audit, request_fields
from wisp._config import Config, ConfigError, load_config
from wisp._console import command_group, fail, open_channel, out, print_json, say, tell
from wisp._exit import ExitCode
from wisp._grants import GrantsError, GrantStore, is_grant_id
from wisp._listing import pending_command, show_rows
from wisp._store import StoreError
from wisp._text import one_line, visible

approvals_app = command_group(
    "Command approvals: ask from a script; approve or deny from any terminal.",
    no_args_is_help=True,
)
questions_app = command_group(
    "Questions to you: ask from a script; answer or decline from any terminal.",
    no_args_is_help=True,
)

# How each kind is answered, for refusals that name the right command.
ANSWER_COMMANDS = {
    Kind.COMMAND: "`wisp approvals approve {id}` or `wisp approvals deny {id}`",
    Kind.FACT: "`wisp facts keep {id}` or `wisp facts drop {id}`",
    Kind.QUESTION: "`wisp questions answer {id} TEXT` or `wisp questions decline {id}`",
}


def config_or_fail() -> Config:
    try:
        return load_config(wisp_home())
    except ConfigError as exc:
        fail(str(exc))


def require_terminal(command: str) -> None:
    """Answers are taken only from a terminal: a speed bump for an agent's shell tool."""
    if not sys.stdin.isatty():
        fail(
            f"`{command}` takes answers only from a terminal, and standard input is not one. "
            "This keeps an agent's shell tool from answering for you: run it yourself, in a "
            "terminal. Nothing was written."
        )


# --- the person's side: answering ------------------------------------------------------


AskerOutcome = Settled | Literal["gone"] | None  # the asker's outcome; "gone": nobody will settle


def give_answer(
    command: str,
    request_id: str,
    kind: Kind,
    decision: str,
    *,
    text: str | None = None,
    reason: str | None = None,
    unwatched: Callable[[Channel, Status], Settled] | None = None,
) -> tuple[Request, AskerOutcome]:
    """Answer from a terminal, refusing with the reason (nothing written) where it cannot;
    then wait briefly for the asker's outcome. If no asker lives to settle it, *unwatched*
    (if given) applies the answer here and its outcome is returned."""
    require_terminal(command)
    config = config_or_fail()
    with open_channel() as channel:
        watcher = Watcher(channel, liveness_recheck_s=config["watch.livenessSeconds"]).start()
        try:
            subscription, _ = watcher.subscribe()  # before answering: the outcome can't slip by
            try:
                result = channel.answer(
                    request_id, decision, kind=kind, via="cli", text=text, reason=reason
                )
            except WrongKind as exc:
                right = ANSWER_COMMANDS[exc.kind].format(id=request_id)
                refuse(
                    f"request {request_id} is a {exc.kind} request, not a {exc.asked_as} "
                    f"request: answer it with {right}."
                )
            except PendingError as exc:
                refuse(str(exc))
            if not result.won:
                refuse(str(AlreadyAnswered(result.answer)))
            request = channel.status(request_id).request
            audit(
                channel.home,
                "approval.answered",
                {
                    **request_fields(request),
                    "via": "cli",
                    "decision": decision,
                    "answerText": text,
                    "answerReason": reason,
                },
                entry_point=_entry(kind),
            )
            settled = wait_for_outcome(channel, subscription, request, config["answer.waitSeconds"])
            if settled == "gone" and unwatched is not None:
                settled = unwatched(channel, channel.status(request_id))
        finally:
            watcher.stop()
    return request, settled


def answer_request(
    command: str,
    request_id: str,
    kind: Kind,
    decision: str,
    *,
    text: str | None = None,
    reason: str | None = None,
    verb: str,
) -> None:
    """Answer a command or a question, and report what the asker made of it."""
    _, settled = give_answer(command, request_id, kind, decision, text=text, reason=reason)
    said = f"{verb} ({request_id})"
    if isinstance(settled, Settled):
        if settled.outcome is not Outcome.ANSWERED:
            reason_text = f": {settled.reason}" if settled.reason else ""
            say(f"{said}, but it ended {settled.outcome}{reason_text}.")
            raise typer.Exit(int(ExitCode.NO))
        say(f"{said}; the asker has it.")
    elif settled == "gone":
        say(
            f"{said}, but no asker is watching: the program that asked has "
            "stopped, so nothing will act on it."
        )
    else:
        say(
            f"{said}; the asker has not picked it up yet. It will when it next "
            "looks; `wisp pending` shows it."
        )


def refuse(message: str) -> NoReturn:
    fail(message, ExitCode.NO)


def _entry(kind: Kind) -> str:
    return {Kind.COMMAND: "approvals", Kind.FACT: "facts", Kind.QUESTION: "questions"}[kind]


def wait_for_outcome(
    channel: Channel, subscription: Subscription[Transition], request: Request, wait_s: float
) -> AskerOutcome:
    """The asker's outcome; "gone" if no asker lives to settle it; None if none came in time."""
    deadline = channel.clock.monotonic() + wait_s
    while True:
        status = channel.status(request.id)
        if status.settled is not None:
            return status.settled
        if not channel.server_alive(request.server.id):
            return "gone"
        remaining = deadline - channel.clock.monotonic()
        if remaining <= 0:
            return None
        item = subscription.get(timeout=remaining)
        while isinstance(item, Transition) and item.id != request.id:
            item = subscription.get(timeout=0)


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
    answer_request(
        "wisp approvals approve", request_id, Kind.COMMAND, scope, verb=f"approved {scope}"
    )


@approvals_app.command("deny")
def deny(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The request's ID.")],
    reason: Annotated[str | None, typer.Option("--reason", help="Told to the asker.")] = None,
) -> None:
    """Deny a command. Only from a terminal."""
    answer_request(
        "wisp approvals deny", request_id, Kind.COMMAND, "no", reason=reason, verb="denied"
    )


@questions_app.command("answer")
def answer(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The question's ID.")],
    text: Annotated[str, typer.Argument(metavar="TEXT", help="Your answer.")],
) -> None:
    """Answer a question (one of its options, if it has them). Only from a terminal."""
    answer_request(
        "wisp questions answer", request_id, Kind.QUESTION, "answer", text=text, verb="answered"
    )


@questions_app.command("decline")
def decline(
    request_id: Annotated[str, typer.Argument(metavar="ID", help="The question's ID.")],
) -> None:
    """Decline to answer a question. Only from a terminal."""
    answer_request("wisp questions decline", request_id, Kind.QUESTION, "decline", verb="declined")


approvals_app.command("pending")(pending_command(Kind.COMMAND, "Command approvals waiting."))
questions_app.command("pending")(pending_command(Kind.QUESTION, "Questions waiting for you."))


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
        removed = GrantStore(wisp_home()).revoke(grant_id)
    except GrantsError as exc:
        fail(str(exc))
    if removed is None:
        refuse(f"no grant {grant_id}: see `wisp approvals grants`.")
    audit(
        wisp_home(),
        "approval.revoked",
        {
            "grant": removed.id,
            "scope": removed.scope,
            "command": removed.command,
            "project": removed.project,
        },
        entry_point="approvals",
    )
    say(f"revoked {removed.id}: {visible(removed.command)} will be asked about again.")


# --- the asking side, for scripts ------------------------------------------------------


def start_asker(entry_point: str, config: Config) -> Asker:
    channel = open_channel()

    def warn(message: str) -> None:
        tell(f"wisp: {message}")
        audit(channel.home, "watch.warning", {"message": message}, entry_point=entry_point)

    try:
        return Asker(
            channel,
            entry_point=entry_point,
            client="wisp-cli",
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=warn,
        )
    except (OSError, PendingError) as exc:
        channel.close()
        fail(f"cannot ask through {channel.path}: {exc}. Check it with `wisp doctor`.")


def _waiting_note(timeout_s: float) -> str:
    if not timeout_s:
        return "waiting until you answer (Ctrl-C withdraws it)"
    return f"waiting up to {timeout_s:g} s (Ctrl-C withdraws it)"


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
    timeout_s = config["approval.timeoutSeconds"] if timeout is None else timeout
    if timeout_s < 0:
        fail("--timeout takes seconds, 0 or more (0 waits until answered).")
    text = command[0] if len(command) == 1 else shlex.join(command)
    where = str((cwd or Path.cwd()).resolve())

    def filed(request: Request) -> None:
        tell(
            f"wisp: asking you to approve: {one_line(text, 200)}  (in {visible(where)})\n"
            f"  approve: wisp approvals approve {request.id} [--scope {'|'.join(APPROVALS)}]\n"
            f"  deny:    wisp approvals deny {request.id} [--reason TEXT]\n"
            f"  {_waiting_note(timeout_s)}"
        )

    asker = start_asker("approvals", config)
    try:
        approval = ApprovalGate(asker, timeout_s=timeout_s).request(
            text, where, reason=reason, on_filed=filed
        )
        outcome, scope, verdict_reason = approval.outcome, approval.scope, approval.reason
        request_id = approval.request_id
        grant = approval.grant.id if approval.grant and approval.grant.id != "session" else None
        approved = approval.approved
    except (PendingError, StoreError) as exc:
        fail(f"could not ask: {exc}")  # `finally` withdraws what waits and closes
    except KeyboardInterrupt:
        endings = asker.withdraw()
        approved, outcome, scope, grant = False, Outcome.WITHDRAWN.value, None, None
        request_id = endings[0].request.id if endings else None
        verdict_reason = "withdrawn with Ctrl-C"
        if endings and endings[0].outcome is Outcome.ANSWERED and endings[0].decision:
            verdict_reason = "withdrawn with Ctrl-C after it was answered"
    finally:
        asker.close()
        asker.channel.close()
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
    timeout_s = config["approval.timeoutSeconds"] if timeout is None else timeout
    if timeout_s < 0:
        fail("--timeout takes seconds, 0 or more (0 waits until answered).")
    options = tuple(option) if option else None

    def filed(request: Request) -> None:
        offered = f"  options: {', '.join(one_line(o, 40) for o in options)}\n" if options else ""
        tell(
            f"wisp: asking you: {one_line(question, 200)}\n{offered}"
            f"  answer:  wisp questions answer {request.id} TEXT\n"
            f"  decline: wisp questions decline {request.id}\n"
            f"  {_waiting_note(timeout_s)}"
        )

    asker = start_asker("questions", config)
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
        fail(f"could not ask: {exc}")  # `finally` withdraws what waits and closes
    except KeyboardInterrupt:
        endings = asker.withdraw()
        outcome, text, reason = Outcome.WITHDRAWN.value, None, "withdrawn with Ctrl-C"
        request_id = endings[0].request.id if endings else None
    finally:
        asker.close()
        asker.channel.close()
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
