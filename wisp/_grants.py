"""Standing approvals: `project` and `always` grants, kept in `$WISP_HOME/grants.json`.

A grant is exactly what the person approved with that scope: the same command (to the
character) under the same project (`project`), or anywhere (`always`). `session` grants live in
the gate's memory for its server's life. Only an approval widens a grant; `revoke` removes one.

The file is written whole: a temp file, fsync, rename over the old one, fsync the directory,
all under an exclusive lock, so concurrent writers never lose a grant. A file that cannot be
read is never overwritten: it is reported, and until it is fixed nothing is granted from it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import attrs

from pending import (
    SYSTEM_CLOCK,
    Clock,
    DecodeError,
    format_time,
    loads_strict,
    open_private_dir,
    parse_time,
    record_time,
)
from pending._fsio import Unreadable, read_bytes

GRANTS_FILE = "grants.json"
GRANTS_LOCK = "grants.lock"
STORED_SCOPES = ("project", "always")
_GRANT_ID_RE = re.compile(r"g[0-9a-f]{8}")


class GrantsError(Exception):
    """The grants store cannot be used; the message says why and what to do."""


@attrs.frozen(kw_only=True)
class Grant:
    id: str
    scope: str  # session | project | always
    command: str
    project: str | None  # for `project`: the project directory
    granted_at: datetime
    request: str  # the request whose answer made it
    user: str

    def covers(self, command: str, cwd: str) -> bool:
        if command != self.command:
            return False
        if self.scope == "project":
            return self.project is not None and _within(cwd, self.project)
        return True

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "scope": self.scope,
            "command": self.command,
            "project": self.project,
            "grantedAt": format_time(self.granted_at),
            "request": self.request,
            "user": self.user,
        }


def _within(path: str, root: str) -> bool:
    return Path(path).resolve().is_relative_to(Path(root).resolve())


def project_of(cwd: str) -> str:
    """The project a directory belongs to: its nearest ancestor holding `.git`, else itself."""
    start = Path(cwd).resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return str(directory)
    return str(start)


def new_grant_id() -> str:
    return "g" + secrets.token_hex(4)


def is_grant_id(text: str) -> bool:
    return _GRANT_ID_RE.fullmatch(text) is not None


class GrantStore:
    def __init__(self, home: Path, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.home = home
        self.path = home / GRANTS_FILE
        self.clock = clock

    @contextmanager
    def _locked(self) -> Iterator[int]:
        try:
            home_fd = open_private_dir(str(self.home))
        except Exception as exc:
            raise GrantsError(str(exc)) from None
        try:
            lock_fd = os.open(
                GRANTS_LOCK,
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=home_fd,
            )
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
                yield home_fd
            finally:
                os.close(lock_fd)
        finally:
            os.close(home_fd)

    def _read(self, home_fd: int) -> list[Grant]:
        try:
            data = read_bytes(home_fd, GRANTS_FILE)
        except Unreadable as exc:
            raise GrantsError(f"cannot use {self.path}: {exc}. Fix or move it aside.") from None
        if data is None:
            return []
        try:
            tree = loads_strict(data)
            return [_grant_from(item) for item in tree["grants"]]
        except (DecodeError, KeyError, TypeError, ValueError) as exc:
            raise GrantsError(
                f"{self.path} is damaged ({exc}); it was left as it is. Nothing is granted "
                "from it until you fix it or move it aside."
            ) from None

    def _write(self, home_fd: int, grants: list[Grant]) -> None:
        body = (
            json.dumps(
                {"format": 1, "grants": [g.to_json() for g in grants]}, indent=2, ensure_ascii=False
            )
            + "\n"
        )
        tmp = f"{GRANTS_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=home_fd,
        )
        try:
            os.write(fd, body.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.rename(tmp, GRANTS_FILE, src_dir_fd=home_fd, dst_dir_fd=home_fd)
        except BaseException:
            os.unlink(tmp, dir_fd=home_fd)
            raise
        os.fsync(home_fd)

    def list(self) -> list[Grant]:
        with self._locked() as home_fd:
            return self._read(home_fd)

    def covering(self, command: str, cwd: str) -> Grant | None:
        """The stored grant that covers this command here, if any."""
        return next((g for g in self.list() if g.covers(command, cwd)), None)

    def add(self, *, scope: str, command: str, cwd: str, request: str, user: str) -> Grant:
        if scope not in STORED_SCOPES:
            raise ValueError(f"{scope!r} grants are not stored")
        grant = Grant(
            id=new_grant_id(),
            scope=scope,
            command=command,
            project=project_of(cwd) if scope == "project" else None,
            granted_at=record_time(self.clock),
            request=request,
            user=user,
        )
        with self._locked() as home_fd:
            self._write(home_fd, [*self._read(home_fd), grant])
        return grant

    def revoke(self, grant_id: str) -> Grant | None:
        """Remove a grant; the one removed, or None if there was none by that ID."""
        with self._locked() as home_fd:
            grants = self._read(home_fd)
            kept = [g for g in grants if g.id != grant_id]
            if len(kept) == len(grants):
                return None
            self._write(home_fd, kept)
            return next(g for g in grants if g.id == grant_id)


def _grant_from(item: dict[str, object]) -> Grant:
    scope = item["scope"]
    if scope not in STORED_SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    fields = {k: item[k] for k in ("id", "command", "request", "user")}
    if not all(isinstance(v, str) for v in fields.values()):
        raise TypeError("grant fields must be strings")
    project = item.get("project")
    if scope == "project" and not isinstance(project, str):
        raise TypeError("a project grant needs its project")
    granted_at = item["grantedAt"]
    if not isinstance(granted_at, str):
        raise TypeError("grantedAt must be a timestamp")
    return Grant(
        id=str(fields["id"]),
        scope=str(scope),
        command=str(fields["command"]),
        project=project if isinstance(project, str) else None,
        granted_at=parse_time(granted_at),
        request=str(fields["request"]),
        user=str(fields["user"]),
    )
