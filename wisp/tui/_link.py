"""One relay the TUI speaks to: a child process (`wisp relay`, or `ssh HOST wisp relay`) with
JSON lines on its stdin and stdout, read on the TUI's own asyncio loop. The lines are records
of :mod:`wisp.relay.protocol`, encoded and decoded by it alone.

The child is started from an argv list, never through a shell; its stderr is kept (the last
lines) to say why it ended. Lines are split with the protocol's :class:`LineSplitter`, so a
line over 1 MiB is skipped, never held.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Mapping

import attrs

from pending import Via
from wisp import SAFE_CWD, child_env, python_module
from wisp.relay.hosts import LOCAL
from wisp.relay.protocol import (
    Effect,
    FrontEndLine,
    Hello,
    LineSplitter,
    TooLong,
    effect_kinds,
    encode,
)

READ_CHUNK = 64 * 1024
STDERR_LINES = 20  # the last lines of a relay's stderr, kept to say why it ended
STOP_WAIT_S = 3.0  # after closing its stdin, how long a relay is given to end before SIGTERM
KILL_WAIT_S = 2.0
END_OF_INPUT = b"\x04"  # Ctrl-D: what ends a relay's input, on a pipe or a raw terminal

# The relay on another machine. -tt: the remote relay gets a terminal (sshd's pty), so it
# takes answers — a relay without one refuses them (the speed bump against an agent's shell
# tool, docs/relay.md); it sets that terminal raw, so JSON lines pass unchanged. BatchMode:
# ssh must never prompt for a password on the TUI's screen (it would fight the TUI for the
# terminal); keys or an agent are needed. `--` ends ssh's options, so a host can never be
# read as one.
SSH_RELAY = "ssh -tt -o BatchMode=yes -- {host} wisp relay --via tui"


def local_argv() -> list[str]:
    """This machine's relay: the same wisp, by the interpreter running the TUI (as
    `python -P -m wisp.relay`, which skips the `wisp` command's own imports, and imports
    nothing from the directory the TUI was opened in: :mod:`wisp.routes.subproc`)."""
    return python_module("wisp.relay", "--via", Via.TUI.value)


def local_link(env: Mapping[str, str] | None = None) -> Link:
    """This machine's relay (:func:`local_argv`) as a link, started in :data:`wisp.routes.subproc.
    SAFE_CWD`, never in the directory the TUI was opened in (the agent's project, maybe), with
    *env* (default: the TUI's) for a child started there."""
    return Link(host=LOCAL, argv=local_argv(), env=child_env(env), cwd=SAFE_CWD)


def hello_line(*, notify: bool) -> Hello:
    """What `wisp tui` says first: every request effect, `show-decided` (the calls decided
    without asking, shown quietly), and `notify` where its terminal has a sequence. (That its
    answers are the TUI's is said on the relay's command line.)"""
    from wisp import __version__

    shown = (Effect.SHOW_DECIDED.value, *([Effect.NOTIFY.value] if notify else []))
    effects = (*effect_kinds(), *shown)
    return Hello(effects=effects, client="wisp-tui", version=__version__)


@attrs.define
class Link:
    """One relay child and its stream of lines.

    :meth:`spawn` starts it and says hello synchronously, so `wisp tui` can start its relays
    before it loads the UI library and the two start-ups overlap; :meth:`attach` then joins
    its pipes to the UI's asyncio loop.
    """

    host: str
    argv: list[str]
    env: Mapping[str, str] | None = None
    cwd: str | None = None  # where it runs (None: the TUI's own directory)
    popen: subprocess.Popen[bytes] | None = None
    failed: str | None = None  # why it could not start
    stderr_tail: deque[str] = attrs.field(factory=lambda: deque(maxlen=STDERR_LINES))
    _stdout: asyncio.StreamReader | None = None
    _stdin: asyncio.StreamWriter | None = None
    _stderr_task: asyncio.Task[None] | None = None

    def spawn(self, hello: Hello) -> bool:
        """Start the relay (an argv, never a shell) and write the hello; False if it could
        not start (``failed`` says why)."""
        try:
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(self.env) if self.env is not None else None,
                cwd=self.cwd,
                # Its own process group, in the person's terminal session: the terminal's
                # signals are not its (they go to the foreground group, the TUI's), and it
                # keeps the terminal as its controlling one — a relay without one takes no
                # answers (docs/relay.md).
                process_group=0,
            )
        except OSError as exc:
            self.failed = f"cannot start {shlex.join(self.argv)}: {exc.strerror or exc}"
            return False
        assert self.popen.stdin is not None
        try:  # a few hundred bytes into an empty pipe: never blocks
            self.popen.stdin.write(encode(hello))
            self.popen.stdin.flush()
        except OSError:
            pass  # it died at once: its exit status and stderr will say why
        return True

    def abandon(self) -> None:
        """Before any loop runs: end a spawned relay (EOF first, then SIGTERM)."""
        popen = self.popen
        if popen is None:
            return
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            if stream is not None:
                stream.close()
        try:
            popen.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            popen.terminate()
            popen.wait()

    def end_now(self) -> None:
        """However the TUI ends (a closed terminal's SIGHUP, SIGTERM, a crash): end the relay
        and everything it started — `ssh`, and through it the far relay, whose terminal
        closes with the connection — by its process group (its own, see :meth:`spawn`):
        SIGTERM, then SIGKILL after KILL_WAIT_S. Synchronous: the loop may be gone."""
        popen = self.popen
        if popen is None or popen.poll() is not None:
            return
        for signum in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(popen.pid, signum)
            try:
                popen.wait(KILL_WAIT_S)
                return
            except subprocess.TimeoutExpired:
                continue

    async def attach(self) -> None:
        """Read its stdout and stderr, and write its stdin, on the running loop."""
        popen = self.popen
        assert popen is not None and popen.stdout and popen.stderr and popen.stdin
        loop = asyncio.get_running_loop()
        stdout = self._stdout = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), popen.stdout)
        stderr = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stderr), popen.stderr)
        self._stderr_task = asyncio.ensure_future(self._read_stderr(stderr))
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), popen.stdin
        )
        self._stdin = asyncio.StreamWriter(transport, protocol, None, loop)

    async def send(self, line: FrontEndLine) -> bool:
        """Write one line; False if the relay has stopped taking them."""
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            return False
        try:
            stdin.write(encode(line))
            await stdin.drain()
        except (ConnectionError, OSError):
            return False
        return True

    async def lines(self) -> AsyncIterator[bytes | TooLong]:
        """The relay's stdout, line by line, until it closes."""
        assert self._stdout is not None
        splitter = LineSplitter()
        while True:
            chunk = await self._stdout.read(READ_CHUNK)
            for piece in splitter.feed(chunk) if chunk else splitter.end():
                yield piece
            if not chunk:
                return

    async def _read_stderr(self, stderr: asyncio.StreamReader) -> None:
        splitter = LineSplitter(limit=READ_CHUNK)
        while True:
            chunk = await stderr.read(READ_CHUNK)
            for piece in splitter.feed(chunk) if chunk else splitter.end():
                if isinstance(piece, bytes):
                    self.stderr_tail.append(piece.decode("utf-8", "replace"))
            if not chunk:
                return

    async def ended(self) -> tuple[int | None, str]:
        """Wait for the relay to exit: its exit status and the last line it said on stderr."""
        if self.popen is None:
            return None, self.failed or ""
        code = await asyncio.to_thread(self.popen.wait)
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
        return code, self.stderr_tail[-1] if self.stderr_tail else ""

    async def stop(self) -> None:
        """End the relay: Ctrl-D and close its stdin (a clean stop), then SIGTERM, then
        SIGKILL. The Ctrl-D byte is the end for a relay behind `ssh -tt`, which reads a
        terminal that never ends by itself; a relay on a pipe takes it the same way."""
        popen = self.popen
        if popen is None or popen.poll() is not None:
            return
        if self._stdin is not None:
            with contextlib.suppress(ConnectionError, OSError):
                self._stdin.write(END_OF_INPUT)
                await asyncio.wait_for(self._stdin.drain(), STOP_WAIT_S)
            self._stdin.close()
        elif popen.stdin is not None:
            with contextlib.suppress(OSError):
                popen.stdin.write(END_OF_INPUT)
                popen.stdin.flush()
            popen.stdin.close()
        for signal_it, wait_s in ((None, STOP_WAIT_S), (popen.terminate, KILL_WAIT_S)):
            if signal_it is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal_it()
            try:
                await asyncio.to_thread(popen.wait, wait_s)
                return
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError):
            popen.kill()
        await asyncio.to_thread(popen.wait)


def describe_exit(code: int | None, last: str) -> str:
    if code is None:
        how = "did not start"
    elif code < 0:
        how = f"was killed by signal {-code}"
    else:
        how = f"exited {code}"
    return how + (f": {last}" if last else "")
