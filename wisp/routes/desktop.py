"""The desktop route: Linux, the freedesktop notification service (``notify-send``) on a
session bus. The text reaches notify-send only as arguments, after ``--``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from wisp.routes.route import Here, Notice, Posted, run

NAME = "desktop"


def _notify_send(here: Here) -> str | None:
    return shutil.which("notify-send", path=here.environ.get("PATH", os.defpath))


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    if not here.platform.startswith("linux"):
        return "not Linux"
    address = here.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        return "no session bus (DBUS_SESSION_BUS_ADDRESS unset)"
    if _notify_send(here) is None:
        return "notify-send is not installed"
    return _bus_missing(address) if deep else None


def post(here: Here, notice: Notice) -> Posted:
    send = _notify_send(here)
    assert send is not None
    summary = notice.title + (f" — {notice.subtitle}" if notice.subtitle else "")
    return run(here, [send, "--app-name=wisp", "--", summary, notice.body])


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
