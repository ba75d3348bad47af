"""Notifications: tell the person a request waits, wherever they are.

Limits apply first (seed `002`): control characters become spaces, the title and subtitle are
cut to 64 characters and the message to 256, at most `notifications.perMinute` a minute across
the process, and `notifications.enabled: false` refuses every one. Then the routes on this
machine, in order (seed `000`, ADR 0044), the first that works posting it:

1. ``host``: a front end that declared ``notify`` in its hello gets a ``notify`` line;
2. ``terminal``: OSC 9 (Ghostty, iTerm2, WezTerm) or OSC 99 (kitty) written to /dev/tty —
   never to stdout, never under a JSON front end or the MCP server, not inside tmux;
3. ``tmux``: inside tmux, shown on the attached clients' status lines, and the terminal's
   sequence passed through to it where the pane allows (wisp.routes.tmux);
4. ``app``: macOS, the terminal app by bundle id (``notifications.viaTerminalApp``);
5. ``osascript``: macOS, attributed to Script Editor;
6. ``desktop``: Linux, the freedesktop notification service (``notify-send``) on a session bus.

Then ``push`` (wisp.routes.push), for the person who is not at this machine: to every
`notifications.push` URL through Apprise — also when a route here posted
(`notifications.pushWhen: always`), or only when none did (`unseen`). It carries the host
name and the commands that answer, and is sent by a process of its own: filing, the
asker's wait and its exit never wait for it; its outcome is audited when it is known
(within 5 s of sending).

In iTerm2 the app route goes before the terminal route (its OSC 9 banner can be switched off
without a word). Text reaches AppleScript, notify-send and tmux only as arguments, never as
script or through a shell.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import attrs

from pending import SYSTEM_CLOCK, Clock, Kind
from wisp._text import visible
from wisp.audit.writer import AuditEvent, EntryPoint, audit, check_log
from wisp.kinds import view
from wisp.routes import push as _push
from wisp.routes.subproc import run_bounded
from wisp.routes.tmux import TMUX_DISPLAY_S, Client, Tmux, display_text, passthrough
from wisp.stores.config import PushWhen
from wisp.stores.pushurls import push_urls, redact

TITLE_MAX = 64
SUBTITLE_MAX = 64
MESSAGE_MAX = 256
HOST_MAX = 64  # the host name a push names, cut as a title is
RATE_WINDOW_S = 60.0
ROUTE_TIMEOUT_S = 5.0  # a route's helper program that hangs is given up on, never waited on


class Route(StrEnum):
    """The ways a notification reaches the person, in their default order."""

    HOST = "host"  # a front end that declared `notify` (the relay's `notify` line)
    TERMINAL = "terminal"  # OSC 9 / OSC 99 to /dev/tty
    TMUX = "tmux"  # the attached tmux clients, and passthrough to their terminal
    APP = "app"  # macOS: the terminal app, by bundle id
    OSASCRIPT = "osascript"  # macOS: attributed to Script Editor
    DESKTOP = "desktop"  # Linux: notify-send on a session bus
    PUSH = "push"  # Apprise URLs: phones and chat, for the person away from this machine


class Face(StrEnum):
    """What the posting process is to the person: which routes it may use."""

    TERMINAL = "terminal"  # a command in the person's terminal
    JSON = "json"  # a JSON-lines front end owns stdout (the relay): the host route
    MCP = "mcp"  # an MCP server: stdout is the protocol, the client owns the terminal


ROUTES: tuple[str, ...] = tuple(Route)
FACES: tuple[str, ...] = tuple(Face)
# The routes on this machine, in order; push comes after them all.
LOCAL_ROUTES: tuple[Route, ...] = tuple(r for r in Route if r is not Route.PUSH)

# Terminals that post a notification for an escape sequence, by TERM_PROGRAM (else TERM;
# inside tmux, also by what the outer terminal answered to XTVERSION, or its TERM).
OSC9_TERMINALS = {
    "ghostty": "Ghostty",
    "xterm-ghostty": "Ghostty",
    "iterm.app": "iTerm2",
    "iterm2": "iTerm2",
    "wezterm": "WezTerm",
}
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


def terminal_kind(name: str) -> tuple[str | None, str]:
    """The terminal *name* (a TERM_PROGRAM or TERM) names, and its sequence (`osc9` or
    `osc99`); or None and the name, for a terminal with no notification sequence."""
    key = name.lower()
    if key in OSC9_TERMINALS:
        return OSC9_TERMINALS[key], "osc9"
    if key in OSC99_TERMINALS:
        return OSC99_TERMINALS[key], "osc99"
    return None, name


# A `notification` record's own fields; a request's field of the same name (a fact's `source`,
# a command's `reason`) is kept beside them as `request<Name>`, never overwritten.
NOTIFICATION_FIELDS = frozenset(
    {"title", "subtitle", "body", "source", "outcome", "route", "detail", "push", "targets"}
    | {"reason", "skipped"}
)


def _about_fields(about: Mapping[str, Any] | None) -> dict[str, Any]:
    """The announced request's fields for its `notification` record."""
    return {
        (f"request{key[0].upper()}{key[1:]}" if key in NOTIFICATION_FIELDS else key): value
        for key, value in (about or {}).items()
    }


