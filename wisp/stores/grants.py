"""Standing approvals: `project` and `always` grants, kept in `$WISP_HOME/grants.json`.

A grant is exactly what the person approved with that scope: the same command (to the
character) under the same project (`project`), or anywhere (`always`). `session` grants live in
the gate's memory for its server's life. Only an approval widens a grant; `revoke` removes one.

A tool call's grant (kind `tool`) is the same tool (by its exact name) with the same input (its
canonical JSON), kept in `tool-grants.json`: a file of its own, so that a build that knows only
commands never reads one as a command, nor drops what it does not know when it rewrites
`grants.json`. A `session` approval given to a thread whose asker lives for one call only (a
Claude Code hook runs once per tool call; the thread is Claude's session) is kept for that
thread in `session-grants.json`, until the thread ends or SESSION_GRANT_MAX_AGE_S passes.

The file is written whole: a temp file, fsync, rename over the old one, fsync the directory,
all under an exclusive lock, so concurrent writers never lose a grant. A file that cannot be
read is never overwritten: it is reported, and until it is fixed nothing is granted from it.

A grant wider than the exact call (an answer's width: docs/channel.md, "Widths") carries its
pattern, and is kept in `wide-grants.json` whatever its scope (a session one with its thread),
so that a build that knows only exact grants never reads one as the exact command it shows:

- *command* (`npm test *`): the command's first words. It covers a line that is ONE simple
  command whose words start with those words, as the policy's shell parser reads it (the
  caller passes those words: :func:`covering`'s *words*, None when the line is anything else —
  a list, a pipeline, a redirection, a substitution, a background job — so such a grant never
  spans `;`, `&&`, `|` or a redirection);
- *file*: edits to that one file (its real path when granted; a link put in its place later
  is another file);
- *project*: edits whose every path is inside that project directory (the same directory, by
  its identity), never under `.git/`, the harnesses' or editors' own folders or `.env` files
  (EDIT_EXCLUDED_DIRS, EDIT_EXCLUDED_NAMES).

A must-ask call is never covered by any grant, exact or wide: each covering call takes
`must_ask`, and says None for one.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from pending import (
    SYSTEM_CLOCK,
    Clock,
    Kind,
    NamedTuple,
    PendingError,
    Scope,
    Width,
    canonical_json,
    format_time,
    open_private_dir,
    record_time,
)
from wisp._home import refuse_anothers_home
from wisp.audit.writer import AuditEvent, EntryPoint, audit
from wisp.stores.jsonstore import JsonStore, StoreError

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

GRANTS_FILE = "grants.json"
# grants.json's cap: thousands of ordinary grants, or 60 of the longest command a request can
# carry (its record's 64 KiB cap); read again by a gate only when the file changed.
GRANTS_MAX_BYTES = 4 * 1024 * 1024
_REVOKE_SOME = (
    "Revoke grants you no longer need (`wisp approvals grants`, then `wisp approvals revoke "
    "GRANT_ID`)."
)
TOOL_GRANTS_FILE = "tool-grants.json"
SESSION_GRANTS_FILE = "session-grants.json"
# A thread's session grants outlive a session that never said it ended (a crash, a hook not
# registered for SessionEnd) by at most this long.
SESSION_GRANT_MAX_AGE_S = 24 * 3600
STORED_SCOPES = (Scope.PROJECT, Scope.ALWAYS)  # a session grant lives in its server only
WIDE_GRANTS_FILE = "wide-grants.json"
WIDE_SCOPES = (Scope.SESSION, Scope.PROJECT, Scope.ALWAYS)
# A project-edits grant never covers an edit under these folders (git's own, which runs its
# hooks; the harnesses'; editors' and wisp's, whose files run or decide by themselves) nor of
# these files (the shell's per-directory settings; secrets): they are asked each time.
EDIT_EXCLUDED_DIRS = frozenset(
    {".git", ".wisp", ".claude", ".codex", ".gemini", ".cursor", ".vscode", ".idea"}
)
EDIT_EXCLUDED_NAMES = frozenset({".envrc", ".env"})


GrantsError = StoreError  # the grants store cannot be used; the message says what to do
FileKey = tuple[int, int, int, int, int]  # device, inode, size, mtime and ctime (ns)


class Grant(NamedTuple):
    """A standing approval of one command. A `session` grant lives in its gate for its
    server's life and is never stored, so it has no ID; `project` and `always` grants are
    stored, each under its own ID.

    A named tuple, not an attrs record: a hook deciding a call a grant covers reads every
    grant and loads nothing else it can spare (attrs: ~35 ms of CPU to import; issue 41)."""

    id: str | None  # g… for a stored grant; None for a session grant
    scope: Scope  # session | project | always
    command: str
    project: str | None  # for `project`: the project directory
    granted_at: datetime
    request: str  # the request whose answer made it
    user: str
    kind: Kind = Kind.COMMAND
    tool: str | None = None  # for a tool call's grant: the tool's exact name
    input: str | None = None  # ... and its input's canonical JSON (text)
    thread: str | None = None  # for a kept session grant: the thread it lasts for
    # For a command's grant: the shell call's options it was approved with (their canonical
    # JSON, text), which a call must carry the same to be covered; None: a call with none.
    options: str | None = None
    # For `project`: the project directory's identity when granted (device:inode), so that a
    # directory put in its place later (a symbolic link to `/`) matches nothing.
    project_id: str | None = None
    # How wide it reaches (the module's docstring): the exact call, or its pattern's width,
    # with the command's first words (`command`) or the path (`file`: the file; `project`:
    # the project directory, whose identity is `path_id`).
    width: Width = Width.EXACT
    prefix: tuple[str, ...] | None = None
    path: str | None = None
    path_id: str | None = None

    @property
    def stored(self) -> bool:
        """Whether it is kept in grants.json (else it is this session's only)."""
        return self.id is not None

    @property
    def name(self) -> str:
        """How the audit log names it: its ID, or its scope (`session`) when it has none."""
        return self.scope.value if self.id is None else self.id

    def covers(self, command: str, cwd: str, options: str | None = None) -> bool:
        """Whether it covers *command* with the options whose key is *options*
        (:func:`options_key`) here: the same command, the same options, in its reach."""
        if self.kind is not Kind.COMMAND or command != self.command or options != self.options:
            return False
        if self.width is not Width.EXACT:  # its text is its pattern's, no command's
            return False
        return self._reaches(cwd)

    def covers_tool(self, tool: str, input_key: str, cwd: str) -> bool:
        """Whether it covers *tool* with input *input_key* (:func:`tool_input_key`) here."""
        if self.kind is not Kind.TOOL or tool != self.tool or input_key != self.input:
            return False
        return self.width is Width.EXACT and self._reaches(cwd)

    @property
    def pattern(self) -> str:
        """What it covers, in words: the exact call, or its pattern."""
        if self.width is Width.COMMAND:
            return f"{shlex_join(self.prefix or ())} *"
        if self.width is Width.FILE:
            return f"edits to {self.path}"
        if self.width is Width.PROJECT:
            return f"edits in {self.path}"
        return self.command

    def covers_words(self, words: tuple[str, ...], cwd: str, options: str | None) -> bool:
        """Whether a `command` grant covers a line that is one simple command of *words*
        (with the options whose key is *options*) here: its words start with the prefix."""
        if self.width is not Width.COMMAND or self.prefix is None or options != self.options:
            return False
        return words[: len(self.prefix)] == self.prefix and self._reaches(cwd)

    def covers_edits(self, edits: tuple[str, ...], cwd: str) -> bool:
        """Whether a `file` or `project` grant covers a call that edits *edits* (absolute
        paths; none: it is no edit) here."""
        if not edits or self.path is None or not self._reaches(cwd):
            return False
        if self.width is Width.FILE:
            return all(_real(edit) == self.path for edit in edits)
        if self.width is Width.PROJECT:
            if project_identity(self.path) != self.path_id:
                return False
            return all(_editable_within(_real(edit), self.path) for edit in edits)
        return False

    def _reaches(self, cwd: str) -> bool:
        if self.scope is Scope.PROJECT:
            if self.project is None:
                return False
            now = project_identity(self.project)
            # A grant kept before identities were: its directory must still be one, not a link.
            same = now is not None if self.project_id is None else now == self.project_id
            return same and _within(cwd, self.project)
        return True

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.id,
            "scope": self.scope,
            "command": self.command,
            "project": self.project,
            **({"projectId": self.project_id} if self.project_id is not None else {}),
            "grantedAt": format_time(self.granted_at),
            "request": self.request,
            "user": self.user,
        }
        if self.kind is Kind.TOOL and self.width is Width.EXACT:
            assert self.input is not None
            data.update(kind=self.kind.value, tool=self.tool, input=json.loads(self.input))
        if self.thread is not None:
            data["thread"] = self.thread
        if self.options is not None:
            data["options"] = json.loads(self.options)
        if self.width is not Width.EXACT:
            data.update(width=self.width.value, pattern=self.pattern)
            if self.prefix is not None:
                data["prefix"] = list(self.prefix)
            if self.path is not None:
                data["path"] = self.path
            if self.path_id is not None:
                data["pathId"] = self.path_id
        return data


