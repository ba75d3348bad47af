"""The records the channel reads and writes, and the rules about them (pure: no I/O).

Records are named tuples, given by keyword (``_replace`` makes a changed copy), but where a
reader builds thousands of them (:func:`from_fields`). Their JSON form
(camelCase keys) is produced and read by :mod:`pending._convert` alone. Every record keeps the
keys it did not understand in ``extra``, so that a newer build's fields survive a
read-modify cycle through this one.
"""

# Named tuples, their annotations not postponed: see pending._bindings.

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from pending._bindings import NO_EXTRA, Binding, CommandBinding
from pending._kinds import TOMBSTONES, Delivery, Kind, Outcome, State

FORMAT = 1  # the on-disk format this build writes and understands

# What a legacy request (no `format`: an earlier build's) holds where it named no server, or
# a server without its id or pid: nothing to probe. Its liveness is then judged by what it
# does name (pending._liveness.request_alive), and, naming nothing, it is taken as alive.
UNKNOWN_SERVER_ID = ""
UNKNOWN_PID = 0


class Server(NamedTuple):
    """The process that filed a request, and the lock that says whether it still lives."""

    id: str
    pid: int
    client: str | None = None
    thread: str | None = None
    entry_point: str | None = None
    extra: Mapping[str, Any] = NO_EXTRA


class Request(NamedTuple):
    """A request filed by an asker: `ID.request.json`, `ID.fact.json` or `ID.question.json`."""

    id: str
    kind: Kind
    filed_at: datetime
    expires_at: datetime | None
    server: Server
    title: str
    body: str
    binding: Binding
    binding_digest: str
    format: int = FORMAT
    extra: Mapping[str, Any] = NO_EXTRA
    # Written by an earlier build (no `format`), and read leniently: fields it left out were
    # filled in (see docs/channel.md, "Legacy records"). Never written to disk.
    legacy: bool = False


class Answer(NamedTuple):
    """`ID.answer.json`: the one answer that decides, a person's or a tombstone."""

    id: str
    kind: Kind
    decision: str
    binding_digest: str
    answered_at: datetime
    via: str
    pid: int
    user: str
    format: int = FORMAT
    text: str | None = None
    reason: str | None = None
    # How wide an approval reaches (pending._offers: `name`, and `prefix` or `path`), as a JSON
    # object; None (and absent from the file): the exact call.
    width: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = NO_EXTRA

    @property
    def is_tombstone(self) -> bool:
        """Whether the slot was claimed by the asker or a sweeper rather than a person."""
        return self.decision in TOMBSTONES


class Settled(NamedTuple):
    """`ID.settled.json`: what applying the decision did. The first one written wins."""

    id: str
    kind: Kind
    outcome: Outcome
    settled_at: datetime
    by: str
    format: int = FORMAT
    decision: str | None = None
    result: str | None = None
    reason: str | None = None
    delivery: Delivery | None = None
    extra: Mapping[str, Any] = NO_EXTRA


class Group(NamedTuple):
    """The files of one ID as read from disk; any may be missing."""

    id: str
    request: Request | None = None
    answer: Answer | None = None
    settled: Settled | None = None


class Status(NamedTuple):
    """A request's derived state, with the records it was derived from."""

    id: str
    kind: Kind
    state: State
    request: Request
    answer: Answer | None = None
    settled: Settled | None = None
    outcome: Outcome | None = None  # for SETTLED: the outcome (a tombstone's, before it settles)
    server_alive: bool | None = None  # None when it did not need asking
    reason: str | None = None  # for STALE: why


class Problem(NamedTuple):
    """An entry the channel skipped: never acted on, reported by the doctor."""

    name: str
    reason: str


class AnswerResult(NamedTuple):
    """Who holds the answer slot after an attempt: this caller (``won``) or an earlier one."""

    won: bool
    answer: Answer
    # The request as it was read and checked for this attempt (None where the caller gave
    # none), so that a caller need not read it again.
    request: Request | None = None


class SettleResult(NamedTuple):
    """Who wrote the outcome: this caller (``won``) or an earlier one."""

    won: bool
    settled: Settled


# A record built from all its fields in order, by tuple.__new__: a named tuple's own __new__
# takes them by keyword through a Python frame of its own (~0.4 µs), and a listing of 10,000
# builds 10,000 requests, command bindings, groups and statuses (issue 41). Where one is built
# so (pending._convert's plain path, Channel's scan, derive_status), the order it is given
# in is the one asserted here: a change to these classes' fields changes those calls.
from_fields = tuple.__new__
assert Request._fields == (
    "id",
    "kind",
    "filed_at",
    "expires_at",
    "server",
    "title",
    "body",
    "binding",
    "binding_digest",
    "format",
    "extra",
    "legacy",
)
assert CommandBinding._fields == (
    "command",
    "cwd",
    "thread",
    "reason",
    "options",
    "offers",
    "extra",
)
assert Group._fields == ("id", "request", "answer", "settled")
assert Status._fields == (
    "id",
    "kind",
    "state",
    "request",
    "answer",
    "settled",
    "outcome",
    "server_alive",
    "reason",
)
