"""The app route: macOS, a notification from the terminal app itself, by its bundle id
(``notifications.viaTerminalApp``; ``wisp notify --route app`` tries it even when off). In
iTerm2 it is tried before the terminal route: iTerm2's OSC 9 banner can be switched off
without a word."""

from __future__ import annotations

from wisp.routes import terminal
from wisp.routes.osascript import macos_missing
from wisp.routes.route import Here, Notice, Posted, run

NAME = "app"

APP_SCRIPT = (
    "on run argv\n"
    "tell application id (item 4 of argv) to display notification (item 2 of argv) "
    "with title (item 1 of argv) subtitle (item 3 of argv)\n"
    "end run"
)


def goes_before(here: Here) -> str | None:
    """In iTerm2, ahead of the terminal route."""
    return terminal.NAME if terminal.terminal_name(here.environ)[0] == "iTerm2" else None


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    if here.platform != "darwin":
        return "not macOS"
    if not here.environ.get("__CFBundleIdentifier"):
        return "no terminal app bundle identifier (__CFBundleIdentifier unset)"
    if not forced and not here.settings.get("notifications.viaTerminalApp", True):
        return "notifications.viaTerminalApp is off"
    return macos_missing(here)


def post(here: Here, notice: Notice) -> Posted:
    bundle = here.environ["__CFBundleIdentifier"]
    script = [here.osascript, "-e", APP_SCRIPT, notice.title, notice.body, notice.subtitle]
    return run(here, [*script, bundle])
