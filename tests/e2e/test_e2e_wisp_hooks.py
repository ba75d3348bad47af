"""wisp's own wait ending, in each real harness (headless, against the fake model server):
nobody answers within `wisp hook`'s `--wait`, the request is withdrawn and the call denied.

Setup writes the default wait (590 s) and takes no other, so this one case is run with the
hook as `wisp hook HARNESS --print-settings --wait 3` prints it (in wisp's guard; for
OpenCode, wisp's plugin): the same command setup installs but for the wait. Every other case
(approve, deny with a reason, the waiting hook killed, the harness giving up on it, an
`always` grant) runs with the harness as `wisp agents setup` leaves it:
test_e2e_as_set_up.py. Claude Code, Codex and Gemini CLI RUN a call whose hook fails or is
killed (HARNESSES.md): a marker where none should be is wisp failing open."""

from __future__ import annotations

import json
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


def _opencode(ns, home, cwd, url, plugin, wisp_home, pin):
    return harnesses.start_opencode(ns, home, cwd, url, "", wisp_home, plugin=plugin, pin=pin)


def _claude(ns, home, cwd, url, hooks, wisp_home, pin):
    return harnesses.start_claude_code(ns, home, cwd, url, hooks, wisp_home, pin=pin)


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

    def __init__(
        self, harness: Harness, pin: harnesses.Pin, world: World, serve, ns, wait: int = 60
    ) -> None:
        installed(pin)
        self.marker = world.cwd / "marker"
        self.command = f"touch {self.marker}"
        self.model: FakeModel = serve([harness.shell(self.command)])
        printed = world.wisp(
            "hook", harness.name, "--print-settings", "--wait", str(wait), *harness.printed_with
        )
        assert printed.returncode == 0, printed.stderr
        hook, more = harness.installs(printed.stdout)
        self.process = harness.start(
            ns, world.home, world.cwd, self.model.url, hook, world.wisp_home, pin=pin, **more
        )

    def finish(self) -> None:
        done = harnesses.finish(self.process, timeout=WAIT_S + 60)
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])

    def told(self) -> str:
        """What the model was told of its call (the tool's result, as JSON text)."""
        later = self.model.after_tools()
        assert later, "the model was not asked again after the tool call"
        return later[-1].results()


# Each harness at each pinned version (install.sh).
PINNED = [(h, pin) for h in HARNESSES for pin in harnesses.versions(h.name)]


@pytest.mark.parametrize(("harness", "pin"), PINNED, ids=[pin.id for _, pin in PINNED])
class TestWispHook:
    def test_nobody_answers_does_not_run(self, harness, pin, world: World, serve, ns) -> None:
        """Nobody answers within the hook's --wait: the request is withdrawn, the call is
        denied, and the model is told why and how to grant it."""
        session = Session(harness, pin, world, serve, ns, wait=3)
        request = world.filed()
        session.finish()
        assert not session.marker.exists()
        told = session.told()
        assert "nobody answered" in told
        assert ("--scope always" in told) == harness.hints_a_grant
        ended = {r["id"]: r for r in world.requests()}[request["id"]]
        assert ended["outcome"] == "withdrawn"
