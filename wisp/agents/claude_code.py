"""Claude Code's hooks: one hook event in, the person's decision out (`wisp hook claude-code`).

Claude Code runs a command hook once per event, with the event as JSON on stdin, and reads
its decision from stdout (its hooks reference: input `session_id`, `transcript_path`, `cwd`,
`permission_mode`, `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`; output
`hookSpecificOutput`; exit 0 with JSON, or exit 2 to block with the reason on stderr).

:func:`answer_event` turns a `PreToolUse` or `PermissionRequest` event into a request — a
`Bash` call a command request, any other tool call a `tool` request, Claude's session as the
thread — unless the policy decides it (a rule or a grant: :mod:`wisp.policy.decide`); waits
for the person at most *wait_s*; and says what Claude Code is to do. It never raises and never
allows by silence: input it cannot read, an event it does not answer, a channel it cannot use
all end in a deny (exit 2, the reason said), and no answer in time withdraws the request and
answers `ask` (Claude Code then asks in its own dialog) or, with ``on_timeout=deny``, a deny.

wisp guards itself: a call that names `$WISP_HOME` or wisp's own program (a Write or Edit
under it, a Bash command naming it, any tool input naming it) is always put to the person,
never allowed by a grant, and its request says that it touches wisp's own channel (an agent
that could write an answer file could answer for the person) or program (one that could
change what the hook runs could allow every later call itself).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from enum import IntEnum
from pathlib import Path

from pending import (
    DecodeError,
    NamedTuple,
    StrEnum,
    loads_strict,
)
from wisp._deadlines import Cancel
from wisp._home import wisp_home
from wisp.agents.gate import Ended, ToolCall, decide_call, failure_reason
from wisp.agents.hookio import (
    MAX_EVENT_BYTES,
    NETWORK,
    SHELL,
    EventRefused,
    Harness,
    OnTimeout,
    Said,
    Stop,
    ToolEffect,
    edits,
    field,
    followed,
    guarded_argv,
    reads,
    shell_or_tool,
    with_effect,
    write_said,
)
from wisp.agents.hookio import serve as serve_event
from wisp.policy.decide import Verdict

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:  # reach loads attrs: a hook's run never needs it (issue 41)
    from typing import Any

    from wisp.agents.reach import WritableRoot

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
# The tools --print-settings puts in front of the person: shell commands, file changes, web
# fetches and every MCP server's tools (reads and searches are left to Claude Code's rules).
SETTINGS_MATCHER = "Bash|Edit|MultiEdit|Write|NotebookEdit|WebFetch|mcp__.*"
# What Claude Code does with a call whose hook fails, times out or is killed (2.1.295 on; it
# otherwise runs the call). Earlier versions ignore the key: the guard stands in for it there.
ON_FAILURE = "block"
CLIENT = "claude-code"
SHELL_TOOL = "Bash"  # Claude Code's shell tool: its `command` is asked as a command request
MCP_PREFIX = "mcp__"  # an MCP tool's name, in Claude Code (and in the harnesses that copy it)
# What Devin CLI sets in its hooks' environment (its hooks documentation): it also runs the
# hooks in a project's .claude/, with its own tool names (`exec`, `edit`, …), so an event from
# it is not Claude Code's, whatever it looks like.
DEVIN_ENV = "DEVIN_PROJECT_DIR"


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


# The permission modes in which Claude Code puts a hook's `ask` to the person in its dialog.
# In the others an `ask` is not a person's: `auto` (its starting mode since 2.1.283) hands it to
# a classifier that may allow it, `dontAsk` denies it, `bypassPermissions` runs it. So an
# unanswered call is denied there, whatever --on-timeout says: silence is never an allow. A
# mode wisp does not know is not trusted to ask; an event without one (older versions) is.
ASKS_YOU = frozenset({"default", "acceptEdits", "plan"})
NOBODY_ASKED = (
    "Claude Code's permission mode would not put an `ask` to you (its classifier or its "
    "mode would answer it), so an unanswered call is denied"
)


class HookExit(IntEnum):
    """Claude Code's exit codes for a hook."""

    OK = 0  # stdout's JSON is read
    BLOCK = 2  # a blocking error: the call is denied, stderr is the reason


class HookRefused(Exception):
    """The event cannot be answered (unreadable, unknown, unusable); the message says why,
    and *event* which event it was, when that much could be read."""

    def __init__(self, message: str, *, event: HookEvent | None = None) -> None:
        super().__init__(message)
        self.event = event


