"""Waking one waiter when one request's files change: no scan, no state kept.

A whole :class:`pending.Watcher` scans the channel and tracks every request. A process that
waits for a single request (a person's answering command waiting for the asker's outcome) needs
far less: to be woken when a file of that ID, or its server's lock file, changes. This is that:
an observer on the channel and its `.servers/` whose handler sets an event for matching names.
The waiter re-reads the request itself after each wake; events are only hints.
"""

from __future__ import annotations

import os
import threading

from pending._channel import SERVERS_DIR, Channel
from pending._edge import Observation, WatchHints, observe
from pending._ids import is_valid_id, validate_id


class RequestWatch:
    """Wakes :meth:`wait` when a file of *request_id* or the lock of *server_id* changes.

    An effect that came before the watch started is not told: the waiter reads once the watch
    is on, before it first waits (the answerer starts it after publishing its answer and
    then reads the outcome slot, so an asker's outcome cannot slip by between the two). Falls
    back to polling where native watching cannot start (``backend`` says which).
    """

    def __init__(self, channel: Channel, request_id: str, server_id: str | None = None) -> None:
        prefixes = [validate_id(request_id) + "."]
        if server_id is not None and is_valid_id(server_id):  # a legacy request may name none
            prefixes.append(server_id + ".lock")
        self._prefixes = tuple(prefixes)
        self._woken = threading.Event()
        # Events lost, or the directory gone: wake, and the waiter re-reads.
        wake = self._woken.set
        self._hints = WatchHints(on_change=self._changed, on_overflow=wake, on_lost=wake)
        self._paths = (str(channel.path), str(channel.path / SERVERS_DIR))
        self._observation: Observation | None = None
        self.backend: str | None = None

    def start(self) -> RequestWatch:
        self._observation = observe(self._paths, self._hints)
        self.backend = self._observation.backend.value
        return self

    def _changed(self, path: str, is_directory: bool, deleted: bool) -> None:
        if os.path.basename(path).startswith(self._prefixes):
            self._woken.set()

    def wait(self, timeout: float | None) -> bool:
        """Block until a matching change (True) or *timeout* seconds (False); then re-arm."""
        woken = self._woken.wait(timeout)
        self._woken.clear()
        return woken

    def stop(self) -> None:
        if self._observation is not None:
            self._observation.stop()
            self._observation = None

    def __enter__(self) -> RequestWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
