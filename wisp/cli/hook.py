"""`wisp hook claude-code`: Claude Code's command hook. It reads one hook event (JSON) on
stdin and writes Claude Code's hook output (JSON) on stdout, and nothing else there; what
it decides and why is :mod:`wisp.agents.claude_code`'s."""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Annotated

import typer

from wisp._deadlines import Cancel, DeadlineError, check_deadline
from wisp.agents.claude_code import (
    DEFAULT_WAIT_S,
    MAX_EVENT_BYTES,
    OnTimeout,
    answer_event,
    refused,
    settings_block,
)
from wisp.cli._common import command_group

hook_app = command_group(
    "Hooks for agent harnesses: put wisp in front of what the agent does.",
    no_args_is_help=True,
    epilog="""Examples:
  wisp hook claude-code --print-settings   the block to paste into .claude/settings.json
  wisp hook claude-code < event.json       (what Claude Code runs, once per tool call)""",
)


@hook_app.callback()
def hook() -> None:
    """Hooks for agent harnesses: put wisp in front of what the agent does."""


HOOK_EXAMPLES = """Examples:
  wisp hook claude-code --print-settings
  wisp hook claude-code --print-settings --wait 120 --on-timeout deny
  wisp hook claude-code < event.json"""


def _checked_wait(value: float) -> float:
    try:
        return float(check_deadline(value, what="--wait", zero=None))
    except DeadlineError as exc:
        raise typer.BadParameter(str(exc)) from None


@hook_app.command("claude-code", epilog=HOOK_EXAMPLES)
def claude_code(
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            metavar="SECONDS",
            callback=_checked_wait,
            help="How long to wait for your answer before withdrawing the request. Default: "
            f"{DEFAULT_WAIT_S}, just under Claude Code's default hook timeout.",
        ),
    ] = float(DEFAULT_WAIT_S),
    on_timeout: Annotated[
        str,
        typer.Option(
            "--on-timeout",
            metavar="ask|deny",
            help="No answer in time: `ask` (Claude Code asks in its own dialog; the default) "
            "or `deny` (for unattended runs). Never an allow.",
        ),
    ] = "ask",
    print_settings: Annotated[
        bool,
        typer.Option(
            "--print-settings",
            help="Print the `hooks` block for Claude Code's settings.json (with this wisp's "
            "absolute path) and exit.",
        ),
    ] = False,
) -> None:
    """Answer one Claude Code hook event (PreToolUse, PermissionRequest, SessionEnd).

    A Bash call becomes a command request, any other tool call a tool request, unless a
    grant covers it. Exit 0 with the decision as JSON on stdout; exit 2 (Claude Code's
    "block") with the reason on stderr when the event cannot be answered: unreadable,
    unknown, or a channel that cannot be used."""
    try:
        policy = OnTimeout(on_timeout)
    except ValueError:
        raise typer.BadParameter(
            f"{on_timeout!r} is not ask or deny.", param_hint="--on-timeout"
        ) from None
    # Claude Code ends a hook that outlives its timeout: the wait ends at once and the request
    # is withdrawn now, rather than read stale at the next sweep. Cancelled from a thread of
    # its own: the handler runs in the main thread, which may hold the asker's locks.
    cancel = Cancel()
    signal.signal(
        signal.SIGTERM,
        lambda signum, frame: threading.Thread(target=cancel.cancel, daemon=True).start(),
    )
    if print_settings:
        sys.stdout.write(json.dumps(settings_block(wait_s=wait, on_timeout=policy), indent=2))
        sys.stdout.write("\n")
        return
    if sys.stdin is None or sys.stdin.isatty():
        answer = refused(
            None,
            "`wisp hook claude-code` reads one Claude Code hook event as JSON on stdin, not "
            "from a terminal; see `wisp hook claude-code --print-settings`",
        )
    else:
        answer = answer_event(
            sys.stdin.buffer.read(MAX_EVENT_BYTES + 1),
            wait_s=wait,
            on_timeout=policy,
            cancel=cancel,
        )
    if answer.stderr:
        sys.stderr.write(answer.stderr + "\n")
    sys.stdout.write(json.dumps(answer.output(), ensure_ascii=False) + "\n")
    sys.stdout.flush()
    raise typer.Exit(int(answer.exit_code))
