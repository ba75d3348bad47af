"""Claude Code, Codex, Gemini CLI, Copilot CLI and OpenCode (the real binaries, headless)
with the real `wisp hook HARNESS` as their pre-tool hook, installed as `wisp hook HARNESS
--print-settings` prints it (in wisp's guard; for OpenCode, wisp's plugin), against the fake
model server: the model asks to run a shell command that leaves a marker file, and what a
person does (or does not do) in another terminal decides whether it runs. Claude Code, Codex
and Gemini CLI RUN a call whose hook fails or is killed, and all but Claude Code one whose
hook times out (HARNESSES.md); OpenCode does whatever its plugin does: a marker where none
should be is wisp failing open."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import harnesses
import pytest
from fakemodel import Call, FakeModel
from world import WAIT_S, World, installed


@dataclass(frozen=True)
class Harness:
    """How to drive one harness with wisp's hook: its starter, where its printed settings
    keep the command and timeout, and its shell call."""

    name: str
    start: Callable[..., harnesses.Popen]
    # what --print-settings printed → the starter's hook argument and its other arguments
    installs: Callable[[str], tuple[Any, dict[str, Any]]]
    shell: Callable[[str], Call]
    printed_with: tuple[str, ...] = ()  # --print-settings' other options
    hints_a_grant: bool = True  # an unanswered call's deny says how to grant it


def _entry(
    block: Callable[[dict[str, Any]], dict[str, Any]], key: str, timeout: tuple[str, str]
) -> Callable[[str], tuple[str, dict[str, Any]]]:
    """The printed JSON's hook entry: its command (under *key*) and its timeout (the
    entry's timeout[0], passed as the starter's timeout[1])."""

    def installs(printed: str) -> tuple[str, dict[str, Any]]:
        entry = block(json.loads(printed))
        return entry[key], {timeout[1]: entry[timeout[0]]}

    return installs


def _opencode(ns, home, cwd, url, plugin, wisp_home):
    return harnesses.start_opencode(ns, home, cwd, url, "", wisp_home, plugin=plugin)


def _claude(ns, home, cwd, url, hooks, wisp_home):
    return harnesses.start_claude_code(ns, home, cwd, url, hooks, wisp_home)


HARNESSES = [
    Harness(
        "claude-code", _claude,
        lambda printed: (json.loads(printed)["hooks"], {}),
        lambda command: Call("Bash", {"command": command, "description": "leave a marker"}),
        ("--on-timeout", "deny"), False,  # unattended: no dialog to ask in
    ),
    Harness(
        "codex", harnesses.start_codex,
        _entry(lambda s: s["hooks"]["PreToolUse"][0]["hooks"][0], "command",
               ("timeout", "timeout")),
        lambda command: Call("exec_command", {"cmd": command}),
    ),
    Harness(
        "gemini", harnesses.start_gemini,
        _entry(lambda s: s["hooks"]["BeforeTool"][0]["hooks"][0], "command",
               ("timeout", "timeout_ms")),
        lambda command: Call("run_shell_command", {"command": command, "description": "marker"}),
    ),
    Harness(
        "copilot", harnesses.start_copilot,
        _entry(lambda s: s["hooks"]["preToolUse"][0], "bash", ("timeoutSec", "timeout")),
        lambda command: Call("bash", {"command": command, "description": "marker"}),
    ),
    Harness(
        "opencode", _opencode,
        lambda plugin: (plugin, {}),
        lambda command: Call("bash", {"command": command, "description": "marker"}),
    ),
]  # fmt: skip


class Session:
    """One headless run of *harness* whose model asks for `touch MARKER`, with wisp's hook
    as `--print-settings` prints it (waiting *wait* seconds)."""

    def __init__(self, harness: Harness, world: World, serve, ns, wait: int = 60) -> None:
        installed(harness.name)
        self.marker = world.cwd / "marker"
        self.command = f"touch {self.marker}"
        self.model: FakeModel = serve([harness.shell(self.command)])
        printed = world.wisp(
            "hook", harness.name, "--print-settings", "--wait", str(wait), *harness.printed_with
        )
        assert printed.returncode == 0, printed.stderr
        hook, more = harness.installs(printed.stdout)
        self.process = harness.start(
            ns, world.home, world.cwd, self.model.url, hook, world.wisp_home, **more
        )

    def finish(self) -> None:
        done = harnesses.finish(self.process, timeout=WAIT_S + 60)
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])

    def told(self) -> str:
        """What the model was sent after the tool call (the tool's result, as JSON text)."""
        later = self.model.after_tools()
        assert later, "the model was not asked again after the tool call"
        return later[-1].text()


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h.name)
class TestWispHook:
    def test_approved_from_a_terminal_runs(self, harness, world: World, serve, ns) -> None:
        """The shell call is filed as a command request with the model's exact command;
        approved from a terminal, the harness runs it."""
        session = Session(harness, world, serve, ns)
        request = world.filed()
        assert request["kind"] == "command"
        assert request["binding"]["command"] == session.command
        assert request["binding"]["cwd"] == str(world.cwd)
        assert not session.marker.exists()
        code, said = world.answer("approvals", "approve", request["id"])
        assert code == 0, said
        session.finish()
        assert session.marker.exists()

    def test_denied_with_a_reason_does_not_run(self, harness, world: World, serve, ns) -> None:
        """Denied with a reason: the command does not run, and the model's next request
        carries wisp's reason."""
        session = Session(harness, world, serve, ns)
        request = world.filed()
        code, said = world.answer("approvals", "deny", request["id"], "--reason", "not on a Friday")
        assert code == 0, said
        session.finish()
        assert not session.marker.exists()
        told = session.told()
        assert "wisp: denied by" in told
        assert "not on a Friday" in told
        assert request["id"] in told

    def test_nobody_answers_does_not_run(self, harness, world: World, serve, ns) -> None:
        """Nobody answers within the hook's --wait: the request is withdrawn, the call is
        denied, and the model is told why and how to grant it."""
        session = Session(harness, world, serve, ns, wait=3)
        request = world.filed()
        session.finish()
        assert not session.marker.exists()
        told = session.told()
        assert "nobody answered" in told
        assert ("--scope always" in told) == harness.hints_a_grant
        ended = {r["id"]: r for r in world.requests()}[request["id"]]
        assert ended["outcome"] == "withdrawn"

    def test_the_waiting_wisp_killed_does_not_run(self, harness, world: World, serve, ns) -> None:
        """The `wisp hook` process waiting for an answer is killed (SIGKILL): the command
        does not run (Claude Code, Codex and Gemini CLI run a call whose hook is killed: the
        printed command is wisp's guard, which answers the deny; OpenCode's is wisp's plugin,
        which throws)."""
        session = Session(harness, world, serve, ns)
        request = world.filed()
        os.kill(request["server"]["pid"], signal.SIGKILL)
        session.finish()
        assert not session.marker.exists()

    def test_a_standing_grant_runs_without_a_request(
        self, harness, world: World, serve, ns
    ) -> None:
        """Approved `--scope always` once; a second session's identical command runs at once,
        without a request filed."""
        first = Session(harness, world, serve, ns)
        request = world.filed()
        code, said = world.answer("approvals", "approve", request["id"], "--scope", "always")
        assert code == 0, said
        first.finish()
        assert first.marker.exists()
        first.marker.unlink()
        before = {r["id"] for r in world.requests()}
        second = Session(harness, world, serve, ns)
        second.finish()
        assert second.marker.exists()
        assert {r["id"] for r in world.requests()} == before
