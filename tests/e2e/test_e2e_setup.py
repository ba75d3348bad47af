"""`wisp agents setup` and `wisp agents status` against the real harness binaries: their
versions read, wisp's gate found where setup wrote it, Codex's trust of wisp's hook as the
real `codex app-server` judges it (trusted after setup; untrusted again once the definition
changes, until setup runs again)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import harnesses
import pytest
from world import WISP

HARNESSES = ("claude-code", "codex", "gemini", "copilot", "opencode")


def _wisp(home: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(WISP), *args],
        env={
            **os.environ,
            "HOME": str(home),
            "WISP_HOME": str(home / ".wisp"),
            "CODEX_HOME": str(home / ".codex"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "PATH": path,
        },
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        cwd=home / "project",
    )


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, str]:
    """A scratch home (working in ~/project) and a PATH with every installed harness."""
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    found = [harnesses.binary(name) for name in HARNESSES]
    dirs = [str(b.parent) for b in found if isinstance(b, Path)]
    if len(dirs) < len(HARNESSES):
        pytest.skip("; ".join(b for b in found if isinstance(b, str)))
    return home, ":".join([*dirs, os.environ.get("PATH", "/usr/bin:/bin")])


def _status(home: Path, path: str) -> dict[str, dict[str, Any]]:
    done = _wisp(home, path, "agents", "status", "--json")
    assert done.returncode in (0, 1), done.stderr
    return {entry["harness"]: entry for entry in json.loads(done.stdout)}


class TestSetupWithTheRealHarnesses:
    def test_status_before_and_after(self, place: tuple[Path, str]) -> None:
        """Before: each harness found with its pinned version, no gate. After setup: each
        gated, fail-closed, with the timeout written; Codex's hook trusted by Codex itself;
        Codex protected, Gemini, Copilot and OpenCode not."""
        home, path = place
        pins = harnesses.pins()
        before = _status(home, path)
        for name in HARNESSES:
            assert pins[name].version in (before[name]["version"] or ""), before[name]
            assert before[name]["installed"] is False
        for name in HARNESSES:
            done = _wisp(home, path, "agents", "setup", name)
            assert done.returncode == 0, (name, done.stdout, done.stderr)
        after = _status(home, path)
        for name in HARNESSES:
            entry = after[name]
            assert entry["installed"] is True, entry
            assert all(h["failClosed"] for h in entry["hooks"]), entry
            assert entry["skipped"] == [], entry
        assert after["codex"]["protected"] is True, after["codex"]
        assert after["gemini"]["protected"] is False
        assert after["copilot"]["protected"] is False
        assert after["opencode"]["protected"] is False
        assert {h["timeout"] for h in after["gemini"]["hooks"]} == {600}

    def test_a_changed_hook_is_untrusted_until_setup_runs_again(
        self, place: tuple[Path, str]
    ) -> None:
        """Codex's trust is of the hook's definition: edited by hand (a longer timeout), the
        real Codex no longer trusts it, status says it would be skipped; setup re-trusts it."""
        home, path = place
        assert _wisp(home, path, "agents", "setup", "codex").returncode == 0
        config = home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace("timeout = 600", "timeout = 601"))
        skipped = _status(home, path)["codex"]["skipped"]
        assert skipped and "skips it" in skipped[0], skipped
        again = _wisp(home, path, "agents", "setup", "codex")
        assert again.returncode == 0, again.stderr
        assert "timeout = 600" in config.read_text()
        assert _status(home, path)["codex"]["skipped"] == []
