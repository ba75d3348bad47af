"""The `wisp` command: a face that parses, calls the application (:mod:`wisp`), and renders.

Each command group lives in its own module; exit codes are :class:`wisp.cli._exit.ExitCode`.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from wisp import __version__
from wisp.cli._common import command_group, out

app = command_group(
    "wisp's pending channel: what your agents are waiting on you for, answered from any terminal.",
    name="wisp",
    no_args_is_help=True,
    add_completion=True,
    epilog="""Examples:
  wisp pending                      what waits for you
  wisp show 3f9c                    all of one request (a unique ID prefix will do)
  wisp approvals approve 3f9c       approve it (only from a terminal)
  wisp log -f                       the audit log, as it is written
  wisp completion bash >> ~/.bashrc complete IDs with Tab""",
)


def _version(value: bool) -> None:
    if value:
        out.print(f"wisp {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """wisp's pending channel: what your agents are waiting on you for."""


RELAY_EXAMPLES = """Example:
  wisp relay                  (a front end runs this as its child: docs/relay.md)"""
TUI_EXAMPLES = """Examples:
  wisp tui
  wisp tui --host build-box   (that host's requests too, over ssh)"""
MCP_EXAMPLES = """Example:
  claude mcp add wisp -- wisp mcp   (an MCP client starts it: docs/mcp.md)"""


def _register() -> None:
    from wisp.cli.admin import DOCTOR_EXAMPLES, NOTIFY_EXAMPLES, config_app, doctor, notify
    from wisp.cli.approvals import approvals_app
    from wisp.cli.completion import COMPLETION_EXAMPLES, completion
    from wisp.cli.faces import relay, tui
    from wisp.cli.facts import facts_app
    from wisp.cli.log import LOG_EXAMPLES, log
    from wisp.cli.mcp import mcp
    from wisp.cli.pending import pending_app
    from wisp.cli.questions import questions_app
    from wisp.cli.show import SHOW_EXAMPLES, show_command

    app.add_typer(pending_app, name="pending")
    app.command("show", epilog=SHOW_EXAMPLES)(show_command())
    app.command("doctor", epilog=DOCTOR_EXAMPLES)(doctor)
    app.command("notify", epilog=NOTIFY_EXAMPLES)(notify)
    app.command("log", epilog=LOG_EXAMPLES)(log)
    app.add_typer(config_app, name="config")
    app.add_typer(approvals_app, name="approvals")
    app.add_typer(facts_app, name="facts")
    app.add_typer(questions_app, name="questions")
    app.command("relay", epilog=RELAY_EXAMPLES)(relay)
    app.command("tui", epilog=TUI_EXAMPLES)(tui)
    app.command("mcp", epilog=MCP_EXAMPLES)(mcp)
    app.command("completion", epilog=COMPLETION_EXAMPLES)(completion)


_register()


def main() -> None:
    # watchdog logs a benign shutdown race at ERROR, and inotify overflows as warnings; the
    # watcher hears the overflow through its own handler and says what matters itself.
    watchdog_log = logging.getLogger("watchdog")
    watchdog_log.addHandler(logging.NullHandler())
    watchdog_log.propagate = False
    # One name however it is started (`wisp`, `python -m wisp`): help reads `wisp …`, and
    # shell completion talks to `wisp` through $_WISP_COMPLETE.
    app(prog_name="wisp")
