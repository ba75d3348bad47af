"""Claude Code's hooks: one hook event in, the person's decision out (`wisp hook claude-code`).

Claude Code runs a command hook once per event, with the event as JSON on stdin, and reads
its decision from stdout (its hooks reference: input `session_id`, `transcript_path`, `cwd`,
`permission_mode`, `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`; output
`hookSpecificOutput`; exit 0 with JSON, or exit 2 to block with the reason on stderr).

:func:`answer_event` turns a `PreToolUse` or `PermissionRequest` event into a request — a
`Bash` call a command request, any other tool call a `tool` request, Claude's session as the
thread — unless a grant covers it; waits for the person at most *wait_s*; and says what Claude
Code is to do. It never raises and never allows by silence: input it cannot read, an event it
does not answer, a channel it cannot use all end in a deny (exit 2, the reason said), and no
answer in time withdraws the request and answers `ask` (Claude Code then asks in its own
dialog) or, with ``on_timeout=deny``, a deny.

wisp guards itself: a call that names `$WISP_HOME` (a Write or Edit under it, a Bash command
naming it, any tool input naming it) is always put to the person, never allowed by a grant,
and its request says that it touches wisp's own channel: an agent that could write an answer
file could answer for the person.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import sys
from collections.abc import Iterator, Mapping
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Any

import attrs

from pending import (
    MAX_RECORD_BYTES,
    DecodeError,
    Kind,
    Outcome,
    PendingError,
    Request,
    canonical_json,
    format_time,
    loads_strict,
)
from wisp._asking import Approval, ApprovalGate, Asker, Cancel, Ending
from wisp._audit import EntryPoint
from wisp._config import ConfigError, load_config
from wisp._home import open_channel, wisp_home
from wisp._store import StoreError

# Claude Code's default `timeout` for a command hook (its hooks reference; earlier versions
# had 60 s): the hook is cancelled after it. --print-settings sets it explicitly all the same.
CLAUDE_HOOK_TIMEOUT_S = 600
# Room left before Claude Code would cancel the hook: to withdraw, settle and print.
HOOK_MARGIN_S = 10
DEFAULT_WAIT_S = CLAUDE_HOOK_TIMEOUT_S - HOOK_MARGIN_S
# The request's own deadline comes this long after the hook's wait, so that the hook, not its
# deadline timer, ends an unanswered request: it is withdrawn, then Claude Code asks.
EXPIRY_AFTER_WAIT_S = 5
# The timeout --print-settings gives the SessionEnd hook (it only forgets session grants).
SESSION_END_TIMEOUT_S = 30
# An event larger than this is not read whole: no tool call a person can judge is that long.
MAX_EVENT_BYTES = 4 * 1024 * 1024
# What is asked must fit one request record (MAX_RECORD_BYTES) with the rest of the record.
MAX_ASKED_BYTES = MAX_RECORD_BYTES - 8 * 1024
# The tools --print-settings puts in front of the person: shell commands, file changes, web
# fetches and every MCP server's tools (reads and searches are left to Claude Code's rules).
SETTINGS_MATCHER = "Bash|Edit|MultiEdit|Write|NotebookEdit|WebFetch|mcp__.*"
CLIENT = "claude-code"
OWN_CHANNEL = (
    "it touches wisp's own channel ($WISP_HOME, {home}): an agent that can write there can "
    "answer for you"
)


class HookEvent(StrEnum):
    """The events `wisp hook claude-code` answers."""

    PRE_TOOL_USE = "PreToolUse"
    PERMISSION_REQUEST = "PermissionRequest"
    SESSION_END = "SessionEnd"


class Permission(StrEnum):
    """What Claude Code is told to do with the tool call."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"  # Claude Code asks in its own dialog


class OnTimeout(StrEnum):
    """What an unanswered request becomes."""

    ASK = "ask"
    DENY = "deny"


