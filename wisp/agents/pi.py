"""pi (`wisp hook pi`): its `tool_call` extension event in, a decision out.

pi (npm `@earendil-works/pi-coding-agent` 1.6.0, node 22.19 or newer) runs an extension's
`pi.on("tool_call", handler)` before each tool call; returning `{block: true, reason}` blocks
it (the reason is the tool's result, which the model sees), and a handler that throws blocks it
too. So wisp's extension (`pi-extension.js`) runs `wisp hook pi` with `{"hook_event_name":
"tool_call", "cwd", "session_id", "tool_name", "tool_call_id", "tool_input"}` on stdin and lets
the call run only on exit 0 with `{"decision": "allow"}`; wisp's deny, wisp not runnable,
killed or answering anything else is a block. The call's input is mutable by every extension
(in their order): once wisp allows, the extension freezes it, so a later one that would change
it throws, which blocks. The shell tool is `bash` (`command`, and `timeout` in seconds). pi
has no "ask" an extension can give headless and no time limit on a handler: the wait is the
ask, bounded by wisp's --wait. The extension is the guard (it fails closed by itself), so its
command is `wisp hook pi` unwrapped.

pi loads `*.js` and `*.ts` files in `~/.pi/agent/extensions/` (`$PI_CODING_AGENT_DIR/
extensions/`) and, once it trusts the project, a project's `.pi/extensions/`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    SHELL,
    EventRefused,
    Format,
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

NAME = "pi"
TITLE = "pi"
EVENT = "tool_call"
SHELL_TOOL = "bash"
EXTENSION = Path(__file__).with_name("pi-extension.js")
ARGV_SLOT = "__WISP_ARGV__"
USER_PATH = "~/.pi/agent/extensions/wisp.js"
MARK = "// wisp's pi extension"


def parse(event: dict[str, object]) -> ToolCall:
    if event.get("hook_event_name") != EVENT:
        raise EventRefused(
            f"wisp answers {TITLE}'s {EVENT} (from its extension), not "
            f"{event.get('hook_event_name')!r}: install the extension "
            f"`wisp hook {NAME} --print-settings` prints"
        )
    return shell_or_tool(
        field(event, "tool_name"),
        event.get("tool_input"),
        shell=SHELL_TOOL,
        session=field(event, "session_id"),
        cwd=field(event, "cwd"),
        title=TITLE,
    )


def extension(argv: list[str]) -> str:
    """wisp's pi extension, running *argv* (pi has no time limit on an extension)."""
    text = EXTENSION.read_text(encoding="utf-8")
    return text.replace(ARGV_SLOT, json.dumps(argv), 1)


def settings(options: HookOptions) -> str:
    return extension(installed_argv(HARNESS, options))


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    base = env.get("PI_CODING_AGENT_DIR", "").strip()
    return (Path(base).expanduser() if base else user_home / ".pi" / "agent") / (
        "extensions/wisp.js"
    )


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths
# (read from 1.6.0's tool schemas; an extension's or an MCP server's tools: not known).
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "edit": edits("path"),
    "write": edits("path"),
    "read": reads("path"),
}


HARNESS = Harness(
    name=NAME,
    title=TITLE,
    parse=parse,
    allow=decision_allow,  # the extension reads the `decision` shape
    deny=decision_deny,
    settings=settings,
    guarded=False,
    prints=f"Print wisp's {TITLE} extension (running this wisp, by its absolute path) and "
    f"exit: save it as {USER_PATH} ({TITLE}'s extensions folder; .pi/extensions/ for one "
    "project, loaded once pi trusts it).",
    program="pi",
    fmt=Format.TEXT,
    mark=MARK,
    events=(EVENT,),
    user_file=user_file,
    project_file=lambda project: project / ".pi" / "extensions" / "wisp.js",
    tools=TOOLS,
    project_note="pi loads a project's extensions only once it trusts the project (it asks "
    "when it starts there; headless, set it up at the user level, without --project)",
)
