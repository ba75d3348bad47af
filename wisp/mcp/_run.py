"""Running `wisp mcp`: start the application, serve MCP over stdio, stop cleanly.

Stopping — the client closing stdin (EOF), SIGTERM or SIGINT — withdraws this server's
commands and questions and hands its fact requests over, so `wisp facts keep ID` from any
terminal still applies them. Nothing but protocol ever reaches stdout: while serving, file
descriptor 1 points at stderr and the protocol goes to a private duplicate
(:mod:`wisp.mcp._stdio`, which also answers lines that are not JSON-RPC); messages for people
go to stderr.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from typing import Any, cast

from pending import Via
from wisp._extras import install_hint
from wisp.agents.session import AgentSession, StartError
from wisp.audit.writer import EntryPoint
from wisp.routes.notify import Face

STARTUP_FAILED = 2  # as every `wisp` command that cannot use the channel (ExitCode.ERROR)
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "starlette", "httpx", "anyio")
CLIENT_DEFAULT = "mcp client"  # until the client names itself


def _say(message: str) -> None:
    sys.stderr.write(f"wisp mcp: {message}\n")
    sys.stderr.flush()


async def _serve(app: AgentSession, build: Callable[[AgentSession], Any]) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from wisp.mcp._stdio import Output, StdinLines, claimed_stdout

    server = build(app)
    lowlevel = server._lowlevel_server  # the SDK's run_stdio_async, with our stdio edge
    with claimed_stdout() as protocol_fd:
        output = Output(protocol_fd)
        stdin = StdinLines(0, output)
        async with anyio.create_task_group() as group:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            streams = stdio_server(stdin=cast(Any, stdin), stdout=cast(Any, output))
            async with streams as (read, write):
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
