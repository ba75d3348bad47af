"""The TUI's terminal driver: textual's own, made safe for a terminal that hangs up under it.

textual writes its frames from a writer thread through a queue of at most 30 writes
(`textual.drivers._writer_thread`). When the terminal goes away — its window closed, tmux's
server killed, ssh dropped — a write fails (EIO), the exception ends that thread, and the
queue is read by nobody: once 30 writes wait, the next `put` blocks for ever. The SIGHUP that
came with the hang-up ends the TUI as `q` does, and textual's shutdown writes the sequences
that restore the terminal and then waits for the writer to finish: the TUI hung there, its
relays already stopped, until killed (seen under load: a TUI still running 20 s after its
terminal closed). Here a write or flush to a terminal that is gone is dropped, so the writer
never dies of it and the TUI ends.
"""

from __future__ import annotations

from typing import IO, Any


class HungUpSafe:
    """A text stream that drops writes once the terminal behind it is gone (an OSError on a
    write or a flush: EIO after a hang-up, EPIPE), instead of raising in the writer thread."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.gone: OSError | None = None  # why writes are dropped, once they are

    def write(self, text: str) -> int:
        if self.gone is None:
            try:
                return self._stream.write(text)
            except OSError as exc:
                self.gone = exc
        return len(text)

    def flush(self) -> None:
        if self.gone is None:
            try:
                self._stream.flush()
            except OSError as exc:
                self.gone = exc

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def hang_up_safe(driver_class: type[Any]) -> type[Any]:
    """*driver_class* with its output stream (textual's drivers keep it as ``_file``) made
    :class:`HungUpSafe`; a driver without one is returned as it is."""

    class HangUpSafeDriver(driver_class):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            stream = getattr(self, "_file", None)
            if stream is not None:
                self._file = HungUpSafe(stream)

    HangUpSafeDriver.__name__ = HangUpSafeDriver.__qualname__ = f"HangUpSafe{driver_class.__name__}"
    return HangUpSafeDriver