def wide_fields(grant: Grant) -> dict[str, str]:
    """A wide grant's width and pattern, as the audit log records them (none: exact)."""
    if grant.width is Width.EXACT:
        return {}
    return {"width": grant.width.value, "pattern": grant.pattern}


def tool_input_key(tool_input: Mapping[str, Any]) -> str:
    """The canonical JSON of a tool's input: what a tool grant matches, exactly."""
    return canonical_json(tool_input).decode("utf-8")


def options_key(options: Mapping[str, Any] | None) -> str | None:
    """A shell call's options as a command grant matches them: their canonical JSON, or None
    when there are none."""
    return None if not options else tool_input_key(options)


def tool_text(tool: str, tool_input: Mapping[str, Any]) -> str:
    """A tool call in one line, as a grant's listing shows it: the tool, then its input."""
    return f"{tool} {tool_input_key(tool_input)}"


def _within(path: str, root: str) -> bool:
    return Path(path).resolve().is_relative_to(Path(root).resolve())


def _real(path: str) -> str:
    """*path* with its links followed, as far as they exist (a new file's folder's)."""
    return os.path.realpath(path)


def _editable_within(real: str, project: str) -> bool:
    """Whether an edit of *real* (a real path) is inside *project* and in none of the
    folders or files a project-edits grant never covers."""
    path = Path(real)
    if not path.is_relative_to(project) or path == Path(project):
        return False
    inside = path.relative_to(project).parts
    if any(part in EDIT_EXCLUDED_DIRS for part in inside[:-1]):
        return False
    name = inside[-1]
    return name not in EDIT_EXCLUDED_DIRS and not (
        name in EDIT_EXCLUDED_NAMES or name.startswith(".env.")
    )


