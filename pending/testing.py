"""Helpers for testing code built on the channel, shipped so tests never sleep on a clock."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from pending import _edge
from pending._fsio import IoHook, IoStep, Op, Phase, set_io_hook
from pending._throwaway import throwaway_kind
from pending._watch import Watcher

__all__ = [
    "FakeClock",
    "Fault",
    "IoStep",
    "Op",
    "Phase",
    "Recorder",
    "end_process_at",
    "events_lost",
    "inject_overflow",
    "io_hook",
    "raise_at",
    "throwaway_kind",
]


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
        """Time passes: both clocks move."""
        self._now += timedelta(seconds=seconds)
        self._mono += seconds

    def jump(self, seconds: float) -> None:
        """The wall clock is set (forward, or back with a negative number): only it moves,
        as when a person or NTP steps the system clock; the monotonic clock does not."""
        self._now += timedelta(seconds=seconds)


# --- the fault-injection seam --------------------------------------------------------------


@contextmanager
def io_hook(hook: IoHook) -> Iterator[None]:
    """Install *hook* at the channel's I/O seam for the block: it is told of every step
    (:class:`IoStep`: before and after each create, write, fsync, link, unlink, directory
    fsync and lock the channel performs), in every thread of this process, and may raise or
    end the process at any of them."""
    previous = set_io_hook(hook)
    try:
        yield
    finally:
        set_io_hook(previous)


class Fault(NamedTuple):
    """Which step to strike: the *nth* one matching *op*, *phase*, the final name's suffix
    (or whole name) and, if given, whether the step touches the staged temp; every one that
    matches if *nth* is None (a disk that stays full)."""

    op: Op
    phase: Phase = Phase.BEFORE
    suffix: str = ""
    staged: bool | None = None
    nth: int | None = 1

    def matches(self, step: IoStep) -> bool:
        return (
            step.op is self.op
            and step.phase is self.phase
            and step.name.endswith(self.suffix)
            and (self.staged is None or step.staged is self.staged)
        )


class Recorder:
    """An I/O hook that records every step it sees, then calls *then* (if any) with it."""

    def __init__(self, then: IoHook | None = None) -> None:
        self.steps: list[IoStep] = []
        self._then = then
        self._mutex = threading.Lock()

    def __call__(self, step: IoStep) -> None:
        with self._mutex:
            self.steps.append(step)
        if self._then is not None:
            self._then(step)


def _striking(fault: Fault, strike: Callable[[IoStep], None]) -> IoHook:
    seen = 0
    mutex = threading.Lock()

    def hook(step: IoStep) -> None:
        nonlocal seen
        if not fault.matches(step):
            return
        with mutex:
            seen += 1
            now = fault.nth is None or seen == fault.nth
        if now:
            strike(step)

    return hook


def raise_at(fault: Fault, code: int = errno.ENOSPC) -> IoHook:
    """A hook raising ``OSError(code)`` at the step *fault* names (once: the *nth* match).
    Before a step, the operation does not happen; after it, it happened but is reported as
    failed (as NFS or a failing disk can)."""

    def strike(step: IoStep) -> None:
        raise OSError(code, os.strerror(code), step.name)

    return _striking(fault, strike)


def end_process_at(fault: Fault, status: int = 86) -> IoHook:
    """A hook ending the whole process at once (``os._exit``: no cleanup, no finally, as a
    SIGKILL would) at the step *fault* names."""

    def strike(step: IoStep) -> None:
        os._exit(status)

    return _striking(fault, strike)


class _Recorder:
    """Stands in for the watcher's hints; says when a given path's event has gone by."""

    def __init__(self) -> None:
        self.awaited = ""
        self.passed = threading.Event()

    def delivered(self, path: str, is_directory: bool, deleted: bool) -> None:
        if path == self.awaited:
            self.passed.set()


@contextmanager
def events_lost(watcher: Watcher, timeout: float = 10.0) -> Iterator[None]:
    """Make every file event of the changes made inside the block never reach *watcher*, as
    an inotify queue overflow would. Its observation keeps running; only the hints it gives
    are diverted, until a sentinel file shows every event of the block has gone by. Every
    backend alike.

    Use it to test that a rescan (:func:`inject_overflow`, or :meth:`Watcher.rescan`) finds
    exactly what was missed.
    """
    observation = watcher._observer
    assert observation is not None, "start the watcher first"
    recorder = _Recorder()
    hints = observation.hints
    observation.hints = hints._replace(on_change=recorder.delivered)
    try:
        yield
        # A sentinel the watcher would ignore (unknown suffix) is handed over after every
        # event of the block: once the recorder has it, they have all gone by.
        sentinel = watcher.channel.path / f"ffffffff.sentinel-{os.getpid()}.json"
        recorder.awaited = str(sentinel)
        sentinel.write_text("")
        if not recorder.passed.wait(timeout):
            raise TimeoutError(f"the block's events did not pass within {timeout}s")
        sentinel.unlink()
    finally:
        observation.hints = hints


def inject_overflow(watched: Watcher | _edge.Observation) -> None:
    """Deliver a kernel `IN_Q_OVERFLOW` to the inotify instance of *watched* (a watcher, or
    an observation of :func:`pending.observe`), as the kernel does when its queue fills
    (non-root cannot shrink `max_queued_events` to force one): it reaches the hints through
    the backend's own overflow path. Raises RuntimeError where it is not on inotify."""
    observation = watched._observer if isinstance(watched, Watcher) else watched
    if observation is None:
        raise RuntimeError("start the watcher first")
    _edge.inject_overflow(observation)
