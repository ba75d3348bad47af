"""A decided call's words, and the calls decided without asking, live: what a live view
(`wisp relay`, and so `wisp tui`; `wisp web`) shows of the `call.decided` records as the
audit log takes them — "the machine says what it is doing, while it is doing it".

Light on purpose: the verdicts and deciders are read here (the relay's protocol reads its
`decided` line's words with them), without the decision's parser and rules
(:mod:`wisp.policy.decide`, which names them from here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from pending import NamedTuple, StrEnum
from wisp.audit.writer import AuditEvent

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

    from wisp.audit.reader import LogFollower


class Verdict(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class Decider(StrEnum):
    """What decided a call (the audit record's `decider`; `wisp log --decider`). A call put
    to the person is recorded as the person's (or a time-out's), its `asked` field saying
    which of the others put it to them."""

    GUARD = "guard"  # the self-guard: it touches wisp's own channel or program (asked)
    RULE = "rule"  # a rule, built in or the person's or the project's (its name recorded)
    GRANT = "grant"  # a grant (its ID, or `session`)
    PERSON = "person"  # the person's answer (face, device)
    TIMEOUT = "timeout"  # nobody answered in time
    UNREAD = "unread"  # the parser could not read it: asked
    MUST_ASK = "must-ask"  # a must-ask class: asked, no grant covers it
    NO_RULE = "no-rule"  # nothing allowed it: asked
    STOPPED = "stopped"  # the wait was stopped (a signal, the harness gone): denied


# What decides a call without asking anyone: what the live views show as it happens.
WITHOUT_ASKING = frozenset({Decider.RULE, Decider.GRANT})
# What of a `call.decided` record is its writer's own, not the call's: left out when shown.
_ROUTINE = frozenset({"entryPoint", "pid"})


class DecidedCall(NamedTuple):
    """One call decided without asking, as its `call.decided` record says it: its verdict
    and decider read into their enums; every text (the rule's name, the command, the cwd) as
    the record holds it, to be shown made visible, never compared."""

    ts: str
    verdict: Verdict
    decider: Decider
    record: Mapping[str, Any]  # the record, less its writer's own

    def text(self, key: str) -> str | None:
        """One of the record's texts (None when it has none, or not a text)."""
        found = self.record.get(key)
        return found if isinstance(found, str) else None


def decided_call(record: Mapping[str, Any]) -> DecidedCall | None:
    """*record* as a call decided without asking; None for any other record (another event,
    a call put to the person, words this build does not know)."""
    try:
        if AuditEvent(str(record.get("event"))) is not AuditEvent.CALL_DECIDED:
            return None
        verdict = Verdict(str(record.get("verdict")))
        decider = Decider(str(record.get("decider")))
    except ValueError:
        return None
    if decider not in WITHOUT_ASKING or not isinstance(record.get("ts"), str):
        return None
    kept = MappingProxyType({k: v for k, v in record.items() if k not in _ROUTINE})
    return DecidedCall(ts=record["ts"], verdict=verdict, decider=decider, record=kept)


def follow_decided(
    home: Path,
    take: Callable[[DecidedCall], None],
    *,
    on_error: Callable[[str], None],
    on_warning: Callable[[str], None] | None = None,
) -> LogFollower:
    """Hand each call decided without asking to *take* as the audit log records it, from
    now on (what was recorded before is not), on a thread of its own driven by the log's
    file events (:meth:`wisp.audit.reader.LogFollower.each_new`); it makes nothing in the
    home (a home being removed is not made again). *on_error* is told, in words, if the log
    can no longer be read; *on_warning*, if native watching is unavailable. ``close()`` on
    what it returns ends it. Raises :class:`~wisp.audit.reader.AuditLogError` (or
    :class:`OSError`) if it cannot start."""
    from wisp.audit.reader import LogFollower

    def each(record: dict[str, Any]) -> None:
        found = decided_call(record)
        if found is not None:
            take(found)

    follower = LogFollower(home, on_warning=on_warning, make=False)
    try:
        return follower.each_new(each, on_error=on_error)
    except BaseException:
        follower.close()
        raise
