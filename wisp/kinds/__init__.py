"""Each kind in one place: a :class:`KindView` per kind, which every face asks.

`command`, `fact`, `question` and `tool` are the kinds wisp has; :func:`view` finds a kind's view.
Adding a kind is its row in :data:`pending.KINDS`, its binding record, and its one module
here, registered with :func:`register` (docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pending import Kind
from wisp.kinds import command, fact, question, tool
from wisp.kinds._view import Answering, KindView, Rows, numbered

if TYPE_CHECKING:
    from pending import Request

__all__ = [
    "Answering",
    "KindView",
    "Rows",
    "notice_for",
    "numbered",
    "register",
    "unregister",
    "view",
    "views",
]

_VIEWS: dict[Kind, KindView] = {}


def register(kind_view: KindView) -> None:
    """Make *kind_view* the view of its kind, for every face."""
    _VIEWS[kind_view.kind] = kind_view


def unregister(kind: Kind) -> None:
    """Forget *kind*'s view (a throwaway kind, after its test)."""
    _VIEWS.pop(kind, None)


def view(kind: Kind) -> KindView:
    """*kind*'s view; KeyError for a kind no module here describes."""
    return _VIEWS[kind]


def views() -> list[KindView]:
    """Every kind's view, in the order the kinds were registered."""
    return list(_VIEWS.values())


def notice_for(request: Request) -> tuple[str, str, str, dict[str, Any], str]:
    """The notification a request gets, the same for every route: title, message, subtitle
    (who asks), the request's audit fields, and its source (as its kind's view says)."""
    # Imported here: every command group reads the views as it is declared; only a notice
    # needs the audit log's fields (and the records under them).
    from wisp.audit.writer import request_fields

    server, kind_view = request.server, view(request.kind)
    who = [*kind_view.asker_parts(request.binding), server.client or "wisp"]
    if server.thread:
        who.append(f"thread {server.thread}")
    fields = request_fields(request)
    return request.title, request.body, " · ".join(who), fields, kind_view.notice_source


for _module in (command, fact, question, tool):
    register(_module.VIEW)
