"""Every harness as `wisp agents setup HARNESS` leaves it, at each pinned version (install.sh:
the floor, and npm's newest where that is another): a fresh HOME holding only the harness's
own settings for the fake model (no hook of the test's), `wisp agents setup` run as a person
runs it with the harness on PATH, then the real harness headless against the fake model server,
its model asking to run a shell command that leaves a marker in the project. What a person does
(or does not do) in another terminal decides whether it runs: approve, deny with a reason, an
`always` grant; the waiting hook killed; nobody answering. `wisp agents status --json` says the
gate is installed and fail-closed. Each test whose call must not run first shows, in the same
session, that the same setup lets a harmless call through: the model's first call is approved
from a terminal and runs; its second is the one denied, killed or left unanswered.

"Nobody answering" as set up: setup writes the hook's default wait (590 s, the harness's
timeout 600 s) unless told `--wait`. What ends an unanswered call before that is the harness
giving up on its hook at its timeout: it signals the command it started (wisp's guard) with
TERM. The tests send that TERM (OpenCode has no hook timeout: there it stands for anything
stopping the hook). The wait ending on wisp's own timer is shown set up with `--wait 8
--on-timeout deny`, as a person sets up unattended runs."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harnesses
import pytest
from fakemodel import Call, FakeModel
from world import WAIT_S, World, as_user, installed, next_filed, set_up


@dataclass(frozen=True)
class Harness:
    """How one harness is configured for the fake model before setup, and started after."""

    configure: Callable[[Path, str, harnesses.Pin], None]  # home, the model's URL, the pin
    start: Callable[..., harnesses.Popen]  # ns, home, cwd, url, wisp_home, pin
    shell: Callable[[str], Call]
    # Where a deny's reason is told, for a harness whose deny ends the run instead of
    # telling the model (Cline: its log, from home); None: the model's next request.
    stopped: Callable[[Path], str] | None = None


def _claude(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_claude_code(ns, home, cwd, url, None, wisp_home, pin=pin)


def _codex(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_codex(ns, home, cwd, url, None, wisp_home, set_up=True, pin=pin)


def _gemini(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_gemini(ns, home, cwd, url, None, wisp_home, pin=pin)


def _copilot(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_copilot(ns, home, cwd, url, None, wisp_home, pin=pin)


def _opencode(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_opencode(ns, home, cwd, url, "", wisp_home, set_up=True, pin=pin)


def _qwen(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_qwen(ns, home, cwd, url, wisp_home, pin=pin)


def _cline(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_cline(ns, home, cwd, url, wisp_home, pin=pin)


def _pi(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_pi(ns, home, cwd, url, wisp_home, pin=pin)


def _droid(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_droid(ns, home, cwd, url, wisp_home, pin=pin)


def _kilo(ns, home, cwd, url, wisp_home, pin):
    return harnesses.start_kilo(ns, home, cwd, url, wisp_home, pin=pin)


HARNESSES = {
    "claude-code": Harness(
        lambda home, url, pin: harnesses.configure_claude_code(home), _claude,
        lambda command: Call("Bash", {"command": command, "description": "leave a marker"}),
    ),
    "codex": Harness(
        lambda home, url, pin: harnesses.write_codex_config(home, url, "danger-full-access", None),
        _codex,
        lambda command: Call("exec_command", {"cmd": command}),
    ),
    "gemini": Harness(
        lambda home, url, pin: harnesses.configure_gemini(home), _gemini,
        lambda command: Call("run_shell_command", {"command": command, "description": "marker"}),
    ),
    "copilot": Harness(
        lambda home, url, pin: None, _copilot,
        lambda command: Call("bash", {"command": command, "description": "marker"}),
    ),
    "opencode": Harness(
        harnesses.configure_opencode, _opencode,
        lambda command: Call("bash", {"command": command, "description": "marker"}),
    ),
    "qwen": Harness(
        lambda home, url, pin: harnesses.configure_qwen(home), _qwen,
        lambda command: Call("run_shell_command", {"command": command, "description": "marker"}),
    ),
    "kilo": Harness(
        harnesses.configure_kilo, _kilo,
        lambda command: Call("bash", {"command": command, "description": "marker"}),
    ),
    "cline": Harness(
        harnesses.configure_cline, _cline,
        lambda command: Call("run_commands", {"commands": [command]}),
        stopped=harnesses.cline_stopped,
    ),
    "pi": Harness(
        harnesses.configure_pi, _pi,
        lambda command: Call("bash", {"command": command}),
    ),
    "droid": Harness(
        harnesses.configure_droid, _droid,
        lambda command: Call("Execute", {"summary": "marker", "command": command,
                                         "riskLevelReason": "one empty file", "riskLevel": "low"}),
    ),
}  # fmt: skip

PINS = [pin for pin in harnesses.every_pin() if pin.name in HARNESSES]


class SetUp:
    """One harness version in *world*, set up by `wisp agents setup` alone, its model (one
    server for every session of the test) asking for `touch MARKER`."""

    def __init__(
        self, pin: harnesses.Pin, world: World, serve, *options: str, control: bool = False
    ) -> None:
        installed(pin)
        self.pin = pin
        self.harness = HARNESSES[pin.name]
        self.world = world
        self.marker = world.cwd / "marker"
        self.command = f"touch {self.marker}"
        # The control: a harmless call first, approved, which runs in the same session.
        self.control = world.cwd / "control"
        calls = [self.harness.shell(self.command)]
        if control:
            calls.insert(0, self.harness.shell(f"touch {self.control}"))
        self.model: FakeModel = serve(calls)
        self.harness.configure(world.home, self.model.url, pin)
        set_up(world, pin, *options)

    def start(self, ns) -> harnesses.Popen:
        """One headless session."""
        w = self.world
        return self.harness.start(ns, w.home, w.cwd, self.model.url, w.wisp_home, self.pin)

    def after_the_control(self) -> dict[str, Any]:
        """The control's request approved from a terminal (the same setup lets a harmless
        call through), then the call under test, once it is filed."""
        first = self.world.filed()
        assert first["binding"]["command"] == f"touch {self.control}", first
        code, said = self.world.answer("approvals", "approve", first["id"])
        assert code == 0, said
        return next_filed(self.world, {first["id"]})

    def ran_the_control(self) -> None:
        assert self.control.exists(), self.told()

    def told(self) -> str:
        """What the model was told of its call (the tool's result, as JSON text); where the
        harness's deny ends its run (Cline), why it stopped."""
        if self.harness.stopped is not None:
            return self.harness.stopped(self.world.home)
        later = self.model.after_tools()
        assert later, "the model was not asked again after the tool call"
        return later[-1].results()


def _finish(process: harnesses.Popen) -> None:
    done = harnesses.finish(process, timeout=WAIT_S + 60)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])


