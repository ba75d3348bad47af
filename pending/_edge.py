"""The watchdog edge: the one module that talks to watchdog.

Everything in this package and above that watches a directory (the watcher, the one-request
watch, and through the facade wisp's live inbox and audit-log follower) asks :func:`observe`
for an :class:`Observation` of some directories, handing it :class:`WatchHints`: what to call when
a name in them changes, when the backend itself says events were lost (an inotify queue
overflow), and when a watched directory went away. The backend is chosen here, once per
observation, in this order:

- Linux: watchdog's inotify reader (`InotifyFD`), read straight: each event is handed over on
  the reader's own thread (see :class:`_InotifyReader`); or, *pumped*, an inotify instance
  with no thread, read by whoever waits (see :class:`_PumpedInotify`);
- elsewhere (or a watchdog without that reader): watchdog's native Observer for the platform;
  on Linux its inotify emitter is subclassed so that an overflow reaches the hints too;
- where native watching cannot start (no inotify instance or watch left): watchdog's polling
  observer, and the reason is told once through *on_fallback*.

The OS-specific parts are the two native classes; the rest (the hints, the health a user
checks, stopping) is the same for every backend, so a backend can be swapped in by adding one
class, as watchdog itself adds one emitter per platform.
"""

from __future__ import annotations

import functools
import logging
import os
import struct
import threading
from collections.abc import Callable, Collection
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from pending._threads import signals_left_to_main

if TYPE_CHECKING:
    from watchdog.observers.inotify_c import InotifyFD

logger = logging.getLogger("pending.edge")

# watchdog logs a benign shutdown race at ERROR and each inotify overflow as a warning. The
# overflow reaches the hints as a signal, and the users say what matters themselves: keep
# watchdog's records off stderr unless the application configures logging.
logging.getLogger("watchdog").addHandler(logging.NullHandler())

# The polling observer's interval when native watching is unavailable.
POLLING_INTERVAL_S = 0.5


class Backend(StrEnum):
    AUTO = "auto"  # native (inotify, FSEvents), else polling
    NATIVE = "native"
    POLLING = "polling"


def _ignore() -> None:
    return None


def _log_error(exc: Exception) -> None:
    logger.error("pending: handling a file event failed: %s", exc)


class WatchHints(NamedTuple):
    """What an observation tells its user, each called on the backend's own thread. None of
    them may block; an exception one raises is handed to *on_error* (the backend's thread
    lives on).

    *on_change(path, is_directory, deleted)*: a name in a watched directory was created,
    written, closed after writing, moved in or out (*deleted* for a move out), or deleted;
    only a hint: re-read what it names. *on_overflow()*: the backend itself says events were
    lost (rescan). *on_lost()*: a watched directory was removed or replaced; the observation
    is no longer healthy."""

    on_change: Callable[[str, bool, bool], None]
    on_overflow: Callable[[], None] = _ignore
    on_lost: Callable[[], None] = _ignore
    on_error: Callable[[Exception], None] = _log_error


