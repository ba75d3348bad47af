"""A record's timestamp read back: the one place a date is parsed.

Apart from :mod:`pending._clock`, which every hook imports and which loads no `datetime`
(~5.6 M instructions a hook that stamps one audit record never needs): what reads records
(listings, the converter, the grant store) imports this, and `datetime` with it, once.
"""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(text: str) -> datetime:
    """Parse a record's timestamp; a time without a zone is refused (it would be ambiguous)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no time zone")
    # Records write UTC (`Z`): already in it, no second datetime is built for each one read.
    return moment if moment.tzinfo is UTC else moment.astimezone(UTC)
