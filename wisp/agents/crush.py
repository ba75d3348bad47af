"""Charm's Crush (`wisp hook crush`): its `PreToolUse` hook event in, its decision out.

Crush (its source after v0.90.0: `internal/hooks`; npm `@charmland/crush` 0.96.1 downloads its
binary from GitHub when installed, which cannot be reached here, so it was not run) sends
`{"event": "PreToolUse", "session_id", "cwd", "tool_name", "tool_input"}` (`bash`'s input:
`command`, `description`, `working_dir`, `run_in_background`; `write`'s: `file_path`,
`content`). It reads, on exit 0, `{"decision": "allow"|"deny", "reason"}` (or Claude Code's
`hookSpecificOutput`); exit 2 is a deny whose reason is stderr, exit 49 halts the turn. Any
other exit, no output, a kill or its `timeout` (seconds, 30 by default) is "no opinion": the
call goes on to Crush's own permission flow, which asks in its dialog but RUNS it with
`--yolo` (and a hook's "allow" skips that dialog). So the wait is the ask, every failure is
exit 2 with its reason on stderr, the installed command is wisp's guard, and wisp answers
before the timeout setup writes. Its hook entries are flat (`hooks.PreToolUse` holds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    NETWORK,
    SHELL,
    EventRefused,
    Harness,
    HookOptions,
    ToolEffect,
    decision_allow,
    decision_deny,
    edits,
    field,
    installed_argv,
    reads,
    shell_or_tool,
)

NAME = "crush"
EVENT = "PreToolUse"
SHELL_TOOL = "bash"


def parse(event: dict[str, object]) -> ToolCall:
    if event.get("event") != EVENT:
        raise EventRefused(
            f"wisp answers Crush's {EVENT}, not {event.get('event')!r}: register "
            f"`wisp hook {NAME}` under {EVENT} only (`wisp hook {NAME} --print-settings`)"
        )
    return shell_or_tool(
        field(event, "tool_name"),
        event.get("tool_input"),
        shell=SHELL_TOOL,
        session=field(event, "session_id"),
        cwd=field(event, "cwd"),
        title="Crush",
    )


def settings(options: HookOptions) -> dict[str, object]:
    """Crush's crush.json `hooks` block: its entries flat, `timeout` in seconds."""
    import shlex

    argv = installed_argv(HARNESS, options)
    hook = {"name": "wisp", "command": shlex.join(argv), "timeout": options.timeout_s}
    return {"hooks": {EVENT: [hook]}}


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    """$CRUSH_GLOBAL_CONFIG/crush.json, else its config folder's (`$XDG_CONFIG_HOME`)."""
    base = env.get("CRUSH_GLOBAL_CONFIG")
    if base:
        return Path(base) / "crush.json"
    config = env.get("XDG_CONFIG_HOME")
    return (Path(config) if config else user_home / ".config") / "crush" / "crush.json"


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths
# (read from its source's tools; `agent`, `agentic_fetch`, the LSP and job tools: not known).
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "edit": edits("file_path"),
    "multiedit": edits("file_path"),
    "write": edits("file_path"),
    "view": reads("file_path"),
    "ls": reads("path"),
    "grep": reads("path"),
    "glob": reads("path", "pattern"),
    "fetch": NETWORK,
    "web_fetch": NETWORK,
    "web_search": NETWORK,
    "sourcegraph": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title="Crush",
    parse=parse,
    allow=decision_allow,
    deny=decision_deny,
    settings=settings,
    program="crush",
    events=(EVENT,),
    user_file=user_file,
    project_file=lambda project: project / "crush.json",
    flat=True,
    tools=TOOLS,
)
