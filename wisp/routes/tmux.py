"""The tmux route: a notification shown to the person's attached tmux clients.

Inside tmux (``$TMUX``), the terminal's own sequences do not reach the terminal, and the
person may be looking at another window, or another client. So the message goes to every
client attached to this pane's session with ``tmux display-message -c CLIENT`` (on its status
line, for :data:`TMUX_DISPLAY_S`); and where the pane allows passthrough
(``allow-passthrough``) and the outer terminal has a notification sequence, that sequence is
wrapped in tmux's passthrough (``ESC P tmux; … ESC \\``, every ESC in it doubled) so the
terminal's own banner appears too.

Every tmux command runs with an argv list, on the server ``$TMUX`` names, with a timeout;
never through a shell. The text is the notifier's, sanitised for the terminal, with every
``#`` escaped so tmux shows it rather than expanding it (:func:`display_text`).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

import attrs

from wisp.routes import terminal
from wisp.routes.route import Face, Here, Notice, Posted
from wisp.routes.subproc import run_bounded

NAME = "tmux"

# How long the message stays on a client's status line, unless notifications.tmuxSeconds
# says otherwise: 0, until the person presses a key there (tmux's `display-message -d 0`).
TMUX_DISPLAY_S = 0.0
# The user option the last notification is also kept in, for a status line to show
# (`set -g status-right '#{@wisp}'`): it stays when the message on the status line goes.
WISP_OPTION = "@wisp"
TMUX_TIMEOUT_S = 5.0  # a tmux command that hangs is given up on, never waited on
PASSTHROUGH_ON = frozenset({"1", "on", "all"})  # `allow-passthrough` as its format reads
_CLIENT_FORMAT = "#{client_name}\t#{client_termname}\t#{client_termtype}"


@attrs.frozen(kw_only=True)
class Client:
    """One attached tmux client: its tty, and what its terminal calls itself."""

    name: str  # its tty (`/dev/pts/3`): what `-c` takes
    termname: str  # its TERM (`xterm-kitty`)
    termtype: str  # what the terminal answered to XTVERSION (`kitty(0.35.2)`), if it did

    def terminal_names(self) -> list[str]:
        """Names its terminal may be known by, best first: the program that answered
        XTVERSION (its first word), then its TERM."""
        word = re.match(r"[A-Za-z][A-Za-z0-9._-]*", self.termtype)
        return [name for name in ((word.group(0) if word else ""), self.termname) if name]


def passthrough(sequence: bytes) -> bytes:
    """*sequence* wrapped for tmux to pass on to the outer terminal."""
    return b"\x1bPtmux;" + sequence.replace(b"\x1b", b"\x1b\x1b") + b"\x1b\\"


def display_text(title: str, body: str) -> str:
    """What the status line shows (already terminal-safe text), with every `#` escaped so
    tmux shows it rather than obeying it (`#{…}` formats, `#(…)` commands, `#[…]` styles)."""
    return _HASHES.sub(_escape_hashes, f"{title}: {body}")


# A message is read twice: expanded as a format (`##` is one `#`; `#{…}`, `#(…)` obeyed),
# then drawn (`##` again one `#`; a run of `#` before `[` kept for the drawing, where an
# odd count opens a style). So N `#` are written 4N times, or 2N times before a `[`.
_HASHES = re.compile(r"(#+)(\[?)")


def _escape_hashes(match: re.Match[str]) -> str:
    hashes, bracket = match.groups()
    return "#" * (len(hashes) * (2 if bracket else 4)) + bracket


class Tmux:
    """The tmux server this process runs under (from ``$TMUX``), and its pane."""

    def __init__(self, binary: str, socket: str, pane: str | None, environ: Mapping[str, str]):
        self.binary = binary
        self.socket = socket
        self.pane = pane  # `$TMUX_PANE` (`%3`), when set
        self.environ = dict(environ)

    @classmethod
    def here(cls, environ: Mapping[str, str]) -> Tmux | str:
        """The tmux this process runs under, or why there is none."""
        value = environ.get("TMUX", "")
        if not value:
            return "not inside tmux ($TMUX unset)"
        binary = shutil.which("tmux", path=environ.get("PATH", os.defpath))
        if binary is None:
            return "tmux is not on PATH"
        # $TMUX is `SOCKET,SERVER_PID,SESSION`; the socket's path may hold a comma.
        socket = value.rsplit(",", 2)[0]
        return cls(binary, socket, environ.get("TMUX_PANE") or None, environ)

    def _run(self, *args: str) -> tuple[str, str | None]:
        """A tmux command's output, and None; or "", and why it failed."""
        argv = [self.binary, "-S", self.socket, *args]
        out, why = run_bounded(
            argv, timeout_s=TMUX_TIMEOUT_S, env=self.environ, what=f"tmux {args[0]}"
        )
        return out.decode(errors="replace"), why

    def clients(self) -> tuple[list[Client], str | None]:
        """The clients attached to this pane's session (every client of the server when
        the pane is not known), or why they cannot be listed."""
        target = ["-t", self.pane] if self.pane else []
        out, reason = self._run("list-clients", *target, "-F", _CLIENT_FORMAT)
        if reason is not None:
            return [], reason
        clients = []
        for line in out.splitlines():
            name, _, rest = line.partition("\t")
            termname, _, termtype = rest.partition("\t")
            if name:
                clients.append(Client(name=name, termname=termname, termtype=termtype))
        return clients, None

    def display(self, client: Client, text: str, seconds: float = TMUX_DISPLAY_S) -> str | None:
        """Show *text* on *client*'s status line for *seconds* (0: until a key is pressed
        there); None, or why it could not."""
        delay_ms = str(int(seconds * 1000))
        return self._run("display-message", "-c", client.name, "-d", delay_ms, "--", text)[1]

    def keep(self, text: str) -> str | None:
        """Keep *text* in the server's `@wisp` user option (a status line may show it);
        None, or why it could not."""
        return self._run("set-option", "-g", WISP_OPTION, text)[1]

    def elsewhere(self) -> str:
        """Where the server's clients are when none is attached to this pane's session:
        `/dev/pts/3 on session work`, or "" when it has none (or they cannot be listed)."""
        out, reason = self._run("list-clients", "-F", "#{client_name}\t#{session_name}")
        if reason is not None:
            return ""
        places = []
        for line in out.splitlines():
            name, _, session = line.partition("\t")
            if name:
                places.append(f"{name} on session {session}")
        return ", ".join(places)

    def allows_passthrough(self) -> bool:
        """Whether this pane passes sequences on to the outer terminal."""
        if self.pane is None:
            return False
        out, reason = self._run("display-message", "-p", "-t", self.pane, "#{allow-passthrough}")
        return reason is None and out.strip() in PASSTHROUGH_ON

    def server_terminal(self) -> str:
        """TERM_PROGRAM of the terminal the server was started from (its global
        environment), or ""."""
        out, reason = self._run("show-environment", "-g", "TERM_PROGRAM")
        name, sep, value = out.strip().partition("=")
        return value if reason is None and sep and name == "TERM_PROGRAM" else ""


