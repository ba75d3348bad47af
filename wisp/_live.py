"""A live view of the channel that outlives its directory.

:class:`wisp.Inbox` watches one channel directory, opened once. Removed (``rm -rf
~/.wisp/pending``) and made again by the next `wisp` command, the directory is a new one, and
an Inbox left on the old one would hear nothing more. :class:`LiveInbox` also watches
`$WISP_HOME` itself: when the channel directory goes it says so and waits; when it is made
again it opens the new one and starts over with what waits there. Its events are hints too:
on each, the directory open is compared with what the name now holds.

The home's own removal is heard from the directory that holds it. The home's watch says it
went only once nothing refers to it any more: Linux sends `IN_DELETE_SELF` when the last
descriptor on the directory, or on anything that was in it, is closed (this process's log
directory, an asker's channel), so a view that had already said the channel directory went
would wait on it for as long as any asker runs. The parent's `IN_DELETE` comes with the
`rmdir(2)` itself.

A directory made again may be filled with what an old one held (restored from a copy, moved
back): requests settled minutes ago reappear, file by file, and a watcher would report each
file as a transition. So the view remembers the last state it gave each request, across
directories, and after one is made again gives a transition only where it is one: a request it
knew, now in another state; or one it never knew whose change happened after the old directory
was seen to go (by the times its records hold). What it finds there from before is no new
transition: a waiting one is given as :class:`Found` (shown as what waits), the rest not at all.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import attrs

from pending import (
    Backend,
    Channel,
    Event,
    Kind,
    Missed,
    Observation,
    Outcome,
    PendingError,
    State,
    Status,
    Subscription,
    SubscriptionClosed,
    Transition,
    WatchHints,
    observe,
    start_thread,
)
from wisp._answering import Inbox
from wisp._home import open_channel
from wisp.audit.writer import AuditEvent, EntryPoint, audit
from wisp.kinds._view import WAITING

PENDING_DIR = "pending"


@attrs.frozen(kw_only=True)
class ChannelGone:
    """The channel directory was removed (or moved away): nothing can be watched until it is
    made again."""

    path: Path


@attrs.frozen(kw_only=True)
class ChannelBack:
    """The channel directory was made again: *statuses* is what waits in it now."""

    path: Path
    statuses: tuple[Status, ...]


@attrs.frozen(kw_only=True)
class Found:
    """A request that appeared in the directory made again, waiting since before the old one
    went (restored with it): what waits, not a transition."""

    status: Status


@attrs.frozen(kw_only=True)
class HomeGone:
    """`$WISP_HOME` itself was removed: nothing here can tell when it is made again, so the
    view ends (the last item)."""

    path: Path


@attrs.frozen(kw_only=True)
class _Look:
    """A hint that the channel directory may have changed under its name."""


Item = Transition | Missed | ChannelGone | ChannelBack | Found | HomeGone

# A request found from before in a state that waits (WAITING) is given as Found.


@attrs.frozen(kw_only=True)
class _Known:
    """What the view last gave of a request: its state and outcome, and whether it was then
    removed (a removal keeps what it was, to tell a restore from a change)."""

    kind: Kind
    state: State
    outcome: Outcome | None
    removed: bool


# States with no record of their own (a stale request's asker stopped; a handed-over fact's):
# when they began is unknown, so what a view watched wait and then reach one is a transition.
_TIMELESS = frozenset({State.STALE, State.HANDED_OVER})


def happened_at(status: Status) -> datetime:
    """When *status*'s state began, as its records say: the outcome's time, the answer's, or
    the filing's (stale and handed-over have no record of their own: when the request was
    filed is the earliest they can have begun)."""
    if status.settled is not None:
        return status.settled.settled_at
    if status.answer is not None:
        return status.answer.answered_at
    return status.request.filed_at


class LiveInbox:
    """What waits, live, across the channel directory being removed and made again. Iterate
    it for :data:`Item` s; :meth:`close` ends it."""

    def __init__(
        self,
        home: Path,
        *,
        entry_point: EntryPoint,
        on_warning: Callable[[str], None] | None = None,
        backlog: int = 256,
    ) -> None:
        self.home = home
        self.path = home / PENDING_DIR
        self.entry_point = entry_point
        self._on_warning = on_warning
        self._items: Subscription[Item | _Look] = Subscription(backlog)
        self._channel: Channel | None = None
        self._inbox: Inbox | None = None
        self._forwarder: threading.Thread | None = None
        self._observation: Observation | None = None
        self.backend: str | None = None
        self._known: dict[str, _Known] = {}  # by ID, across directories
        # When the last directory was seen to go (None while the first is watched): a change
        # from before it, found in the directory made again, is not a transition.
        self._gone_at: datetime | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def start(self, channel: Channel | None = None) -> list[Status]:
        """Watch *channel* (open on this home; None: the view opens its own) and its home;
        the statuses waiting now. The view holds the channel from then on, and closes it as
        it closes (raises :class:`pending.PendingError` if the channel cannot be used)."""
        own = channel is None
        if channel is None:
            channel = open_channel(self.home)
        try:
            self._observation = self._observe_home()
            return self._follow(channel)
        except BaseException:
            if own:
                channel.close()
            raise

    def _observe_home(self) -> Observation:
        """Watch the home, and the directory that holds it for the home's name (see the
        module's doc), natively; where the parent cannot be watched so (unreadable, or no
        inotify instance left), the home alone, as :func:`pending.observe` can: then its own
        watch says when it went, once nothing refers to it (a polling watch, at once)."""
        # The home itself removed, or events lost: look again too.
        look = self._look_again
        hints = WatchHints(on_change=self._home_changed, on_overflow=look, on_lost=look)
        both = (str(self.home), str(self.home.parent))
        try:
            return observe(both, hints, backend=Backend.NATIVE)
        except OSError:
            return observe((str(self.home),), hints)

    def _home_changed(self, path: str, is_directory: bool, deleted: bool) -> None:
        # The channel directory's name in the home, or the home's in its parent.
        if Path(path).name in (PENDING_DIR, self.home.name):
            self._look_again()

    def _look_again(self) -> None:
        self._items.put(_Look())

    def _follow(self, channel: Channel) -> list[Status]:
        inbox = Inbox(channel, entry_point=self.entry_point, on_warning=self._on_warning)
        inbox.start()
        self.backend = inbox.backend
        subscription, snapshot = inbox.subscribe()
        self._channel, self._inbox = channel, inbox
        for status in snapshot:
            self._known[status.id] = _Known(
                kind=status.kind, state=status.state, outcome=status.outcome, removed=False
            )
        forwarder = threading.Thread(
            target=self._forward, args=(subscription,), name="live-inbox", daemon=True
        )
        start_thread(forwarder)
        self._forwarder = forwarder
        return snapshot

    def _forward(self, subscription: Subscription[Transition]) -> None:
        while True:
            try:
                item = subscription.get()
            except SubscriptionClosed:
                return
            if item is not None:
                self._items.put(item)

    def _drop(self) -> None:
        if self._inbox is not None:
            self._inbox.close()  # closes its subscriptions: the forwarder ends
            self._inbox = None
        if self._forwarder is not None and self._forwarder is not threading.current_thread():
            self._forwarder.join()
            self._forwarder = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def close(self) -> None:
        self._drop()
        if self._observation is not None:
            self._observation.stop()
            self._observation = None
        self._items.close()

    # --- reading -------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Item]:
        for item in self._items:
            if isinstance(item, _Look):
                for found in self._look():
                    yield found
                    if isinstance(found, HomeGone):
                        return
            elif isinstance(item, Transition):
                given = self._given(item)
                if given is not None:
                    yield given
            else:
                yield item

    def _given(self, transition: Transition) -> Transition | Found | None:
        """*transition* if it is one for this view (see the module's doc), a :class:`Found`
        for a waiting request put back from before, else None."""
        known = self._known.get(transition.id)
        status = transition.status
        if status is None:  # removed: said once; what it was is remembered
            if known is None or known.removed:
                return None
            self._known[transition.id] = attrs.evolve(known, removed=True)
            return transition
        now = _Known(kind=status.kind, state=status.state, outcome=status.outcome, removed=False)
        self._known[transition.id] = now
        if known is not None and (known.state, known.outcome) == (now.state, now.outcome):
            # Files put back as the view last gave them: back, not changed.
            return Found(status=status) if known.removed and status.state in WAITING else None
        if self._gone_at is None or happened_at(status) > self._gone_at:
            return transition
        if known is None:  # never given, and from before the directory went
            return Found(status=status) if status.state in WAITING else None
        if not known.removed and known.state in WAITING and status.state in _TIMELESS:
            return transition  # it waited here, and its asker stopped: that has no record
        return None  # a step of the past being put back

    def _same_directory(self) -> bool:
        """Whether the channel open is the directory its name holds now."""
        if self._channel is None:
            return False
        try:
            named = self.path.lstat()
        except FileNotFoundError:
            return False
        held = os.fstat(self._channel.dir_fd)
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def _look(self) -> Iterator[Item]:
        if self._same_directory():
            return
        if not self.home.exists():
            # Not audited: writing the log would make the home again.
            self._drop()
            if self._on_warning is not None:
                self._on_warning(f"{self.home} (WISP_HOME) was removed; stopped watching")
            yield HomeGone(path=self.home)
            return
        if self._channel is not None:
            self._gone_at = self._channel.clock.now()
            self._drop()
            self._warn(f"the channel directory {self.path} was removed; waiting for it again")
            yield ChannelGone(path=self.path)
            yield from self._all_removed(self._gone_at)
        if not self.path.exists():
            return
        try:
            channel = open_channel(self.home)
        except PendingError as exc:
            self._warn(f"the channel directory {self.path} is back, but cannot be used: {exc}")
            return
        snapshot = self._follow(channel)
        self._warn(f"the channel directory {self.path} was made again; watching it")
        yield ChannelBack(path=self.path, statuses=tuple(snapshot))

    def _all_removed(self, ts: datetime) -> Iterator[Transition]:
        """`removed` for each request the directory held that its watcher, dropped with it,
        had not yet said was removed: with the directory, every one of them went."""
        for request_id, known in self._known.items():
            if not known.removed:
                self._known[request_id] = attrs.evolve(known, removed=True)
                yield Transition(
                    event=Event.REMOVED, id=request_id, kind=known.kind, status=None, ts=ts
                )

    def _warn(self, message: str) -> None:
        # Never remakes the home: it may be being removed as this is said (`rm -rf` takes
        # pending/ first), and a home made again would hide that it went.
        audit(
            self.home,
            AuditEvent.WATCH_WARNING,
            {"message": message},
            entry_point=self.entry_point,
            make_home=False,
        )
        if self._on_warning is not None:
            self._on_warning(message)
