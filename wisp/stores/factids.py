"""The fact-ID scheme: a fact's ID says where it lives by its first letter.

`p…` is one of the person's permanent facts (`$WISP_HOME/facts.json`), `c…` a thread's, `s…`
the asking server's session's. An ID moves with its fact: a fact moved to another scope gets a
new ID with that scope's letter. Everything that mints, reads or checks such an ID asks here.
"""

from __future__ import annotations

from enum import StrEnum

PERMANENT_PREFIX = "p"
THREAD_PREFIX = "c"
SESSION_PREFIX = "s"
_RANDOM_BYTES = 4  # a minted ID's random part: 8 hex characters after its letter


class FactScope(StrEnum):
    """Where a fact lives: a thread, the server's session, or the person's store."""

    THREAD = "thread"
    SESSION = "session"
    PERMANENT = "permanent"


PREFIXES: dict[FactScope, str] = {
    FactScope.THREAD: THREAD_PREFIX,
    FactScope.SESSION: SESSION_PREFIX,
    FactScope.PERMANENT: PERMANENT_PREFIX,
}
_SCOPE_OF_PREFIX = {prefix: scope for scope, prefix in PREFIXES.items()}
# The scopes a caller may ask the person to keep a fact from (a permanent one is kept already).
ASKABLE_SCOPES = (FactScope.THREAD, FactScope.SESSION)


def new_fact_id(scope: FactScope) -> str:
    """A fresh random ID for a fact in *scope*: its letter, then 8 hex characters."""
    import secrets  # here, not at import: it loads hmac and OpenSSL, ~20 M instructions

    return PREFIXES[scope] + secrets.token_hex(_RANDOM_BYTES)


def fact_id_of(scope: FactScope, tail: str | int) -> str:
    """The ID of a fact in *scope* whose ID ends in *tail* (a serial number, say)."""
    return f"{PREFIXES[scope]}{tail}"


def scope_of(fact_id: str) -> FactScope | None:
    """Where the fact *fact_id* lives, by its letter; None for no fact ID at all."""
    return _SCOPE_OF_PREFIX.get(fact_id[:1])


def is_permanent(fact_id: str) -> bool:
    """Whether *fact_id* names one of the person's permanent facts."""
    return scope_of(fact_id) is FactScope.PERMANENT


def asked_from(fact_id: str) -> FactScope | None:
    """The scope a fact asked about lives in (thread or session); None for any other ID."""
    scope = scope_of(fact_id)
    return scope if scope in ASKABLE_SCOPES else None
