"""What the `wisp` program writes and how it ends, without the CLI's framework.

The program runs a command two ways: through the CLI (:mod:`wisp.cli`, on typer and click,
whose ``_common`` and ``_exit`` give its commands these names), or, for the few command lines
:mod:`wisp.__main__` serves before the CLI loads, here (:func:`pending_json`,
:func:`approve_once`). Both say the same things the same way because both say them through
this module: exit codes, a message on stderr, JSON for scripts made safe for a terminal, what
the root says once for every command, the listing of what waits, and an answer typed at a
terminal.

A face's own module: it calls the application and writes what comes back; nothing below the
faces imports it. At import it loads only the standard library and :mod:`wisp._text`, so that
`wisp --version` loads nothing it did not; the channel and the rendering are imported by the
listing that uses them.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NoReturn

from wisp._text import visible

if TYPE_CHECKING:
    from pending import Channel, Decision, Kind, State, Status, Width
    from wisp._answering import AnswerReport
    from wisp.program.waiting import Waiting
    from wisp.stores.config import Config


class ExitCode(IntEnum):
    """Every exit code the `wisp` command uses, in one place (documented in docs/cli.md)."""

    OK = 0  # done; for an asking command: approved, answered
    NO = 1  # refused (nothing written), or the answer was no: denied, declined, withdrawn
    ERROR = 2  # usage error (a bad deadline included), or the channel cannot be used
    TIMED_OUT = 124  # an asking command's wait ended with no answer (as timeout(1) exits)
    INTERRUPTED = 130  # Ctrl-C before anything was written (as a shell reports SIGINT)


@contextmanager
def no_collections() -> Iterator[None]:
    """No garbage collection while what lives to the command's end is made (then as it was).

    A listing keeps every object it makes until it is printed, so a collection finds nothing
    to free; but each one walks them all again, and with 10,000 requests (some 150,000
    objects) the collections made the listing grow faster than the channel: ~12.6x the work
    for 10x the requests, and ~40 ms at 10,000. (Mercurial's `util.nogc` does the same for
    its large builds.) The same holds for the modules and commands a command loads and
    builds. The command ends soon after; anything cyclic it leaves goes at exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --- messages ----------------------------------------------------------------------------


def safe(text: str) -> str:
    """Text for a terminal: every control, bidi or zero-width character made visible, line by
    line. Messages carry text read from files (who answered, a reason); rich passes ESC, C1
    and bidi characters through, so nothing reaches the terminal unsanitised."""
    return "\n".join(visible(line) for line in text.split("\n"))


def say(text: str) -> None:
    """A message for people on stdout: never hard-wrapped (the terminal wraps it). Plain text
    needs no rich (as rich would print it with soft wrap: the text and a newline)."""
    sys.stdout.write(safe(text) + "\n")
    sys.stdout.flush()


def tell(text: str) -> None:
    """A message for people on stderr (progress, warnings, how to answer)."""
    sys.stderr.write(safe(text) + "\n")
    sys.stderr.flush()


# --- JSON for scripts --------------------------------------------------------------------

# What JSON may carry raw but a terminal (or a line-splitting script) must never get raw: DEL
# and the C1 controls, the bidirectional marks, overrides and isolates, and the line and
# paragraph separators. Outside strings JSON is ASCII, so each is inside a string, where a
# \u escape is the same character to every JSON reader.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def json_line(value: Any) -> str:
    """*value* as one line of JSON: any text, raw only where no terminal is fooled (see
    :data:`_UNSAFE_IN_JSON`; C0 controls JSON escapes itself). Every `--json` output is one."""
    import json  # here: a listing of nothing, or in words, never loads it

    return safe_json(json.dumps(value, ensure_ascii=False))


def safe_json(text: str) -> str:
    """JSON *text* (as json.dumps writes it, non-ASCII raw) made safe as :func:`json_line`
    makes it."""
    # Every character the pattern takes but DEL is past ASCII: text that is ASCII without DEL
    # (nearly all of it) needs no scan. Both checks run at memory speed; the pattern's scan
    # of `wisp pending --json` at 10,000 (4.7 MB) took ~25 ms.
    if text.isascii() and "\x7f" not in text:
        return text
    return _UNSAFE_IN_JSON.sub(_escaped, text)


def print_json(value: Any) -> None:
    # Written in two: joined, a large array (4.7 MB at 10,000 requests) was copied once more.
    sys.stdout.write(json_line(value))
    sys.stdout.write("\n")


