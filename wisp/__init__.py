"""wisp: the application built on the pending channel.

For programs that need a person: :class:`Asker` (one asking server), :class:`ApprovalGate`
(may this command run?), :class:`QuestionAsker`, and :class:`FactKeeper` (keep this fact?).
The `wisp` command is :mod:`wisp.cli`.
"""

from importlib.metadata import PackageNotFoundError as _NotInstalled
from importlib.metadata import version as _version

from wisp._asking import Approval, ApprovalGate, Asker, Ending, QuestionAsker, Reply
from wisp._facts import Fact, FactKeeper, FactRefused, FactStore, KeepRequest
from wisp._grants import Grant, GrantStore
from wisp._notify import Notifier

try:
    __version__ = _version("wisp-pending")
except _NotInstalled:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "Approval",
    "ApprovalGate",
    "Asker",
    "Ending",
    "Fact",
    "FactKeeper",
    "FactRefused",
    "FactStore",
    "Grant",
    "GrantStore",
    "KeepRequest",
    "Notifier",
    "QuestionAsker",
    "Reply",
    "__version__",
]
