"""An asking server's own facts: each thread's (`c…`) and the server session's (`s…`).

A thread is one conversation with an agent (over MCP, one client session): what its caller
records lives in the thread, and goes when the thread closes. Session facts are the server's,
shared by its threads for its life. Neither is the person's: permanent facts (`p…`) live in
`$WISP_HOME/facts.json` and only the person keeps them (:class:`wisp.FactKeeper` asks). This
module is plain data behind one lock, used by :class:`wisp.AgentSession`; it knows no face.
"""

from __future__ import annotations

import itertools
import threading
from datetime import datetime
from typing import Any

import attrs

from pending import SYSTEM_CLOCK, Clock, FactBinding, format_time, record_time
from wisp._errors import WispError
from wisp.stores.factids import SESSION_PREFIX, THREAD_PREFIX, FactScope


class UnknownFact(WispError, LookupError):
    """No such fact where the caller looked; the message says so, and `fact_id` is the id
    asked for (a face adds where the caller can see the facts it may use)."""

    def __init__(self, message: str, *, fact_id: str) -> None:
        super().__init__(message)
        self.fact_id = fact_id


@attrs.frozen(kw_only=True)
class NoteFact:
    """A thread's or the session's fact (not the person's)."""

    id: str  # c… or s…
    scope: FactScope
    subject: str
    name: str
    value: str
    source: str
    recorded_at: datetime
    thread: str  # the thread that recorded it
    proposed_by: str  # who recorded it: the MCP client's name
    request: str | None = None  # the latest request to keep it permanent
    was: str | None = None  # the id it had before it last moved

    def binding(self) -> FactBinding:
        """What a request to keep it names (and what the person is shown)."""
        return FactBinding(
            fact_id=self.id,
            subject=self.subject,
            name=self.name,
            value=self.value,
            source=self.source,
            proposed_by=self.proposed_by,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope.value,
            "subject": self.subject,
            "name": self.name,
            "value": self.value,
            "source": self.source,
            "recordedAt": format_time(self.recorded_at),
            "thread": self.thread,
            "proposedBy": self.proposed_by,
            "was": self.was,
        }


def new_thread_id() -> str:
    import secrets  # here, not at import: it loads hmac and OpenSSL, ~20 M instructions

    return "t" + secrets.token_hex(4)


class FactBook:
    """Every thread's facts and the session's, for one server; safe across threads (the fact
    keeper's watch looks facts up from its own thread)."""

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._facts: dict[str, NoteFact] = {}
        self._moved: dict[str, str] = {}  # old id -> new id, so a request names its fact still
        self._open: set[str] = set()
        self._numbers = itertools.count(1)

    # --- threads ---------------------------------------------------------------------

    def open_thread(self, thread: str | None = None) -> str:
        thread = thread or new_thread_id()
        with self._lock:
            self._open.add(thread)
        return thread

    def close_thread(self, thread: str) -> None:
        """The thread ends: its facts are no longer shown. Any that a keep request names stay
        known, so a later keep still applies what the person was shown."""
        with self._lock:
            self._open.discard(thread)
            for fact_id, fact in list(self._facts.items()):
                if (
                    fact.scope is FactScope.THREAD
                    and fact.thread == thread
                    and fact.request is None
                ):
                    del self._facts[fact_id]

    # --- facts -----------------------------------------------------------------------

    def record(
        self, thread: str, *, subject: str, name: str, value: str, source: str, proposed_by: str
    ) -> NoteFact:
        with self._lock:
            fact = NoteFact(
                id=f"{THREAD_PREFIX}{next(self._numbers)}",
                scope=FactScope.THREAD,
                subject=subject,
                name=name,
                value=value,
                source=source,
                recorded_at=record_time(self.clock),
                thread=thread,
                proposed_by=proposed_by,
            )
            self._facts[fact.id] = fact
            return fact

    def _resolve(self, fact_id: str) -> str:
        seen = set()
        while fact_id in self._moved and fact_id not in seen:
            seen.add(fact_id)
            fact_id = self._moved[fact_id]
        return fact_id

    def lookup(self, fact_id: str) -> NoteFact | None:
        """The fact by id, following moves; None if there is none (or it went with its
        thread)."""
        with self._lock:
            return self._facts.get(self._resolve(fact_id))

    def binding(self, fact_id: str) -> FactBinding | None:
        """For the fact keeper: what the fact says now (None if it is gone)."""
        fact = self.lookup(fact_id)
        return None if fact is None else fact.binding()

    def visible(self, thread: str, fact_id: str) -> NoteFact:
        """A fact this thread may see: its own, or the session's. Raises :class:`UnknownFact`."""
        fact = self.lookup(fact_id)
        if fact is None or (fact.scope is FactScope.THREAD and fact.thread != thread):
            raise UnknownFact(
                f"no fact {fact_id!r} in this thread or this server's session.", fact_id=fact_id
            )
        return fact

    def seen_by(self, thread: str) -> list[NoteFact]:
        """This thread's facts and the session's, oldest first."""
        with self._lock:
            is_open = thread in self._open
            facts = list(self._facts.values())
        return [
            f for f in facts if f.scope is FactScope.SESSION or (is_open and f.thread == thread)
        ]

    def move(self, fact_id: str, scope: FactScope, *, thread: str) -> NoteFact:
        """Move a fact to this thread or to the session. Its id changes with its scope (`c…`
        for a thread, `s…` for the session); the old id keeps leading to it."""
        assert scope in (FactScope.THREAD, FactScope.SESSION)
        current = self.visible(thread, fact_id)
        if current.scope is scope and (scope is FactScope.SESSION or current.thread == thread):
            return current
        prefix = THREAD_PREFIX if scope is FactScope.THREAD else SESSION_PREFIX
        with self._lock:
            moved = attrs.evolve(
                current,
                id=f"{prefix}{next(self._numbers)}",
                scope=scope,
                thread=thread,
                was=current.id,
            )
            del self._facts[current.id]
            self._facts[moved.id] = moved
            self._moved[current.id] = moved.id
            return moved

    def link(self, fact_id: str, request_id: str) -> NoteFact | None:
        """Remember the request that asks to keep this fact."""
        with self._lock:
            key = self._resolve(fact_id)
            fact = self._facts.get(key)
            if fact is None:
                return None
            fact = attrs.evolve(fact, request=request_id)
            self._facts[key] = fact
            return fact

    def asking(self, request_id: str) -> list[NoteFact]:
        """The facts a request asks about (normally one)."""
        with self._lock:
            return [f for f in self._facts.values() if f.request == request_id]
