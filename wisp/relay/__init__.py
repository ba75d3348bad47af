"""`wisp relay`: the pending channel as JSON lines on stdin/stdout, for a front end.

docs/relay.md is the protocol's reference. :func:`main` is the command; the relay itself is
:class:`wisp.relay._relay.Relay`.
"""

from __future__ import annotations

import os
import sys

from pending import PendingError
from wisp._home import open_channel
from wisp.relay._protocol import MAX_LINE_BYTES, error_line

__all__ = ["MAX_LINE_BYTES", "main"]

EXIT_OK = 0
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


def main() -> int:
    """Run the relay until its standard input ends; the exit status."""
    from wisp.relay._relay import Output, Relay

    # Only protocol lines may reach stdout: it is kept on a private descriptor, and fd 1 is
    # pointed at stderr, so a stray print from anywhere lands among the diagnostics.
    out = Output(os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0))
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    def fatal(message: str) -> int:
        out.send(error_line("channel", message, fatal=True))
        sys.stderr.write(f"wisp relay: {message}\n")
        return EXIT_ERROR

    try:
        channel = open_channel()
    except PendingError as exc:
        return fatal(str(exc))

    def warn(message: str) -> None:
        sys.stderr.write(f"wisp relay: {message}\n")

    with channel:
        try:
            return Relay(channel, out, on_warning=warn).run(sys.stdin.fileno())
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except (OSError, PendingError) as exc:
            return fatal(f"cannot watch {channel.path}: {exc}. Check it with `wisp doctor`.")
