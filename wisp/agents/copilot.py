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

from pending import DecodeError, loads_strict
from wisp.agents.gate import ToolCall
from wisp.agents.hookio import EventRefused, Harness, Said, field, shell_or_tool

NAME = "copilot"
SHELL_TOOL = "bash"
BLOCK = 2


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
        exit_code=BLOCK if failed else 0,
        stderr=reason if failed else None,
    )


def settings(argv: list[str], timeout_s: int) -> dict[str, object]:
    """A `~/.copilot/hooks/wisp.json` file (always loaded, unlike a repository's)."""
    import shlex

    hook = {"type": "command", "bash": shlex.join(argv), "timeoutSec": timeout_s}
    return {"version": 1, "hooks": {"preToolUse": [hook]}}


HARNESS = Harness(
    name=NAME, title="Copilot CLI", parse=parse, allow=allow, deny=deny, settings=settings
)
