"""wisp: the application built on the pending channel.

For programs that need a person: :class:`Asker` (one asking server), :class:`ApprovalGate`
(may this command run?), :class:`QuestionAsker`, and :class:`FactKeeper` (keep this fact?);
for a server an agent reaches the person through, :class:`AgentSession` (all of those for the
server's life, with its threads' and session's facts in a :class:`FactBook`). The `wisp`
command is :mod:`wisp.cli`; `wisp mcp` (:mod:`wisp.mcp`) is an AgentSession's MCP face.
"""

import importlib as _importlib
import typing as _typing

from wisp._version import __version__

# Where each public name lives. Loaded on first use (PEP 562), so that `wisp --version` or a
# listing pays for no watcher, no asyncio and no metadata scan it does not use.
_HOMES = {
    "AgentSession": "wisp._agentsession",
    "AnswerFate": "wisp._answering",
    "AnswerReport": "wisp._answering",
    "Answerer": "wisp._answering",
    "Applier": "wisp._asking",
    "Approval": "wisp._asking",
    "ApprovalGate": "wisp._asking",
    "ApprovalOutcome": "wisp._asking",
    "Asker": "wisp._asking",
    "AuditEvent": "wisp._audit",
    "AuditLogUnsafe": "wisp._audit",
    "Cancel": "wisp._asking",
    "DeadlineError": "wisp._deadlines",
    "Ending": "wisp._asking",
    "EntryPoint": "wisp._entry",
    "Fact": "wisp._factstore",
    "FactBook": "wisp._threadfacts",
    "FactKeeper": "wisp._keeper",
    "FactRefused": "wisp._factstore",
    "FactScope": "wisp._factids",
    "FactStore": "wisp._factstore",
    "Grant": "wisp._grants",
    "GrantStore": "wisp._grants",
    "Inbox": "wisp._answering",
    "KeepRequest": "wisp._keeper",
    "KeepState": "wisp._keeper",
    "NoteFact": "wisp._threadfacts",
    "Notifier": "wisp._notify",
    "QuestionAsker": "wisp._asking",
    "Reply": "wisp._asking",
    "ReplyOutcome": "wisp._asking",
    "StoreError": "wisp._store",
    "UnknownFact": "wisp._threadfacts",
    "current_user": "wisp._home",
    "open_channel": "wisp._home",
    "wait_until": "wisp._answering",
    "wisp_home": "wisp._home",
}

if _typing.TYPE_CHECKING:
    from wisp._agentsession import AgentSession
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
    from wisp._audit import AuditEvent, AuditLogUnsafe
    from wisp._deadlines import DeadlineError
    from wisp._entry import EntryPoint
    from wisp._factids import FactScope
    from wisp._factstore import Fact, FactRefused, FactStore
    from wisp._grants import Grant, GrantStore
    from wisp._home import current_user, open_channel, wisp_home
    from wisp._keeper import FactKeeper, KeepRequest, KeepState
    from wisp._notify import Notifier
    from wisp._store import StoreError
    from wisp._threadfacts import FactBook, NoteFact, UnknownFact


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
    "AgentSession",
    "AnswerFate",
    "AnswerReport",
    "Answerer",
    "Applier",
    "Approval",
    "ApprovalGate",
    "ApprovalOutcome",
    "Asker",
    "AuditEvent",
    "AuditLogUnsafe",
    "Cancel",
    "DeadlineError",
    "Ending",
    "EntryPoint",
    "Fact",
    "FactBook",
    "FactKeeper",
    "FactRefused",
    "FactScope",
    "FactStore",
    "Grant",
    "GrantStore",
    "Inbox",
    "KeepRequest",
    "KeepState",
    "NoteFact",
    "Notifier",
    "QuestionAsker",
    "Reply",
    "ReplyOutcome",
    "StoreError",
    "UnknownFact",
    "__version__",
    "current_user",
    "open_channel",
    "wait_until",
    "wisp_home",
]
