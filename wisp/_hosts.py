"""The hosts a face serves: what a front end declared in its hello, and what it is told.

A front end (wisp tui, or any program running `wisp relay`) says what it can carry in a
`hello` (seed ADR 0044). Hearing one is audited here, in the application layer, so a face
never writes the audit log itself; and the notification a new request gets is worded here,
the same for every route.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from pending import Request
from wisp._audit import AuditEvent, EntryPoint, audit, request_fields
from wisp.kinds import view


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


def notice_for(request: Request) -> tuple[str, str, str, dict[str, Any], str]:
    """The notification a request gets: title, message, subtitle, the request's audit fields,
    and its source (`approval` for commands and facts, `inquiry` for questions)."""
    server, kind_view = request.server, view(request.kind)
    who = [*kind_view.asker_parts(request.binding), server.client or "wisp"]
    if server.thread:
        who.append(f"thread {server.thread}")
    fields = request_fields(request)
    return request.title, request.body, " · ".join(who), fields, kind_view.notice_source