def _hook_of(pid: int) -> int:
    """The process the harness started for the waiting `wisp hook` *pid*: its parent, wisp's
    guard, where there is one (OpenCode's plugin runs wisp itself)."""
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    argv = Path(f"/proc/{parent}/cmdline").read_bytes().split(b"\0")
    return parent if any(a.endswith(b"hookguard.sh") for a in argv) else pid


@pytest.mark.parametrize("pin", PINS, ids=lambda p: p.id)
class TestAsSetUp:
    def test_status_says_installed_and_fail_closed(self, pin, world: World, serve) -> None:
        """Before setup, status finds the harness (this version) with no gate; after, its gate
        installed, every hook fail-closed, none skipped."""
        installed(pin)
        before = _status(world, pin)
        assert pin.version in (before.get("version") or ""), before
        assert not before.get("installed"), before
        SetUp(pin, world, serve)
        after = _status(world, pin)
        assert after["installed"] is True, after
        assert after["hooks"] and all(h["failClosed"] for h in after["hooks"]), after
        assert after["skipped"] == [], after

    def test_approved_from_a_terminal_runs(self, pin, world: World, serve, ns) -> None:
        """The shell call is filed with the model's exact command; approved from a terminal,
        the harness runs it (for Claude Code and Codex, in the sandbox setup turned on)."""
        setup = SetUp(pin, world, serve)
        process = setup.start(ns)
        request = world.filed()
        assert request["kind"] == "command"
        assert request["binding"]["command"] == setup.command
        assert not setup.marker.exists()
        code, said = world.answer("approvals", "approve", request["id"])
        assert code == 0, said
        _finish(process)
        assert setup.marker.exists(), setup.told()

    def test_denied_with_a_reason_does_not_run(self, pin, world: World, serve, ns) -> None:
        """Denied with a reason: the command does not run, and the model's next request
        carries wisp's reason."""
        setup = SetUp(pin, world, serve, control=True)
        process = setup.start(ns)
        request = setup.after_the_control()
        code, said = world.answer("approvals", "deny", request["id"], "--reason", "not on a Friday")
        assert code == 0, said
        _finish(process)
        setup.ran_the_control()
        assert not setup.marker.exists()
        told = setup.told()
        assert "not on a Friday" in told
        assert request["id"] in told

    def test_the_waiting_wisp_killed_does_not_run(self, pin, world: World, serve, ns) -> None:
        """The `wisp hook` waiting for an answer is killed (SIGKILL): the guard setup
        installed answers the deny, and the command does not run."""
        setup = SetUp(pin, world, serve, control=True)
        process = setup.start(ns)
        request = setup.after_the_control()
        os.kill(request["server"]["pid"], signal.SIGKILL)
        _finish(process)
        setup.ran_the_control()
        assert not setup.marker.exists()

    def test_nobody_answering_does_not_run(self, pin, world: World, serve, ns) -> None:
        """Nobody answers, and the harness gives up on its hook (a TERM to the command it
        started, as at its timeout): the request is withdrawn, the call denied and not run."""
        setup = SetUp(pin, world, serve, control=True)
        process = setup.start(ns)
        request = setup.after_the_control()
        os.kill(_hook_of(request["server"]["pid"]), signal.SIGTERM)
        _finish(process)
        setup.ran_the_control()
        assert not setup.marker.exists()
        # wisp's reason, or (Copilot CLI: "hook exited with code 2") the harness's own words.
        assert "denied" in setup.told().lower(), setup.told()
        ended = {r["id"]: r for r in world.requests()}[request["id"]]
        assert ended["outcome"] == "withdrawn", ended

    def test_nobody_answering_within_setups_wait_does_not_run(
        self, pin, world: World, serve, ns
    ) -> None:
        """Set up for unattended runs (`wisp agents setup NAME --wait 8 --on-timeout deny`):
        after the control ran, nobody answers the call under test, wisp's own wait ends it:
        withdrawn, denied, not run, and the model told that nobody answered (and, where the
        harness cannot ask, how to grant it). (A git project, as a person's is: a write
        outside any project is asked every time and never granted, so no grant is hinted.)"""
        (world.cwd / ".git").mkdir()
        setup = SetUp(pin, world, serve, "--wait", "8", "--on-timeout", "deny", control=True)
        process = setup.start(ns)
        request = setup.after_the_control()
        _finish(process)
        setup.ran_the_control()
        assert not setup.marker.exists()
        told = setup.told()
        assert "nobody answered" in told, told
        assert ("--scope always" in told) == (pin.name != "claude-code"), told
        ended = {r["id"]: r for r in world.requests()}[request["id"]]
        assert ended["outcome"] == "withdrawn", ended

    def test_an_always_grant_runs_the_next_call_unasked(self, pin, world: World, serve, ns) -> None:
        """Approved `--scope always` once; a second session's identical command runs at once,
        without a request filed. (The project is a git project, as a person's is: a write
        outside any project is asked every time, and no grant is offered for it.)"""
        (world.cwd / ".git").mkdir()
        setup = SetUp(pin, world, serve)
        first = setup.start(ns)
        request = world.filed()
        code, said = world.answer("approvals", "approve", request["id"], "--scope", "always")
        assert code == 0, said
        _finish(first)
        assert setup.marker.exists(), setup.told()
        setup.marker.unlink()
        before = {r["id"] for r in world.requests()}
        _finish(setup.start(ns))
        assert setup.marker.exists(), setup.told()
        assert {r["id"] for r in world.requests()} == before


