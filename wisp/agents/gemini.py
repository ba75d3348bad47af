"""Google's Gemini CLI (`wisp hook gemini`): its `BeforeTool` hook event in, its answer out.

Gemini CLI (0.61) sends `session_id`, `transcript_path`, `cwd`, `hook_event_name:
"BeforeTool"`, `timestamp`, `tool_name` (`run_shell_command`, `write_file`, `replace`, …)
and `tool_input` (the shell tool's `command` and `description`). It reads `{"decision":
"allow"}` or `{"decision": "deny", "reason": …}` on stdout; exit 2 blocks. Its `"ask"` hangs
a headless run, and it RUNS the call when its hook exits 1, is killed or times out: so the
wait is the ask, every failure is exit 2, and the installed command is wisp's guard.
"""

from __future__ import annotations

import json

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import Harness, Said, named_event_call

NAME = "gemini"
EVENT = "BeforeTool"
SHELL_TOOL = "run_shell_command"
BLOCK = 2


def parse(event: dict[str, object]) -> ToolCall:
    return named_event_call(event, name=EVENT, title="Gemini CLI", shell=SHELL_TOOL, harness=NAME)


def allow(reason: str) -> Said:
    return Said(stdout=json.dumps({"decision": "allow", "reason": reason}), exit_code=0)


def deny(reason: str, failed: bool) -> Said:
    return Said(
        stdout=json.dumps({"decision": "deny", "reason": reason}, ensure_ascii=False),
        exit_code=BLOCK if failed else 0,
        stderr=reason if failed else None,
    )


def settings(argv: list[str], timeout_s: int) -> dict[str, object]:
    """Gemini CLI's settings.json `hooks` block (its `timeout` in milliseconds)."""
    import shlex

    hook = {"type": "command", "command": shlex.join(argv), "timeout": timeout_s * 1000}
    return {"hooks": {EVENT: [{"matcher": ".*", "hooks": [hook]}]}}


HARNESS = Harness(
    name=NAME, title="Gemini CLI", parse=parse, allow=allow, deny=deny, settings=settings
)