class HookAnswer(NamedTuple):
    """What the hook says: its JSON for stdout, its exit code, and a reason for stderr. (A
    named tuple, as every record on the granted hook's path: issue 41.)"""

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

    def said(self) -> Said:
        """What the hook process writes for this answer."""
        return Said(
            stdout=json.dumps(self.output(), ensure_ascii=False),
            exit_code=int(self.exit_code),
            stderr=self.stderr,
        )


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


def _field(event: dict[str, object], key: str) -> str:
    """hookio's :func:`~wisp.agents.hookio.field`, refused as this module refuses."""
    try:
        return field(event, key)
    except EventRefused as exc:
        raise HookRefused(str(exc)) from None


def tool_call(
    tool: str,
    tool_input: Mapping[str, Any],
    *,
    cwd: str,
    session: str,
    tool_use_id: str | None = None,
) -> ToolCall:
    """A Claude Code tool call for the gate core (hookio's shared reading: a `Bash` call's
    `command` and `description` picked out, its other fields its options, a sandbox switched
    off a warning). Raises :class:`HookRefused` for a call it cannot read."""
    try:
        return shell_or_tool(
            tool,
            tool_input,
            shell=SHELL_TOOL,
            session=session,
            cwd=cwd,
            title="Claude Code",
            tool_use_id=tool_use_id,
        )
    except EventRefused as exc:
        raise HookRefused(str(exc)) from None


def parse_event(data: bytes) -> tuple[HookEvent, ToolCall | str, str | None]:
    """The event on stdin: (its name, the tool call, Claude Code's permission mode), or
    (SessionEnd, its session, the mode). Raises :class:`HookRefused`."""
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
    return parse_object(event)


def parse_object(event: dict[str, object]) -> tuple[HookEvent, ToolCall | str, str | None]:
    """:func:`parse_event`'s reading of the event, once it is a JSON object."""
    name = event.get("hook_event_name")
    known = ", ".join(e.value for e in HookEvent)
    try:
        hook_event = HookEvent(name) if isinstance(name, str) else None
    except ValueError:
        hook_event = None
    if hook_event is None:
        if name is None:  # absent, or JSON's null
            said = "the event has no `hook_event_name` (Claude Code names every event)"
        elif not isinstance(name, str):
            said = "the event's `hook_event_name` is not text"
        else:
            said = f"wisp answers {known}, not {name!r}"
        raise HookRefused(
            f"{said}: register `wisp hook claude-code` for {known} only "
            "(`wisp hook claude-code --print-settings`)"
        )
    session = _field(event, "session_id")
    mode = event.get("permission_mode")
    mode = mode if isinstance(mode, str) else None
    if hook_event is HookEvent.SESSION_END:
        return hook_event, session, mode
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        raise HookRefused("the event has no `tool_input` (a JSON object)")
    cwd = _field(event, "cwd")
    if not Path(cwd).is_absolute():
        raise HookRefused(f"the event's cwd {cwd!r} is not an absolute path")
    use_id = event.get("tool_use_id")
    tool = _field(event, "tool_name")
    foreign = not_claude_codes(tool, os.environ)
    if foreign is not None:
        raise HookRefused(foreign, event=hook_event)
    try:
        call = tool_call(
            tool,
            tool_input,
            cwd=cwd,
            session=session,
            tool_use_id=use_id if isinstance(use_id, str) else None,
        )
    except HookRefused as exc:  # answered in the shape of the event it came in
        raise HookRefused(str(exc), event=hook_event) from None
    return hook_event, call, mode


def not_claude_codes(tool: str, env: Mapping[str, str]) -> str | None:
    """Why a tool call's event is not Claude Code's, or None: run by Devin CLI (which runs
    the hooks in a project's .claude/ and says so in its environment), or naming a tool
    Claude Code has not (its own are capitalized, `Bash`, `Edit`…; MCP tools `mcp__…`).
    Such an event is refused, never read as Claude Code's: wisp would not know what the call
    does, nor that its answer is read as Claude Code reads it."""
    if env.get(DEVIN_ENV):
        said = f"Devin CLI runs this hook (${DEVIN_ENV} is set)"
    elif not (tool[:1].isupper() or tool.startswith(MCP_PREFIX)):
        said = (
            f"its tool {tool!r} is not one of Claude Code's (theirs are capitalized, `Bash`, "
            f"`Edit`…, or MCP tools `{MCP_PREFIX}…`): another harness runs Claude Code's "
            "hooks with its own tool names (Devin CLI runs a project's .claude/ hooks)"
        )
    else:
        return None
    return (
        f"this event is not Claude Code's: {said}, and wisp does not read it as Claude "
        "Code's; denied. wisp has no gate for that harness: take `wisp hook claude-code` "
        "out of the hooks it runs (`wisp agents status` lists the harnesses wisp gates)"
    )


