"""The decision: one call → allow, deny or ask, and what decided it, in one order — the
self-guard, deny rules, the must-ask classes, the person's grants, allow rules (built-in and
the person's), else ask — one audit record for each call decided here.

(Owned by the `decide` work: issue 57.)
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from wisp.policy.reading import Reading


class Verdict(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class Decider(StrEnum):
    """What decided a call (the audit record's `decider`; `wisp log --decider`)."""

    GUARD = "guard"  # the self-guard: it touches wisp's own channel or program (asked)
    RULE = "rule"  # a rule, built in or the person's or the project's (its name recorded)
    GRANT = "grant"  # a grant (its ID, or `session`)
    PERSON = "person"  # the person's answer (face, device)
    TIMEOUT = "timeout"  # nobody answered in time
    UNREAD = "unread"  # the parser could not read it: asked


class Decision(NamedTuple):
    verdict: Verdict
    decider: Decider
    name: str | None  # the rule's name or the grant's ID
    reason: str  # in words, for the harness and the person
    reading: Reading | None = None
