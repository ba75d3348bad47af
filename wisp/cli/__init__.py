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


def _register() -> None:
    from wisp.cli.admin import config_app, doctor, notify
    from wisp.cli.approvals import approvals_app
    from wisp.cli.faces import relay, tui
    from wisp.cli.facts import facts_app
    from wisp.cli.mcp import mcp
    from wisp.cli.pending import pending_app
    from wisp.cli.questions import questions_app

    app.add_typer(pending_app, name="pending")
    app.command("doctor")(doctor)
    app.command("notify")(notify)
    app.add_typer(config_app, name="config")
    app.add_typer(approvals_app, name="approvals")
    app.add_typer(facts_app, name="facts")
    app.add_typer(questions_app, name="questions")
    app.command("relay")(relay)
    app.command("tui")(tui)
    app.command("mcp")(mcp)


_register()


def main() -> None:
    # watchdog logs a benign shutdown race at ERROR, and inotify overflows as warnings; the
    # watcher hears the overflow through its own handler and says what matters itself.
    watchdog_log = logging.getLogger("watchdog")
    watchdog_log.addHandler(logging.NullHandler())
    watchdog_log.propagate = False
    app()
