"""The watcher's contract, one suite run against both backends, inotify and polling, each
with the watcher's own threads reading the events and pumped (read by a thread of the test's,
as a waiter reads them)."""

from __future__ import annotations

import ast
import asyncio
import errno
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    BUILDERS,
    HOARD_INOTIFY,
    ROOT,
    WAIT_S,
    Asker,
    command,
    events,
    fact,
    question,
    quiet,
    take,
    wait_until,
)
from isolation import OWN_INOTIFY_INSTANCES, own_inotify_limit

import pending._watch
from pending import (
    Backend,
    Channel,
    Event,
    Kind,
    Missed,
    Observation,
    Outcome,
    Request,
    State,
    Transition,
    Watcher,
)
from pending._fsio import Unreadable
from pending.testing import FakeClock, events_lost, inject_overflow

FAST = {"polling_interval_s": 0.05, "liveness_recheck_s": 0.2}


@pytest.fixture(params=[Backend.NATIVE, Backend.POLLING])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param is Backend.NATIVE:
        request.getfixturevalue("native_watching")
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=[False, True], ids=["threaded", "pumped"])
def watcher(
    channel: Channel, backend: Backend, request: pytest.FixtureRequest
) -> Iterator[Watcher]:
    pumped: bool = request.param
    with Watcher(channel, backend=backend, pumped=pumped, **FAST) as w:
        assert w.backend is backend
        if not pumped:
            yield w
            return
        pumping = threading.Thread(target=pump_until_stopped, args=(w,), daemon=True)
        pumping.start()
        try:
            yield w
        finally:
            w.stop()
            pumping.join()


def pump_until_stopped(watcher: Watcher) -> None:
    """What a waiter does with a pumped watcher, for as long as it runs."""
    while watcher.pump():
        pass


