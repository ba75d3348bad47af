"""Cursor (`wisp hook cursor`): its `beforeShellExecution`, `beforeMCPExecution` and
`preToolUse` hook events in, its `permission` out.

Cursor cannot be driven against a local model, so this reads the events as its hooks
documentation gives them (fixtures/agents/cursor/ says so): every event carries
`conversation_id`, `generation_id`, `hook_event_name`, `workspace_roots`, …;
`beforeShellExecution` adds `command` and `cwd`; `beforeMCPExecution` adds `tool_name`,
`tool_input` (a JSON string, or an object) and the MCP server's `url` or `command`;
`preToolUse` adds `tool_name` (`Shell`, `Write`, …), `tool_input`, `tool_use_id` and `cwd`.
It reads `{"permission": "allow"|"deny"|"ask", "user_message": …, "agent_message": …}`;
exit 2 blocks. Cursor has an "ask" (its own dialog): an unanswered call is put to the person
there. A hook that fails any other way lets the call RUN unless its entry says
`"failClosed": true`, which the printed settings do, besides wisp's guard.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from enum import StrEnum

from pending import DecodeError, loads_strict
from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    BLOCK_STATUS,
    SHELL,
    EventRefused,
    Harness,
    HookOptions,
    Said,
    ToolEffect,
    edits,
    field,
    installed_argv,
    reads,
    shell_or_tool,
)

NAME = "cursor"
SHELL_TOOL = "Shell"  # preToolUse's name for the shell tool
# The preToolUse tools the printed settings put in front of the person: the ones that change
# files (shell commands and MCP tools have their own events: a wider matcher asks twice).
PRE_TOOL_MATCHER = "Write|StrReplace|Edit|Delete|EditNotebook"


class Event(StrEnum):
    """The Cursor events `wisp hook cursor` answers."""

    SHELL = "beforeShellExecution"
    MCP = "beforeMCPExecution"
    PRE_TOOL = "preToolUse"


def _cwd(event: dict[str, object]) -> str:
    """The event's `cwd`, else its first workspace root."""
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = event.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    raise EventRefused("the event has no `cwd` and no `workspace_roots`")


def _mcp_input(event: dict[str, object]) -> dict[str, object]:
    """An MCP call's arguments (`tool_input`, a JSON string or an object) with the server
    they go to (its `url` or `command`): both shown, both bound by a grant."""
    given = event.get("tool_input", {})
    if isinstance(given, str):
        try:
            given = loads_strict(given.encode()) if given.strip() else {}
        except DecodeError as exc:
            raise EventRefused(f"the event's tool_input is not JSON wisp reads: {exc}") from None
    if not isinstance(given, dict):
        raise EventRefused("the event's tool_input is not a JSON object")
    server = {k: event[k] for k in ("url", "command") if isinstance(event.get(k), str)}
    return {"arguments": given, "server": server} if server else {"arguments": given}


def parse(event: dict[str, object]) -> ToolCall:
    name = event.get("hook_event_name")
    known = ", ".join(e.value for e in Event)
    try:
        which = Event(name) if isinstance(name, str) else None
    except ValueError:
        which = None
    if which is None:
        raise EventRefused(
            f"wisp answers Cursor's {known}, not {name!r}: register `wisp hook {NAME}` for "
            f"those only (`wisp hook {NAME} --print-settings`)"
        )
    tool_input: object
    if which is Event.SHELL:
        tool, tool_input = SHELL_TOOL, {"command": field(event, "command")}
    elif which is Event.MCP:
        tool, tool_input = f"MCP:{field(event, 'tool_name')}", _mcp_input(event)
    else:
        tool, tool_input = field(event, "tool_name"), event.get("tool_input")
    use_id = event.get("tool_use_id")
    return shell_or_tool(
        tool,
        tool_input,
        shell=SHELL_TOOL,
        session=field(event, "conversation_id"),
        cwd=_cwd(event),
        title="Cursor",
        tool_use_id=use_id if isinstance(use_id, str) else None,
    )


def _said(permission: str, reason: str, exit_code: int = 0, failed: bool = False) -> Said:
    output = {"permission": permission, "user_message": reason, "agent_message": reason}
    return Said(
        stdout=json.dumps(output, ensure_ascii=False),
        exit_code=exit_code,
        stderr=reason if failed else None,
    )


def allow(reason: str) -> Said:
    return _said("allow", reason)


def ask(reason: str) -> Said:
    """Cursor asks in its own dialog."""
    return _said("ask", reason)


def deny(reason: str, failed: bool) -> Said:
    return _said("deny", reason, BLOCK_STATUS if failed else 0, failed)


def settings(options: HookOptions) -> dict[str, object]:
    """Cursor's hooks.json (`~/.cursor/hooks.json`, or a project's `.cursor/hooks.json`):
    each event's entry fails closed (`failClosed`), its `timeout` in seconds."""
    argv = installed_argv(HARNESS, options)
    entry = {"command": shlex.join(argv), "timeout": options.timeout_s, "failClosed": True}
    return {
        "version": 1,
        "hooks": {
            Event.SHELL.value: [entry],
            Event.MCP.value: [entry],
            Event.PRE_TOOL.value: [{"matcher": PRE_TOOL_MATCHER, **entry}],
        },
    }


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths.
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "Write": edits("file_path"),
    "StrReplace": edits("file_path"),
    "Edit": edits("file_path"),
    "EditNotebook": edits("target_notebook", "notebook_path"),
    "Read": reads("file_path", "target_file"),
    "Grep": reads("path"),
    "Glob": reads("path", "target_directory", "glob_pattern"),
    "LS": reads("path", "target_directory"),
    # Delete removes a file: not an edit a built-in rule allows (asked), as an MCP tool is.
}


HARNESS = Harness(
    name=NAME,
    title="Cursor",
    parse=parse,
    allow=allow,
    deny=deny,
    settings=settings,
    ask=ask,
    program="cursor-agent",
    events=tuple(e.value for e in Event),
    user_file=lambda env, home: home / ".cursor" / "hooks.json",
    project_file=lambda project: project / ".cursor" / "hooks.json",
    flat=True,
    tools=TOOLS,
)
