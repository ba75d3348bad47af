"""One `wisp mcp` server's application objects, and the calls its tools make on them.

Everything here is the application layer's: an :class:`~wisp.Asker` (this server's lock and
watch), a :class:`~wisp.FactKeeper`, an :class:`~wisp.ApprovalGate`, a notifier for the MCP
face, the facts of its threads and session. The MCP side (:mod:`wisp.mcp._server`) parses
arguments, calls these methods (on a worker thread: they read and write files) and renders.
Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from pending import Channel, PendingError, State, Status, wisp_home
from wisp._asking import Asker
from wisp._config import Config, ConfigError, load_config
from wisp._facts import FactKeeper, FactRefused, FactStore, KeepRequest
from wisp._notify import Notifier, Result
from wisp._store import StoreError
from wisp.mcp._threads import PERMANENT_PREFIX, FactBook, NoteFact, Scope, UnknownFact
from wisp.mcp._views import WAITING

ENTRY_POINT = "mcp"
CLIENT_DEFAULT = "mcp client"  # until the client names itself

# The notifications a tool call posted or tried, collected for its result.
_posted: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "wisp_mcp_posted", default=None
)


@contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """Collect, for one tool call, every notification posted or tried while it runs (on any
    worker thread it starts: they run in a copy of its context, sharing the list)."""
    posted: list[dict[str, Any]] = []
    token = _posted.set(posted)
    try:
        yield posted
    finally:
        _posted.reset(token)


class RecordingNotifier(Notifier):
    """The MCP face's notifier (never the terminal route: the client owns the terminal and
    stdout is the protocol), which also tells the calling tool what it posted."""

    def post(
        self,
        title: str,
        message: str,
        *,
        subtitle: str = "",
        source: str = "user",
        route: str | None = None,
        about: Mapping[str, Any] | None = None,
    ) -> Result:
        result = super().post(
            title, message, subtitle=subtitle, source=source, route=route, about=about
        )
        posted = _posted.get()
        if posted is not None:
            posted.append(
                {
                    "title": title,
                    "source": source,
                    "posted": result.posted,
                    "route": result.route,
                    "reason": result.reason,
                    "request": (about or {}).get("id"),
                }
            )
        return result


class StartError(Exception):
    """The server cannot start; the message says why and what to do."""


@attrs.frozen(kw_only=True)
class ScopeChange:
    """What set_fact_scope did."""

    fact: NoteFact | None  # the fact as it is now (thread or session)
    keep: KeepRequest | None = None  # for `permanent`: the keeper's answer
    changed: bool = False


class App:
    """The application objects of one `wisp mcp` process."""

    def __init__(
        self,
        channel: Channel,
        config: Config,
        *,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.channel = channel
        self.home: Path = channel.home
        self.config = config
        self.notifier = RecordingNotifier(
            channel.home, face="mcp", settings=config.values, entry_point=ENTRY_POINT
        )
        self.asker = Asker(
            channel,
            entry_point=ENTRY_POINT,
            client=CLIENT_DEFAULT,
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=on_warning,
            notifier=self.notifier,
        )
        self.book = FactBook(clock=self.asker.clock)
        self.store = FactStore(channel.home, clock=self.asker.clock)
        self.keeper = FactKeeper(self.asker, store=self.store, lookup=self.book.binding)
        self.thread = self.book.open_thread()
        self._closed = False
        self._close_lock = threading.Lock()

    @classmethod
    def start(cls, *, on_warning: Callable[[str], None] | None = None) -> App:
        """Open the channel and start asking; :class:`StartError` if it cannot be used."""
        home = wisp_home()
        try:
            config = load_config(home)
        except ConfigError as exc:
            raise StartError(str(exc)) from None
        try:
            channel = Channel.open(home)
        except PendingError as exc:
            raise StartError(str(exc)) from None
        try:
            return cls(channel, config, on_warning=on_warning)
        except (OSError, PendingError) as exc:
            channel.close()
            raise StartError(
                f"cannot ask through {channel.path}: {exc}. Check it with `wisp doctor`."
            ) from None

    @property
    def server_id(self) -> str:
        return self.asker.server_id

    def name_client(self, name: str | None) -> None:
        """The client's own name, once it has said it, for the requests this server files."""
        if name:
            self.asker.client = name

    # --- facts -------------------------------------------------------------------------

    def record_fact(self, subject: str, name: str, value: str) -> NoteFact:
        return self.book.record(
            self.thread,
            subject=subject,
            name=name,
            value=value,
            source="mcp record_fact",
            proposed_by=self.asker.client,
        )

    def fact(self, fact_id: str) -> NoteFact:
        """A fact this thread can see; :class:`UnknownFact` otherwise."""
        return self.book.visible(self.thread, fact_id)

    def set_scope(self, fact_id: str, scope: Scope) -> ScopeChange:
        """Move a fact to this thread or the session, or ask the person to keep it
        (returns at once). Raises :class:`FactRefused`, :class:`UnknownFact`,
        :class:`StoreError`."""
        if fact_id.startswith(PERMANENT_PREFIX):
            raise FactRefused(
                f"{fact_id} is a permanent fact, and permanent facts are the person's: a caller "
                "cannot move, demote or remove one. The person manages them from a terminal "
                "(`wisp facts list`). If you think it is wrong, record a newer fact in your "
                "thread and say so."
            )
        fact = self.fact(fact_id)
        if scope is not Scope.PERMANENT:
            moved = self.book.move(fact.id, scope, thread=self.thread)
            return ScopeChange(fact=moved, changed=moved.id != fact.id)
        asked = self.keeper.request(
            fact_id=fact.id,
            subject=fact.subject,
            name=fact.name,
            value=fact.value,
            source=fact.source,
            proposed_by=fact.proposed_by,
            thread=self.thread,
        )
        if asked.request_id is not None:
            fact = self.book.link(fact.id, asked.request_id) or fact
        return ScopeChange(fact=fact, keep=asked, changed=asked.new)

    def permanent(self) -> list[Any]:
        """The person's permanent facts (:class:`StoreError` if the store cannot be read)."""
        return self.store.list()

    def permanent_fact(self, fact_id: str) -> Any:
        for fact in self.store.list():
            if fact.id == fact_id:
                return fact
        raise UnknownFact(f"no permanent fact {fact_id!r}; `wisp://facts/permanent` lists them.")

    def status(self, request_id: str) -> Status:
        return self.channel.status(request_id)

    def proposed(self) -> list[tuple[NoteFact, Status | None]]:
        """This thread's and the session's facts that wait for the person to keep them."""
        found = []
        for fact in self.book.seen_by(self.thread):
            if fact.request is None:
                continue
            try:
                status: Status | None = self.status(fact.request)
            except PendingError:
                status = None
            if status is None or status.state in WAITING:
                found.append((fact, status))
        return found

    def waiting(self) -> list[Status]:
        """This server's requests that wait for the person, oldest first."""
        listing = self.channel.listing(states=list(WAITING))
        return [s for s in listing.statuses if s.request.server.id == self.server_id]

    def state_of(self, request_id: str) -> State | None:
        try:
            return self.status(request_id).state
        except PendingError:
            return None

    # --- notify ------------------------------------------------------------------------

    def notify(self, title: str, message: str) -> Result:
        return self.notifier.post(title, message, source="model")

    # --- stopping ----------------------------------------------------------------------

    def close(self) -> None:
        """Stop: withdraw this server's commands and questions, hand its fact requests over
        (a later `wisp facts keep ID` from any terminal applies them), release the lock."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            self.keeper.close()
        finally:
            try:
                self.asker.close()
            finally:
                self.book.close_thread(self.thread)
                self.channel.close()


__all__ = [
    "App",
    "FactRefused",
    "RecordingNotifier",
    "ScopeChange",
    "StartError",
    "StoreError",
    "UnknownFact",
    "collecting",
]
