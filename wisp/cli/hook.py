"""`wisp hook claude-code`: Claude Code's command hook. It reads one hook event (JSON) on
stdin and writes Claude Code's hook output (JSON) on stdout, and nothing else there; what
it decides and why is :mod:`wisp.agents.claude_code`'s."""

from __future__ import annotations

import json
import math
import sys
from typing import Annotated

import typer

from wisp._deadlines import DeadlineError, check_deadline
from wisp.agents import hookio
from wisp.agents.claude_code import DEFAULT_WAIT_S, OnTimeout, serve, settings_block
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


def checked_wait(value: float) -> float:
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
            callback=checked_wait,
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
    # TERM, INT, HUP (and Claude Code gone) end the wait at once: the request is withdrawn
    # and the answer is a deny (armed before wisp loaded, by wisp.cli, for `wisp hook`).
    stop = hookio.arm()
    if print_settings:
        sys.stdout.write(json.dumps(settings_block(wait_s=wait, on_timeout=policy), indent=2))
        sys.stdout.write("\n")
        _note_a_reachable_install()
        return
    raise typer.Exit(serve(stop, wait, policy))


def _note_a_reachable_install() -> None:
    """A line on stderr when the printed hook runs a wisp an agent could rewrite."""
    import os

    from wisp.agents.install import this_install
    from wisp.agents.reach import printed_note

    note = printed_note(this_install(), os.environ)
    if note is not None:
        sys.stderr.write(f"wisp: note: {note}\n")


def _harness_command(module: str) -> None:
    """`wisp hook NAME` for a harness with no "ask" (its module's HARNESS)."""
    import importlib

    harness: hookio.Harness = importlib.import_module(module).HARNESS

    wait_option = typer.Option(
        float(hookio.DEFAULT_WAIT_S),
        "--wait",
        metavar="SECONDS",
        callback=checked_wait,
        help="How long to wait for your answer before denying (and withdrawing the request). "
        f"Default: {hookio.DEFAULT_WAIT_S}, {hookio.MARGIN_S} s under the hook timeout the "
        "printed settings write (OpenCode has none).",
    )
    settings_option = typer.Option(
        False,
        "--print-settings",
        help=harness.prints
        or f"Print the hook block for {harness.title}'s config (with this wisp's absolute "
        "path, in wisp's guard) and exit.",
    )

    def command(wait: float = wait_option, print_settings: bool = settings_option) -> None:
        stop = hookio.arm()
        if print_settings:
            from wisp.agents.install import this_wisp

            argv = hookio.guarded_command(harness, this_wisp(), wait_s=wait)
            timeout = math.ceil(wait) + hookio.MARGIN_S
            printed = harness.settings(argv, timeout)
            text = printed if isinstance(printed, str) else json.dumps(printed, indent=2) + "\n"
            sys.stdout.write(text)
            _note_a_reachable_install()
            return
        raise typer.Exit(hookio.serve_harness(stop, harness, wait))

    command.__doc__ = (
        f"Answer one {harness.title} hook event: the wait is the ask.\n\n"
        "A shell call becomes a command request, any other tool call a tool request, unless "
        "a grant covers it. Allowed only by a grant or your answer; a deny, no answer in "
        f"time, a signal, bad input or an unusable channel is {harness.title}'s deny (exit 2 "
        "for the failures)."
    )
    hook_app.command(
        harness.name, epilog=f"Examples:\n  wisp hook {harness.name} --print-settings"
    )(command)


for _module in hookio.HARNESS_MODULES.values():
    _harness_command(_module)
