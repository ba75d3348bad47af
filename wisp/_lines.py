"""Splitting a byte stream into lines, holding at most a cap of any one line: a longer line
is counted and skipped, never read into memory. The relay's and `wisp mcp`'s stdin both read
this way (each in time linear in what it reads)."""

from __future__ import annotations

from typing import NamedTuple

# A line longer than this is skipped unread: nothing either protocol sends comes near it, and
# no reader must hold its peer's megabytes.
LINE_MAX_BYTES = 1 << 20


class TooLong(NamedTuple):
    """Stands in the stream where a line over the splitter's limit was skipped."""

    size: int  # bytes skipped (at least the limit + 1)


class LineSplitter:
    """Bytes in, lines out, holding at most :data:`LINE_MAX_BYTES` of any one line: the rest
    of a longer line is counted and dropped up to its newline, never buffered. Blank lines
    and a trailing CR are dropped."""

    def __init__(self, limit: int = LINE_MAX_BYTES) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._skipping = 0  # >0: inside a line that was too long, this many bytes so far

    def feed(self, data: bytes) -> list[bytes | TooLong]:
        out: list[bytes | TooLong] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if self._skipping:
                self._skipping += len(piece)
            else:
                self._buffer += piece
                if len(self._buffer) > self._limit:
                    self._skipping = len(self._buffer)
                    self._buffer.clear()
            if end < 0:
                break
            if self._skipping:
                out.append(TooLong(size=self._skipping))
                self._skipping = 0
            else:
                line = bytes(self._buffer).rstrip(b"\r")
                self._buffer.clear()
                if line.strip():
                    out.append(line)
            start = end + 1
        return out

    def end(self) -> list[bytes | TooLong]:
        """At end of input: a last line without its newline still counts."""
        return self.feed(b"\n") if self._buffer or self._skipping else []
