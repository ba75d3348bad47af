"""`wisp hook codex|gemini|copilot`: each harness's real pre-tool event (captured by the e2e
tier, fixtures/agents/) fed to a real process, answered from a real terminal, and its answer
read in that harness's own shape. None of them has an "ask": the wait is the ask, and
anything but a grant or the person's approval is a deny."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import in_terminal, run_wisp, wait_until, wisp_command

from pending import Channel
from wisp.agents.hookio import GUARD_SCRIPT, GUARD_SHELL

EVENTS = Path(__file__).resolve().parent.parent / "fixtures" / "agents"


def codex_decision(out: str) -> tuple[str, str]:
    if not out.strip():
        return "allow", ""
    said = json.loads(out)["hookSpecificOutput"]
    return said["permissionDecision"], said["permissionDecisionReason"]


def gemini_decision(out: str) -> tuple[str, str]:
    said = json.loads(out)
    return said["decision"], said.get("reason", "")


def copilot_decision(out: str) -> tuple[str, str]:
    said = json.loads(out)
    return said["permissionDecision"], said["permissionDecisionReason"]


DECISIONS: dict[str, Callable[[str], tuple[str, str]]] = {
    "codex": codex_decision,
    "gemini": gemini_decision,
    "copilot": copilot_decision,
}
HARNESSES = sorted(DECISIONS)


def event(harness: str, name: str, project: Path) -> bytes:
    text = (EVENTS / harness / f"{name}.json").read_text()
    return text.replace("/home/you/project", str(project)).encode()


class Hook:
    """`wisp hook HARNESS ARGS`, the event written to its stdin."""

    def __init__(self, harness: str, data: bytes, *args: str) -> None:
        self.harness = harness
        self.process = subprocess.Popen(
            wisp_command("hook", harness, *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.close()

    def result(self) -> tuple[int, str, str, str]:
        """(exit code, decision, reason, stderr)."""
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.wait(60)
        out, err = self.process.stdout.read(), self.process.stderr.read()
        decision, reason = DECISIONS[self.harness](out.decode())
        return self.process.returncode, decision, reason, err.decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def filed(home: Path, suffix: str) -> str:
    def found() -> str | None:
        pending = home / "pending"
        names = [p.name for p in pending.glob(f"*{suffix}")] if pending.exists() else []
        return names[0].split(".")[0] if len(names) == 1 else None

    request_id: str = wait_until(found, timeout=30, what="a request filed")
    return request_id


@pytest.mark.parametrize("harness", HARNESSES)
class TestNoAskHarness:
    def test_its_shell_call_approved_from_a_terminal_is_allowed(
        self, home: Path, project: Path, harness: str
    ) -> None:
        """The shell call is filed as a command request (its command exactly); approved from
        a terminal, the harness is told to go on (exit 0)."""
        hook = Hook(harness, event(harness, "pre-tool-shell", project))
        request_id = filed(home, ".request.json")
        with Channel.open(home) as channel:
            binding = channel.status(request_id).request.binding
        assert binding.command == f"touch {project}/marker"  # type: ignore[union-attr]
        assert in_terminal("approvals", "approve", request_id)[0] == 0
        code, decision, _, _ = hook.result()
        assert (code, decision) == (0, "allow")

    def test_a_deny_with_a_reason_reaches_it(self, home: Path, project: Path, harness: str) -> None:
        """Denied from a terminal with a reason: the harness's deny, carrying the reason."""
        hook = Hook(harness, event(harness, "pre-tool-shell", project))
        request_id = filed(home, ".request.json")
        assert in_terminal("approvals", "deny", request_id, "--reason", "not here")[0] == 0
        code, decision, reason, _ = hook.result()
        assert (code, decision) == (0, "deny") and "not here" in reason

    def test_its_write_is_a_tool_request(self, home: Path, project: Path, harness: str) -> None:
        """Its file-writing tool is filed as a tool request (a shell heredoc for Codex)."""
        hook = Hook(harness, event(harness, "pre-tool-write", project), "--wait", "30")
        suffix = ".request.json" if harness == "codex" else ".tool.json"
        request_id = filed(home, suffix)
        group = "approvals" if harness == "codex" else "tools"
        assert in_terminal(group, "deny", request_id)[0] == 0
        assert hook.result()[1] == "deny"

    def test_nobody_answering_is_a_deny_naming_how_to_grant(
        self, home: Path, project: Path, harness: str
    ) -> None:
        """No answer within --wait: withdrawn, and a deny that says how to let it run
        without asking next time."""
        code, decision, reason, _ = Hook(
            harness, event(harness, "pre-tool-shell", project), "--wait", "1"
        ).result()
        assert (code, decision) == (0, "deny")
        assert "nobody answered" in reason and "--scope always" in reason

    def test_bad_input_is_a_blocking_deny(self, home: Path, harness: str) -> None:
        """Input it cannot read: exit 2 (the harness's block), a deny, no traceback."""
        code, decision, reason, err = Hook(harness, b"[1, 2]").result()
        assert (code, decision) == (2, "deny") and "not a JSON object" in reason
        assert "Traceback" not in err

    def test_the_printed_settings_run_it_in_the_guard(self, home: Path, harness: str) -> None:
        """--print-settings: JSON whose command is wisp's guard around `wisp hook HARNESS`,
        with a timeout above the wait."""
        printed = run_wisp("hook", harness, "--print-settings")
        assert printed.returncode == 0, printed.stderr
        text = json.dumps(json.loads(printed.stdout))
        assert str(GUARD_SCRIPT) in text
        hooks: list[Any] = []

        def commands(value: Any) -> None:
            if isinstance(value, dict):
                for key, item in value.items():
                    if key in ("command", "bash") and isinstance(item, str):
                        hooks.append(item)
                    commands(item)
            elif isinstance(value, list):
                for item in value:
                    commands(item)

        commands(json.loads(printed.stdout))
        (command,) = hooks
        argv = shlex.split(command)
        assert argv[:2] == [GUARD_SHELL, str(GUARD_SCRIPT)]
        assert argv[-2:] == ["hook", harness]
