"""`wisp policy list|suggest|check`: the rules in force and where each comes from, rules
proposed from what you approved again and again, and what would become of one call — what
:mod:`wisp.policy` decides, rendered."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from wisp import wisp_home
from wisp._text import visible
from wisp.cli._common import command_group, emit, fail, print_json, say, tell, width
from wisp.cli._exit import ExitCode
from wisp.cli._layout import labelled

if TYPE_CHECKING:
    from wisp import PolicyListing, RuleSuggestion

policy_app = command_group(
    "Your policy: which calls run without asking, which are denied, which are asked.",
    no_args_is_help=True,
    epilog="""Examples:
  wisp policy check -- git push origin main   what would become of this call, and why
  wisp policy check --tool Write --input '{"file_path": "src/a.py"}'
  wisp policy list                            the rules in force here, and whose each is
  wisp policy suggest                         rules for what you approve again and again""",
)

JsonOption = Annotated[bool, typer.Option("--json", help="As JSON (docs/cli.md: its shape).")]
CwdOption = Annotated[
    str | None,
    typer.Option(
        "--cwd",
        metavar="DIR",
        help="The directory the call runs in (its project: the git root above it). "
        "Default: this one.",
    ),
]


@policy_app.callback()
def policy() -> None:
    """Your policy: which calls run without asking, which are denied, which are asked
    (wisp docs policy)."""


def _cwd(given: str | None) -> str:
    cwd = Path(given).absolute() if given is not None else Path.cwd()
    if not cwd.is_dir():
        fail(f"--cwd {visible(str(cwd))} is not a directory; give the one the call runs in.")
    return str(cwd)


@policy_app.command("list")
def list_command(cwd: CwdOption = None, as_json: JsonOption = False) -> None:
    """The rules in force here, and where each comes from.

    For calls run in DIR (--cwd; default here): the built-in rules, on or off; yours
    ($WISP_HOME/policy.toml) and the project's (.wisp/policy.toml), each with its FILE:LINE.
    A refused file is named with why and what to do.

    Exit 0; 1 a policy file is refused (its rules are not in force: calls they would decide
    are asked); 2 usage."""
    from wisp import policy_listing, policy_listing_json, project_here

    found = policy_listing(wisp_home(), project_here(_cwd(cwd)))
    if as_json:
        print_json(policy_listing_json(found))
    else:
        _render_listing(found)
    if found.refused:
        raise typer.Exit(int(ExitCode.NO))


def _render_listing(found: PolicyListing) -> None:
    columns = width()
    say("Built-in rules (allow; `[builtin]` in your file turns one off):")
    emit(
        labelled([(name, "on" if on else "off") for name, on in found.builtins], columns, indent=2)
    )
    for file in found.files:
        whose = "Your rules" if file.origin.value == "person" else "The project's rules"
        say(f"{whose} ({visible(file.path)}):")
        if file.state == "absent":
            say("  none (no file)")
            continue
        if file.state == "refused":
            say(visible(f"  REFUSED: {file.reason}"))
            continue
        rules = [r for r in found.rules if r.where.rsplit(":", 1)[0] == file.path]
        if not rules:
            say("  none")
        rows = [(r.name, f"{r.action.value}: {_what(r)} ({_line(r.where)})") for r in rules]
        emit(labelled([(visible(a), visible(b)) for a, b in rows], columns, indent=2))


def _line(where: str) -> str:
    return "line " + where.rsplit(":", 1)[-1]


def _what(rule: Any) -> str:
    """What a rule matches, in a line."""
    parts = []
    if rule.command is not None:
        parts.append("command " + " ".join(rule.command))
    if rule.path is not None:
        parts.append(f"path {rule.path}")
    if rule.tool is not None:
        parts.append(f"tool {rule.tool}")
    if rule.harness is not None:
        parts.append(f"in {rule.harness}")
    if rule.project is not None:
        parts.append(f"in project {rule.project}")
    return ", ".join(parts)


@policy_app.command("suggest")
def suggest_command(as_json: JsonOption = False) -> None:
    """Rules for what you approved again and again.

    The first words of commands approved 3 times or more (the audit log's answers), never
    a must-ask call (the network, a write outside the project, `rm -r`, `sudo`, a pipe into
    a shell), nor what a rule of yours already allows. Each is ready to paste into
    $WISP_HOME/policy.toml, its examples filled in. Nothing is written.

    Exit 0 (with suggestions or none); 2 the audit log cannot be read."""
    from wisp import AuditLogError, suggest_rules, suggestion_json

    try:
        found, skipped = suggest_rules(wisp_home())
    except AuditLogError as exc:
        fail(str(exc))
    if skipped:
        tell(f"wisp: skipped {skipped} line(s) of the audit log that are not records.")
    if as_json:
        print_json([suggestion_json(s) for s in found])
        return
    _render_suggestions(found)


def _render_suggestions(found: list[RuleSuggestion]) -> None:
    if not found:
        say("Nothing to suggest: no command was approved 3 times or more that a rule could allow.")
        return
    say(f"Rules for {wisp_home() / 'policy.toml'} (review each before you paste it):")
    for suggestion in found:
        say("")
        for line in suggestion.toml().splitlines():
            say(visible(line))
