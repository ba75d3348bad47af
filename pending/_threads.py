"""Threads that leave the process's ending signals to its main thread.

Python runs signal handlers in the main thread only, and Linux delivers a signal sent to the
process (Ctrl-C at a terminal, `kill PID`) to any one of its threads that does not block it.
Taken by another thread, the signal only marks the handler as due; a main thread asleep in a
wait (an asker's lasts the request's whole timeout) is not woken, and Ctrl-C seems to do
nothing until something else wakes it. So every thread the channel and wisp start blocks
these signals, and the kernel can give them to the main thread alone. And where the main
thread itself does what must not be cut short (a waiter that settles what it reads), it
defers them for that long (:func:`signals_deferred`).
"""

from __future__ import annotations

# signal's C functions only: the `signal` module wraps them in enums it builds as it loads
# (~3 M instructions of every hook's start, bench/README.md, issue 57).
import _signal  # type: ignore[import-not-found]  # (no stub)
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

# The signals a person or a supervisor ends a process with.
MAIN_THREAD_SIGNALS = frozenset({_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP})


@contextmanager
def signals_left_to_main() -> Iterator[None]:
    """Threads started inside take a mask that blocks MAIN_THREAD_SIGNALS (a new thread
    starts with its creator's mask), whoever's code starts them (watchdog's too); the
    creator's own mask is as it was afterwards. A signal sent meanwhile waits, blocked, and
    is taken as the mask is restored: none is lost."""
    old = _signal.pthread_sigmask(_signal.SIG_BLOCK, MAIN_THREAD_SIGNALS)
    try:
        yield
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, old)


def start_thread(thread: threading.Thread) -> None:
    """Start *thread* blocking MAIN_THREAD_SIGNALS (see :func:`signals_left_to_main`)."""
    with signals_left_to_main():
        thread.start()


@contextmanager
def signals_deferred() -> Iterator[None]:
    """On the main thread, a MAIN_THREAD_SIGNAL handled in Python that comes while inside
    waits until it ends, and acts then (raised again, after the handlers are back): a Ctrl-C
    or a SIGTERM raised as an exception can then never cut short what is done inside (an
    answer settled but not recorded). A second one while the first waits acts at once (the
    person insists: a settle stuck on a lock someone holds must not make the process deaf);
    what it cuts short is then as a crash leaves it, which the channel is made to survive.
    Elsewhere it does nothing: Python runs signal handlers on the main thread only. A signal
    ignored, or left to its default (which ends the process), or handled outside Python, is
    left as it is. Costs two `sigaction` calls a signal handled in Python (through
    `_signal`: `signal`'s wrappers convert every handler to an enum, ~3.5 us a call)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous: dict[int, Callable[[int, FrameType | None], Any]] = {}

    def note(signum: int, frame: FrameType | None) -> None:
        if not caught:
            caught.append(signum)
            return
        acting = list(dict.fromkeys([*caught, signum]))  # the first, then this one, now
        caught.clear()
        _restore(previous)
        previous.clear()
        for each in acting:
            handler = _signal.getsignal(each)
            if callable(handler):
                handler(each, frame)

    try:
        for each in _DEFERRABLE:
            handler = _signal.getsignal(each)
            if callable(handler):
                previous[each] = handler
                _signal.signal(each, note)
        yield
    finally:
        _restore(previous)
        for signum in caught:
            _signal.raise_signal(signum)


def _restore(handlers: dict[int, Callable[[int, FrameType | None], Any]]) -> None:
    """Put *handlers* back, every one, whatever a handler run meanwhile raises (`signal()`
    runs the pending handlers before it swaps: a Ctrl-C then raises out of it, and the swap
    is not made). The first exception is raised once all are back."""
    error: BaseException | None = None
    for each, handler in handlers.items():
        while True:
            try:
                _signal.signal(each, handler)
                break
            except BaseException as exc:  # a handler's KeyboardInterrupt: swap, then raise
                error = error or exc
    if error is not None:
        raise error


_DEFERRABLE = tuple(int(each) for each in sorted(MAIN_THREAD_SIGNALS))
