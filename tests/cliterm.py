"""Driving `wisp` in a real pseudo-terminal of a given width, as a person at a terminal does.

Output read from a pty has its lines ended by CR LF; :func:`lines` gives them back plain.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pexpect
from helpers import pty_run, wisp_spawn

from wisp._text import cell_width

WIDTHS = (40, 80, 200)
ROWS = 50


def _environ(env: dict[str, str] | None) -> dict[str, str]:
    """This process's environment less what sets a width or turns colour off, and *env*."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    environ.update(env or {})
    return environ


def spawn(*args: str, cols: int, env: dict[str, str] | None = None, timeout: float = 30) -> Any:
    """`wisp ARGS` running under a pty *cols* wide (stdin, stdout and stderr all on it)."""
    return pexpect.spawn(
        *wisp_spawn(*args),
        encoding="utf-8",
        timeout=timeout,
        dimensions=(ROWS, cols),
        env=_environ(env),
    )


SGR = re.compile(r"\x1b\[[0-9;]*m")  # bold and colours: styling, taking no cells


def run(
    *args: str, cols: int, env: dict[str, str] | None = None, styled: bool = False
) -> tuple[int, str]:
    """Run `wisp ARGS` to its end in a pty *cols* wide: (exit code, all it printed, without
    its styling unless *styled*)."""
    code, output = pty_run(
        *wisp_spawn(*args), env=_environ(env), dimensions=(ROWS, cols), timeout=30
    )
    return code, output if styled else SGR.sub("", output)


def lines(output: str) -> list[str]:
    return output.rstrip("\n").split("\n")


def overflowing(output: str, cols: int) -> list[str]:
    """The lines of *output* wider than *cols* (a layout that fits has none)."""
    return [line for line in lines(output) if cell_width(line) > cols]


def unwrapped(output: str) -> str:
    """*output* with every line break and indentation removed: what was wrapped, whole again
    (with the spaces at the breaks gone too)."""
    return "".join(part.strip() for part in output.split("\n"))
