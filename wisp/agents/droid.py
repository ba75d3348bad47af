"""Factory Droid (`wisp hook droid`): its `PreToolUse` hook event in, Claude Code's answer out.

Factory's Droid CLI (npm `droid` 0.215.0, its binary in `@factory/cli-linux-x64`) runs the
hooks in `~/.factory/hooks.json`, whose top-level keys are the events (no `hooks` key around
them: one there is not read, tried), Claude Code's way: it sends `session_id`,
`transcript_path`, `cwd`, `permission_mode`, `hook_event_name: "PreToolUse"`, `tool_name`
(`Execute` for the shell: `command`, `riskLevel`, `riskLevelReason`; `Create`, `Edit`, `Read`,
…) and `tool_input`. It reads `hookSpecificOutput.permissionDecision` (`deny`: blocked, its
reason the tool's result) on exit 0, and on exit 2 blocks with stderr (or stdout's deny) as
the reason. It RUNS the call when its hook exits 1 (tried), and when it passes its `timeout`
(seconds), when it TERMs it (tried): so every failure is exit 2 with its reason on stderr, the
installed command is wisp's guard, and wisp answers before the timeout setup writes. It runs
offline, without a Factory login, against a custom model in ~/.factory/config.json (tried).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    BLOCK_STATUS,
    NETWORK,
    SHELL,
    Harness,
    HookOptions,
    Said,
    ToolEffect,
    edits,
    installed_argv,
    named_event_call,
    reads,
)

NAME = "droid"
TITLE = "Factory Droid"
EVENT = "PreToolUse"
SHELL_TOOL = "Execute"


# Execute's fields that are its model's words about the call, not what runs: its `summary`
# (shown as the call's description) and its own guess at the risk (shown with it); neither is
# bound by a grant, which would then never match the next call of the same command.
ABOUT_FIELDS = ("summary", "riskLevel", "riskLevelReason")


def parse(event: dict[str, object]) -> ToolCall:
    given = event.get("tool_input")
    if event.get("tool_name") == SHELL_TOOL and isinstance(given, dict):
        words = [str(given[k]) for k in ABOUT_FIELDS if isinstance(given.get(k), str | int)]
        rest = {k: v for k, v in given.items() if k not in ABOUT_FIELDS}
        about = {"description": " — ".join(words)} if words else {}
        event = {**event, "tool_input": {**rest, **about}}
    return named_event_call(event, name=EVENT, title=TITLE, shell=SHELL_TOOL, harness=NAME)


def _said(decision: str, reason: str) -> str:
    output = {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
    return json.dumps(output, ensure_ascii=False)


def allow(reason: str) -> Said:
    return Said(stdout=_said("allow", reason), exit_code=0)


def deny(reason: str, failed: bool) -> Said:
    """The deny in Claude Code's shape; a failure exits 2 with the reason on stderr too."""
    return Said(
        stdout=_said("deny", reason),
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=reason if failed else None,
    )


def settings(options: HookOptions) -> dict[str, object]:
    """Droid's hooks.json: the event at the top level, `timeout` in seconds."""
    argv = installed_argv(HARNESS, options)
    hook = {"type": "command", "command": shlex.join(argv), "timeout": options.timeout_s}
    return {EVENT: [{"matcher": "*", "hooks": [hook]}]}


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    return user_home / ".factory" / "hooks.json"


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths
# (read from 0.215.0's tool schemas as its model is offered them; `Task`, `Skill`,
# `ToolSearch`, `GenerateImage` and the rest: not known).
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "Create": edits("file_path"),
    "Edit": edits("file_path"),
    "Read": reads("file_path"),
    "LS": reads("directory_path"),
    "Grep": reads("path"),
    "Glob": reads("folder"),
    "FetchUrl": NETWORK,
    "WebSearch": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title=TITLE,
    parse=parse,
    allow=allow,
    deny=deny,
    settings=settings,
    program="droid",
    events=(EVENT,),
    top_level=True,
    user_file=user_file,
    tools=TOOLS,
)
