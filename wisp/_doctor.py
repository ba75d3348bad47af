"""The doctor's findings: is the channel safe and usable, and what would reach the person.

The CLI's `wisp doctor` renders these; any face may show them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pending import Channel, State, Watcher
from wisp._asking import default_notifier


def diagnose(channel: Channel) -> dict[str, Any]:
    """Everything `wisp doctor --json` prints (docs/cli.md): the channel's mode and owner,
    whether native watching starts, live servers, requests by state, skipped entries, and the
    notification route that would be taken here."""
    listing = channel.listing()
    st = os.fstat(channel.dir_fd)
    servers = sorted({s.request.server.id for s in listing.statuses if s.server_alive})
    counts = {state.value: 0 for state in State}
    for status in listing.statuses:
        counts[status.state.value] += 1
    routes = default_notifier(channel.home, "doctor").describe()
    route = next((r for r, why in routes if why is None), None)
    return {
        "channel": str(channel.path),
        "ok": not listing.problems,
        "mode": f"{st.st_mode & 0o777:04o}",
        "owner": st.st_uid,
        "watching": _watching(channel),
        "liveServers": len(servers),
        "states": counts,
        "problems": [{"name": p.name, "reason": p.reason} for p in listing.problems],
        "notification": {
            "route": route,
            "skipped": [f"{r}: {why}" for r, why in routes if why is not None],
            "routes": routes,
        },
    }


def _watching(channel: Channel) -> dict[str, Any]:
    """Whether native watching starts here, and the kernel's inotify limits."""
    notes: list[str] = []
    watcher = Watcher(channel, on_warning=notes.append)
    try:
        watcher.start()
        backend = "inotify" if watcher.backend and watcher.backend.value == "native" else "polling"
    except OSError as exc:
        backend, notes = "unavailable", [str(exc)]
    finally:
        watcher.stop()
    limits = {}
    for name in ("max_user_watches", "max_user_instances", "max_queued_events"):
        try:
            limits[name] = int(Path(f"/proc/sys/fs/inotify/{name}").read_text())
        except (OSError, ValueError):
            continue
    return {"backend": backend, "note": "; ".join(notes) or None, "limits": limits}
