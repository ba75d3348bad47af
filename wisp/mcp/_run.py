"""Running `wisp mcp`: answer `initialize`, start the application, serve MCP over stdio, stop
cleanly.

The client's `initialize` is answered before wisp's own start (:mod:`wisp.mcp._start`): until
then only the SDK and the stdio edge are loaded. wisp then starts on a worker thread, and a
request that needs it waits for it; if it cannot start, the server stops and exits 2 saying
why on stderr.

Stopping — the client closing stdin (EOF), SIGTERM or SIGINT — withdraws this server's
commands and questions and hands its fact requests over, so `wisp facts keep ID` from any
terminal still applies them. Nothing but protocol ever reaches stdout: while serving, file
descriptor 1 points at stderr and the protocol goes to a private duplicate
(:mod:`wisp.mcp._stdio`, which also answers lines that are not JSON-RPC); messages for people
go to stderr.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
from typing import TYPE_CHECKING, Any, cast

from wisp import _startup

if TYPE_CHECKING:
    from wisp import AgentSession
    from wisp.mcp._server import WispServer
    from wisp.mcp._updates import Served

STARTUP_FAILED = 2  # as every `wisp` command that cannot use the channel (ExitCode.ERROR)
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "starlette", "httpx", "anyio")
CLIENT_DEFAULT = "mcp client"  # until the client names itself


def _say(message: str) -> None:
    sys.stderr.write(f"wisp mcp: {message}\n")
    sys.stderr.flush()


def _session() -> AgentSession:
    """The session, started; :class:`~wisp.mcp._start.CannotStart` if it cannot be."""
    from pending import Via
    from wisp import AgentSession, EntryPoint, Face, StartError
    from wisp.mcp._start import CannotStart

    try:
        return AgentSession.start(
            face=Face.MCP,  # never the terminal route: the client owns it, stdout is protocol
            entry_point=EntryPoint.MCP,
            dialog_via=Via.ELICITATION,
            client=CLIENT_DEFAULT,
            on_warning=_say,
        )
    except StartError as exc:
        raise CannotStart(str(exc)) from None


def _start(server: WispServer, started: list[AgentSession]) -> Served:
    """wisp's own start, on a worker thread once it is begun: the session (noted in
    *started*, which `main` closes), then the face declared on *server*. Raises
    :class:`~wisp.mcp._start.CannotStart` if the session cannot start."""
    try:
        app = _session()
        started.append(app)
        return server.declare(app)
    finally:
        # Started (or not): the process lives on, and collects again (wisp._startup), never
        # over what the start made (see main).
        _startup.resume()


async def _serve(started: list[AgentSession]) -> str | None:
    """Serve until the client goes or a signal says stop; why wisp could not start, if so."""
    import anyio
    from mcp.server.stdio import stdio_server

    from wisp.mcp._server import WispServer
    from wisp.mcp._start import Startup
    from wisp.mcp._stdio import Output, StdinLines, claimed_stdout

    startup: Startup[Served] = Startup()
    server = WispServer(startup)
    lowlevel = server._lowlevel_server  # the SDK's run_stdio_async, with our stdio edge
    with claimed_stdout() as protocol_fd:
        output = Output(protocol_fd, after_first=startup.begin)
        stdin = StdinLines(0, output, if_silent=startup.begin)
        async with anyio.create_task_group() as group:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            start = functools.partial(_start, server, started)
            group.start_soon(startup.run, start, group.cancel_scope)
            streams = stdio_server(stdin=cast(Any, stdin), stdout=cast(Any, output))
            async with streams as (read, write):
                # Enters the server's lifespan; returns when the client closes stdin (EOF).
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
            # The client has gone: wisp's start still runs to its end (begun now if it was
            # not), so that one that cannot start says so and exits as it always did.
            startup.begin()
            await startup.ended()
            group.cancel_scope.cancel()
    return startup.error


def main() -> int:
    """Serve until the client goes or a signal says stop; the exit status."""
    # No cyclic garbage collection while `wisp mcp` starts, until wisp has started (_start):
    # the `wisp` program pauses it already (wisp._startup), `python -m wisp.mcp` here. The
    # start allocates ~135,000 objects, nearly all of them the SDK's and wisp's modules,
    # classes and models, which live as long as the process, and ~2,500 that are garbage:
    # collecting as it went was ~15-20% of the time to the answer to `initialize` (the SDK's
    # import: ~1,000 ms with the collector, ~850 without), for nothing it could free.
    _startup.pause()
    # The SDK and watchdog log to stderr at WARNING and above; keep their chatter there.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("watchdog").setLevel(logging.ERROR)

    try:
        import wisp.mcp._server  # noqa: F401 (the SDK, loaded here to say if it is missing)
    except ImportError as exc:
        if not (exc.name or "").startswith(SDK_MODULES):
            raise
        from wisp._errors import install_hint

        missing = (exc.name or "mcp").partition(".")[0]
        _say(f"the MCP SDK is not installed ({missing} is missing). {install_hint('mcp')}")
        return STARTUP_FAILED
    import anyio  # installed with the SDK, checked above

    started: list[AgentSession] = []
    error = None
    try:
        error = anyio.run(_serve, started)
    except KeyboardInterrupt:  # a second Ctrl-C while stopping: still stop cleanly below
        pass
    finally:
        for app in started:
            app.close()
    if error is not None:
        _say(error)
        return STARTUP_FAILED
    return 0
