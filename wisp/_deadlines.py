"""How long something may wait, checked wherever such a number enters (a command-line flag,
config.json, or the Python API: :meth:`wisp.Asker.file`), and kept: an asker's deadlines
(:class:`Deadlines`, one timer thread) and a wait's :class:`Cancel`.

A deadline is a finite number of seconds, at most :data:`MAX_DEADLINE_S`; for a request, 0
means it waits until it is answered. Anything else (NaN, infinity, a negative number, 1e12)
is refused before anything is filed: unchecked, such a number overflows a date or a timer
only after the request has been published and announced.
"""

from __future__ import annotations

import _thread
import math
import time
from collections.abc import Callable

from wisp._errors import WispError

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    import threading
    from typing import Any

# `threading` and `heapq` are imported where the asker's Deadlines use them: a hook imports
# this module for Cancel alone, and threading costs it ~3.6 M instructions (callgrind).

# The longest a request may be told to wait: 30 days. Longer than anyone leaves a question
# open on purpose, and far inside what dates and timers can hold (a timer takes at most
# ~292 years, a date ends in 9999); for longer, 0 waits until answered.
MAX_DEADLINE_S = 30 * 24 * 3600


class DeadlineError(WispError, ValueError):
    """A number of seconds that cannot be a deadline; the message says what to give."""


def deadline_range(*, zero: str | None) -> str:
    """The values a deadline takes, for people (help, messages, docs)."""
    days = MAX_DEADLINE_S // 86400
    if zero is None:
        return f"seconds, more than 0 and at most {MAX_DEADLINE_S} ({days} days)"
    return f"seconds from 0 ({zero}) to {MAX_DEADLINE_S} ({days} days)"


def check_deadline(value: Any, *, what: str, zero: str | None = "waits until answered") -> Any:
    """*value* if it is a finite number of seconds, 0 (when *zero* says what 0 means) up to
    :data:`MAX_DEADLINE_S`; else raise :class:`DeadlineError` naming *what* and the range."""
    accepted = deadline_range(zero=zero)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DeadlineError(f"{what} takes {accepted}, not {value!r}.")
    if isinstance(value, float) and not math.isfinite(value):
        raise DeadlineError(f"{what} takes {accepted}; {value} is not a number of seconds.")
    if value < 0 or (value == 0 and zero is None) or value > MAX_DEADLINE_S:
        # All the digits a person could have typed: 2592001 is not "2.592e+06", which would
        # read as inside the limit.
        raise DeadlineError(f"{what} takes {accepted}, not {value:.15g}.")
    return value


class Cancel:
    """Stops a :meth:`Asker.wait` at once (a client that cancelled its call); the request
    itself keeps waiting, to be awaited again."""

    def __init__(self) -> None:
        self._cancelled = False
        self._conditions: list[threading.Condition] = []
        self._wakes: list[Callable[[], None]] = []
        self._mutex = _thread.allocate_lock()  # threading.Lock, without importing threading

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._mutex:
            self._cancelled = True
            conditions, wakes = list(self._conditions), list(self._wakes)
        for condition in conditions:
            with condition:
                condition.notify_all()
        for wake in wakes:
            wake()

    def attach(
        self, condition: threading.Condition, *, wake: Callable[[], None] | None = None
    ) -> None:
        """Notify *condition* (a waiter's) when cancelled, and call *wake* (a waiter that
        pumps its watcher's events sleeps in poll(2), not on the condition)."""
        with self._mutex:
            self._conditions.append(condition)
            if wake is not None:
                self._wakes.append(wake)


class Deadlines:
    """The deadlines of one asker's requests, kept by one thread for them all.

    A thread per request (a ``threading.Timer`` each) costs a thread's start and its wake-ups
    on every request filed, which at hundreds of requests a second is a good part of filing
    one (measured: about 0.12 ms of CPU a request). One thread sleeps until the earliest
    deadline instead; a cancelled one is only forgotten (its heap entry is skipped when it
    comes up). The thread starts with the first deadline: an asker that sets none has none.
    A deadline that passes is kept on a thread of its own, so that no expiry waits for
    another.
    """

    def __init__(self, expire: Callable[[str], None]) -> None:
        self._expire = expire
        self._due: dict[str, float] = {}  # request ID -> its deadline (monotonic seconds)
        self._heap: list[tuple[float, str]] = []  # may hold cancelled entries: see _due
        import threading

        self._changed = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._stopped = False

    def add(self, request_id: str, seconds: float) -> None:
        """Call *expire(request_id)* once *seconds* have passed, unless cancelled first."""
        with self._changed:
            if self._stopped:
                return
            import heapq
            import threading

            due = time.monotonic() + seconds
            self._due[request_id] = due
            heapq.heappush(self._heap, (due, request_id))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="asker-deadlines", daemon=True
                )
                from pending import start_thread  # loaded by an asker's first deadline

                start_thread(self._thread)
            elif self._heap[0] == (due, request_id):  # earlier than what the thread waits for
                self._changed.notify()

    def cancel(self, request_id: str) -> None:
        with self._changed:
            if self._due.pop(request_id, None) is None:
                return
            # Cancelled entries wait in the heap until they come up; if they come to outnumber
            # the live ones (a long deadline, many requests answered), rebuild it.
            if len(self._heap) > 2 * len(self._due) + 64:
                import heapq

                self._heap = [(due, rid) for rid, due in self._due.items()]
                heapq.heapify(self._heap)

    def stop(self) -> None:
        """Forget every deadline and end the thread (none fires after this returns, but one
        already firing may finish)."""
        with self._changed:
            self._stopped = True
            self._due.clear()
            self._heap.clear()
            self._changed.notify()
            thread = self._thread
        import threading

        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        import heapq
        import threading

        with self._changed:
            while not self._stopped:
                heap = self._heap
                while heap and self._due.get(heap[0][1]) != heap[0][0]:
                    heapq.heappop(heap)  # cancelled (or set again later)
                if not heap:
                    self._changed.wait()
                    continue
                due, request_id = heap[0]
                remaining = due - time.monotonic()
                if remaining > 0:
                    self._changed.wait(remaining)
                    continue
                heapq.heappop(heap)
                del self._due[request_id]
                # Each expiry on a thread of its own: it writes to the channel and audits
                # (fsyncs, the audit log's lock), and one held up there must not hold up the
                # other requests' deadlines. A thread is started only when a deadline passes.
                threading.Thread(
                    target=self._expire_one, args=(request_id,), name="asker-expire", daemon=True
                ).start()

    def _expire_one(self, request_id: str) -> None:
        try:
            self._expire(request_id)
        except Exception:  # a deadline that could not be kept is logged, never raised
            import logging

            logging.getLogger("wisp.asking").exception(
                "wisp asker: a request's deadline could not be kept"
            )
