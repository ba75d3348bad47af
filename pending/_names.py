"""The names the channel speaks in: what a request asks (:class:`Kind`), what an answer
decides, how far an approval reaches, who wrote a record, where a request stands and how it
ended (pure: enums only).

Their own module, loaded without the kinds table and its binding records: a command that only
declares its options with them, or lists an empty channel, pays for no record class (issue
23). The table of kinds is :mod:`pending._kinds`.
"""

from __future__ import annotations

from pending._classes import StrEnum


class Kind(StrEnum):
    """What a request asks of the person."""

    COMMAND = "command"
    FACT = "fact"
    QUESTION = "question"
    TOOL = "tool"


class Decision(StrEnum):
    """What an answer decides: a person's decisions, then the endings that claim the slot."""

    ONCE = "once"
    SESSION = "session"
    PROJECT = "project"
    ALWAYS = "always"
    NO = "no"
    KEEP = "keep"
    DROP = "drop"
    ANSWER = "answer"
    DECLINE = "decline"
    # Tombstones: the asker or a sweeper claims the slot with one (see TOMBSTONES).
    TIMED_OUT = "timed-out"
    WITHDRAWN = "withdrawn"
    STALE = "stale"


class Scope(StrEnum):
    """How far a command's approval reaches (the approving decisions)."""

    ONCE = "once"
    SESSION = "session"
    PROJECT = "project"
    ALWAYS = "always"


class Width(StrEnum):
    """How wide an approval reaches beyond its scope's time and place: the exact call, "this
    command with any arguments" (its first words), "edits to this file", "edits in this
    project". A request offers the widths it takes (its binding's `offers`); an answer names
    the one it gives (its `width`; none: the exact call)."""

    EXACT = "exact"
    COMMAND = "command"
    FILE = "file"
    PROJECT = "project"


class Via(StrEnum):
    """Who wrote an answer (`via`) or an outcome (`by`)."""

    CLI = "cli"
    TUI = "tui"
    RELAY = "relay"
    MCP = "mcp"
    ELICITATION = "elicitation"
    WEB = "web"  # `wisp web`: a paired device's browser (the audit names the device)
    ASKER = "asker"
    SWEEP = "sweep"


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
