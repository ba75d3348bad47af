"""pending._threads: the main thread's ending signals, deferred where what is done must not be
cut short (a pumped asker's settle)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from types import FrameType

import pytest

from pending import signals_deferred


@pytest.fixture
def handled() -> Iterator[list[int]]:
    """SIGTERM and SIGHUP handled in Python for the test (noted), as they were after."""
    seen: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)

    previous = {each: signal.signal(each, note) for each in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield seen
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


class TestSignalsDeferred:
    def test_a_ctrl_c_inside_is_raised_once_it_ends(self) -> None:
        """Ctrl-C inside the block does not cut it short: KeyboardInterrupt comes as it ends,
        and the default handler is back."""
        done: list[str] = []
        with pytest.raises(KeyboardInterrupt), signals_deferred():
            signal.raise_signal(signal.SIGINT)
            done.append("the rest of the block")
        assert done == ["the rest of the block"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def test_a_signal_acts_after_in_its_own_handler(self, handled: list[int]) -> None:
        """SIGTERM inside: its handler runs once the block ends, and the handlers are as
        they were."""
        with signals_deferred():
            signal.raise_signal(signal.SIGTERM)
            assert handled == []
        assert handled == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL

    def test_a_second_signal_acts_at_once(self, handled: list[int]) -> None:
        """A second signal while the first waits: the person insists, and both act at once
        (a block stuck on a lock someone holds must not leave the process deaf); nothing is
        raised again after, and the handlers are back from then on."""
        with signals_deferred():
            signal.raise_signal(signal.SIGTERM)
            assert handled == []
            signal.raise_signal(signal.SIGHUP)
            assert handled == [signal.SIGTERM, signal.SIGHUP]
            signal.raise_signal(signal.SIGHUP)
            assert handled == [signal.SIGTERM, signal.SIGHUP, signal.SIGHUP]
        assert handled == [signal.SIGTERM, signal.SIGHUP, signal.SIGHUP]

    def test_a_second_ctrl_c_interrupts_at_once(self) -> None:
        """Two Ctrl-Cs inside: the second raises KeyboardInterrupt where it comes."""
        done: list[str] = []
        with pytest.raises(KeyboardInterrupt), signals_deferred():
            signal.raise_signal(signal.SIGINT)
            done.append("after the first")
            signal.raise_signal(signal.SIGINT)
            done.append("after the second")
        assert done == ["after the first"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def test_a_signal_left_to_its_default_is_left_alone(self) -> None:
        """A signal whose default is in effect (it ends the process: a crash, which the
        channel survives) keeps it inside: only handlers run in Python are deferred."""
        previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            with signals_deferred():
                assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
                assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        finally:
            signal.signal(signal.SIGTERM, previous)

    def test_an_ignored_signal_stays_ignored(self) -> None:
        """A signal the process ignores is left alone: nothing is raised after."""
        previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            with signals_deferred():
                assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
                signal.raise_signal(signal.SIGHUP)
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        finally:
            signal.signal(signal.SIGHUP, previous)

    def test_off_the_main_thread_it_changes_nothing(self, handled: list[int]) -> None:
        """On another thread (where Python never runs a handler) it neither changes the
        handlers nor holds anything back."""
        seen: list[object] = []

        def run() -> None:
            with signals_deferred():
                seen.append(signal.getsignal(signal.SIGTERM))

        before = signal.getsignal(signal.SIGTERM)
        thread = threading.Thread(target=run)
        thread.start()
        thread.join(10)
        assert seen == [before]