def shlex_join(words: tuple[str, ...]) -> str:
    """Words as a shell would read them back (a grant's listing)."""
    import shlex  # here: only a wide command grant's listing needs it

    return shlex.join(words)


def project_of(cwd: str) -> str:
    """The project a directory belongs to: its nearest ancestor holding `.git`, if that may
    stand for a project (:func:`_may_be_project`); else the directory itself, the narrowest."""
    start = Path(cwd).resolve()
    for directory in (start, *start.parents):
        git = directory / ".git"
        if git.is_symlink() or git.exists():
            return str(directory) if _may_be_project(directory, git) else str(start)
    return str(start)


def _may_be_project(directory: Path, git: Path) -> bool:
    """A project root is the person's own directory, and, inside a directory anyone may
    write (`/tmp`), only one with a real `.git` directory: a `.git` file anyone can make
    there would make a stranger's directory, or a parent of many, a "project"."""
    try:
        if directory.lstat().st_uid != os.getuid():
            return False
        if git.is_dir() and not git.is_symlink():
            return True
        return not any(p.stat().st_mode & stat.S_IWOTH for p in directory.parents)
    except OSError:
        return False


def project_identity(project: str) -> str | None:
    """A project directory's identity (device:inode), or None if it is not a directory now
    (gone, or a symbolic link put in its place)."""
    try:
        st = os.lstat(project)
    except (OSError, ValueError):
        return None
    return f"{st.st_dev}:{st.st_ino}" if stat.S_ISDIR(st.st_mode) else None


def _project_fields(scope: Scope, cwd: str) -> dict[str, Any]:
    """A new grant's project and its identity (for `project`; else none)."""
    if scope != Scope.PROJECT:
        return {"project": None}
    project = project_of(cwd)
    return {"project": project, "project_id": project_identity(project)}