class TestContract:
    @pytest.mark.parametrize("kind", list(Kind))
    def test_filed_answered_settled_in_order(
        self, channel: Channel, watcher: Watcher, kind: Kind
    ) -> None:
        """Each step of a request's life is emitted once, in order."""
        sub, _ = watcher.subscribe()
        decision, text = {
            Kind.COMMAND: ("once", None),
            Kind.FACT: ("keep", None),
            Kind.QUESTION: ("answer", "staging"),
            Kind.TOOL: ("once", None),
        }[kind]
        with channel.server() as lock:
            req = BUILDERS[kind](lock)
            channel.file(req)
            assert events(take(sub, 1)) == [("filed", req.id)]
            channel.answer(req.id, decision, kind=kind, via="cli", text=text)
            answered = take(sub, 1)[0]
            assert (answered.event, answered.status.state) == (Event.ANSWERED, State.ANSWERED)
            channel.settle(req, Outcome.ANSWERED, by="asker", decision=decision)
            settled = take(sub, 1)[0]
            assert settled.event is Event.SETTLED
            assert settled.status.outcome is Outcome.ANSWERED
            quiet(sub)

    def test_an_answer_written_before_anyone_watches_is_seen(
        self, channel: Channel, backend: Backend
    ) -> None:
        """The initial scan reports what was answered before the watcher started."""
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            channel.answer(req.id, "no", kind=Kind.COMMAND, via="cli")
            with Watcher(channel, backend=backend, **FAST) as watcher:
                _, snapshot = watcher.subscribe()
                assert [(s.id, s.state) for s in snapshot] == [(req.id, State.ANSWERED)]

    def test_nothing_filed_while_starting_is_missed(
        self, channel: Channel, backend: Backend
    ) -> None:
        """Requests filed by another process while the watcher starts all end up known:
        each in the first snapshot or as exactly one `filed` event."""
        child = Asker(channel.home, *["command"] * 300)
        try:
            with Watcher(channel, backend=backend, **FAST) as watcher:
                sub, snapshot = watcher.subscribe(backlog=10_000)
                assert len(child.filed()) == 300
                on_disk = {s.id for s in channel.listing().statuses}
                assert len(on_disk) == 300
                seen = {s.id for s in snapshot}
                filed: list[str] = []
                wait_until(
                    lambda: (
                        filed.extend(t.id for t in iter(lambda: sub.get(0.05), None))
                        or seen | set(filed) == on_disk
                    ),
                    what="every request",
                )
                assert len(filed) == len(set(filed)) and not (seen & set(filed))
        finally:
            child.kill()

    def test_repeated_events_change_nothing(self, channel: Channel, watcher: Watcher) -> None:
        """Touching a request (a real event for an unchanged file) emits nothing."""
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            take(sub, 1)
            for _ in range(5):
                os.utime(channel.path / f"{req.id}.request.json")
            quiet(sub)

    def test_withdrawn(self, channel: Channel, watcher: Watcher) -> None:
        """A withdrawal is one `withdrawn` event; its outcome file adds nothing."""
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            req = question(lock)
            channel.file(req)
            channel.claim(req, Outcome.WITHDRAWN, via="asker")
            channel.settle(req, Outcome.WITHDRAWN, by="asker")
            assert events(take(sub, 2)) == [("filed", req.id), ("withdrawn", req.id)]
            quiet(sub)

    def test_a_clean_stop_is_seen_at_once(self, channel: Channel, backend: Backend) -> None:
        """Removing the lock file is an event: no waiting for the slow timer."""
        with Watcher(
            channel, backend=backend, polling_interval_s=0.05, liveness_recheck_s=600
        ) as watcher:
            sub, _ = watcher.subscribe()
            with channel.server() as lock:
                cmd, fct = command(lock), fact(lock)
                channel.file(cmd)
                channel.file(fct)
                take(sub, 2)
            got = take(sub, 2)
            assert sorted(events(got)) == sorted([("stale", cmd.id), ("handed-over", fct.id)])

    def test_a_killed_server_is_seen_within_the_timer(
        self, channel: Channel, watcher: Watcher
    ) -> None:
        """SIGKILL makes no file event: the liveness timer finds it."""
        sub, _ = watcher.subscribe()
        child = Asker(channel.home, "command", "fact")
        cmd, fct = child.filed()
        take(sub, 2)
        child.kill()
        got = take(sub, 2, timeout=5)
        assert sorted(events(got)) == sorted([("stale", cmd), ("handed-over", fct)])

    def test_expiry_is_seen_within_the_timer(self, home: Path, backend: Backend) -> None:
        """A request passing its expiresAt turns stale without any file event (a fact filed
        with an expiry, as 0.22.0 did, whose asker has stopped: no asker will claim it). The
        channel's clock is the test's: the expiry comes when the test moves it, after the
        watcher has seen the request, however slowly a loaded machine lets it look."""
        clock = FakeClock()
        with (
            Channel.open(home, clock=clock) as channel,
            Watcher(channel, backend=backend, **FAST) as watcher,
        ):
            sub, _ = watcher.subscribe()
            with channel.server() as lock:
                req = fact(lock, expires_in_s=60, clock=clock)
            channel.file(req)
            assert events(take(sub, 2, timeout=30)) == [
                ("filed", req.id),
                ("handed-over", req.id),
            ]
            clock.advance(61)
            assert events(take(sub, 1, timeout=30)) == [("stale", req.id)]

    def test_removed_and_the_directory_emptied(self, channel: Channel, watcher: Watcher) -> None:
        """A sweep removing ended groups emits `removed`; the watcher keeps going after."""
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            reqs = [command(lock) for _ in range(3)]
            for req in reqs:
                channel.file(req)
                channel.claim(req, Outcome.WITHDRAWN, via="asker")
                channel.settle(req, Outcome.WITHDRAWN, by="asker")
            take(sub, 6)
            clock = FakeClock(channel.clock.now())
            clock.advance(10 * 86400)
            with Channel.open(channel.home, clock=clock) as later:
                assert len(later.sweep().removed) == 3
            assert sorted(events(take(sub, 3))) == sorted(("removed", r.id) for r in reqs)
            assert [p for p in channel.path.iterdir() if not p.name.startswith(".")] == []
            again = command(lock)
            channel.file(again)
            assert events(take(sub, 1)) == [("filed", again.id)]

    @pytest.mark.skipif(os.getuid() != 0, reason="chown to another uid needs root")
    def test_other_users_entries_are_never_emitted(
        self, channel: Channel, watcher: Watcher
    ) -> None:
        """A request owned by another uid never becomes an event."""
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            take(sub, 1)
            path = channel.path / f"{req.id}.answer.json"
            foreign = channel.path / ".tmp" / "foreign"
            foreign.write_text("{}")
            os.chown(foreign, 4321, -1)
            os.link(foreign, path)
            quiet(sub)
            assert watcher.status(req.id).state is State.FILED  # type: ignore[union-attr]

    def test_missed_events_are_found_by_a_rescan(
        self, channel: Channel, watcher: Watcher, backend: Backend
    ) -> None:
        """Events lost (as in an overflow) are recovered by a rescan, exactly: an overflow
        on inotify triggers it; polling is rescanned directly."""
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            kept = command(lock)
            channel.file(kept)
            take(sub, 1)
            with events_lost(watcher):
                new = fact(lock)
                channel.file(new)
                channel.answer(kept.id, "once", kind=Kind.COMMAND, via="cli")
            quiet(sub)  # the watcher really did miss them
            if backend is Backend.NATIVE:
                inject_overflow(watcher)
            else:
                watcher.rescan()
            got = take(sub, 2, timeout=5)
            assert sorted(events(got)) == sorted([("filed", new.id), ("answered", kept.id)])
            quiet(sub)

    def test_async_iteration(self, channel: Channel, watcher: Watcher) -> None:
        """`async for` over a subscription gets the same transitions."""
        sub, _ = watcher.subscribe()

        async def first() -> Transition | Missed:
            async for item in sub:
                return item
            raise AssertionError("closed")

        async def scenario() -> Transition | Missed:
            task = asyncio.create_task(first())
            await asyncio.sleep(0)
            with channel.server() as lock:
                req = command(lock)
                channel.file(req)
                return await asyncio.wait_for(task, 10)

        item = asyncio.run(scenario())
        assert isinstance(item, Transition) and item.event is Event.FILED


