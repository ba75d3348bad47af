"""Qwen Code (`wisp hook qwen`): its `PreToolUse` hook event in, Claude Code's answer out.

Qwen Code (0.24.4, a Gemini CLI fork that took Claude Code's hook contract) sends
`session_id`, `transcript_path`, `cwd`, `hook_event_name: "PreToolUse"`, `timestamp`,
`permission_mode`, `tool_name` (`run_shell_command`, `write_file`, `edit`, …), `tool_input`
(the shell tool's `command`, `description`, `is_background`) and `tool_use_id`. It reads
`hookSpecificOutput.permissionDecision` (`allow`, `deny`, `ask`) and its reason from stdout
on exit 0; on exit 2 it reads **stderr** instead (its text is the deny's reason). It RUNS
the call when its hook exits otherwise, prints nothing on exit 2, is killed or passes its
`timeout` (60 s by default): so every failure is exit 2 with its reason on stderr, the
installed command is wisp's guard (whose deny says why on stderr), and the wait ends well
before the timeout setup writes. The timeout is written in milliseconds: 0.24 reads a value
of 1000 or more as milliseconds (and less as seconds), earlier versions milliseconds only.
Its "ask" is refused headless and, in its YOLO mode, may be approved by nobody: the wait is
the ask, and an unanswered call is denied.

Qwen Code skips every hook while its own shell sandbox (`tools.executionSandbox`) is on,
or `disableAllHooks` is set (or `--bare`, safe mode); with folder trust on
(`security.folderTrust.enabled`, off by default) it skips a project's hooks in a folder not
trusted. So wisp sets up no sandbox there, and status names what would skip it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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

NAME = "qwen"
EVENT = "PreToolUse"
SHELL_TOOL = "run_shell_command"
MS_PER_S = 1000  # its hook `timeout` as written here: milliseconds
# What in settings.json turns every hook off (its own shell sandbox does too).
HOOKS_OFF = "disableAllHooks"


def user_settings(env: Mapping[str, str], home: Path) -> Path:
    """Its user settings file: in $QWEN_HOME where that is set, else ~/.qwen."""
    base = env.get("QWEN_HOME")
    return (Path(base).expanduser() if base else home / ".qwen") / "settings.json"


def parse(event: dict[str, object]) -> ToolCall:
    return named_event_call(event, name=EVENT, title="Qwen Code", shell=SHELL_TOOL, harness=NAME)


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
    """The deny in Qwen Code's shape; a failure exits 2, where Qwen Code reads only stderr:
    the reason is written there (exit 2 with an empty stderr would let the call run)."""
    return Said(
        stdout=_said("deny", reason),
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=reason if failed else None,
    )


def settings(options: HookOptions) -> dict[str, object]:
    """Qwen Code's settings.json `hooks` block (its `timeout` in milliseconds)."""
    import shlex

    argv = installed_argv(HARNESS, options)
    hook = {"type": "command", "command": shlex.join(argv), "timeout": options.timeout_s * MS_PER_S}
    return {"hooks": {EVENT: [{"matcher": ".*", "hooks": [hook]}]}}


def _settings_of(path: Path) -> Mapping[str, Any]:
    from pending import DecodeError, loads_strict

    try:
        data = loads_strict(path.read_bytes())
    except (OSError, DecodeError):
        return {}
    return data if isinstance(data, Mapping) else {}


def _trusts_folders(user: Mapping[str, Any]) -> bool:
    security = user.get("security")
    trust = security.get("folderTrust") if isinstance(security, Mapping) else None
    return isinstance(trust, Mapping) and trust.get("enabled") is True


def skipped(program: str, hooks: list[dict[str, object]]) -> list[str]:
    """wisp's hooks Qwen Code would skip, as their settings files say: all hooks off, its
    shell sandbox on (which turns hooks off), or, with folder trust on, a project's (skipped
    in a folder not trusted)."""
    said: list[str] = []
    user = user_settings(os.environ, Path.home())
    trusts = _trusts_folders(_settings_of(user))
    for file in dict.fromkeys(str(h["file"]) for h in hooks):
        data = _settings_of(Path(file))
        tools = data.get("tools")
        if data.get(HOOKS_OFF) is True:
            said.append(f"{file}: skipped: `{HOOKS_OFF}` is true there, so no hook runs")
        if isinstance(tools, Mapping) and tools.get("executionSandbox"):
            said.append(
                f"{file}: skipped: Qwen Code runs no hook while its shell sandbox "
                "(`tools.executionSandbox`) is on; turn it off to keep wisp's gate"
            )
        if trusts and Path(file) != user:
            said.append(
                f"{file}: skipped by Qwen Code unless the folder is trusted (its folder trust "
                "is on: `security.folderTrust.enabled`)"
            )
    return said


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths
# (read from 0.24.4's tool classes; `exec`, `save_memory`, `agent` and the rest: not known).
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "write_file": edits("file_path"),
    "edit": edits("file_path"),
    "read_file": reads("file_path"),
    "grep_search": reads("path"),
    "glob": reads("path", "pattern"),
    "list_directory": reads("path"),
    "web_fetch": NETWORK,
    "web_search": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title="Qwen Code",
    parse=parse,
    allow=allow,
    deny=deny,
    settings=settings,
    program="qwen",
    events=(EVENT,),
    user_file=user_settings,
    project_file=lambda project: project / ".qwen" / "settings.json",
    timeout_scale=MS_PER_S,
    skipped=skipped,
    tools=TOOLS,
    project_note="with its folder trust on (`security.folderTrust.enabled`), Qwen Code skips a "
    "project's hooks unless the folder is trusted: set it up at the user level (without "
    "--project) to be sure it runs",
)
