"""Kilo Code CLI (`wisp hook kilo`): its `tool.execute.before` plugin event in, a decision out.

Kilo Code's CLI (7.7.7, `kilo`) is a fork of OpenCode with its plugin API: a JS plugin's
`tool.execute.before({tool, sessionID, callID}, {args})` runs before each tool call, and
throwing denies it (the thrown text is the tool's result, which the model sees). So wisp's
plugin for it is OpenCode's (`opencode-plugin.js`, its names made Kilo Code's): it runs
`wisp hook kilo` with `{"hook_event_name": "tool.execute.before", "cwd", "input", "output"}`
on stdin and lets the call run only on exit 0 with `{"decision": "allow"}`; wisp's deny, wisp
not runnable, killed or answering anything else is a throw. The shell tool is `bash`
(`args.command`, `args.description`). Kilo Code has no "ask" a plugin can give and sets no time
limit on a plugin: the wait is the ask, bounded by wisp's own --wait. The plugin is the guard
(it fails closed by itself), so its command is `wisp hook kilo` unwrapped.

Kilo Code loads every `.js` file in `plugin/` (or `plugins/`) of its config folder
(`$XDG_CONFIG_HOME/kilo`, else ~/.config/kilo) and of a project's `.kilo/`.
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

NAME = "kilo"
TITLE = "Kilo Code"
EVENT = "tool.execute.before"
SHELL_TOOL = "bash"
PLUGIN = Path(__file__).with_name("opencode-plugin.js")  # OpenCode's, its names replaced
ARGV_SLOT = "__WISP_ARGV__"
PLUGIN_PATH = "~/.config/kilo/plugin/wisp.js"
# OpenCode's words in its plugin, and Kilo Code's for them (the first is its mark's: setup
# knows a plugin file as wisp's by "// wisp's TITLE plugin").
RENAMED = (
    ("~/.config/opencode/plugin/", "~/.config/kilo/plugin/"),
    (".opencode/plugin/", ".kilo/plugin/"),
    ("wisp hook opencode", f"wisp hook {NAME}"),
    ("OpenCode", TITLE),
)


def parse(event: dict[str, object]) -> ToolCall:
    if event.get("hook_event_name") != EVENT:
        raise EventRefused(
            f"wisp answers {TITLE}'s {EVENT} (from its plugin), not "
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
        title=TITLE,
    )


def plugin(argv: list[str]) -> str:
    """wisp's Kilo Code plugin, running *argv* (Kilo Code has no plugin timeout)."""
    text = PLUGIN.read_text(encoding="utf-8")
    for theirs, ours in RENAMED:
        text = text.replace(theirs, ours)
    return text.replace(ARGV_SLOT, json.dumps(argv), 1)


def settings(options: HookOptions) -> str:
    return plugin(installed_argv(HARNESS, options))


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base) if base else user_home / ".config") / "kilo" / "plugin" / "wisp.js"


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths
# (read from 7.7.7's tool definitions; its own tools, `repo_clone`, `notebook_edit`, the
# memory and agent tools and the rest: not known).
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "edit": edits("filePath"),
    "write": edits("filePath"),
    "apply_patch": ToolEffect(Effect.EDIT, patch="patchText"),
    "read": reads("filePath"),
    "glob": reads("path", "pattern"),
    "grep": reads("path"),
    "webfetch": NETWORK,
    "websearch": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title=TITLE,
    parse=parse,
    allow=decision_allow,  # the plugin reads the `decision` shape
    deny=decision_deny,
    settings=settings,
    guarded=False,
    prints=f"Print wisp's {TITLE} plugin (running this wisp, by its absolute path) and exit: "
    f"save it as {PLUGIN_PATH} ({TITLE}'s config plugin folder; .kilo/plugin/ for one "
    "project).",
    program="kilo",
    fmt=Format.TEXT,
    events=(EVENT,),
    user_file=user_file,
    project_file=lambda project: project / ".kilo" / "plugin" / "wisp.js",
    tools=TOOLS,
)
