"""One relay the TUI speaks to: a child process (`wisp relay`, or `ssh HOST wisp relay`) with
JSON lines on its stdin and stdout, read on the TUI's own asyncio loop.

The child is started from an argv list, never through a shell; its stderr is kept (the last
lines) to say why it ended. Lines are split with the relay's own :class:`LineSplitter`, so a
line over 1 MiB is skipped, never held.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import sys
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs

from wisp.relay._protocol import LineSplitter, TooLong

READ_CHUNK = 64 * 1024
STDERR_LINES = 20  # the last lines of a relay's stderr, kept to say why it ended
STOP_WAIT_S = 3.0  # after closing its stdin, how long a relay is given to end before SIGTERM
KILL_WAIT_S = 2.0

# The relay on another machine. BatchMode: ssh must never prompt for a password on the TUI's
# screen (it would fight the TUI for the terminal); keys or an agent are needed. `--` ends
# ssh's options, so a host can never be read as one.
SSH_RELAY = "ssh -T -o BatchMode=yes -- {host} wisp relay"

# A host name as ssh takes it: user@host, a name, an address; never an option.
_HOST_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@%:\[\]-]{0,252}")


class LinkError(Exception):
    """A relay cannot be started as asked; the message says why and what to do."""


def check_host(host: str) -> str:
    if not _HOST_RE.fullmatch(host):
        raise LinkError(
            f"{host!r} is not a host name ssh takes (letters, digits, and . _ @ % : - [ ], "
            "not starting with -)."
        )
    return host


def local_argv() -> list[str]:
    """This machine's relay: the same wisp, by the interpreter running the TUI."""
    return [sys.executable, "-m", "wisp", "relay"]


def host_argv(template: str, host: str) -> list[str]:
    """*host*'s relay: *template* split as a shell would split it (but run without one),
    `{host}` in any word replaced by the host."""
    check_host(host)
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise LinkError(f"--relay-command cannot be split into words: {exc}.") from None
    if not words:
        raise LinkError("--relay-command is empty: give the command that starts a relay.")
    return [word.replace("{host}", host) for word in words]


@attrs.define
class Link:
    """One relay child and its stream of lines."""

    host: str
    argv: list[str]
    env: Mapping[str, str] | None = None
    process: asyncio.subprocess.Process | None = None
    stderr_tail: deque[str] = attrs.field(factory=lambda: deque(maxlen=STDERR_LINES))
    _stderr_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(self.env) if self.env is not None else None,
                # Its own session: the terminal's signals (and the TUI's raw mode) are not its.
                start_new_session=True,
            )
        except OSError as exc:
            raise LinkError(
                f"cannot start {shlex.join(self.argv)}: {exc.strerror or exc}"
            ) from None
        self._stderr_task = asyncio.ensure_future(self._read_stderr())

    async def send(self, line: Mapping[str, Any]) -> bool:
        """Write one line; False if the relay has stopped taking them."""
        process = self.process
        if process is None or process.stdin is None or process.stdin.is_closing():
            return False
        data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            process.stdin.write(data)
            await process.stdin.drain()
        except (ConnectionError, OSError):
            return False
        return True

    async def lines(self) -> AsyncIterator[bytes | TooLong]:
        """The relay's stdout, line by line, until it closes."""
        process = self.process
        assert process is not None and process.stdout is not None
        splitter = LineSplitter()
        while True:
            chunk = await process.stdout.read(READ_CHUNK)
            pieces = splitter.feed(chunk) if chunk else splitter.end()
            for piece in pieces:
                yield piece
            if not chunk:
                return

    async def _read_stderr(self) -> None:
        process = self.process
        assert process is not None and process.stderr is not None
        splitter = LineSplitter(limit=READ_CHUNK)
        while True:
            chunk = await process.stderr.read(READ_CHUNK)
            for piece in splitter.feed(chunk) if chunk else splitter.end():
                if isinstance(piece, bytes):
                    self.stderr_tail.append(piece.decode("utf-8", "replace"))
            if not chunk:
                return

    async def ended(self) -> tuple[int | None, str]:
        """Wait for the relay to exit: its exit status and the last line it said on stderr."""
        process = self.process
        if process is None:
            return None, ""
        code = await process.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
        return code, self.stderr_tail[-1] if self.stderr_tail else ""

    async def stop(self) -> None:
        """End the relay: close its stdin (a clean stop), then SIGTERM, then SIGKILL."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        for signal_it, wait_s in ((None, STOP_WAIT_S), (process.terminate, KILL_WAIT_S)):
            if signal_it is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal_it()
            try:
                await asyncio.wait_for(process.wait(), wait_s)
                return
            except TimeoutError:
                continue
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def describe_exit(code: int | None, last: str) -> str:
    if code is None:
        how = "did not start"
    elif code < 0:
        how = f"was killed by signal {-code}"
    else:
        how = f"exited {code}"
    return how + (f": {last}" if last else "")


def relay_env() -> dict[str, str]:
    """The environment a local relay runs in: the TUI's own."""
    return dict(os.environ)
