"""What waits, live, for every browser of `wisp web`: one :class:`wisp._live.LiveInbox`
followed in a thread, its changes handed to each page's event stream.

The board holds the waiting requests (the statuses every page shows), the last few that
ended (so a request's page opened from a notification after it was answered says by whom),
and the calls lately decided without asking (by a rule or a grant: `wisp.follow_decided`,
driven by the audit log's file events), which every page lists, collapsed.
Each subscriber (one open page) has a bounded queue on the server's event loop: a page that
falls behind is sent the whole board again, never stalls the others.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import attrs

from pending import Missed, PendingError, Status, parse_time, start_thread
from wisp import (
    ANSWERABLE,
    ChannelBack,
    ChannelGone,
    DecidedCall,
    EntryPoint,
    Found,
    HomeGone,
    LiveInbox,
    Verdict,
    WispError,
    answerable_now,
    follow_decided,
)
from wisp._render import decided_line
from wisp.relay.protocol import Decided

ENDED_KEPT = 64  # ended requests remembered for their pages
QUEUE_SIZE = 64  # changes a page may fall behind by before it is sent the whole board
DECIDED_KEPT = 20  # calls decided without asking that every page lists (the newest)


@attrs.frozen
class Changed:
    """One request changed: its status now (None once removed from the channel); *host*:
    the `--host` whose relay said so (None: this machine's channel)."""

    id: str
    status: Status | None
    host: str | None = None


@attrs.frozen
class Reset:
    """Everything may have changed: a page shows the board anew."""


@attrs.frozen
class Gone:
    """The home was removed: nothing is watched any more."""


@attrs.frozen(kw_only=True)
class DecidedRow:
    """A call decided without asking, as a page lists it: when, allowed or denied, the call
    and what decided it in words; *host*: the `--host` whose relay said so (None: this
    machine). Its texts come from an audit log: shown made visible, never compared."""

    ts: datetime | None
    verdict: Verdict
    said: str
    host: str | None = None


@attrs.frozen
class CallDecided:
    """A call was decided without asking: a page lists the board's decided calls anew."""


Event = Changed | Reset | Gone | CallDecided


class _Subscriber:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Event] = asyncio.Queue(QUEUE_SIZE)

    def put(self, event: Event) -> None:
        """On the loop's thread: queue *event*; a full queue is emptied for one Reset."""
        if self.queue.full():
            while not self.queue.empty():
                self.queue.get_nowait()
            event = Reset()
        self.queue.put_nowait(event)


def place_of(status: Status) -> tuple[datetime, str]:
    return (status.request.filed_at, status.id)


