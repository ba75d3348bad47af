"""How long something may wait, checked wherever such a number enters (a command-line flag,
config.json, or the Python API: :meth:`wisp.Asker.file`), and a wait's :class:`Cancel`.
(An asker's deadlines, kept by one timer thread, are :class:`wisp._asking.Deadlines`: a hook
imports this module for Cancel alone, and no `threading` with it, ~3.6 M instructions.)

A deadline is a finite number of seconds, at most :data:`MAX_DEADLINE_S`; for a request, 0
means it waits until it is answered. Anything else (NaN, infinity, a negative number, 1e12)
is refused before anything is filed: unchecked, such a number overflows a date or a timer
only after the request has been published and announced.
"""

from __future__ import annotations

import _thread
import math
from collections.abc import Callable

from wisp._errors import WispError

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    import threading
    from typing import Any

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
