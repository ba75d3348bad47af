"""`wisp agents setup|remove|status`: wisp's hook (and the harness's sandbox) in each agent
harness's own config file; what :mod:`wisp.agents.setup` decides, rendered."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from wisp._text import visible
from wisp.agents import hookio, setup
from wisp.cli._common import command_group, fail, print_json, say
from wisp.cli._exit import ExitCode
from wisp.cli.hook import checked_wait

agents_app = command_group(
    "Set up agent harnesses: wisp's hook and their sandbox, in their own config files.",
    no_args_is_help=True,
    epilog="""Examples:
  wisp agents setup claude-code --dry-run   the diff it would make to ~/.claude/settings.json
  wisp agents setup codex                   hook, sandbox_mode and Codex's trust of the hook
  wisp agents remove gemini                 take wisp's hook out of ~/.gemini/settings.json
  wisp agents status                        each harness: gate, timeout, protection""",
)

HARNESS_HELP = f"The harness: {', '.join(hookio.names())}."
ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        metavar="DIR",
        help="The project's config (e.g. DIR/.claude/settings.json) instead of the user's.",
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the diff it would make; write nothing.")
]


@agents_app.callback()
def agents() -> None:
    """Set up agent harnesses: wisp's hook and their sandbox, in their own config files."""


def _render(plan: setup.Plan, *, dry_run: bool, verb: str) -> None:
    if not plan.changed:
        say(f"{plan.path}: {verb} already; nothing to change.")
        if not dry_run:
            _apply(plan)  # remove: setup's record of a file gone meanwhile goes too
    else:
        for line in plan.diff().splitlines():
            say(visible(line))
        if dry_run:
            say(f"(dry run: {plan.path} not written)")
        else:
            backup = _apply(plan)
            done = "written" if plan.after is not None else "deleted"
            kept = f" (the old one kept as {backup})" if backup else ""
            say(visible(f"{plan.path}: {done}{kept}."))
    for note in plan.notes:
        say(visible(f"note: {note}"))


def _apply(plan: setup.Plan) -> Any:
    try:
        return setup.apply(plan)
    except setup.SetupRefused as exc:
        fail(str(exc), ExitCode.NO)


def _plan(make: Any, harness: str, project: Path | None, **options: Any) -> setup.Plan:
    try:
        plan: setup.Plan = make(harness, project, **options)
    except setup.UnknownHarness as exc:  # a usage error, as typer's own
        fail(str(exc), ExitCode.ERROR)
    except setup.SetupRefused as exc:
        fail(f"{exc} Nothing was written.", ExitCode.NO)
    return plan


@agents_app.command("setup")
def setup_command(
    harness: Annotated[str, typer.Argument(metavar="HARNESS", help=HARNESS_HELP)],
    project: ProjectOption = None,
    dry_run: DryRunOption = False,
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            metavar="SECONDS",
            callback=checked_wait,
            help="How long the hook waits for your answer (the harness's own timeout for it "
            f"is written {hookio.MARGIN_S} s above). Default: {hookio.DEFAULT_WAIT_S}.",
        ),
    ] = float(hookio.DEFAULT_WAIT_S),
    on_timeout: Annotated[
        hookio.OnTimeout,
        typer.Option(
            "--on-timeout",
            metavar="ask|deny",
            help="Claude Code only: what an unanswered call becomes — `ask` (Claude Code's own "
            "dialog; the default) or `deny` (for unattended runs). Elsewhere it is denied.",
        ),
    ] = hookio.OnTimeout.ASK,
) -> None:
    """Merge wisp's hook into HARNESS's config file (and, where wisp can, its sandbox).

    Idempotent; the file's other settings, hooks and layout are kept (only the lines wisp's
    part needs change); the old file is kept under $WISP_HOME/agents/backups (the newest 3);
    the diff is shown; written atomically, mode 0600; what it added is recorded, for remove.
    Refused when this wisp lies where an agent can write (a project's tree, /tmp, $TMPDIR, a
    writable root): install it with pipx first. Exit 0 done (or nothing to do), 1 refused
    (nothing written; the message says what to do), 2 usage (a harness wisp does not set up)."""
    options = hookio.HookOptions(wait_s=wait, on_timeout=on_timeout)
    plan = _plan(setup.plan_setup, harness, project, options=options)
    _render(plan, dry_run=dry_run, verb="set up")


