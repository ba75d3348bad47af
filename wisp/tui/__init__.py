"""`wisp tui`: a terminal UI over relays (docs/tui.md). Needs the optional `textual` extra.

:func:`run` starts it; the application is :class:`wisp.tui._app.WispTui`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from wisp import WispError, terminal_notifies
from wisp._errors import install_hint
from wisp.relay.hosts import LinkError, check_hosts, host_argv
from wisp.tui._link import SSH_RELAY, Link, hello_line, local_link

__all__ = ["EXIT_CRASHED", "TuiError", "exit_status", "notify_sequence", "run"]

EXIT_CRASHED = 2  # the TUI stopped on an error of its own (never 0: nothing was done)


class TuiError(WispError):
    """The TUI cannot start as asked; the message says why and what to do."""


def notify_sequence(environ: Mapping[str, str]) -> str | None:
    """The sequence this terminal posts a notification for (`osc9`, `osc99`), or None — the
    terminal route's own rules (:func:`wisp.terminal_notifies`: never inside tmux, never in
    iTerm2). Only then does the TUI declare `notify` (seed ADR 0044, "Built")."""
    return terminal_notifies(environ)


def _missing_library() -> str | None:
    """The UI library's module that is not installed, found without importing it (that waits
    until the relays have started: the two start-ups overlap); None if it is there."""
    try:
        found = importlib.util.find_spec("textual")
    except ImportError as exc:
        return exc.name or "textual"
    return None if found is not None else "textual"


def _needs_textual(missing: str) -> str:
    return f"`wisp tui` needs the textual library ({missing} is missing). {install_hint('tui')}"


def no_terminal(stdin: Any, screen: Any) -> str | None:
    """Why the TUI cannot run here (None: it can): it reads keys from *stdin* and draws on
    *screen* (textual draws on standard error), and each must be a terminal. Without one it
    would wait for keys that never come, drawing its escape sequences into a pipe or a file."""
    missing = [
        name
        for name, stream in (("standard input", stdin), ("standard error", screen))
        if stream is None or not stream.isatty()
    ]
    if not missing:
        return None
    which = " and ".join(missing) + (" is not one" if len(missing) == 1 else " are not terminals")
    return (
        f"`wisp tui` needs a terminal, but its {which} (it reads keys from standard input "
        "and draws on standard error). Run it in a terminal window, or over ssh with "
        "`ssh -t HOST wisp tui`; without one, `wisp pending` lists what waits. Nothing was "
        "started."
    )


def run(hosts: Sequence[str], relay_command: str | None = None) -> int:
    """Run the TUI over this machine's relay and one per host, until the person quits."""
    missing = _missing_library()
    if missing is not None:
        raise TuiError(_needs_textual(missing))
    try:
        links = [local_link()]
        links += [
            Link(host=h, argv=host_argv(relay_command or SSH_RELAY, h)) for h in check_hosts(hosts)
        ]
    except LinkError as exc:
        raise TuiError(str(exc)) from None
    # Refused before anything starts (a Link is only its command until spawned): without a
    # terminal it would hang, writing escape sequences (issue 59).
    why = no_terminal(sys.stdin, sys.__stderr__)
    if why is not None:
        raise TuiError(why)
    sequence = notify_sequence(os.environ)
    # The relays start now, before the UI library loads: the two start-ups overlap.
    hello = hello_line(notify=sequence is not None)
    for link in links:
        link.spawn(hello)
    try:
        from wisp.tui._app import WispTui
    except ImportError as exc:  # the optional extra is not installed
        for link in links:
            link.abandon()
        raise TuiError(_needs_textual(exc.name or "textual")) from None
    app = WispTui(links=links, notify_sequence=sequence)
    try:
        app.run()
    finally:
        # Whatever ended the TUI (q, a closed terminal's SIGHUP, SIGTERM, a crash), no relay
        # or ssh outlives it: the app stops them cleanly; here the rest are ended.
        for link in app.links:
            link.end_now()
    return exit_status(app)


def exit_status(app: Any) -> int:
    """0 when the person quit; :data:`EXIT_CRASHED`, with a message saying what to do, when
    the application stopped on an error (textual prints its traceback itself)."""
    if not app.return_code:
        return 0
    sys.stderr.write(
        "wisp tui: stopped on an internal error (its traceback is above); this is a bug, "
        "please report it. Nothing was answered by the crash: the requests still wait. "
        "Start `wisp tui` again, or answer from a terminal (`wisp pending` lists them).\n"
    )
    return EXIT_CRASHED
