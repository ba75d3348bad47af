"""GitHub's Copilot CLI (`wisp hook copilot`): its `preToolUse` hook event in, its answer out.

Copilot CLI (1.0.102) sends `sessionId`, `timestamp` (ms), `cwd`, `toolName` (`bash`,
`create`, `edit`, …) and `toolArgs` (the shell tool's `command` and `description`; an object,
or the same as a JSON string), with no event name. It reads `{"permissionDecision":
"allow"|"deny", "permissionDecisionReason": …}`; its "ask" is a deny headless. A hook that
exits non-zero or is killed blocks the call, but past its `timeoutSec` (30 s by default) the
call RUNS: so the wait ends well before the timeout the setup writes, and every failure is
a deny.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pending import DecodeError, loads_strict
from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    BLOCK_STATUS,
    NETWORK,
    SHELL,
    EventRefused,
    Harness,
    HookOptions,
    Said,
    ToolEffect,
    edits,
    field,
    installed_argv,
    reads,
    shell_or_tool,
)

NAME = "copilot"
SHELL_TOOL = "bash"
EVENT = "preToolUse"


def parse(event: dict[str, object]) -> ToolCall:
    args = event.get("toolArgs")
    if isinstance(args, str):
        try:
            args = loads_strict(args.encode())
        except DecodeError as exc:
            raise EventRefused(f"the event's toolArgs is not JSON wisp reads: {exc}") from None
    return shell_or_tool(
        field(event, "toolName"),
        args,
        shell=SHELL_TOOL,
        session=field(event, "sessionId"),
        cwd=field(event, "cwd"),
        title="Copilot CLI",
    )


def _said(decision: str, reason: str) -> str:
    output = {"permissionDecision": decision, "permissionDecisionReason": reason}
    return json.dumps(output, ensure_ascii=False)


def allow(reason: str) -> Said:
    return Said(stdout=_said("allow", reason), exit_code=0)


def deny(reason: str, failed: bool) -> Said:
    return Said(
        stdout=_said("deny", reason),
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=reason if failed else None,
    )


def settings(options: HookOptions) -> dict[str, object]:
    """A `~/.copilot/hooks/wisp.json` file (always loaded, unlike a repository's)."""
    import shlex

    hook = {
        "type": "command",
        "bash": shlex.join(installed_argv(HARNESS, options)),
        "timeoutSec": options.timeout_s,
    }
    return {"version": 1, "hooks": {EVENT: [hook]}}


def skipped(program: str, hooks: list[dict[str, object]]) -> list[str]:
    """wisp's hooks in a repository's .github/hooks: `copilot -p` skips them unless the
    folder is trusted."""
    return [
        f"{h['file']}: skipped by `copilot -p` unless the folder is trusted"
        for h in hooks
        if "/.github/" in str(h["file"])
    ]


# What each tool does, for the policy (issue 57): the effect, and the fields naming its paths.
TOOLS: Mapping[str, ToolEffect] = {
    SHELL_TOOL: SHELL,
    "create": edits("path"),
    "edit": edits("path"),
    "str_replace_editor": edits("path"),
    "view": reads("path"),
    "glob": reads("path", "pattern"),
    "grep": reads("path"),
    "web_fetch": NETWORK,
}


HARNESS = Harness(
    name=NAME,
    title="Copilot CLI",
    parse=parse,
    allow=allow,
    deny=deny,
    settings=settings,
    program="copilot",
    events=(EVENT,),
    user_file=lambda env, home: home / ".copilot" / "hooks" / "wisp.json",
    project_file=lambda project: project / ".github" / "hooks" / "wisp.json",
    whole_file=True,
    timeout_key="timeoutSec",
    command_key="bash",
    skipped=skipped,
    tools=TOOLS,
    project_note="a repository's .github/hooks are skipped in `copilot -p` unless the folder is "
    "trusted: set it up at the user level (without --project) to be sure it runs",
)
