"""wisp: the application built on the pending channel.

For programs that need a person: :class:`Asker` (one asking server), :class:`ApprovalGate`
(may this command run?), :class:`QuestionAsker`, and :class:`FactKeeper` (keep this fact?).
The `wisp` command is :mod:`wisp.cli`.
"""

from importlib.metadata import PackageNotFoundError as _NotInstalled
from importlib.metadata import version as _version

from wisp._answering import Answerer, AnswerReport, AskerWatch, Inbox, wait_until
from wisp._asking import Approval, ApprovalGate, Asker, Cancel, Ending, QuestionAsker, Reply
from wisp._audit import AuditEvent, EntryPoint
from wisp._deadlines import DeadlineError
from wisp._factstore import Fact, FactRefused, FactStore
from wisp._grants import Grant, GrantStore
from wisp._home import current_user, open_channel, wisp_home
from wisp._keeper import FactKeeper, KeepRequest
from wisp._notify import Notifier
from wisp._store import StoreError

try:
    __version__ = _version("wisp-pending")
except _NotInstalled:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AnswerReport",
    "Answerer",
    "Approval",
    "ApprovalGate",
    "Asker",
    "AskerWatch",
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
    "Notifier",
    "QuestionAsker",
    "Reply",
    "StoreError",
    "__version__",
    "current_user",
    "open_channel",
    "wait_until",
    "wisp_home",
]
