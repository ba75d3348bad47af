"""Google's Gemini CLI (`wisp hook gemini`): its `BeforeTool` hook event in, its answer out.

Gemini CLI (0.61) sends `session_id`, `transcript_path`, `cwd`, `hook_event_name:
"BeforeTool"`, `timestamp`, `tool_name` (`run_shell_command`, `write_file`, `replace`, …)
and `tool_input` (the shell tool's `command` and `description`). It reads `{"decision":
"allow"}` or `{"decision": "deny", "reason": …}` on stdout; exit 2 blocks. Its `"ask"` hangs
a headless run, and it RUNS the call when its hook exits 1, is killed or times out: so the
wait is the ask, every failure is exit 2, and the installed command is wisp's guard.
"""

from __future__ import annotations

from collections.abc import Mapping

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    NETWORK,
    SHELL,
    Harness,
    HookOptions,
    ToolEffect,
    decision_allow,
    decision_deny,
    edits,
    installed_argv,
    named_event_call,
    reads,
)

NAME = "gemini"
EVENT = "BeforeTool"
SHELL_TOOL = "run_shell_command"
MS_PER_S = 1000  # its hook `timeout` is in milliseconds


def parse(event: dict[str, object]) -> ToolCall:
    return named_event_call(event, name=EVENT, title="Gemini CLI", shell=SHELL_TOOL, harness=NAME)


def settings(options: HookOptions) -> dict[str, object]:
    """Gemini CLI's settings.json `hooks` block (its `timeout` in milliseconds)."""
    import shlex

    argv = installed_argv(HARNESS, options)
    hook = {"type": "command", "command": shlex.join(argv), "timeout": options.timeout_s * MS_PER_S}
    return {"hooks": {EVENT: [{"matcher": ".*", "hooks": [hook]}]}}


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths.
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "write_file": edits("file_path"),
    "replace": edits("file_path"),
    "read_file": reads("file_path", "absolute_path"),
    "read_many_files": reads("paths"),
    "list_directory": reads("dir_path", "path"),
    "glob": reads("dir_path", "path", "pattern"),
    "search_file_content": reads("dir_path", "path"),
    "web_fetch": NETWORK,
    "google_web_search": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title="Gemini CLI",
    parse=parse,
    allow=decision_allow,
    deny=decision_deny,
    settings=settings,
    program="gemini",
    events=(EVENT,),
    user_file=lambda env, home: home / ".gemini" / "settings.json",
    project_file=lambda project: project / ".gemini" / "settings.json",
    timeout_scale=MS_PER_S,
    tools=TOOLS,
)
