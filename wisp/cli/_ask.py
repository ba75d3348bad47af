"""What every asking command shares (`approvals request`, `questions ask`, `facts request`):
starting an asker for this process, telling the person how to answer, and stopping cleanly
whatever happens."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pending import Kind, Outcome, PendingError
from wisp import EntryPoint, check_deadline, deadline_range
from wisp._text import wrap
from wisp.cli._common import err, fail, open_channel, tell, typed_as
from wisp.kinds import view
from wisp.program.writes import ASKING_CLIENT

if TYPE_CHECKING:
    from pending import Request
    from wisp import Asker, Config, Ending

INDENT = "  "
# How long a signal's withdrawal waits for a settling under way on another thread (the
# deadline's) to end: withdraw() has taken whatever still waited, so only that one can wait.
SETTLING_WAIT_S = 5.0
# Signals that end an asking command as Ctrl-C does (its request withdrawn, audited, exit 1):
# `kill`, `timeout 5 wisp …`, and the terminal it runs in closing.
WITHDRAWING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP while asking, raised in the main thread where Ctrl-C would be."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.name = signal.Signals(signum).name


def _stop(signum: int, frame: FrameType | None) -> None:
    for each in WITHDRAWING_SIGNALS:  # a second one must not cut the withdrawal short
        signal.signal(each, signal.SIG_IGN)
    raise Stopped(signum)


# How a request that ended on its own as the signal came ended, as the verdict says it.
_ENDED_FIRST = {Outcome.TIMED_OUT: "after it timed out", Outcome.FAILED: "after it failed"}


def withdrawn_how(interrupt: KeyboardInterrupt, endings: Sequence[Ending] = ()) -> str:
    """What ended the wait, as the verdict says it: "withdrawn with Ctrl-C", "withdrawn on
    SIGTERM", and "… after it was answered" where a person's answer got there first (it
    stands, and the command still ends withdrawn: nothing is approved or run), or "… after
    it timed out" or "… after it failed" where it ended so as the signal came."""
    how = "withdrawn with Ctrl-C"
    if isinstance(interrupt, Stopped):
        how = f"withdrawn on {interrupt.name}"
    if endings:
        first = endings[0]
        if first.outcome is Outcome.ANSWERED and first.decision:
            how += " after it was answered"
        elif first.outcome in _ENDED_FIRST:
            how += " " + _ENDED_FIRST[first.outcome]
    return how


def withdraw_on_signal(asker: Asker, filed: Sequence[str]) -> list[Ending]:
    """How a signal's withdrawal ended the requests *filed*: those still waiting withdrawn
    (a person's answer that got there first stands); or, if the signal came as one was being
    settled (never cut short: the signal waits for it), how that one ended."""
    endings = asker.withdraw()
    if not endings:
        for request_id in filed:
            ended = asker.wait(request_id, SETTLING_WAIT_S)
            if ended is not None:
                endings.append(ended)
    return endings


@contextmanager
def _withdrawing_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Stopped` (a KeyboardInterrupt) while inside."""
    previous = {each: signal.signal(each, _stop) for each in WITHDRAWING_SIGNALS}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


@contextmanager
def asking(entry_point: EntryPoint, config: Config) -> Iterator[Asker]:
    """An asker for this command's life: on the way out (an error, Ctrl-C, SIGTERM or SIGHUP,
    or done) what it still waits on is withdrawn, its lock released and the channel closed."""
    with _withdrawing_on_signals():
        yield from _asking(entry_point, config)


def _asking(entry_point: EntryPoint, config: Config) -> Iterator[Asker]:
    channel = open_channel()
    from wisp import Asker

    try:
        asker = Asker(
            channel,
            entry_point=entry_point,
            client=ASKING_CLIENT,
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=lambda message: tell(f"wisp: {message}"),
            pumped=True,  # a command waits on what it files, or hands it over as it ends
        )
    except (OSError, PendingError) as exc:
        channel.close()
        fail(f"cannot ask through {channel.path}: {exc}. Check it with `wisp doctor`.")
    try:
        yield asker
    except PendingError as exc:  # the channel failed mid-ask (a full disk): exit 2, said
        fail(f"could not ask: {exc}")
    finally:
        try:
            asker.close()
        finally:
            channel.close()


def prompt(head: str, text: str, fields: Sequence[tuple[str, str]], lines: Sequence[str]) -> str:
    """How the person is told of a request filed: *head*, then what is asked, whole, wrapped
    to the terminal (never cut: this is what they approve), then *fields* and *lines*."""
    room = max(err.width - len(INDENT), 20)
    shown = [*wrap(head, err.width), *(INDENT + part for part in wrap(text, room))]
    for label, value in fields:
        shown.extend(INDENT + part for part in wrap(f"{label}: {value}", room))
    for line in lines:  # how to answer: commands to copy, wrapped at spaces, never cut
        parts = wrap(line, room, then=room - len(INDENT))
        shown.extend([INDENT + parts[0], *(INDENT * 2 + part for part in parts[1:])])
    return "\n".join(shown)


def how_to_answer(kind: Kind, request_id: str) -> list[str]:
    """An asker's lines on how its request is answered: each answering command after its
    label, where to see it whole, then what its kind notes (a command's scopes)."""
    kind_view = view(kind)
    seen = ("see it", f"wisp show {request_id}")
    return [*kind_view.prompt_lines(request_id, more=[seen]), *kind_view.notes]


def command_prompt(
    head: str, text: str, reason: str | None, timeout_s: float
) -> Callable[[Request], None]:
    """The callback that tells the person of a command filed for approval (`wisp exec`,
    `wisp approvals request`): *head* (which says where it runs), the command whole, the
    reason if any, how to answer, and how long it waits."""

    def filed(request: Request) -> None:
        # The request's own reason (yours, and why a grant did not cover it) and each program
        # file bound to its content: what the person approves.
        said = getattr(request.binding, "reason", None) or reason
        options = getattr(request.binding, "options", None)
        from wisp.kinds.command import program_rows  # here: a listing loads no shlex

        rows = program_rows(options)
        tell(
            prompt(
                head,
                text,
                [*([("reason", said)] if said else []), *rows],
                [*how_to_answer(Kind.COMMAND, request.id), waiting_note(timeout_s)],
            )
        )

    return filed


def waiting_note(timeout_s: float) -> str:
    if not timeout_s:
        return "waiting until you answer (Ctrl-C withdraws it)"
    return f"waiting up to {timeout_s:g} s (Ctrl-C withdraws it)"


def _timeout(text: str) -> float:
    """--timeout: a deadline, refused while parsing (a usage error, exit 2) before anything
    is filed; DeadlineError (a ValueError) says the range."""
    try:
        seconds: Any = float(text)
    except ValueError:
        seconds = text  # not a number: refused below, named as typed
    return float(check_deadline(seconds, what="it", zero="waits until answered"))


TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        parser=typed_as(_timeout),
        help=f"How long to wait: {deadline_range(zero='waits until answered')}. "
        "Default: approval.timeoutSeconds (600).",
    ),
]


def timeout_in_effect(timeout: float | None, config: Config) -> float:
    """The deadline in effect: --timeout (checked while parsing), else the setting (checked
    when config.json was read)."""
    timeout_s: float = config["approval.timeoutSeconds"] if timeout is None else timeout
    return timeout_s