# --- answering -------------------------------------------------------------------------


def serve(stop: Stop, wait_s: float, on_timeout: OnTimeout) -> int:
    """One run of `wisp hook claude-code` past its options: the event read from stdin and
    answered, the answer written; its exit status. (Called by the command, and by the
    program before the CLI loads, :mod:`wisp.__main__`.)"""
    said = serve_event(
        stop,
        CLIENT,
        wait_s,
        lambda data: answer_event(data, wait_s=wait_s, on_timeout=on_timeout, cancel=stop).said(),
        lambda why: refused(None, why).said(),
    )
    write_said(said)
    return said.exit_code


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
    event: HookEvent | None = None
    try:
        event, parsed, mode = parse_event(data)
        where = home if home is not None else wisp_home()
        if isinstance(parsed, ToolCall):
            asks_you = mode is None or mode in ASKS_YOU
            return _answer_call(
                event, parsed, where, wait_s, on_timeout, cancel or Cancel(), asks_you=asks_you
            )
        return _end_session(parsed, where)
    except HookRefused as exc:
        return refused(exc.event or event, str(exc))
    except Exception as exc:  # fail closed, never a traceback: say what broke, and what to do
        return refused(event, failure_reason(exc))


def _end_session(session: str, home: Path) -> HookAnswer:
    from wisp.stores.grants import GrantStore

    GrantStore(home).end_session(session)
    return HookAnswer(event=HookEvent.SESSION_END, permission=None, reason="")


def _answer_call(
    event: HookEvent,
    call: ToolCall,
    home: Path,
    wait_s: float,
    on_timeout: OnTimeout,
    cancel: Cancel,
    *,
    asks_you: bool = True,
) -> HookAnswer:
    """The call decided (the person asked, a grant, the guard); unanswered (or too large to
    file), Claude Code's own dialog asks (`ask`) unless *on_timeout* denies, or Claude Code
    would not ask the person (*asks_you* false: its permission mode lets its classifier, or
    nothing, answer an `ask`)."""
    # What an unanswered call becomes here (recorded with it): Claude Code's own dialog, or
    # a deny where --on-timeout says so or its mode would not put an `ask` to the person.
    silence = Verdict.ASK if asks_you and on_timeout is OnTimeout.ASK else Verdict.DENY
    decided = decide_call(
        with_effect(HARNESS, call),
        home=home,
        client=CLIENT,
        wait_s=wait_s,
        cancel=cancel,
        expiry_after_s=EXPIRY_AFTER_WAIT_S,
        why_stopped=lambda: getattr(cancel, "why", None),
        silence=silence,
        on_ask=followed(cancel),
    )
    said = f"wisp: {decided.reason}"
    if decided.ended in (Ended.ALLOWED, Ended.DENIED):
        permission = Permission.ALLOW if decided.ended is Ended.ALLOWED else Permission.DENY
        return HookAnswer(
            event=event, permission=permission, reason=said, request_id=decided.request_id
        )
    if decided.ended is Ended.STOPPED:  # said as the other harnesses' hooks say it
        return refused(event, f"{decided.reason}; denied")
    if decided.ended is Ended.SILENCED:  # its class denies silence, whatever --on-timeout
        return HookAnswer(
            event=event,
            permission=Permission.DENY,
            reason=f"{said}; denied",
            request_id=decided.request_id,
        )
    timed_out_deny = decided.ended is Ended.UNANSWERED and on_timeout is OnTimeout.DENY
    if timed_out_deny or not asks_you:  # not a person's `ask`: nobody allowed it
        why = "--on-timeout deny" if timed_out_deny else NOBODY_ASKED
        return HookAnswer(
            event=event,
            permission=Permission.DENY,
            reason=f"{said}; denied ({why})",
            request_id=decided.request_id,
        )
    return _unasked(event, f"{said}; asking here instead", decided.request_id)


