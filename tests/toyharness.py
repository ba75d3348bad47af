"""A throwaway harness, `toyharness`, added as docs/architecture.md says a harness is added:
one module declaring its HARNESS, and one line (its module's name in
wisp._entry.HARNESS_MODULES; here put there by `register`, for the process). No other
file knows of it.

Its events are `{"toy_event": "wish", "session", "cwd", "tool", "input"}`; its shell tool is
`sh`; it reads `{"toy": "yes"|"no", "why": …}`; exit 2 blocks. Its config is `~/.toy/hooks.json`
(a project's `.toy/hooks.json`), its hook blocks nested as Claude Code's are.

`python tests/toyharness.py ARGS` is `wisp ARGS` in a process that has the toy harness, so
a test can drive the real program (`hook toyharness`, its fast path and its CLI command) and
the real `agents setup|remove|status toyharness` on a harness no face was written for.
"""

from __future__ import annotations

import json
import shlex

from wisp.agents.gate import ToolCall
from wisp.agents.hookio import (
    BLOCK_STATUS,
    EventRefused,
    Harness,
    HookOptions,
    Said,
    field,
    installed_argv,
    register,
    shell_or_tool,
)

NAME = "toyharness"
EVENT = "wish"


def parse(event: dict[str, object]) -> ToolCall:
    if event.get("toy_event") != EVENT:
        raise EventRefused(f"wisp answers the toy's {EVENT}, not {event.get('toy_event')!r}")
    return shell_or_tool(
        field(event, "tool"),
        event.get("input"),
        shell="sh",
        session=field(event, "session"),
        cwd=field(event, "cwd"),
        title="the toy",
    )


def _said(yes: bool, why: str, failed: bool = False) -> Said:
    return Said(
        stdout=json.dumps({"toy": "yes" if yes else "no", "why": why}),
        exit_code=BLOCK_STATUS if failed else 0,
        stderr=why if failed else None,
    )


def settings(options: HookOptions) -> dict[str, object]:
    command = shlex.join(installed_argv(HARNESS, options))
    hook = {"type": "command", "command": command, "timeout": options.timeout_s}
    return {"hooks": {EVENT: [{"hooks": [hook]}]}}


HARNESS = Harness(
    name=NAME,
    title="the toy",
    parse=parse,
    allow=lambda why: _said(True, why),
    deny=lambda why, failed: _said(False, why, failed),
    settings=settings,
    program="toy",
    events=(EVENT,),
    user_file=lambda env, home: home / ".toy" / "hooks.json",
    project_file=lambda project: project / ".toy" / "hooks.json",
)


if __name__ == "__main__":
    register(NAME)  # the one line: this module's name (tests/ is the script's sys.path[0])
    from wisp.__main__ import run

    run()