class TestNativeOnly:
    @pytest.mark.usefixtures("native_watching")
    def test_an_observer_that_dies_is_restarted_and_rescanned(self, channel: Channel) -> None:
        """If the observer thread stops, the timer restarts it and a rescan finds what passed."""
        with Watcher(channel, backend=Backend.NATIVE, liveness_recheck_s=0.1) as watcher:
            warnings: list[str] = []
            watcher._on_warning = warnings.append
            sub, _ = watcher.subscribe()
            observer = watcher._observer
            assert observer is not None
            observer.stop()
            observer.join()
            with channel.server() as lock:
                req = fact(lock)
                channel.file(req)
                assert events(take(sub, 1, timeout=5)) == [("filed", req.id)]
                assert watcher._observer is not observer
                assert any("restarted" in w for w in warnings)
                channel.answer(req.id, "drop", kind=Kind.FACT, via="cli")
                assert events(take(sub, 1)) == [("answered", req.id)]

    @pytest.mark.usefixtures("native_watching")
    def test_events_reach_the_watcher_on_the_inotify_readers_own_thread(
        self, channel: Channel
    ) -> None:
        """On Linux a watcher reads watchdog's inotify instance itself: starting one adds
        two threads (that reader and the liveness timer), not watchdog's Observer chain
        (a reader, an emitter per directory and a dispatcher), and each event is handled on
        the reader's thread, with no hop between threads before it is read."""
        before = set(threading.enumerate())
        with Watcher(channel, backend=Backend.NATIVE) as watcher:
            added = set(threading.enumerate()) - before
            assert len(added) == 2, sorted(t.name for t in added)
            handled_on: list[threading.Thread] = []
            hint = watcher._hint

            def spy(path: str, *, is_directory: bool, deleted: bool) -> None:
                handled_on.append(threading.current_thread())
                hint(path, is_directory=is_directory, deleted=deleted)

            watcher._hint = spy  # type: ignore[method-assign]
            sub, _ = watcher.subscribe()
            with channel.server() as lock:
                req = command(lock)
                channel.file(req)
                assert events(take(sub, 1)) == [("filed", req.id)]
            assert handled_on and set(handled_on) <= added

    @pytest.mark.usefixtures("native_watching")
    def test_an_event_that_fails_to_be_handled_is_found_by_a_rescan(self, channel: Channel) -> None:
        """Handling an event raises (here a bug's RuntimeError): the inotify reader lives on
        (nothing is restarted), a rescan finds what that event was about, and later events
        are handled as ever."""
        with Watcher(channel, backend=Backend.NATIVE, liveness_recheck_s=0.1) as watcher:
            warnings: list[str] = []
            watcher._on_warning = warnings.append
            hint = watcher._hint
            failures = [RuntimeError("a bug")]

            def failing(path: str, *, is_directory: bool, deleted: bool) -> None:
                if failures:
                    raise failures.pop()
                hint(path, is_directory=is_directory, deleted=deleted)

            watcher._hint = failing  # type: ignore[method-assign]
            sub, _ = watcher.subscribe()
            with channel.server() as lock:
                first, second = command(lock), command(lock)
                channel.file(first)
                assert events(take(sub, 1, timeout=5)) == [("filed", first.id)]
                assert not failures
                channel.file(second)
                assert events(take(sub, 1)) == [("filed", second.id)]
                assert watcher._observer is not None and watcher._observer.is_alive()
            assert warnings == []

    def test_falls_back_to_polling_when_inotify_is_exhausted(self, home: Path) -> None:
        """With every inotify instance it may have taken, the watcher polls, says so once,
        and still works. (In a user namespace of its own limit: the suite's user keeps its
        instances.)"""
        code = (
            HOARD_INOTIFY
            + f"""
import sys
sys.path.insert(0, {str(ROOT / "tests")!r})
from pending import Channel, Watcher
from helpers import command, take
warnings = []
channel = Channel.open({str(home)!r})
with Watcher(channel, on_warning=warnings.append, polling_interval_s=0.05) as w:
    for fd in hoard:
        os.close(fd)
    sub, _ = w.subscribe()
    with channel.server() as lock:
        channel.file(command(lock))
        take(sub, 1)
    print(w.backend.value, len(hoard), len(warnings), warnings[0])
"""
        )
        out = subprocess.run(
            own_inotify_limit(sys.executable, "-c", code),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        backend, hoarded, count, message = out.stdout.split(" ", 3)
        assert (backend, count) == ("polling", "1")
        assert int(hoarded) <= OWN_INOTIFY_INSTANCES  # the namespace's ceiling, not the user's
        assert "falling back to polling" in message


@pytest.mark.usefixtures("native_watching")
class TestSubscriberBacklog:
    def test_a_slow_subscriber_loses_the_oldest_and_is_told(self, channel: Channel) -> None:
        """Past its backlog a subscriber drops the oldest, then reads how many it missed;
        the watcher and other subscribers are unaffected."""
        with Watcher(channel, backend=Backend.NATIVE) as watcher:
            slow, _ = watcher.subscribe(backlog=4)
            fast, _ = watcher.subscribe(backlog=1000)
            with channel.server() as lock:
                reqs = [command(lock) for _ in range(10)]
                for req in reqs:
                    channel.file(req)
                got = take(fast, 10)
                assert [t.id for t in got] == [r.id for r in reqs]
                first = slow.get(timeout=5)
                assert first == Missed(count=6)
                assert [t.id for t in take(slow, 4)] == [r.id for r in reqs[6:]]


class TestPublicReader:
    def test_the_watcher_reads_the_channel_through_its_public_methods(self) -> None:
        """No `channel._private` in the watcher's source: it uses read_group, scan, derive
        and request_alive, which any other reader may use too."""
        tree = ast.parse(Path(pending._watch.__file__).read_text())
        private = [
            f"{ast.unparse(node)} (line {node.lineno})"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and "channel" in ast.unparse(node.value)
        ]
        assert private == []
        used = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith("channel")
        }
        assert {"read_group", "scan", "derive", "request_alive"} <= used


