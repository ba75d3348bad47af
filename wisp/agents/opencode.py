"""OpenCode (`wisp hook opencode`): its `tool.execute.before` plugin event in, a decision out.

OpenCode (1.18) has no command hooks: a JS plugin's `tool.execute.before(input, output)` runs
before each tool call, and throwing denies it (the thrown text is the tool's result, which the
model sees). wisp's plugin (`opencode-plugin.js`, shipped beside this module and printed by
`wisp hook opencode --print-settings`) runs `wisp hook opencode` with
`{"hook_event_name": "tool.execute.before", "cwd", "input": {tool, sessionID, callID},
"output": {args}}` on stdin and lets the call run only on exit 0 with `{"decision":
"allow"}`; wisp's deny, wisp not runnable, killed or answering anything else is a throw. The
shell tool is `bash` (`args.command`, `args.description`). OpenCode has no "ask" and sets no
time limit on a plugin: the wait is the ask, bounded by wisp's own --wait. The plugin is the
guard (it fails closed by itself), so its command is `wisp hook opencode` unwrapped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    NETWORK,
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
from wisp.policy.reading import Effect

NAME = "opencode"
EVENT = "tool.execute.before"
SHELL_TOOL = "bash"
PLUGIN = Path(__file__).with_name("opencode-plugin.js")
ARGV_SLOT = "__WISP_ARGV__"
# Where the printed plugin goes: OpenCode loads every .js file in its config's plugin folder.
PLUGIN_PATH = "~/.config/opencode/plugin/wisp.js"


def parse(event: dict[str, object]) -> ToolCall:
    if event.get("hook_event_name") != EVENT:
        raise EventRefused(
            f"wisp answers OpenCode's {EVENT} (from its plugin), not "
            f"{event.get('hook_event_name')!r}: install the plugin "
            f"`wisp hook {NAME} --print-settings` prints"
        )
    called, given = event.get("input"), event.get("output")
    if not isinstance(called, dict) or not isinstance(given, dict):
        raise EventRefused("the event has no `input` and `output` (JSON objects)")
    return shell_or_tool(
        field(called, "tool"),
        given.get("args"),
        shell=SHELL_TOOL,
        session=field(called, "sessionID"),
        cwd=field(event, "cwd"),
        title="OpenCode",
    )


def plugin(argv: list[str]) -> str:
    """wisp's OpenCode plugin, running *argv* (OpenCode has no hook timeout)."""
    return PLUGIN.read_text(encoding="utf-8").replace(ARGV_SLOT, json.dumps(argv), 1)


def settings(options: HookOptions) -> str:
    # `wisp hook opencode`, never bare `wisp` (which answers no event: every call was
    # refused, and nothing filed).
    return plugin(installed_argv(HARNESS, options))


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base) if base else user_home / ".config") / "opencode" / "plugin" / "wisp.js"


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths.
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "edit": edits("filePath"),
    "write": edits("filePath"),
    "patch": ToolEffect(Effect.EDIT, patch="patchText"),
    "read": reads("filePath"),
    "glob": reads("path", "pattern"),
    "grep": reads("path"),
    "list": reads("path"),
    "webfetch": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title="OpenCode",
    parse=parse,
    allow=decision_allow,  # the plugin reads the `decision` shape
    deny=decision_deny,
    settings=settings,
    guarded=False,
    prints=f"Print wisp's OpenCode plugin (running this wisp, by its absolute path) and exit: "
    f"save it as {PLUGIN_PATH} (OpenCode's config plugin folder; .opencode/plugin/ for one "
    "project).",
    program="opencode",
    fmt=Format.TEXT,
    events=(EVENT,),  # what status names its gate by
    user_file=user_file,
    project_file=lambda project: project / ".opencode" / "plugin" / "wisp.js",
    tools=TOOLS,
)
