"""wisp's own start in `wisp mcp`, after its answer to `initialize`.

A client waits for that answer before anything else, and the answer needs nothing of wisp's:
only the SDK, which is most of the start (bench/README.md, issue 41). So `wisp mcp` answers
first, and starts wisp after: its application modules imported, the session started
(:meth:`wisp.AgentSession.start`: the channel, the config, the asker's lock), the tools and
resources declared, the channel's watch begun. That runs once, on a worker thread, begun by
whichever comes first: the server's first answer is out, the client has said nothing yet
when the server first listens, a request needs the session, or the input ends.

Every request that needs the session (a tool call, `tools/list`, a resource, a subscription)
waits for the start (:meth:`Startup.ready`): it is answered as it always was, only later. If
wisp cannot start (a broken config.json, an unsafe channel), the server stops serving and
`wisp mcp` exits 2 saying why on stderr, as it did before it answered anything.

This module loads nothing of wisp's application: it is imported before the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import anyio
import anyio.to_thread
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from wisp import WispError

T = TypeVar("T")


class CannotStart(WispError):
    """wisp cannot start; the message says why and what to do (a
    :class:`wisp.agents.session.StartError`'s)."""


class Startup(Generic[T]):
    """wisp's own start, begun once (:meth:`begin`), run on a worker thread, and waited for by
    every request that needs the session (:meth:`ready`). *T* is what the start makes (`wisp
    mcp`'s: the face's state, :class:`wisp.mcp._updates.Served`)."""

    def __init__(self) -> None:
        self._begun = anyio.Event()
        self._ended = anyio.Event()
        self.served: T | None = None  # once started: what the start made
        self.error: str | None = None  # why wisp could not start

    def begin(self) -> None:
        """Start now, if not begun already (it is begun once, and runs to its end)."""
        self._begun.set()

    async def run(self, start: Callable[[], T], stop: anyio.CancelScope) -> None:
        """Once begun, *start* on a worker thread. If it raises :class:`CannotStart`,
        :attr:`error` says why and *stop* is cancelled: the server stops serving."""
        await self._begun.wait()
        try:
            # A start under way runs to its end even if the server is told to stop meanwhile,
            # so that what it opened is closed (`wisp mcp` closes the session it started).
            with anyio.CancelScope(shield=True):
                self.served = await anyio.to_thread.run_sync(start)
        except CannotStart as exc:
            self.error = str(exc)
            stop.cancel()
        finally:
            self._ended.set()

    async def ended(self) -> None:
        """Wait for the start to end, started or not (without beginning it)."""
        await self._ended.wait()

    async def ready(self) -> T:
        """What the start made, once wisp has started, beginning the start if need be. If
        wisp could not start, an error saying why (the server is stopping)."""
        self.begin()
        await self._ended.wait()
        if self.served is None:
            why = self.error or "its start failed"
            raise MCPError(code=INTERNAL_ERROR, message=f"wisp could not start: {why}")
        return self.served
