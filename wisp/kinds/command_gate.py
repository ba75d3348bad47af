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
    CommandBinding,
    Decision,
    Kind,
    Outcome,
    Request,
    Scope,
    ToolBinding,
    record_time,
)
from wisp._home import current_user
from wisp.kinds import view
from wisp.kinds._asker import AskingServer, Ending
from wisp.kinds.standing import StandingGrants
from wisp.stores.grants import Grant, GrantStore, options_key
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
    exact call (issue 57; the widths work fills in how they are offered and granted): a
    must-ask call is offered `once` and `no` only."""

    must_ask: tuple[str, ...] = ()  # why it is must-ask, in words; () if it is not
    # "This command with any arguments": each simple command's first words (`npm test`).
    prefixes: tuple[tuple[str, ...], ...] = ()
    edit_paths: tuple[str, ...] = ()  # "edits to this file": the absolute paths it edits
    project: str | None = None  # "edits in this project": the session's project


class ApprovalGate(StandingGrants):
    """Asks the person before a command runs, and remembers the grants they give."""

    def granted(
        self, command: str, cwd: str, *, options: Mapping[str, Any] | None = None
    ) -> Approval | None:
        """The approval a standing grant (this session's, a project's, always) gives at once
        without asking (audited), or None if the person must be asked."""
        return approval_by(self.grant_for(command, cwd, options=options))

    def granted_tool(
        self, tool: str, tool_input: Mapping[str, Any], cwd: str, *, thread: str | None = None
    ) -> Approval | None:
        """The approval a grant gives this tool call at once (audited), or None."""
        return approval_by(self.grant_for_tool(tool, tool_input, cwd, thread=thread))

    def granted_in_thread(
        self,
        command: str,
        cwd: str,
        thread: str,
        *,
        options: Mapping[str, Any] | None = None,
    ) -> Approval | None:
        """As :meth:`granted`, and also by a session approval kept for *thread*."""
        return approval_by(self.grant_in_thread(command, cwd, thread, options=options))

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
    ) -> Request:
        """Ask the person about *command* (with a shell call's *options*, shown and bound by
        any grant it makes) and return at once; :meth:`wisp.Asker.wait` for the ending, then
        :meth:`verdict`."""
        binding = CommandBinding(
            command=command, cwd=cwd, thread=thread, reason=reason, options=options
        )
        return self.asker.file(
            Kind.COMMAND,
            binding,
            title=_COMMANDS.title,
            body=lambda rid: _COMMANDS.body(command, rid),
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
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
    ) -> Request:
        """Ask the person about a tool call and return at once; :meth:`wisp.Asker.wait` for the
        ending, then :meth:`tool_verdict`."""
        tool_view = view(Kind.TOOL)
        binding = ToolBinding(
            tool=tool, input=dict(tool_input), cwd=cwd, thread=thread, reason=reason
        )
        return self.asker.file(
            Kind.TOOL,
            binding,
            title=tool_view.title,
            body=lambda rid: tool_view.body(tool_view.asked(binding), rid),
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
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
        if decision in (Scope.PROJECT, Scope.ALWAYS):
            user = ending.answer.user if ending.answer else current_user()
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
        try:
            if isinstance(binding, ToolBinding):
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