class TestFollowingOnly:
    def test_only_followed_ids_are_read_and_reported(self, home: Path) -> None:
        """A watcher told to follow only its channel's own filings reports their transitions
        and never reads (nor reports, nor knows) a request another channel filed."""
        with Channel.open(home) as mine, Channel.open(home) as theirs, mine.server() as lock:
            before = command(lock, text="make before")
            theirs.file(before)  # there at the start: the first scan leaves it unread
            with Watcher(mine, only=mine.filed_ids.__contains__, **FAST) as watcher:
                subscription, known = watcher.subscribe()
                assert known == []
                other = command(lock, text="make other")
                theirs.file(other)
                own = command(lock, text="make own")
                mine.file(own)
                seen = take(subscription, 1)
                assert events(seen) == [("filed", own.id)]
                theirs.answer(other.id, "once", kind=Kind.COMMAND, via="test")
                theirs.answer(own.id, "once", kind=Kind.COMMAND, via="test")
                assert events(take(subscription, 1)) == [("answered", own.id)]
                quiet(subscription)
                assert {s.id for s in watcher.statuses()} == {own.id}


class TestForget:
    def test_a_forgotten_id_is_not_known_read_or_reported(self, home: Path) -> None:
        """An ID forgotten once its follower no longer follows it: gone from what the
        watcher knows and from what it re-checks; its later files (an answer) are neither
        read nor reported, nor read by a rescan. Another ID followed goes on as before."""
        with (
            Channel.open(home) as mine,
            mine.server() as lock,
            Watcher(mine, only=mine.filed_ids.__contains__, **FAST) as watcher,
        ):
            subscription, _ = watcher.subscribe()
            done, still = command(lock, text="make done"), command(lock, text="make still")
            mine.file(done)
            mine.file(still)
            assert sorted(events(take(subscription, 2))) == sorted(
                [("filed", done.id), ("filed", still.id)]
            )
            mine.filed_ids.discard(done.id)
            watcher.forget(done.id)
            assert watcher.status(done.id) is None
            reads = watcher_reads(mine)
            mine.answer(done.id, "once", kind=Kind.COMMAND, via="test")
            mine.answer(still.id, "once", kind=Kind.COMMAND, via="test")
            assert events(take(subscription, 1)) == [("answered", still.id)]
            watcher.rescan()
            quiet(subscription)
            assert {s.id for s in watcher.statuses()} == {still.id}
            assert done.id not in {request_id for request_id, _, _ in reads}

    def test_a_rescan_as_an_id_is_followed_no_more_reports_no_removal(self, home: Path) -> None:
        """A rescan between an ID's leaving *only* and its forget(): the ID is dropped, not
        reported `removed` (its files are still there)."""
        with (
            Channel.open(home) as mine,
            mine.server() as lock,
            Watcher(mine, only=mine.filed_ids.__contains__, **FAST) as watcher,
        ):
            subscription, _ = watcher.subscribe()
            request = command(lock, text="make done")
            mine.file(request)
            assert events(take(subscription, 1)) == [("filed", request.id)]
            mine.filed_ids.discard(request.id)
            watcher.rescan()
            quiet(subscription)
            assert watcher.status(request.id) is None


