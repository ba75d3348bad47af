"""Threads that leave the process's ending signals to its main thread.

Python runs signal handlers in the main thread only, and Linux delivers a signal sent to the
process (Ctrl-C at a terminal, `kill PID`) to any one of its threads that does not block it.
Taken by another thread, the signal only marks the handler as due; a main thread asleep in a
wait (an asker's lasts the request's whole timeout) is not woken, and Ctrl-C seems to do
nothing until something else wakes it. So every thread the channel and wisp start blocks
these signals, and the kernel can give them to the main thread alone.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The signals a person or a supervisor ends a process with.
MAIN_THREAD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


@contextmanager
def signals_left_to_main() -> Iterator[None]:
    """Threads started inside take a mask that blocks MAIN_THREAD_SIGNALS (a new thread
    starts with its creator's mask), whoever's code starts them (watchdog's too); the
    creator's own mask is as it was afterwards. A signal sent meanwhile waits, blocked, and
    is taken as the mask is restored: none is lost."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, MAIN_THREAD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def start_thread(thread: threading.Thread) -> None:
    """Start *thread* blocking MAIN_THREAD_SIGNALS (see :func:`signals_left_to_main`)."""
    with signals_left_to_main():
        thread.start()
