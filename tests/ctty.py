"""Run a command with a real pseudo-terminal as its controlling terminal, its standard streams
left as they are (pipes, for a relay) — as the person's terminal is for `wisp tui`'s relay.

    python tests/ctty.py [--foreground] -- ARGV...

A new session (setsid) gets a fresh pty as its controlling terminal (TIOCSCTTY). The command
runs there in a process group of its own, in the background of that terminal, as `wisp tui`
starts its relay; with ``--foreground`` it runs in the terminal's foreground group instead, as
a command an agent's shell tool runs in the person's terminal does. SIGTERM, SIGINT and
SIGHUP are passed on to the command; the exit status is the command's.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import termios
from types import FrameType


def _forward_to(pid: int) -> None:
    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)


def _status(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


def _session(slave: int, argv: list[str], foreground: bool) -> int:
    """In the forked child: a new session with the pty as its terminal, then the command."""
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    if foreground:  # the session leader is the terminal's foreground group: become the command
        os.close(slave)
        os.execvp(argv[0], argv)
    child = subprocess.Popen(argv, process_group=0)
    _forward_to(child.pid)
    while True:
        try:
            return child.wait()
        except InterruptedError:
            continue


def main(args: list[str]) -> int:
    foreground = args[:1] == ["--foreground"]
    if foreground:
        args = args[1:]
    if args[:1] != ["--"] or len(args) < 2:
        sys.stderr.write(__doc__ or "")
        return 2
    argv = args[1:]
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        os.close(master)
        code = 1
        try:
            code = _session(slave, argv, foreground)
        finally:
            os._exit(code if code >= 0 else 128 - code)
    os.close(slave)
    _forward_to(pid)
    while True:
        try:
            _pid, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    os.close(master)  # the pty lives as long as the command does
    return _status(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