def watcher_reads(channel: Channel) -> list[tuple[str, object, object]]:
    """The (ID, names, kinds) of each group read the watcher makes from now on: the real
    read_group, recorded (reads made by the test's own thread are left out)."""
    reads: list[tuple[str, object, object]] = []
    read_group = channel.read_group
    me = threading.get_ident()

    def recorded(request_id: str, names: object = None, kinds: object = None) -> object:
        if threading.get_ident() != me:
            reads.append((request_id, names, kinds))
        return read_group(request_id, names, kinds)  # type: ignore[arg-type]

    channel.read_group = recorded  # type: ignore[method-assign]
    return reads


class TestRereadingOnlyWhatChanged:
    def test_an_outcome_beside_a_known_answer_reads_only_the_outcome(
        self, channel: Channel, watcher: Watcher
    ) -> None:
        """An outcome appears for a request whose answer the watcher has read: it reads the
        outcome file alone (the answer is published, never edited), and the settled status
        carries that answer. An answer removed by hand is read (no transition: a request
        never goes back): the answer that then holds the slot is the one the settled status
        carries."""
        reads = watcher_reads(channel)
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            # Its filing heard before it is answered: a poll that finds the request and its
            # answer at once may hand over the answer's creation first (a snapshot's diff is
            # a set), and the request's own, read after, would then fall among the reads
            # below.
            assert take(sub, 1)[0].event is Event.FILED
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            answered = take(sub, 1)[0]
            assert answered.event is Event.ANSWERED
            reads.clear()
            channel.settle(req, Outcome.ANSWERED, by="asker", decision="once")
            settled = take(sub, 1)[0]
            assert settled.event is Event.SETTLED
            assert settled.status.answer == answered.status.answer
            assert reads == [(req.id, (req.id + ".settled.json",), ())]

            other = command(lock, text="make other")
            channel.file(other)
            channel.answer(other.id, "no", kind=Kind.COMMAND, via="cli")
            assert [t.event for t in take(sub, 2)] == [Event.FILED, Event.ANSWERED]
            (channel.path / f"{other.id}.answer.json").unlink()
            quiet(sub)  # no request goes back: its answer removed by hand is no transition
            claimed = channel.claim(other, Outcome.WITHDRAWN, via="asker").answer
            channel.settle(other, Outcome.WITHDRAWN, by="asker")
            ended = take(sub, 1)[-1]
            quiet(sub)
            assert ended.event is Event.WITHDRAWN
            assert ended.status.answer == claimed and ended.status.answer.decision == "withdrawn"

    def test_a_new_request_and_its_answer_read_only_their_own_slots(
        self, channel: Channel, watcher: Watcher
    ) -> None:
        """A request first heard of by its own file's event is read from that file alone (no
        lookups of other names: what else its group holds is published after it, and comes
        as events of its own), and its answer appearing reads the answer file alone; the
        transitions are those the whole group would give."""
        reads = watcher_reads(channel)
        sub, _ = watcher.subscribe()
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
            filed = take(sub, 1)[0]
            assert (filed.event, filed.kind) == (Event.FILED, Kind.FACT)
            assert reads == [(req.id, (req.id + ".fact.json",), (Kind.FACT,))]
            reads.clear()
            channel.answer(req.id, "keep", kind=Kind.FACT, via="cli")
            answered = take(sub, 1)[0]
            assert answered.event is Event.ANSWERED
            assert answered.status.answer.decision == "keep"
            assert reads == [(req.id, (req.id + ".answer.json",), ())]
            channel.settle(req, Outcome.ANSWERED, by="asker", decision="keep")
            assert take(sub, 1)[0].event is Event.SETTLED
            quiet(sub)


