"""Notifications: tell the person a request waits, wherever they are.

Limits apply first (seed `002`): control characters become spaces, the title and subtitle are
cut to 64 characters and the message to 256, at most `notifications.perMinute` a minute across
the process, and `notifications.enabled: false` refuses every one. Then the routes on this
machine, in the order of the table :data:`wisp.routes.ROUTES` (seed `000`, ADR 0044), the first
that works posting it; each is a module of its own behind one protocol
(:class:`wisp.routes.route.RouteModule`), and the notifier never branches on which:

1. ``host``: a front end that declared ``notify`` in its hello gets a ``notify`` line;
2. ``terminal``: OSC 9 (Ghostty, iTerm2, WezTerm) or OSC 99 (kitty) written to /dev/tty —
   never to stdout, never under a JSON front end or the MCP server, not inside tmux;
3. ``tmux``: inside tmux, shown on the attached clients' status lines, and the terminal's
   sequence passed through to it where the pane allows;
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
import socket
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from pending import SYSTEM_CLOCK, Clock, Kind
from wisp._text import visible
from wisp.audit.writer import AuditEvent, EntryPoint, audit, check_log
from wisp.kinds import view
from wisp.routes import push as _push
from wisp.routes import route_names, routes
from wisp.routes.route import Face, Notice, Posted, RouteModule
from wisp.routes.terminal import (
    OSC9_TERMINALS,
    OSC99_TERMINALS,
    osc9,
    osc99,
    terminal_safe,
)
from wisp.stores.config import PushContent, PushWhen
from wisp.stores.pushurls import push_urls, redact

TITLE_MAX = 64
SUBTITLE_MAX = 64
MESSAGE_MAX = 256
HOST_MAX = 64  # the host name a push names, cut as a title is
RATE_WINDOW_S = 60.0

if TYPE_CHECKING:

    class Route(StrEnum):
        """The ways a notification reaches the person, in their default order."""

        HOST = "host"
        TERMINAL = "terminal"
        TMUX = "tmux"
        APP = "app"
        OSASCRIPT = "osascript"
        DESKTOP = "desktop"
        PUSH = "push"

else:
    # The ways a notification reaches the person, in their default order: the table's names
    # (wisp.routes.ROUTES) as config, JSON, the audit and `--route NAME` spell them. (The
    # type checker is shown the seven of this build; a route added to the table is one more.)
    Route = StrEnum("Route", [(name.upper(), name) for name in route_names()])
    Route.__doc__ = "The ways a notification reaches the person, in their default order."
    Route.__module__ = __name__


ROUTES: tuple[str, ...] = tuple(Route)
FACES: tuple[str, ...] = tuple(Face)
# The routes on this machine, in order; push comes after them all.
LOCAL_ROUTES: tuple[Route, ...] = tuple(r for r in Route if r != _push.NAME)


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


@attrs.frozen(kw_only=True)
class HeldPush:
    """A push held back at posting (`policy.pushAfterSeconds`), for the asker to send once
    the request has waited *after_s* and still waits (:meth:`Notifier.push_held`)."""

    urls: tuple[str, ...]
    notice: Notice
    about: Mapping[str, Any] | None
    source: str
    after_s: float


@attrs.frozen(kw_only=True)
class Result:
    posted: bool
    route: str | None = None
    reason: str | None = None  # why not shown
    skipped: tuple[str, ...] = ()  # "route: reason" per route passed over
    detail: str | None = None  # how the route posted it ("shown on 2 tmux clients, …")
    push: str | None = None  # what became of the push, when it was tried ("sending to …")
    deliveries: tuple[_push.Delivery, ...] = ()  # each push target's outcome, when waited for
    held: HeldPush | None = None  # the push held back until the request has waited a while

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
        """The routes on this machine, in the order they are tried (push comes after): the
        table's, each route that goes before another here (the app route, in iTerm2) moved
        ahead of it."""
        names = [route.NAME for route in routes() if route.NAME != _push.NAME]
        for route in routes():
            ahead = getattr(route, "goes_before", None)
            other = ahead(self) if ahead is not None else None
            if other in names and route.NAME in names:
                names.remove(route.NAME)
                names.insert(names.index(other), route.NAME)
        return names

    @staticmethod
    def _route(name: str) -> RouteModule:
        """The route of the table named *name*."""
        found = {route.NAME: route for route in routes()}
        if name not in found:
            raise ValueError(f"unknown route {name!r}")
        return found[name]

    def push_urls(self) -> list[str]:
        """The push targets set (secrets: show them only through :func:`_push.redact`)."""
        return push_urls(self._setting("notifications.push", []))

    def push_when(self) -> PushWhen:
        return PushWhen(self._setting("notifications.pushWhen", PushWhen.ALWAYS))

    def why_not(self, route: str, *, forced: bool = False, deep: bool = False) -> str | None:
        """Why *route* cannot post here, or None if it can be tried. *deep* also checks
        what posting would find, without posting: /dev/tty opens, a tmux client is
        attached, the session bus is there (the doctor's truth)."""
        return self._route(route).why_not(self, forced=forced, deep=deep)

    def describe(self, *, deep: bool = True) -> list[tuple[str, str | None]]:
        """For the doctor: every route in order, push last, with why it would be skipped
        (None: usable), checked as far as can be without posting."""
        return [(route, self.why_not(route, deep=deep)) for route in [*self.order(), _push.NAME]]

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
        push_after_s: float = 0.0,
    ) -> Result:
        """Post a notification (or say why not); audited either way, with *about* (the
        request's fields) when it is about a request. Never raises, and never waits for a
        push in the background (its outcome is audited on its own when known). With
        *push_after_s*, the push (if one is to go) is not sent: it is held in the result
        (:attr:`Result.held`) for the caller to send once that long has passed
        (:meth:`push_held`), if the request still waits; the routes here post at once."""
        notice = Notice(
            title=clean(title, TITLE_MAX),
            subtitle=clean(subtitle, SUBTITLE_MAX),
            body=clean(message, MESSAGE_MAX),
            about=about,
        )
        later: list[str] = []
        try:
            result, later = self._post(notice, route, about)
        except Exception as exc:  # posting must never fail what it announces
            result = Result(posted=False, reason=f"the notifier failed ({exc})")
        if later and push_after_s > 0:
            result = self._held(result, later, notice, about, source, push_after_s)
            later = []
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

    def push_held(self, held: HeldPush) -> None:
        """Send a push held back at posting (:attr:`Result.held`), in the background: its
        outcome is audited when known, saying how long the request had waited."""
        self._push_later(
            list(held.urls), held.notice, held.about, held.source, after_s=held.after_s
        )

    def _held(
        self,
        result: Result,
        urls: list[str],
        notice: Notice,
        about: Mapping[str, Any] | None,
        source: str,
        after_s: float,
    ) -> Result:
        """*result* with its push held back *after_s* (said where the push is said)."""
        shown = ", ".join(redact(url) for url in urls)
        clause = f"to {shown} once it has waited {after_s:g} s (policy.pushAfterSeconds)"
        held = HeldPush(
            urls=tuple(urls), notice=notice, about=about, source=source, after_s=after_s
        )
        if result.route == _push.NAME:  # nothing here posted: only the push, later
            return attrs.evolve(result, detail=clause, held=held)
        return attrs.evolve(result, push=clause, held=held)

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
        if only == _push.NAME:
            return self._push_alone(notice), []
        skipped: list[str] = []
        taken, detail = None, None
        for route in [only] if only else self.order():
            reason = self.why_not(route, forced=only is not None)
            if reason is None:
                posted = self._try(route, notice)
                reason, detail = posted.failed, posted.detail
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
                    posted=True, route=_push.NAME, detail=clause, skipped=tuple(skipped)
                )
            return result, urls
        return self._push_waited(notice, taken, detail, skipped), []

    def _push_wanted(self, taken: str | None, skipped: list[str]) -> bool:
        """Whether push is tried after the routes here (saying why not in *skipped*)."""
        reason = self.why_not(_push.NAME)
        if reason is None and taken is not None and self.push_when() is PushWhen.UNSEEN:
            reason = f"notifications.pushWhen is unseen, and {taken} posted it"
        if reason is not None:
            skipped.append(f"{_push.NAME}: {reason}")
        return reason is None

    # --- push ----------------------------------------------------------------------------

    def push_message(self, notice: Notice, about: Mapping[str, Any] | None) -> tuple[str, str]:
        """The push's title and text: who asks, what, where it would run, the page that
        answers it (`web.url`) and on which machine the commands that answer it are to be
        typed (the person is elsewhere: they ssh in)."""
        host = clean(socket.gethostname(), HOST_MAX)
        commands = _answer_commands(about)
        link = self.push_extras(about).link
        if self._setting("notifications.pushContent", PushContent.FULL) == PushContent.NONE:
            # Nothing of the request leaves for the push service: not its command, its tool's
            # input or its folder. The page (over the person's own network) shows it.
            waits = "A request waits" if commands else "wisp has news"
            return "wisp", f"{waits} on {host}." + (f"\nAnswer at {link}" if link else "")
        lines = [line for line in (notice.subtitle, notice.body) if line]
        cwd = (about or {}).get("cwd")
        if isinstance(cwd, str) and cwd:
            lines.append(f"in {clean(cwd, MESSAGE_MAX)}")
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

    def _push_alone(self, notice: Notice) -> Result:
        """`--route push`: push alone, waited for (a probe reports what happened)."""
        reason = self.why_not(_push.NAME, forced=True)
        if reason is None:
            sent = _push.post(self, notice)
            if sent.failed is None:
                return Result(
                    posted=True, route=_push.NAME, detail=sent.detail, deliveries=sent.deliveries
                )
            reason = sent.failed
        return Result(posted=False, reason=f"push: {reason}", skipped=(f"push: {reason}",))

    def _push_waited(
        self,
        notice: Notice,
        taken: str | None,
        detail: str | None,
        skipped: list[str],
    ) -> Result:
        """Push after the routes here, waited for (no background: `wisp notify`)."""
        sent = _push.post(self, notice)
        deliveries, clause = sent.deliveries, sent.detail
        if taken is not None:
            return Result(
                posted=True,
                route=taken,
                detail=detail,
                skipped=tuple(skipped),
                push=clause,
                deliveries=deliveries,
            )
        if sent.failed is None:
            return Result(
                posted=True,
                route=_push.NAME,
                detail=clause,
                skipped=tuple(skipped),
                deliveries=deliveries,
            )
        skipped.append(f"{_push.NAME}: {clause}")
        return Result(
            posted=False,
            reason="no route could post it",
            skipped=tuple(skipped),
            deliveries=deliveries,
        )

    def _push_later(
        self,
        urls: list[str],
        notice: Notice,
        about: Mapping[str, Any] | None,
        source: str,
        *,
        after_s: float = 0.0,
    ) -> None:
        """The push nobody waits for: sent by a process of its own, which audits it (with
        how long the request had waited, for one held back: `pushedAfterSeconds`)."""
        title, text = self.push_message(notice, about)
        record = {**(about or {}), "title": notice.title, "source": source}
        if after_s > 0:
            record["pushedAfterSeconds"] = after_s
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
                    "route": _push.NAME,
                    "detail": f"failed: the push could not be started ({exc.strerror})",
                },
                entry_point=self.entry_point,
                clock=self.clock,
            )

    # --- the routes here -----------------------------------------------------------------

    def _try(self, route: str, notice: Notice) -> Posted:
        """Post through *route*: what became of it (a route that breaks failed)."""
        try:
            return self._route(route).post(self, notice)
        except Exception as exc:  # a route that breaks is skipped, never a failure of the caller
            return Posted(failed=f"failed ({exc})")