def _unasked(event: HookEvent, reason: str, request_id: str | None = None) -> HookAnswer:
    """Leave it to Claude Code's own dialog: `ask` (PreToolUse), no decision (PermissionRequest:
    its dialog is shown)."""
    permission = Permission.ASK if event is HookEvent.PRE_TOOL_USE else None
    return HookAnswer(event=event, permission=permission, reason=reason, request_id=request_id)


# --- settings --------------------------------------------------------------------------


def died(event: HookEvent = HookEvent.PRE_TOOL_USE) -> Said:
    """What the guard answers for a `wisp hook claude-code` that ended without answering
    (killed, out of memory). For a tool call: a PreToolUse deny, exit 2 (which blocks whatever
    the event). For SessionEnd, which has nothing to deny (the session is over, and Claude
    Code blocks nothing on it): no decision, `{}` and exit 0; the session's `session` grants
    then stay until their own end (24 hours)."""
    if event is HookEvent.SESSION_END:
        return Said(stdout="{}", exit_code=int(HookExit.OK))
    return refused(
        HookEvent.PRE_TOOL_USE, "`wisp hook claude-code` ended without answering; denied"
    ).said()


def hook_argv(
    *,
    wait_s: float = DEFAULT_WAIT_S,
    on_timeout: OnTimeout = OnTimeout.ASK,
    event: HookEvent = HookEvent.PRE_TOOL_USE,
) -> list[str]:
    """The command a setup installs for *event*: this wisp's `hook claude-code`, in its guard
    (which answers as :func:`died` says, in that event's form)."""
    from wisp.agents.install import this_wisp  # here: a hook's run never needs it (attrs)

    argv = [*this_wisp(), "hook", "claude-code"]
    if wait_s != DEFAULT_WAIT_S:
        argv += ["--wait", f"{wait_s:g}"]
    if on_timeout is not OnTimeout.ASK:
        argv += ["--on-timeout", on_timeout.value]
    return guarded_argv(died(event), argv)


def settings_block(
    *, wait_s: float = DEFAULT_WAIT_S, on_timeout: OnTimeout = OnTimeout.ASK
) -> dict[str, Any]:
    """The `hooks` block of Claude Code's settings.json that puts this wisp in front of its
    tools: PreToolUse for SETTINGS_MATCHER, and SessionEnd to forget a session's grants.
    Claude Code runs a call whose hook dies (2.1.197 has no setting against it), so the
    command is wisp's guard around `wisp hook claude-code`; beside it, `onFailure: "block"`
    (Claude Code 2.1.295 on: a hook that fails or is killed blocks the call; 2.1.197 ignores
    the key)."""
    import math
    import shlex

    command = shlex.join(hook_argv(wait_s=wait_s, on_timeout=on_timeout))
    ending = shlex.join(
        hook_argv(wait_s=wait_s, on_timeout=on_timeout, event=HookEvent.SESSION_END)
    )
    timeout = math.ceil(wait_s) + HOOK_MARGIN_S
    return {
        "hooks": {
            HookEvent.PRE_TOOL_USE.value: [
                {
                    "matcher": SETTINGS_MATCHER,
                    "hooks": [
                        {
                            "type": "command",
                            "command": command,
                            "timeout": timeout,
                            "onFailure": ON_FAILURE,
                        }
                    ],
                }
            ],
            HookEvent.SESSION_END.value: [
                {
                    "hooks": [
                        {"type": "command", "command": ending, "timeout": SESSION_END_TIMEOUT_S}
                    ]
                }
            ],
        }
    }


# --- the record ------------------------------------------------------------------------


def parse(event: dict[str, object]) -> ToolCall:
    """A tool call's event read (:func:`parse_object`); refused as hookio refuses."""
    try:
        _, parsed, _ = parse_object(event)
    except HookRefused as exc:
        raise EventRefused(str(exc)) from None
    if not isinstance(parsed, ToolCall):
        raise EventRefused("a SessionEnd event holds no tool call")
    return parsed


def _pre_tool(permission: Permission, reason: str, failed: bool = False) -> Said:
    """A PreToolUse answer; a failure also exits 2 (which blocks whatever the event)."""
    return HookAnswer(
        event=HookEvent.PRE_TOOL_USE,
        permission=permission,
        reason=reason,
        exit_code=HookExit.BLOCK if failed else HookExit.OK,
        stderr=reason if failed else None,
    ).said()


