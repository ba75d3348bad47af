"""Cline's CLI (`wisp hook cline`): its `PreToolUse` hook file's event in, `{"cancel"}` out.

Cline (npm `cline` 3.0.65, its hooks in the SDK's `@cline/core`) runs every file named
`PreToolUse` in its hooks folders (`$CLINE_DIR/hooks`, else ~/.cline/hooks; ~/Documents/Cline/
Hooks; a project's `.clinerules/hooks/` and `.cline/hooks/`), by its shebang, before each tool
call, with `{"hookName": "tool_call", "taskId", "workspaceRoots", "tool_call": {"id", "name",
"input"}, "preToolUse": {…}, …}` on stdin (no cwd: the workspace root is the first of
`workspaceRoots`). Its shell tool is `run_commands`, whose `commands` is a LIST of command
lines, each run: wisp asks them as one command, a line each. It reads stdout's JSON (or its
last `HOOK_CONTROL\\t` line): `{"cancel": true, "errorMessage": REASON}` stops the call and
the whole run with the reason (the model is not asked again); its exit status is not read.
It RUNS the call when the hook prints nothing it reads, exits non-zero with nothing, cannot be
started, or passes its timeout (120 s, fixed: no hook file sets it), when it kills the hook
with SIGKILL. So the installed file execs wisp's guard (whose deny, when wisp dies, is the
JSON above), and wisp's wait is at most :data:`MAX_WAIT_S`, well inside that timeout. Cline
has no "ask" a hook can give: the wait is the ask.

Its hooks run in Cline's hub daemon (`cline --cline-hub-daemon`), which the first `cline` run
starts and later runs reuse, with that first run's environment.
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
    EventRefused,
    Format,
    Harness,
    HookOptions,
    Said,
    ToolEffect,
    edits,
    field,
    guarded_command,
    shell_or_tool,
)
from wisp.agents.install import this_wisp

NAME = "cline"
TITLE = "Cline"
EVENT = "tool_call"  # the event a file named PreToolUse answers
FILE_NAME = "PreToolUse"
SHELL_TOOL = "run_commands"
# Cline kills a tool hook after this long and runs the call (toolCallTimeoutMs, 120000 ms by
# default, set by no hook file); wisp's wait ends this far inside it, to withdraw and answer.
CLINE_HOOK_TIMEOUT_S = 120
HOOK_MARGIN_S = 10
MAX_WAIT_S = CLINE_HOOK_TIMEOUT_S - HOOK_MARGIN_S
MARK = f"#!/bin/sh\n# wisp's {TITLE} hook"  # the first two lines: what makes the file wisp's
USER_PATH = f"~/.cline/hooks/{FILE_NAME}"
PROJECT_PATH = f".clinerules/hooks/{FILE_NAME}"


def _cwd(event: dict[str, object]) -> str:
    roots = event.get("workspaceRoots")
    first = roots[0] if isinstance(roots, list) and roots else None
    if isinstance(first, str) and first:
        return first
    raise EventRefused("the event has no `workspaceRoots` (a list of paths)")


def parse(event: dict[str, object]) -> ToolCall:
    if event.get("hookName") != EVENT:
        raise EventRefused(
            f"wisp answers {TITLE}'s {FILE_NAME} hook (its `{EVENT}` event), not "
            f"{event.get('hookName')!r}: install it as the file `{FILE_NAME}` only "
            f"(`wisp hook {NAME} --print-settings`)"
        )
    called = event.get("tool_call")
    if not isinstance(called, dict):
        raise EventRefused("the event has no `tool_call` (a JSON object)")
    tool, given = field(called, "name"), called.get("input")
    if tool == SHELL_TOOL and isinstance(given, Mapping):
        lines = given.get("commands")
        if not (isinstance(lines, list) and lines and all(isinstance(c, str) for c in lines)):
            raise EventRefused(f"a {SHELL_TOOL} call with no `commands` (a list of strings)")
        rest = {k: v for k, v in given.items() if k != "commands"}
        given = {"command": "\n".join(lines), **rest}  # each line is run: all of them asked
    return shell_or_tool(
        tool,
        given,
        shell=SHELL_TOOL,
        session=field(event, "taskId"),
        cwd=_cwd(event),
        title=TITLE,
    )


def allow(reason: str) -> Said:
    return Said(stdout=json.dumps({"cancel": False}), exit_code=0)


def deny(reason: str, failed: bool) -> Said:
    """`{"cancel": true, "errorMessage": REASON}` (Cline reads no exit status; a failure also
    exits 2 with the reason on stderr, as every harness's failure does)."""
    said = json.dumps({"cancel": True, "errorMessage": reason}, ensure_ascii=False)
    return Said(
        stdout=said,
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=reason if failed else None,
    )


def wait_of(options: HookOptions) -> float:
    """The wait the installed hook runs with: the one asked, at most :data:`MAX_WAIT_S`."""
    return min(options.wait_s, MAX_WAIT_S)


def script(argv: list[str]) -> str:
    """wisp's `PreToolUse` file for Cline, running *argv* (wisp's guard around wisp)."""
    return (
        f"{MARK}: `wisp hook {NAME}` decides each tool call before {TITLE} runs it.\n"
        f"# Written by `wisp agents setup {NAME}` (`wisp hook {NAME} --print-settings`): saved "
        f"as {USER_PATH}\n# (every project) or {PROJECT_PATH} (one project).\n"
        f'# {TITLE} reads {{"cancel": true, "errorMessage": ...}} on stdout as its deny, and '
        "RUNS the call when\n# its hook prints nothing it reads, fails, or passes its 120 s "
        "(it kills it then): so wisp\n# runs in its guard (which answers the deny when wisp "
        f"dies) and waits at most {MAX_WAIT_S} s.\n"
        f"# WISP = {json.dumps(argv)}\n"
        f"exec {shlex.join(argv)}\n"
    )


def settings(options: HookOptions) -> str:
    return script(guarded_command(HARNESS, this_wisp(), wait_s=wait_of(options)))


def user_file(env: Mapping[str, str], user_home: Path) -> Path:
    base = env.get("CLINE_DIR", "").strip()
    return (Path(base) if base else user_home / ".cline") / "hooks" / FILE_NAME


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths
# (read from 3.0.65's tool schemas: `read_files` names its files inside a list of objects, so
# it is not named here; `search_codebase`, `ask_question`, the agent and team tools: not known).
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "editor": edits("path"),
    "fetch_web_content": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title=TITLE,
    parse=parse,
    allow=allow,
    deny=deny,
    settings=settings,
    prints=f"Print wisp's {TITLE} hook file (running this wisp in its guard, by absolute paths) "
    f"and exit: save it as {USER_PATH} ({TITLE}'s hooks folder; {PROJECT_PATH} for one "
    f"project). Its wait is at most {MAX_WAIT_S} s: {TITLE} kills a hook at "
    f"{CLINE_HOOK_TIMEOUT_S} s and runs the call.",
    program="cline",
    fmt=Format.TEXT,
    mark=MARK,
    events=(FILE_NAME,),
    user_file=user_file,
    project_file=lambda project: project / ".clinerules" / "hooks" / FILE_NAME,
    tools=TOOLS,
)
