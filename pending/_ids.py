"""Request IDs and the file names built from them (pure: no I/O).

An ID is 8 to 32 lowercase hex characters and names one request across every kind. Nothing
builds a path from an ID that has not passed :func:`validate_id`.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from typing import NamedTuple

from pending._errors import InvalidId
from pending._kinds import KIND_BY_SUFFIX as KIND_BY_SUFFIX
from pending._kinds import REQUEST_SUFFIX as REQUEST_SUFFIX
from pending._kinds import Kind

ID_MIN_CHARS = 8
ID_MAX_CHARS = 32
NEW_ID_BYTES = 8  # 16 hex characters: collisions are negligible for one person's requests

_ID_RE = re.compile(rf"[0-9a-f]{{{ID_MIN_CHARS},{ID_MAX_CHARS}}}")


class Slot(StrEnum):
    """The role a file plays in an ID's group, named by its suffix."""

    REQUEST = "request"
    ANSWER = "answer"
    SETTLED = "settled"


# A request file's suffix is its kind's (REQUEST_SUFFIX, KIND_BY_SUFFIX: read from the kinds
# table); the answer and the outcome have one suffix for every kind.
ANSWER_SUFFIX = ".answer.json"
SETTLED_SUFFIX = ".settled.json"


def is_valid_id(text: str) -> bool:
    """Whether *text* is a well-formed request ID."""
    return _ID_RE.fullmatch(text) is not None


def validate_id(text: str) -> str:
    """Return *text* if it is a well-formed ID, else raise :class:`InvalidId`."""
    if not is_valid_id(text):
        raise InvalidId(text)
    return text


def new_id() -> str:
    """A fresh random ID."""
    # os.urandom is what secrets.token_hex reads; importing secrets costs every command ~1 ms.
    return os.urandom(NEW_ID_BYTES).hex()


def request_name(request_id: str, kind: Kind) -> str:
    return validate_id(request_id) + REQUEST_SUFFIX[kind]


def answer_name(request_id: str) -> str:
    return validate_id(request_id) + ANSWER_SUFFIX


def settled_name(request_id: str) -> str:
    return validate_id(request_id) + SETTLED_SUFFIX


def lock_name(server_id: str) -> str:
    return validate_id(server_id) + ".lock"


class ParsedName(NamedTuple):
    """A channel file name taken apart: whose ID, which slot, and for a request, which kind."""

    id: str
    slot: Slot
    kind: Kind | None = None


class NameVerdict(StrEnum):
    PARSED = "parsed"
    IGNORED = "ignored"  # a dotfile, or a valid ID with a suffix this build does not know
    BAD = "bad"  # a name that does not parse: reported, never acted on


# The suffixes of the slots that are not a request's (a request's is its kind's: a kind
# registered later, as a test's throwaway kind is, is in KIND_BY_SUFFIX from then on).
SLOT_BY_SUFFIX: dict[str, Slot] = {ANSWER_SUFFIX: Slot.ANSWER, SETTLED_SUFFIX: Slot.SETTLED}


def name_id(name: str) -> tuple[NameVerdict, str | None]:
    """:func:`parse_name`'s verdict, and for a parsed name its ID, without building the
    :class:`ParsedName` (a scan of 10,000 requests needs only their IDs)."""
    if name.startswith("."):
        return NameVerdict.IGNORED, None
    request_id, dot, rest = name.partition(".")
    if not dot or not is_valid_id(request_id):
        return NameVerdict.BAD, None
    suffix = "." + rest
    if suffix in KIND_BY_SUFFIX or suffix in SLOT_BY_SUFFIX:
        return NameVerdict.PARSED, request_id
    return NameVerdict.IGNORED, None


def parse_name(name: str) -> tuple[NameVerdict, ParsedName | None]:
    """Classify a directory entry's name.

    Unknown suffixes on a valid ID are ignored silently, so that a newer build's kinds stay
    invisible to this one (as `.fact.json` was to 0.16.0).
    """
    verdict, request_id = name_id(name)
    if request_id is None:
        return verdict, None
    suffix = name[len(request_id) :]
    kind = KIND_BY_SUFFIX.get(suffix)
    if kind is not None:
        return verdict, ParsedName(id=request_id, slot=Slot.REQUEST, kind=kind)
    return verdict, ParsedName(id=request_id, slot=SLOT_BY_SUFFIX[suffix])
