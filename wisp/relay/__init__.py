"""`wisp relay`: the pending channel as JSON lines on stdin/stdout, for a front end.

docs/relay.md is the protocol's reference, and :mod:`wisp.relay.protocol` its one
implementation, public: the relay and every Python front end (wisp tui among them) speak
through it. :func:`main` is the command; the relay itself is :class:`wisp.relay._relay.Relay`.
"""

from __future__ import annotations

import os
import sys

from pending import PendingError, Via
from wisp import open_channel
from wisp.relay.protocol import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    MAX_LINE_BYTES,
    VIAS,
    ErrorCode,
    ErrorLine,
)

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "MAX_LINE_BYTES",
    "VIAS",
    "main",
    "via_from_argv",
]


def via_from_argv(argv: list[str]) -> Via | None:
    """`python -m wisp.relay [--via relay|tui|web]`: the via asked for, or None if the arguments
    are not that."""
    if not argv:
        return Via.RELAY
    if len(argv) == 2 and argv[0] == "--via" and argv[1] in VIAS:
        return Via(argv[1])
    return None


def main(via: Via = Via.RELAY) -> int:
    """Run the relay until its standard input ends; the exit status. *via*: whom its answers
    are given as — `tui` only for `wisp tui`'s own relay child (`--via tui`)."""
    from wisp.relay._relay import Output, Relay
    from wisp.relay._terminal import raw_input, why_no_terminal

    # Only protocol lines may reach stdout: it is kept on a private descriptor, and fd 1 is
    # pointed at stderr, so a stray print from anywhere lands among the diagnostics.
    out = Output(os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0))
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    def fatal(message: str) -> int:
        out.send(ErrorLine(error=ErrorCode.CHANNEL, message=message, fatal=True))
        sys.stderr.write(f"wisp relay: {message}\n")
        return EXIT_ERROR

    try:
        channel = open_channel()
    except PendingError as exc:
        return fatal(str(exc))

    def warn(message: str) -> None:
        sys.stderr.write(f"wisp relay: {message}\n")

    stdin = sys.stdin.fileno()
    with channel, raw_input(stdin):
        try:
            relay = Relay(
                channel, out, on_warning=warn, via=via, terminal=lambda: why_no_terminal(stdin)
            )
            return relay.run(stdin)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except (OSError, PendingError) as exc:
            return fatal(f"cannot watch {channel.path}: {exc}. Check it with `wisp doctor`.")