class HookExit(IntEnum):
    """Claude Code's exit codes for a hook."""

    OK = 0  # stdout's JSON is read
    BLOCK = 2  # a blocking error: the call is denied, stderr is the reason


class HookRefused(Exception):
    """The event cannot be answered (unreadable, unknown, unusable); the message says why."""


@attrs.frozen(kw_only=True)
class ToolCall:
    """A tool call Claude Code is about to make, from its event."""

    event: HookEvent
    session: str
    cwd: str
    tool: str
    input: Mapping[str, Any]
    tool_use_id: str | None = None


@attrs.frozen(kw_only=True)
class HookAnswer:
    """What the hook says: its JSON for stdout, its exit code, and a reason for stderr."""

    event: HookEvent
    permission: Permission | None  # None: no decision (Claude Code goes on as it would)
    reason: str
    exit_code: HookExit = HookExit.OK
    stderr: str | None = None
    request_id: str | None = None

    def output(self) -> dict[str, Any]:
        """Claude Code's hook output for this answer (its hooks reference's shapes)."""
        if self.event is HookEvent.PRE_TOOL_USE and self.permission is not None:
            return {
                "hookSpecificOutput": {
                    "hookEventName": self.event.value,
                    "permissionDecision": self.permission.value,
                    "permissionDecisionReason": self.reason,
                }
            }
        if self.event is HookEvent.PERMISSION_REQUEST and self.permission in (
            Permission.ALLOW,
            Permission.DENY,
        ):
            decision: dict[str, Any] = {"behavior": self.permission.value}
            if self.permission is Permission.DENY:
                decision["message"] = self.reason
            return {"hookSpecificOutput": {"hookEventName": self.event.value, "decision": decision}}
        return {"systemMessage": self.reason} if self.reason else {}


def refused(event: HookEvent | None, reason: str) -> HookAnswer:
    """Fail closed: a deny, exit 2, *reason* on stderr (for an event not known, the shape of
    a PreToolUse deny: exit 2 blocks whatever the event was)."""
    said = f"wisp: {reason}"
    return HookAnswer(
        event=event if event is not None else HookEvent.PRE_TOOL_USE,
        permission=Permission.DENY,
        reason=said,
        exit_code=HookExit.BLOCK,
        stderr=said,
    )


# --- reading the event -----------------------------------------------------------------


def _field(event: Mapping[str, Any], key: str) -> str:
    value = event.get(key)
    if not isinstance(value, str) or not value:
        raise HookRefused(f"the event has no `{key}` (a string)")
    return value


def parse_event(data: bytes) -> ToolCall | tuple[HookEvent, str]:
    """The event on stdin: a tool call, or (SessionEnd, its session). Raises HookRefused."""
    if len(data) > MAX_EVENT_BYTES:
        raise HookRefused(f"the event is larger than {MAX_EVENT_BYTES} bytes")
    if not data.strip():
        raise HookRefused("no event on stdin (Claude Code sends one as JSON)")
    try:
        event = loads_strict(data)
    except DecodeError as exc:
        raise HookRefused(f"the event on stdin is not JSON wisp reads: {exc}") from None
    if not isinstance(event, dict):
        raise HookRefused("the event on stdin is not a JSON object")
    name = event.get("hook_event_name")
    known = ", ".join(e.value for e in HookEvent)
    try:
        hook_event = HookEvent(name) if isinstance(name, str) else None
    except ValueError:
        hook_event = None
    if hook_event is None:
        raise HookRefused(
            f"wisp answers {known}, not {name!r}: register `wisp hook claude-code` for "
            "those events only (`wisp hook claude-code --print-settings`)"
        )
    session = _field(event, "session_id")
    if hook_event is HookEvent.SESSION_END:
        return hook_event, session
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        raise HookRefused("the event has no `tool_input` (a JSON object)")
    cwd = _field(event, "cwd")
    if not Path(cwd).is_absolute():
        raise HookRefused(f"the event's cwd {cwd!r} is not an absolute path")
    use_id = event.get("tool_use_id")
    return ToolCall(
        event=hook_event,
        session=session,
        cwd=cwd,
        tool=_field(event, "tool_name"),
        input=tool_input,
        tool_use_id=use_id if isinstance(use_id, str) else None,
    )


