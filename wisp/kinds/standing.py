"""The grants that allow a call at once, without asking: what a gate checks first, and all a
hook needs for a call a grant covers.

Loaded without the records, attrs or the asking side: a hook whose call a grant covers
decides from the grant store alone and loads nothing it can spare (bench/README.md, issue
41). The gate that asks (:class:`~wisp.kinds.command_gate.ApprovalGate`) stands on this one
and turns its grants into approvals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from pending import SYSTEM_CLOCK, Clock, Kind
from wisp._entry import EntryPoint
from wisp.audit.writer import AuditEvent, audit
from wisp.kinds.programs import (
    DIGEST_PREFIX,
    PROGRAMS_OPTION,
    changes,
    coverable,
    programs_bound,
)
from wisp.stores.grants import Grant, GrantStore, options_key, wide_fields

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any


class StandingGrants:
    """The grants that allow a call at once, each allow audited: a stored grant (`project`,
    `always`), a `session` one this gate keeps for its life, or one kept for a thread."""

    def __init__(
        self,
        home: Path,
        entry_point: EntryPoint,
        *,
        grants: GrantStore | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.home = home
        self.entry_point = entry_point
        self.grants = grants or GrantStore(home, clock=clock)
        # (command, options' key) -> grant, for this server's life
        self._session: dict[tuple[str, str | None], Grant] = {}
        # This gate's session grants wider than the exact call (`command`, `file`, `project`).
        self._session_wide: list[Grant] = []

    def _covering(
        self,
        command: str,
        cwd: str,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
    ) -> Grant | None:
        if not coverable(options):  # a program file with no digest: asked each time
            return None
        key = options_key(options)
        grant = self._session.get((command, key))
        if grant is not None:
            return grant
        if words is not None:
            wide = (g for g in self._session_wide if g.covers_words(words, cwd, key))
            grant = next(wide, None)
            if grant is not None:
                return grant
        try:
            return self.grants.covering(command, cwd, options=options, words=words)
        except Exception:  # a damaged store grants nothing: the person is asked instead
            return None

    def grant_for(
        self,
        command: str,
        cwd: str,
        *,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        must_ask: bool = False,
    ) -> Grant | None:
        """The grant (this gate's session, a project's, always) that lets *command* run at
        once without asking (its allow audited), or None if the person must be asked.
        *words*: the line is one simple command of these words, as the policy's parser reads
        it (then a `command` grant on its first words covers it; None: only an exact grant
        does). A *must_ask* call is covered by no grant."""
        if must_ask:
            return None
        grant = self._covering(command, cwd, options, words)
        fields = {"kind": Kind.COMMAND.value, "command": command, "cwd": cwd}
        return None if grant is None else self._audited(grant, fields)

    def grant_for_tool(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        *,
        thread: str | None = None,
        edits: tuple[str, ...] = (),
        must_ask: bool = False,
    ) -> Grant | None:
        """The grant that lets this tool call run at once (audited), or None. *edits*: the
        absolute paths it edits, if it is an edit (then a `file` or `project` grant may
        cover it). A *must_ask* call is covered by no grant."""
        if must_ask:
            return None
        grant = next((g for g in self._session_wide if g.covers_edits(edits, cwd)), None)
        if grant is None:
            try:
                grant = self.grants.covering_tool(tool, tool_input, cwd, thread=thread, edits=edits)
            except Exception:  # a damaged store grants nothing: the person is asked instead
                return None
        fields = {"kind": Kind.TOOL.value, "tool": tool, "input": dict(tool_input), "cwd": cwd}
        return None if grant is None else self._audited(grant, fields)

    def grant_in_thread(
        self,
        command: str,
        cwd: str,
        thread: str,
        *,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        must_ask: bool = False,
    ) -> Grant | None:
        """As :meth:`grant_for`, and also a session approval kept for *thread*."""
        if must_ask:
            return None
        grant = self.grant_for(command, cwd, options=options, words=words)
        if grant is not None or not coverable(options):
            return grant
        try:
            grant = self.grants.covering_in_thread(
                command, cwd, thread, options=options, words=words
            )
        except Exception:  # a damaged store grants nothing: the person is asked instead
            return None
        fields = {"kind": Kind.COMMAND.value, "command": command, "cwd": cwd}
        return None if grant is None else self._audited(grant, fields)

    def covering_call(
        self,
        *,
        cwd: str,
        thread: str | None,
        command: str | None = None,
        options: Mapping[str, Any] | None = None,
        tool: str | None = None,
        tool_input: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        edits: tuple[str, ...] = (),
        must_ask: bool = False,
    ) -> Grant | None:
        """The grant that lets a call run at once — a shell call's *command* (this gate's
        session, a project's, always, a session approval kept for *thread*; exact, or a
        `command` grant on *words*: :func:`wisp.policy.widths.grant_words`), or *tool* with
        *tool_input* (exact, or a `file` or `project` grant on *edits*, the absolute paths
        it edits) — or None: the same lookup as :meth:`grant_in_thread` and
        :meth:`grant_for_tool`, NOT audited (the decision that asks it writes the call's one
        record). A *must_ask* call is covered by no grant."""
        if must_ask:
            return None
        if command is None:
            assert tool is not None
            wide = next((g for g in self._session_wide if g.covers_edits(edits, cwd)), None)
            if wide is not None:
                return wide
            try:
                return self.grants.covering_tool(
                    tool, tool_input or {}, cwd, thread=thread, edits=edits
                )
            except Exception:  # a damaged store grants nothing: the person is asked instead
                return None
        grant = self._covering(command, cwd, options, words)
        if grant is not None or thread is None or not coverable(options):
            return grant
        try:
            return self.grants.covering_in_thread(
                command, cwd, thread, options=options, words=words
            )
        except Exception:  # a damaged store grants nothing: the person is asked instead
            return None

    def program_changes(
        self, command: str, cwd: str, thread: str | None, options: Mapping[str, Any] | None
    ) -> str | None:
        """Why no grant covers *command* for its program files (:mod:`wisp.kinds.programs`),
        in words: one has no digest, or a grant of the same command (with the same other
        options) was given for other content, or before programs were bound. None if no
        program file is why."""
        now = programs_bound(options)
        if not now:
            return None
        if not coverable(options):
            unsealed = {p: s for p, s in now.items() if not s.startswith(DIGEST_PREFIX)}
            return "; ".join(changes(unsealed, None, cwd, ""))
        others = options_key({k: v for k, v in (options or {}).items() if k != PROGRAMS_OPTION})
        try:
            grants = [*self._session.values(), *self.grants.list(sessions=True)]
        except Exception:  # a damaged store: it says so when a grant is looked for
            return None
        for grant in grants:
            if grant.thread not in (None, thread) or not grant.covers(command, cwd, grant.options):
                continue
            given = json.loads(grant.options) if grant.options else {}
            if options_key({k: v for k, v in given.items() if k != PROGRAMS_OPTION}) != others:
                continue
            name = f"grant {grant.id}" if grant.id else "your session approval"
            granted = programs_bound(given) if PROGRAMS_OPTION in given else None
            said = changes(now, granted, cwd, name)
            if said:
                return "; ".join(said)
        return None

    def _audited(self, grant: Grant, fields: Mapping[str, object]) -> Grant:
        audit(
            self.home,
            AuditEvent.APPROVAL_GRANTED,
            {**fields, "grant": grant.name, "scope": grant.scope, **wide_fields(grant)},
            entry_point=self.entry_point,
        )
        return grant