def clean(text: str, limit: int) -> str:
    """Control characters become spaces; bidi overrides, zero-width and other invisible
    characters are shown as markers (``⟨U+202E⟩``), as everywhere wisp shows request text, so
    a banner cannot read other than it is; cut to *limit* characters with an ellipsis."""
    # Printable text holds no control character (Cc): only visible()'s pass is left, which
    # has a fast path of its own. Every request's notice is cleaned, notifications on or off
    # (it is audited).
    if text.isprintable():
        spaced = text
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
    detail: str | None = None  # how the route posted it ("shown on 2 tmux clients, …")
    push: str | None = None  # what became of the push, when it was tried ("sending to …")
    deliveries: tuple[_push.Delivery, ...] = ()  # each push target's outcome, when waited for

    def __str__(self) -> str:
        if not self.posted:
            return f"notification not shown: {self.reason}"
        text = f"notification posted via {self.route}"
        if self.detail:
            text += f" ({self.detail})"
        if self.push and self.route != Route.PUSH:
            text += f"; push: {self.push}"
        return text


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
NO_TMUX_CLIENT = "no client is attached to this tmux session"


class Notifier:
    """Posts notifications for one face of the process (`terminal`, `json` or `mcp`)."""

    def __init__(
        self,
        home: Path,
        *,
        face: Face = Face.TERMINAL,
        host: Callable[[dict[str, Any]], None] | None = None,
        environ: Mapping[str, str] | None = None,
        platform: str = sys.platform,
        settings: Mapping[str, Any] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        limit: RateLimit | None = None,
        tty_path: str = "/dev/tty",
        osascript: str = "/usr/bin/osascript",
        entry_point: EntryPoint = EntryPoint.NOTIFY,
        background_push: bool = True,
        push_timeout_s: float = _push.PUSH_TIMEOUT_S,
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
        # Push from a process of its own (filing and waiting never wait for it), or wait
        # for it here, bounded (`wisp notify`, which reports what happened).
        self.background_push = background_push
        # How long a push waited for here is given (a test on a loaded machine gives more).
        self.push_timeout_s = push_timeout_s

    def _setting(self, key: str, default: Any) -> Any:
        return self.settings.get(key, default)

    # --- route selection (no side effects): what would happen, and why -------------------

    def order(self) -> list[str]:
        """The routes on this machine, in the order they are tried (push comes after)."""
        if self._terminal_name()[0] == "iTerm2":
            return [
                Route.HOST,
                Route.APP,
                Route.TERMINAL,
                Route.TMUX,
                Route.OSASCRIPT,
                Route.DESKTOP,
            ]
        return list(LOCAL_ROUTES)

    def _terminal_name(self) -> tuple[str | None, str]:
        program = self.environ.get("TERM_PROGRAM", "")
        return terminal_kind(program or self.environ.get("TERM", ""))

    def push_urls(self) -> list[str]:
        """The push targets set (secrets: show them only through :func:`_push.redact`)."""
        return push_urls(self._setting("notifications.push", []))

    def push_when(self) -> PushWhen:
        return PushWhen(self._setting("notifications.pushWhen", PushWhen.ALWAYS))

    def why_not(self, route: str, *, forced: bool = False, deep: bool = False) -> str | None:
        """Why *route* cannot post here, or None if it can be tried. *deep* also checks
        what posting would find, without posting: /dev/tty opens, a tmux client is
        attached, the session bus is there (the doctor's truth)."""
        env = self.environ
        if route == Route.HOST:
            if self.face is not Face.JSON:
                return "no front end declared notify (only under `wisp relay`)"
            return None if self.host is not None else "the front end did not declare notify"
        if route == Route.TERMINAL:
            return self._why_not_terminal(deep=deep)
        if route == Route.TMUX:
            return self._why_not_tmux(deep=deep)
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
            address = env.get("DBUS_SESSION_BUS_ADDRESS")
            if not address:
                return "no session bus (DBUS_SESSION_BUS_ADDRESS unset)"
            if self._notify_send() is None:
                return "notify-send is not installed"
            return _bus_missing(address) if deep else None
        if route == Route.PUSH:
            if not self.push_urls():
                return "no push URL set (notifications.push)"
            if not _push.apprise_installed():
                return f"Apprise is not installed ({_push.push_install()})"
            return None
        raise ValueError(f"unknown route {route!r}")

    def _why_not_terminal(self, *, deep: bool) -> str | None:
        if self.face is Face.JSON:
            return "the front end owns the terminal"
        if self.face is Face.MCP:
            return "the MCP client owns the terminal"
        if self.environ.get("TMUX"):
            return "inside tmux, which keeps the sequence from the terminal (see the tmux route)"
        name, kind = self._terminal_name()
        if name is None:
            shown = kind or "unset"
            return f"TERM_PROGRAM/TERM {shown!r} names no terminal with a notification sequence"
        return self._tty_missing() if deep else None

    def _why_not_tmux(self, *, deep: bool) -> str | None:
        tmux = Tmux.here(self.environ)
        if isinstance(tmux, str):
            return tmux
        if not deep:
            return None
        clients, reason = tmux.clients()
        return reason or (None if clients else _no_client(tmux))

    def _notify_send(self) -> str | None:
        return shutil.which("notify-send", path=self.environ.get("PATH", os.defpath))

    def _tty_missing(self) -> str | None:
        """Why this process's terminal does not open, or None."""
        try:
            fd = os.open(self.tty_path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            return f"no terminal ({self.tty_path} does not open: {exc.strerror})"
        os.close(fd)
        return None

    def describe(self, *, deep: bool = True) -> list[tuple[str, str | None]]:
        """For the doctor: every route in order, push last, with why it would be skipped
        (None: usable), checked as far as can be without posting."""
        return [(route, self.why_not(route, deep=deep)) for route in [*self.order(), Route.PUSH]]

    # --- posting -------------------------------------------------------------------------

    def check_log(self) -> None:
        """Raise :class:`wisp.AuditLogUnsafe` if the audit log a post would be recorded in is
        no file to append to (a FIFO, a stranger's hard link): for a face to refuse before
        posting what could not be recorded."""
        check_log(self.home)

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
        request's fields) when it is about a request. Never raises, and never waits for a
        push in the background (its outcome is audited on its own when known)."""
        notice = Notice(
            title=clean(title, TITLE_MAX),
            subtitle=clean(subtitle, SUBTITLE_MAX),
            body=clean(message, MESSAGE_MAX),
        )
        later: list[str] = []
        try:
            result, later = self._post(notice, route, about)
        except Exception as exc:  # posting must never fail what it announces
            result = Result(posted=False, reason=f"the notifier failed ({exc})")
        audit(
            self.home,
            AuditEvent.NOTIFICATION,
            {
                **_about_fields(about),
                "title": notice.title,
                "subtitle": notice.subtitle or None,
                "body": notice.body,
                "source": source,
                "outcome": "posted" if result.posted else "not shown",
                "route": result.route,
                "detail": result.detail,
                "push": result.push,
                "targets": [d.record() for d in result.deliveries] or None,
                "reason": result.reason,
                "skipped": list(result.skipped),
            },
            entry_point=self.entry_point,
            clock=self.clock,
        )
        if later:
            self._push_later(later, notice, about, source)
        return result

    def _refusal(self, notice: Notice) -> str | None:
        """Why no notification is posted at all, whatever the routes (the limits)."""
        if not self._setting("notifications.enabled", True):
            return "notifications are off (notifications.enabled)"
        if not notice.body.strip():
            return "the message is empty"
        per_minute = int(self._setting("notifications.perMinute", 5))
        if not self.limit.take(per_minute):
            return f"the per-minute limit is reached ({per_minute} a minute)"
        return None

    def _post(
        self, notice: Notice, only: str | None, about: Mapping[str, Any] | None
    ) -> tuple[Result, list[str]]:
        """The result, and the push targets still to be sent to in the background."""
        refusal = self._refusal(notice)
        if refusal is not None:
            return Result(posted=False, reason=refusal), []
        if only == Route.PUSH:
            return self._push_alone(notice, about), []
        skipped: list[str] = []
        taken, detail = None, None
        for route in [only] if only else self.order():
            reason = self.why_not(route, forced=only is not None)
            if reason is None:
                reason, detail = self._try(route, notice)
            if reason is None:
                taken = route
                break
            skipped.append(f"{route}: {reason}")
        if only or not self._push_wanted(taken, skipped):
            if taken is not None:
                return Result(posted=True, route=taken, detail=detail, skipped=tuple(skipped)), []
            reason = skipped[0] if only else "no route could post it"
            return Result(posted=False, reason=reason, skipped=tuple(skipped)), []
        urls = self.push_urls()
        shown = ", ".join(redact(url) for url in urls)
        if self.background_push:
            clause = f"sending to {shown} in the background"
            if taken is not None:
                result = Result(
                    posted=True, route=taken, detail=detail, skipped=tuple(skipped), push=clause
                )
            else:
                result = Result(
                    posted=True, route=Route.PUSH, detail=clause, skipped=tuple(skipped)
                )
            return result, urls
        return self._push_waited(notice, about, taken, detail, skipped), []

    def _push_wanted(self, taken: str | None, skipped: list[str]) -> bool:
        """Whether push is tried after the routes here (saying why not in *skipped*)."""
        reason = self.why_not(Route.PUSH)
        if reason is None and taken is not None and self.push_when() is PushWhen.UNSEEN:
            reason = f"notifications.pushWhen is unseen, and {taken} posted it"
        if reason is not None:
            skipped.append(f"{Route.PUSH}: {reason}")
        return reason is None

    # --- push ----------------------------------------------------------------------------

    def push_message(self, notice: Notice, about: Mapping[str, Any] | None) -> tuple[str, str]:
        """The push's title and text: who asks, what, where it would run, the page that
        answers it (`web.url`) and on which machine the commands that answer it are to be
        typed (the person is elsewhere: they ssh in)."""
        host = clean(socket.gethostname(), HOST_MAX)
        commands = _answer_commands(about)
        lines = [line for line in (notice.subtitle, notice.body) if line]
        cwd = (about or {}).get("cwd")
        if isinstance(cwd, str) and cwd:
            lines.append(f"in {clean(cwd, MESSAGE_MAX)}")
        link = self.push_extras(about).link
        if link is not None:
            lines.append(f"Answer at {link}")
        lines.append(f"Answer on {host}: {' or '.join(commands)}" if commands else f"From {host}.")
        return notice.title, "\n".join(lines)

    def push_extras(self, about: Mapping[str, Any] | None) -> _push.Extras:
        """What the push carries besides its text: for a request, a high priority, and the
        link to its page in `wisp web` when `web.url` is set (the ID is all the link holds:
        it opens nothing on a browser that is not paired)."""
        if not _answer_commands(about):
            return _push.Extras()
        assert about is not None
        base = str(self._setting("web.url", "") or "").rstrip("/")
        link = f"{base}/r/{about['id']}" if base else None
        return _push.Extras(link=link, priority=_push.HIGH)

    def _deliver(
        self, urls: list[str], notice: Notice, about: Mapping[str, Any] | None
    ) -> tuple[tuple[_push.Delivery, ...], str]:
        """Send the push to *urls*, waiting at most *push_timeout_s* (PUSH_TIMEOUT_S); what
        became of each, and that in a clause ("posted to …; failed: …")."""
        title, text = self.push_message(notice, about)
        deliveries = tuple(
            _push.send(
                urls, title, text, extras=self.push_extras(about), timeout_s=self.push_timeout_s
            )
        )
        return deliveries, _push.outcome(deliveries)[1]

    def _push_alone(self, notice: Notice, about: Mapping[str, Any] | None) -> Result:
        """`--route push`: push alone, waited for (a probe reports what happened)."""
        reason = self.why_not(Route.PUSH, forced=True)
        if reason is None:
            deliveries, clause = self._deliver(self.push_urls(), notice, about)
            if any(d.posted for d in deliveries):
                return Result(posted=True, route=Route.PUSH, detail=clause, deliveries=deliveries)
            reason = clause
        return Result(posted=False, reason=f"push: {reason}", skipped=(f"push: {reason}",))

    def _push_waited(
        self,
        notice: Notice,
        about: Mapping[str, Any] | None,
        taken: str | None,
        detail: str | None,
        skipped: list[str],
    ) -> Result:
        """Push after the routes here, waited for (no background: `wisp notify`)."""
        deliveries, clause = self._deliver(self.push_urls(), notice, about)
        if taken is not None:
            return Result(
                posted=True,
                route=taken,
                detail=detail,
                skipped=tuple(skipped),
                push=clause,
                deliveries=deliveries,
            )
        if any(d.posted for d in deliveries):
            return Result(
                posted=True,
                route=Route.PUSH,
                detail=clause,
                skipped=tuple(skipped),
                deliveries=deliveries,
            )
        skipped.append(f"{Route.PUSH}: {clause}")
        return Result(
            posted=False,
            reason="no route could post it",
            skipped=tuple(skipped),
            deliveries=deliveries,
        )

    def _push_later(
        self, urls: list[str], notice: Notice, about: Mapping[str, Any] | None, source: str
    ) -> None:
        """The push nobody waits for: sent by a process of its own, which audits it."""
        title, text = self.push_message(notice, about)
        record = {**(about or {}), "title": notice.title, "source": source}
        try:
            _push.send_later(
                self.home,
                urls,
                title,
                text,
                record=record,
                entry_point=self.entry_point,
                extras=self.push_extras(about),
                # A hook's stderr is its harness's, read to the end of the stream: a push
                # child holding it open past the hook's answer kept that end away (Claude
                # Code 2.1.332 then refused the allow: "stdio went quiet before
                # end-of-stream"). Its failure is in the audit log, as any push's.
                say_failure=self.face is Face.TERMINAL and self.entry_point is not EntryPoint.HOOK,
            )
        except OSError as exc:  # no process to push from: say so, and fail nothing else
            audit(
                self.home,
                AuditEvent.NOTIFICATION,
                {
                    **record,
                    "outcome": "failed",
                    "route": Route.PUSH.value,
                    "detail": f"failed: the push could not be started ({exc.strerror})",
                },
                entry_point=self.entry_point,
                clock=self.clock,
            )

    # --- the routes here -----------------------------------------------------------------

    def _try(self, route: str, notice: Notice) -> tuple[str | None, str | None]:
        """Post through *route*: None if it took it, else why it failed; and how it did."""
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
                return None, None
            if route == Route.TERMINAL:
                return self._write(self._sequence(self._terminal_name()[1], notice)), None
            if route == Route.TMUX:
                return self._tmux(notice)
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
                ), None
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
                ), None
            if route == Route.DESKTOP:
                send = self._notify_send()
                assert send is not None
                summary = notice.title + (f" — {notice.subtitle}" if notice.subtitle else "")
                return self._run([send, "--app-name=wisp", "--", summary, notice.body]), None
        except Exception as exc:  # a route that breaks is skipped, never a failure of the caller
            return f"failed ({exc})", None
        raise ValueError(f"unknown route {route!r}")

    @staticmethod
    def _sequence(kind: str, notice: Notice) -> bytes:
        if kind == "osc9":
            return osc9(notice.title, notice.subtitle, notice.body)
        return osc99(notice.title, notice.subtitle, notice.body, secrets.token_hex(4))

    def _write(self, data: bytes) -> str | None:
        """Write *data* to this process's terminal without blocking; None, or why not."""
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

    def _tmux(self, notice: Notice) -> tuple[str | None, str | None]:
        """Pass the outer terminal's own sequence through, where allowed; then show the
        notice on every client attached to this session. In that order: tmux drops
        passthrough while a message is on a client's status line."""
        tmux = Tmux.here(self.environ)
        if isinstance(tmux, str):
            return tmux, None
        clients, reason = tmux.clients()
        if reason is not None or not clients:
            return reason or _no_client(tmux), None
        passed = self._passthrough(tmux, clients, notice)
        text = display_text(terminal_safe(notice.title), terminal_safe(notice.body))
        seconds = float(self._setting("notifications.tmuxSeconds", TMUX_DISPLAY_S))
        tmux.keep(text)  # best effort: the status line's segment, if the person added one
        failed = [
            why for client in clients if (why := tmux.display(client, text, seconds)) is not None
        ]
        if len(failed) == len(clients):
            return failed[0], None
        shown = len(clients) - len(failed)
        detail = f"shown on {shown} tmux client{'s' if shown != 1 else ''}"
        return None, detail + (f", {passed}" if passed else "")

    def _passthrough(self, tmux: Tmux, clients: list[Client], notice: Notice) -> str | None:
        """Pass the outer terminal's notification sequence through tmux to it, if the pane
        allows and the terminal has one: what was passed, or None."""
        if self.face is not Face.TERMINAL:
            return None  # the pane's terminal is a front end's or the MCP client's to write
        if not tmux.allows_passthrough():
            return None
        names = [name for client in clients for name in client.terminal_names()]
        for name in [*names, tmux.server_terminal()]:
            terminal, kind = terminal_kind(name)
            if terminal is not None:
                if self._write(passthrough(self._sequence(kind, notice))) is not None:
                    return None
                return f"{'OSC 9' if kind == 'osc9' else 'OSC 99'} passed through to {terminal}"
        return None

    def _run(self, argv: list[str]) -> str | None:
        return run_bounded(argv, timeout_s=ROUTE_TIMEOUT_S, env=self.environ)[1]


def _no_client(tmux: Tmux) -> str:
    """Why the tmux route has no client to show a message on, and where the person's
    clients are instead (attached to another session of the same server, say)."""
    where = tmux.elsewhere()
    if not where:
        return NO_TMUX_CLIENT + ", nor to any other session of its server"
    return f"{NO_TMUX_CLIENT}; the server's clients are at {where}"


def _answer_commands(about: Mapping[str, Any] | None) -> list[str]:
    """The commands that answer the request *about* names (none for a plain notice)."""
    if not about or not isinstance(about.get("id"), str):
        return []
    try:
        return view(Kind(str(about.get("kind")))).answer_commands(about["id"])
    except (KeyError, ValueError):
        return []


def _bus_missing(address: str) -> str | None:
    """Why the session bus at *address* is not there, or None: a `unix:path=` socket that
    does not exist is a bus long gone (a stale variable in an ssh or tmux session); other
    transports (abstract sockets, tcp) cannot be checked without talking to the bus."""
    paths = []
    for entry in address.split(";"):
        transport, _, params = entry.partition(":")
        keys = dict(param.partition("=")[::2] for param in params.split(","))
        if transport != "unix" or "path" not in keys:
            return None
        paths.append(keys["path"])
    if any(Path(path).exists() for path in paths):
        return None
    return f"no session bus ({paths[0] if paths else address} is not there)"


def default_notifier(home: Path, entry_point: EntryPoint) -> Notifier:
    """This process's terminal routes, with the settings in config.json (a broken one: none)."""
    from wisp.stores.config import ConfigError, load_config

    try:
        settings = load_config(home).values
    except ConfigError:
        settings = {}  # a broken config.json is reported by the commands that read it
    return Notifier(home, settings=settings, entry_point=entry_point)