def allow(reason: str) -> Said:
    return _pre_tool(Permission.ALLOW, reason)


def deny(reason: str, failed: bool) -> Said:
    return _pre_tool(Permission.DENY, reason, failed)


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    """The user's settings as Claude Code finds them ($CLAUDE_CONFIG_DIR)."""
    base = env.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else user_home / ".claude") / "settings.json"


def project_file(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def sandbox_block() -> dict[str, object]:
    """What setup merges beside the hooks: Claude Code's sandbox, keeping $WISP_HOME and
    wisp's program out of its commands' reach, and the deny rules for its own tools."""
    import os

    from wisp.agents import sandbox

    # The user's settings as Claude Code finds them, wherever setup writes.
    settings = user_file(os.environ, Path.home()).absolute()
    return sandbox.claude_code_block(wisp_home(), Path.home(), settings)


def session_settings(config: Mapping[str, object], cwd: Path) -> dict[str, Any]:
    """Claude Code's settings as a session in *cwd* has them: the user's, the project's over
    them."""
    from wisp.agents.configfile import merge_values, read_json_quiet

    merged = dict(config)
    merge_values(merged, read_json_quiet(project_file(cwd)))
    return merged


def protection(config: Mapping[str, object], cwd: Path) -> list[str]:
    from wisp.agents import sandbox

    return sandbox.claude_code_problems(session_settings(config, cwd), wisp_home(), Path.home())


def roots(config: Mapping[str, object], cwd: Path | None, user_home: Path) -> list[WritableRoot]:
    from wisp.agents import reach

    settings = dict(config) if cwd is None else session_settings(config, cwd)
    return reach.claude_roots(settings, user_home)


def notes(config: Mapping[str, object], project: Path | None) -> list[str]:
    """What setup says of the settings it writes: what its sandbox leaves within reach."""
    from wisp.agents import sandbox

    home = wisp_home()
    problems = sandbox.claude_code_problems(config, home, Path.home())
    if project is not None and project.resolve() in (home, *home.parents):
        problems.append(f"the project {project} holds $WISP_HOME ({home})")
    return [f"unprotected: {p}" for p in problems]


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths.
TOOLS: Mapping[str, ToolEffect] = {
    "Bash": SHELL,
    "Edit": edits("file_path"),
    "MultiEdit": edits("file_path"),
    "Write": edits("file_path"),
    "NotebookEdit": edits("notebook_path"),
    "Read": reads("file_path"),
    "Grep": reads("path"),
    "Glob": reads("path", "pattern"),
    "LS": reads("path"),
    "NotebookRead": reads("notebook_path"),
    "WebFetch": NETWORK,
    "WebSearch": NETWORK,
}


HARNESS = Harness(
    name=CLIENT,
    title="Claude Code",
    parse=parse,
    allow=allow,
    deny=deny,
    settings=lambda options: settings_block(wait_s=options.wait_s, on_timeout=options.on_timeout),
    serve=lambda stop, options: serve(stop, options.wait_s, options.on_timeout),
    on_timeout=True,
    summary="""Answer one Claude Code hook event (PreToolUse, PermissionRequest, SessionEnd).

    A Bash call becomes a command request, any other tool call a tool request, unless a
    rule or a grant decides it (docs/policy.md). Exit 0 with the decision as JSON on
    stdout; exit 2 (Claude Code's "block") with the reason on stderr when the event cannot be
    answered: unreadable, unknown, or a channel that cannot be used.""",
    wait_help="How long to wait for your answer before withdrawing the request. Default: "
    f"{DEFAULT_WAIT_S}, just under Claude Code's default hook timeout.",
    prints="Print the `hooks` block for Claude Code's settings.json (with this wisp's "
    "absolute path) and exit.",
    examples=(
        "wisp hook claude-code --print-settings",
        "wisp hook claude-code --print-settings --wait 120 --on-timeout deny",
        "wisp hook claude-code < event.json",
    ),
    program="claude",
    events=(HookEvent.PRE_TOOL_USE.value, HookEvent.SESSION_END.value),
    user_file=user_file,
    project_file=project_file,
    sandbox=sandbox_block,
    protection=protection,
    roots=roots,
    notes=notes,
    tools=TOOLS,
)
