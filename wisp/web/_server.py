"""Running the web face: the socket bound here (so a port in use is said in wisp's words),
the board started, then uvicorn until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pending import PendingError
from wisp._errors import install_hint
from wisp.web import WebError, base_url

if TYPE_CHECKING:
    import uvicorn

SHUTDOWN_S = 2  # open pages' event streams are given this long to close on Ctrl-C


LISTEN_BACKLOG = 128  # connections queued before the server accepts them (uvicorn's own)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listening from here on: a browser that connects as soon as the URL is printed is
        # queued until the server takes it, never refused (uvicorn listens again, harmlessly).
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise WebError(
            f"cannot listen on {host}:{port}: {exc.strerror}. Choose another port "
            f"(--listen {host}:PORT), or stop what uses this one."
        ) from None
    return sock


def _server(config: uvicorn.Config) -> uvicorn.Server:
    """A uvicorn server that, stopped on purpose, is stopped: uvicorn's own capture_signals,
    having shut down on Ctrl-C or SIGTERM, raises that signal again, so `wisp web` exited 130
    or 143 where docs/web.md and docs/cli.md say 0, "stopped". Here the signal asks the
    server to stop (uvicorn's handle_exit: a second Ctrl-C forces it), the handlers there
    before are put back, and nothing is raised."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield  # signals reach the main thread alone
                return
            # SIGHUP too: the terminal it runs in closed; its --host relays end with it.
            stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
            before = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server(config)


def serve(
    home: Path,
    host: str,
    port: int,
    *,
    tls: tuple[str, str] | None,
    say: Callable[[str], None],
    warn: Callable[[str], None],
    hosts: Sequence[str] = (),
    relay_command: str | None = None,
) -> int:
    """Serve until Ctrl-C, SIGTERM or SIGHUP (stopped on purpose: exit 0); raises
    :class:`WebError` if it cannot start. *hosts*: the other machines whose requests it
    shows too, each through its relay (*relay_command*, default ssh's)."""
    try:
        import uvicorn

        from wisp.web._app import WebFace
        from wisp.web._board import Board, Changed, Reset
        from wisp.web._hosts import LinkError, remote_hosts
    except ImportError as exc:
        raise WebError(
            f"`wisp web` needs the web extra ({exc.name} is not installed). {install_hint('web')}"
        ) from None
    board = Board(home, on_warning=lambda message: warn(f"wisp web: {message}"))
    try:
        remotes = remote_hosts(
            hosts,
            relay_command,
            on_change=lambda there, request_id: board.publish(Changed(request_id, None, there)),
            on_state=lambda _there: board.publish(Reset()),
            on_decided=board.decided_there,
        )
    except LinkError as exc:
        raise WebError(str(exc)) from None
    sock = _bind(host, port)
    try:
        try:
            board.start()
        except PendingError as exc:
            raise WebError(str(exc)) from None
        for remote in remotes:
            remote.start()
        face = WebFace(home, board, remotes)
        config = uvicorn.Config(
            face.app(),
            ssl_certfile=tls[0] if tls else None,
            ssl_keyfile=tls[1] if tls else None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=SHUTDOWN_S,
        )
        try:
            config.load()
        except (OSError, ssl.SSLError) as exc:
            raise WebError(
                f"cannot use --tls-cert/--tls-key: {exc}. Give a PEM certificate and its "
                "private key, each readable by you."
            ) from None
        url = base_url(host, sock.getsockname()[1], tls=tls is not None)
        say(f"wisp web: serving {url}/ (Ctrl-C stops it)")
        asyncio.run(_server(config).serve(sockets=[sock]))
    finally:
        for remote in remotes:
            remote.close()
        board.close()
        sock.close()
    return 0
