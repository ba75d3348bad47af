"""The one watcher: file-event hints in (from the watchdog edge), state transitions of IDs out.

Events are only hints. Each names a file; the watcher re-reads that file's ID and compares what
it derives with what it last knew, emitting a :class:`Transition` per real change. So duplicated,
coalesced or reordered events change nothing, and a full rescan (after an inotify overflow, or
an observer thread that died) emits exactly the transitions that were missed.

Server death makes no file event: the liveness of servers with waiting requests, and expiry,
are re-checked on a slow timer; a clean stop (its lock file removed) is seen at once.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import select
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from pending._channel import SERVERS_DIR, Channel
from pending._clock import record_time
from pending._edge import POLLING_INTERVAL_S, Backend, Observation, WatchHints, observe
from pending._errors import PendingError
from pending._ids import (
    ANSWER_SUFFIX,
    KIND_BY_SUFFIX,
    REQUEST_SUFFIX,
    SETTLED_SUFFIX,
    SLOT_BY_SUFFIX,
    NameVerdict,
    Slot,
    name_id,
)
from pending._kinds import Kind, Outcome, State
from pending._liveness import LIVENESS_RECHECK_S
from pending._records import Group, Status
from pending._subscribe import SUBSCRIBER_BACKLOG, Subscription
from pending._threads import start_thread

logger = logging.getLogger("pending.watch")


class Event(StrEnum):
    """What happened to a request."""

    FILED = "filed"
    ANSWERED = "answered"
    SETTLED = "settled"
    STALE = "stale"
    HANDED_OVER = "handed-over"
    WITHDRAWN = "withdrawn"
    REMOVED = "removed"


class Transition(NamedTuple):
    """One change of one request: the event, and its status after it (None once removed)."""

    event: Event
    id: str
    kind: Kind
    status: Status | None
    ts: datetime


class _Known(NamedTuple):
    rank: int  # how far its files go: 1 filed, 2 answered by a person, 3 ended
    event: Event  # the last event emitted for it
    status: Status


# States a request can leave without a file event (its server dies, it expires).
_OPEN_STATES = frozenset({State.FILED, State.HANDED_OVER})


# The event a state is reached by (settled: see _event_of), looked up rather than made.
_EVENT_BY_STATE = {state: Event(state.value) for state in State if state is not State.SETTLED}


def _event_of(status: Status) -> Event:
    if status.state is State.SETTLED:
        return Event.WITHDRAWN if status.outcome is Outcome.WITHDRAWN else Event.SETTLED
    return _EVENT_BY_STATE[status.state]


def _poll_ms(timeout_s: float | None) -> int | None:
    """*timeout_s* as poll(2) takes it: milliseconds, rounded up (rounded down, a wait for
    the last fraction of a millisecond would return at once, over and over)."""
    return None if timeout_s is None else max(0, math.ceil(timeout_s * 1000))


def _rank(status: Status) -> int:
    if status.state is State.SETTLED:
        return 3
    if status.answer is not None:
        return 2
    return 1


class Watcher:
    """Watches one channel and publishes its transitions to subscribers.

    ``start()`` starts the observer *before* the initial scan, so nothing filed or answered
    between the two is missed. Use it as a context manager.
    """

    def __init__(
        self,
        channel: Channel,
        *,
        backend: Backend | str = Backend.AUTO,
        liveness_recheck_s: float = LIVENESS_RECHECK_S,
        polling_interval_s: float = POLLING_INTERVAL_S,
        on_warning: Callable[[str], None] | None = None,
        only: Callable[[str], bool] | None = None,
        pumped: bool = False,
    ) -> None:
        """*only*, if given, picks the request IDs to follow: events, scans and re-checks of
        any other ID are ignored without reading it (an asker follows its own requests only:
        it would otherwise re-read every other process's request on every event).

        *pumped*: no thread of the watcher's own reads the events (natively, on Linux):
        whoever waits calls :meth:`pump`, which reads them and emits what they change on
        the calling thread, for a program with one waiter at a time (an asker that files
        and waits). Events that come while nobody pumps wait in the kernel (an overflow is
        a rescan, as ever). The liveness timer keeps its thread, and so does the polling
        backend; a transition emitted on one of them wakes the pump (:meth:`wake`)."""
        self.channel = channel
        self._only = only
        self.pumped = pumped
        # pump() is one caller at a time; wake() writes a byte to the pipe it polls beside
        # the observation's descriptor, made at start() and closed at stop().
        self._pump_lock = threading.RLock()
        self._pumper: int | None = None  # the thread handing events over in pump(), if any
        self._wake_lock = threading.Lock()
        self._wake_fds: tuple[int, int] | None = None
        # Under _wake_lock: a pump is asleep in poll (a wake writes to the pipe), or a wake
        # came while none was (the next pump returns at once: no byte written, none read).
        self._polling = False
        self._woken = False
        self.requested_backend = Backend(backend)
        self.backend: Backend | None = None  # the one in use, once started
        self._liveness_recheck_s = liveness_recheck_s
        self._polling_interval_s = polling_interval_s
        self._on_warning = on_warning or logger.warning
        self._lock = threading.RLock()
        self._known: dict[str, _Known] = {}
        # The IDs among them whose state can change without a file event (filed, handed
        # over): what the timer re-checks, without walking every ended request it knows.
        # A dict for its order: re-checked (and so reported) in the order they were first
        # known, as when the timer walked everything it knows.
        self._open: dict[str, None] = {}
        # Servers' liveness as probed since the timer last re-checked it (server key, see
        # Channel.alive_key): a request filed by a server probed alive a moment ago is not
        # probed again for each of its requests. A crash makes no event either way: the
        # timer's re-check (every liveness_recheck_s) replaces this with fresh probes, and
        # a lock file removed (a clean stop) clears it at once.
        self._alive: dict[str, bool] = {}
        self._subscribers: list[Subscription[Transition]] = []
        self._accept: dict[Subscription[Transition], Callable[[Transition], bool]] = {}
        self._observer: Observation | None = None
        # Held only to take the observation (stop()) or to put a new one in its place (the
        # timer's restart), never while one starts or stops: a replacement started while
        # stop() runs is then stopped by the restart, not left running unseen.
        self._observer_lock = threading.Lock()
        self._hints = WatchHints(
            on_change=self._deliver,
            on_overflow=lambda: self.request_rescan("the inotify queue overflowed"),
            on_lost=lambda: self.request_rescan("a watched directory went away"),
            # A read failed (EIO), or worse: rescan; the backend's thread lives on.
            on_error=lambda exc: self.request_rescan(f"handling an event failed ({exc})"),
        )
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._rescan_reason: str | None = None
        self._rescan_failing = False  # the last rescan raised (said once, retried each tick)
        self._restart_failing = False  # the last restart raised (likewise)
        self._second_looks: set[str] = set()  # IDs heard of but not readable: read once more
        self._timer: threading.Thread | None = None
        self._servers_path = str(channel.path / SERVERS_DIR)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> Watcher:
        """Start watching. If it cannot (no descriptor, inotify instance or thread left, a
        scan that fails), what it had opened is closed again before the error is raised."""
        try:
            if self.pumped:
                self._wake_fds = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._observer = self._start_observer()
            with self._lock:
                self._scan(emit=False)
            self._timer = threading.Thread(
                target=self._run_timer, name="pending-liveness", daemon=True
            )
            start_thread(self._timer)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self.wake()  # a pump under way returns
        with self._observer_lock:
            observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
        if (
            self._timer is not None
            and self._timer.is_alive()
            and self._timer is not threading.current_thread()
        ):
            self._timer.join()
        if self._wake_fds is not None:
            with self._pump_lock, self._wake_lock:
                if self._wake_fds is not None:
                    for fd in self._wake_fds:
                        os.close(fd)
                    self._wake_fds = None
        with self._lock:
            for subscription in self._subscribers:
                subscription.close()
            self._subscribers.clear()
            self._accept.clear()

    def __enter__(self) -> Watcher:
        return self.start() if self._observer is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start_observer(self) -> Observation:
        # The channel and its .servers/ (a clean stop removes a lock file there). Non-
        # recursive: staging in .tmp/ stays invisible, so a publication is one event.
        observation = observe(
            (str(self.channel.path), self._servers_path),
            self._hints,
            backend=self.requested_backend,
            polling_interval_s=self._polling_interval_s,
            on_fallback=self._on_warning,
            pumped=self.pumped,
        )
        self.backend = observation.backend
        return observation

    # --- pumping (a pumped watcher) ------------------------------------------------------

    def pump(self, timeout_s: float | None = None) -> bool:
        """Wait until events come, :meth:`wake` is called or *timeout_s* passes (None: no
        limit), then hand over the events waiting, emitting what they change on this thread,
        and return True; False at once when the watcher is stopped, or is not pumped (its
        own threads hand events over). The caller looks at what it waits for and pumps
        again. A pump cut short while it hands events
        over (a Ctrl-C raised in it) has the timer rescan: what those events changed is
        emitted all the same."""
        with self._pump_lock:
            wake_fds = self._wake_fds
            if self._stop.is_set() or wake_fds is None:
                return False
            with self._wake_lock:
                if self._woken:  # woken while nobody pumped: hand over what is there, no wait
                    self._woken = False
                    timeout_s = 0
                self._polling = True
            observer = self._observer
            # A stopped observation (the timer replacing it) is not polled: its descriptor
            # is closed, and would read as ready at once, again and again.
            fd = observer.fileno() if observer is not None and observer.is_alive() else None
            poller = select.poll()
            poller.register(wake_fds[0], select.POLLIN)
            if fd is not None:
                poller.register(fd, select.POLLIN)
            try:
                ready = [f for f, _ in poller.poll(_poll_ms(timeout_s))]
            finally:
                with self._wake_lock:
                    self._polling = self._woken = False
            if wake_fds[0] in ready:
                with contextlib.suppress(OSError):
                    os.read(wake_fds[0], 512)
            if fd is not None and fd in ready and observer is not None:
                self._pumper = threading.get_ident()
                try:
                    observer.pump_ready()
                except BaseException:
                    # Cut short (a Ctrl-C raised here): events read and not handed over
                    # are lost to it, so the timer rescans, and emits what they changed.
                    self.request_rescan("handing events over was cut short")
                    raise
                finally:
                    self._pumper = None
            return True

    def wake(self) -> None:
        """End a :meth:`pump` under way now (or the next one at once); any thread may."""
        with self._wake_lock:
            if self._wake_fds is None:
                return
            if not self._polling:
                self._woken = True
                return
            with contextlib.suppress(OSError):  # full: a wake is there already
                os.write(self._wake_fds[1], b"\0")

    # --- subscribing ---------------------------------------------------------------------

    def subscribe(
        self,
        backlog: int = SUBSCRIBER_BACKLOG,
        *,
        accept: Callable[[Transition], bool] | None = None,
    ) -> tuple[Subscription[Transition], list[Status]]:
        """A new subscription, and the statuses known at that instant (nothing falls between).

        *accept*, if given, picks the transitions queued on it: one it refuses is dropped
        there and then, and never wakes the subscriber. It is called on the watcher's own
        thread, under its lock, for every transition: keep it quick, and never block in it.
        """
        subscription: Subscription[Transition] = Subscription(backlog)
        with self._lock:
            self._subscribers.append(subscription)
            if accept is not None:
                self._accept[subscription] = accept
            return subscription, self.statuses()

    def unsubscribe(self, subscription: Subscription[Transition]) -> None:
        with self._lock:
            if subscription in self._subscribers:
                self._subscribers.remove(subscription)
            self._accept.pop(subscription, None)
        subscription.close()

    def statuses(self, *, kinds: Collection[Kind] | None = None) -> list[Status]:
        """What the watcher knows now, oldest first."""
        with self._lock:
            found = [k.status for k in self._known.values()]
        if kinds is not None:
            found = [s for s in found if s.kind in kinds]
        return sorted(found, key=lambda s: (s.request.filed_at, s.id))

    def status(self, request_id: str) -> Status | None:
        with self._lock:
            known = self._known.get(request_id)
            return known.status if known else None

    def forget(self, request_id: str) -> None:
        """Drop what this watcher knows of *request_id*, emitting nothing: for a follower
        done with a request (an asker, once it has ended one) whose *only* refuses its ID from
        now on. A watcher that lives long (an MCP server's asker) then holds, and re-reads at
        each rescan, what it still waits on, not every request it ever followed. An ID that
        *only* still accepts is known again at its next event or rescan. (*only* is asked
        again under the lock an event is taken in: one heard as this runs is not read.)"""
        with self._lock:
            self._drop(request_id)

    def _drop(self, request_id: str) -> None:
        """Know nothing more of *request_id* (lock held): no transition is emitted."""
        self._known.pop(request_id, None)
        self._open.pop(request_id, None)
        self._second_looks.discard(request_id)

    # --- events --------------------------------------------------------------------------

    def _deliver(self, path: str, is_directory: bool, deleted: bool) -> None:
        self._hint(path, is_directory=is_directory, deleted=deleted)

    def _hint(self, path: str, *, is_directory: bool, deleted: bool) -> None:
        directory, name = os.path.split(path)
        if self._stop.is_set():
            return
        if directory == self._servers_path:
            if deleted and name.endswith(".lock") and not is_directory:  # a clean stop
                self._recheck_server(name.removesuffix(".lock"))
            return
        if self._only is not None and not self._only(name.partition(".")[0]):
            # Not one this watcher follows (an ID is what comes before the first dot): not
            # even parsed. An asker's watcher hears every other process's files go by.
            return
        # A directory named like a slot is junk in that slot: re-read its group, which reports
        # it (and ends a live asker's request `failed`); any other directory is nothing.
        # (As parse_name() classifies it, without building its ParsedName.)
        verdict, request_id = name_id(name)
        if verdict is NameVerdict.PARSED and request_id is not None:
            # An answer or outcome appearing for a known request needs no re-read of the
            # request: published files are never edited, and an edit or removal of the
            # request file is an event of its own, which takes the full path. (Likewise an
            # outcome appearing beside an answer already read: see _refresh.)
            suffix = name[len(request_id) :]
            request_kind = KIND_BY_SUFFIX.get(suffix)
            slot = None if deleted or request_kind is not None else SLOT_BY_SUFFIX[suffix]
            kind = request_kind if slot is None and not deleted else None
            with self._lock:
                if self._only is not None and not self._only(request_id):
                    return  # forgotten meanwhile (see forget): not known again by this event
                self._refresh(request_id, self._alive, slot=slot, kind=kind)

    def request_rescan(self, reason: str) -> None:
        """Ask for a full rescan (done on the watcher's own thread, promptly)."""
        self._rescan_reason = reason
        self._wake.set()

    def _emit(self, event: Event, request_id: str, kind: Kind, status: Status | None) -> None:
        transition = Transition(
            event=event, id=request_id, kind=kind, status=status, ts=record_time(self.channel.clock)
        )
        for subscription in self._subscribers:
            accept = self._accept.get(subscription)
            if accept is None or accept(transition):
                subscription.put(transition)
        if self.pumped and self._pumper != threading.get_ident():
            self.wake()  # emitted on the timer's or a polling thread: the waiter looks

    def _refresh(
        self,
        request_id: str,
        alive_cache: dict[str, bool] | None = None,
        *,
        slot: Slot | None = None,
        kind: Kind | None = None,
        second_look: bool = False,
    ) -> None:
        """Re-read one ID and emit what changed since it was last known (lock held). *slot*:
        the answer or outcome slot whose file appeared, if that is all the event was; *kind*:
        the kind of the request file whose event this is, if it was one appearing."""
        known = self._known.get(request_id)
        if known is not None and slot is not None:
            answer = known.status.answer
            if slot is Slot.SETTLED and answer is not None:
                # The outcome beside an answer already read: only the outcome is new. The
                # answer is a published file, never edited; its removal is an event of its
                # own, which takes the full path.
                group, _ = self.channel.read_group(
                    request_id, names=(request_id + SETTLED_SUFFIX,), kinds=()
                )
                group = Group(
                    id=request_id,
                    request=known.status.request,
                    answer=answer,
                    settled=group.settled,
                )
            elif slot is Slot.ANSWER and known.status.settled is None:
                # The answer to a request not yet ended: only the answer is new. An outcome
                # is published after its answer, and its event follows this one.
                group, _ = self.channel.read_group(
                    request_id, names=(request_id + ANSWER_SUFFIX,), kinds=()
                )
                group = Group(id=request_id, request=known.status.request, answer=group.answer)
            else:
                group, _ = self.channel.read_group(request_id, kinds=())
                group = group._replace(request=known.status.request)
        else:
            # A known request's kind is settled, and so is one first heard of by its own
            # file's event (a second request under its ID is an event of its own, and then
            # the ID is known): only that slot is read. A full scan still catches a second
            # request. (Each name looked up and not there is a lookup in a busy directory.)
            kinds = (known.status.kind,) if known else (kind,) if kind else None
            names = None
            if known is None and kind is not None:
                # And its file alone: an answer or outcome is published after its request,
                # so its event follows this one and is read then.
                names = (request_id + REQUEST_SUFFIX[kind],)
            group, problems = self.channel.read_group(request_id, names=names, kinds=kinds)
            if problems and group.request is None and not second_look:
                # Heard of, and not readable as it was heard of: a nameless publication is
                # one event, and no second one would come to read it by. The timer reads
                # this ID once more, alone (never the whole channel: a junk file written to
                # over and over would rescan it at every write); one still unreadable is a
                # listing's problem, as ever.
                self._second_looks.add(request_id)  # at the next re-check, not sooner
        status = self.channel.derive(group, alive_cache)
        self._update(request_id, status, emit=True)

    def _update(self, request_id: str, status: Status | None, *, emit: bool) -> None:
        previous = self._known.get(request_id)
        if status is None:
            if previous is not None:
                del self._known[request_id]
                self._open.pop(request_id, None)
                if emit:
                    self._emit(Event.REMOVED, request_id, previous.status.kind, None)
            return
        rank = _rank(status)
        current = _event_of(status)
        last = previous.event if previous else None
        if previous is not None and rank < previous.rank:
            # Fewer files than it had (its outcome or answer removed first, as `rm -rf`
            # does): no request ever goes back, so this is its removal under way, not a
            # transition. The last event stands; `removed` follows when its request goes.
            self._known[request_id] = previous._replace(status=status)
            return
        if emit:
            # Steps the files prove happened, even if their events were coalesced or missed.
            steps: list[Event] = []
            if previous is None:
                steps.append(Event.FILED)
            answered_now = status.answer is not None and not status.answer.is_tombstone
            if (previous is None or previous.rank < 2) and rank >= 2 and answered_now:
                steps.append(Event.ANSWERED)
            steps.append(current)
            for step in steps:
                if step is not last:
                    self._emit(step, request_id, status.kind, status)
                    last = step
        self._known[request_id] = _Known(
            rank=max(rank, previous.rank if previous else 0), event=current, status=status
        )
        if status.state in _OPEN_STATES:
            self._open[request_id] = None
        else:
            self._open.pop(request_id, None)

    def _scan(self, *, emit: bool) -> None:
        groups, _ = self.channel.scan(self._only)
        alive_cache: dict[str, bool] = {}
        seen = set()
        for group in groups:
            seen.add(group.id)
            self._update(group.id, self.channel.derive(group, alive_cache), emit=emit)
        for request_id in [i for i in self._known if i not in seen]:
            if self._only is not None and not self._only(request_id):
                self._drop(request_id)  # followed no more (being forgotten): not "removed"
                continue
            self._update(request_id, None, emit=emit)
        self._alive = alive_cache  # just probed

    def rescan(self) -> None:
        """Re-read the whole channel, emitting exactly what changed since it was last known."""
        with self._lock:
            self._scan(emit=True)

    # --- the slow timer: liveness, expiry, the observer's health -------------------------

    def _recheck_every_s(self) -> float:
        """How often the timer re-checks. Polling, a lock file made and removed between two
        snapshots makes no event at all, so liveness is re-checked as often as the directory
        is polled (a probe per live server: far cheaper than the poll itself)."""
        if self.backend is Backend.POLLING:
            return min(self._liveness_recheck_s, self._polling_interval_s)
        return self._liveness_recheck_s

    def _run_timer(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._recheck_every_s())
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self._tick()
            except Exception:  # never let the timer die: it is what notices crashes
                logger.exception("pending watcher: re-check failed")

    def _tick(self) -> None:
        observer = self._observer
        if observer is not None and not observer.healthy():
            self._restart(observer)
        if self._rescan_reason is not None:
            reason, self._rescan_reason = self._rescan_reason, None
            logger.info("pending watcher: rescanning (%s)", reason)
            try:
                self.rescan()
            except (OSError, PendingError) as exc:
                # Not done: asked again, or what it was for is lost for good. The next tick
                # tries again; said once while it keeps failing (a tick a second).
                self._rescan_reason = self._rescan_reason or reason
                if not self._rescan_failing:
                    self._rescan_failing = True
                    self._on_warning(f"could not read the channel again ({exc}); retrying")
                return
            self._rescan_failing = False
            return
        self._look_again()
        self._recheck_waiting()

    def _restart(self, observer: Observation) -> None:
        """Replace *observer*, which stopped (its thread died, a watched directory went), and
        rescan for what passed meanwhile. One that cannot start is tried again at each tick
        until it does, said once while it keeps failing."""
        observer.stop()  # again at each retry: stopping one stopped already does nothing
        try:
            replacement = self._start_observer()
        except (OSError, RuntimeError) as exc:
            # No inotify instance, watch or descriptor left (OSError), no thread (RuntimeError):
            # the environment's, and it may pass. The liveness re-checks go on meanwhile.
            if not self._restart_failing:
                self._restart_failing = True
                self._on_warning(
                    f"the file watcher stopped and could not be restarted ({exc}); retrying"
                )
            return
        with self._observer_lock:
            stopping = self._stop.is_set()  # stop() ran meanwhile and took the old one
            if not stopping:
                self._observer = replacement
        if stopping:
            replacement.stop()  # nobody else would: stop() never saw it
            return
        self._restart_failing = False
        self._on_warning("the file watcher stopped; restarted it and rescanned")
        self.wake()  # a pump polls the new observation's descriptor from now on
        self._rescan_reason = self._rescan_reason or "observer restarted"

    def _look_again(self) -> None:
        """Read once more, each alone, the IDs heard of that could not be read then."""
        with self._lock:
            looks, self._second_looks = self._second_looks, set()
            for request_id in looks:
                self._refresh(request_id, self._alive, second_look=True)

    def _recheck_waiting(self) -> None:
        """Re-derive requests whose state can change without a file event."""
        now = self.channel.clock.now()
        with self._lock:
            candidates = [self._known[i].status for i in self._open]
            alive_cache: dict[str, bool] = {}
            for status in candidates:
                expires = status.request.expires_at
                if expires is not None and now >= expires:
                    self._refresh(status.id, alive_cache)
                    continue
                if status.state is State.FILED:  # a handed-over fact's server is already gone
                    key = Channel.alive_key(status.request)
                    if key not in alive_cache:
                        alive_cache[key] = self.channel.request_alive(status.request)
                    if not alive_cache[key]:
                        self._refresh(status.id, alive_cache)
            self._alive = alive_cache  # fresh: what earlier probes found is forgotten

    def _recheck_server(self, server_id: str) -> None:
        with self._lock:
            self._alive = {}  # a lock file removed: every server is probed afresh
            for known in list(self._known.values()):
                if known.status.request.server.id == server_id and known.rank == 1:
                    self._refresh(known.status.id)


@contextmanager
def watching(channel: Channel, **kwargs: Any) -> Iterator[Watcher]:
    """``with watching(channel) as watcher:`` — a started watcher, stopped on exit."""
    watcher = Watcher(channel, **kwargs).start()
    try:
        yield watcher
    finally:
        watcher.stop()
