"""The fact kind: keep this fact as permanent? (`wisp facts`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pending import Decision, Kind
from wisp._entry import EntryPoint
from wisp.kinds._view import Answering, KindView, Rows

if TYPE_CHECKING:  # the records are the channel's; a view only reads them
    from pending import FactBinding, Request
    from wisp.stores.facts import Fact


def also_kept(said: str, fact_id: str) -> str:
    """The note after keeping a fact that contradicts the kept fact *fact_id* (which says
    *said*): both are kept now, and how to forget the one that no longer holds. Every face
    that keeps a fact says it in these words (not yet made visible)."""
    return (
        f"you also keep {said} ({fact_id}), which says otherwise. If it no longer holds: "
        f"wisp facts forget {fact_id}"
    )


def contradicted(request: Request, home: Path) -> list[Fact]:
    """The kept facts of *home* that keeping what *request* asks would contradict (the same
    subject and name, another value), which every face warns of: none for a request that asks
    no fact, and none when the facts store cannot be read (a damaged store is reported where
    it is used: keep, list, doctor). Reads only."""
    # Imported here: every command group reads this module's view as it is declared; only a
    # fact request's page reads the facts store (issue 23).
    from pending import FactBinding
    from wisp.stores.facts import FactStore
    from wisp.stores.jsonstore import StoreError

    binding = request.binding
    if not isinstance(binding, FactBinding):
        return []
    try:
        return FactStore(home).contradicting(binding.subject, binding.name, binding.value)
    except StoreError:
        return []


class FactView(KindView):
    kind = Kind.FACT
    group = "facts"
    entry_point = EntryPoint.FACTS
    noun = "a fact to keep as permanent"
    short = "fact"
    title = "wisp: keep as a permanent fact?"
    heading = "Keep as a permanent fact?"
    notice_source = "approval"
    effect = "keep-facts"
    answering = (
        Answering(label="keep", command="wisp facts keep {id}", decisions=(Decision.KEEP,)),
        Answering(label="drop", command="wisp facts drop {id}", decisions=(Decision.DROP,)),
    )
    answered_words: ClassVar[dict[Decision, str]] = {
        Decision.KEEP: "kept",
        Decision.DROP: "dropped",
    }

    def asked(self, binding: FactBinding) -> str:
        return f"{binding.subject} {binding.name} = {binding.value}"

    def details(self, binding: FactBinding) -> Rows:
        return [
            ("fact", self.asked(binding)),
            ("subject", binding.subject),
            ("name", binding.name),
            ("value", binding.value),
            ("source", binding.source),
            ("proposed", f"by {binding.proposed_by} (fact {binding.fact_id})"),
        ]

    def asker_parts(self, binding: FactBinding) -> list[str]:
        return [f"proposed by {binding.proposed_by}"]


VIEW = FactView()
