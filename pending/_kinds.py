"""The names the channel speaks in, and the one table of request kinds (pure: no I/O).

Everything that differs between kinds is in :data:`KINDS`: the file suffix, the binding record,
the decisions a person may give, whether the request dies with its server, and the commands
that answer it. Adding a kind means a row here, its binding record and its renderer.
"""

from __future__ import annotations

from enum import StrEnum

import attrs

from pending._bindings import Binding, CommandBinding, FactBinding, QuestionBinding


class Kind(StrEnum):
    """What a request asks of the person."""

    COMMAND = "command"
    FACT = "fact"
    QUESTION = "question"


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


class Via(StrEnum):
    """Who wrote an answer (`via`) or an outcome (`by`)."""

    CLI = "cli"
    TUI = "tui"
    RELAY = "relay"
    MCP = "mcp"
    ELICITATION = "elicitation"
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


@attrs.frozen(kw_only=True)
class KindSpec:
    """One row of the kinds table."""

    kind: Kind
    suffix: str  # the request file's suffix
    binding_type: type[Binding]
    decisions: tuple[Decision, ...]  # what a person may answer
    dies_with_server: bool  # stale when its server is gone (else handed over)
    answer_commands: tuple[str, ...]  # how a person answers it, `{id}` for the request's ID
    entry_point: str  # the CLI group (and audit entry point) that answers it

    def how_to_answer(self, request_id: str) -> str:
        """The commands that answer this kind, for a refusal that names the right one."""
        return " or ".join(f"`{c.format(id=request_id)}`" for c in self.answer_commands)


KINDS: dict[Kind, KindSpec] = {
    Kind.COMMAND: KindSpec(
        kind=Kind.COMMAND,
        suffix=".request.json",  # 0.16.0's name: commands were the only kind
        binding_type=CommandBinding,
        decisions=(Decision.ONCE, Decision.SESSION, Decision.PROJECT, Decision.ALWAYS, Decision.NO),
        dies_with_server=True,
        answer_commands=("wisp approvals approve {id}", "wisp approvals deny {id}"),
        entry_point="approvals",
    ),
    Kind.FACT: KindSpec(
        kind=Kind.FACT,
        suffix=".fact.json",
        binding_type=FactBinding,
        decisions=(Decision.KEEP, Decision.DROP),
        dies_with_server=False,  # handed over: whichever process the person answers in applies
        answer_commands=("wisp facts keep {id}", "wisp facts drop {id}"),
        entry_point="facts",
    ),
    Kind.QUESTION: KindSpec(
        kind=Kind.QUESTION,
        suffix=".question.json",
        binding_type=QuestionBinding,
        decisions=(Decision.ANSWER, Decision.DECLINE),
        dies_with_server=True,
        answer_commands=("wisp questions answer {id} TEXT", "wisp questions decline {id}"),
        entry_point="questions",
    ),
}

# The decisions a person may give each kind (read from the table).
DECISIONS: dict[Kind, tuple[str, ...]] = {k: tuple(s.decisions) for k, s in KINDS.items()}
APPROVALS: tuple[str, ...] = tuple(Scope)
BINDING_TYPES: dict[Kind, type[Binding]] = {k: s.binding_type for k, s in KINDS.items()}

# Endings the asker or a sweeper claims the answer slot with, so one slot decides every way a
# request can end before it is applied. Each reads as the outcome of the same name.
TOMBSTONES: dict[str, Outcome] = {
    Decision.TIMED_OUT: Outcome.TIMED_OUT,
    Decision.WITHDRAWN: Outcome.WITHDRAWN,
    Decision.STALE: Outcome.STALE,
}
VIA_ASKER = Via.ASKER
VIA_SWEEP = Via.SWEEP