def _status(world: World, pin: harnesses.Pin) -> dict[str, Any]:
    """This harness's entry in `wisp agents status --json`, run with it on PATH."""
    done = as_user(world, pin, "agents", "status", "--json")
    assert done.returncode in (0, 1), done.stderr
    entries = {entry["harness"]: entry for entry in json.loads(done.stdout)}
    return entries.get(pin.name, {})


# Claude Code from this version on takes `onFailure: "block"` on a hook (setup writes it).
ON_FAILURE_SINCE = (2, 1, 295)


def _version(pin: harnesses.Pin) -> tuple[int, ...]:
    return tuple(int(part) for part in pin.version.split("."))


@pytest.mark.parametrize("pin", harnesses.versions("claude-code"), ids=lambda p: p.id)
class TestClaudeCodeHookKilled:
    def test_the_guard_and_wisp_killed_together(self, pin, world: World, serve, ns) -> None:
        """The guard and the `wisp hook` it runs both killed at once (stopped, then SIGKILL:
        neither can answer), which nothing of wisp's can cover: from 2.1.295 on, the
        `onFailure: "block"` setup writes beside the guard blocks the call; 2.1.197 ignores
        the key and runs it (docs/agents.md, "The guard")."""
        setup = SetUp(pin, world, serve)
        process = setup.start(ns)
        request = world.filed()
        wisp = request["server"]["pid"]
        guard = _hook_of(wisp)
        assert guard != wisp, "no guard around wisp"
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in (guard, wisp):
                os.kill(pid, sig)
        _finish(process)
        blocks = _version(pin) >= ON_FAILURE_SINCE
        assert setup.marker.exists() != blocks, setup.told()
        if blocks:
            assert "onFailure" in setup.told(), setup.told()
