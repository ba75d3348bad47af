"""`wisp policy check`: what the policy would decide of one call, and what would decide it —
the same steps a harness's hook takes (its tool table, the self-guard, the grants, the rules:
:func:`wisp.policy.decide.explain`), with nothing filed and nothing recorded."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from wisp._errors import WispError
from wisp.policy.decide import Call, Decision

DEFAULT_HARNESS = "claude-code"
SHELL_TOOL = "Bash"  # a shell call's tool when its harness names none


class CheckRefused(WispError):
    """The call cannot be checked as given (an unknown harness, input that is no JSON
    object); the message says what to give instead."""


class CallCheck(NamedTuple):
    """One call, as the policy read it, and what it would decide."""

    call: Call
    decision: Decision


def check_call(
    home: Path,
    *,
    harness: str,
    cwd: str,
    command: str | None = None,
    tool: str | None = None,
    tool_input: str | None = None,
) -> CallCheck:
    """What would become of a shell *command*, or of *tool* with *tool_input* (JSON text),
    run by *harness* in *cwd* (absolute) outside any session: decided as the hook decides
    it, with this person's grants and rules, recording nothing."""
    from wisp._entry import EntryPoint
    from wisp.agents import hookio
    from wisp.agents.gate import ToolCall, bound_call, guard_reason, touches_wisp
    from wisp.kinds.standing import StandingGrants
    from wisp.policy.decide import explain
    from wisp.policy.reading import Effect

    found = hookio.harness(harness)
    if found is None:
        raise CheckRefused(
            f"wisp knows no harness {harness[:40]!r}; give one of {', '.join(hookio.names())}."
        )
    tools = found.tools or {}
    given = _input(tool_input) if tool_input is not None else {}
    if tool is not None and command is None:
        said = tools.get(tool)
        if (
            said is not None
            and said.effect is Effect.SHELL
            and isinstance(given.get("command"), str)
        ):
            command = given["command"]
    if command is not None:
        tool = tool or next(
            (name for name, said in tools.items() if said.effect is Effect.SHELL), SHELL_TOOL
        )
        given = {**given, "command": command}
    assert tool is not None
    call = bound_call(ToolCall(session="", cwd=cwd, tool=tool, input=given, command=command))
    touch = touches_wisp(call, home)
    # What the harness's table says the tool does; no session: none of a session's grants.
    asked = hookio.with_effect(found, call).policy_call(harness)._replace(session=None)
    guard = guard_reason(touch) if touch is not None else None
    grants = StandingGrants(home, EntryPoint.HOOK)  # the hook's lookup; nothing is recorded
    return CallCheck(asked, explain(asked, home=home, grants=grants, guard=guard))


def _input(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise CheckRefused(
            "--input takes the tool's input as a JSON object, e.g. "
            '\'{"file_path": "src/a.py", "content": "…"}\'.'
        )
    return value


def check_json(found: CallCheck) -> dict[str, Any]:
    """A check as `wisp policy check --json` prints it (docs/cli.md)."""
    call, decision = found
    reading = decision.reading
    line = reading.line if reading is not None else None
    rule = decision.rule
    grant = decision.grant
    return {
        "verdict": decision.verdict.value,
        "decider": decision.decider.value,
        "reason": decision.reason or None,
        "rule": None
        if rule is None
        else {"name": rule.name, "where": rule.where, "origin": rule.origin.value},
        "grant": None if grant is None else {"id": grant.name, "scope": grant.scope.value},
        "classes": sorted(c.value for c in reading.classes) if reading is not None else [],
        "mustAsk": list(reading.must_ask) if reading is not None else [],
        "commands": [list(s.words) for s in line.commands] if line is not None else [],
        "unread": line.unread if line is not None else None,
        "call": _call_json(call),
    }


def _call_json(call: Call) -> Mapping[str, Any]:
    return {
        "harness": call.harness,
        "tool": call.tool,
        "effect": call.effect.value,
        "cwd": call.cwd,
        "project": call.project,
        "command": call.command,
        "input": None if call.command is not None else dict(call.input),
        "paths": list(call.paths),
    }
