"""The terminal route: OSC 9 (Ghostty, iTerm2, WezTerm) or OSC 99 (kitty) written to
/dev/tty — never to stdout, never under a JSON front end or the MCP server, not inside tmux
(the tmux route passes the same sequence through). Every control character and `;` of the
text is made harmless first (:func:`terminal_safe`)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping

from wisp.routes.route import Face, Here, Notice, Posted

NAME = "terminal"

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
ITERM2 = "iTerm2"  # its name in the table: its OSC 9 banner shows only with a setting on


def terminal_kind(name: str) -> tuple[str | None, str]:
    """The terminal *name* (a TERM_PROGRAM or TERM) names, and its sequence (`osc9` or
    `osc99`); or None and the name, for a terminal with no notification sequence."""
    key = name.lower()
    if key in OSC9_TERMINALS:
        return OSC9_TERMINALS[key], "osc9"
    if key in OSC99_TERMINALS:
        return OSC99_TERMINALS[key], "osc99"
    return None, name


def terminal_name(environ: Mapping[str, str]) -> tuple[str | None, str]:
    """This process's terminal and its sequence, as :func:`terminal_kind` says."""
    return terminal_kind(environ.get("TERM_PROGRAM", "") or environ.get("TERM", ""))


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


def sequence(kind: str, notice: Notice) -> bytes:
    """The notice as the terminal's sequence *kind* (`osc9` or `osc99`)."""
    return terminal_notice(kind, notice.title, notice.subtitle, notice.body)


def terminal_notice(kind: str, title: str, subtitle: str, body: str) -> bytes:
    """A notification as the terminal's sequence *kind* (`osc9` or `osc99`), its text made
    harmless: what this route writes to /dev/tty, and what a face that draws the terminal
    itself (`wisp tui`) writes between its frames."""
    if kind == "osc9":
        return osc9(title, subtitle, body)
    return osc99(title, subtitle, body, secrets.token_hex(4))


def terminal_notifies(environ: Mapping[str, str]) -> str | None:
    """The sequence (`osc9`, `osc99`) a face that draws this terminal itself may post a
    notification with, or None — by TERM_PROGRAM (else TERM), as this route reads it; never
    inside tmux, which does not pass it on. Never in iTerm2: it shows OSC 9 only with a
    setting on, and a sequence it drops is lost without a word, so there the face leaves
    notifications to wisp's own routes (seed 002)."""
    if environ.get("TMUX"):
        return None
    label, kind = terminal_name(environ)
    if label is None or label == ITERM2:
        return None
    return kind


def _open_tty(tty_path: str) -> int | str:
    """This process's terminal, opened to write without blocking (a terminal held by flow
    control makes the write fail, not hang); or why it does not open."""
    try:
        return os.open(tty_path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"no terminal ({tty_path} does not open: {exc.strerror})"


def write_tty(tty_path: str, data: bytes) -> str | None:
    """Write *data* to this process's terminal without blocking; None, or why not."""
    fd = _open_tty(tty_path)
    if isinstance(fd, str):
        return fd
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return None


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    if here.face is Face.JSON:
        return "the front end owns the terminal"
    if here.face is Face.MCP:
        return "the MCP client owns the terminal"
    if here.environ.get("TMUX"):
        return "inside tmux, which keeps the sequence from the terminal (see the tmux route)"
    name, kind = terminal_name(here.environ)
    if name is None:
        shown = kind or "unset"
        return f"TERM_PROGRAM/TERM {shown!r} names no terminal with a notification sequence"
    if not deep:
        return None
    fd = _open_tty(here.tty_path)
    if isinstance(fd, str):
        return fd
    os.close(fd)
    return None


def post(here: Here, notice: Notice) -> Posted:
    kind = terminal_name(here.environ)[1]
    return Posted(failed=write_tty(here.tty_path, sequence(kind, notice)))