def new_grant_id() -> str:
    import secrets  # here, not at import: it loads hmac and OpenSSL, ~20 M instructions

    return "g" + secrets.token_hex(4)


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
            when_full=_REVOKE_SOME,
        )
        self.path = self._store.path
        self._path = str(self.path)
        self._tools: JsonStore[Grant] = JsonStore(
            home,
            TOOL_GRANTS_FILE,
            "grants",
            load=_tool_grant_from,
            dump=Grant.to_json,
            cap_bytes=GRANTS_MAX_BYTES,
            when_full=_REVOKE_SOME,
        )
        self._sessions: JsonStore[Grant] = JsonStore(
            home,
            SESSION_GRANTS_FILE,
            "grants",
            load=_session_grant_from,
            dump=Grant.to_json,
            cap_bytes=GRANTS_MAX_BYTES,
            when_full="End a Claude session you no longer use (its session grants go with it).",
        )
        self._wide: JsonStore[Grant] = JsonStore(
            home,
            WIDE_GRANTS_FILE,
            "grants",
            load=_wide_grant_from,
            dump=Grant.to_json,
            cap_bytes=GRANTS_MAX_BYTES,
            when_full=_REVOKE_SOME,
        )
        self._wide_path = str(self._wide.path)
        self._wide_read: tuple[FileKey, tuple[Grant, ...]] | None = None
        # What grants.json held when last read, by the file's identity then (None: absent).
        self._read: tuple[FileKey | None, tuple[Grant, ...]] | None = None

    def check_writable(self, *, tool: bool = False) -> None:
        """Raise :class:`StoreError` now if a standing grant (a command's, or with *tool* a
        tool call's) could not be saved: damaged, unwritable, or at its cap. For an answerer
        to check before it answers `project` or `always`, so that nobody is told a grant
        stands that was never saved."""
        (self._tools if tool else self._store).check_writable()

    def check_wide_writable(self) -> None:
        """As :meth:`check_writable`, for a grant wider than the exact call."""
        self._wide.check_writable()

    def list(self, *, sessions: bool = False) -> list[Grant]:
        """The standing grants (project and always): commands', tool calls', then the wider
        ones; with *sessions*, also the session approvals kept for an agent's session (each
        for its thread only: never asked to cover a call here)."""
        wide = self._wide.items()
        standing = [
            *self._store.items(),
            *self._tools.items(),
            *(g for g in wide if g.thread is None),
        ]
        if not sessions:
            return standing
        kept = [*self._sessions.items(), *(g for g in wide if g.thread is not None)]
        return [*standing, *(g for g in kept if self._fresh(g))]

    def covering(
        self,
        command: str,
        cwd: str,
        *,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        must_ask: bool = False,
    ) -> Grant | None:
        """The stored grant that covers this command (with these *options*) here, if any: an
        exact one, or (*words*: the line is one simple command of these words, as the
        policy's parser reads it; None: it is not) a `command` one. None for a *must_ask*
        call: no grant covers one."""
        if must_ask:
            return None
        key = options_key(options)
        exact = next((g for g in self._current() if g.covers(command, cwd, key)), None)
        if exact is not None or words is None:
            return exact
        stored = (g for g in self._wide_now() if g.thread is None)
        return next((g for g in stored if g.covers_words(words, cwd, key)), None)

    def _current(self) -> tuple[Grant, ...]:
        """The stored grants, read again only if grants.json changed since it was last read.

        A gate asks for every command; reading the file means taking its lock, opening the
        home and the file, and parsing it (measured: about 40 us a request with no file at
        all). The file is only ever replaced whole (a rename), so a write is a new inode; an
        edit in place changes its size or its ctime (which nobody can set back). A file that
        cannot be read is read (and refused) again every time, as before."""
        try:
            st = os.lstat(self._path)  # its text, made once: not pathlib's each lookup
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
            # The file is unchanged; the home it is in is checked all the same, each time. With
            # no grants.json at all there is no command grant to trust (the lstat above, made
            # each time, says so), and the home is not opened for nothing (issue 41): its
            # first grant is a new file, read (and its home checked) as any change is.
            if key is not None:
                self._check_home()
            return read[1]
        grants = tuple(self.list())
        self._read = (key, grants)
        return grants

    def _wide_now(self) -> tuple[Grant, ...]:
        """The wider grants, as :meth:`_current` reads grants.json: with no wide-grants.json
        nothing is opened (a call decided by a rule looks for a grant first: issue 57's cost
        bound), and an unchanged one is not parsed again."""
        try:
            st = os.lstat(self._wide_path)
        except FileNotFoundError:
            return ()
        except OSError:
            return tuple(self._wide.items())  # say why, as reading it says
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        read = self._wide_read
        if read is not None and read[0] == key:
            self._check_home()
            return read[1]
        grants = tuple(self._wide.items())
        self._wide_read = (key, grants)
        return grants

    def _check_home(self) -> None:
        """Refuse an unsafe home (writable by others, another's, a symlink) as reading the
        grants would: a long-lived gate must not keep trusting grants from a home that has
        become unsafe since it last read them."""
        try:
            refuse_anothers_home(self.home)
            os.close(open_private_dir(str(self.home)))
        except PendingError as exc:
            raise StoreError(str(exc)) from None

    def add(
        self,
        *,
        scope: Scope,
        command: str,
        cwd: str,
        request: str,
        user: str,
        options: Mapping[str, Any] | None = None,
    ) -> Grant:
        if scope not in STORED_SCOPES:
            raise ValueError(f"{scope!r} grants are not stored")
        grant = Grant(
            id=new_grant_id(),
            scope=Scope(scope),
            command=command,
            granted_at=record_time(self.clock),
            request=request,
            user=user,
            options=options_key(options),
            **_project_fields(scope, cwd),
        )
        with self._store.locked() as home_fd:
            self._store.write(home_fd, [*self._store.read(home_fd), grant])
        return grant

    def revoke(
        self, grant_id: str, *, entry_point: EntryPoint = EntryPoint.APPROVALS
    ) -> Grant | None:
        """Remove a grant (audited); the one removed, or None if there was none by that ID."""
        removed = (
            _remove(self._store, grant_id)
            or _remove(self._tools, grant_id)
            or _remove(self._sessions, grant_id)
            or _remove(self._wide, grant_id)
        )
        if removed is None:
            return None
        audit(
            self.home,
            AuditEvent.APPROVAL_REVOKED,
            {
                "grant": removed.id,
                "scope": removed.scope,
                "command": removed.command,
                "project": removed.project,
                **({"kind": removed.kind.value, "tool": removed.tool} if removed.tool else {}),
                **wide_fields(removed),
            },
            entry_point=entry_point,
            clock=self.clock,
        )
        return removed

    # --- tool calls, and sessions kept for a thread -------------------------------------------

    def covering_tool(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        *,
        thread: str | None = None,
        edits: tuple[str, ...] = (),
        must_ask: bool = False,
    ) -> Grant | None:
        """The grant that covers this tool call here: a stored one, or *thread*'s session;
        exact, or (*edits*: the absolute paths the call edits, if it is an edit) a `file` or
        `project` one. None for a *must_ask* call: no grant covers one."""
        if must_ask:
            return None
        key = tool_input_key(tool_input)
        found = [*self._tools.items(), *self._thread_grants(thread)]
        exact = next((g for g in found if g.covers_tool(tool, key, cwd)), None)
        if exact is not None or not edits:
            return exact
        wide = (g for g in self._wide_now() if g.thread in (None, thread) and self._live(g))
        return next((g for g in wide if g.covers_edits(edits, cwd)), None)

    def covering_in_thread(
        self,
        command: str,
        cwd: str,
        thread: str,
        *,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        must_ask: bool = False,
    ) -> Grant | None:
        """The session grant kept for *thread* that covers *command* (with *options*): exact,
        or (*words*, as :meth:`covering` takes them) a `command` one. None for *must_ask*."""
        if must_ask:
            return None
        key = options_key(options)
        exact = next((g for g in self._thread_grants(thread) if g.covers(command, cwd, key)), None)
        if exact is not None or words is None:
            return exact
        kept = (g for g in self._wide_now() if g.thread == thread and self._fresh(g))
        return next((g for g in kept if g.covers_words(words, cwd, key)), None)

    def _live(self, grant: Grant) -> bool:
        """A stored grant, or a thread's that has not aged out."""
        return grant.thread is None or self._fresh(grant)

    def add_wide(
        self,
        *,
        scope: Scope,
        width: Width,
        cwd: str,
        request: str,
        user: str,
        prefix: tuple[str, ...] | None = None,
        path: str | None = None,
        options: Mapping[str, Any] | None = None,
        thread: str | None = None,
    ) -> Grant:
        """Keep a grant wider than the exact call: `command` (*prefix*, with the call's
        *options*), `file` or `project` (*path*), for *scope* (a `session` one for *thread*
        only: a gate keeps its own in memory)."""
        grant = wide_grant(
            scope=scope,
            width=width,
            cwd=cwd,
            request=request,
            user=user,
            prefix=prefix,
            path=path,
            options=options,
            granted_at=record_time(self.clock),
            grant_id=new_grant_id(),
        )
        if scope is Scope.SESSION:
            if thread is None:
                raise ValueError("a stored session grant is kept for a thread")
            grant = grant._replace(thread=thread)
        with self._wide.locked() as home_fd:
            kept = [g for g in self._wide.read(home_fd) if self._live(g)]
            self._wide.write(home_fd, [*kept, grant])
        return grant

    def add_tool(
        self,
        *,
        scope: Scope,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        request: str,
        user: str,
    ) -> Grant:
        """Keep a project or always grant for exactly this tool call."""
        if scope not in STORED_SCOPES:
            raise ValueError(f"{scope!r} grants are not stored")
        grant = self._tool_grant(scope, tool, tool_input, cwd, request, user)
        with self._tools.locked() as home_fd:
            self._tools.write(home_fd, [*self._tools.read(home_fd), grant])
        return grant

    def keep_session(
        self,
        *,
        thread: str,
        command: str | None = None,
        options: Mapping[str, Any] | None = None,
        tool: str | None = None,
        tool_input: Mapping[str, Any] | None = None,
        request: str,
        user: str,
    ) -> Grant:
        """Keep a session approval for *thread*: a command, or a tool call (*tool*,
        *tool_input*). Grants of sessions past SESSION_GRANT_MAX_AGE_S are dropped."""
        if tool is not None:
            grant = self._tool_grant(Scope.SESSION, tool, tool_input or {}, "", request, user)
        else:
            assert command is not None
            grant = Grant(
                id=new_grant_id(),
                scope=Scope.SESSION,
                command=command,
                project=None,
                granted_at=record_time(self.clock),
                request=request,
                user=user,
                options=options_key(options),
            )
        grant = grant._replace(thread=thread)
        with self._sessions.locked() as home_fd:
            kept = [g for g in self._sessions.read(home_fd) if self._fresh(g)]
            self._sessions.write(home_fd, [*kept, grant])
        return grant

    def end_session(self, thread: str) -> int:
        """Forget *thread*'s session grants (its session ended); how many there were."""
        ended = 0
        for store in (self._sessions, self._wide):
            with store.locked() as home_fd:
                grants = store.read(home_fd)
                kept = [
                    g for g in grants if g.thread is None or (g.thread != thread and self._fresh(g))
                ]
                if len(kept) != len(grants):
                    store.write(home_fd, kept)
            ended += sum(1 for g in grants if g.thread == thread)
        return ended

    def _thread_grants(self, thread: str | None) -> tuple[Grant, ...]:
        if thread is None:
            return ()
        return tuple(g for g in self._sessions.items() if g.thread == thread and self._fresh(g))

    def _fresh(self, grant: Grant) -> bool:
        from datetime import timedelta  # here: a hook with no session grant reads no date

        return self.clock.now() - grant.granted_at < timedelta(seconds=SESSION_GRANT_MAX_AGE_S)

    def _tool_grant(
        self,
        scope: Scope,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        request: str,
        user: str,
    ) -> Grant:
        return Grant(
            id=new_grant_id(),
            scope=Scope(scope),
            command=tool_text(tool, tool_input),
            **_project_fields(scope, cwd),
            granted_at=record_time(self.clock),
            request=request,
            user=user,
            kind=Kind.TOOL,
            tool=tool,
            input=tool_input_key(tool_input),
        )


