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

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from pending._channel import SERVERS_DIR, Channel
from pending._ids import is_valid_id, validate_id
from pending._watch import POLLING_INTERVAL_S, native_observer, start_observer


class _Matcher(FileSystemEventHandler):
    def __init__(self, prefixes: tuple[str, ...], woken: threading.Event) -> None:
        self._prefixes = prefixes
        self._woken = woken

    def on_any_event(self, event: FileSystemEvent) -> None:
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path and os.path.basename(os.fsdecode(path)).startswith(self._prefixes):
                self._woken.set()
                return


class RequestWatch:
    """Wakes :meth:`wait` when a file of *request_id* or the lock of *server_id* changes.

    Start it *before* the action whose effect it waits for (an answer), so the effect cannot
    slip by between acting and watching. Falls back to watchdog's polling observer where native
    watching cannot start (``backend`` says which).
    """

    def __init__(self, channel: Channel, request_id: str, server_id: str | None = None) -> None:
        prefixes = [validate_id(request_id) + "."]
        if server_id is not None and is_valid_id(server_id):  # a legacy request may name none
            prefixes.append(server_id + ".lock")
        self._woken = threading.Event()
        self._handler = _Matcher(tuple(prefixes), self._woken)
        self._paths = (str(channel.path), str(channel.path / SERVERS_DIR))
        self._observer: BaseObserver | None = None
        self.backend: str | None = None

    def start(self) -> RequestWatch:
        try:
            self._observer = self._schedule(native_observer())
            self.backend = "native"
        except OSError:
            self._observer = self._schedule(PollingObserver(timeout=POLLING_INTERVAL_S))
            self.backend = "polling"
        return self

    def _schedule(self, observer: BaseObserver) -> BaseObserver:
        start_observer(observer, self._handler, self._paths)
        return observer

    def wait(self, timeout: float | None) -> bool:
        """Block until a matching change (True) or *timeout* seconds (False); then re-arm."""
        woken = self._woken.wait(timeout)
        self._woken.clear()
        return woken

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            if self._observer.is_alive():
                self._observer.join()
            self._observer = None

    def __enter__(self) -> RequestWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
