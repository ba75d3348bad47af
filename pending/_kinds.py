"""The one table of request kinds (pure: no I/O); the names it is written in are
:mod:`pending._names`'s, re-exported here.

Everything the channel knows of a kind is in :data:`KINDS`: the file suffix, the binding
record, the decisions a person may give, and whether the request dies with its server. How a
kind reads to a person and how it is answered is the application's (`wisp/kinds/`): adding a
kind means a row here, its binding record, and its one module there.
"""

from __future__ import annotations

from typing import NamedTuple

from pending._bindings import Binding, CommandBinding, FactBinding, QuestionBinding, ToolBinding
from pending._names import Decision as Decision
from pending._names import Delivery as Delivery
from pending._names import Kind as Kind
from pending._names import Outcome as Outcome
from pending._names import Scope as Scope
from pending._names import State as State
from pending._names import Via as Via


class KindSpec(NamedTuple):
    """One row of the kinds table."""

    kind: Kind
    suffix: str  # the request file's suffix
    binding_type: type[Binding]
    decisions: tuple[Decision, ...]  # what a person may answer
    dies_with_server: bool  # stale when its server is gone (else handed over)
    text_decision: Decision | None = None  # the decision that carries the person's text
    # Its approvals may be wider than the exact call (its binding's `offers`, an answer's
    # `width`: pending._offers).
    widths: bool = False


KINDS: dict[Kind, KindSpec] = {
    Kind.COMMAND: KindSpec(
        kind=Kind.COMMAND,
        suffix=".request.json",  # 0.16.0's name: commands were the only kind
        binding_type=CommandBinding,
        decisions=(Decision.ONCE, Decision.SESSION, Decision.PROJECT, Decision.ALWAYS, Decision.NO),
        dies_with_server=True,
        widths=True,
    ),
    Kind.FACT: KindSpec(
        kind=Kind.FACT,
        suffix=".fact.json",
        binding_type=FactBinding,
        decisions=(Decision.KEEP, Decision.DROP),
        dies_with_server=False,  # handed over: whichever process the person answers in applies
    ),
    Kind.QUESTION: KindSpec(
        kind=Kind.QUESTION,
        suffix=".question.json",
        binding_type=QuestionBinding,
        decisions=(Decision.ANSWER, Decision.DECLINE),
        dies_with_server=True,
        text_decision=Decision.ANSWER,
    ),
    Kind.TOOL: KindSpec(
        kind=Kind.TOOL,
        suffix=".tool.json",  # its own suffix: a build without the kind never sees one
        binding_type=ToolBinding,
        decisions=(Decision.ONCE, Decision.SESSION, Decision.PROJECT, Decision.ALWAYS, Decision.NO),
        dies_with_server=True,
        widths=True,
    ),
}

# Read from the table, kept in step with it by add_kind: the decisions a person may give each
# kind, each kind's binding type and request-file suffix, and the kinds that die with their
# server.
DECISIONS: dict[Kind, tuple[str, ...]] = {}
BINDING_TYPES: dict[Kind, type[Binding]] = {}
REQUEST_SUFFIX: dict[Kind, str] = {}
KIND_BY_SUFFIX: dict[str, Kind] = {}
DIES_WITH_SERVER: set[Kind] = set()
WIDENED: set[Kind] = set()  # the kinds whose approvals may be wider than the exact call
APPROVALS: tuple[str, ...] = tuple(Scope)


def add_kind(spec: KindSpec) -> None:
    """Put *spec* in the table and every index read from it (the four kinds at import; a
    test adds a throwaway one through :func:`pending.testing.throwaway_kind`)."""
    if any(s.suffix == spec.suffix for k, s in KINDS.items() if k is not spec.kind):
        raise ValueError(f"the suffix {spec.suffix!r} is another kind's")
    KINDS[spec.kind] = spec
    DECISIONS[spec.kind] = tuple(spec.decisions)
    BINDING_TYPES[spec.kind] = spec.binding_type
    REQUEST_SUFFIX[spec.kind] = spec.suffix
    KIND_BY_SUFFIX[spec.suffix] = spec.kind
    if spec.dies_with_server:
        DIES_WITH_SERVER.add(spec.kind)
    if spec.widths:
        WIDENED.add(spec.kind)


def remove_kind(kind: Kind) -> None:
    """Take *kind* out of the table and its indexes again (a throwaway kind, after its test)."""
    spec = KINDS.pop(kind)
    for index in (DECISIONS, BINDING_TYPES, REQUEST_SUFFIX):
        index.pop(kind, None)
    KIND_BY_SUFFIX.pop(spec.suffix, None)
    DIES_WITH_SERVER.discard(kind)
    WIDENED.discard(kind)


for _spec in tuple(KINDS.values()):
    add_kind(_spec)

# Endings the asker or a sweeper claims the answer slot with, so one slot decides every way a
# request can end before it is applied. Each reads as the outcome of the same name.
TOMBSTONES: dict[str, Outcome] = {
    Decision.TIMED_OUT: Outcome.TIMED_OUT,
    Decision.WITHDRAWN: Outcome.WITHDRAWN,
    Decision.STALE: Outcome.STALE,
}
VIA_ASKER = Via.ASKER
VIA_SWEEP = Via.SWEEP
