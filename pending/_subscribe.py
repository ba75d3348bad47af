"""Bounded subscriptions: a consumer that falls behind loses the oldest, and is told."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:  # only async consumers (the MCP server, the TUI) load asyncio
    import asyncio

T = TypeVar("T")

SUBSCRIBER_BACKLOG = 256  # events kept for a slow consumer before the oldest are dropped


class Missed(NamedTuple):
    """Stands in a stream where *count* events were dropped because the consumer fell behind."""

    # The field's name shadows tuple's count(), which nothing asks a Missed for.
    count: int  # type: ignore[assignment]


class SubscriptionClosed(Exception):
    """The subscription was closed and everything it held has been read."""


class Subscription(Generic[T]):
    """One consumer's queue. The producer never blocks on it: when full, the oldest item is
    dropped and counted, and the consumer next reads a :class:`Missed` with the count.

    Read it blocking (:meth:`get`, iteration) or from asyncio (``async for``).
    """

    def __init__(self, backlog: int = SUBSCRIBER_BACKLOG) -> None:
        self._items: deque[T] = deque()
        self._backlog = backlog
        self._missed = 0
        self._closed = False
        self._mutex = threading.Lock()
        # A reader blocked in get() sleeps on this, one token a wake: a C queue, whose
        # blocking and waking cost a third less CPU than a Condition's (a watcher's
        # subscriber is woken for every transition).
        self._wakeups: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._sleepers = 0  # readers asleep on _wakeups that no token has been given for
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def put(self, item: T) -> None:
        """Add an item (producer side); never blocks."""
        with self._mutex:
            if self._closed:
                return
            if len(self._items) >= self._backlog:
                dropped = self._items.popleft()
                # A Missed put here (a subscription forwarded into another) stands for its
                # count: dropped, it is that many events missed, never one.
                self._missed += dropped.count if isinstance(dropped, Missed) else 1
            self._items.append(item)
            self._wake()

    def close(self) -> None:
        with self._mutex:
            self._closed = True
            self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    def _wake(self) -> None:
        """Wake every reader (the mutex held)."""
        while self._sleepers:
            self._sleepers -= 1
            self._wakeups.put(None)
        for loop, future in self._waiters:
            # A loop that has closed has nobody waiting on it any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, future)
        self._waiters.clear()

    def _take(self) -> T | Missed | None:
        # Dropped items were older than everything still queued, so the gap comes first.
        if self._missed:
            missed = Missed(count=self._missed)
            self._missed = 0
            return missed
        if self._items:
            return self._items.popleft()
        return None

    def get(self, timeout: float | None = None) -> T | Missed | None:
        """The next item; None if *timeout* seconds pass first. Raises
        :class:`SubscriptionClosed` once closed and drained."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._mutex:
                item = self._take()
                if item is not None:
                    return item
                if self._closed:
                    raise SubscriptionClosed
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._sleepers += 1
            try:
                self._wakeups.get(timeout=remaining)
            except queue.Empty:
                with self._mutex:
                    if self._sleepers:
                        self._sleepers -= 1  # not woken: asleep no more
                    else:
                        self._wakeups.get_nowait()  # the token given as it gave up

    def __iter__(self) -> Subscription[T]:
        return self

    def __next__(self) -> T | Missed:
        try:
            item = self.get()
        except SubscriptionClosed:
            raise StopIteration from None
        assert item is not None  # no timeout: only closing ends the wait
        return item

    def __aiter__(self) -> Subscription[T]:
        return self

    async def __anext__(self) -> T | Missed:
        import asyncio

        loop = asyncio.get_running_loop()
        while True:
            with self._mutex:
                item = self._take()
                if item is not None:
                    return item
                if self._closed:
                    raise StopAsyncIteration
                future: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, future))
            await future


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
