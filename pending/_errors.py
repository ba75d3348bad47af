"""Every refusal the channel makes, one type each.

Each message says what happened and ends by saying what to do. The channel knows nothing of
the CLI, so the remedies here are phrased in the channel's own terms; a face may render a
better one from the attributes (for example the right command for a :class:`WrongKind`).
"""

from __future__ import annotations

import errno
import os

from pending._clock import format_time
from pending._names import Kind

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from pending._records import Answer, Settled


class PendingError(Exception):
    """Base of every refusal the channel makes."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ChannelUnsafe(PendingError):
    """The channel directory (or WISP_HOME) must not be trusted as it is."""

    def __init__(self, path: str, problem: str, fix: str) -> None:
        super().__init__(f"refusing to use {path}: {problem}. To fix it: {fix}")
        self.path = path
        self.problem = problem
        self.fix = fix


class ChannelUnavailable(PendingError):
    """The channel directory could not be opened or created (not a trust problem)."""

    def __init__(self, path: str, cause: str, fix: str | None = None) -> None:
        super().__init__(
            f"cannot use the pending channel at {path}: {cause}. "
            + (
                fix
                or "Check that the path exists and is writable, or set WISP_HOME to a "
                "directory of yours."
            )
        )
        self.path = path


class ChannelUnwritable(PendingError):
    """The channel's directory could not be written: a full disk, a read-only mount, an
    immutable directory, an I/O error. Raised by publication, removal and locking; nothing
    is ever left half-written under a final name (a staged copy may stay in `.tmp/`, where
    readers never look and the next sweep removes it)."""

    def __init__(self, path: str, action: str, error: OSError) -> None:
        code = error.errno
        cause = error.strerror or str(error)
        name = errno.errorcode.get(code, "") if code is not None else ""
        shown = f"{cause} [{name}]" if name else cause
        directory = os.path.dirname(path) or path
        super().__init__(f"could not {action} {path}: {shown}. {remedy_for(code, directory)}")
        self.path = path
        self.action = action
        self.errno = code
        self.cause = cause


# What the system, not any file, ran out of: this process's open files, the system's, memory.
# An error with one of these says nothing about the file it happened on: it is never reported
# as that file being unreadable or unsafe, but passed on as it is, for a face to say
# (:func:`resource_shortage`).
RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})


def resource_shortage(error: BaseException) -> str | None:
    """What a person is told of *error* if it is a resource limit reached (one of
    :data:`RESOURCE_ERRNOS`): the limit, and how to raise it. None for anything else."""
    code = error.errno if isinstance(error, OSError) else None
    if code == errno.EMFILE:
        limit = _open_files_limit()
        now = f", now {limit}" if limit is not None else ""
        return (
            f"this process ran out of open files: the limit on them (`ulimit -n`{now}) is too "
            "low. Raise it (`ulimit -n 1024`) and run it again"
        )
    if code == errno.ENFILE:
        return (
            "the system ran out of open files (its limit, `sysctl fs.file-max`, is reached): "
            "close some programs, or raise the limit, and run it again"
        )
    if code in (errno.ENOMEM, errno.ENOBUFS):
        return (
            "the system ran out of memory (or a limit on it, `ulimit -v`, is reached): free "
            "some, or raise the limit, and run it again"
        )
    return None


def _open_files_limit() -> str | None:
    """The soft limit on open files, None if it cannot be told: loaded only when the limit is
    reached, `resource` may not load then (its shared object needs a descriptor too)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


def remedy_for(code: int | None, directory: str) -> str:
    """What to do about a write that failed with *code* in *directory* (one sentence or two)."""
    shortage = resource_shortage(OSError(code, "")) if code is not None else None
    if shortage is not None:
        return f"Not the fault of {directory}: {shortage}."
    if code in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"The disk (or your quota) is full: free some space where {directory} lives "
            f"(`df -h {directory}`), then try again."
        )
    if code == errno.EROFS:
        return (
            "Its filesystem is mounted read-only: remount it read-write, or set WISP_HOME to "
            "a directory on a writable disk."
        )
    if code in (errno.EPERM, errno.EACCES):
        return (
            f"The directory refuses writes: check its permissions and attributes "
            f"(`ls -ld {directory}`, `lsattr -d {directory}`; an immutable flag is cleared with "
            f"`chattr -i {directory}`). Hard links must work there too (`wisp docs channel`)."
        )
    if code == errno.EIO:
        return (
            "The disk reported an I/O error: check the system log (`dmesg`) and the disk "
            "before trusting it again."
        )
    return f"Check that {directory} is on a local, writable disk (see `wisp doctor`)."


