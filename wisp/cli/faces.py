"""`wisp relay` and `wisp tui`: the front-end faces, started from the `wisp` command.

Each imports its face inside the command function, so every other command stays as light as
it was: `wisp pending` never imports textual.
"""

from __future__ import annotations

from typing import Annotated

import typer

from wisp.cli._common import fail
from wisp.cli._exit import ExitCode

RELAY_EXAMPLES = """Example:
  wisp relay                  (a front end runs this as its child: wisp docs relay)"""
TUI_EXAMPLES = """Examples:
  wisp tui
  wisp tui --host build-box   (that host's requests too, over ssh)"""


def relay(
    via: Annotated[
        str,
        typer.Option(
            "--via",
            metavar="relay|tui|web",
            help="Whom answers are given as (a label in the audit log, not authentication): "
            "`tui` is what `wisp tui` starts its relays with, `web` what `wisp web --host` "
            "starts on another machine.",
        ),
    ] = "relay",
) -> None:
    """Speak the channel as JSON lines on stdin/stdout, for a front end that runs this as a
    child (`wisp docs relay`). Takes answers only from a front end the person runs in a terminal.
    Ends when stdin does. Exit 0 at EOF, 2 if the channel cannot be used."""
    from pending import Via
    from wisp import _startup
    from wisp.relay import VIAS, main

    _startup.resume()  # a face lives on (wisp._startup)
    if via not in VIAS:
        fail(f"--via takes relay, tui or web, not {via[:40]!r}.", ExitCode.ERROR)
    raise typer.Exit(main(Via(via)))


def tui(
    host: Annotated[
        list[str] | None,
        typer.Option(
            "--host",
            metavar="HOST",
            help="Also answer for HOST, through `ssh HOST wisp relay` (repeatable).",
        ),
    ] = None,
    relay_command: Annotated[
        str | None,
        typer.Option(
            "--relay-command",
            metavar="COMMAND",
            help="The command that starts a --host's relay, run without a shell; {host} is "
            "replaced by the host. Default: "
            "ssh -tt -o BatchMode=yes -- {host} wisp relay --via tui.",
        ),
    ] = None,
) -> None:
    """Every waiting request, live, answered in a dialog (`wisp docs tui`). Needs the `tui`
    extra. Exit 0 when you quit, 2 if it cannot start."""
    from wisp import _startup
    from wisp.tui import TuiError, run

    _startup.resume()  # a face lives on (wisp._startup)
    try:
        code = run(host or [], relay_command)
    except TuiError as exc:
        fail(str(exc), ExitCode.ERROR)
    raise typer.Exit(code)