class Board:
    """The waiting requests of one home, live."""

    def __init__(self, home: Path, *, on_warning: Callable[[str], None]) -> None:
        self.home = home
        self._on_warning = on_warning
        self._lock = threading.Lock()
        self._waiting: dict[str, Status] = {}
        self._ended: OrderedDict[str, Status] = OrderedDict()
        self._subscribers: list[_Subscriber] = []
        self._live: LiveInbox | None = None
        self._thread: threading.Thread | None = None
        self._decided: deque[DecidedRow] = deque(maxlen=DECIDED_KEPT)
        self._stop_decided: Callable[[], None] | None = None
        self.gone = False

    # --- life ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching (raises :class:`pending.PendingError` if the channel cannot be
        used): what waits now is on the board before this returns."""
        live = LiveInbox(self.home, entry_point=EntryPoint.WEB, on_warning=self._on_warning)
        snapshot = live.start()  # the view opens the channel, and holds it while it watches
        self._live = live
        with self._lock:
            for status in snapshot:
                self._take(status.id, status)
        self._thread = threading.Thread(target=self._follow, name="web-board", daemon=True)
        start_thread(self._thread)
        self._follow_decided()

    def _follow_decided(self) -> None:
        """List each call decided without asking from now on, as the audit log records it
        (its file events drive it: nothing polls). A log that cannot be followed is warned
        about; the board goes on without them."""

        def stopped(why: str) -> None:
            self._on_warning(f"calls decided without asking are no longer shown: {why}")

        try:
            follower = follow_decided(
                self.home, self._take_decided, on_error=stopped, on_warning=self._on_warning
            )
        except (WispError, OSError, PendingError) as exc:
            self._on_warning(f"calls decided without asking are not shown ({exc}).")
            return
        self._stop_decided = follower.close

    def _take_decided(self, call: DecidedCall) -> None:
        try:
            ts: datetime | None = parse_time(call.ts)
        except ValueError:
            ts = None
        said = decided_line(dict(call.record))
        self._add_decided(DecidedRow(ts=ts, verdict=call.verdict, said=said))

    def decided_there(self, host: str, line: Decided) -> None:
        """A call *host*'s relay says was decided there without asking (from any thread)."""
        self._add_decided(DecidedRow(ts=line.ts, verdict=line.verdict, said=line.said, host=host))

    def _add_decided(self, row: DecidedRow) -> None:
        with self._lock:
            self._decided.append(row)
        self._publish(CallDecided())

    def decided(self) -> list[DecidedRow]:
        """The calls lately decided without asking, newest first."""
        with self._lock:
            return list(reversed(self._decided))

    def close(self) -> None:
        if self._stop_decided is not None:
            self._stop_decided()
        if self._live is not None:
            self._live.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # --- reading -------------------------------------------------------------------------

    def waiting(self) -> list[Status]:
        """What waits, oldest first (by when filed, then ID: the order pages follow)."""
        with self._lock:
            return sorted(self._waiting.values(), key=place_of)

    def page(self, after: tuple[datetime, str] | None, size: int) -> tuple[list[Status], int]:
        """The next *size* waiting requests after *after* (a request's place: when filed,
        its ID; None: from the oldest), and how many wait after them."""
        waiting = self.waiting()
        if after is not None:
            waiting = [s for s in waiting if place_of(s) > after]
        return waiting[:size], max(0, len(waiting) - size)

    def known(self, request_id: str) -> Status | None:
        """A request on the board, waiting or lately ended; None if it is neither."""
        with self._lock:
            return self._waiting.get(request_id) or self._ended.get(request_id)

    def subscribe(self, loop: asyncio.AbstractEventLoop) -> _Subscriber:
        subscriber = _Subscriber(loop)
        with self._lock:
            self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: _Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    # --- following -----------------------------------------------------------------------

    def _follow(self) -> None:
        assert self._live is not None
        for item in self._live:
            if isinstance(item, HomeGone):
                self.gone = True
                self._publish(Gone())
                return
            if isinstance(item, Missed | ChannelGone | ChannelBack):
                self._resync(item)
                continue
            if isinstance(item, Found):
                with self._lock:
                    self._take(item.status.id, item.status)
                self._publish(Changed(item.status.id, item.status))
                continue
            with self._lock:
                self._take(item.id, item.status)
            self._publish(Changed(item.id, item.status))

    def _resync(self, item: object) -> None:
        """After missed events, or the channel directory gone or made again: the board is
        what the channel holds now."""
        statuses: list[Status] = []
        if isinstance(item, ChannelBack):
            statuses = list(item.statuses)
        elif not isinstance(item, ChannelGone):
            try:
                statuses = answerable_now(self.home)
            except PendingError as exc:
                self._on_warning(f"the channel could not be read again: {exc}")
        with self._lock:
            self._waiting.clear()
            for status in statuses:
                self._take(status.id, status)
        self._publish(Reset())

    def _take(self, request_id: str, status: Status | None) -> None:
        """Under the lock: the board after *request_id* became *status*."""
        if status is not None and status.state in ANSWERABLE:
            self._waiting[request_id] = status
            return
        before = self._waiting.pop(request_id, None)
        ended = status if status is not None else before
        if ended is not None:
            self._ended[request_id] = ended
            self._ended.move_to_end(request_id)
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)

    def publish(self, event: Event) -> None:
        """Hand *event* to every open page (from any thread): another host's changes too."""
        self._publish(event)

    def _publish(self, event: Event) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber.loop.call_soon_threadsafe(subscriber.put, event)
            except RuntimeError:  # its loop has closed: the server is stopping
                self.unsubscribe(subscriber)