class InvalidId(PendingError):
    """A request ID that is not 8-32 lowercase hex characters (never used in a path)."""

    def __init__(self, text: str) -> None:
        shown = text if len(text) <= 40 else text[:40] + "…"
        super().__init__(
            f"{shown!r} is not a request ID: an ID is 8 to 32 lowercase hex characters "
            "(like a1b2c3d4). Copy the ID from the list of waiting requests."
        )
        self.text = text


class RecordTooLarge(PendingError):
    """A record that would be over the cap every reader holds it to (as written: its text
    UTF-8 encoded and JSON-escaped, so a control character counts six bytes): refused before
    anything is written, for a reader would refuse it once published."""

    def __init__(self, what: str, size: int, cap: int) -> None:
        super().__init__(
            f"this {what} would be {size:,} bytes as written (its text as escaped JSON), over "
            f"the {cap:,}-byte ({cap // 1024} KiB) cap on one record of the channel, so nothing "
            "was written, announced or recorded. Shorten it (a long script or text can go in a "
            "file, and the request name the file)."
        )
        self.what = what
        self.size = size
        self.cap = cap


class UnknownRequest(PendingError):
    def __init__(self, request_id: str) -> None:
        super().__init__(
            f"no request {request_id} in the pending channel. It may have been swept after it "
            "ended, or the ID is mistyped: list the waiting requests to find it."
        )
        self.request_id = request_id


class UnreadableRequest(PendingError):
    """The request's file exists but is not one the channel will act on."""

    def __init__(self, request_id: str, problem: str) -> None:
        super().__init__(
            f"request {request_id} cannot be read safely ({problem}), so it will not be acted on. "
            "Look at it with the doctor, and remove the file if you did not expect it."
        )
        self.request_id = request_id
        self.problem = problem


class WrongKind(PendingError):
    """An answer of one kind given to a request of another (a fact answered as a command)."""

    def __init__(self, request_id: str, kind: Kind, asked_as: Kind, decisions: tuple[str, ...]):
        super().__init__(
            f"request {request_id} is a {kind} request, not a {asked_as} request. "
            f"Answer it as a {kind}: {' or '.join(decisions)}."
        )
        self.request_id = request_id
        self.kind = kind
        self.asked_as = asked_as


class InvalidDecision(PendingError):
    def __init__(self, request_id: str, problem: str, remedy: str) -> None:
        super().__init__(f"cannot answer {request_id}: {problem}. {remedy}")
        self.request_id = request_id
        self.problem = problem


class AlreadyAnswered(PendingError):
    """The slot is taken by a person's answer: the first answer won."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(
            f"request {answer.id} was already answered {answer.decision!r} by {answer.user} "
            f"(via {answer.via}, pid {answer.pid}) at {format_time(answer.answered_at)}. "
            "The first answer stands; nothing more to do."
        )
        self.answer = answer


class AlreadySettled(PendingError):
    """The request has ended (answered and applied, timed out, withdrawn, failed, or stale)."""

    def __init__(self, settled: Settled, answer: Answer | None = None) -> None:
        detail = f" ({settled.reason})" if settled.reason else ""
        ended = format_time(settled.settled_at)
        if answer is not None and not answer.is_tombstone:
            result = f"; result {settled.result}" if settled.result else ""
            message = (
                f"request {settled.id} was already answered {answer.decision!r} by "
                f"{answer.user} (via {answer.via}) at {format_time(answer.answered_at)}, and "
                f"has ended ({settled.outcome}{result}){detail} at {ended}"
            )
        else:
            decision = f" {settled.decision!r}" if settled.decision else ""
            message = (
                f"request {settled.id} has already ended: {settled.outcome}{decision}{detail} "
                f"at {ended}"
            )
        super().__init__(f"{message}. It takes no more answers; nothing to do.")
        self.settled = settled
        self.answer = answer


class StaleRequest(PendingError):
    """The request can no longer be answered: its asker is gone, or it expired."""

    def __init__(self, request_id: str, reason: str) -> None:
        super().__init__(
            f"request {request_id} is stale: {reason}. Nobody is waiting for an answer; "
            "if it still matters, ask again from the program that needs it."
        )
        self.request_id = request_id
        self.reason = reason


class RequestChanged(PendingError):
    """The request on disk no longer says what the person was shown."""

    def __init__(self, request_id: str) -> None:
        super().__init__(
            f"request {request_id} changed after it was shown to you, so your answer was not "
            "recorded. Look at it again before answering."
        )
        self.request_id = request_id


class IdCollision(PendingError):
    def __init__(self, request_id: str) -> None:
        super().__init__(
            f"a request with ID {request_id} already exists; nothing was filed. "
            "File it again with a fresh ID."
        )
        self.request_id = request_id