# --- wisp's own channel ----------------------------------------------------------------


def _home_forms(home: Path) -> set[str]:
    """The ways a command or a path may name *home*."""
    forms = {str(home), os.path.realpath(home), "$WISP_HOME", "${WISP_HOME}"}
    user_home = str(Path("~").expanduser())
    for form in tuple(forms):
        if form.startswith(user_home + os.sep):
            forms.add("~" + form[len(user_home) :])
            forms.add("$HOME" + form[len(user_home) :])
    return {f.rstrip(os.sep) for f in forms if f}


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def touches_home(call: ToolCall, home: Path) -> bool:
    """Whether *call* names wisp's own directory: run from inside it, a path under it, or any
    text of its input naming it. A tripwire for the person's attention, not a sandbox: a
    command can reach a path without naming it."""
    real_home = Path(os.path.realpath(home))
    if Path(os.path.realpath(call.cwd)).is_relative_to(real_home):
        return True
    for text in _strings(call.input):
        if any(form in text for form in _home_forms(home)):
            return True
        if text.startswith(os.sep) and Path(os.path.realpath(text)).is_relative_to(real_home):
            return True
    return False


# --- answering -------------------------------------------------------------------------


def answer_event(
    data: bytes,
    *,
    wait_s: float = DEFAULT_WAIT_S,
    on_timeout: OnTimeout = OnTimeout.ASK,
    home: Path | None = None,
    cancel: Cancel | None = None,
) -> HookAnswer:
    """What to tell Claude Code about the event in *data*. Never raises: what cannot be
    answered is a deny (exit 2) with its reason. *cancel*, cancelled (the process is told to
    stop), ends the wait at once: the request is withdrawn and the answer is a deny."""
    try:
        parsed = parse_event(data)
    except HookRefused as exc:
        return refused(None, str(exc))
    event = parsed.event if isinstance(parsed, ToolCall) else parsed[0]
    try:
        where = home if home is not None else wisp_home()
        if isinstance(parsed, ToolCall):
            return _answer_call(parsed, where, wait_s, on_timeout, cancel or Cancel())
        return _end_session(parsed[1], where)
    except HookRefused as exc:
        return refused(event, str(exc))
    except (OSError, PendingError, StoreError, ConfigError) as exc:
        return refused(event, f"the channel cannot be used ({exc}); check it with `wisp doctor`")
    except Exception as exc:  # fail closed, never a traceback: say what broke
        return refused(event, f"could not decide ({type(exc).__name__}: {exc})")


def _end_session(session: str, home: Path) -> HookAnswer:
    from wisp._grants import GrantStore

    GrantStore(home).end_session(session)
    return HookAnswer(event=HookEvent.SESSION_END, permission=None, reason="")


def _asked_size(call: ToolCall) -> int:
    return len(canonical_json(call.input))


def _answer_call(
    call: ToolCall, home: Path, wait_s: float, on_timeout: OnTimeout, cancel: Cancel
) -> HookAnswer:
    command = call.input.get("command") if call.tool == "Bash" else None
    if call.tool == "Bash" and not (isinstance(command, str) and command):
        raise HookRefused("a Bash call with no `command` (a string)")
    guarded = touches_home(call, home)
    if _asked_size(call) > MAX_ASKED_BYTES:  # not a request a person can be shown whole
        return _unasked(
            call,
            f"wisp: this {call.tool} call is larger than a request holds "
            f"({MAX_ASKED_BYTES} bytes); asking here instead",
        )
    config = load_config(home)
    with open_channel(home) as channel:
        asker = Asker(
            channel,
            entry_point=EntryPoint.HOOK,
            client=CLIENT,
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=_warn,
        )
        try:
            gate = ApprovalGate(asker, timeout_s=wait_s + EXPIRY_AFTER_WAIT_S)
            if not guarded:
                granted = granted_call(gate, call)
                if granted is not None:
                    return _decided(call, granted)
            return _ask_person(call, gate, home, guarded, wait_s, on_timeout, cancel)
        finally:
            asker.close()


