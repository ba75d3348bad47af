"""The `wisp` command: a face that parses, calls the application (:mod:`wisp`), and renders.

Each command group lives in its own module; exit codes are :class:`wisp.program.writes.ExitCode`.
"""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["hook"]:  # a harness's hook: from here on, a signal ends in its deny
    from wisp.agents.hookio import arm

    arm()

import gc
import importlib
import os
from typing import Annotated, Any, NamedTuple

import typer
from typer._click import Command, Context, HelpFormatter

from wisp import __version__
from wisp.cli._common import command_group, fail
from wisp.cli._help import WispGroup, WispTyper, group_command
from wisp.program.writes import (
    ExitCode,  # noqa: F401 (wisp.cli.ExitCode, as it was)
    no_collections,
    reader_gone,
    said_at_the_root,
    say,
)

app = command_group(
    "wisp's pending channel: what your agents are waiting on you for, answered from any terminal.",
    name="wisp",
    no_args_is_help=True,
    # One way to complete: `wisp completion SHELL`, not typer's --install-completion and
    # --show-completion beside it (main() sets up what the script talks to).
    epilog="""Examples:
  wisp pending                      what waits for you
  wisp show 3f9c                    all of one request (a unique ID prefix will do)
  {approve:<33} approve it (only from a terminal)
  wisp log -f                       the audit log, as it is written
  wisp completion bash >> ~/.bashrc complete IDs with Tab""",
)


def _version(value: bool) -> None:
    if value:
        try:
            say(f"wisp {__version__}")  # plain text: no rich console for one line
        except BrokenPipeError:  # `wisp --version | true`: read by nobody, as for a command
            reader_gone()
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """wisp's pending channel: what your agents are waiting on you for."""


class _Entry(NamedTuple):
    """One command of the root: where it lives, and how `wisp --help` summarises it. (A row
    of a table, not a record: attrs' import is ~7.5 ms of a cold command, which `wisp
    --version` and an empty listing need nothing else of, bench/README.md.)"""

    module: str
    attr: str  # a Typer group, a command function, or a factory of one (`show_command`)
    summary: str
    epilog: str | None = None  # a name in *module* holding the examples, for a command
    factory: bool = False


# Every command of the root, in the order `wisp --help` lists them. A command is imported and
# built only when it is the one run (or completed): `wisp approvals pending` loads no TUI, no
# MCP server, no audit-log reader, and typer builds one group, not thirty commands.
_COMMANDS: dict[str, _Entry] = {
    "pending": _Entry(
        "wisp.cli.pending",
        "pending_app",
        "What waits for you, across every kind; watch it or sweep it.",
    ),
    "show": _Entry(
        "wisp.cli.show",
        "show_command",
        "Everything about one request: the whole command or question, who asks, its state.",
        "SHOW_EXAMPLES",
        factory=True,
    ),
    "doctor": _Entry(
        "wisp.cli.admin",
        "doctor",
        "Check the channel, the stores, the audit log and free space; name the fix.",
        "DOCTOR_EXAMPLES",
    ),
    "notify": _Entry(
        "wisp.cli.admin",
        "notify",
        "Post a notification through the first route that works here.",
        "NOTIFY_EXAMPLES",
    ),
    "log": _Entry(
        "wisp.cli.log",
        "log",
        "Read the audit log: filter by request, kind, event or time; follow it.",
        "LOG_EXAMPLES",
    ),
    "config": _Entry(
        "wisp.cli.admin",
        "config_app",
        "Settings in $WISP_HOME/config.json: list, get, set (types checked).",
    ),
    "approvals": _Entry(
        "wisp.cli.approvals",
        "approvals_app",
        "Command approvals: ask from a script; approve or deny from any terminal.",
    ),
    "facts": _Entry(
        "wisp.cli.facts",
        "facts_app",
        "Permanent facts: only you keep them, even after the asking program stopped.",
    ),
    "questions": _Entry(
        "wisp.cli.questions",
        "questions_app",
        "Questions to you: ask from a script; answer or decline from any terminal.",
    ),
    "hook": _Entry(
        "wisp.cli.hook",
        "hook_app",
        "Agent hooks: `wisp hook claude-code` puts you in front of Claude Code's tool calls.",
    ),
    "agents": _Entry(
        "wisp.cli.agents",
        "agents_app",
        "Set up agent harnesses: wisp's hook and their sandbox, in their own config files.",
    ),
    "policy": _Entry(
        "wisp.cli.policy",
        "policy_app",
        "Your policy: which calls run without asking; check one call, list rules, suggest.",
    ),
    "exec": _Entry(
        "wisp.cli.execute",
        "execute",
        "Ask to run exactly this command; run it in wisp's place if approved.",
        "EXEC_EXAMPLES",
    ),
    "relay": _Entry(
        "wisp.cli.faces",
        "relay",
        "JSON lines for a front end (its child process): wisp docs relay.",
        "RELAY_EXAMPLES",
    ),
    "tui": _Entry(
        "wisp.cli.faces",
        "tui",
        "A terminal UI that shows what waits, live, and answers every kind.",
        "TUI_EXAMPLES",
    ),
    "web": _Entry(
        "wisp.cli.web",
        "web_app",
        "A page for your phone: what waits, answered by paired devices only.",
    ),
    "mcp": _Entry(
        "wisp.cli.mcp",
        "mcp",
        "An MCP server over stdio: any MCP client's agent asks you through it.",
        "MCP_EXAMPLES",
    ),
    "docs": _Entry(
        "wisp.cli.docs",
        "docs",
        "Read a documentation page (wisp docs relay); without a topic, the topics.",
        "DOCS_EXAMPLES",
    ),
    "completion": _Entry(
        "wisp.cli.completion",
        "completion",
        "A shell completion script (bash, zsh, fish) that completes waiting IDs.",
        "COMPLETION_EXAMPLES",
    ),
}