@agents_app.command("remove")
def remove_command(
    harness: Annotated[str, typer.Argument(metavar="HARNESS", help=HARNESS_HELP)],
    project: ProjectOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Take out of HARNESS's config file what setup added (only that).

    A file nobody else changed since setup is put back byte for byte (a file setup made is
    deleted, with the folders it made if left empty); else what setup recorded adding goes
    (its hook, the sandbox switches it turned on, its deny rules and trust entries) and your
    changes stay. Backup and diff as for setup. Exit codes as for setup."""
    _render(_plan(setup.plan_remove, harness, project), dry_run=dry_run, verb="removed")


# How a check `--json` names (`notChecked`) reads in a sentence.
CHECKS_SAID = {"version": "version", "skipped": "skipped hooks (Codex's trust, Copilot's folders)"}


def status_lines(entry: dict[str, Any]) -> list[str]:
    """What `wisp agents status` (and the doctor) says of one harness, line by line."""
    where = f"{entry['program']}, {entry['version']}"
    if not entry["onPath"]:
        unchecked = " and ".join(
            CHECKS_SAID.get(c["check"], c["check"]) for c in entry["notChecked"]
        )
        where = (
            f"`{entry['executable']}` not on PATH, so its {unchecked} not checked "
            "(put it on PATH to check)"
        )
    lines = [f"{entry['title']} ({entry['harness']}): {where}"]
    if not entry["hooks"]:
        lines.append(f"  gate: not installed (wisp agents setup {entry['harness']})")
    for hook in entry["hooks"]:
        lines += _gate_lines(hook)
    lines += [f"  SKIPPED: {s}" for s in entry["skipped"]]
    lines += [f"  problem: {p}" for p in entry["problems"]]
    if entry["protected"]:
        lines.append("  protection: protected (its sandbox keeps $WISP_HOME and wisp out of reach)")
    else:
        lines.append("  protection: UNPROTECTED")
        lines += [f"    - {why}" for why in entry["unprotected"]]
    return lines


def _gate_lines(hook: dict[str, Any]) -> list[str]:
    closed = "fail-closed" if hook["failClosed"] else "NOT fail-closed"
    if hook["guard"]:
        closed += " (wisp's guard)" if hook["failClosed"] else " (its guard is missing)"
    runs = (
        f"runs {hook['wisp']} ({hook['wispVersion']})"
        if hook["works"]
        else f"BROKEN: {hook['wisp'] or 'no wisp'} does not run"
    )
    timeout = f", timeout {hook['timeout']} s" if hook["timeout"] is not None else ""
    lines = [f"  gate: {hook['event']} in {hook['file']}{timeout}, {closed}, {runs}"]
    if hook["thisWisp"] is False:
        lines.append(f"    set up by another wisp: {hook['setUpBy']} (not this one)")
    return lines


@agents_app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="The findings as JSON.")] = False,
) -> None:
    """For each harness on PATH or holding wisp's gate: its version, wisp's gate (which
    file, what timeout, fail-closed, the guard and wisp it names checked to exist and run),
    hooks it would skip, and whether $WISP_HOME and wisp's own program are out of its reach.

    Exit 0 every harness found is gated and protected, 1 one needs attention."""
    found = setup.status()
    if as_json:
        print_json(found)
    else:
        if not found:
            say("No agent harness wisp knows is on PATH, and none holds wisp's gate.")
        for entry in found:
            for line in status_lines(entry):
                say(visible(line))
    if not all(e["installed"] and not setup.needs_attention(e) for e in found):
        raise typer.Exit(int(ExitCode.NO))
