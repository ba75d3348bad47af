"""Claude Code (the real binary, `claude -p`) with `wisp hook claude-code` as its PreToolUse
hook, against the fake model server: the model asks to run a shell command that leaves a
marker file, and what a person does (or does not do) in another terminal decides whether it
runs."""

from __future__ import annotations

import json
import os
import signal

import harnesses
from fakemodel import DONE_TEXT, Call, FakeModel
from world import WAIT_S, World, installed


def wisp_hooks(world: World, wait: int = 60) -> dict[str, object]:
    """The hooks block `wisp hook claude-code --print-settings` prints (unattended: a
    timeout denies)."""
    printed = world.wisp(
        "hook", "claude-code", "--print-settings", "--wait", str(wait), "--on-timeout", "deny"
    )
    assert printed.returncode == 0, printed.stderr
    hooks: dict[str, object] = json.loads(printed.stdout)["hooks"]
    return hooks


class Session:
    """One `claude -p` run whose model asks for `touch MARKER`."""

    def __init__(self, world: World, serve, ns, wait: int = 60) -> None:
        installed("claude-code")
        self.marker = world.cwd / "marker"
        self.command = f"touch {self.marker}"
        self.model: FakeModel = serve(
            [Call("Bash", {"command": self.command, "description": "leave a marker"})]
        )
        self.process = harnesses.start_claude_code(
            ns, world.home, world.cwd, self.model.url, wisp_hooks(world, wait), world.wisp_home
        )

    def finish(self):
        done = harnesses.finish(self.process, timeout=WAIT_S + 30)
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert json.loads(done.stdout)["result"] == DONE_TEXT
        return done

    def told(self) -> str:
        """What the model was sent after the tool call (the tool's result, as JSON text)."""
        later = self.model.after_tools()
        assert later, "the model was not asked again after the tool call"
        return later[-1].text()


class TestClaudeCode:
    def test_approved_from_a_terminal_runs(self, world: World, serve, ns) -> None:
        """The call is filed as a command request with the model's exact command; approved
        from a terminal, Claude Code runs it."""
        session = Session(world, serve, ns)
        request = world.filed()
        assert request["kind"] == "command"
        assert request["binding"]["command"] == session.command
        assert request["binding"]["cwd"] == str(world.cwd)
        assert not session.marker.exists()
        code, said = world.answer("approvals", "approve", request["id"])
        assert code == 0, said
        session.finish()
        assert session.marker.exists()

    def test_denied_with_a_reason_does_not_run(self, world: World, serve, ns) -> None:
        """Denied with a reason: the command does not run, and the model's next request
        carries wisp's reason."""
        session = Session(world, serve, ns)
        request = world.filed()
        code, said = world.answer("approvals", "deny", request["id"], "--reason", "not on a Friday")
        assert code == 0, said
        session.finish()
        assert not session.marker.exists()
        told = session.told()
        assert "wisp: denied by" in told
        assert "not on a Friday" in told
        assert request["id"] in told

    def test_nobody_answers_does_not_run(self, world: World, serve, ns) -> None:
        """Nobody answers within the hook's --wait: the request is withdrawn, the call is
        denied, and the model is told why."""
        session = Session(world, serve, ns, wait=3)
        request = world.filed()
        session.finish()
        assert not session.marker.exists()
        assert "nobody answered" in session.told()
        ended = {r["id"]: r for r in world.requests()}[request["id"]]
        assert ended["outcome"] == "withdrawn"

    def test_the_waiting_wisp_killed_does_not_run(self, world: World, serve, ns) -> None:
        """The `wisp hook` process waiting for an answer is killed (SIGKILL): the command
        does not run. (Claude Code runs a call whose hook exits 137; the printed command is a
        guard that answers the deny when `wisp` dies.)"""
        session = Session(world, serve, ns)
        request = world.filed()
        os.kill(request["server"]["pid"], signal.SIGKILL)
        session.finish()
        assert not session.marker.exists()

    def test_a_standing_grant_runs_without_a_request(self, world: World, serve, ns) -> None:
        """Approved `--scope always` once; a second session's identical command runs at once,
        without a request filed."""
        first = Session(world, serve, ns)
        request = world.filed()
        code, said = world.answer("approvals", "approve", request["id"], "--scope", "always")
        assert code == 0, said
        first.finish()
        assert first.marker.exists()
        first.marker.unlink()
        before = {r["id"] for r in world.requests()}
        second = Session(world, serve, ns)
        second.finish()
        assert second.marker.exists()
        assert {r["id"] for r in world.requests()} == before
