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

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # never break a fix command


def say(text: str) -> None:
    """A message for people on stdout: never hard-wrapped (the terminal wraps it)."""
    out.print(Text(text), soft_wrap=True)


def fail(message: str, code: ExitCode = ExitCode.ERROR) -> NoReturn:
    """Say what happened and what to do (the message's job), on stderr; exit with *code*."""
    err.print(Text(f"wisp: {message}"))
    raise typer.Exit(int(code))


def open_channel() -> Channel:
    try:
        return Channel.open(wisp_home())
    except PendingError as exc:
        fail(str(exc))


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
