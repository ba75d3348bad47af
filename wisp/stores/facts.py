"""The person's permanent facts: `$WISP_HOME/facts.json`.

Only the person keeps a fact (seed ADR 0048): a fact enters the store when the person answers
`keep` to a fact request, applied by the asker watching it or by the process the person
answered in. The store is keyed by request, so applying one answer twice keeps once.
"""

from __future__ import annotations

import builtins
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from pending import SYSTEM_CLOCK, Clock, FactBinding, format_time, parse_time, record_time
from wisp._errors import WispError
from wisp.audit.writer import AuditEvent, EntryPoint, audit
from wisp.stores.factids import FactScope, new_fact_id
from wisp.stores.jsonstore import JsonStore

FACTS_FILE = "facts.json"
# facts.json's cap: thousands of ordinary facts, or 60 of the longest a request can carry
# (its record's 64 KiB cap); read whole by every listing, and still quick to.
FACTS_MAX_BYTES = 4 * 1024 * 1024
KEPT_BY_PERSON = "person"


class FactRefused(WispError):
    """A fact the keeper will not ask about; the message says why and what to do."""


@attrs.frozen(kw_only=True)
class Fact:
    """A permanent fact: the person's."""

    id: str  # p… (wisp.stores.factids)
    subject: str
    name: str
    value: str
    source: str
    kept_by: str
    kept_at: datetime
    request: str
    via: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "name": self.name,
            "value": self.value,
            "source": self.source,
            "keptBy": self.kept_by,
            "keptAt": format_time(self.kept_at),
            "request": self.request,
            "via": self.via,
        }

    def says(self, subject: str, name: str, value: str) -> bool:
        return (self.subject, self.name, self.value) == (subject, name, value)

    def contradicts(self, subject: str, name: str, value: str) -> bool:
        """Whether this fact gives *subject* *name* a value other than *value*."""
        return (self.subject, self.name) == (subject, name) and self.value != value

    @property
    def said(self) -> str:
        return f"{self.subject} {self.name} = {self.value}"


def _fact_from(item: Any) -> Fact:
    fields = ("id", "subject", "name", "value", "source", "keptBy", "keptAt", "request", "via")
    if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
        raise TypeError("a fact needs " + ", ".join(fields) + " as strings")
    return Fact(
        id=item["id"],
        subject=item["subject"],
        name=item["name"],
        value=item["value"],
        source=item["source"],
        kept_by=item["keptBy"],
        kept_at=parse_time(item["keptAt"]),
        request=item["request"],
        via=item["via"],
    )


class FactStore:
    """`$WISP_HOME/facts.json`: the person's permanent facts."""

    def __init__(self, home: Path, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._store: JsonStore[Fact] = JsonStore(
            home,
            FACTS_FILE,
            "facts",
            load=_fact_from,
            dump=Fact.to_json,
            cap_bytes=FACTS_MAX_BYTES,
            when_full="Forget facts you no longer need (`wisp facts list`, then `wisp facts "
            "forget ID`), then keep it again.",
        )
        self.path = self._store.path

    def list(self) -> list[Fact]:
        return self._store.items()

    def holding(self, subject: str, name: str, value: str) -> Fact | None:
        return next((f for f in self.list() if f.says(subject, name, value)), None)

    def contradicting(self, subject: str, name: str, value: str) -> builtins.list[Fact]:
        """The kept facts that give *subject* *name* another value than *value*: keeping
        *value* as well would leave the store saying two things (the person is warned)."""
        return [f for f in self.list() if f.contradicts(subject, name, value)]

    def check_writable(self) -> None:
        self._store.check_writable()

    def forget(self, fact_id: str, *, entry_point: EntryPoint) -> Fact | None:
        """Remove a permanent fact (the person's decision, audited as the fact leaving the
        permanent scope); the fact removed, or None if there is none by that ID."""
        with self._store.locked() as home_fd:
            facts = self._store.read(home_fd)
            kept = [f for f in facts if f.id != fact_id]
            if len(kept) == len(facts):
                return None
            self._store.write(home_fd, kept)
        removed = next(f for f in facts if f.id == fact_id)
        audit(
            self._store.home,
            AuditEvent.FACT_SCOPE_CHANGED,
            {
                "kind": "fact",
                "fact": removed.id,
                "permanent": removed.id,
                "subject": removed.subject,
                "name": removed.name,
                "value": removed.value,
                "request": removed.request,
                "from": FactScope.PERMANENT,
                "to": "forgotten",
                "by": KEPT_BY_PERSON,
            },
            entry_point=entry_point,
            clock=self.clock,
        )
        return removed

    def keep(self, binding: FactBinding, *, request: str, via: str) -> tuple[Fact, bool]:
        """Admit a fact as the person's. Keyed by request: a second keep of the same request
        returns the fact the first one kept. Returns the fact and whether it is new."""
        with self._store.locked() as home_fd:
            facts = self._store.read(home_fd)
            for fact in facts:
                if fact.request == request:
                    return fact, False
            fact = Fact(
                id=new_fact_id(FactScope.PERMANENT),
                subject=binding.subject,
                name=binding.name,
                value=binding.value,
                source=binding.source,
                kept_by=KEPT_BY_PERSON,
                kept_at=record_time(self.clock),
                request=request,
                via=via,
            )
            self._store.write(home_fd, [*facts, fact])
            return fact, True