def _warn(message: str) -> None:
    """A watcher's warning, on stderr: stdout carries the hook's JSON and nothing else."""
    sys.stderr.write(f"wisp: {message}\n")


def _ask_person(
    call: ToolCall,
    gate: ApprovalGate,
    home: Path,
    guarded: bool,
    wait_s: float,
    on_timeout: OnTimeout,
    cancel: Cancel,
) -> HookAnswer:
    asker = gate.asker
    request = file_call(gate, call, home, guarded)
    ending = asker.wait(request.id, wait_s, cancel=cancel)
    if ending is None:  # no answer in time: withdraw it (an answer that got there first stands)
        endings = asker.withdraw(request.id)
        ending = endings[0] if endings else asker.wait(request.id, 0)
    if cancel.cancelled and (ending is None or ending.outcome is not Outcome.ANSWERED):
        return refused(
            call.event, f"stopped before anyone answered; request {request.id} withdrawn"
        )
    if ending is None or ending.outcome is not Outcome.ANSWERED:
        return _unanswered(call, request.id, ending, wait_s, on_timeout)
    return _decided(call, call_verdict(gate, ending), ending)


def granted_call(gate: ApprovalGate, call: ToolCall) -> Approval | None:
    """The approval a standing grant (or a session approval kept for the call's session)
    gives *call* at once, or None: the person is asked."""
    command = call.input.get("command") if call.tool == "Bash" else None
    if isinstance(command, str):
        return gate.granted_in_thread(command, call.cwd, call.session)
    return gate.granted_tool(call.tool, call.input, call.cwd, thread=call.session)


def file_call(gate: ApprovalGate, call: ToolCall, home: Path, guarded: bool) -> Request:
    """File *call* for the person, returning at once: a `Bash` call as a command request
    (its `description` as the reason), any other as a `tool` request, the call's session as
    the thread; a *guarded* one says that it touches wisp's own channel."""
    guard = OWN_CHANNEL.format(home=home) if guarded else None
    command = call.input.get("command") if call.tool == "Bash" else None
    if isinstance(command, str):
        description = call.input.get("description")
        said = description if isinstance(description, str) and description else None
        reason = "; ".join(part for part in (guard, said) if part) or None
        return gate.file(command, call.cwd, reason=reason, thread=call.session)
    return gate.file_tool(call.tool, call.input, call.cwd, thread=call.session, reason=guard)


def call_verdict(gate: ApprovalGate, ending: Ending) -> Approval:
    """The approval an ended command or tool request gives; a `session` approval is kept
    for the request's thread."""
    request = ending.request
    verdict = gate.verdict(ending) if request.kind is Kind.COMMAND else gate.tool_verdict(ending)
    return gate.remember_for_thread(verdict, ending)


def _who(ending: Ending) -> str:
    answer = ending.answer
    assert answer is not None
    return f"by {answer.user} via {answer.via} at {format_time(answer.answered_at)}"


def _decided(call: ToolCall, approval: Approval, ending: Ending | None = None) -> HookAnswer:
    """An approval (a grant's or the person's) or a denial, worded: who, how, when."""
    permission = Permission.ALLOW if approval.approved else Permission.DENY
    return HookAnswer(
        event=call.event,
        permission=permission,
        reason=decided_reason(approval, ending),
        request_id=approval.request_id if ending is not None else None,
    )


