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
import shlex

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import Harness, Said, named_event_call

NAME = "codex"
EVENT = "PreToolUse"
SHELL_TOOL = "Bash"
BLOCK = 2  # Codex's exit status that blocks the call (stderr: the reason)


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
        exit_code=BLOCK if failed else 0,
        stderr=reason if failed else None,
    )


def settings(argv: list[str], timeout_s: int) -> dict[str, object]:
    """Codex's `hooks` table (config.toml `[[hooks.PreToolUse]]`, or hooks.json)."""
    return {
        "hooks": {
            EVENT: [
                {
                    "matcher": ".*",
                    "hooks": [
                        {"type": "command", "command": shlex.join(argv), "timeout": timeout_s}
                    ],
                }
            ]
        }
    }


HARNESS = Harness(name=NAME, title="Codex", parse=parse, allow=allow, deny=deny, settings=settings)