@pytest.mark.usefixtures("native_watching")
class TestLivenessBetweenRechecks:
    def test_a_live_server_is_probed_once_and_a_clean_stop_is_seen_at_once(
        self, channel: Channel
    ) -> None:
        """Five requests from one live server: its lock is probed once, not per request
        (the timer re-checks it later). Its lock file removed (a clean stop), its requests
        read stale at once, as does one filed in its name after that."""
        probes: list[str] = []
        request_alive = channel.request_alive

        def spy(request: Request) -> bool:
            probes.append(request.id)
            return request_alive(request)

        channel.request_alive = spy  # type: ignore[method-assign]
        with Watcher(channel, backend=Backend.NATIVE, liveness_recheck_s=30) as watcher:
            sub, _ = watcher.subscribe()
            lock = channel.server().acquire()
            reqs = [command(lock, text=f"make {n}") for n in range(5)]
            for req in reqs:
                channel.file(req)
            assert events(take(sub, 5)) == [("filed", r.id) for r in reqs]
            assert len(probes) == 1
            lock.release()
            assert sorted(events(take(sub, 5))) == sorted(("stale", r.id) for r in reqs)
            late = command(lock, text="make late")
            channel.file(late)
            assert events(take(sub, 2)) == [("filed", late.id), ("stale", late.id)]

    def test_a_crash_is_found_by_the_next_recheck(self, channel: Channel) -> None:
        """A server dies without removing its lock file (no event): a request of its filed
        just before is taken as alive until the timer's next re-check, which finds it
        gone; both its requests then read stale."""
        with Watcher(channel, backend=Backend.NATIVE, liveness_recheck_s=0.2) as watcher:
            sub, _ = watcher.subscribe()
            lock = channel.server().acquire()
            first = command(lock, text="make first")
            channel.file(first)
            assert events(take(sub, 1)) == [("filed", first.id)]
            assert lock._fd is not None
            os.close(lock._fd)  # as the kernel ends a process: the flock goes, the file stays
            lock._fd = None
            second = command(lock, text="make second")
            channel.file(second)
            got = take(sub, 3, timeout=10)
            assert sorted(events(got)) == sorted(
                [("filed", second.id), ("stale", first.id), ("stale", second.id)]
            )


class TestAcceptingSubscriptions:
    def test_only_accepted_transitions_are_queued(self, channel: Channel, watcher: Watcher) -> None:
        """A subscription with *accept* gets only the transitions it accepts; a subscription
        without one, on the same watcher, still gets them all."""
        answered_only, _ = watcher.subscribe(accept=lambda t: t.event is Event.ANSWERED)
        everything, _ = watcher.subscribe()
        with channel.server() as lock:
            reqs = [command(lock, text=f"make {n}") for n in range(3)]
            for req in reqs:
                channel.file(req)
            for req in reqs:
                channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
            assert sorted(events(take(everything, 6))) == sorted(
                [("filed", r.id) for r in reqs] + [("answered", r.id) for r in reqs]
            )
            got = events(take(answered_only, 3))
            assert sorted(got) == sorted(("answered", r.id) for r in reqs)
            quiet(answered_only)


class TestASecondLook:
    def test_a_request_whose_one_read_failed_is_read_again(
        self, channel: Channel, watcher: Watcher
    ) -> None:
        """A request file heard of once and not readable then is looked at again: a nameless
        publication is one event, with no second one (the staged name's removal) to read it
        by, and a watcher whose one read failed used to drop it without a word."""
        failed: list[str] = []
        read_record = channel._read_record

        def once_unreadable(name: str, cls: Any, request_id: str) -> Any:
            if name.endswith(".request.json") and not failed:
                failed.append(name)
                raise Unreadable("a read that failed once (injected)")
            return read_record(name, cls, request_id)

        sub, _ = watcher.subscribe()
        channel._read_record = once_unreadable  # type: ignore[method-assign]
        with channel.server() as lock:
            request = command(lock)
            channel.file(request)
            (transition,) = take(sub, 1)
        assert failed == [f"{request.id}.request.json"]
        assert (transition.event, transition.id) == (Event.FILED, request.id)


