"""The watchdog edge's contract (`pending.observe`), one suite run against every backend:
watchdog's inotify reader read straight, the pumped inotify instance (read here by a thread
of the test's, as a waiter reads it), watchdog's inotify Observer, and its polling observer.

As watchdog's own tests do, each test makes a real change in a real directory and waits (with
a deadline) for the hint it must give. A native backend that cannot start here (every inotify
instance or watch of this user taken) is skipped with the reason, never failed.
"""

from __future__ import annotations

import ast
import errno
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import attrs
import pytest
from helpers import HOARD_INOTIFY, wait_until
from isolation import own_inotify_limit

from pending import Backend, Observation, WatchHints, observe
from pending._edge import native_observation, observer_observation, polling_observation
from pending.testing import inject_overflow

POLL_S = 0.05
# How long each thread started under threads_slow_to_start() waits before its first line: a
# busy machine's scheduler, which runs a new thread late.
SLOW_START_S = 0.05
# Observations opened and closed in a row by a test of giving back: each one's leak would be
# one of this user's inotify instances (128 by default), held to the worker's end.
IN_A_ROW = 3
ROOT = Path(__file__).resolve().parent.parent


@attrs.frozen(kw_only=True)
class Change:
    name: str
    is_directory: bool
    deleted: bool


class Heard:
    """Hints as they arrive, from the backend's thread."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.overflows = 0
        self.lost = 0
        self.errors: list[Exception] = []
        self.threads: set[threading.Thread] = set()
        self._mutex = threading.Lock()

    def change(self, path: str, is_directory: bool, deleted: bool) -> None:
        with self._mutex:
            self.threads.add(threading.current_thread())
            self.changes.append(
                Change(name=Path(path).name, is_directory=is_directory, deleted=deleted)
            )

    def overflow(self) -> None:
        with self._mutex:
            self.overflows += 1

    def gone(self) -> None:
        with self._mutex:
            self.lost += 1

    def error(self, exc: Exception) -> None:
        with self._mutex:
            self.errors.append(exc)

    def hints(self) -> WatchHints:
        return WatchHints(
            on_change=self.change, on_overflow=self.overflow, on_lost=self.gone, on_error=self.error
        )

    def saw(self, name: str, *, deleted: bool = False, is_directory: bool = False) -> bool:
        wanted = Change(name=name, is_directory=is_directory, deleted=deleted)
        with self._mutex:
            return wanted in self.changes


Start = Callable[[list[str], WatchHints], Observation]


class Pumping(Observation):
    """A pumped observation (no thread of its own), read as a waiter reads it: a thread that
    polls its descriptor and hands the events over, until stopped."""

    def __init__(self, paths: list[str], hints: WatchHints) -> None:
        self.pumped = native_observation(paths, hints, pumped=True)
        self.backend = self.pumped.backend
        self.hints = hints
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._pump, name="test-pump", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        fd = self.pumped.fileno()
        assert fd is not None, "a pumped observation has a descriptor to poll"
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        while True:
            ready = [f for f, _ in poller.poll()]
            if self._stop_r in ready:
                return
            self.pumped.pump_ready()

    def healthy(self) -> bool:
        return self.pumped.healthy()

    def is_alive(self) -> bool:
        return self.pumped.is_alive()

    def stop(self) -> None:
        os.write(self._stop_w, b"!")
        self._thread.join()
        self.pumped.stop()
        os.close(self._stop_r)
        os.close(self._stop_w)


BACKENDS: dict[str, Start] = {
    "inotify-reader": native_observation,
    "inotify-pumped": Pumping,
    "inotify-observer": observer_observation,
    "polling": lambda paths, hints: polling_observation(paths, hints, POLL_S),
}


@pytest.fixture(params=sorted(BACKENDS))
def start(request: pytest.FixtureRequest) -> Start:
    name: str = request.param
    if name.startswith("inotify") and not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux's")

    def started(paths: list[str], hints: WatchHints) -> Observation:
        try:
            return BACKENDS[name](paths, hints)
        except OSError as exc:  # inotify exhausted by other processes: not this code's fault
            pytest.skip(f"native watching is unavailable here: {exc.strerror or exc}")

    return started


@pytest.fixture
def watched(tmp_path: Path) -> Path:
    directory = tmp_path / "watched"
    directory.mkdir()
    return directory


@pytest.fixture
def heard() -> Heard:
    return Heard()


@pytest.fixture
def observation(start: Start, watched: Path, heard: Heard) -> Iterator[Observation]:
    running = start([str(watched)], heard.hints())
    try:
        yield running
    finally:
        running.stop()


class TestObservation:
    def test_a_file_created_is_seen(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """A new file's name is told, as not deleted."""
        (watched / "a.json").write_text("{}")
        wait_until(lambda: heard.saw("a.json"), what="the creation")

    def test_a_file_modified_is_seen(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """Appending to a file already there is told (a log follower reads on it)."""
        path = watched / "log.jsonl"
        path.write_text("one\n")
        wait_until(lambda: heard.saw("log.jsonl"), what="the creation")
        with heard._mutex:
            heard.changes.clear()
        os.utime(path, (1, 1))  # polling compares mtimes: make the append's stand out
        with path.open("a") as stream:
            stream.write("two\n")
        wait_until(lambda: heard.saw("log.jsonl"), what="the append")

    def test_a_move_is_seen_at_both_names(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """A rename within the directory tells the old name as gone and the new one as
        there."""
        (watched / "old.json").write_text("{}")
        wait_until(lambda: heard.saw("old.json"), what="the creation")
        os.rename(watched / "old.json", watched / "new.json")
        wait_until(lambda: heard.saw("old.json", deleted=True), what="the old name")
        wait_until(lambda: heard.saw("new.json"), what="the new name")

    def test_a_file_deleted_is_seen(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """Removing a file tells its name as deleted."""
        (watched / "a.json").write_text("{}")
        wait_until(lambda: heard.saw("a.json"), what="the creation")
        (watched / "a.json").unlink()
        wait_until(lambda: heard.saw("a.json", deleted=True), what="the deletion")

    def test_a_directory_made_is_seen_as_one(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """A subdirectory made in it is told as a directory."""
        (watched / "pending").mkdir()
        wait_until(lambda: heard.saw("pending", is_directory=True), what="the directory")

    def test_nothing_below_it_is_seen(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """Non-recursive: a file staged in a subdirectory makes no hint (a publication is
        one event), while one beside it does."""
        staging = watched / ".tmp"
        staging.mkdir()
        wait_until(lambda: heard.saw(".tmp", is_directory=True), what="the directory")
        (staging / "staged.json").write_text("{}")
        (watched / "after.json").write_text("{}")
        wait_until(lambda: heard.saw("after.json"), what="the file beside it")
        assert not any(c.name == "staged.json" for c in heard.changes)

    def test_the_directory_removed_is_seen(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """The watched directory itself removed: on_lost is told, and the observation says
        it is no longer healthy (its user restarts it, or ends)."""
        assert observation.healthy()
        watched.rmdir()
        wait_until(lambda: heard.lost >= 1, what="the directory's removal")
        wait_until(lambda: not observation.healthy(), what="unhealthy")

    def test_an_overflow_is_signalled(
        self, observation: Observation, watched: Path, heard: Heard
    ) -> None:
        """A kernel queue overflow, delivered to the backend's inotify instance, reaches
        on_overflow through the backend's own overflow path (no log message is read); the
        observation stays healthy and later events still come."""
        if observation.backend is Backend.POLLING:
            with pytest.raises(RuntimeError):
                inject_overflow(observation)
            pytest.skip("a polling snapshot cannot overflow")
        inject_overflow(observation.pumped if isinstance(observation, Pumping) else observation)
        wait_until(lambda: heard.overflows >= 1, what="the overflow")
        assert observation.healthy()
        (watched / "later.json").write_text("{}")
        wait_until(lambda: heard.saw("later.json"), what="an event after it")

    def test_a_hint_that_raises_is_told_and_the_backend_lives_on(
        self, start: Start, watched: Path, heard: Heard
    ) -> None:
        """A hint raising (a failed read, a bug) goes to on_error; the backend's thread
        lives on and later events are told as ever."""
        failures = [RuntimeError("a bug")]

        def failing(path: str, is_directory: bool, deleted: bool) -> None:
            if failures:
                raise failures.pop()
            heard.change(path, is_directory, deleted)

        running = start([str(watched)], heard.hints()._replace(on_change=failing))
        try:
            (watched / "first.json").write_text("{}")
            wait_until(lambda: heard.errors, what="the error")
            (watched / "second.json").write_text("{}")
            wait_until(lambda: heard.saw("second.json"), what="a later event")
            assert running.healthy()
        finally:
            running.stop()

    def test_stop_is_clean(self, start: Start, watched: Path, heard: Heard) -> None:
        """stop() ends every thread the observation started before it returns, so no hint
        comes after it; its own removal of the watches is no loss."""
        before = set(threading.enumerate())
        running = start([str(watched)], heard.hints())
        (watched / "a.json").write_text("{}")
        wait_until(lambda: heard.saw("a.json"), what="the creation")
        running.stop()
        assert not running.is_alive()
        assert heard.threads, "hints come on the backend's own thread"
        assert not [t for t in set(threading.enumerate()) - before if t.is_alive()]
        assert heard.lost == 0 and heard.errors == []

    def test_several_directories_at_once(self, start: Start, tmp_path: Path, heard: Heard) -> None:
        """One observation of two directories tells each one's changes with its own path."""
        first, second = tmp_path / "one", tmp_path / "two"
        first.mkdir()
        second.mkdir()
        paths: list[str] = []
        hints = heard.hints()._replace(on_change=lambda path, d, gone: paths.append(path))
        running = start([str(first), str(second)], hints)
        try:
            (first / "a.json").write_text("{}")
            (second / "b.json").write_text("{}")
            wait_until(
                lambda: {str(first / "a.json"), str(second / "b.json")} <= set(paths),
                what="both",
            )
        finally:
            running.stop()


class TestPumpedObservation:
    def test_it_starts_no_thread_and_hands_events_over_to_its_caller(
        self, watched: Path, heard: Heard
    ) -> None:
        """Pumped, an inotify observation starts no thread: nothing is handed over until its
        descriptor is readable and the caller pumps, and then on the caller's thread; a pump
        with nothing waiting returns at once (it never blocks)."""
        before = set(threading.enumerate())
        try:
            running = native_observation([str(watched)], heard.hints(), pumped=True)
        except OSError as exc:  # inotify exhausted by other processes: not this code's fault
            pytest.skip(f"native watching is unavailable here: {exc.strerror or exc}")
        try:
            assert set(threading.enumerate()) == before
            fd = running.fileno()
            assert fd is not None
            running.pump_ready()  # nothing there: returns
            (watched / "a.json").write_text("{}")
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            assert poller.poll(10_000), "the descriptor turns readable"
            assert heard.changes == []  # nothing until it is pumped
            running.pump_ready()
            assert heard.saw("a.json") and heard.threads == {threading.current_thread()}
        finally:
            running.stop()
        assert not running.is_alive()
        running.pump_ready()  # stopped: nothing read, nothing raised

    def test_a_name_is_hinted_once_for_all_it_went_through(
        self, watched: Path, tmp_path: Path, heard: Heard
    ) -> None:
        """What came for one name since the last pump is one hint (it says only: re-read
        it): a file written and its link count changed (as a publication's staged name
        removed does) is one change; one made and deleted is one deletion."""
        try:
            running = native_observation([str(watched)], heard.hints(), pumped=True)
        except OSError as exc:  # inotify exhausted by other processes: not this code's fault
            pytest.skip(f"native watching is unavailable here: {exc.strerror or exc}")
        try:
            (watched / "a.json").write_text("{}")  # created, written, closed
            os.link(watched / "a.json", tmp_path / "staged")
            os.unlink(tmp_path / "staged")  # its link count changed: IN_ATTRIB
            (watched / "b.json").write_text("{}")
            (watched / "b.json").unlink()
            running.pump_ready()
            assert heard.changes == [
                Change(name="a.json", is_directory=False, deleted=False),
                Change(name="b.json", is_directory=False, deleted=True),
            ]
        finally:
            running.stop()

    def test_a_threaded_backend_has_nothing_to_pump(self, watched: Path, heard: Heard) -> None:
        """The polling observer keeps its threads when asked for a pumped observation: it has
        no descriptor to poll, and pumping it is nothing."""
        running = observe([str(watched)], heard.hints(), backend=Backend.POLLING, pumped=True)
        try:
            assert running.fileno() is None
            running.pump_ready()
            (watched / "a.json").write_text("{}")
            wait_until(lambda: heard.saw("a.json"), what="the polling thread's hint")
        finally:
            running.stop()


INOTIFY_BACKENDS = sorted(name for name in BACKENDS if name.startswith("inotify"))


def _inotify_instances() -> int:
    """The inotify instances this process holds (its descriptors on `anon_inode:inotify`)."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            held += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:  # the listing's own descriptor, closed since
            continue
    return held


@contextmanager
def threads_slow_to_start() -> Iterator[None]:
    """Every thread started inside waits SLOW_START_S before running its first line, as a
    thread does on a busy machine: threading's trace hook runs first in each new thread,
    sleeps, and removes itself from that thread."""

    def late(frame: FrameType, event: str, arg: Any) -> None:
        sys.settrace(None)
        time.sleep(SLOW_START_S)

    threading.settrace(late)
    try:
        yield
    finally:
        threading.settrace(None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
@pytest.mark.parametrize("name", INOTIFY_BACKENDS)
class TestGivingBackTheInstance:
    """An inotify observation's instance counts against the user's
    `fs.inotify.max_user_instances` (128 by default) until it is closed: stop() closes it
    before it returns, however soon after the start it comes."""

    def test_stopped_before_its_thread_ran_it_holds_none(
        self, name: str, watched: Path, heard: Heard
    ) -> None:
        """Observations opened and stopped at once, their threads scheduled late (a busy
        machine), leave the process holding no instance once stop() returns; each held one
        while it ran (what is counted is what an observation holds). watchdog's reader
        stopped before its thread's first read left its instance open until the process
        ended."""
        before = _inotify_instances()
        with threads_slow_to_start():
            for _ in range(IN_A_ROW):
                try:
                    running = BACKENDS[name]([str(watched)], heard.hints())
                except OSError as exc:  # inotify exhausted by other processes
                    pytest.skip(f"native watching is unavailable here: {exc.strerror or exc}")
                assert _inotify_instances() == before + 1, "a running observation holds one"
                running.stop()
                assert _inotify_instances() == before, "stopped, it holds none"

    def test_a_start_that_fails_holds_none(self, name: str, tmp_path: Path, heard: Heard) -> None:
        """An observation of a directory that is not there raises, and leaves no instance
        held (its reader, started before the watch failed, stopped at once)."""
        before = _inotify_instances()
        with threads_slow_to_start():
            for _ in range(IN_A_ROW):
                with pytest.raises(OSError) as raised:
                    BACKENDS[name]([str(tmp_path / "missing")], heard.hints())
                if raised.value.errno != errno.ENOENT:  # inotify exhausted by other processes
                    pytest.skip(f"native watching is unavailable here: {raised.value}")
                assert _inotify_instances() == before


class TestChoosing:
    def test_auto_is_native_where_it_can_start(self, watched: Path, heard: Heard) -> None:
        """observe() picks the native backend by default, and polling when asked."""
        try:
            native = observe([str(watched)], heard.hints())
        except OSError as exc:  # pragma: no cover - only where inotify is exhausted
            pytest.skip(f"native watching is unavailable here: {exc.strerror or exc}")
        try:
            assert native.backend in (Backend.NATIVE, Backend.POLLING)
            if native.backend is Backend.POLLING:
                pytest.skip("native watching is unavailable here")
        finally:
            native.stop()
        polling = observe([str(watched)], heard.hints(), backend=Backend.POLLING)
        try:
            assert polling.backend is Backend.POLLING
        finally:
            polling.stop()

    def test_falls_back_to_polling_with_the_reason(self, watched: Path) -> None:
        """With every inotify instance it may have taken, observe() polls and says why,
        once; asked for native only, it raises instead. (In a user namespace of its own
        limit: the suite's user keeps its instances.)"""
        code = (
            HOARD_INOTIFY
            + f"""
from pending import Backend, WatchHints, observe
said = []
seen = []
running = observe([{str(watched)!r}], WatchHints(on_change=lambda *a: seen.append(a)),
                  on_fallback=said.append, polling_interval_s=0.05)
try:
    observe([{str(watched)!r}], WatchHints(on_change=print), backend=Backend.NATIVE)
    raised = "no"
except OSError:
    raised = "yes"
print(running.backend.value, raised, len(said), said[0])
running.stop()
"""
        )
        out = subprocess.run(
            own_inotify_limit(sys.executable, "-c", code),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        backend, raised, count, message = out.stdout.split(" ", 3)
        assert (backend, raised, count) == ("polling", "yes", "1")
        assert "native file watching is unavailable" in message
        assert "falling back to polling every 0.05s" in message


def _imports_watchdog(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "watchdog" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "watchdog":
            return True
    return False


class TestTheEdge:
    def test_only_the_edge_imports_watchdog(self) -> None:
        """No module of pending/ but the edge, and none of wisp/, imports watchdog, not even
        inside a function: every watch goes through pending.observe."""
        found = [
            str(path.relative_to(ROOT))
            for package in ("pending", "wisp")
            for path in sorted((ROOT / package).rglob("*.py"))
            if _imports_watchdog(path)
        ]
        assert found == ["pending/_edge.py"]
