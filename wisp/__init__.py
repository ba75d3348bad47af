"""wisp: the application built on the pending channel.

For programs that need a person: :class:`Asker` (one asking server), :class:`ApprovalGate`
(may this command run?), :class:`QuestionAsker`, and :class:`FactKeeper` (keep this fact?).
The `wisp` command is :mod:`wisp.cli`.
"""

import importlib as _importlib
import typing as _typing

from wisp._version import __version__

# Where each public name lives. Loaded on first use (PEP 562), so that `wisp --version` or a
# listing pays for no watcher, no asyncio and no metadata scan it does not use.
_HOMES = {
    "AnswerFate": "wisp._answering",
    "AnswerReport": "wisp._answering",
    "Answerer": "wisp._answering",
    "Applier": "wisp._asking",
    "Approval": "wisp._asking",
    "ApprovalGate": "wisp._asking",
    "ApprovalOutcome": "wisp._asking",
    "Asker": "wisp._asking",
    "AuditEvent": "wisp._audit",
    "Cancel": "wisp._asking",
    "DeadlineError": "wisp._deadlines",
    "Ending": "wisp._asking",
    "EntryPoint": "wisp._audit",
    "Fact": "wisp._factstore",
    "FactKeeper": "wisp._keeper",
    "FactRefused": "wisp._factstore",
    "FactStore": "wisp._factstore",
    "Grant": "wisp._grants",
    "GrantStore": "wisp._grants",
    "Inbox": "wisp._answering",
    "KeepRequest": "wisp._keeper",
    "KeepState": "wisp._keeper",
    "Notifier": "wisp._notify",
    "QuestionAsker": "wisp._asking",
    "Reply": "wisp._asking",
    "ReplyOutcome": "wisp._asking",
    "StoreError": "wisp._store",
    "current_user": "wisp._home",
    "open_channel": "wisp._home",
    "wait_until": "wisp._answering",
    "wisp_home": "wisp._home",
}

if _typing.TYPE_CHECKING:
    from wisp._answering import Answerer, AnswerFate, AnswerReport, Inbox, wait_until
    from wisp._asking import (
        Applier,
        Approval,
        ApprovalGate,
        ApprovalOutcome,
        Asker,
        Cancel,
        Ending,
        QuestionAsker,
        Reply,
        ReplyOutcome,
    )
    from wisp._audit import AuditEvent, EntryPoint
    from wisp._deadlines import DeadlineError
    from wisp._factstore import Fact, FactRefused, FactStore
    from wisp._grants import Grant, GrantStore
    from wisp._home import current_user, open_channel, wisp_home
    from wisp._keeper import FactKeeper, KeepRequest, KeepState
    from wisp._notify import Notifier
    from wisp._store import StoreError


def __getattr__(name: str) -> _typing.Any:
    if name in _HOMES:
        value: _typing.Any = getattr(_importlib.import_module(_HOMES[name]), name)
    else:
        raise AttributeError(f"module 'wisp' has no attribute {name!r}")
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AnswerFate",
    "AnswerReport",
    "Answerer",
    "Applier",
    "Approval",
    "ApprovalGate",
    "ApprovalOutcome",
    "Asker",
    "AuditEvent",
    "Cancel",
    "DeadlineError",
    "Ending",
    "EntryPoint",
    "Fact",
    "FactKeeper",
    "FactRefused",
    "FactStore",
    "Grant",
    "GrantStore",
    "Inbox",
    "KeepRequest",
    "KeepState",
    "Notifier",
    "QuestionAsker",
    "Reply",
    "ReplyOutcome",
    "StoreError",
    "__version__",
    "current_user",
    "open_channel",
    "wait_until",
    "wisp_home",
]
