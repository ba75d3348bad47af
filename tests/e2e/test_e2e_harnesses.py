"""Each real harness, headless and offline in a loopback-only namespace against the fake model
server, with a stand-in hook (dumphook.py) in its path: the hook receives the harness's event
for a shell call and a file write, a deny blocks both (and the model is told the hook's
reason), an allow lets both run, and a hook that fails (exit 1) is what the harness makes of
it. These pin what `wisp hook <harness>` will stand on (HARNESSES.md).

With WISP_E2E_FIXTURES=DIR set, the events received are written there as
DIR/<harness>/<tool>.json (how fixtures/agents/ was made)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harnesses
import pytest
from dumphook import REASON
from fakemodel import Call
from world import World, installed

DUMPHOOK = Path(__file__).resolve().parent / "dumphook.py"


@dataclass(frozen=True)
class Harness:
    """How to drive one harness here: its starter, its hook answer's shape, its two calls,
    and how its event names the tool."""

    name: str
    shape: str
    start: Callable[..., harnesses.Popen]
    shell: Callable[[Path], Call]
    write: Callable[[Path], Call]
    tool_of: Callable[[dict[str, Any]], str]
    on_exit_1: str  # "runs" or "blocks": what the harness does when its hook exits 1


def _claude(ns, home, cwd, url, hook, wisp_home, pin):
    return harnesses.start_claude_code(
        ns, home, cwd, url, harnesses.claude_code_hooks(hook), wisp_home, pin=pin
    )


def _qwen(ns, home, cwd, url, hook, wisp_home, pin):
    harnesses.configure_qwen(home, hook)
    return harnesses.start_qwen(ns, home, cwd, url, wisp_home, pin=pin)


def _kilo(ns, home, cwd, url, hook, wisp_home, pin):
    harnesses.configure_kilo(home, url, pin)
    return harnesses.start_kilo(ns, home, cwd, url, wisp_home, pin=pin, hook=hook)


PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {}\n+hello\n*** End Patch\nEOF\n"

HARNESSES = [
    Harness(
        "claude-code", "claude-code", _claude,
        lambda m: Call("Bash", {"command": f"touch {m}", "description": "leave a marker"}),
        lambda f: Call("Write", {"file_path": str(f), "content": "hello\n"}),
        lambda e: e["tool_name"], "runs",
    ),
    Harness(
        "codex", "codex", harnesses.start_codex,
        lambda m: Call("exec_command", {"cmd": f"touch {m}"}),
        lambda f: Call("exec_command", {"cmd": PATCH.format(f.name)}),
        lambda e: e["tool_name"], "runs",
    ),
    Harness(
        "gemini", "gemini", harnesses.start_gemini,
        lambda m: Call("run_shell_command", {"command": f"touch {m}", "description": "marker"}),
        lambda f: Call("write_file", {"file_path": str(f), "content": "hello\n"}),
        lambda e: e["tool_name"], "runs",
    ),
    Harness(
        "copilot", "copilot", harnesses.start_copilot,
        lambda m: Call("bash", {"command": f"touch {m}", "description": "marker"}),
        lambda f: Call("create", {"path": str(f), "file_text": "hello\n"}),
        lambda e: e["toolName"], "blocks",
    ),
    Harness(
        "opencode", "gemini", harnesses.start_opencode,
        lambda m: Call("bash", {"command": f"touch {m}", "description": "marker"}),
        lambda f: Call("write", {"filePath": str(f), "content": "hello\n"}),
        lambda e: e["input"]["tool"], "blocks",
    ),
    Harness(
        "qwen", "claude-code", _qwen,
        lambda m: Call("run_shell_command", {"command": f"touch {m}", "description": "marker"}),
        lambda f: Call("write_file", {"file_path": str(f), "content": "hello\n"}),
        lambda e: e["tool_name"], "runs",
    ),
    Harness(
        "kilo", "gemini", _kilo,
        lambda m: Call("bash", {"command": f"touch {m}", "description": "marker"}),
        lambda f: Call("write", {"filePath": str(f), "content": "hello\n"}),
        lambda e: e["input"]["tool"], "blocks",
    ),
]  # fmt: skip

EXPECTED_TOOLS = {
    "claude-code": ["Bash", "Write"],
    "codex": ["Bash", "Bash"],
    "gemini": ["run_shell_command", "write_file"],
    "copilot": ["bash", "create"],
    "opencode": ["bash", "write"],
    "qwen": ["run_shell_command", "write_file"],
    "kilo": ["bash", "write"],
}


class Run:
    """One headless run of *harness* whose model asks for a marker, then a file."""

    def __init__(
        self, harness: Harness, pin: harnesses.Pin, world: World, serve, ns, action: str
    ) -> None:
        installed(pin)
        self.harness = harness
        self.marker = world.cwd / "marker"
        self.file = world.cwd / "hello.txt"
        self.dump = world.home.parent / "events.jsonl"
        self.model = serve([harness.shell(self.marker), harness.write(self.file)])
        hook = f"{sys.executable} {DUMPHOOK} {self.dump} {harness.shape} {action}"
        process = harness.start(
            ns, world.home, world.cwd, self.model.url, hook, world.wisp_home, pin=pin
        )
        self.done = harnesses.finish(process, timeout=150)

    def events(self) -> list[dict[str, Any]]:
        lines = self.dump.read_text().splitlines() if self.dump.exists() else []
        return [json.loads(json.loads(line)["stdin"]) for line in lines]

    def tools(self) -> list[str]:
        return [self.harness.tool_of(event) for event in self.events()]

    def keep(self) -> None:
        """Write the events as fixtures, when WISP_E2E_FIXTURES says where."""
        where = os.environ.get("WISP_E2E_FIXTURES")
        if not where:
            return
        folder = Path(where) / self.harness.name
        folder.mkdir(parents=True, exist_ok=True)
        for kind, event in zip(("shell", "write"), self.events(), strict=False):
            (folder / f"{kind}.json").write_text(json.dumps(event, indent=2) + "\n")


# Each harness at each pinned version (install.sh).
PINNED = [(h, pin) for h in HARNESSES for pin in harnesses.versions(h.name)]


@pytest.mark.parametrize(("harness", "pin"), PINNED, ids=[pin.id for _, pin in PINNED])
class TestDumpHook:
    def test_a_deny_blocks_and_the_model_hears_why(self, harness, pin, world, serve, ns) -> None:
        """The hook receives the shell call and the write; denying both, neither runs, and
        the model's next request carries the hook's reason."""
        run = Run(harness, pin, world, serve, ns, "deny")
        assert run.done.returncode == 0, (run.done.stdout[-2000:], run.done.stderr[-2000:])
        assert run.tools() == EXPECTED_TOOLS[harness.name]
        assert not run.marker.exists()
        assert not run.file.exists()
        later = run.model.after_tools()
        assert later, "the model was not asked again after the calls"
        assert REASON in later[-1].text()
        run.keep()

    def test_an_allow_runs_both(self, harness, pin, world, serve, ns) -> None:
        """Allowed by the hook, the shell call and the write both run."""
        run = Run(harness, pin, world, serve, ns, "allow")
        assert run.done.returncode == 0, (run.done.stdout[-2000:], run.done.stderr[-2000:])
        assert run.tools() == EXPECTED_TOOLS[harness.name]
        assert run.marker.exists()
        assert run.file.read_text() == "hello\n"

    def test_a_hook_that_exits_1(self, harness, pin, world, serve, ns) -> None:
        """A hook that fails (exit 1, no answer): what the harness does, pinned. Where it
        runs the call, `wisp hook <harness>` must never fail with exit 1 (HARNESSES.md)."""
        run = Run(harness, pin, world, serve, ns, "exit1")
        assert run.events(), "the hook was not run"
        assert run.marker.exists() == (harness.on_exit_1 == "runs")
