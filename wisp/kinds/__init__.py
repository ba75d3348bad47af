"""Each kind in one place: a :class:`KindView` per kind, which every face asks.

`command`, `fact`, `question` and `tool` are the kinds wisp has; :func:`view` finds a kind's view.
Adding a kind is its row in :data:`pending.KINDS`, its binding record, and its one module
here, registered with :func:`register` (docs/architecture.md).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

    from pending import Kind, Request
    from wisp.kinds._view import ANSWERABLE, Answering, KindView, Rows, numbered

__all__ = [
    "ANSWERABLE",
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

# wisp's own kinds, each a module here holding its VIEW. They are loaded when a view is first
# asked for, not with the package: the gate a hook decides a granted call by lives here too
# (`standing.py`) and shows nothing (bench/README.md, issue 41).
_BUILTIN = ("command", "fact", "question", "tool")
_VIEWS: dict[Kind, KindView] = {}
_loaded = False


def _views() -> dict[Kind, KindView]:
    """The views, wisp's own kinds' first (loaded on first use)."""
    global _loaded
    if not _loaded:
        _loaded = True
        added = dict(_VIEWS)
        _VIEWS.clear()
        for name in _BUILTIN:
            module_view: KindView = importlib.import_module(f"wisp.kinds.{name}").VIEW
            _VIEWS[module_view.kind] = module_view
        _VIEWS.update(added)
    return _VIEWS


def register(kind_view: KindView) -> None:
    """Make *kind_view* the view of its kind, for every face."""
    _views()[kind_view.kind] = kind_view


def unregister(kind: Kind) -> None:
    """Forget *kind*'s view (a throwaway kind, after its test)."""
    _views().pop(kind, None)


def view(kind: Kind) -> KindView:
    """*kind*'s view; KeyError for a kind no module here describes."""
    return _views()[kind]


def views() -> list[KindView]:
    """Every kind's view, in the order the kinds were registered."""
    return list(_views().values())


def __getattr__(name: str) -> Any:
    """The view's parts (:class:`KindView`, :class:`Answering`, :class:`Rows`,
    :func:`numbered`, :data:`ANSWERABLE`), loaded on first use (PEP 562)."""
    if name in ("ANSWERABLE", "Answering", "KindView", "Rows", "numbered"):
        return getattr(importlib.import_module("wisp.kinds._view"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
