"""A front end's hello: what it declared it can carry, audited.

A front end (wisp tui, or any program running `wisp relay`) says what it can carry in a
`hello` (seed ADR 0044). Hearing one is audited here, in the application layer, so a face
never writes the audit log itself.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from wisp.audit.writer import AuditEvent, EntryPoint, audit


def hello_heard(
    home: Path,
    *,
    effects: Collection[str],
    ignored: Collection[str],
    client: str | None,
    version: str | None,
    via: str,
    entry_point: EntryPoint,
) -> None:
    """Audit a front end's hello: the effects taken, those ignored, who it is."""
    audit(
        home,
        AuditEvent.HOST_HELLO,
        {
            "effects": sorted(effects),
            "ignored": list(ignored) or None,
            "client": client,
            "version": version,
            "via": via,
        },
        entry_point=entry_point,
    )
