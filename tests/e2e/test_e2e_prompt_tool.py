"""Claude Code's permission prompt tool (`claude -p --permission-prompt-tool
mcp__wisp__permission_prompt`, `wisp mcp` its MCP server), with the real Claude Code: the
call is filed, answered from a terminal, and Claude Code takes the one text block wisp
answers with — an approve runs the command, a deny's reason reaches the model.

Claude Code connects MCP servers in the background in `-p`, and a call made before `wisp mcp`
has answered `initialize` fails as "tool not found" (docs/agents.md): the fake model holds
its first tool call until `wisp mcp` is up (its server lock is in the channel)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import harnesses
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

    def __init__(self, world: World, ns) -> None:
        installed("claude-code")
        self.marker = world.cwd / "marker"
        self.command = f"touch {self.marker}"
        with ns.entered():
            self.model = ServerFirst(
                [Call("Bash", {"command": self.command, "description": "leave a marker"})],
                world.wisp_home,
            )
        self.model.start()
        self.process = harnesses.start_claude_code_prompt_tool(
            ns, world.home, world.cwd, self.model.url, WISP, world.wisp_home
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


class TestPermissionPromptTool:
    def test_approved_from_a_terminal_runs(self, world: World, ns) -> None:
        """The call reaches wisp as a command request; approved from a terminal, Claude Code
        accepts the tool's answer and runs it."""
        session = Session(world, ns)
        request = world.filed()
        assert request["binding"]["command"] == session.command
        code, said = world.answer("approvals", "approve", request["id"])
        assert code == 0, said
        session.finish()
        assert session.marker.exists()

    def test_denied_with_a_reason_does_not_run(self, world: World, ns) -> None:
        """Denied with a reason: not run, and the model's next request carries wisp's
        reason (Claude Code read the tool's one text block)."""
        session = Session(world, ns)
        request = world.filed()
        code, said = world.answer("approvals", "deny", request["id"], "--reason", "not on a Friday")
        assert code == 0, said
        session.finish()
        assert not session.marker.exists()
        assert "not on a Friday" in session.told()
