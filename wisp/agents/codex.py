"""OpenAI's Codex CLI (`wisp hook codex`): its `PreToolUse` hook event in, its answer out.

Codex (0.171) sends Claude Code's shape: `session_id`, `turn_id`, `transcript_path`, `cwd`,
`hook_event_name: "PreToolUse"`, `model`, `permission_mode`, `tool_name`, `tool_input`,
`tool_use_id`; its shell tool (`exec_command`) reaches the hook as `Bash` with
`tool_input.command` (an edit made by an `apply_patch` heredoc is a `Bash` command too).
It answers a deny as `hookSpecificOutput.permissionDecision: "deny"` with a reason, or exit
2 with the reason on stderr; exit 0 with nothing runs the call. It has no "ask" that wisp
can use, and it RUNS the call when its hook exits 1, is killed or times out: so the wait is
the ask, every failure is exit 2, and the installed command is wisp's guard.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    BLOCK_STATUS,
    NETWORK,
    SHELL,
    Format,
    Harness,
    HookOptions,
    Said,
    ToolEffect,
    apply_patch_paths,
    installed_argv,
    named_event_call,
)
from wisp.policy.reading import Effect

if TYPE_CHECKING:  # reach loads attrs: a hook's run never needs it (issue 41)
    from wisp.agents.reach import WritableRoot

NAME = "codex"
EVENT = "PreToolUse"
SHELL_TOOL = "Bash"


def parse(event: dict[str, object]) -> ToolCall:
    return named_event_call(event, name=EVENT, title="Codex", shell=SHELL_TOOL, harness=NAME)


def allow(reason: str) -> Said:
    """Exit 0 with no decision: Codex runs the call (its `allow` is not relied on)."""
    return Said(stdout="", exit_code=0, stderr=reason)


def deny(reason: str, failed: bool) -> Said:
    """The deny in Codex's shape; a failure also exits 2 (which blocks by itself)."""
    output = {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return Said(
        stdout=json.dumps(output, ensure_ascii=False),
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=reason if failed else None,
    )


def settings(options: HookOptions) -> dict[str, object]:
    """Codex's `hooks` table (config.toml `[[hooks.PreToolUse]]`, or hooks.json)."""
    argv = installed_argv(HARNESS, options)
    hook = {"type": "command", "command": shlex.join(argv), "timeout": options.timeout_s}
    return {"hooks": {EVENT: [{"matcher": ".*", "hooks": [hook]}]}}


# --- the installation: config.toml, its sandbox_mode and its trust of the hook (codexsetup)


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    base = env.get("CODEX_HOME")
    return (Path(base) if base else user_home / ".codex") / "config.toml"


def protection(config: Mapping[str, object], cwd: Path) -> list[str]:
    from wisp._home import wisp_home
    from wisp.agents import sandbox

    return sandbox.codex_problems(config, wisp_home(), [cwd], env=os.environ)


def roots(config: Mapping[str, object], cwd: Path | None, user_home: Path) -> list[WritableRoot]:
    from wisp.agents import reach

    return reach.codex_roots(config)


def skipped(program: str, hooks: list[dict[str, object]]) -> list[str]:
    """wisp's hooks Codex would skip: not trusted (asked of Codex itself)."""
    from wisp.agents import codexsetup

    return codexsetup.untrusted(program, HARNESS) if hooks else []


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths.
TOOLS: Mapping[str, ToolEffect] = {
    "Bash": SHELL,  # exec_command; an `apply_patch` heredoc through it is an edit (patched)
    "apply_patch": ToolEffect(Effect.EDIT, patch="input"),
    "web_search": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title="Codex",
    parse=parse,
    allow=allow,
    deny=deny,
    settings=settings,
    program="codex",
    fmt=Format.TOML,
    events=(EVENT,),
    user_file=user_file,
    protection=protection,
    roots=roots,
    skipped=skipped,
    tools=TOOLS,
    patched=apply_patch_paths,
)
