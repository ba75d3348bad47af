"""`wisp hook NAME`: each harness's command hook. It reads one hook event (JSON) on stdin and
writes the harness's hook output on stdout, and nothing else there; what it decides and why
is the harness's module's (:data:`wisp._entry.HARNESS_MODULES`: one command each)."""

from __future__ import annotations

import sys

import typer

from wisp import DeadlineError, check_deadline
from wisp.agents import hookio
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


def checked_wait(value: float) -> float:
    try:
        return float(check_deadline(value, what="--wait", zero=None))
    except DeadlineError as exc:
        raise typer.BadParameter(str(exc)) from None


def _hook(harness: hookio.Harness, options: hookio.HookOptions, print_settings: bool) -> None:
    """One `wisp hook NAME` past its options: its settings printed, or one event answered."""
    # TERM, INT, HUP (and the harness gone) end the wait at once: the request is withdrawn
    # and the answer is a deny (armed before wisp loaded, by wisp.cli, for `wisp hook`).
    stop = hookio.arm()
    if print_settings:
        sys.stdout.write(hookio.printed(harness, options))
        _note_a_reachable_install()
        return
    raise typer.Exit(hookio.run(stop, harness, options))


def _note_a_reachable_install() -> None:
    """A line on stderr when the printed hook runs a wisp an agent could rewrite."""
    import os

    from wisp.agents.install import this_install
    from wisp.agents.reach import printed_note

    note = printed_note(this_install(), os.environ)
    if note is not None:
        sys.stderr.write(f"wisp: note: {note}\n")


def _harness_command(harness: hookio.Harness) -> None:
    """`wisp hook NAME` for *harness*: --wait, --print-settings, and --on-timeout where it
    takes it."""
    wait_option = typer.Option(
        float(hookio.DEFAULT_WAIT_S),
        "--wait",
        metavar="SECONDS",
        callback=checked_wait,
        help=harness.wait_help
        or "How long to wait for your answer before denying (and withdrawing the request). "
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
    on_timeout_option = typer.Option(
        "ask",
        "--on-timeout",
        metavar="ask|deny",
        help=f"No answer in time: `ask` ({harness.title} asks in its own dialog; the default) "
        "or `deny` (for unattended runs). Never an allow.",
    )

    if harness.on_timeout:

        def command(
            wait: float = wait_option,
            on_timeout: str = on_timeout_option,
            print_settings: bool = settings_option,
        ) -> None:
            try:
                policy = hookio.OnTimeout(on_timeout)
            except ValueError:
                raise typer.BadParameter(
                    f"{on_timeout!r} is not ask or deny.", param_hint="--on-timeout"
                ) from None
            _hook(harness, hookio.HookOptions(wait_s=wait, on_timeout=policy), print_settings)

    else:

        def command(  # type: ignore[misc]  # the same command, without --on-timeout
            wait: float = wait_option, print_settings: bool = settings_option
        ) -> None:
            _hook(harness, hookio.HookOptions(wait_s=wait), print_settings)

    command.__doc__ = harness.summary or (
        f"Answer one {harness.title} hook event: the wait is the ask.\n\n"
        "A shell call becomes a command request, any other tool call a tool request, unless "
        "a rule or a grant decides it (docs/policy.md). Allowed only by a rule, a grant or "
        "your answer; a deny, no answer in "
        f"time, a signal, bad input or an unusable channel is {harness.title}'s deny (exit 2 "
        "for the failures)."
    )
    examples = harness.examples or (f"wisp hook {harness.name} --print-settings",)
    epilog = "Examples:\n" + "\n".join(f"  {line}" for line in examples)
    hook_app.command(harness.name, epilog=epilog)(command)


for _harness in hookio.harnesses():
    _harness_command(_harness)
