"""A stand-in for `ssh -tt HOST COMMAND…` on this machine: the command runs with a fresh
pseudo-terminal for its stdin, stdout, stderr and controlling terminal — as sshd runs a
command for `ssh -tt` — and the bytes are copied between our pipes and that terminal.

    python tests/fakessh.py HOST COMMAND...

HOST is taken and ignored (ssh's argument). Our exit status is the command's.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
from types import FrameType


def main(args: list[str]) -> int:
    if len(args) < 2:
        sys.stderr.write(__doc__ or "")
        return 2
    argv = args[1:]
    pid, master = pty.fork()
    if pid == 0:  # the pty is our stdin, stdout, stderr and controlling terminal
        os.execvp(argv[0], argv)

    def stop(signum: int, _frame: FrameType | None) -> None:
        os.kill(pid, signal.SIGHUP)  # as sshd does when the connection goes

    signal.signal(signal.SIGTERM, stop)
    reading = [master, 0]
    while True:
        ready, _w, _x = select.select(reading, [], [])
        if 0 in ready:
            data = os.read(0, 65536)
            if data:
                os.write(master, data)
            else:
                reading.remove(0)  # EOF: ssh -tt passes nothing more; the relay goes on
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the command has ended and its terminal closed
                data = b""
            if not data:
                break
            os.write(1, data)
    _pid, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
