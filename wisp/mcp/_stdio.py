"""The stdio edge `wisp mcp` owns: the client's lines read and checked before the SDK parses
them, and the protocol written whole to a private duplicate of stdout.

The SDK drops a line it cannot parse without a word, so the client's call hangs until its own
timeout. Here every line that is not a JSON-RPC message gets the error JSON-RPC 2.0 says:
`-32700` (parse error: not UTF-8, not JSON) or `-32600` (invalid request: not a JSON-RPC
message, or a line over :data:`~wisp._lines.LINE_MAX_BYTES`, skipped unread), with `id: null`
unless the message's id could be read. A lone UTF-16 surrogate (valid JSON, not text, which
the SDK cannot parse) is answered too: in a tool's arguments as that tool's error, elsewhere
as `-32602` (invalid params).

Reading is linear in what is read (:class:`~wisp._lines.LineSplitter`), and waits for
readability on the event loop where stdin can be waited on (a pipe, a socket, a terminal), so
a stop (SIGTERM, SIGINT) is not held up by a blocked read; anything else (a file, /dev/null)
is read on a worker thread.
"""

from __future__ import annotations

import collections
import fcntl
import json
import os
import selectors
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types

from wisp._lines import LINE_MAX_BYTES, LineSplitter, TooLong
from wisp.mcp._args import surrogate_at, surrogate_refused
from wisp.mcp._results import refusal

READ_CHUNK_BYTES = 64 * 1024
PARSE_ERROR = -32700  # JSON-RPC 2.0: invalid JSON was received
INVALID_REQUEST = -32600  # JSON-RPC 2.0: the JSON sent is not a valid request object
INVALID_PARAMS = -32602
FIRST_PRIVATE_FD = 3  # the protocol's duplicate of stdout lands above the standard three


@contextmanager
def claimed_stdout() -> Iterator[int]:
    """A private duplicate of stdout for the protocol, with stdout itself pointed at stderr
    meanwhile, so nothing else (a library's print, a child's output) lands on the wire;
    restored on leaving. Where descriptors cannot be moved, stdout itself."""
    try:
        private = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, FIRST_PRIVATE_FD)
    except OSError:
        yield 1
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(private)
        yield 1
        return
    try:
        yield private
    finally:
        os.dup2(private, 1)
        os.close(private)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Output:
    """The protocol's stdout: each message one whole line, written under one lock (the SDK's
    writer and this edge's replies share it). *after_first* is called once the first
    message is out (`wisp mcp` starts wisp then: :mod:`wisp.mcp._start`)."""

    def __init__(self, fd: int, *, after_first: Callable[[], None] | None = None) -> None:
        self.fd = fd
        self._lock = anyio.Lock()
        self._after_first = after_first

    async def write(self, text: str) -> None:
        data = text.encode("utf-8", errors="backslashreplace")
        async with self._lock:
            await anyio.to_thread.run_sync(_write_all, self.fd, data)
        if self._after_first is not None:
            after_first, self._after_first = self._after_first, None
            after_first()

    async def flush(self) -> None:
        """Nothing is held: each write reaches the descriptor whole."""

    async def send(self, message: dict[str, Any]) -> None:
        await self.write(json.dumps(message, ensure_ascii=True) + "\n")


def _waitable(fd: int) -> bool:
    """Whether the event loop can wait for *fd* to be readable (epoll refuses regular files
    and /dev/null)."""
    try:
        with selectors.DefaultSelector() as probe:
            probe.register(fd, selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


def _readable_now(fd: int) -> bool:
    """Whether a read of *fd* would return at once (data, or the end of input): one look,
    without waiting."""
    try:
        with selectors.DefaultSelector() as probe:
            probe.register(fd, selectors.EVENT_READ)
            return bool(probe.select(0))
    except (OSError, ValueError):
        return True


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _id_of(message: Any) -> int | str | None:
    ident = message.get("id") if isinstance(message, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        return None
    return ident if surrogate_at(ident) is None else None


def _surrogate_reply(message: dict[str, Any], ident: int | str) -> dict[str, Any]:
    """The reply to a request holding a lone surrogate: a tool error when it is in a tool's
    arguments (as any argument the tool cannot take), else invalid params."""
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if message.get("method") == "tools/call" and isinstance(arguments, dict):
        where = surrogate_at(arguments)
        if where is not None:
            result = refusal(surrogate_refused(where), [])
            dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            return {"jsonrpc": "2.0", "id": ident, "result": dumped}
    return _error(ident, INVALID_PARAMS, surrogate_refused(surrogate_at(message) or ("a string",)))


def checked(line: bytes | TooLong) -> tuple[str | None, dict[str, Any] | None]:
    """A line from the client: (its text, for the SDK) if it is a JSON-RPC message, else
    (None, the reply it gets, or None where there is nobody to answer)."""
    if isinstance(line, TooLong):
        return None, _error(
            None,
            INVALID_REQUEST,
            f"a line of {line.size} bytes was skipped unread: a message is at most "
            f"{LINE_MAX_BYTES} bytes. Send less in one message.",
        )
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, _error(None, PARSE_ERROR, f"the line is not UTF-8 (byte {exc.start} of it).")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        said = f"{exc.msg} at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, _error(
            None, PARSE_ERROR, f"the line is not JSON ({said or 'nested too deep'})."
        )
    ident = _id_of(message)
    if isinstance(message, dict) and surrogate_at(message) is not None:
        # A notification or a response with one has nobody to answer; a request does.
        return None, (_surrogate_reply(message, ident) if ident is not None else None)
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:
        return None, _error(
            ident,
            INVALID_REQUEST,
            'the line is JSON but not a JSON-RPC 2.0 message: send an object with "jsonrpc": '
            '"2.0" and a "method" (a request or notification) or a "result" or "error" (a '
            "response); batches are not served.",
        )
    return text, None


class StdinLines:
    """The client's lines on stdin, checked (:func:`checked`): the good ones for the SDK, the
    rest answered on *output* here. *if_silent* is called if the client has sent nothing
    yet when the server first listens (`wisp mcp` starts wisp then, rather than wait for a
    first answer: :mod:`wisp.mcp._start`)."""

    def __init__(
        self, fd: int, output: Output, *, if_silent: Callable[[], None] | None = None
    ) -> None:
        self.fd = fd
        self.output = output
        self._waitable = _waitable(fd)
        self._splitter = LineSplitter()
        self._lines: collections.deque[bytes | TooLong] = collections.deque()
        self._ended = False
        self._if_silent = if_silent

    def __aiter__(self) -> StdinLines:
        return self

    async def _read(self) -> bytes:
        if self._if_silent is not None:
            if_silent, self._if_silent = self._if_silent, None
            if self._waitable and not _readable_now(self.fd):
                if_silent()
        try:
            if self._waitable:
                await anyio.wait_readable(self.fd)
                return os.read(self.fd, READ_CHUNK_BYTES)  # readable: returns what is there
            return await anyio.to_thread.run_sync(
                os.read, self.fd, READ_CHUNK_BYTES, abandon_on_cancel=True
            )
        except OSError:  # a closed or hung-up stdin ends the input as EOF does
            return b""

    async def __anext__(self) -> str:
        while True:
            while self._lines:
                text, reply = checked(self._lines.popleft())
                if text is not None:
                    return text + "\n"
                if reply is not None:
                    await self.output.send(reply)
            if self._ended:
                raise StopAsyncIteration
            chunk = await self._read()
            if chunk:
                self._lines.extend(self._splitter.feed(chunk))
            else:
                self._ended = True
                self._lines.extend(self._splitter.end())
