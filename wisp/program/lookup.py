"""Finding what a person means from what they type: a request, a kept fact or a grant by its
ID or a unique prefix of it (one rule for all three, :class:`IdRule`), and a question's option
by its number.

Typed text is checked to be hex before anything is looked up, and a prefix is matched only
against the names the channel lists: no path is ever built from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Sequence
from contextlib import suppress
from typing import NamedTuple

from pending import (
    Answer,
    Channel,
    Kind,
    PendingError,
    QuestionBinding,
    Request,
    Status,
    UnknownRequest,
    is_valid_id,
)
from wisp._errors import WispError
from wisp._render import asked
from wisp.kinds import ANSWERABLE
from wisp.stores.factids import PERMANENT_PREFIX

# The fewest characters a prefix may have: four hex characters tell 65,536 IDs apart, enough
# for the handful of requests one person has waiting, and few enough to type on a phone.
PREFIX_MIN_CHARS = 4
ID_MAX_CHARS = 32
# Typed after a whole ID, it names that ID alone, though longer IDs start with it: the one
# way to name an ID that is itself the start of another (`wisp show 55104375.`). A dot has
# no meaning to any shell, and is never part of an ID.
EXACT_MARK = "."
_HEX = re.compile(r"[0-9a-f]+")


class LookupRefused(WispError):
    """What was typed names no single request or fact; the message says what to do."""


class IdRule(NamedTuple):
    """How one sort of ID a person types is written: its leading letter (none for a
    request), an example, and the command that lists them. The rule itself is one for all:
    the whole ID, or its start — the letter and at least PREFIX_MIN_CHARS hex characters —
    in any case, naming one ID only (see :func:`unique`)."""

    lead: str
    example: str
    lists: str

    def said(self) -> str:
        """The rule, in the words every refusal uses."""
        start = f"{self.lead} and " if self.lead else ""
        after = f" after the {self.lead}" if self.lead else ""
        return (
            f"type its whole ID (like {self.example}) or its start: {start}at least "
            f"{PREFIX_MIN_CHARS} hex characters{after}, in any case"
        )


RULES = {
    "request": IdRule(
        lead="",
        example="a1b2c3d4",
        lists="`wisp pending` lists the waiting requests (`wisp pending --all`, the ended too).",
    ),
    "fact": IdRule(
        lead=PERMANENT_PREFIX,
        example="p1a2b3c4d",
        lists="`wisp facts list` lists your permanent facts.",
    ),
    "grant": IdRule(
        lead="g",
        example="g1a2b3c4d",
        lists="`wisp approvals grants` lists your standing approvals.",
    ),
}


class NotAnId(LookupRefused):
    def __init__(self, typed: str, *, what: str = "request") -> None:
        shown = typed if len(typed) <= 40 else typed[:40] + "…"
        rule = RULES[what]
        super().__init__(f"{shown!r} is not a {what} ID: {rule.said()}. {rule.lists}")
        self.typed = typed


_GONE = {
    "request": "It may have ended and been swept",
    "fact": "It may have been forgotten",
    "grant": "It may have been revoked",
}


class NoMatch(LookupRefused):
    def __init__(self, typed: str, *, what: str = "request") -> None:
        super().__init__(
            f"no {what} {typed} here. {_GONE[what]}, or the ID is mistyped: {RULES[what].lists}"
        )
        self.typed = typed


class Ambiguous(LookupRefused):
    """A prefix more than one ID starts with; ``candidates`` are those IDs, described. An ID
    typed whole that is also the start of a longer one is refused as well (what was typed
    for the longer one would otherwise act on the shorter); the message says how to name it."""

    def __init__(self, typed: str, candidates: Sequence[tuple[str, str]]) -> None:
        listed = "; ".join(f"{cid} ({about})" for cid, about in candidates)
        whole = (
            f" (for {typed} itself, type {typed}{EXACT_MARK})"
            if any(cid == typed for cid, _ in candidates)
            else ""
        )
        super().__init__(
            f"{typed} is the start of {len(candidates)} IDs: {listed}. Type more of the one "
            f"you mean{whole}."
        )
        self.typed = typed
        self.candidates = tuple(cid for cid, _ in candidates)


class NotAnOption(LookupRefused):
    pass


def typed_hex(typed: str, *, what: str = "request", exact: bool = False) -> str:
    """*typed* lowercased, if it is the lead of *what*'s :class:`IdRule` then 4 to 32 hex
    characters (then, if *exact* is allowed, perhaps :data:`EXACT_MARK`); else
    :class:`NotAnId`."""
    lead = RULES[what].lead
    text = typed.strip().lower()
    digits = text.removeprefix(lead) if lead else text
    if exact:
        digits = digits.removesuffix(EXACT_MARK)
    if (
        (lead and not text.startswith(lead))
        or not PREFIX_MIN_CHARS <= len(digits) <= ID_MAX_CHARS
        or not _HEX.fullmatch(digits)
    ):
        raise NotAnId(typed, what=what)
    return text


def unique(typed: str, ids: Iterable[tuple[str, str]], *, what: str = "request") -> str:
    """The one ID in *ids* ((id, description) pairs) that *typed* (already lowercased) begins,
    or, if *typed* ends with :data:`EXACT_MARK`, is; :class:`NoMatch` or :class:`Ambiguous`
    otherwise. A whole ID is no exception: if a longer ID starts with it too, it is refused,
    naming both (typed for the longer one, it must not act on the shorter)."""
    text = typed.removesuffix(EXACT_MARK)
    whole = text != typed
    found = [
        (cid, about) for cid, about in ids if cid == text or (not whole and cid.startswith(text))
    ]
    if not found:
        raise NoMatch(text, what=what)
    if len(found) > 1:
        raise Ambiguous(text, sorted(found))
    return found[0][0]


def find_request(channel: Channel, typed: str) -> Status:
    """The request *typed* names: its whole ID or a unique prefix, in any case (an ID that is
    the start of another, with :data:`EXACT_MARK` after it). Raises :class:`LookupRefused`
    (and :class:`pending.UnreadableRequest` for a request whose files cannot be read
    safely). Only the IDs that start with what was typed are read."""
    text = typed_hex(typed, exact=True)
    start = text.removesuffix(EXACT_MARK)
    scanned = channel.scan(only=lambda request_id: request_id.startswith(start))
    statuses = {s.id: s for s in channel.listing(scanned=scanned).statuses}
    if start not in statuses and is_valid_id(start):
        with suppress(UnknownRequest):  # no file holds it: NoMatch, below
            channel.status(start)  # files it cannot read: UnreadableRequest says why
    request_id = unique(text, ((s.id, describe(s)) for s in statuses.values()))
    return statuses[request_id]


def answerable(
    channel: Channel, *, kinds: Collection[Kind] | None = None, prefix: str = ""
) -> list[Status]:
    """What waits for an answer (of *kinds*), whose ID starts with *prefix*; reads only."""
    start = prefix.lower()
    listing = channel.listing(kinds=kinds, states=ANSWERABLE)
    return [s for s in listing.statuses if s.id.startswith(start)]


def describe(status: Status) -> str:
    """A few words telling one request from another (kind, state, and what it asks)."""
    return f"{status.kind.value}, {status.state.value}: {asked(status.request, 40)}"


def option_answer(request: Request, text: str, *, literal: bool = False) -> str:
    """The answer *text* gives a question: a number picks that option (1 is the first) when
    the question offers options and the number is not itself one of them; *literal* takes
    the text as it is. Raises :class:`NotAnOption` for a number with no option."""
    binding = request.binding
    if literal or not isinstance(binding, QuestionBinding) or not binding.options:
        return text
    options = binding.options
    if text in options or not text.strip().isdigit():
        return text
    number = int(text.strip())
    if 1 <= number <= len(options):
        return options[number - 1]
    raise NotAnOption(
        f"question {request.id} has options 1 to {len(options)}, not {number}. Give a "
        f"number from 1 to {len(options)}, or the option's text"
        + (", or --literal to answer the digits as text." if binding.free_text else ".")
    )


def answer_of_this_process(channel: Channel, request_id: str) -> Answer | None:
    """The person's answer in *request_id*'s slot if this process wrote it (after an
    interruption: did the answer get written before it?)."""
    try:
        answer = channel.status(request_id).answer
    except PendingError:
        return None
    if answer is None or answer.is_tombstone or answer.pid != os.getpid():
        return None
    return answer