def print_json_array(items: list[str]) -> None:
    """:func:`print_json` of a list, given its items' JSON texts (each as json.dumps writes
    it, non-ASCII raw): the same line."""
    # The brackets apart: joined to them, the items' text (4.7 MB at 10,000) is copied again.
    sys.stdout.write("[")
    sys.stdout.write(safe_json(", ".join(items)))
    sys.stdout.write("]\n")


# --- what the root says once, for every command -----------------------------------------


def reader_gone() -> None:
    """Standard output's reader went away: nothing more reaches it, and the interpreter's
    own flush at exit must not complain either (as Python's documentation of SIGPIPE
    advises)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def said_at_the_root(exc: Exception) -> int | None:
    """What no command can say itself, said here once for every command, and the status it
    ends with: a reader that went away (`wisp pending | head -1`) ends it quietly with 0; a
    resource limit reached (too many open files, no memory) exits 2 naming the limit, never
    a file; an audit log that is no file to append to (a FIFO, a stranger's hard link),
    refused by the application before anything is written, exits 2 saying so. None, having
    said nothing, for anything else (the caller raises it again)."""
    if isinstance(exc, BrokenPipeError):
        reader_gone()
        return ExitCode.OK
    if isinstance(exc, OSError):
        # Imported here: the channel's errors (and the kinds table under them) are loaded by
        # the commands that use the channel, not by `wisp --version`.
        from pending import resource_shortage

        shortage = resource_shortage(exc)
        if shortage is None:
            return None
        tell(f"wisp: cannot go on: {shortage}.")
        return ExitCode.ERROR
    # Looked up, not imported: a command that loaded no audit writer cannot have met one.
    audit = sys.modules.get("wisp.audit.writer")
    if audit is not None and isinstance(exc, audit.AuditLogUnsafe):
        tell(f"wisp: {exc}")
        return ExitCode.ERROR
    return None


# --- the listing -------------------------------------------------------------------------


def listed_states() -> tuple[State, ...]:
    """What a listing shows by default: what waits (filed, answered, handed over), then
    stale. Its sweep runs first and ends what went stale; a stale request is listed (with
    why) only when that sweep could not end it (a full disk). (Asked, not a constant: pending's
    names are loaded by what lists, not by every command.)"""
    from pending import State

    return (State.FILED, State.ANSWERED, State.HANDED_OVER, State.STALE)


def listing(kinds: Collection[Kind] | None, *, show_all: bool) -> Waiting | None:
    """The requests of *kinds* (None: all) a listing shows, :func:`listed_states` or (with
    *show_all*) every state; None when the channel cannot be used, said on stderr. A skipped
    entry and a sweep's problem are told on stderr: with --json too, the array alone stays on
    stdout."""
    from pending import PendingError, Via
    from wisp._entry import EntryPoint
    from wisp.program.waiting import waiting

    try:
        found = waiting(
            kinds=kinds,
            states=None if show_all else listed_states(),
            via=Via.CLI,
            entry_point=EntryPoint.PENDING,
            on_problem=lambda problem: tell(f"wisp: {problem}"),
        )
    except PendingError as exc:
        tell(f"wisp: {exc}")
        return None
    if found.problems:
        count = len(found.problems)
        tell(
            f"wisp: skipped {count} entr{'y' if count == 1 else 'ies'} that cannot "
            "be read safely; run `wisp doctor` to see them."
        )
    return found


def print_listing_json(statuses: Sequence[Status]) -> None:
    """The `--json` of a listing: a JSON array of the requests, as `wisp pending --json` is
    documented (docs/cli.md). Nothing listed loads no rendering (and no records)."""
    if not statuses:
        print_json([])
        return
    from wisp._render import status_json_text

    print_json_array([status_json_text(s) for s in statuses])


def nothing_waits_line(what: str) -> str:
    """What a listing for people says when nothing of *what* waits."""
    return f"Nothing waits for you ({what})."


def nothing_waits(what: str) -> int | None:
    """`wisp pending` (*what* "anything") or one kind's `wisp GROUP pending` on a channel that
    holds nothing (:func:`pending.channel_empty`): its one line on stdout, as the command says
    it, and status 0; None, saying nothing, for a channel that holds anything, is not there
    yet or cannot be used: the command's to list it, make it or say why."""
    from pending import channel_empty
    from wisp._home import wisp_home

    if not channel_empty(wisp_home()):
        return None

    def run() -> int:
        say(nothing_waits_line(what))
        return ExitCode.OK

    return as_the_cli_runs(run)


def pending_json(kinds: Collection[Kind] | None) -> int:
    """`wisp pending --json` (*kinds* None) or one kind's `wisp GROUP pending --json`, run as
    the CLI runs the command, its root included: the same output on stdout and stderr, and
    the status returned. Ctrl-C ends it with 130 and nothing said, as typer ends a command."""

    def run() -> int:
        with no_collections():
            found = listing(kinds, show_all=False)
            if found is None:
                return ExitCode.ERROR
            print_listing_json(found.statuses)
        return ExitCode.OK

    return as_the_cli_runs(run)


def as_the_cli_runs(command: Callable[[], int]) -> int:
    """Run *command* (a command served before the CLI loads) as the CLI runs its commands:
    stdout flushed before the status is known (what is still buffered meets a closed pipe
    here, not at exit), Ctrl-C ending it with 130 and nothing said as typer ends a command,
    and what the CLI's root says of an error said the same way, with its status."""
    try:
        try:
            return command()
        finally:
            sys.stdout.flush()
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except Exception as exc:
        code = said_at_the_root(exc)
        if code is None:
            raise
        return code


# --- an answer from a terminal -----------------------------------------------------------

ASKING_CLIENT = "wisp-cli"  # the client the asking commands file requests as


def end(message: str, code: ExitCode = ExitCode.ERROR) -> NoReturn:
    """Say what happened and what to do (the message's job), on stderr; exit with *code*.
    (SystemExit: the CLI's commands, as `fail`, and what is served before it both end on it.)"""
    tell(f"wisp: {message}")
    raise SystemExit(int(code))


def config_or_end() -> Config:
    """The person's settings (config.json), or the end: a config.json that cannot be used,
    said with its fix (exit 2)."""
    from wisp._home import wisp_home
    from wisp.stores.config import ConfigError, load_config

    try:
        return load_config(wisp_home())
    except ConfigError as exc:
        end(str(exc))


def channel_or_end() -> Channel:
    """The person's channel, opened, or the end: why it cannot be used (exit 2)."""
    from pending import PendingError
    from wisp._home import open_channel

    try:
        return open_channel()
    except PendingError as exc:
        end(str(exc))


def not_a_terminal(command: str, what: str = "answers", *, doing: str = "answering") -> str:
    """Why *command* is refused with no terminal on standard input: answers, and changes that
    loosen what protects the person, are taken only from a terminal, a speed bump for an
    agent's shell tool (docs/cli.md, "The trust model")."""
    return (
        f"`{command}` takes {what} only from a terminal, and standard input is not one. "
        f"This keeps an agent's shell tool from {doing} for you: run it yourself, in a "
        "terminal. Nothing was written."
    )


# A width as typed: its name, and the prefix's words or the path that names which one.
WidthTyped = tuple["Width", tuple[str, ...] | None, str | None]


def answer_typed(
    command: str,
    request_id: str,
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
    """The person's answer to the request they typed (a unique prefix will do), through the
    application's :class:`wisp.Answerer`, and what came of it: *render*-ed, or as JSON.
    *width*: how wide an approval reaches, as typed (`--width`, and `--prefix` or `--path`;
    docs/cli.md, "Widths"): resolved against what the request offers.
    Refusals exit 1 (nothing written); a store that cannot take a keep exits 2; Ctrl-C says
    whether the answer was written. The CLI's answering commands end here, and `wisp
    approvals approve ID` (served before the CLI loads, :mod:`wisp.__main__`) too."""
    if not sys.stdin.isatty():  # before anything, the store's probe included
        end(not_a_terminal(command))
    from pending import (
        AlreadyAnswered,
        ChannelUnwritable,
        PendingError,
        RecordTooLarge,
        Via,
        WrongKind,
    )
    from wisp._answering import Answerer
    from wisp._home import current_user
    from wisp._render import refusal, report_json
    from wisp.kinds import view
    from wisp.program.lookup import (
        LookupRefused,
        answer_of_this_process,
        find_request,
        option_answer,
    )
    from wisp.stores.jsonstore import StoreError

    config = config_or_end()
    person = current_user()
    with channel_or_end() as channel:
        answerer = Answerer(
            channel,
            via=Via.CLI,
            entry_point=view(kind).entry_point,
            wait_s=config["answer.waitSeconds"],
            liveness_recheck_s=config["watch.livenessSeconds"],
        )
        try:
            status = find_request(channel, request_id)
            if text is not None:
                text = option_answer(status.request, text, literal=literal)
        except LookupRefused as exc:
            end(str(exc), ExitCode.NO)
        except PendingError as exc:
            end(refusal(exc, me=person), ExitCode.NO)
        answered_width = None
        if width is not None:
            from pending import pick_width, width_json

            try:
                answered_width = width_json(pick_width(status.request.binding, *width))
            except ValueError as exc:
                end(f"cannot answer {status.id}: {exc} Nothing was written.", ExitCode.NO)
        try:
            report = answerer.answer(
                status.id,
                decision,
                kind=kind,
                text=text,
                reason=reason,
                shown=status.request,
                width=answered_width,
            )
        except (ChannelUnwritable, RecordTooLarge) as exc:  # an error, not a refusal: exit 2
            end(f"{exc} Your answer was not recorded; the request still waits.")
        except WrongKind as exc:
            end(
                f"request {status.id} is a {exc.kind} request, not a {exc.asked_as} "
                f"request: answer it with {view(exc.kind).how_to_answer(status.id)}.",
                ExitCode.NO,
            )
        except PendingError as exc:
            end(refusal(exc, me=person), ExitCode.NO)
        except StoreError as exc:
            end(f"{exc} The request still waits; nothing was written.")
        except KeyboardInterrupt:
            interrupted(answer_of_this_process(channel, status.id) is not None, status.id)
    if not report.won and not report.applied:
        end(refusal(AlreadyAnswered(report.answer), me=person), ExitCode.NO)
    if as_json:
        print_json(report_json(report))
    else:
        render(report)
    code = exit_code(report)
    if code is not ExitCode.OK:
        raise SystemExit(int(code))
    return report


def interrupted(written: bool, request_id: str) -> NoReturn:
    """Ctrl-C while answering: say whether the answer was written (it then stands)."""
    if written:
        tell(
            f"wisp: interrupted while waiting for the asker; your answer to {request_id} was "
            f"recorded and stands. `wisp show {request_id}` shows what becomes of it."
        )
        raise SystemExit(int(ExitCode.OK))
    tell(
        f"wisp: interrupted before your answer was written; nothing was written and "
        f"{request_id} still waits."
    )
    raise SystemExit(int(ExitCode.INTERRUPTED))


def exit_code(report: AnswerReport) -> ExitCode:
    from pending import Outcome

    if report.apply_error is not None and report.settled is None:
        return ExitCode.ERROR  # recorded, but the store could not take it: not applied yet
    if report.settled is not None and report.settled.outcome is not Outcome.ANSWERED:
        return ExitCode.NO
    return ExitCode.OK


def render_command_or_question(
    verb: str | Callable[[AnswerReport], str],
) -> Callable[[AnswerReport], None]:
    """How an answer to a command or a question reads: what the asker made of it. *verb*
    says what was recorded (or makes it from the report)."""

    def render(report: AnswerReport) -> None:
        from pending import Decision, Outcome
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


def _project_named(report: AnswerReport) -> str:
    """For a `project` approval, the directory its grant will reach (and all below it)."""
    from pending import Decision

    cwd = getattr(report.request.binding, "cwd", None)
    if report.answer.decision != Decision.PROJECT or not isinstance(cwd, str):
        return ""
    from wisp.stores.grants import project_of

    return f" {visible(project_of(cwd))}"


def session_note(report: AnswerReport) -> str:
    """What a session approval covers, said where it is given (it is easy to expect more)."""
    from pending import Kind
    from wisp._entry import EntryPoint

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


def approve_once(typed_id: str) -> int:
    """`wisp approvals approve ID` (*typed_id* as typed: a unique prefix will do), run as the
    CLI runs the command, its root included: the same words on stdout and stderr, the same
    status. The person's answer waits on the CLI's start otherwise: typer, click and the CLI's
    modules were ~48 of the ~70 ms from the command's start to its answer's `link(2)`
    (bench/README.md, issue 41). Ctrl-C before anything is written ends it with 130, as typer
    ends a command (its imports included: a Ctrl-C there is no traceback either)."""

    def run() -> int:
        from pending import Decision, Kind
        from wisp.kinds import view

        answer_typed(
            view(Kind.COMMAND).answering[0].invocation,
            typed_id,
            Kind.COMMAND,
            Decision.ONCE,
            render=render_command_or_question(f"approved {Decision.ONCE.value}"),
        )
        return ExitCode.OK

    return as_the_cli_runs(run)
