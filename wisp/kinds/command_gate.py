"""The command kind's gate: may this shell command (or this tool call) run?

:class:`ApprovalGate` asks the person through the asker it is handed, keeps the grants their
answers make (a `session` one for the gate's life, or for a thread in the grant store; a
`project` or `always` one in the store), and gives a verdict, an :class:`Approval`. A tool
call other than a shell command (the `tool` kind) is asked and judged by the same gate: its
verdict is the same record. The view these requests are shown with is the kind's module
(`command.py`, `tool.py`); this one is loaded only by what asks (a listing never does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from pending import (
    MUST_ASK_MAX_REASONS,
    PREFIX_MAX_WORDS,
    WIDE_SCOPES,
    CommandBinding,
    Decision,
    Kind,
    Offer,
    Offers,
    Outcome,
    Request,
    Scope,
    ToolBinding,
    Width,
    answer_width,
    must_ask_offers,
    offers_json,
    record_time,
)
from wisp._home import current_user
from wisp.kinds import view
from wisp.kinds._asker import AskingServer, Ending
from wisp.kinds.standing import StandingGrants
from wisp.stores.grants import Grant, GrantStore, options_key, wide_grant
from wisp.stores.jsonstore import StoreError

_COMMANDS = view(Kind.COMMAND)


class ApprovalOutcome(StrEnum):
    """How the gate's verdict came about: a standing grant, or how the request ended."""

    GRANTED = "granted"  # a grant covered it: nobody was asked
    ANSWERED = Outcome.ANSWERED.value
    TIMED_OUT = Outcome.TIMED_OUT.value
    WITHDRAWN = Outcome.WITHDRAWN.value
    FAILED = Outcome.FAILED.value
    STALE = Outcome.STALE.value


class Approval(NamedTuple):
    """The gate's verdict on a command."""

    approved: bool
    outcome: ApprovalOutcome
    scope: Scope | None = None  # when approved
    request_id: str | None = None  # None when a grant covered it without asking
    grant: Grant | None = None
    reason: str | None = None


def approval_by(grant: Grant | None) -> Approval | None:
    """The approval a standing grant gives at once (None: no grant, the person is asked)."""
    if grant is None:
        return None
    return Approval(approved=True, outcome=ApprovalOutcome.GRANTED, scope=grant.scope, grant=grant)


class Widths(NamedTuple):
    """What the policy read of a call that sets the answers a person is offered beside the
    exact call (:func:`offers_for`): a must-ask call is offered `once` and `no` only."""

    must_ask: tuple[str, ...] = ()  # why it is must-ask, in words; () if it is not
    # "This command with any arguments": each simple command's first words (`npm test`).
    prefixes: tuple[tuple[str, ...], ...] = ()
    edit_paths: tuple[str, ...] = ()  # "edits to this file": the absolute paths it edits
    project: str | None = None  # "edits in this project": the session's project


def offers_for(widths: Widths | None, kind: Kind) -> dict[str, Any] | None:
    """The `offers` a request of *kind* (command or tool) is filed with, from what the policy
    read of its call (docs/channel.md, "Widths"); None (no widths given): every scope of the
    exact call, as before. A must-ask call: `once` only, with why. A command: beside the
    exact call, "this command with any arguments" for each prefix. A tool call that edits:
    "edits to this file" (one file edited) and "edits in this project" (every file edited
    inside it). The wider widths are offered for the session or standing."""
    if widths is None:
        return None
    if widths.must_ask:
        why = [said for said in widths.must_ask if said][:MUST_ASK_MAX_REASONS]
        return offers_json(must_ask_offers(tuple(why) or ("it is asked every time",)))
    offered = [Offer(width=Width.EXACT, scopes=tuple(Scope))]
    if kind is Kind.COMMAND:
        prefixes = (tuple(p) for p in widths.prefixes if 0 < len(p) <= PREFIX_MAX_WORDS)
        for prefix in list(dict.fromkeys(p for p in prefixes if all(p)))[:MAX_PREFIXES_OFFERED]:
            offered.append(Offer(width=Width.COMMAND, scopes=WIDE_SCOPES, prefix=prefix))
    elif kind is Kind.TOOL:
        paths = (p for p in widths.edit_paths if p.startswith("/") and "\0" not in p)
        edits = tuple(dict.fromkeys(paths))
        if len(edits) == 1:
            offered.append(Offer(width=Width.FILE, scopes=WIDE_SCOPES, path=edits[0]))
        project = widths.project
        inside = project is not None and all(_inside(e, project) for e in edits)
        if edits and project and project.startswith("/") and "\0" not in project and inside:
            offered.append(Offer(width=Width.PROJECT, scopes=WIDE_SCOPES, path=project))
    return offers_json(Offers(must_ask=(), widths=tuple(offered)))


