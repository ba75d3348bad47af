"""Reading the audit log (`$WISP_HOME/logs/audit.jsonl`): filtered, and followed as it grows.

The log is read as the writer leaves it: complete lines only (a line still being written is
read once it ends), any record that is not a JSON object skipped and counted. Records written
by earlier builds are read too: their event kinds are listed in :data:`LEGACY_EVENTS`.

Following is driven by file events (pending's watchdog edge on `logs/`), never by polling: each
event is a hint to read what was appended; a log replaced or cut short is read again from its
start.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from pending import PendingError, open_private_dir, parse_time
from wisp.audit.writer import AUDIT_FILE, LOGS_DIR, AuditEvent, audit_path, log_problem

if TYPE_CHECKING:
    from pending import Observation

# Event kinds an earlier build wrote, which fact.scope.changed replaced (seed ADR 0048): kept
# readable so a log written by such a build still reads.
LEGACY_EVENTS = {
    "fact.approved": "a fact admitted as permanent",
    "fact.approval.asked": "a fact's keeping asked about",
    "fact.approval.decided": "a fact's keeping decided",
}
EVENTS: tuple[str, ...] = (*(e.value for e in AuditEvent), *LEGACY_EVENTS)
READ_CHUNK_BYTES = 64 * 1024
# A line longer than this is no record this build writes: skipped, not held in memory.
MAX_LINE_BYTES = 1024 * 1024

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class AuditLogError(Exception):
    """The audit log cannot be read or written; the message names it and what to do."""


def parse_since(text: str, now: datetime) -> datetime:
    """A moment from what a person types: an age (`90s`, `10m`, `2h`, `3d`, `1w`) or a time
    (`2026-11-29`, `2026-11-29T12:00`, with or without a zone; local time without one).
    Raises ValueError with what is taken."""
    typed = text.strip()
    found = _DURATION.fullmatch(typed)
    if found:
        return now - timedelta(seconds=float(found.group(1)) * _UNITS[found.group(2)])
    try:
        moment = datetime.fromisoformat(typed)
    except ValueError:
        raise ValueError(
            f"--since takes an age such as 90s, 10m, 2h, 3d or 1w, or a time such as "
            f"2026-11-29 or 2026-11-29T12:00; not {text!r}."
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a time without a zone is the person's local time
    return moment.astimezone(UTC)


def record_kind(record: Mapping[str, Any]) -> str | None:
    kind = record.get("kind")
    if isinstance(kind, str):
        return kind
    event = record.get("event")
    return "fact" if isinstance(event, str) and event.startswith("fact.") else None


def record_time(record: Mapping[str, Any]) -> datetime | None:
    ts = record.get("ts")
    if not isinstance(ts, str):
        return None
    try:
        return parse_time(ts)
    except ValueError:
        return None


def is_legacy(record: Mapping[str, Any]) -> bool:
    return record.get("event") in LEGACY_EVENTS


def event_matches(event: str, wanted: str) -> bool:
    """*wanted* names *event*, or a family of events (`approval` for every `approval.*`)."""
    return event == wanted or event.startswith(wanted + ".")


def known_event(wanted: str) -> bool:
    return any(event_matches(event, wanted) for event in EVENTS)


# What `wisp log --decider` takes: what decided a call (a `call.decided` record's `decider`,
# or, for a call put to the person, its `asked`: what put it to them), as wisp.policy.decide
# names them. An `approval.granted` record, which earlier builds wrote for a call a grant
# allowed, is a grant's.
DECIDERS = (
    "rule",
    "grant",
    "person",
    "timeout",
    "guard",
    "unread",
    "must-ask",
    "no-rule",
    "stopped",
)


def record_deciders(record: Mapping[str, Any]) -> frozenset[str]:
    """What decided the call *record* is about (and what put it to the person), if it is one."""
    if record.get("event") == AuditEvent.APPROVAL_GRANTED.value:
        return frozenset({"grant"})
    found = (record.get("decider"), record.get("asked"))
    return frozenset(value for value in found if isinstance(value, str))


@attrs.frozen(kw_only=True)
class LogFilter:
    """Which records to show; every criterion given must hold."""

    request: str | None = None  # an ID or its start, lowercased
    kinds: Collection[str] | None = None
    events: Collection[str] | None = None  # event names or families
    since: datetime | None = None
    deciders: Collection[str] | None = None  # what decided a call (DECIDERS)

    def matches(self, record: Mapping[str, Any]) -> bool:
        if self.deciders is not None and not record_deciders(record) & set(self.deciders):
            return False
        if self.request is not None:
            found = record.get("id") or record.get("request")
            if not isinstance(found, str) or not found.lower().startswith(self.request):
                return False
        if self.kinds is not None and record_kind(record) not in self.kinds:
            return False
        if self.events is not None:
            event = record.get("event")
            if not isinstance(event, str) or not any(event_matches(event, w) for w in self.events):
                return False
        if self.since is not None:
            moment = record_time(record)
            if moment is None or moment < self.since:
                return False
        return True


# O_NONBLOCK: a FIFO at the log's name opens at once (and is refused) instead of waiting for
# a writer; O_NOFOLLOW: a symlink there is never followed.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class LogReader:
    """Reads the records appended to the log since the last read; holds a line still being
    written until it ends. Reopens the log if it was replaced or cut short."""

    def __init__(self, home: Path, *, make: bool = True) -> None:
        self.home = home
        self.make = make  # False: a missing home or logs/ is no log yet, never made
        self.path = audit_path(home)
        self.skipped = 0  # lines that are not JSON objects
        self._fd: int | None = None
        self._ino: tuple[int, int] | None = None
        self._offset = 0
        self._partial = b""
        self._dropping = False  # inside an over-long line, until its end

    def logs_fd(self) -> int:
        """The logs directory, opened safely (created 0700 if missing, as the writer would;
        not made by a reader that makes nothing: FileNotFoundError)."""
        try:
            home_fd = open_private_dir(str(self.home), make=self.make)
            try:
                return open_private_dir(
                    str(self.home / LOGS_DIR), parent_fd=home_fd, name=LOGS_DIR, make=self.make
                )
            finally:
                os.close(home_fd)
        except PendingError as exc:
            raise AuditLogError(str(exc)) from None

    def _open(self) -> bool:
        try:
            logs_fd = self.logs_fd()
        except FileNotFoundError:  # a reader that makes nothing: no logs/ yet, no log yet
            return False
        try:
            fd = os.open(AUDIT_FILE, _READ_FLAGS, dir_fd=logs_fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise AuditLogError(
                f"cannot read the audit log {self.path}: {exc.strerror or exc}. Move it aside "
                "if it is not a file of yours."
            ) from None
        finally:
            os.close(logs_fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            os.close(fd)
            raise AuditLogError(
                f"the audit log {self.path} is not a regular file of yours, so it is not read. "
                "Move it aside; the next record starts a new one."
            )
        self._fd, self._ino, self._offset, self._partial = fd, (st.st_dev, st.st_ino), 0, b""
        return True

    def _replaced(self) -> bool:
        """Whether the name now points at another file than the one open (or none)."""
        try:
            st = self.path.lstat()
        except FileNotFoundError:
            return True
        return (st.st_dev, st.st_ino) != self._ino

    def read(self) -> list[dict[str, Any]]:
        """The complete records appended since the last call (all of them, the first time)."""
        if self._fd is None and not self._open():
            return []
        assert self._fd is not None
        if os.fstat(self._fd).st_size < self._offset:  # cut short: read it again
            self._offset, self._partial = 0, b""
        records = self._drain()
        if self._replaced():  # rotated or removed: finish the old one, then the new one
            self.close()
            if self._open():
                records += self._drain()
        return records

    def _drain(self) -> list[dict[str, Any]]:
        assert self._fd is not None
        records: list[dict[str, Any]] = []
        while True:
            chunk = os.pread(self._fd, READ_CHUNK_BYTES, self._offset)
            if not chunk:
                return records
            self._offset += len(chunk)
            *lines, rest = (self._partial + chunk).split(b"\n")
            self._partial = rest
            for line in lines:
                if self._dropping:
                    self._dropping = False  # the end of an over-long line
                    continue
                records.extend(self._record(line))
            if len(self._partial) > MAX_LINE_BYTES:
                self._partial, self._dropping = b"", True
                self.skipped += 1

    def _record(self, line: bytes) -> list[dict[str, Any]]:
        if not line.strip():
            return []
        try:
            record = json.loads(line)
        except (UnicodeDecodeError, ValueError):
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("event"), str):
            self.skipped += 1
            return []
        return [record]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_log(home: Path, where: LogFilter) -> tuple[list[dict[str, Any]], int]:
    """Every record the filter takes, oldest first, and how many lines were skipped."""
    reader = LogReader(home)
    try:
        found = [r for r in reader.read() if where.matches(r)]
    finally:
        reader.close()
    return found, reader.skipped


class LogFollower:
    """The records appended to the log as they are written: each file event on `logs/` is a
    hint to read what is new. Iterate it; :meth:`close` (from any thread) ends it."""

    def __init__(
        self,
        home: Path,
        *,
        on_warning: Callable[[str], None] | None = None,
        make: bool = True,
    ) -> None:
        self.reader = LogReader(home, make=make)
        self._wake = threading.Event()
        self._closed = False
        self._on_warning = on_warning
        self._observation: Observation | None = None
        self._lock = threading.Lock()
        # A follower that makes nothing, started before logs/ exists, watches the home for
        # it first (then logs/, once it is made).
        self._awaiting_logs = False
        self.backend: str | None = None

    def start(self) -> LogFollower:
        """Watch before reading, so nothing appended in between is missed. A follower that
        makes nothing (``make=False``) and finds no logs/ watches the home until one is made
        (by the first record), and makes nothing itself."""
        if self.reader.make:
            os.close(self.reader.logs_fd())  # the directory must exist to be watched
        elif not (self.reader.home / LOGS_DIR).is_dir():
            self._awaiting_logs = True
            self._observe(str(self.reader.home))
            if not (self.reader.home / LOGS_DIR).is_dir():
                return self
            self._watch_logs()  # made between the two looks
            return self
        self._observe(str(self.reader.home / LOGS_DIR))
        return self

    def _observe(self, directory: str) -> None:
        from pending import WatchHints, observe  # reading the log loads no watchdog

        # Events lost (an overflow): read what is new, as for any hint.
        hints = WatchHints(on_change=self._changed, on_overflow=self._wake.set)
        observation = observe((directory,), hints, on_fallback=self._on_warning)
        with self._lock:
            old, self._observation = self._observation, observation
        self.backend = observation.backend.value
        if old is not None:
            old.stop()

    def _watch_logs(self) -> None:
        """logs/ was made: watch it (instead of the home) from now on, and read."""
        self._awaiting_logs = False
        self._observe(str(self.reader.home / LOGS_DIR))
        self._wake.set()

    def _changed(self, path: str, is_directory: bool, deleted: bool) -> None:
        if Path(path).name in (AUDIT_FILE, LOGS_DIR):
            self._wake.set()

    def backlog(self) -> list[dict[str, Any]]:
        """What the log holds now (read after the watch started)."""
        return self.reader.read()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            if self._awaiting_logs:
                if not (self.reader.home / LOGS_DIR).is_dir():
                    continue
                self._watch_logs()
            yield from self.reader.read()

    def each_new(
        self, take: Callable[[dict[str, Any]], None], *, on_error: Callable[[str], None]
    ) -> LogFollower:
        """Start following (:meth:`start`), and hand each record appended from now on (not
        what the log holds already) to *take*, on a thread of its own that takes no signal
        (the caller's main thread does); *on_error* is told, in words, if the log can no
        longer be read. :meth:`close` ends it. Raises :class:`AuditLogError` if it cannot
        start."""
        from pending import start_thread

        self.start()
        self.backlog()  # what was recorded before: not handed on

        def follow() -> None:
            try:
                for record in self:
                    take(record)
            except AuditLogError as exc:
                on_error(str(exc))

        start_thread(threading.Thread(target=follow, name="wisp-log-follow", daemon=True))
        return self

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        with self._lock:
            observation, self._observation = self._observation, None
        if observation is not None:
            observation.stop()
        self.reader.close()


_PROBE_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def check_writable(home: Path) -> str:
    """Raise :class:`AuditLogError` if a record could not be appended now; else say how big
    the log is. Appends nothing: the log is opened for appending and closed, or (when it does
    not exist yet) a probe file is made and removed beside it."""
    reader = LogReader(home)
    logs_fd = reader.logs_fd()
    path = reader.path
    try:
        try:
            st = os.stat(AUDIT_FILE, dir_fd=logs_fd, follow_symlinks=False)
        except FileNotFoundError:
            probe = f".{AUDIT_FILE}.{os.getpid()}.probe"
            try:
                os.close(
                    os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=logs_fd)
                )
                os.unlink(probe, dir_fd=logs_fd)
            except OSError as exc:
                raise AuditLogError(
                    f"cannot create the audit log in {path.parent}: {exc.strerror or exc}"
                ) from None
            return "not written yet"
        problem = log_problem(st)  # a FIFO, a stranger's file, a hard link: not writable
        if problem is not None:
            raise AuditLogError(f"{path} is {problem}, so nothing can be recorded in it")
        try:
            os.close(os.open(AUDIT_FILE, _PROBE_FLAGS, dir_fd=logs_fd))
        except OSError as exc:
            raise AuditLogError(f"cannot append to {path}: {exc.strerror or exc}") from None
        return f"{st.st_size} bytes"
    finally:
        os.close(logs_fd)
