"""What every `wisp` command shares: where output goes, and how it fails."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from pending import Channel, PendingError, wisp_home
from wisp._exit import ExitCode
from wisp._text import visible

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # never break a fix command


def command_group(help: str, **settings: Any) -> typer.Typer:
    """A `wisp` command group, set up as every group is: plain help text (no rich markup in
    request-derived text), no shell-completion commands, plain tracebacks for bugs."""
    return typer.Typer(
        help=help,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        **settings,
    )


def safe(text: str) -> str:
    """Text for a terminal: every control, bidi or zero-width character made visible, line by
    line. Messages carry text read from files (who answered, a reason); rich passes ESC, C1
    and bidi characters through, so nothing reaches the terminal unsanitised."""
    return "\n".join(visible(line) for line in text.split("\n"))


def say(text: str) -> None:
    """A message for people on stdout: never hard-wrapped (the terminal wraps it)."""
    out.print(Text(safe(text)), soft_wrap=True)


def tell(text: str) -> None:
    """A message for people on stderr (progress, warnings, how to answer)."""
    err.print(Text(safe(text)))


def fail(message: str, code: ExitCode = ExitCode.ERROR) -> NoReturn:
    """Say what happened and what to do (the message's job), on stderr; exit with *code*."""
    tell(f"wisp: {message}")
    raise typer.Exit(int(code))


def open_channel() -> Channel:
    try:
        return Channel.open(wisp_home())
    except PendingError as exc:
        fail(str(exc))


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