def wide_grant(
    *,
    scope: Scope,
    width: Width,
    cwd: str,
    request: str,
    user: str,
    granted_at: datetime,
    grant_id: str | None,
    prefix: tuple[str, ...] | None = None,
    path: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Grant:
    """A grant wider than the exact call (see :meth:`GrantStore.add_wide`); a gate keeps a
    `session` one (*grant_id* None) in its memory."""
    if scope not in WIDE_SCOPES:
        raise ValueError(f"a {width} grant is for {', '.join(WIDE_SCOPES)}, not {scope}")
    place = _project_fields(scope, cwd)
    if width is Width.COMMAND:
        if not prefix:
            raise ValueError("a command grant needs its prefix")
        fields: dict[str, Any] = {"kind": Kind.COMMAND, "prefix": tuple(prefix)}
        fields["options"] = options_key(options)
    elif width in (Width.FILE, Width.PROJECT):
        if path is None or not path.startswith("/"):
            raise ValueError(f"a {width} grant needs its absolute path")
        real = _real(path)
        fields = {"kind": Kind.TOOL, "path": real}
        if width is Width.PROJECT:
            fields["path_id"] = project_identity(real)
    else:
        raise ValueError(f"a {width} grant is an exact one")
    grant = Grant(
        id=grant_id,
        scope=Scope(scope),
        command="",
        granted_at=granted_at,
        request=request,
        user=user,
        width=width,
        **place,
        **fields,
    )
    return grant._replace(command=grant.pattern)


def _wide_grant_from(item: Any) -> Grant:
    """A grant wider than the exact call: a stored one, or a session's kept for its thread."""
    scope, thread = item["scope"], item.get("thread")
    if scope not in WIDE_SCOPES or (scope == Scope.SESSION) != isinstance(thread, str):
        raise ValueError("a wide grant's scope is session (with its thread), project or always")
    if thread is not None and not isinstance(thread, str):
        raise TypeError("a grant's thread is text")
    grant = _grant_from({**item, "scope": Scope.ALWAYS.value if thread else scope})
    width = Width(item["width"])
    if width is Width.COMMAND:
        prefix = item["prefix"]
        if (
            not isinstance(prefix, list)
            or not prefix
            or not all(isinstance(w, str) and w for w in prefix)
        ):
            raise TypeError("a command grant's prefix is a list of words")
        grant = grant._replace(width=width, prefix=tuple(prefix))
    elif width in (Width.FILE, Width.PROJECT):
        path, path_id = item["path"], item.get("pathId")
        if not isinstance(path, str) or not path.startswith("/"):
            raise TypeError(f"a {width} grant's path is absolute")
        if path_id is not None and not isinstance(path_id, str):
            raise TypeError("a grant's pathId is text")
        grant = grant._replace(kind=Kind.TOOL, width=width, path=path, path_id=path_id)
    else:
        raise ValueError("a wide grant is wider than the exact call")
    if thread is not None:
        grant = grant._replace(scope=Scope.SESSION, thread=thread)
    return grant


def _remove(store: JsonStore[Grant], grant_id: str) -> Grant | None:
    with store.locked() as home_fd:
        grants = store.read(home_fd)
        kept = [g for g in grants if g.id != grant_id]
        if len(kept) == len(grants):
            return None
        store.write(home_fd, kept)
    return next(g for g in grants if g.id == grant_id)


def _tool_grant_from(item: Any) -> Grant:
    """A tool call's grant: a command grant's fields, and its tool and input."""
    grant = _grant_from(item)
    return _with_tool(grant, item)


def _with_tool(grant: Grant, item: Any) -> Grant:
    tool, tool_input = item["tool"], item["input"]
    if item["kind"] != Kind.TOOL.value or not isinstance(tool, str):
        raise TypeError("a tool grant needs its kind and tool")
    if not isinstance(tool_input, dict):
        raise TypeError("a tool grant's input is a JSON object")
    return grant._replace(kind=Kind.TOOL, tool=tool, input=tool_input_key(tool_input))


def _session_grant_from(item: Any) -> Grant:
    """A session grant kept for a thread: a command's, or a tool call's."""
    thread = item["thread"]
    if item["scope"] != Scope.SESSION or not isinstance(thread, str):
        raise ValueError("a kept session grant needs its scope and thread")
    grant = _grant_from({**item, "scope": Scope.ALWAYS.value})
    grant = grant._replace(scope=Scope.SESSION, thread=thread)
    return _with_tool(grant, item) if item.get("kind") == Kind.TOOL.value else grant


def _grant_from(item: Any) -> Grant:
    # pending's, imported with the first grant read: it loads datetime, which a hook with no
    # grant to read never needs (~5.6 M instructions).
    from pending import parse_time

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
    options = item.get("options")
    if options is not None and not isinstance(options, dict):
        raise TypeError("a grant's options are a JSON object")
    project_id = item.get("projectId")
    if project_id is not None and not isinstance(project_id, str):
        raise TypeError("a grant's projectId is text")
    return Grant(
        options=options_key(options),
        project_id=project_id,
        id=str(fields["id"]),
        scope=Scope(scope),
        command=str(fields["command"]),
        project=project if isinstance(project, str) else None,
        granted_at=parse_time(granted_at),
        request=str(fields["request"]),
        user=str(fields["user"]),
    )
