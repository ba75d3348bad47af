"""Answers only from a person's terminal: the relay's speed bump, as the CLI's.

`wisp approvals approve` takes answers only when its standard input is a terminal, so an
agent's shell tool cannot answer for the person. The relay's standard input is a front end's
pipe, so it asks what a front end the person runs has and a command an agent's shell tool
runs does not:

- its standard input is a terminal (``ssh -tt HOST wisp relay``: sshd gave it one), or
- it has a controlling terminal (``/dev/tty`` opens) and runs in a process group of its own,
  in the background of that terminal — as `wisp tui`'s relay child does, started in the
  person's terminal session with its own process group.

A relay started with ``setsid`` (or by a daemon, or from a sandbox) has no controlling
terminal; one an agent's shell tool runs in the person's terminal (``printf … | wisp relay``)
is in the terminal's foreground process group. Both are refused. Like the CLI's check this is
a speed bump, not a lock: a program determined to can get itself a terminal.
"""

from __future__ import annotations

import contextlib
import os
import termios
import tty
from collections.abc import Iterator

TTY_PATH = "/dev/tty"


def why_no_terminal(stdin_fd: int) -> str | None:
    """None when answers may be taken from this relay; else why not, for people."""
    if os.isatty(stdin_fd):
        return None
    try:
        fd = os.open(TTY_PATH, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return (
            "this relay has no controlling terminal (it was started with setsid, by a "
            "daemon, or in a sandbox)"
        )
    try:
        foreground = os.tcgetpgrp(fd)
    except OSError:
        return "this relay's controlling terminal cannot be read"
    finally:
        os.close(fd)
    if foreground == os.getpgrp():
        return (
            "this relay runs in its terminal's foreground with a pipe for its input, as a "
            "command an agent's shell tool runs does (a front end starts it in a process "
            "group of its own)"
        )
    return None


@contextlib.contextmanager
def raw_input(fd: int) -> Iterator[None]:
    """While the relay runs: a terminal on *fd* (``ssh -tt``) set raw — no echo, no line
    editing, no signal keys, no output processing — so JSON lines pass through unchanged and
    are never echoed back into the stream; CR still reads as a newline, so a person typing
    a line by hand ends it with Enter. Restored as it was on the way out. A pipe: nothing."""
    if not os.isatty(fd):
        yield
        return
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    tty.setraw(fd, termios.TCSANOW)
    mode = termios.tcgetattr(fd)
    mode[0] |= termios.ICRNL  # iflag: Enter (CR) still ends a line
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
