"""Notifications: tell the person a request waits, through the first route that reaches them.

Limits apply first (seed `002`): control characters become spaces, the title and subtitle are
cut to 64 characters and the message to 256, at most `notifications.perMinute` a minute across
the process, and `notifications.enabled: false` refuses every one. Then the routes, in order
(seed `000`, ADR 0044), the first that works posting it:

1. ``host``: a front end that declared ``notify`` in its hello gets a ``notify`` line;
2. ``terminal``: OSC 9 (Ghostty, iTerm2, WezTerm) or OSC 99 (kitty) written to /dev/tty —
   never to stdout, never under a JSON front end or the MCP server, not through tmux;
3. ``app``: macOS, the terminal app by bundle id (``notifications.viaTerminalApp``);
4. ``osascript``: macOS, attributed to Script Editor;
5. ``desktop``: Linux, the freedesktop notification service (``notify-send``) on a session bus.

In iTerm2 the app route goes before the terminal route (its OSC 9 banner can be switched off
without a word). Text reaches AppleScript and notify-send only as arguments, never as script or
through a shell.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import attrs

from pending import SYSTEM_CLOCK, Clock
from wisp._audit import AuditEvent, EntryPoint, audit
from wisp._text import visible

TITLE_MAX = 64
SUBTITLE_MAX = 64
MESSAGE_MAX = 256
RATE_WINDOW_S = 60.0
ROUTE_TIMEOUT_S = 5.0  # a route's helper program that hangs is given up on, never waited on


class Route(StrEnum):
    """The ways a notification reaches the person, in their default order."""

    HOST = "host"  # a front end that declared `notify` (the relay's `notify` line)
    TERMINAL = "terminal"  # OSC 9 / OSC 99 to /dev/tty
    APP = "app"  # macOS: the terminal app, by bundle id
    OSASCRIPT = "osascript"  # macOS: attributed to Script Editor
    DESKTOP = "desktop"  # Linux: notify-send on a session bus


class Face(StrEnum):
    """What the posting process is to the person: which routes it may use."""

    TERMINAL = "terminal"  # a command in the person's terminal
    JSON = "json"  # a JSON-lines front end owns stdout (the relay): the host route
    MCP = "mcp"  # an MCP server: stdout is the protocol, the client owns the terminal


ROUTES: tuple[str, ...] = tuple(Route)
FACES: tuple[str, ...] = tuple(Face)

# Terminals that post a notification for an escape sequence, by TERM_PROGRAM (else TERM).
OSC9_TERMINALS = {"ghostty": "Ghostty", "iterm.app": "iTerm2", "wezterm": "WezTerm"}
OSC99_TERMINALS = {"kitty": "kitty", "xterm-kitty": "kitty"}

# The fixed AppleScripts: the text arrives as argv, never as script.
OSASCRIPT_SCRIPT = (
    "on run argv\n"
    "display notification (item 2 of argv) with title (item 1 of argv) "
    "subtitle (item 3 of argv)\n"
    "end run"
)
APP_SCRIPT = (
    "on run argv\n"
    "tell application id (item 4 of argv) to display notification (item 2 of argv) "
    "with title (item 1 of argv) subtitle (item 3 of argv)\n"
    "end run"
)


def clean(text: str, limit: int) -> str:
    """Control characters become spaces; bidi overrides, zero-width and other invisible
    characters are shown as markers (``⟨U+202E⟩``), as everywhere wisp shows request text, so
    a banner cannot read other than it is; cut to *limit* characters with an ellipsis."""
    if text.isprintable():
        # Printable holds no control character (Cc) and nothing visible() marks (C*, Zl, Zp,
        # and spaces other than " " are exactly what isprintable() refuses): it stays as it
        # is. Every request's notice is cleaned, notifications on or off (it is audited).
        cleaned = text
    else:
        spaced = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
        cleaned = visible(spaced)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def terminal_safe(text: str) -> str:
    """Again for escape sequences: every C0 and C1 control and DEL become a space, and `;`
    becomes `,`, so no text can end a sequence or be read as its parameters."""
    out = []
    for char in text:
        code = ord(char)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            out.append(" ")
        elif char == ";":
            out.append(",")
        else:
            out.append(char)
    return "".join(out)


def osc9(title: str, subtitle: str, body: str) -> bytes:
    head = terminal_safe(title) + (f" — {terminal_safe(subtitle)}" if subtitle else "")
    return f"\x1b]9;{head}: {terminal_safe(body)}\x07".encode()


def osc99(title: str, subtitle: str, body: str, ident: str) -> bytes:
    head = terminal_safe(title) + (f" — {terminal_safe(subtitle)}" if subtitle else "")
    return (
        f"\x1b]99;i={ident}:d=0:p=title;{head}\x1b\\"
        f"\x1b]99;i={ident}:p=body;{terminal_safe(body)}\x1b\\"
    ).encode()


@attrs.frozen(kw_only=True)
class Notice:
    title: str
    subtitle: str
    body: str
    sound: bool = False


@attrs.frozen(kw_only=True)
class Result:
    posted: bool
    route: str | None = None
    reason: str | None = None  # why not shown
    skipped: tuple[str, ...] = ()  # "route: reason" per route passed over

    def __str__(self) -> str:
        if self.posted:
            return f"notification posted via {self.route}"
        return f"notification not shown: {self.reason}"


class RateLimit:
    """At most *n* in any window of RATE_WINDOW_S, across everything that shares it."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self, per_minute: int) -> bool:
        now = self._clock.monotonic()
        with self._lock:
            while self._times and now - self._times[0] >= RATE_WINDOW_S:
                self._times.popleft()
            if len(self._times) >= per_minute:
                return False
            self._times.append(now)
            return True


