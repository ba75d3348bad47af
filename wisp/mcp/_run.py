"""Running `wisp mcp`: start the application, serve MCP over stdio, stop cleanly.

Stopping — the client closing stdin (EOF), SIGTERM or SIGINT — withdraws this server's
commands and questions and hands its fact requests over, so `wisp facts keep ID` from any
terminal still applies them. Nothing but protocol ever reaches stdout: while serving, the SDK
points file descriptor 1 at stderr and writes the protocol to a private duplicate; messages
for people go to stderr.
"""

from __future__ import annotations

import logging
import signal
import sys

import anyio

from wisp.mcp._app import App, StartError

STARTUP_FAILED = 2  # as every `wisp` command that cannot use the channel (ExitCode.ERROR)


def _say(message: str) -> None:
    sys.stderr.write(f"wisp mcp: {message}\n")
    sys.stderr.flush()


async def _serve(app: App) -> None:
    from wisp.mcp._server import build

    server, updates = build(app)
    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    group.cancel_scope.cancel()
                    return

        group.start_soon(stop_on_signal)
        group.start_soon(updates.run)
        await server.run_stdio_async()  # returns when the client closes stdin
        group.cancel_scope.cancel()


def main() -> int:
    """Serve until the client goes or a signal says stop; the exit status."""
    # The SDK and watchdog log to stderr at WARNING and above; keep their chatter there.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("watchdog").setLevel(logging.ERROR)

    def warn(message: str) -> None:
        _say(message)

    try:
        app = App.start(on_warning=warn)
    except StartError as exc:
        _say(str(exc))
        return STARTUP_FAILED
    try:
        anyio.run(_serve, app)
    except KeyboardInterrupt:  # a second Ctrl-C while stopping: still stop cleanly below
        pass
    finally:
        app.close()
    return 0
