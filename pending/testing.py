"""Helpers for testing code built on the channel, shipped so tests never sleep on a clock."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from pending._watch import Watcher


class FakeClock:
    """A clock that moves only when told to. Satisfies :class:`pending.Clock`."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
        self._mono = 1000.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._mono += seconds


class _Recorder(FileSystemEventHandler):
    """Stands in for the watcher's handler; says when a given path's event has gone by."""

    def __init__(self) -> None:
        self.awaited = ""
        self.passed = threading.Event()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if os.fsdecode(event.src_path) == self.awaited:
            self.passed.set()


@contextmanager
def events_lost(watcher: Watcher, timeout: float = 10.0) -> Iterator[None]:
    """Make every file event of the changes made inside the block never reach *watcher*, as
    an inotify queue overflow would. Its observer keeps running; only the watcher's handler
    is taken off it, until a sentinel file shows every event of the block has gone by.
    Native and polling observers alike.

    Use it to test that a rescan (:func:`inject_overflow`, or :meth:`Watcher.rescan`) finds
    exactly what was missed.
    """
    observer = watcher._observer
    assert observer is not None, "start the watcher first"
    recorder = _Recorder()
    for watch in watcher._watches:
        observer.add_handler_for_watch(recorder, watch)
        observer.remove_handler_for_watch(watcher._handler, watch)
    try:
        yield
        # A sentinel the watcher would ignore (unknown suffix) is dispatched after every
        # event of the block: once the recorder has it, they have all gone by.
        sentinel = watcher.channel.path / f"ffffffff.sentinel-{os.getpid()}.json"
        recorder.awaited = str(sentinel)
        sentinel.write_text("")
        if not recorder.passed.wait(timeout):
            raise TimeoutError(f"the block's events did not pass within {timeout}s")
        sentinel.unlink()
    finally:
        for watch in watcher._watches:
            observer.add_handler_for_watch(watcher._handler, watch)
            observer.remove_handler_for_watch(recorder, watch)


def inject_overflow(watcher: Watcher) -> None:
    """Deliver a kernel `IN_Q_OVERFLOW` to the watcher's inotify instance, as the kernel does
    when its queue fills (non-root cannot shrink `max_queued_events` to force one)."""
    from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, WatchDescriptor

    observer = watcher._observer
    inotify_fd = getattr(observer, "_inotify_fd", None)
    if inotify_fd is None:
        raise RuntimeError("the watcher is not on inotify")
    inotify_fd.handle_event(
        InotifyEvent(WatchDescriptor(-1), InotifyConstants.IN_Q_OVERFLOW, 0, b"")
    )
