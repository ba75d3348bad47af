"""The live view after an inotify overflow: every transition the rescan finds is either given
or counted as missed, exactly, however far the reader has fallen behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from helpers import WAIT_S, command, wait_until

from pending import Channel, Event, Missed, Transition
from pending.testing import events_lost, inject_overflow
from wisp._live import LiveInbox
from wisp.audit.writer import EntryPoint

# More than both bounded queues between the watcher and the reader hold (256 each), so the
# rescan's transitions overflow the watcher's subscription and then the view's own queue.
FILED_UNSEEN = 1200
BACKLOG = 256  # the view's queue (LiveInbox's default backlog)


@pytest.fixture
def live(channel: Channel, native_watching: None) -> Iterator[LiveInbox]:
    view = LiveInbox(channel.home, entry_point=EntryPoint.PENDING)
    view.start(Channel.open(channel.home))
    yield view
    view.close()


class TestOverflowIsCountedExactly:
    def test_every_transition_of_a_rescan_is_given_or_counted(
        self, channel: Channel, live: LiveInbox
    ) -> None:
        """1,200 requests filed while their events are lost, then the kernel's overflow: the
        `filed` transitions given plus the events said missed are exactly 1,200."""
        inbox = live._inbox
        assert inbox is not None
        with channel.server() as lock:
            with events_lost(inbox._watcher):
                filed = set()
                for n in range(FILED_UNSEEN):
                    request = command(lock, text=f"make {n}")
                    channel.file(request)
                    filed.add(request.id)
            inject_overflow(inbox._watcher)
            # Nobody reads until the view's own queue is full: it then drops what it holds.
            wait_until(lambda: len(live._items._items) >= BACKLOG, what="the view's queue full")
            read: list[object] = []
            reader = threading.Thread(target=lambda: read.extend(live), daemon=True)
            reader.start()

            def counted() -> tuple[int, int]:
                items = list(read)
                missed = sum(i.count for i in items if isinstance(i, Missed))
                return sum(isinstance(i, Transition) for i in items), missed

            try:
                wait_until(lambda: sum(counted()) >= FILED_UNSEEN, what="all counted")
            except AssertionError:
                raise AssertionError(f"given and missed: {counted()}") from None
            live.close()  # the reader ends with what the view held: nothing is left out
            reader.join(WAIT_S)
        given, missed = counted()
        assert given + missed == FILED_UNSEEN and missed > 0, (given, missed)
        transitions = [i for i in read if isinstance(i, Transition)]
        assert all(t.event is Event.FILED and t.id in filed for t in transitions)