# A line with more commands than this offers the first ones' prefixes (a record offers at most
# pending's OFFERS_MAX_WIDTHS; a person grants a handful).
MAX_PREFIXES_OFFERED = 8


def _inside(path: str, project: str) -> bool:
    import os.path

    real, root = os.path.realpath(path), os.path.realpath(project)
    return real != root and real.startswith(root.rstrip("/") + "/")


class ApprovalGate(StandingGrants):
    """Asks the person before a command runs, and remembers the grants they give."""

    def granted(
        self,
        command: str,
        cwd: str,
        *,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        must_ask: bool = False,
    ) -> Approval | None:
        """The approval a standing grant (this session's, a project's, always) gives at once
        without asking (audited), or None if the person must be asked (*words*, *must_ask*:
        as :meth:`grant_for` takes them)."""
        return approval_by(
            self.grant_for(command, cwd, options=options, words=words, must_ask=must_ask)
        )

    def granted_tool(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        *,
        thread: str | None = None,
        edits: tuple[str, ...] = (),
        must_ask: bool = False,
    ) -> Approval | None:
        """The approval a grant gives this tool call at once (audited), or None."""
        return approval_by(
            self.grant_for_tool(
                tool, tool_input, cwd, thread=thread, edits=edits, must_ask=must_ask
            )
        )

    def granted_in_thread(
        self,
        command: str,
        cwd: str,
        thread: str,
        *,
        options: Mapping[str, Any] | None = None,
        words: tuple[str, ...] | None = None,
        must_ask: bool = False,
    ) -> Approval | None:
        """As :meth:`granted`, and also by a session approval kept for *thread*."""
        return approval_by(
            self.grant_in_thread(
                command, cwd, thread, options=options, words=words, must_ask=must_ask
            )
        )

    def __init__(self, asker: AskingServer, *, timeout_s: float, grants: GrantStore | None = None):
        super().__init__(asker.home, asker.entry_point, grants=grants, clock=asker.clock)
        self.asker = asker
        self.timeout_s = timeout_s

    def file(
        self,
        command: str,
        cwd: str,
        *,
        reason: str | None = None,
        thread: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
        options: Mapping[str, Any] | None = None,
        widths: Widths | None = None,
        push_after_s: float = 0.0,
    ) -> Request:
        """Ask the person about *command* (with a shell call's *options*, shown and bound by
        any grant it makes), offering the answers *widths* sets (:func:`offers_for`), and
        return at once (its push held back *push_after_s*); :meth:`wisp.Asker.wait` for the
        ending, then :meth:`verdict`."""
        binding = CommandBinding(
            command=command,
            cwd=cwd,
            thread=thread,
            reason=reason,
            options=options,
            offers=offers_for(widths, Kind.COMMAND),
        )
        return self.asker.file(
            Kind.COMMAND,
            binding,
            title=_COMMANDS.title,
            body=lambda rid: _COMMANDS.body(command, rid),
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
            push_after_s=push_after_s,
        )

    def request(
        self,
        command: str,
        cwd: str,
        *,
        reason: str | None = None,
        thread: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Approval:
        """Whether *command* may run in *cwd*: a grant, or the person's answer (waits).
        Raises :class:`pending.ChannelUnwritable` if the channel could not record how it
        ended (it is then not approved); a time-out that could not be recorded is still a
        time-out (:meth:`verdict` of the ending never raises)."""
        granted = self.granted(command, cwd, options=options)
        if granted is not None:
            return granted
        changed = self.program_changes(command, cwd, thread, options)
        request = self.file(
            command,
            cwd,
            reason="; ".join(part for part in (changed, reason) if part) or None,
            thread=thread,
            timeout_s=timeout_s,
            on_filed=on_filed,
            options=options,
        )
        ending = self.asker.wait(request.id)
        assert ending is not None  # no wait limit: only an ending returns
        if ending.error is not None and ending.outcome is not Outcome.TIMED_OUT:
            raise ending.error  # not approved, and the channel cannot be used: say so
        return self.verdict(ending)

    def verdict(self, ending: Ending) -> Approval:
        """The approval an ended command request gives; an approval with a standing scope is
        remembered as a grant."""
        binding = ending.request.binding
        assert isinstance(binding, CommandBinding)
        command, cwd = binding.command, binding.cwd
        decision = ending.decision
        approved = ending.outcome is Outcome.ANSWERED and decision not in (None, Decision.NO)
        if not approved:
            denial = ending.answer.reason if ending.answer and decision == Decision.NO else None
            return Approval(
                approved=False,
                outcome=ApprovalOutcome(ending.outcome),
                request_id=ending.request.id,
                reason=ending.reason or denial,
            )
        assert decision is not None
        scope = Scope(decision)  # an answered command's decision is a scope, or `no`
        try:
            grant, note = self._remember(scope, command, cwd, ending), None
        except StoreError as exc:  # the approval stands; only its standing grant is lost
            grant, note = None, f"approved, but the {scope} grant was not saved: {exc}"
        return Approval(
            approved=True,
            outcome=ApprovalOutcome.ANSWERED,
            scope=scope,
            request_id=ending.request.id,
            grant=grant,
            reason=note,
        )

    def _remember(self, scope: Scope, command: str, cwd: str, ending: Ending) -> Grant | None:
        user = ending.answer.user if ending.answer else current_user()
        binding = ending.request.binding
        options = binding.options if isinstance(binding, CommandBinding) else None
        wide = self._remember_wide(scope, ending, user)
        if wide is not None:
            return wide
        if scope is Scope.SESSION:
            grant = Grant(
                id=None,  # kept by this gate only: it has no ID in the store
                scope=Scope.SESSION,
                command=command,
                project=None,
                granted_at=record_time(self.asker.clock),
                request=ending.request.id,
                user=user,
                options=options_key(options),
            )
            self._session[(command, grant.options)] = grant
            return grant
        if scope in (Scope.PROJECT, Scope.ALWAYS):
            return self.grants.add(
                scope=scope,
                command=command,
                cwd=cwd,
                request=ending.request.id,
                user=user,
                options=options,
            )
        return None

    def _remember_wide(self, scope: Scope, ending: Ending, user: str) -> Grant | None:
        """The grant an approval wider than the exact call makes (its answer's `width`): a
        `session` one kept in this gate's memory (a thread's: :meth:`remember_for_thread`),
        a standing one in the store. None for the exact call (or `once`)."""
        answer = ending.answer
        width, prefix, path = answer_width(answer.width if answer else None)
        if width is Width.EXACT or scope not in WIDE_SCOPES:
            return None
        binding = ending.request.binding
        assert isinstance(binding, CommandBinding | ToolBinding)
        options = binding.options if isinstance(binding, CommandBinding) else None
        if scope is Scope.SESSION:
            grant = wide_grant(
                scope=scope,
                width=width,
                cwd=binding.cwd,
                request=ending.request.id,
                user=user,
                prefix=prefix,
                path=path,
                options=options,
                granted_at=record_time(self.asker.clock),
                grant_id=None,
            )
            self._session_wide.append(grant)
            return grant
        return self.grants.add_wide(
            scope=scope,
            width=width,
            cwd=binding.cwd,
            request=ending.request.id,
            user=user,
            prefix=prefix,
            path=path,
            options=options,
        )

    # --- tool calls, and session approvals kept for a thread --------------------------------
    #
    # A tool call other than a shell command is asked about as a `tool` request; its grants
    # match the exact tool and its canonical input. A thread whose asker lives for one call
    # only (a Claude Code hook: one process per tool call, Claude's session as the thread)
    # keeps a `session` approval in the grant store for that thread, not in this gate's memory.

    def file_tool(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        *,
        thread: str | None = None,
        reason: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
        widths: Widths | None = None,
        push_after_s: float = 0.0,
    ) -> Request:
        """Ask the person about a tool call, offering the answers *widths* sets
        (:func:`offers_for`), and return at once (its push held back *push_after_s*);
        :meth:`wisp.Asker.wait` for the ending, then :meth:`tool_verdict`."""
        tool_view = view(Kind.TOOL)
        binding = ToolBinding(
            tool=tool,
            input=dict(tool_input),
            cwd=cwd,
            thread=thread,
            reason=reason,
            offers=offers_for(widths, Kind.TOOL),
        )
        return self.asker.file(
            Kind.TOOL,
            binding,
            title=tool_view.title,
            body=lambda rid: tool_view.body(tool_view.asked(binding), rid),
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
            push_after_s=push_after_s,
        )

    def tool_verdict(self, ending: Ending) -> Approval:
        """The approval an ended tool request gives; a project or always approval is kept as
        a grant of exactly that tool call (a session one: :meth:`remember_for_thread`)."""
        binding = ending.request.binding
        assert isinstance(binding, ToolBinding)
        decision = ending.decision
        if ending.outcome is not Outcome.ANSWERED or decision in (None, Decision.NO):
            denial = ending.answer.reason if ending.answer and decision == Decision.NO else None
            return Approval(
                approved=False,
                outcome=ApprovalOutcome(ending.outcome.value),
                request_id=ending.request.id,
                reason=ending.reason or denial,
            )
        grant, note = None, None
        user = ending.answer.user if ending.answer else current_user()
        try:
            grant = self._remember_wide(Scope(decision), ending, user)
        except StoreError as exc:  # the approval stands; only its standing grant is lost
            note = f"approved, but the {decision} grant was not saved: {exc}"
        if grant is None and note is None and decision in (Scope.PROJECT, Scope.ALWAYS):
            try:
                grant = self.grants.add_tool(
                    scope=Scope(decision),
                    tool=binding.tool,
                    tool_input=binding.input,
                    cwd=binding.cwd,
                    request=ending.request.id,
                    user=user,
                )
            except StoreError as exc:  # the approval stands; only its standing grant is lost
                note = f"approved, but the {decision} grant was not saved: {exc}"
        return Approval(
            approved=True,
            outcome=ApprovalOutcome.ANSWERED,
            scope=Scope(decision),
            request_id=ending.request.id,
            grant=grant,
            reason=note,
        )

    def remember_for_thread(self, approval: Approval, ending: Ending) -> Approval:
        """Keep a `session` approval of a command or a tool call for the request's thread, in
        the grant store (its asker lives for this call only). Any other approval is as it was."""
        binding = ending.request.binding
        thread = getattr(binding, "thread", None)
        if not approval.approved or approval.scope != Scope.SESSION or thread is None:
            return approval
        user = ending.answer.user if ending.answer else current_user()
        width, prefix, path = answer_width(ending.answer.width if ending.answer else None)
        try:
            if width is not Width.EXACT:
                assert isinstance(binding, CommandBinding | ToolBinding)
                grant = self.grants.add_wide(
                    scope=Scope.SESSION,
                    width=width,
                    cwd=binding.cwd,
                    request=ending.request.id,
                    user=user,
                    prefix=prefix,
                    path=path,
                    options=binding.options if isinstance(binding, CommandBinding) else None,
                    thread=thread,
                )
            elif isinstance(binding, ToolBinding):
                grant = self.grants.keep_session(
                    thread=thread,
                    tool=binding.tool,
                    tool_input=binding.input,
                    request=ending.request.id,
                    user=user,
                )
            else:
                assert isinstance(binding, CommandBinding)
                grant = self.grants.keep_session(
                    thread=thread,
                    command=binding.command,
                    options=binding.options,
                    request=ending.request.id,
                    user=user,
                )
        except StoreError as exc:
            note = f"approved, but the session grant was not saved: {exc}"
            return approval._replace(reason=note)
        return approval._replace(grant=grant)
