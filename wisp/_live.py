"""A live view of the channel that outlives its directory.

:class:`wisp.Inbox` watches one channel directory, opened once. Removed (``rm -rf
~/.wisp/pending``) and made again by the next `wisp` command, the directory is a new one, and
an Inbox left on the old one would hear nothing more. :class:`LiveInbox` also watches
`$WISP_HOME` itself: when the channel directory goes it says so and waits; when it is made
again it opens the new one and starts over with what waits there. Its events are hints too:
on each, the directory open is compared with what the name now holds.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from pending import (
    Channel,
    Missed,
    Observation,
    PendingError,
    Status,
    Subscription,
    SubscriptionClosed,
    Transition,
    WatchHints,
    observe,
)
from wisp._answering import Inbox
from wisp._audit import AuditEvent, EntryPoint, audit
from wisp._home import open_channel

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
class HomeGone:
    """`$WISP_HOME` itself was removed: nothing here can tell when it is made again, so the
    view ends (the last item)."""

    path: Path


@attrs.frozen(kw_only=True)
class _Look:
    """A hint that the channel directory may have changed under its name."""


Item = Transition | Missed | ChannelGone | ChannelBack | HomeGone


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

    # --- lifecycle -----------------------------------------------------------------------

    def start(self, channel: Channel) -> list[Status]:
        """Watch *channel* (open on this home) and its home; the statuses waiting now."""
        # The home itself removed, or events lost: look again too.
        look = self._look_again
        hints = WatchHints(on_change=self._home_changed, on_overflow=look, on_lost=look)
        self._observation = observe((str(self.home),), hints)
        return self._follow(channel)

    def _home_changed(self, path: str, is_directory: bool, deleted: bool) -> None:
        if Path(path).name == PENDING_DIR:
            self._look_again()

    def _look_again(self) -> None:
        self._items.put(_Look())

    def _follow(self, channel: Channel) -> list[Status]:
        inbox = Inbox(channel, entry_point=self.entry_point, on_warning=self._on_warning)
        inbox.start()
        self.backend = inbox.backend
        subscription, snapshot = inbox.subscribe()
        self._channel, self._inbox = channel, inbox
        forwarder = threading.Thread(
            target=self._forward, args=(subscription,), name="live-inbox", daemon=True
        )
        forwarder.start()
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
            else:
                yield item

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
            self._drop()
            self._warn(f"the channel directory {self.path} was removed; waiting for it again")
            yield ChannelGone(path=self.path)
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
