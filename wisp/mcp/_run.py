"""Running `wisp mcp`: start the application, serve MCP over stdio, stop cleanly.

Stopping — the client closing stdin (EOF), SIGTERM or SIGINT — withdraws this server's
commands and questions and hands its fact requests over, so `wisp facts keep ID` from any
terminal still applies them. Nothing but protocol ever reaches stdout: while serving, the SDK
points file descriptor 1 at stderr and writes the protocol to a private duplicate; messages
for people go to stderr.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import sys
from collections.abc import Callable
from typing import Any, cast

from pending import Via
from wisp._agentsession import AgentSession, StartError
from wisp._audit import EntryPoint
from wisp._extras import install_hint
from wisp._notify import Face

STARTUP_FAILED = 2  # as every `wisp` command that cannot use the channel (ExitCode.ERROR)
READ_CHUNK_BYTES = 64 * 1024
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "starlette", "httpx", "anyio")
CLIENT_DEFAULT = "mcp client"  # until the client names itself


def _say(message: str) -> None:
    sys.stderr.write(f"wisp mcp: {message}\n")
    sys.stderr.flush()


class StdinLines:
    """The client's lines on stdin, read on the event loop.

    The SDK's own reader blocks a worker thread in `read(2)`, and a stop (SIGTERM, SIGINT)
    would then wait for the client's next line; waiting for readability on the loop is
    cancelled at once. Used where stdin can be waited on (a pipe, a socket, a terminal).
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""

    @staticmethod
    def usable(fd: int) -> bool:
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return False
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while b"\n" not in self._buffer:
            await anyio.wait_readable(self.fd)
            chunk = os.read(self.fd, READ_CHUNK_BYTES)  # readable: returns what is there
            if not chunk:
                if not self._buffer:
                    raise StopAsyncIteration
                line, self._buffer = self._buffer, b""
                return line.decode("utf-8", errors="replace")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace") + "\n"


async def _serve(app: AgentSession, build: Callable[[AgentSession], Any]) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    server = build(app)
    lowlevel = server._lowlevel_server  # the SDK's run_stdio_async, with our stdin reader
    stdin = StdinLines(0) if StdinLines.usable(0) else None
    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    group.cancel_scope.cancel()
                    return

        group.start_soon(stop_on_signal)
        async with stdio_server(stdin=cast(Any, stdin)) as (read, write):
            # Enters the server's lifespan; returns when the client closes stdin (EOF).
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        group.cancel_scope.cancel()


def main() -> int:
    """Serve until the client goes or a signal says stop; the exit status."""
    # The SDK and watchdog log to stderr at WARNING and above; keep their chatter there.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("watchdog").setLevel(logging.ERROR)

    try:
        from wisp.mcp._server import build
    except ImportError as exc:
        if not (exc.name or "").startswith(SDK_MODULES):
            raise
        _say(f"the MCP SDK is not installed ({exc}). {install_hint('mcp')}")
        return STARTUP_FAILED

    try:
        app = AgentSession.start(
            face=Face.MCP,  # never the terminal route: the client owns it, stdout is protocol
            entry_point=EntryPoint.MCP,
            dialog_via=Via.ELICITATION,
            client=CLIENT_DEFAULT,
            on_warning=_say,
        )
    except StartError as exc:
        _say(str(exc))
        return STARTUP_FAILED
    import anyio  # installed with the SDK, checked above

    try:
        anyio.run(_serve, app, build)
    except KeyboardInterrupt:  # a second Ctrl-C while stopping: still stop cleanly below
        pass
    finally:
        app.close()
    return 0
