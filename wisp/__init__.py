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
    "ANSWERABLE": "wisp.kinds._view",
    "AgentSession": "wisp.agents.session",
    "AnswerFate": "wisp._answering",
    "AnswerReport": "wisp._answering",
    "Answerer": "wisp._answering",
    "Applier": "wisp.kinds._asker",
    "Approval": "wisp.kinds.command_gate",
    "ApprovalGate": "wisp.kinds.command_gate",
    "ApprovalOutcome": "wisp.kinds.command_gate",
    "Asker": "wisp._asking",
    "AuditEvent": "wisp.audit.writer",
    "AuditLogUnsafe": "wisp.audit.writer",
    "Cancel": "wisp._deadlines",
    "DeadlineError": "wisp._deadlines",
    "Ending": "wisp.kinds._asker",
    "EntryPoint": "wisp._entry",
    "Fact": "wisp.stores.facts",
    "FactBook": "wisp.stores.threadfacts",
    "FactKeeper": "wisp.kinds.fact_keeper",
    "FactRefused": "wisp.stores.facts",
    "FactScope": "wisp.stores.factids",
    "FactStore": "wisp.stores.facts",
    "Grant": "wisp.stores.grants",
    "GrantStore": "wisp.stores.grants",
    "Inbox": "wisp._answering",
    "KeepRequest": "wisp.kinds.fact_keeper",
    "KeepState": "wisp.kinds.fact_keeper",
    "NoteFact": "wisp.stores.threadfacts",
    "Notifier": "wisp.routes.notify",
    "QuestionAsker": "wisp.kinds.question_gate",
    "Reply": "wisp.kinds.question_gate",
    "ReplyOutcome": "wisp.kinds.question_gate",
    "StoreError": "wisp.stores.jsonstore",
    "UnknownFact": "wisp.stores.threadfacts",
    "contradicted": "wisp.kinds.fact",
    "current_user": "wisp._home",
    "open_channel": "wisp._home",
    "wait_until": "wisp._answering",
    "wisp_home": "wisp._home",
}

if _typing.TYPE_CHECKING:
    from wisp._answering import Answerer, AnswerFate, AnswerReport, Inbox, wait_until
    from wisp._asking import Asker
    from wisp._deadlines import Cancel, DeadlineError
    from wisp._entry import EntryPoint
    from wisp._home import current_user, open_channel, wisp_home
    from wisp.agents.session import AgentSession
    from wisp.audit.writer import AuditEvent, AuditLogUnsafe
    from wisp.kinds._asker import Applier, Ending
    from wisp.kinds._view import ANSWERABLE
    from wisp.kinds.command_gate import Approval, ApprovalGate, ApprovalOutcome
    from wisp.kinds.fact import contradicted
    from wisp.kinds.fact_keeper import FactKeeper, KeepRequest, KeepState
    from wisp.kinds.question_gate import QuestionAsker, Reply, ReplyOutcome
    from wisp.routes.notify import Notifier
    from wisp.stores.factids import FactScope
    from wisp.stores.facts import Fact, FactRefused, FactStore
    from wisp.stores.grants import Grant, GrantStore
    from wisp.stores.jsonstore import StoreError
    from wisp.stores.threadfacts import FactBook, NoteFact, UnknownFact


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
    "ANSWERABLE",
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
    "contradicted",
    "current_user",
    "open_channel",
    "wait_until",
    "wisp_home",
]
