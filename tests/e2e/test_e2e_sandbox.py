"""The wall: with the harness's own sandbox on and `$WISP_HOME` out of its reach (the
settings `wisp agents setup` writes, docs/agents.md), a shell command the agent runs cannot
answer a waiting request by any route — an answer file written into the channel, `wisp
approvals approve` under a pseudo-terminal, the grant store edited — even when the hook lets
it through (the person approved it). Claude Code in the worst layout: the agent works in
$HOME, and $WISP_HOME is ~/.wisp (denied by name); Codex in `workspace-write`, which writes
only the working directory and the temporary ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import harnesses
import pytest
from fakemodel import Call
from world import WAIT_S, WISP, World, installed, wait_for

# What `wisp agents setup claude-code` writes beside wisp's hook, for a home at ~/.wisp
# (wisp.agents.sandbox.claude_code_block).
SANDBOX = {
    "sandbox": {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {"denyWrite": ["~/.wisp", "~/.claude/settings.json", "./.claude"]},
    },
    "permissions": {
        "deny": [
            "Edit(~/.wisp/**)",
            "Write(~/.wisp/**)",
            "Edit(~/.claude/settings.json)",
            "Write(~/.claude/settings.json)",
            "Edit(./.claude/**)",
            "Write(./.claude/**)",
        ]
    },
}


def set_up(world: World, harness: str, path: Path) -> str:
    """`wisp agents setup HARNESS` as the person runs it, in the world's home (with the
    harness on PATH: Codex's trust is asked of it); the text of the file it wrote."""
    where = installed(harness).parent
    done = subprocess.run(
        [str(WISP), "agents", "setup", harness],
        env={
            **os.environ,
            "HOME": str(world.home),
            "WISP_HOME": str(world.wisp_home),
            "CODEX_HOME": str(world.home / ".codex"),
            "PATH": f"{where}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        },
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "was not written" not in done.stdout, done.stdout  # Codex's trust
    return path.read_text()


def _attack(world: World, request_id: str) -> str:
    """One shell command trying each route to answer *request_id* for the person."""
    pending = world.wisp_home / "pending"
    approve = repr([str(WISP), "approvals", "approve", request_id])
    return "; ".join(
        [
            f"echo forged > {pending}/{request_id}.answer.json",
            f'python3 -c "import pty; pty.spawn({approve})"',
            f"echo '[]' > {world.wisp_home}/grants.json",
            # Claude Code's own settings, which would take the hook or the sandbox away from
            # the next session (the project's outrank the user's; its hooks run unsandboxed).
            "echo '{}' > $HOME/.claude/settings.json",
            "mkdir -p .claude; echo '{}' > .claude/settings.local.json",
            "echo tried",
        ]
    )


@pytest.fixture
def worst(tmp_path) -> World:
    """The agent works in $HOME; wisp's home is ~/.wisp."""
    home = tmp_path / "home"
    home.mkdir()
    return World(home, home, home / ".wisp")


class TestClaudeCodeSandbox:
    def test_an_approved_command_cannot_answer_for_the_person(
        self, worst: World, serve, ns
    ) -> None:
        """A waiting request stays waiting: the attack, approved by a fooled person, runs
        sandboxed, and every write into $WISP_HOME fails (Read-only file system)."""
        installed("claude-code")
        for program in ("bwrap", "socat"):
            if shutil.which(program) is None:
                pytest.skip(f"missing capability: {program} (Debian: bubblewrap, socat)")
        waiting = Waiting(worst)
        try:
            target = waiting.id
            model = serve([Call("Bash", {"command": _attack(worst, target), "description": "x"})])
            written: dict[str, Any] = json.loads(
                set_up(worst, "claude-code", worst.home / ".claude" / "settings.json")
            )
            assert {k: written[k] for k in SANDBOX} == SANDBOX
            process = harnesses.start_claude_code(
                ns,
                worst.home,
                worst.cwd,
                model.url,
                written.pop("hooks"),
                worst.wisp_home,
                settings=written,
            )
            own_settings = (worst.home / ".claude" / "settings.json").read_text()
            attack = wait_for(
                lambda: next(
                    (r for r in worst.requests() if r["state"] == "filed" and r["id"] != target),
                    None,
                ),
                WAIT_S,
                "the attack to be filed",
            )
            assert "wisp's own channel" in (attack["binding"]["reason"] or "")
            code, said = worst.answer("approvals", "approve", attack["id"])
            assert code == 0, said
            done = harnesses.finish(process, timeout=WAIT_S + 30)
            assert done.returncode == 0, (done.stdout, done.stderr)
            told = model.after_tools()[-1].text()
            assert "Read-only file system" in told, told
            waiting.still_waiting()
            assert (worst.home / ".claude" / "settings.json").read_text() == own_settings
            assert not (worst.cwd / ".claude" / "settings.local.json").exists()
        finally:
            waiting.stop()


DUMPHOOK = Path(__file__).resolve().parent / "dumphook.py"


class Waiting:
    """A `wisp approvals request` waiting for the person, in its own process."""

    def __init__(self, world: World) -> None:
        self.process = subprocess.Popen(
            [str(WISP), "approvals", "request", "--timeout", "300", "--", "make", "deploy"],
            env=harnesses.base_env(world.home, world.wisp_home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.world = world
        self.id = world.filed()["id"]

    def still_waiting(self) -> None:
        still = next(r for r in self.world.requests() if r["id"] == self.id)
        assert still["state"] == "filed", still
        assert not (self.world.wisp_home / "pending" / f"{self.id}.answer.json").exists()
        assert not (self.world.wisp_home / "grants.json").exists()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


def _codex_world(tmp_path: Path) -> World:
    """Codex working in ~/project, with $WISP_HOME at ~/.wisp."""
    installed("codex")
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    return World(home, home / "project", home / ".wisp")


class TestCodexSandbox:
    def test_workspace_write_keeps_an_allowed_command_out(self, tmp_path, serve, ns) -> None:
        """Codex in workspace-write, working in ~/project with $WISP_HOME at ~/.wisp: the
        attack, let through by its hook, writes nothing there and answers nothing."""
        world = _codex_world(tmp_path)
        waiting = Waiting(world)
        try:
            model = serve([Call("exec_command", {"cmd": _attack(world, waiting.id)})])
            hook = f"{sys.executable} {DUMPHOOK} {tmp_path / 'events.jsonl'} codex allow"
            process = harnesses.start_codex(
                ns,
                world.home,
                world.cwd,
                model.url,
                hook,
                world.wisp_home,
                sandbox_mode="workspace-write",
            )
            done = harnesses.finish(process, timeout=WAIT_S + 30)
            assert done.returncode == 0, (done.stdout, done.stderr)
            assert (tmp_path / "events.jsonl").exists(), "the hook never ran"
            told = model.after_tools()[-1].text()
            assert "tried" in told, told  # the command ran, sandboxed
            waiting.still_waiting()
        finally:
            waiting.stop()

    def test_set_up_by_wisp_the_hook_is_trusted_and_the_sandbox_holds(
        self, tmp_path, serve, ns
    ) -> None:
        """`wisp agents setup codex` over the person's config: `codex exec` (no trust bypass)
        runs wisp's hook, which files the attack; approved, it runs in the workspace-write
        sandbox setup turned on, and answers nothing."""
        world = _codex_world(tmp_path)
        waiting = Waiting(world)
        try:
            model = serve([Call("exec_command", {"cmd": _attack(world, waiting.id)})])
            harnesses.write_codex_config(world.home, model.url, "danger-full-access", None)
            config = set_up(world, "codex", world.home / ".codex" / "config.toml")
            assert 'sandbox_mode = "workspace-write"' in config
            assert "trusted_hash" in config
            process = harnesses.start_codex(
                ns, world.home, world.cwd, model.url, None, world.wisp_home, set_up=True
            )
            attack = wait_for(
                lambda: next(
                    (
                        r
                        for r in world.requests()
                        if r["state"] == "filed" and r["id"] != waiting.id
                    ),
                    None,
                ),
                WAIT_S,
                "the attack to be filed (wisp's hook, trusted)",
            )
            code, said = world.answer("approvals", "approve", attack["id"])
            assert code == 0, said
            done = harnesses.finish(process, timeout=WAIT_S + 30)
            assert done.returncode == 0, (done.stdout, done.stderr)
            told = model.after_tools()[-1].text()
            assert "tried" in told, told  # the command ran, sandboxed
            waiting.still_waiting()
        finally:
            waiting.stop()
