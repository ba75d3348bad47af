"""Claude Code's permission prompt tool (`claude -p --permission-prompt-tool
mcp__wisp__permission_prompt`, `wisp mcp` its MCP server), with the real Claude Code: the
call is filed, answered from a terminal, and Claude Code takes the one text block wisp
answers with — an approve runs the command, a deny's reason reaches the model.

Claude Code connects MCP servers in the background in `-p` and waits 2 s for them: a run whose
prompt tool is not connected by then fails ("MCP tool … not found"). The server is therefore
`alwaysLoad` (docs/agents.md), and one test shows a server slower than those 2 s waited for.
The fake model also holds its first tool call until `wisp mcp` is up (its server lock)."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import harnesses
import pytest
from fakemodel import DONE_TEXT, Call, FakeModel
from world import WAIT_S, WISP, World, installed


class ServerFirst(FakeModel):
    """A fake model that makes its first tool call only once `wisp mcp` holds its lock."""

    def __init__(self, script: list[Call], wisp_home: Path) -> None:
        super().__init__(script)
        self.servers = wisp_home / "pending" / ".servers"

    def turn(self, offers_tools: bool, results: int) -> Call | None:
        deadline = time.monotonic() + WAIT_S  # bounded: a server that never comes fails
        while results == 0 and not any(self.servers.glob("*.lock")):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        return super().turn(offers_tools, results)


class Session:
    """One `claude -p` run whose model asks for `touch MARKER`, put to wisp's prompt tool."""

    def __init__(
        self, world: World, ns, pin: harnesses.Pin, *, wisp: Path = WISP, hold: bool = True
    ) -> None:
        installed(pin)
        self.marker = world.cwd / "marker"
        self.command = f"touch {self.marker}"
        script = [Call("Bash", {"command": self.command, "description": "leave a marker"})]
        with ns.entered():
            self.model = ServerFirst(script, world.wisp_home) if hold else FakeModel(script)
        self.model.start()
        self.process = harnesses.start_claude_code_prompt_tool(
            ns, world.home, world.cwd, self.model.url, wisp, world.wisp_home, pin=pin
        )

    def finish(self) -> None:
        done = harnesses.finish(self.process, timeout=WAIT_S + 30)
        self.model.stop()
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert json.loads(done.stdout)["result"] == DONE_TEXT

    def told(self) -> str:
        later = self.model.after_tools()
        assert later, "the model was not asked again after the tool call"
        return later[-1].text()


@pytest.mark.parametrize("pin", harnesses.versions("claude-code"), ids=lambda p: p.id)
class TestPermissionPromptTool:
    def test_approved_from_a_terminal_runs(self, pin, world: World, ns) -> None:
        """The call reaches wisp as a command request; approved from a terminal, Claude Code
        accepts the tool's answer and runs it."""
        session = Session(world, ns, pin)
        request = world.filed()
        assert request["binding"]["command"] == session.command
        code, said = world.answer("approvals", "approve", request["id"])
        assert code == 0, said
        session.finish()
        assert session.marker.exists()

    def test_denied_with_a_reason_does_not_run(self, pin, world: World, ns) -> None:
        """Denied with a reason: not run, and the model's next request carries wisp's
        reason (Claude Code read the tool's one text block)."""
        session = Session(world, ns, pin)
        request = world.filed()
        code, said = world.answer("approvals", "deny", request["id"], "--reason", "not on a Friday")
        assert code == 0, said
        session.finish()
        assert not session.marker.exists()
        assert "not on a Friday" in session.told()

    def test_a_server_slower_than_claude_codes_wait_is_waited_for(
        self, pin, world: World, ns, tmp_path: Path
    ) -> None:
        """A `wisp mcp` that takes 3 s to start (beyond the 2 s `-p` waits for a server it
        connects in the background), `alwaysLoad` as docs/agents.md says, the model not held
        back: Claude Code waits for it, the call is filed, and approved it runs. (Without
        `alwaysLoad` the run fails at once, "MCP tool mcp__wisp__permission_prompt (passed
        via --permission-prompt-tool) not found", as seen in a CI run under load.)"""
        slow = tmp_path / "slow-wisp"
        slow.write_text(f'#!/bin/sh\nsleep 3\nexec {shlex.quote(str(WISP))} "$@"\n')
        slow.chmod(0o755)
        session = Session(world, ns, pin, wisp=slow, hold=False)
        request = world.filed()
        code, said = world.answer("approvals", "approve", request["id"])
        assert code == 0, said
        session.finish()
        assert session.marker.exists()
