"""What every `wisp` command shares: where output goes, and how it fails."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from pending import Channel, PendingError
from wisp._config import Config, ConfigError, load_config
from wisp._home import open_channel as open_home_channel
from wisp._home import wisp_home
from wisp._text import visible
from wisp.cli._exit import ExitCode

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
        return open_home_channel()
    except PendingError as exc:
        fail(str(exc))


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


def refuse(message: str) -> NoReturn:
    """A refusal: nothing was written (exit 1)."""
    fail(message, ExitCode.NO)


def config_or_fail() -> Config:
    try:
        return load_config(wisp_home())
    except ConfigError as exc:
        fail(str(exc))


def require_terminal(command: str) -> None:
    """Answers are taken only from a terminal: a speed bump for an agent's shell tool."""
    if not sys.stdin.isatty():
        fail(
            f"`{command}` takes answers only from a terminal, and standard input is not one. "
            "This keeps an agent's shell tool from answering for you: run it yourself, in a "
            "terminal. Nothing was written."
        )