def decided_reason(approval: Approval, ending: Ending | None = None) -> str:
    """Why a call is allowed or denied, in words: a grant's (whose, which, when given), or
    the person's answer to *ending* (who, how, when)."""
    request_id = approval.request_id
    if approval.approved and ending is None:  # a grant covered it: nothing was filed
        grant = approval.grant
        assert grant is not None
        return (
            f"wisp: allowed by {grant.user}'s {grant.scope} approval "
            f"({grant.id}, given {format_time(grant.granted_at)} for request {grant.request})"
        )
    assert ending is not None
    if approval.approved:
        reason = f"wisp: approved {approval.scope} {_who(ending)} (request {request_id})"
        return reason + (f"; {approval.reason}" if approval.reason else "")
    reason = f"wisp: denied {_who(ending)} (request {request_id})"
    return reason + (f": {approval.reason}" if approval.reason else "")


def _unanswered(
    call: ToolCall, request_id: str, ending: Ending | None, wait_s: float, on_timeout: OnTimeout
) -> HookAnswer:
    why = unanswered_reason(request_id, ending, wait_s)
    if on_timeout is OnTimeout.DENY:
        return HookAnswer(
            event=call.event,
            permission=Permission.DENY,
            reason=f"wisp: {why}; denied (--on-timeout deny)",
            request_id=request_id,
        )
    return _unasked(call, f"wisp: {why}; asking here instead", request_id)


def unanswered_reason(request_id: str, ending: Ending | None, wait_s: float) -> str:
    """Why nobody's answer decides the call: none came within *wait_s* (the request timed
    out or was withdrawn), or the request ended otherwise."""
    outcome = ending.outcome.value if ending is not None else Outcome.WITHDRAWN.value
    if ending is not None and ending.outcome not in (Outcome.WITHDRAWN, Outcome.TIMED_OUT):
        return f"request {request_id} ended {outcome}" + (
            f": {ending.reason}" if ending.reason else ""
        )
    return f"nobody answered request {request_id} in wisp within {wait_s:g} s ({outcome})"


def _unasked(call: ToolCall, reason: str, request_id: str | None = None) -> HookAnswer:
    """Leave it to Claude Code's own dialog: `ask` (PreToolUse), no decision (PermissionRequest:
    its dialog is shown)."""
    permission = Permission.ASK if call.event is HookEvent.PRE_TOOL_USE else None
    return HookAnswer(event=call.event, permission=permission, reason=reason, request_id=request_id)


# --- settings --------------------------------------------------------------------------


def this_wisp() -> list[str]:
    """How to run this `wisp`, absolutely: the program this process was started as, if it is
    a `wisp` executable; else the `wisp` on PATH; else this Python with `-m wisp`."""
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name == "wisp" and os.access(started, os.X_OK):
        return [str(started.resolve())]
    found = shutil.which("wisp")
    if found is not None:
        return [str(Path(found).resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "wisp"]


def settings_block(
    *, wait_s: float = DEFAULT_WAIT_S, on_timeout: OnTimeout = OnTimeout.ASK
) -> dict[str, Any]:
    """The `hooks` block of Claude Code's settings.json that puts this wisp in front of its
    tools: PreToolUse for SETTINGS_MATCHER, and SessionEnd to forget a session's grants."""
    argv = [*this_wisp(), "hook", "claude-code"]
    if wait_s != DEFAULT_WAIT_S:
        argv += ["--wait", f"{wait_s:g}"]
    if on_timeout is not OnTimeout.ASK:
        argv += ["--on-timeout", on_timeout.value]
    command = shlex.join(argv)
    timeout = math.ceil(wait_s) + HOOK_MARGIN_S
    return {
        "hooks": {
            HookEvent.PRE_TOOL_USE.value: [
                {
                    "matcher": SETTINGS_MATCHER,
                    "hooks": [{"type": "command", "command": command, "timeout": timeout}],
                }
            ],
            HookEvent.SESSION_END.value: [
                {
                    "hooks": [
                        {"type": "command", "command": command, "timeout": SESSION_END_TIMEOUT_S}
                    ]
                }
            ],
        }
    }