class TestRescanRetry:
    def test_a_rescan_that_failed_is_tried_again(
        self, channel: Channel, watcher: Watcher, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A rescan asked for (after lost events, say) that fails (no descriptor left) is
        tried again at each re-check until it is done, not forgotten with what it was for;
        said once, not at every try."""
        tries: list[None] = []
        rescan = watcher.rescan

        def failing_twice() -> None:
            tries.append(None)
            if len(tries) <= 2:
                raise OSError(errno.EMFILE, "Too many open files (injected)")
            rescan()

        watcher.rescan = failing_twice  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="pending.watch"):
            watcher.request_rescan("a test")
            wait_until(lambda: len(tries) >= 3, what="the rescan tried until done")
        said = [r.getMessage() for r in caplog.records if "read the channel again" in r.message]
        assert said == [
            "could not read the channel again ([Errno 24] Too many open files (injected)); retrying"
        ]


class TestObserverRestart:
    def test_a_restart_that_failed_is_tried_again(
        self, channel: Channel, watcher: Watcher, caplog: pytest.LogCaptureFixture
    ) -> None:
        """An observation that stopped and cannot be started again (no inotify watch left)
        is tried again at each re-check until it starts, then what passed meanwhile is
        rescanned; said once while it keeps failing, with no traceback, and said again when
        it fails again later."""
        tries: list[None] = []
        exhausted = threading.Event()
        start_observer = watcher._start_observer

        def failing_while_exhausted() -> Observation:
            tries.append(None)
            if exhausted.is_set():
                raise OSError(errno.ENOSPC, "inotify watch limit reached (injected)")
            return start_observer()

        def said() -> list[str]:
            return [r.getMessage() for r in caplog.records if "file watcher" in r.message]

        failed = (
            "the file watcher stopped and could not be restarted "
            "([Errno 28] inotify watch limit reached (injected)); retrying"
        )
        restarted = "the file watcher stopped; restarted it and rescanned"
        watcher._start_observer = failing_while_exhausted  # type: ignore[method-assign]
        sub, _ = watcher.subscribe()
        with caplog.at_level(logging.WARNING, logger="pending.watch"), channel.server() as lock:
            for round_ in (1, 2):
                exhausted.set()
                tries.clear()
                observer = watcher._observer
                assert observer is not None
                observer.stop()  # as when its thread dies
                wait_until(lambda: len(tries) >= 3, what="the restart tried again")
                req = command(lock, text=f"make {round_}")
                channel.file(req)  # while no observation runs: found by the rescan
                exhausted.clear()
                assert events(take(sub, 1)) == [("filed", req.id)]
                assert watcher._observer is not observer
            assert said() == [failed, restarted, failed, restarted]
        assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []

    def test_a_restart_under_way_as_the_watcher_stops_is_stopped(self, watcher: Watcher) -> None:
        """stop() on another thread takes the stopped observation while the timer starts
        its replacement: the replacement is stopped too, not left running unseen."""
        started: list[Observation] = []
        start_observer = watcher._start_observer

        def racing_stop() -> Observation:
            replacement = start_observer()
            stopping.start()
            wait_until(lambda: watcher._observer is None, what="stop() to take the old one")
            started.append(replacement)
            return replacement

        stopping = threading.Thread(target=watcher.stop)
        watcher._start_observer = racing_stop  # type: ignore[method-assign]
        observer = watcher._observer
        assert observer is not None
        observer.stop()
        wait_until(lambda: started, what="the restart")
        stopping.join(WAIT_S)
        assert not stopping.is_alive()
        assert not started[0].is_alive()


@pytest.mark.usefixtures("native_watching")
class TestRecheckingOnlyWhatIsOpen:
    def test_the_timer_walks_only_requests_that_can_change_without_an_event(
        self, channel: Channel
    ) -> None:
        """The set the timer re-checks holds exactly the filed and handed-over requests,
        through filing, answering, withdrawing and removal; a fact whose server dies moves
        to handed-over and stays in it, a command whose server dies goes stale and leaves."""
        with Watcher(channel, backend=Backend.NATIVE, liveness_recheck_s=0.2) as watcher:
            sub, _ = watcher.subscribe()

            def open_ids() -> set[str]:
                return {
                    s.id for s in watcher.statuses() if s.state in (State.FILED, State.HANDED_OVER)
                }

            lock = channel.server().acquire()
            waiting, answered, withdrawn = (command(lock, text=f"make {n}") for n in range(3))
            kept = fact(lock)
            for req in (waiting, answered, withdrawn, kept):
                channel.file(req)
            take(sub, 4)
            channel.answer(answered.id, "once", kind=Kind.COMMAND, via="cli")
            channel.claim(withdrawn, Outcome.WITHDRAWN, via="asker")
            take(sub, 2)
            assert set(watcher._open) == open_ids() == {waiting.id, kept.id}
            lock.release()  # its command goes stale, its fact is handed over
            got = take(sub, 2)
            assert sorted(events(got)) == sorted([("stale", waiting.id), ("handed-over", kept.id)])
            assert set(watcher._open) == open_ids() == {kept.id}
            for suffix in (".answer.json", ".request.json"):
                (channel.path / f"{answered.id}{suffix}").unlink(missing_ok=True)
            (channel.path / f"{kept.id}.fact.json").unlink()
            wait_until(lambda: watcher.status(kept.id) is None, what="removed")
            assert set(watcher._open) == open_ids() == set()


def pumped_until(watcher: Watcher, done: Callable[[], object], what: str) -> None:
    """Pump *watcher* on this thread until *done*, within a bounded deadline."""
    deadline = time.monotonic() + 30
    while not done():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out pumping for {what}")
        watcher.pump(remaining)


@pytest.mark.usefixtures("native_watching")
class TestPumped:
    def test_events_are_read_by_the_pumping_thread_and_no_reader_starts(
        self, channel: Channel
    ) -> None:
        """Pumped, a watcher starts one thread (its liveness timer), no inotify reader: the
        events wait until the caller pumps, and are handed over, and emitted, on its thread."""
        before = set(threading.enumerate())
        with Watcher(channel, backend=Backend.NATIVE, pumped=True) as watcher:
            added = set(threading.enumerate()) - before
            assert [t.name for t in added] == ["pending-liveness"]
            emitted_on: list[threading.Thread] = []
            sub, _ = watcher.subscribe(
                accept=lambda t: emitted_on.append(threading.current_thread()) or True
            )
            with channel.server() as lock:
                req = command(lock)
                channel.file(req)
                assert sub.get(timeout=0.3) is None  # nobody pumped: nothing handed over
                pumped_until(watcher, lambda: watcher.status(req.id) is not None, "filed")
                assert events([sub.get(timeout=0)]) == [("filed", req.id)]
            assert emitted_on == [threading.current_thread()]

    def test_a_wake_ends_a_pump_and_one_before_it_ends_the_next(self, channel: Channel) -> None:
        """wake() from another thread ends a pump under way with no time limit; a wake that
        comes while nobody pumps ends the next pump at once; a stopped watcher's pump
        returns False."""
        with Watcher(channel, backend=Backend.NATIVE, pumped=True) as watcher:
            timer = threading.Timer(0.2, watcher.wake)
            timer.start()
            try:
                assert watcher.pump(None) is True  # returns: woken
            finally:
                timer.join()
            watcher.wake()
            started = time.monotonic()
            assert watcher.pump(60) is True
            assert time.monotonic() - started < 30  # at once (a wide margin)
        assert watcher.pump(60) is False

    def test_a_stop_from_another_thread_ends_a_pump(self, channel: Channel) -> None:
        """A pump under way with no time limit returns once another thread stops the
        watcher, and every pump after returns False."""
        watcher = Watcher(channel, backend=Backend.NATIVE, pumped=True).start()
        results: list[bool] = []
        pumping = threading.Thread(target=lambda: results.append(watcher.pump(None)))
        pumping.start()
        watcher.stop()
        pumping.join(30)
        assert not pumping.is_alive() and len(results) == 1
        assert watcher.pump(None) is False

    def test_a_transition_the_timer_emits_wakes_the_pump(self, channel: Channel) -> None:
        """A server killed makes no file event: the liveness timer finds it and emits `stale`
        on its own thread, which wakes a pump waiting with no time limit (were it not woken,
        the pumping thread would wait for good, and the test's deadline would pass)."""
        with Watcher(channel, backend=Backend.NATIVE, pumped=True, liveness_recheck_s=0.2) as w:
            sub, _ = w.subscribe()
            child = Asker(channel.home, "command")
            (cmd,) = child.filed()
            got: list[Transition] = []

            def pump_until_stale() -> None:
                while not any(t.event is Event.STALE for t in got) and w.pump(None):
                    got.extend(iter(lambda: sub.get(timeout=0), None))

            pumping = threading.Thread(target=pump_until_stale, daemon=True)
            pumping.start()
            wait_until(lambda: ("filed", cmd) in events(got), what="filed")
            child.kill()
            pumping.join(30)
            assert not pumping.is_alive(), "the pump was not woken by the timer's transition"
            assert events(got) == [("filed", cmd), ("stale", cmd)]

    def test_an_observer_replaced_is_pumped_from_then_on(self, channel: Channel) -> None:
        """The observation stopped under it (as when its directory goes): the timer replaces
        it and wakes the pump, which reads the new one's events from then on."""
        with Watcher(
            channel, backend=Backend.NATIVE, pumped=True, liveness_recheck_s=0.1
        ) as watcher:
            warnings: list[str] = []
            watcher._on_warning = warnings.append
            observer = watcher._observer
            assert observer is not None
            observer.stop()
            with channel.server() as lock:
                req = fact(lock)
                channel.file(req)
                pumped_until(watcher, lambda: watcher.status(req.id) is not None, "the rescan")
                assert watcher._observer is not observer
                assert any("restarted" in w for w in warnings)
                channel.answer(req.id, "drop", kind=Kind.FACT, via="cli")
                pumped_until(
                    watcher,
                    lambda: (s := watcher.status(req.id)) is not None and s.answer is not None,
                    "the answer, read through the new observation",
                )

    def test_a_start_that_fails_leaves_nothing_open(self, channel: Channel) -> None:
        """A start that fails (here its first scan: a bug in *only*) closes what it had
        opened (the wake pipe, the inotify instance) before the error is raised."""

        def broken(request_id: str) -> bool:
            raise RuntimeError("a bug")

        with channel.server() as lock:
            channel.file(command(lock))
            before = set(os.listdir("/proc/self/fd"))
            with pytest.raises(RuntimeError, match="a bug"):
                Watcher(channel, backend=Backend.NATIVE, pumped=True, only=broken).start()
            assert set(os.listdir("/proc/self/fd")) == before
