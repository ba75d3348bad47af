"""The TUI's driver when its terminal hangs up: textual's own writer thread, on a real
pseudo-terminal whose far side has closed, never hangs the TUI as it ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import threading
from collections.abc import Callable, Iterator
from typing import IO

import pytest
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread
from textual.drivers.linux_driver import LinuxDriver

from wisp.tui._app import WispTui
from wisp.tui._driver import HungUpSafe

BOUND_S = 10.0  # far beyond what a stop takes; a hung one never returns


@pytest.fixture
def hung_up() -> Iterator[IO[str]]:
    """A text stream on a pseudo-terminal whose terminal side is gone (its master closed):
    what the TUI writes to once its window, tmux server or ssh connection has gone."""
    master, slave = pty.openpty()
    stream = open(slave, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
    os.close(master)
    yield stream
    with contextlib.suppress(OSError):  # its buffer cannot be flushed: the terminal is gone
        stream.close()


def finishes(work: Callable[[], None]) -> bool:
    """Whether *work* returns within BOUND_S (run in a daemon thread a hang cannot hold)."""
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(BOUND_S)


def frames_then_stop(writer: WriterThread) -> Callable[[], None]:
    """What the TUI does as it ends: more writes than the writer's queue holds (a frame, the
    sequences that restore the terminal), then the stop that waits for the writer."""

    def work() -> None:
        for _ in range(3 * MAX_QUEUED_WRITES):
            writer.write("\x1b[2J" + "x" * 200)
        writer.stop()

    return work


class TestHungUpTerminal:
    def test_the_writer_ends_when_the_terminal_is_gone(self, hung_up: IO[str]) -> None:
        """Writes to a terminal that hung up are dropped: the writer thread lives on, the
        stop returns, and the stream says why it stopped writing (EIO). Straight on the
        stream, textual's writer dies of the first EIO and the next write past its queue
        blocks for ever: the TUI hung as it ended."""
        safe = HungUpSafe(hung_up)
        writer = WriterThread(safe)
        writer.start()
        assert finishes(frames_then_stop(writer))
        assert safe.gone is not None

    def test_the_tuis_driver_writes_through_it(self) -> None:
        """`wisp tui`'s driver is textual's own for this platform, its output made safe."""
        driver_class = WispTui().get_driver_class()
        assert issubclass(driver_class, LinuxDriver)

        async def made() -> object:  # a driver is made on the app's running loop
            return driver_class(WispTui(), debug=False, mouse=False, size=(80, 24))._file

        assert isinstance(asyncio.run(made()), HungUpSafe)
