"""The audit log: one JSON object per line in `$WISP_HOME/logs/audit.jsonl`.

Each record is written with a single `write(2)` on an `O_APPEND` descriptor, under an
exclusive `flock`, so concurrent writers never interleave within a line. Auditing never fails
the action it records: a log that cannot be written is reported on stderr, once per process.

The log is opened as the channel opens its files: never through a symlink, never blocking (a
FIFO put at its name with nobody reading would hang every command that audits), and appended
to only when it is a regular file of the caller's with one link (a hard link to another
user's log would take their records, fact values included). A log that is none of these is
refused: :func:`check_log` says so before an asker files or an answerer answers, so the
command exits 2 with nothing written (:class:`AuditLogUnsafe`).
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import fcntl
import json
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from pending import (
    SYSTEM_CLOCK,
    Clock,
    PendingError,
    StrEnum,
    format_now,
    kept_encoder,
    open_private_dir,
)
from wisp._entry import EntryPoint as EntryPoint
from wisp._errors import WispError

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:  # the records: not loaded by a hook that audits a grant's allow (issue 41)
    from typing import Any

    from pending import Outcome, Request

LOGS_DIR = "logs"
AUDIT_FILE = "audit.jsonl"
# O_NONBLOCK: opening a FIFO for writing with no reader fails (ENXIO) instead of waiting for one.
_APPEND_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | os.O_NOFOLLOW
    | os.O_NONBLOCK
    | os.O_NOCTTY
    | os.O_CLOEXEC
)

_warned = False
# What json.dumps(record, ensure_ascii=False, separators=(",", ":")) writes, made once: dumps
# given any option builds a new encoder for every record (a round trip writes four), and
# encode() a new C encoder, closure and markers dict for each (as pending's canonical_json).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# Its C encoder kept (pending.kept_encoder), as pending's canonical_json keeps its own.
_line = kept_encoder(_ENCODER)


# The caller's uid, asked once (as pending's reads do): wisp never changes its uid while running.
_UID = os.getuid()


class AuditEvent(StrEnum):
    """Every kind of audit record (docs/cli.md, "The audit log")."""

    APPROVAL_PENDING = "approval.pending"
    APPROVAL_ANSWERED = "approval.answered"
    APPROVAL_SETTLED = "approval.settled"
    APPROVAL_WITHDRAWN = "approval.withdrawn"
    APPROVAL_GRANTED = "approval.granted"
    APPROVAL_REVOKED = "approval.revoked"
    FACT_SCOPE_CHANGED = "fact.scope.changed"
    NOTIFICATION = "notification"
    HOST_HELLO = "host.hello"
    WATCH_WARNING = "watch.warning"
    WEB_PAIRED = "web.paired"  # a device paired with `wisp web`
    WEB_REVOKED = "web.revoked"  # a paired device revoked
    # A tool call decided, one record each, whoever decided it (wisp.policy.decide): a rule,
    # a grant, the person, a time-out, the guard.
    CALL_DECIDED = "call.decided"


class AuditLogUnsafe(WispError):
    """The audit log is there but is no file wisp may append to (a FIFO, a device, a symlink,
    another user's file, a file with other hard links): refused, with what is wrong and the
    fix. The CLI exits 2 on it. Not the channel's fault: a hook's deny says it as it is."""

    remedy = (
        "move the audit log (or its logs directory) aside, or remove it if you did not put "
        "it there: the next record starts a new one"
    )


def audit_path(home: Path) -> Path:
    return home / LOGS_DIR / AUDIT_FILE


def log_problem(st: os.stat_result) -> str | None:
    """What makes the file *st* describes no audit log to append to; None if it is one."""
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat.S_ISFIFO(st.st_mode):
        return "a FIFO (a named pipe), which would hold every command that audits until read"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != _UID:
        return f"owned by uid {st.st_uid}, not by you"
    if st.st_nlink != 1:
        return f"a file with {st.st_nlink} hard links (records written here would reach the others)"
    return None


def unsafe_message(path: Path, problem: str) -> str:
    return (
        f"the audit log {path} is {problem}, so nothing is recorded in it and nothing was done. "
        f"Move it aside (`mv {path} {path}.suspect`, or remove it if you did not put it there); "
        "the next record starts a new log."
    )


def check_log(home: Path) -> None:
    """Raise :class:`AuditLogUnsafe` if the audit log exists and is no file to append to
    (checked by name, not following a symlink; a missing log or logs directory is fine: the
    first record makes it). Cheap: one lstat, nothing opened."""
    if _check_kept_log(home):
        return
    _check_logs_dir(home)
    path = audit_path(home)
    try:
        st = os.lstat(path)
    except OSError:
        return  # absent (made on the first record) or unreachable: audit() says what it meets
    problem = log_problem(st)
    if problem is not None:
        raise AuditLogUnsafe(unsafe_message(path, problem))


def _check_kept_log(home: Path) -> bool:
    """:func:`check_log` through the logs directory this process keeps for *home* (see
    :data:`_kept_logs`); False if none is kept, or it is not plainly fine: the full check
    then says what is wrong. An asker checks before every request and an answerer before
    every answer: opening the logs directory again by name each time cost four system
    calls (issue 41). The directory's path is resolved once a process, as the writer's
    records are appended through the same descriptor (they go where this checks); what is
    checked each time still is that directory (a directory, the caller's, nobody else may
    write in it, not removed: an fstat) and the log at its name in it (an lstat: no
    symlink, FIFO, stranger's file or hard link)."""
    key = str(home)
    with _kept_lock:
        kept = _kept_logs
        if kept is None or kept[0] != key:
            return False
        try:
            logs = os.fstat(kept[1])
            if (
                not stat.S_ISDIR(logs.st_mode)
                or logs.st_uid != _UID
                or logs.st_mode & 0o022
                or logs.st_nlink == 0  # removed since: the full check looks at what is there now
            ):
                return False
            st = os.stat(AUDIT_FILE, dir_fd=kept[1], follow_symlinks=False)
        except FileNotFoundError:
            return True  # no log yet: the first record makes it
        except OSError:
            return False
    problem = log_problem(st)
    if problem is not None:
        raise AuditLogUnsafe(unsafe_message(audit_path(home), problem))
    return True


def _check_logs_dir(home: Path) -> None:
    """Raise :class:`AuditLogUnsafe` if the logs directory exists and is none wisp may write
    in (a symlink, a file, another owner's, group- or world-writable), as the channel's own
    directories are refused: what would be audited could not be."""
    logs = home / LOGS_DIR
    try:
        fd = open_private_dir(str(logs), make=False)
    except FileNotFoundError:
        return  # made on the first record
    except PendingError as exc:
        raise AuditLogUnsafe(f"{exc}. Nothing was done: it could not have been audited.") from None
    except OSError:
        return  # unreachable for another reason: audit() says what it meets
    os.close(fd)


def audit(
    home: Path,
    event: AuditEvent,
    fields: Mapping[str, Any] | None = None,
    *,
    entry_point: EntryPoint,
    clock: Clock = SYSTEM_CLOCK,
    make_home: bool = True,
) -> bool:
    """Append one audit record (``None`` fields left out); True if it was written. With
    *make_home* false nothing of the home is made again, neither the home nor its logs
    directory nor its log: the record is appended to a log that is there, or not written (a
    watch saying that the channel went away must not remake a home being removed: a logs
    directory made in it as `rm -rf` empties it made the removal fail, "Directory not
    empty")."""
    record = {
        "ts": format_now(clock),
        "event": event,
        "entryPoint": entry_point,
        "pid": os.getpid(),
        **{key: value for key, value in (fields or {}).items() if value is not None},
    }
    line = (_line(record) + "\n").encode()
    try:
        fd = _open_log(home, make_home)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _append_whole(fd, line)
        finally:
            os.close(fd)  # releases the lock
    except AuditLogUnsafe as exc:
        _warn_once(f"wisp: {exc}")
        return False
    except (OSError, PendingError) as exc:
        if not make_home and isinstance(exc, FileNotFoundError):
            return False  # the home went while we wrote: nothing to say, nothing remade
        _warn_once(f"wisp: could not write the audit log {audit_path(home)}: {exc}")
        return False
    return True


def _open_logs(home: Path, make_home: bool) -> int:
    """The home's logs directory, opened and checked (both directories) afresh."""
    home_fd = open_private_dir(str(home), make=make_home)
    try:
        return open_private_dir(
            str(home / LOGS_DIR), parent_fd=home_fd, name=LOGS_DIR, make=make_home
        )
    finally:
        os.close(home_fd)


# The logs directory last written to, opened and checked once and then kept: a round trip
# writes four records, and opening the home and its logs again for each cost eight system
# calls of the twelve a record took. The log file itself is still opened for every record.
# One home only (a process that writes to another closes the first), so a test session that
# makes a home per test keeps no descriptors of the ones it is done with.
_kept_logs: tuple[str, int] | None = None
_kept_lock = _thread.allocate_lock()  # threading.Lock, without importing threading


def _open_log(home: Path, make_home: bool) -> int:
    """The audit log of *home*, opened for appending (the caller closes it)."""
    global _kept_logs
    key = str(home)
    with _kept_lock:
        kept = _kept_logs
        if kept is not None and kept[0] == key:
            try:
                return _open_log_at(kept[1], home, make_home)
            except FileNotFoundError:
                pass  # the directory was removed since: open (or refuse) it afresh
        if kept is not None:
            _kept_logs = None
            os.close(kept[1])
        logs_fd = _open_logs(home, make_home)
        try:
            fd = _open_log_at(logs_fd, home, make_home)
        except BaseException:
            os.close(logs_fd)
            raise
        _kept_logs = (key, logs_fd)
        return fd


def _forget_in_child() -> None:
    # A forked child keeps the descriptor (the same directory), but not the lock's state.
    global _kept_lock
    _kept_lock = _thread.allocate_lock()


os.register_at_fork(after_in_child=_forget_in_child)


def _open_log_at(logs_fd: int, home: Path, make: bool = True) -> int:
    """The log, open for appending (made 0600 if missing, when *make*: else
    FileNotFoundError); :class:`AuditLogUnsafe` if it is no regular file of the caller's
    with one link. Never blocks."""
    flags = _APPEND_FLAGS if make else _APPEND_FLAGS & ~os.O_CREAT
    try:
        fd = os.open(AUDIT_FILE, flags, 0o600, dir_fd=logs_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a symlink; a FIFO nobody reads
            st = os.stat(AUDIT_FILE, dir_fd=logs_fd, follow_symlinks=False)
            raise AuditLogUnsafe(
                unsafe_message(audit_path(home), log_problem(st) or "not a regular file")
            ) from None
        raise
    problem = log_problem(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        raise AuditLogUnsafe(unsafe_message(audit_path(home), problem))
    return fd


def _append_whole(fd: int, line: bytes) -> None:
    """Append *line* whole, or not at all. A short write (a full disk) would leave half a
    record for the next one to be glued to; so the file is cut back to where it was: by what
    this record wrote, for under the lock nobody else appends in between (so the file's size
    is asked only when a write failed)."""
    written = 0
    try:
        written = os.write(fd, line)
        while written < len(line):
            more = os.write(fd, line[written:])
            if more == 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written += more
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, os.fstat(fd).st_size - written)
        raise


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        sys.stderr.write(message + "\n")


def ending_record(
    outcome: Outcome, decision: str | None, reason: str | None
) -> tuple[AuditEvent, dict[str, Any]]:
    """A request's ending as it is audited, by whoever ends it (its asker, a sweep): the
    event (`approval.withdrawn` for a withdrawal, `approval.settled` for any other) and the
    fields every ending carries."""
    from pending import Outcome  # the records: loaded by what ends requests, not by a hook

    event = (
        AuditEvent.APPROVAL_WITHDRAWN
        if outcome is Outcome.WITHDRAWN
        else AuditEvent.APPROVAL_SETTLED
    )
    return event, {"outcome": outcome.value, "decision": decision, "outcomeReason": reason}


def request_fields(request: Request) -> dict[str, Any]:
    """What every audit record about a request carries: its id, kind and binding's fields."""
    from pending import to_json

    fields: dict[str, Any] = {"id": request.id, "kind": request.kind.value}
    fields.update(to_json(request.binding))
    fields["server"] = request.server.id
    return fields
