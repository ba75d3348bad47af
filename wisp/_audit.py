"""The audit log: one JSON object per line in `$WISP_HOME/logs/audit.jsonl`.

Each record is written with a single `write(2)` on an `O_APPEND` descriptor, under an
exclusive `flock`, so concurrent writers never interleave within a line. Auditing never fails
the action it records: a log that cannot be written is reported on stderr, once per process.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sys
import threading
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from pending import (
    SYSTEM_CLOCK,
    Clock,
    PendingError,
    Request,
    format_time,
    open_private_dir,
    to_json,
)

LOGS_DIR = "logs"
AUDIT_FILE = "audit.jsonl"
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC

_warned = False


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


class EntryPoint(StrEnum):
    """Where an action came from: the face or command group that made it."""

    APPROVALS = "approvals"
    FACTS = "facts"
    QUESTIONS = "questions"
    PENDING = "pending"
    NOTIFY = "notify"
    MCP = "mcp"
    TUI = "tui"
    RELAY = "relay"
    HOOK = "hook"  # an agent harness's hook (`wisp hook claude-code`)


def audit_path(home: Path) -> Path:
    return home / LOGS_DIR / AUDIT_FILE


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
    *make_home* false a missing home is not made again: nothing is written (a watch saying
    that the channel went away must not remake a home being removed)."""
    record = {
        "ts": format_time(clock.now()),
        "event": event,
        "entryPoint": entry_point,
        "pid": os.getpid(),
        **{key: value for key, value in (fields or {}).items() if value is not None},
    }
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    try:
        fd = _open_log(home, make_home)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _append_whole(fd, line)
        finally:
            os.close(fd)  # releases the lock
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
        return open_private_dir(str(home / LOGS_DIR), parent_fd=home_fd, name=LOGS_DIR)
    finally:
        os.close(home_fd)


# The logs directory last written to, opened and checked once and then kept: a round trip
# writes four records, and opening the home and its logs again for each cost eight system
# calls of the twelve a record took. The log file itself is still opened for every record.
# One home only (a process that writes to another closes the first), so a test session that
# makes a home per test keeps no descriptors of the ones it is done with.
_kept_logs: tuple[str, int] | None = None
_kept_lock = threading.Lock()


def _open_log(home: Path, make_home: bool) -> int:
    """The audit log of *home*, opened for appending (the caller closes it)."""
    global _kept_logs
    key = str(home)
    with _kept_lock:
        kept = _kept_logs
        if kept is not None and kept[0] == key:
            try:
                return os.open(AUDIT_FILE, _APPEND_FLAGS, 0o600, dir_fd=kept[1])
            except FileNotFoundError:
                pass  # the directory was removed since: open (or refuse) it afresh
        if kept is not None:
            _kept_logs = None
            os.close(kept[1])
        logs_fd = _open_logs(home, make_home)
        try:
            fd = os.open(AUDIT_FILE, _APPEND_FLAGS, 0o600, dir_fd=logs_fd)
        except BaseException:
            os.close(logs_fd)
            raise
        _kept_logs = (key, logs_fd)
        return fd


def _forget_in_child() -> None:
    # A forked child keeps the descriptor (the same directory), but not the lock's state.
    global _kept_lock
    _kept_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


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


def request_fields(request: Request) -> dict[str, Any]:
    """What every audit record about a request carries: its id, kind and binding's fields."""
    fields: dict[str, Any] = {"id": request.id, "kind": request.kind.value}
    fields.update(to_json(request.binding))
    fields["server"] = request.server.id
    return fields
