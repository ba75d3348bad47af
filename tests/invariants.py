"""What must hold of a channel on disk, whatever crashed or failed: checked by the fault,
crash-point and model suites after every step (independently of the rules under test)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pending import TOMBSTONES, Answer, Channel, Kind, Outcome, Settled

# A person's answer settles as answered (applied), failed (not applicable), or stale (its
# asker died before acting on it); the decision is kept in each.
PERSON_OUTCOMES = frozenset({Outcome.ANSWERED, Outcome.FAILED, Outcome.STALE})


def slot_problem(answer: Answer, settled: Settled) -> str | None:
    """Why an outcome does not follow from the decision in the slot; None if it does."""
    if answer.is_tombstone:
        if settled.outcome is not TOMBSTONES[answer.decision]:
            return f"slot {answer.decision!r} but outcome {settled.outcome}"
        return None
    if settled.outcome not in PERSON_OUTCOMES or settled.decision != answer.decision:
        return f"slot {answer.decision!r} but outcome {settled.outcome} {settled.decision!r}"
    return None


def violations(channel: Channel) -> list[str]:
    """Every broken promise in the channel as it is now (empty when all hold):

    - no temp file and no partial or unreadable file under a final name;
    - one request per ID, and an outcome only after a decision (a slot claimed);
    - an outcome that follows from the decision in its slot (no request in two states);
    - a request never removed before its outcome (removal goes request, answer, outcome);
    - a fact kept at most once per request, and a kept outcome naming the fact it kept.
    """
    found: list[str] = []
    for name in os.listdir(channel.path):
        if not name.startswith(".") and name.endswith(".tmp"):
            found.append(f"a temp file under a final name: {name}")
    groups, problems = channel.scan()
    found.extend(f"unreadable {p.name}: {p.reason}" for p in problems)
    for group in groups:
        if group.settled is not None and group.answer is None and group.request is not None:
            found.append(f"{group.id}: an outcome with no decision in its slot")
        if group.request is None and group.settled is None:
            found.append(f"{group.id}: its request is gone before its outcome")
        if group.answer is not None and group.settled is not None:
            problem = slot_problem(group.answer, group.settled)
            if problem is not None:
                found.append(f"{group.id}: {problem}")
    facts = kept_facts(channel.home)
    by_request: dict[str, list[str]] = {}
    for fact in facts:
        by_request.setdefault(fact["request"], []).append(fact["id"])
    for request_id, kept in by_request.items():
        if len(kept) > 1:
            found.append(f"{request_id}: kept {len(kept)} times ({kept})")
    for group in groups:
        settled = group.settled
        if (
            settled is not None
            and settled.kind is Kind.FACT
            and settled.outcome is Outcome.ANSWERED
            and settled.decision == "keep"
            and by_request.get(group.id) != [settled.result]
        ):
            found.append(f"{group.id}: kept as {settled.result} but the store holds {by_request}")
    return found


def kept_facts(home: Path) -> list[dict[str, Any]]:
    """The permanent facts in `facts.json` as written (empty if there is none)."""
    path = home / "facts.json"
    if not path.exists():
        return []
    facts: list[dict[str, Any]] = json.loads(path.read_text())["facts"]
    return facts


def temp_files(channel: Channel) -> list[str]:
    """What is staged in `.tmp/` (a writer's leftovers, until a sweep removes them)."""
    return sorted(os.listdir(channel.path / ".tmp"))