class _LazyRoot(WispGroup):
    """The root group: lists every command from :data:`_COMMANDS`, builds one on demand."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """Every argument is UTF-8 text or the command is refused, before anything else:
        what wisp files is UTF-8 JSON shown to the person, and bytes that are no text could
        only be shown or run as something other than what was typed (docs/cli.md, "Exit
        codes")."""
        for arg in args:
            if not _is_text(arg):
                raw = os.fsencode(arg).decode("utf-8", "backslashreplace")
                fail(
                    f"the argument `{_shown(raw)}` is not UTF-8 text, and wisp files, shows"
                    " and runs only what it can show exactly as given: give it in UTF-8 (a"
                    " file named so is renamed first, e.g. with `mv` and a glob). Nothing"
                    " was written."
                )
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: Context) -> list[str]:
        known = [name for name, _ in _listed()]
        return [*super().list_commands(ctx), *(n for n in known if n not in self.commands)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            # The command's modules and its click command live as long as the process: no
            # collection while they load (it would find nothing to free), and, in `wisp`
            # itself, frozen as main() froze what came before (~8 M instructions a command).
            with no_collections():
                command = self._build_command(cmd_name)
            if command is not None and _freeze_what_loads:
                gc.freeze()
        return command

    def _build_command(self, cmd_name: str) -> Command | None:
        command = None
        if cmd_name in _COMMANDS:
            command = _build(cmd_name, _COMMANDS[cmd_name])
            self.commands[cmd_name] = command
        elif (summary := _kind_groups().get(cmd_name)) is not None:
            from wisp.cli._kindgroup import kind_group
            from wisp.kinds import views

            (kind_view,) = (v for v in views() if v.group == cmd_name)
            command = group_command(kind_group(kind_view))
            command.help = summary
            self.commands[cmd_name] = command
        return command

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        # The answering example is the command kind's own (wisp/kinds/), read only for help.
        from pending import Kind
        from wisp.kinds import view

        epilog = self.epilog or ""
        self.epilog = epilog.format(approve=view(Kind.COMMAND).answering[0].line("3f9c"))
        try:
            super().format_epilog(ctx, formatter)
        finally:
            self.epilog = epilog

    def invoke(self, ctx: Context) -> Any:
        """Run the command; what no command can say itself is said here, once
        (:func:`wisp.program.writes.said_at_the_root`): a reader that went away (`wisp pending |
        head -1`) ends it quietly with 0, a resource limit reached (too many open files, no
        memory) exits 2 naming the limit, never a file, and an audit log that is no file to
        append to exits 2 saying so."""
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at exit
        except Exception as exc:
            # Said in wisp.program.writes, which what is served before the CLI says it through too.
            code = said_at_the_root(exc)
            if code is None:
                raise
            raise typer.Exit(int(code)) from None

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        rows = _listed()
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _is_text(arg: str) -> bool:
    """Whether *arg* came from UTF-8 bytes (the interpreter carries other bytes as lone
    surrogates, which can be neither shown nor written as UTF-8)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(text: str) -> str:
    from wisp._text import visible

    return visible(text)


def _listed() -> list[tuple[str, str]]:
    """Every command and its summary in the order help lists them: the groups of kinds
    together, those with no hand-written group right after the hand-written ones."""
    from wisp.kinds import views

    kinds = {v.group for v in views()}
    rows = [(name, entry.summary) for name, entry in _COMMANDS.items()]
    after = max((i + 1 for i, (name, _) in enumerate(rows) if name in kinds), default=len(rows))
    rows[after:after] = _kind_groups().items()
    return rows


def _kind_groups() -> dict[str, str]:
    """The groups of kinds with no hand-written group (a kind added by its view alone), and
    their summaries. Asked only for help, or for a command the root does not list itself."""
    from wisp.kinds import views

    return {
        v.group: f"Requests of kind {v.kind.value}: {v.noun}."
        for v in views()
        if v.group not in _COMMANDS
    }


def _build(name: str, entry: _Entry) -> Command:
    module = importlib.import_module(entry.module)
    target = getattr(module, entry.attr)
    if isinstance(target, typer.Typer):
        command = group_command(target)
    else:
        holder = WispTyper(add_completion=False, rich_markup_mode=None)
        function = target() if entry.factory else target
        epilog = getattr(module, entry.epilog) if entry.epilog else None
        holder.command(name, epilog=epilog)(function)
        command = typer.main.get_command(holder)
    command.name = name
    return command


app.info.cls = _LazyRoot

# Set by main(), where the process is the command's: what is loaded is frozen (see main()). A
# Python caller running `app` in its own process keeps its collector as it was.
_freeze_what_loads = False


def main() -> None:
    global _freeze_what_loads

    # What is loaded by now lives as long as the process: frozen, no collection walks it
    # again. A listing of 10,000 requests makes ~150,000 objects and so triggers collections
    # that walked every module's objects each time (~25 ms of `wisp pending --json`).
    gc.freeze()
    _freeze_what_loads = True
    # One name however it is started (`wisp`, `python -m wisp`): help reads `wisp …`, and
    # shell completion talks to `wisp` through $_WISP_COMPLETE: the script `wisp completion`
    # prints asks in typer's words (`complete_bash`), which typer's completion classes read.
    if os.environ.get("_WISP_COMPLETE"):  # wisp.cli.completion.COMPLETE_VAR, not loaded here
        from typer._completion_classes import completion_init

        completion_init()
    app(prog_name="wisp")