_PROCESS_LIMIT = RateLimit(SYSTEM_CLOCK)  # one per process: the limit is across the process


class Notifier:
    """Posts notifications for one face of the process (`terminal`, `json` or `mcp`)."""

    def __init__(
        self,
        home: Path,
        *,
        face: Face | str = Face.TERMINAL,
        host: Callable[[dict[str, Any]], None] | None = None,
        environ: Mapping[str, str] | None = None,
        platform: str = sys.platform,
        settings: Mapping[str, Any] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        limit: RateLimit | None = None,
        tty_path: str = "/dev/tty",
        osascript: str = "/usr/bin/osascript",
        entry_point: EntryPoint = EntryPoint.NOTIFY,
    ) -> None:
        if face not in FACES:
            raise ValueError(f"face must be one of {FACES}")
        self.home = home
        self.face = Face(face)
        self.host = host  # set when a front end's hello declared `notify`
        self.environ = dict(os.environ if environ is None else environ)
        self.platform = platform
        self.settings = dict(settings or {})
        self.clock = clock
        self.limit = limit or _PROCESS_LIMIT
        self.tty_path = tty_path
        self.osascript = osascript
        self.entry_point = entry_point

    def _setting(self, key: str, default: Any) -> Any:
        return self.settings.get(key, default)

    # --- route selection (no side effects): what would happen, and why -------------------

    def order(self) -> list[str]:
        if self._terminal_name()[0] == "iTerm2":
            return [Route.HOST, Route.APP, Route.TERMINAL, Route.OSASCRIPT, Route.DESKTOP]
        return list(ROUTES)

    def _terminal_name(self) -> tuple[str | None, str]:
        program = self.environ.get("TERM_PROGRAM", "")
        name = program or self.environ.get("TERM", "")
        key = name.lower()
        if key in OSC9_TERMINALS:
            return OSC9_TERMINALS[key], "osc9"
        if key in OSC99_TERMINALS:
            return OSC99_TERMINALS[key], "osc99"
        return None, name

    def why_not(self, route: str, *, forced: bool = False) -> str | None:
        """Why *route* cannot post here, or None if it can be tried."""
        env = self.environ
        if route == Route.HOST:
            if self.face is not Face.JSON:
                return "no front end declared notify (only under `wisp relay`)"
            return None if self.host is not None else "the front end did not declare notify"
        if route == Route.TERMINAL:
            if self.face is Face.JSON:
                return "the front end owns the terminal"
            if self.face is Face.MCP:
                return "the MCP client owns the terminal"
            if env.get("TMUX"):
                return "tmux does not pass notification sequences through"
            name, kind = self._terminal_name()
            if name is None:
                shown = kind or "unset"
                return f"TERM_PROGRAM/TERM {shown!r} names no terminal with a notification sequence"
            return None
        if route in (Route.APP, Route.OSASCRIPT):
            if self.platform != "darwin":
                return "not macOS"
            if route == Route.APP:
                if not env.get("__CFBundleIdentifier"):
                    return "no terminal app bundle identifier (__CFBundleIdentifier unset)"
                if not forced and not self._setting("notifications.viaTerminalApp", True):
                    return "notifications.viaTerminalApp is off"
            if not os.access(self.osascript, os.X_OK):
                return f"{self.osascript} is not there"
            return None
        if route == Route.DESKTOP:
            if not self.platform.startswith("linux"):
                return "not Linux"
            if not env.get("DBUS_SESSION_BUS_ADDRESS"):
                return "no session bus (DBUS_SESSION_BUS_ADDRESS unset)"
            if self._notify_send() is None:
                return "notify-send is not installed"
            return None
        raise ValueError(f"unknown route {route!r}")

    def _notify_send(self) -> str | None:
        return shutil.which("notify-send", path=self.environ.get("PATH", os.defpath))

    # --- posting -------------------------------------------------------------------------

    def post(
        self,
        title: str,
        message: str,
        *,
        subtitle: str = "",
        source: str = "user",
        route: str | None = None,
        about: Mapping[str, Any] | None = None,
    ) -> Result:
        """Post a notification (or say why not); audited either way, with *about* (the
        request's fields) when it is about a request. Never raises."""
        notice = Notice(
            title=clean(title, TITLE_MAX),
            subtitle=clean(subtitle, SUBTITLE_MAX),
            body=clean(message, MESSAGE_MAX),
        )
        try:
            result = self._post(notice, route)
        except Exception as exc:  # posting must never fail what it announces
            result = Result(posted=False, reason=f"the notifier failed ({exc})")
        audit(
            self.home,
            AuditEvent.NOTIFICATION,
            {
                **(about or {}),
                "title": notice.title,
                "subtitle": notice.subtitle or None,
                "body": notice.body,
                "source": source,
                "outcome": "posted" if result.posted else "not shown",
                "route": result.route,
                "reason": result.reason,
                "skipped": list(result.skipped),
            },
            entry_point=self.entry_point,
            clock=self.clock,
        )
        return result

    def _post(self, notice: Notice, only: str | None) -> Result:
        if not self._setting("notifications.enabled", True):
            return Result(posted=False, reason="notifications are off (notifications.enabled)")
        if not notice.body.strip():
            return Result(posted=False, reason="the message is empty")
        if not self.limit.take(int(self._setting("notifications.perMinute", 5))):
            return Result(
                posted=False,
                reason="the per-minute limit is reached "
                f"({self._setting('notifications.perMinute', 5)} a minute)",
            )
        skipped: list[str] = []
        for route in [only] if only else self.order():
            reason = self.why_not(route, forced=only is not None)
            if reason is None:
                reason = self._try(route, notice)
            if reason is None:
                return Result(posted=True, route=route, skipped=tuple(skipped))
            skipped.append(f"{route}: {reason}")
        return Result(
            posted=False,
            reason="no route could post it" if not only else skipped[0],
            skipped=tuple(skipped),
        )

    def _try(self, route: str, notice: Notice) -> str | None:
        """Post through *route*; None if it took it, else why it failed."""
        try:
            if route == Route.HOST:
                assert self.host is not None
                self.host(
                    {
                        "type": "notify",
                        "title": notice.title,
                        "subtitle": notice.subtitle,
                        "body": notice.body,
                        "sound": notice.sound,
                    }
                )
                return None
            if route == Route.TERMINAL:
                return self._write_tty(notice)
            if route == Route.APP:
                return self._run(
                    [
                        self.osascript,
                        "-e",
                        APP_SCRIPT,
                        notice.title,
                        notice.body,
                        notice.subtitle,
                        self.environ["__CFBundleIdentifier"],
                    ]
                )
            if route == Route.OSASCRIPT:
                return self._run(
                    [
                        self.osascript,
                        "-e",
                        OSASCRIPT_SCRIPT,
                        notice.title,
                        notice.body,
                        notice.subtitle,
                    ]
                )
            if route == Route.DESKTOP:
                send = self._notify_send()
                assert send is not None
                summary = notice.title + (f" — {notice.subtitle}" if notice.subtitle else "")
                return self._run([send, "--app-name=wisp", "--", summary, notice.body])
        except Exception as exc:  # a route that breaks is skipped, never a failure of the caller
            return f"failed ({exc})"
        raise ValueError(f"unknown route {route!r}")

    def _write_tty(self, notice: Notice) -> str | None:
        _name, kind = self._terminal_name()
        data = (
            osc9(notice.title, notice.subtitle, notice.body)
            if kind == "osc9"
            else osc99(notice.title, notice.subtitle, notice.body, secrets.token_hex(4))
        )
        try:
            # Non-blocking: a terminal held by flow control makes the write fail, not hang.
            fd = os.open(self.tty_path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            return f"no terminal ({self.tty_path} does not open: {exc.strerror})"
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        return None

    def _run(self, argv: list[str]) -> str | None:
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=ROUTE_TIMEOUT_S,
                env=self.environ,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return f"{Path(argv[0]).name} did not finish within {ROUTE_TIMEOUT_S:g}s"
        except OSError as exc:
            return f"{Path(argv[0]).name} could not run ({exc.strerror})"
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip().splitlines()
            return f"{Path(argv[0]).name} exited {done.returncode}" + (
                f": {detail[-1][:120]}" if detail else ""
            )
        return None

    def describe(self) -> list[tuple[str, str | None]]:
        """For the doctor: each route in order with why it would be skipped (None: usable)."""
        return [(route, self.why_not(route)) for route in self.order()]
