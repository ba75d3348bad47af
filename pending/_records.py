"""The records the channel reads and writes, and the rules about them (pure: no I/O).

Records are frozen, keyword-only attrs classes. Their JSON form (camelCase keys) is produced
and read by :mod:`pending._convert` alone. Every record keeps the keys it did not understand in
``extra``, so that a newer build's fields survive a read-modify cycle through this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

import attrs

from pending._ids import Kind

FORMAT = 1  # the on-disk format this build writes and understands


def _no_extra() -> Mapping[str, Any]:
    return {}


class State(StrEnum):
    """Where a request stands, derived from what is on disk (see :func:`pending.derive_status`)."""

    FILED = "filed"
    ANSWERED = "answered"
    SETTLED = "settled"
    STALE = "stale"
    HANDED_OVER = "handed-over"


class Outcome(StrEnum):
    """How a request ended, as its settled record says."""

    ANSWERED = "answered"
    TIMED_OUT = "timed-out"
    WITHDRAWN = "withdrawn"
    FAILED = "failed"
    STALE = "stale"


class Delivery(StrEnum):
    """Who applied an answered request."""

    WATCHED = "watched"  # the asker, watching, applied it
    APPLIED = "applied"  # the answering process applied it: no asker was watching


# The decisions a person may give each kind. A command's approvals name their scope.
DECISIONS: dict[Kind, tuple[str, ...]] = {
    Kind.COMMAND: ("once", "session", "project", "always", "no"),
    Kind.FACT: ("keep", "drop"),
    Kind.QUESTION: ("answer", "decline"),
}
APPROVALS = ("once", "session", "project", "always")

# Endings the asker or a sweeper claims the answer slot with, so one slot decides every way a
# request can end before it is applied. Each reads as the outcome of the same name.
TOMBSTONES: dict[str, Outcome] = {
    "timed-out": Outcome.TIMED_OUT,
    "withdrawn": Outcome.WITHDRAWN,
    "stale": Outcome.STALE,
}
VIA_ASKER = "asker"
VIA_SWEEP = "sweep"


@attrs.frozen(kw_only=True)
class Server:
    """The process that filed a request, and the lock that says whether it still lives."""

    id: str
    pid: int
    client: str | None = None
    thread: str | None = None
    entry_point: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)


@attrs.frozen(kw_only=True)
class CommandBinding:
    """What a command approval is bound to: the exact command, where, for which thread."""

    command: str
    cwd: str
    thread: str | None = None
    reason: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)


@attrs.frozen(kw_only=True)
class FactBinding:
    """What a fact request is bound to: the fact exactly as the person is shown it."""

    fact_id: str
    subject: str
    name: str
    value: str
    source: str
    proposed_by: str
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)


@attrs.frozen(kw_only=True)
class QuestionBinding:
    """What a question is bound to: its text, and the answers it takes."""

    question: str
    options: tuple[str, ...] | None = None
    free_text: bool = True
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)


Binding = CommandBinding | FactBinding | QuestionBinding

BINDING_TYPES: dict[Kind, type[CommandBinding] | type[FactBinding] | type[QuestionBinding]] = {
    Kind.COMMAND: CommandBinding,
    Kind.FACT: FactBinding,
    Kind.QUESTION: QuestionBinding,
}


@attrs.frozen(kw_only=True)
class Request:
    """A request filed by an asker: `ID.request.json`, `ID.fact.json` or `ID.question.json`."""

    format: int = FORMAT
    id: str
    kind: Kind
    filed_at: datetime
    expires_at: datetime | None
    server: Server
    title: str
    body: str
    binding: Binding
    binding_digest: str
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)


@attrs.frozen(kw_only=True)
class Answer:
    """`ID.answer.json`: the one answer that decides, a person's or a tombstone."""

    format: int = FORMAT
    id: str
    kind: Kind
    decision: str
    binding_digest: str
    answered_at: datetime
    via: str
    pid: int
    user: str
    text: str | None = None
    reason: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)

    @property
    def is_tombstone(self) -> bool:
        """Whether the slot was claimed by the asker or a sweeper rather than a person."""
        return self.decision in TOMBSTONES


@attrs.frozen(kw_only=True)
class Settled:
    """`ID.settled.json`: what applying the decision did. The first one written wins."""

    format: int = FORMAT
    id: str
    kind: Kind
    outcome: Outcome
    settled_at: datetime
    by: str
    decision: str | None = None
    result: str | None = None
    reason: str | None = None
    delivery: Delivery | None = None
    extra: Mapping[str, Any] = attrs.field(factory=_no_extra)


@attrs.frozen(kw_only=True)
class Group:
    """The files of one ID as read from disk; any may be missing."""

    id: str
    request: Request | None = None
    answer: Answer | None = None
    settled: Settled | None = None


@attrs.frozen(kw_only=True)
class Status:
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


@attrs.frozen(kw_only=True)
class Problem:
    """An entry the channel skipped: never acted on, reported by the doctor."""

    name: str
    reason: str


@attrs.frozen(kw_only=True)
class AnswerResult:
    """Who holds the answer slot after an attempt: this caller (``won``) or an earlier one."""

    won: bool
    answer: Answer


@attrs.frozen(kw_only=True)
class SettleResult:
    """Who wrote the outcome: this caller (``won``) or an earlier one."""

    won: bool
    settled: Settled
