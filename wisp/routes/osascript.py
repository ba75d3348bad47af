"""The osascript route: macOS, a notification attributed to Script Editor. The text reaches
AppleScript only as arguments of a fixed script, never as script."""

from __future__ import annotations

import os

from wisp.routes.route import Here, Notice, Posted, run

NAME = "osascript"

OSASCRIPT_SCRIPT = (
    "on run argv\n"
    "display notification (item 2 of argv) with title (item 1 of argv) "
    "subtitle (item 3 of argv)\n"
    "end run"
)


def macos_missing(here: Here) -> str | None:
    """Why AppleScript cannot post here (not macOS, no osascript), or None."""
    if here.platform != "darwin":
        return "not macOS"
    if not os.access(here.osascript, os.X_OK):
        return f"{here.osascript} is not there"
    return None


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    return macos_missing(here)


def post(here: Here, notice: Notice) -> Posted:
    script = [here.osascript, "-e", OSASCRIPT_SCRIPT, notice.title, notice.body, notice.subtitle]
    return run(here, script)
