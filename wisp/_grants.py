"""Standing approvals: `project` and `always` grants, kept in `$WISP_HOME/grants.json`.

A grant is exactly what the person approved with that scope: the same command (to the
character) under the same project (`project`), or anywhere (`always`). `session` grants live in
the gate's memory for its server's life. Only an approval widens a grant; `revoke` removes one.

The file is written whole: a temp file, fsync, rename over the old one, fsync the directory,
all under an exclusive lock, so concurrent writers never lose a grant. A file that cannot be
read is never overwritten: it is reported, and until it is fixed nothing is granted from it.
"""

from __future__ import annotations

import os
import re
import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from pending import (
    SYSTEM_CLOCK,
    Clock,
    PendingError,
    Scope,
    format_time,
    open_private_dir,
    parse_time,
    record_time,
)
from wisp._audit import AuditEvent, EntryPoint, audit
from wisp._store import JsonStore, StoreError

GRANTS_FILE = "grants.json"
# grants.json's cap: thousands of ordinary grants, or 60 of the longest command a request can
# carry (its record's 64 KiB cap); read again by a gate only when the file changed.
GRANTS_MAX_BYTES = 4 * 1024 * 1024
STORED_SCOPES = (Scope.PROJECT, Scope.ALWAYS)  # a session grant lives in its server only
_GRANT_ID_RE = re.compile(r"g[0-9a-f]{8}")


GrantsError = StoreError  # the grants store cannot be used; the message says what to do
FileKey = tuple[int, int, int, int, int]  # device, inode, size, mtime and ctime (ns)


@attrs.frozen(kw_only=True)
class Grant:
    """A standing approval of one command. A `session` grant lives in its gate for its
    server's life and is never stored, so it has no ID; `project` and `always` grants are
    stored, each under its own ID."""

    id: str | None  # g… for a stored grant; None for a session grant
    scope: Scope  # session | project | always
    command: str
    project: str | None  # for `project`: the project directory
    granted_at: datetime
    request: str  # the request whose answer made it
    user: str

    @property
    def stored(self) -> bool:
        """Whether it is kept in grants.json (else it is this session's only)."""
        return self.id is not None

    @property
    def name(self) -> str:
        """How the audit log names it: its ID, or its scope (`session`) when it has none."""
        return self.scope.value if self.id is None else self.id

    def covers(self, command: str, cwd: str) -> bool:
        if command != self.command:
            return False
        if self.scope is Scope.PROJECT:
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
        self.clock = clock
        self.home = home
        self._store: JsonStore[Grant] = JsonStore(
            home,
            GRANTS_FILE,
            "grants",
            load=_grant_from,
            dump=Grant.to_json,
            cap_bytes=GRANTS_MAX_BYTES,
            when_full="Revoke grants you no longer need (`wisp approvals grants`, then `wisp "
            "approvals revoke GRANT_ID`).",
        )
        self.path = self._store.path
        # What grants.json held when last read, by the file's identity then (None: absent).
        self._read: tuple[FileKey | None, tuple[Grant, ...]] | None = None

    def list(self) -> list[Grant]:
        return self._store.items()

    def covering(self, command: str, cwd: str) -> Grant | None:
        """The stored grant that covers this command here, if any."""
        return next((g for g in self._current() if g.covers(command, cwd)), None)

    def _current(self) -> tuple[Grant, ...]:
        """The stored grants, read again only if grants.json changed since it was last read.

        A gate asks for every command; reading the file means taking its lock, opening the
        home and the file, and parsing it (measured: about 40 us a request with no file at
        all). The file is only ever replaced whole (a rename), so a write is a new inode; an
        edit in place changes its size or its ctime (which nobody can set back). A file that
        cannot be read is read (and refused) again every time, as before."""
        try:
            st = self.path.lstat()
            key: FileKey | None = (
                st.st_dev,
                st.st_ino,
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
            )
        except FileNotFoundError:
            key = None
        except OSError:
            return tuple(self.list())  # say why, as reading it says
        read = self._read
        if read is not None and read[0] == key:
            self._check_home()  # the file is unchanged; the home it is in is checked all the same
            return read[1]
        grants = tuple(self.list())
        self._read = (key, grants)
        return grants

    def _check_home(self) -> None:
        """Refuse an unsafe home (writable by others, another's, a symlink) as reading the
        grants would: a long-lived gate must not keep trusting grants from a home that has
        become unsafe since it last read them."""
        try:
            os.close(open_private_dir(str(self.home)))
        except PendingError as exc:
            raise StoreError(str(exc)) from None

    def add(self, *, scope: Scope, command: str, cwd: str, request: str, user: str) -> Grant:
        if scope not in STORED_SCOPES:
            raise ValueError(f"{scope!r} grants are not stored")
        grant = Grant(
            id=new_grant_id(),
            scope=Scope(scope),
            command=command,
            project=project_of(cwd) if scope == Scope.PROJECT else None,
            granted_at=record_time(self.clock),
            request=request,
            user=user,
        )
        with self._store.locked() as home_fd:
            self._store.write(home_fd, [*self._store.read(home_fd), grant])
        return grant

    def revoke(
        self, grant_id: str, *, entry_point: EntryPoint = EntryPoint.APPROVALS
    ) -> Grant | None:
        """Remove a grant (audited); the one removed, or None if there was none by that ID."""
        with self._store.locked() as home_fd:
            grants = self._store.read(home_fd)
            kept = [g for g in grants if g.id != grant_id]
            if len(kept) == len(grants):
                return None
            self._store.write(home_fd, kept)
            removed = next(g for g in grants if g.id == grant_id)
        audit(
            self.home,
            AuditEvent.APPROVAL_REVOKED,
            {
                "grant": removed.id,
                "scope": removed.scope,
                "command": removed.command,
                "project": removed.project,
            },
            entry_point=entry_point,
            clock=self.clock,
        )
        return removed


def _grant_from(item: Any) -> Grant:
    scope = item["scope"]
    if scope not in STORED_SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    fields = {k: item[k] for k in ("id", "command", "request", "user")}
    if not all(isinstance(v, str) for v in fields.values()):
        raise TypeError("grant fields must be strings")
    project = item.get("project")
    if scope == Scope.PROJECT and not isinstance(project, str):
        raise TypeError("a project grant needs its project")
    granted_at = item["grantedAt"]
    if not isinstance(granted_at, str):
        raise TypeError("grantedAt must be a timestamp")
    return Grant(
        id=str(fields["id"]),
        scope=Scope(scope),
        command=str(fields["command"]),
        project=project if isinstance(project, str) else None,
        granted_at=parse_time(granted_at),
        request=str(fields["request"]),
        user=str(fields["user"]),
    )