class Observation:
    """A running observation of some directories; :meth:`stop` ends it. *hints* may be
    swapped while it runs (:func:`pending.testing.events_lost` does)."""

    backend: Backend
    hints: WatchHints

    def healthy(self) -> bool:
        """Whether events still arrive: its threads run and no watched directory went away."""
        raise NotImplementedError

    def fileno(self) -> int | None:
        """The descriptor that turns readable when events wait to be handed over by
        :meth:`pump_ready`, for an observation with no thread of its own (*pumped*); None
        for one whose threads hand them over themselves."""
        return None

    def pump_ready(self) -> None:
        """Hand over the events waiting now, on the calling thread (a pumped observation);
        never blocks. Nothing to do for one whose threads hand them over."""

    def is_alive(self) -> bool:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop watching and wait for its threads (not when called on one of them); after
        it returns, no hint is given any more."""
        raise NotImplementedError

    def join(self, timeout: float | None = None) -> None:
        """Wait for its threads (:meth:`stop` already does)."""
        raise NotImplementedError


# --- Linux: watchdog's inotify reader, read straight ------------------------------------------

# Every change to a name in a directory, and the directory's own removal.
_INOTIFY_MASK_NAMES = (
    "IN_CREATE",
    "IN_DELETE",
    "IN_MOVED_FROM",
    "IN_MOVED_TO",
    "IN_MODIFY",
    "IN_ATTRIB",
    "IN_CLOSE_WRITE",
    "IN_DELETE_SELF",
    "IN_DONT_FOLLOW",
)


class _InotifyReader(Observation):
    """Linux: watchdog's inotify reader (`InotifyFD`), each event handed to the hints on the
    reader's own thread.

    watchdog's Observer passes every event through two more threads (an emitter's, which
    groups moves, then the observer's, which dispatches), at about 30 to 70 us of CPU an
    event more (measured: 56 against 26 us, a process watching 3,000 publications). Every
    process watching the channel pays that for every file of every request; a hint needs
    neither the grouping (its user re-reads the name) nor the queue. One inotify instance and
    one thread per observation. Raises ImportError where watchdog has no `InotifyFD` (not
    Linux, or watchdog before 7), OSError where no inotify instance or watch is left.
    """

    backend = Backend.NATIVE

    def __init__(self, paths: Collection[str], hints: WatchHints) -> None:
        from watchdog.observers.inotify_c import CallbackId, InotifyConstants, Mask

        mask = Mask(0)
        for name in _INOTIFY_MASK_NAMES:
            mask = Mask(mask | getattr(InotifyConstants, name))
        self.hints = hints
        self._dirs: dict[int, str] = {}
        self._lost = False
        self._stopping = False
        self.inotify_fd = _direct_inotify_fd()()  # OSError: no inotify instance left
        _start_reader(self.inotify_fd)
        try:
            for path in paths:
                wd = self.inotify_fd.add_callback(
                    os.fsencode(path), mask, self, CallbackId(id(self))
                )
                self._dirs[wd] = path
        except BaseException:
            self.stop()
            raise

    # watchdog's WatchCallback, called on the reader's thread: never raises into it (the
    # thread would end, and every watch of this observation with it).

    def on_event(self, event: Any) -> None:
        directory = self._dirs.get(event.wd)
        if directory is None or not event.name:  # the directory itself (IN_DELETE_SELF)
            return
        _change(
            self.hints,
            directory,
            event.name,
            event.is_directory,
            event.is_delete or event.is_moved_from,
        )

    def on_watch_deleted(self, wd: Any) -> None:
        if self._stopping:  # our own stop removes every watch: nothing went away
            return
        self._lost = True
        _tell(self.hints, self.hints.on_lost)

    def on_queue_overflow(self) -> None:
        _tell(self.hints, self.hints.on_overflow)

    def on_events_lost(self) -> None:
        # watchdog 7.1.1 calls this once every callback's on_queue_overflow has returned (and
        # a recursive watch group has re-added its watches); 7.1.0 never does. This reader
        # watches single directories, with nothing to re-add: the overflow was told above.
        pass

    def healthy(self) -> bool:
        return self.inotify_fd.is_alive() and not self._lost

    def is_alive(self) -> bool:
        return self.inotify_fd.is_alive()

    def stop(self) -> None:
        self._stopping = True
        self.inotify_fd.stop()  # removes the watches, and wakes the thread to end
        self.join()

    def join(self, timeout: float | None = None) -> None:
        if self.inotify_fd.is_alive() and self.inotify_fd is not threading.current_thread():
            self.inotify_fd.join(timeout)


@functools.cache
def _releasing_inotify_fd() -> type[InotifyFD]:
    """watchdog's `InotifyFD`, whose inotify instance is closed by the time its thread has
    ended, however early it was stopped; so :meth:`Observation.stop`, which joins that
    thread, returns with the instance given back to the user's per-user limit
    (`fs.inotify.max_user_instances`, 128 by default).

    watchdog's own (7.1.0 and 7.1.1) leaves the closing to its thread's next read when it is
    stopped while reading, which it takes to be the case too before the thread's first read:
    a reader stopped before its thread first ran (an observation opened and closed at once,
    or whose watch failed, on a busy machine) ends without closing its instance and its
    pipe, and the process holds them until it exits (seen: a pytest worker, and the soak's
    probe, came to hold 38 to 128). Here the thread's end closes what is still open, once
    (watchdog's own closing goes through the same `_close_resources`, under its lock).
    Raises ImportError as :class:`_InotifyReader` says."""
    from watchdog.observers.inotify_c import InotifyFD

    class ReleasingInotifyFD(InotifyFD):
        _released = False

        def run(self) -> None:
            try:
                super().run()
            finally:
                self.release()

        def _close_resources(self) -> None:  # watchdog's: called under self._lock
            if not self._released:
                self._released = True
                super()._close_resources()

        def release(self) -> None:
            """Once its thread has ended, or never started: no read comes any more, so a
            close (now, or by a stop to come) closes the instance at once."""
            with self._lock:
                self._is_reading = False
                if self._closed:
                    self._close_resources()

    return ReleasingInotifyFD


@functools.cache
def _direct_inotify_fd() -> type[InotifyFD]:
    """watchdog's `InotifyFD`, handling each event on its own thread, as watchdog 7.1.0 does,
    and closing its instance as its thread ends (see :func:`_releasing_inotify_fd`).

    watchdog 7.1.1 reads on that thread and hands the bytes to a dispatcher thread of its own,
    after holding a read that comes within 1 ms of the last for up to 1 ms more to join it:
    a hop between threads and up to a millisecond before every hint, the very cost this
    reader exists to avoid. This loop is 7.1.0's `run`, through the public `read_events`
    and `handle_event` of both. Raises ImportError as :class:`_InotifyReader` says."""
    releasing: Any = _releasing_inotify_fd()

    class DirectInotifyFD(releasing):  # type: ignore[misc]
        def run(self) -> None:
            try:
                while self.should_keep_running():
                    for event in self.read_events():
                        self.handle_event(event)
            finally:
                self.release()

    return DirectInotifyFD


def _start_reader(reader: Any) -> None:
    """Start a reader from :func:`_releasing_inotify_fd` with signals left to the main thread
    (its thread takes no Ctrl-C); one whose thread cannot start is closed, and the error
    raised."""
    try:
        with signals_left_to_main():
            reader.start()
    except BaseException:
        reader.stop()
        reader.release()
        raise


def _change(
    hints: WatchHints, directory: str, name: bytes, is_directory: bool, deleted: bool
) -> None:
    """A name in a watched directory changed: hinted (an error the hint raises is told to
    on_error, never to the reader that hands it over)."""
    try:
        hints.on_change(os.path.join(directory, os.fsdecode(name)), is_directory, deleted)
    except Exception as exc:
        hints.on_error(exc)


def _tell(hints: WatchHints, signal: Callable[[], None]) -> None:
    try:
        signal()
    except Exception as exc:
        hints.on_error(exc)


_EVENT_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len


class _PumpedInotify(Observation):
    """Linux: an inotify instance with no thread: whoever waits polls :meth:`fileno` and
    calls :meth:`pump_ready`, which hands each event to the hints on that thread.

    For a process with one waiter at a time (an asker that files and waits, through
    `Watcher(pumped=True)`): the reader thread's wake-up on every event, and the hand-off
    from it to the waiter, cost a trip more CPU than handling the event itself (measured:
    12-18 % of a round trip's, bench/README.md). The same hints, watch mask and overflow
    path as :class:`_InotifyReader`; watchdog's ctypes bindings create the instance and its
    watches. Raises ImportError where watchdog has no inotify bindings (not Linux), OSError
    where no inotify instance or watch is left."""

    backend = Backend.NATIVE

    def __init__(self, paths: Collection[str], hints: WatchHints) -> None:
        import ctypes

        from watchdog.observers.inotify_c import InotifyConstants, inotify_add_watch, inotify_init

        self.hints = hints
        self._dirs: dict[int, str] = {}
        self._lost = False
        self._closed = False
        # Held while reading and while closing: a stop from another thread (the watcher's
        # timer replacing it) never closes the descriptor under a read.
        self._io = threading.Lock()
        mask = 0
        for name in _INOTIFY_MASK_NAMES:
            mask |= getattr(InotifyConstants, name)
        self._overflow = InotifyConstants.IN_Q_OVERFLOW
        self._ignored = InotifyConstants.IN_IGNORED
        self._is_dir = InotifyConstants.IN_ISDIR
        self._gone = InotifyConstants.IN_DELETE | InotifyConstants.IN_MOVED_FROM
        fd = inotify_init()
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self._fd = fd
        try:
            os.set_inheritable(fd, False)
            os.set_blocking(fd, False)  # pump_ready reads what is there, never waits
            for path in paths:
                wd = inotify_add_watch(fd, os.fsencode(path), mask)
                if wd < 0:
                    err = ctypes.get_errno()
                    raise OSError(err, os.strerror(err), path)
                self._dirs[wd] = path
        except BaseException:
            self.stop()
            raise

    def fileno(self) -> int | None:
        return self._fd

    def pump_ready(self) -> None:
        with self._io:
            if self._closed:
                return
            chunks = []
            while True:
                try:
                    chunk = os.read(self._fd, 65536)
                except BlockingIOError:
                    break
                except OSError as exc:
                    self.hints.on_error(exc)
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        # One hint a name for all it went through since the last pump: a hint says only
        # "re-read it", and the re-read sees the name as it is now. A publication is two
        # events (its link, then the staged name's removal changing the file's link count),
        # most often read together; a deletion among them makes it a deletion (the full
        # re-read). In the order the names first came.
        merged: dict[tuple[int, bytes], int] = {}
        for chunk in chunks:
            at, end = 0, len(chunk)
            while at + _EVENT_HEADER.size <= end:
                wd, mask, _cookie, length = _EVENT_HEADER.unpack_from(chunk, at)
                at += _EVENT_HEADER.size
                key = (wd, chunk[at : at + length].rstrip(b"\0"))
                at += length
                merged[key] = merged.get(key, 0) | mask
        for (wd, name), mask in merged.items():
            self._dispatch(wd, mask, name)

    def _dispatch(self, wd: int, mask: int, name: bytes) -> None:
        """One event, as watchdog's reader hands it over (never raises into the pump)."""
        if mask & self._overflow:
            _tell(self.hints, self.hints.on_overflow)
            return
        directory = self._dirs.get(wd)
        if directory is None:
            return
        if mask & self._ignored:  # its watch is gone: the directory went away
            if not self._closed:
                self._lost = True
                _tell(self.hints, self.hints.on_lost)
            return
        if not name:  # the directory itself (IN_DELETE_SELF; IN_IGNORED follows)
            return
        _change(self.hints, directory, name, bool(mask & self._is_dir), bool(mask & self._gone))

    def healthy(self) -> bool:
        return not self._closed and not self._lost

    def is_alive(self) -> bool:
        return not self._closed

    def stop(self) -> None:
        with self._io:
            if not self._closed:
                self._closed = True
                os.close(self._fd)  # its watches go with it

    def join(self, timeout: float | None = None) -> None:
        return None


# --- watchdog's Observers: native for the platform, or polling -------------------------------

# Only what can change a name. Never opens and reads: a user's own reads would then each
# cause another event, and another read (measured: a loop that pegged a core).
_CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class _Dispatch(FileSystemEventHandler):
    """Turns an Observer's events into hints (on the observer's dispatching thread)."""

    def __init__(self, observation: _ObserverObservation) -> None:
        self._observation = observation

    def on_any_event(self, event: FileSystemEvent) -> None:
        observation = self._observation
        hints = observation.hints
        try:
            src = os.fsdecode(event.src_path)
            if event.event_type == "deleted" and src in observation.roots:
                observation.lost = True  # the emitter stops after this event
                hints.on_lost()
                return
            deleted = event.event_type == "deleted" or event.event_type == "moved"
            hints.on_change(src, event.is_directory, deleted)
            dest = getattr(event, "dest_path", "")
            if dest:
                hints.on_change(os.fsdecode(dest), event.is_directory, False)
        except Exception as exc:
            hints.on_error(exc)


class _ObserverObservation(Observation):
    """A watchdog Observer (native or polling), made by *make* (given what to call on an
    overflow) and scheduled non-recursively on each path, so that staging in a subdirectory
    stays invisible and a publication is one event."""

    def __init__(
        self,
        make: Callable[[Callable[[], None]], BaseObserver],
        paths: Collection[str],
        hints: WatchHints,
        backend: Backend,
    ) -> None:
        self.backend = backend
        self.hints = hints
        self.roots = frozenset(paths)
        self.lost = False
        self._observer = make(self._overflowed)
        handler = _Dispatch(self)
        try:  # stopped if any of it fails: its inotify instance (made with it) is closed
            for path in paths:
                self._observer.schedule(handler, path, recursive=False, event_filter=_CHANGES)
            with signals_left_to_main():  # nor the observer's threads
                self._observer.start()
        except BaseException:
            self._observer.stop()
            raise

    def _overflowed(self) -> None:
        _tell(self.hints, self.hints.on_overflow)

    @property
    def inotify_fd(self) -> Any:
        """The observer's inotify instance, if it has one (an overflow is read from it)."""
        return getattr(self._observer, "_inotify_fd", None)

    def healthy(self) -> bool:
        observer = self._observer
        alive = observer.is_alive() and all(e.is_alive() for e in observer.emitters)
        return alive and not self.lost

    def is_alive(self) -> bool:
        return self._observer.is_alive()

    def stop(self) -> None:
        self._observer.stop()
        self.join()

    def join(self, timeout: float | None = None) -> None:
        if self._observer.is_alive() and self._observer is not threading.current_thread():
            self._observer.join(timeout)


def _signalling_inotify_observer(on_overflow: Callable[[], None]) -> BaseObserver:
    """watchdog's inotify Observer, with its watch groups' overflow handler also calling
    *on_overflow*. On `IN_Q_OVERFLOW` watchdog calls `on_queue_overflow` of each watch group
    (`InotifyWatchGroup`), which only drops the moves it was pairing (and re-adds recursive
    watches): no event reaches a handler, so that is where the signal is taken. Raises
    ImportError where watchdog has no such group (not Linux, or watchdog before 7), OSError
    where no inotify instance is left."""
    from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT
    from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup

    class _Group(InotifyWatchGroup):
        def on_queue_overflow(self) -> None:
            super().on_queue_overflow()
            on_overflow()

    class _Emitter(InotifyEmitter):
        def on_thread_start(self) -> None:  # as InotifyEmitter's, with the group above
            self._inotify = _Group(
                self._inotify_fd,
                os.fsencode(self.watch.path),
                is_recursive=self.watch.is_recursive,
                event_mask=self.get_event_mask_from_filter(),
                follow_symlink=self.watch.follow_symlink,
            )

    class _Observer(InotifyObserver):
        def __init__(self) -> None:  # as InotifyObserver's, with the emitter above, and a
            # reader that closes its instance as it ends (InotifyObserver's stop joins it)
            self._inotify_fd = _releasing_inotify_fd()()
            _start_reader(self._inotify_fd)
            BaseObserver.__init__(
                self, _Emitter, timeout=DEFAULT_OBSERVER_TIMEOUT, inotify_fd=self._inotify_fd
            )

    return _Observer()


def _platform_observer(on_overflow: Callable[[], None]) -> BaseObserver:
    """The platform's native Observer as watchdog picks it; on Linux one whose overflow is a
    signal (see :func:`_signalling_inotify_observer`)."""
    try:
        return _signalling_inotify_observer(on_overflow)
    except ImportError:
        from watchdog.observers import Observer

        observer: Any = Observer()
        return observer  # type: ignore[no-any-return]


def native_observation(
    paths: Collection[str], hints: WatchHints, *, pumped: bool = False
) -> Observation:
    """Native watching of *paths*: the inotify reader on Linux (*pumped*: with no thread, see
    :class:`_PumpedInotify`), else watchdog's Observer, whose threads hand events over
    themselves whatever *pumped* says. Raises OSError where it cannot start (no inotify
    instance or watch left)."""
    try:
        return _PumpedInotify(paths, hints) if pumped else _InotifyReader(paths, hints)
    except ImportError:
        return observer_observation(paths, hints)


def observer_observation(paths: Collection[str], hints: WatchHints) -> Observation:
    """Native watching of *paths* through watchdog's Observer (its extra threads included)."""
    return _ObserverObservation(_platform_observer, paths, hints, Backend.NATIVE)


def polling_observation(
    paths: Collection[str], hints: WatchHints, interval_s: float = POLLING_INTERVAL_S
) -> Observation:
    """Watching of *paths* by watchdog's polling observer, a snapshot every *interval_s*."""

    def make(on_overflow: Callable[[], None]) -> BaseObserver:
        return PollingObserver(timeout=interval_s)  # a snapshot cannot overflow

    return _ObserverObservation(make, paths, hints, Backend.POLLING)


def observe(
    paths: Collection[str],
    hints: WatchHints,
    *,
    backend: Backend | str = Backend.AUTO,
    polling_interval_s: float = POLLING_INTERVAL_S,
    on_fallback: Callable[[str], None] | None = None,
    pumped: bool = False,
) -> Observation:
    """Start observing *paths* (directories, non-recursively) for *hints*: natively unless
    *backend* says polling; where native watching cannot start, by polling (unless *backend*
    says native: then the OSError is raised), telling *on_fallback* why, once. *pumped*: on
    Linux natively, no thread reads the events (the caller pumps them: see
    :meth:`Observation.fileno`); the polling observer keeps its threads."""
    wanted = Backend(backend)
    if wanted is not Backend.POLLING:
        try:
            return native_observation(paths, hints, pumped=pumped)
        except OSError as exc:
            if wanted is Backend.NATIVE:
                raise
            if on_fallback is not None:
                on_fallback(
                    f"native file watching is unavailable ({exc.strerror or exc}); "
                    f"falling back to polling every {polling_interval_s:g}s"
                )
    return polling_observation(paths, hints, polling_interval_s)


def inject_overflow(observation: Observation) -> None:
    """Deliver a kernel `IN_Q_OVERFLOW` to *observation*'s inotify instance, as the kernel
    does when its queue fills: it reaches the hints through the backend's own overflow path.
    Raises RuntimeError for a backend with no inotify instance (polling cannot overflow)."""
    from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, WatchDescriptor

    if isinstance(observation, _PumpedInotify):
        observation._dispatch(-1, InotifyConstants.IN_Q_OVERFLOW, b"")
        return
    inotify_fd = getattr(observation, "inotify_fd", None)
    if inotify_fd is None:
        raise RuntimeError(f"the observation is not on inotify ({observation.backend})")
    inotify_fd.handle_event(
        InotifyEvent(WatchDescriptor(-1), InotifyConstants.IN_Q_OVERFLOW, 0, b"")
    )