NO_TMUX_CLIENT = "no client is attached to this tmux session"


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    tmux = Tmux.here(here.environ)
    if isinstance(tmux, str):
        return tmux
    if not deep:
        return None
    clients, reason = tmux.clients()
    return reason or (None if clients else _no_client(tmux))


def post(here: Here, notice: Notice) -> Posted:
    """Pass the outer terminal's own sequence through, where allowed; then show the
    notice on every client attached to this session. In that order: tmux drops
    passthrough while a message is on a client's status line."""
    tmux = Tmux.here(here.environ)
    if isinstance(tmux, str):
        return Posted(failed=tmux)
    clients, reason = tmux.clients()
    if reason is not None or not clients:
        return Posted(failed=reason or _no_client(tmux))
    passed = _passthrough(here, tmux, clients, notice)
    safe = terminal.terminal_safe
    text = display_text(safe(notice.title), safe(notice.body))
    seconds = float(here.settings.get("notifications.tmuxSeconds", TMUX_DISPLAY_S))
    tmux.keep(text)  # best effort: the status line's segment, if the person added one
    failed = [why for client in clients if (why := tmux.display(client, text, seconds)) is not None]
    if len(failed) == len(clients):
        return Posted(failed=failed[0])
    shown = len(clients) - len(failed)
    detail = f"shown on {shown} tmux client{'s' if shown != 1 else ''}"
    return Posted(detail=detail + (f", {passed}" if passed else ""))


def _passthrough(here: Here, tmux: Tmux, clients: list[Client], notice: Notice) -> str | None:
    """Pass the outer terminal's notification sequence through tmux to it, if the pane
    allows and the terminal has one: what was passed, or None."""
    if here.face is not Face.TERMINAL:
        return None  # the pane's terminal is a front end's or the MCP client's to write
    if not tmux.allows_passthrough():
        return None
    names = [name for client in clients for name in client.terminal_names()]
    for name in [*names, tmux.server_terminal()]:
        outer, kind = terminal.terminal_kind(name)
        if outer is not None:
            wrapped = passthrough(terminal.sequence(kind, notice))
            if terminal.write_tty(here.tty_path, wrapped) is not None:
                return None
            return f"{'OSC 9' if kind == 'osc9' else 'OSC 99'} passed through to {outer}"
    return None


def _no_client(tmux: Tmux) -> str:
    """Why the tmux route has no client to show a message on, and where the person's
    clients are instead (attached to another session of the same server, say)."""
    where = tmux.elsewhere()
    if not where:
        return NO_TMUX_CLIENT + ", nor to any other session of its server"
    return f"{NO_TMUX_CLIENT}; the server's clients are at {where}"