def _answer_commands(about: Mapping[str, Any] | None) -> list[str]:
    """The commands that answer the request *about* names (none for a plain notice)."""
    if not about or not isinstance(about.get("id"), str):
        return []
    try:
        return view(Kind(str(about.get("kind")))).answer_commands(about["id"])
    except (KeyError, ValueError):
        return []


def default_notifier(home: Path, entry_point: EntryPoint) -> Notifier:
    """This process's terminal routes, with the settings in config.json (a broken one: none)."""
    from wisp.stores.config import ConfigError, load_config

    try:
        settings = load_config(home).values
    except ConfigError:
        settings = {}  # a broken config.json is reported by the commands that read it
    return Notifier(home, settings=settings, entry_point=entry_point)


__all__ = [  # and, from the route modules, what faces and tests have read from here
    "FACES",
    "HOST_MAX",
    "LOCAL_ROUTES",
    "MESSAGE_MAX",
    "NOTIFICATION_FIELDS",
    "OSC9_TERMINALS",
    "OSC99_TERMINALS",
    "RATE_WINDOW_S",
    "ROUTES",
    "SUBTITLE_MAX",
    "TITLE_MAX",
    "Face",
    "HeldPush",
    "Notice",
    "Notifier",
    "RateLimit",
    "Result",
    "Route",
    "clean",
    "default_notifier",
    "osc9",
    "osc99",
    "terminal_safe",
]
