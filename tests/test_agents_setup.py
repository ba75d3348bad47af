"""`wisp agents setup|remove|status` (wisp.agents.setup, wisp.cli.agents): wisp's block in
each harness's own config file, in a scratch home, real files, the real `wisp` command: the
run's out-of-tree install (tests/outoftree.py), as a person installs it for everyday use (the
clone's editable one is refused: an agent working in the clone could rewrite it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from wisp.agents import setup, setuprecord
from wisp.agents.gatecheck import Check
from wisp.agents.install import Install

OTHER_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/audit"}]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out_of_tree_wisp: Path) -> Path:
    """A scratch user home (HOME), with $WISP_HOME under it, the out-of-tree `wisp` on PATH
    (with the system's) and no harness."""
    user = tmp_path / "u"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("WISP_HOME", str(user / ".wisp"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setenv("PATH", f"{out_of_tree_wisp.parent}:/usr/bin:/bin")
    return user


def _wisp(*args: str) -> tuple[int, str, str]:
    """`wisp ARGS` as the person runs it: the `wisp` on PATH (the out-of-tree one)."""
    done = subprocess.run(
        ["wisp", *args], capture_output=True, text=True, env=dict(os.environ), timeout=60
    )
    return done.returncode, done.stdout, done.stderr


def _on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str, says: str) -> None:
    """A stand-in *program* on PATH, whose `--version` *says*."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / program
    fake.write_text(f"#!/bin/sh\necho {says}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def _backups(path: Path) -> list[Path]:
    """The backups setup keeps of *path* (under $WISP_HOME/agents/backups)."""
    return setuprecord.backups_of(Path(os.environ["WISP_HOME"]), path)


class TestSetupClaudeCode:
    def test_merges_beside_the_persons_settings(self, home: Path) -> None:
        """The person's settings and hooks stay; wisp's hook, sandbox and deny rules join
        them; the old file is kept as a backup; the new one is 0600."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        mine = {
            "model": "opus",
            "hooks": {"PreToolUse": [OTHER_HOOK]},
            "permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(ls:*)"]},
        }
        path.write_text(json.dumps(mine))
        code, out, err = _wisp("agents", "setup", "claude-code")
        assert code == 0, err
        data = json.loads(path.read_text())
        assert data["model"] == "opus"
        assert data["hooks"]["PreToolUse"][0] == OTHER_HOOK
        assert "hook claude-code" in data["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
        assert data["permissions"]["allow"] == ["Bash(ls:*)"]
        assert data["permissions"]["deny"][:3] == [
            "Read(./.env)",
            "Edit(~/.wisp/**)",
            "Write(~/.wisp/**)",
        ]
        assert "Write(~/.claude/settings.json)" in data["permissions"]["deny"]
        assert data["sandbox"]["failIfUnavailable"] is True
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        [backup] = _backups(path)
        assert json.loads(backup.read_text()) == mine
        assert "+++ " + str(path) in out

    def test_a_second_run_changes_nothing(self, home: Path) -> None:
        """Idempotent: the second setup says so and leaves the file and backups alone."""
        assert _wisp("agents", "setup", "claude-code")[0] == 0
        path = home / ".claude" / "settings.json"
        before = path.read_bytes()
        code, out, _ = _wisp("agents", "setup", "claude-code")
        assert code == 0
        assert "nothing to change" in out
        assert path.read_bytes() == before
        assert _backups(path) == []  # the first run had no file to back up

    def test_dry_run_prints_the_diff_and_writes_nothing(self, home: Path) -> None:
        """--dry-run: the diff of the real file it would change; no file appears."""
        code, out, _ = _wisp("agents", "setup", "claude-code", "--dry-run")
        assert code == 0
        assert f"+++ {home / '.claude' / 'settings.json'}" in out
        assert '+  "sandbox": {' in out
        assert not (home / ".claude").exists()

    def test_project_level(self, home: Path, tmp_path: Path) -> None:
        """--project DIR writes DIR/.claude/settings.json, not the user's."""
        project = tmp_path / "proj"
        project.mkdir()
        assert _wisp("agents", "setup", "claude-code", "--project", str(project))[0] == 0
        assert (project / ".claude" / "settings.json").is_file()
        assert not (home / ".claude").exists()

    def test_a_broken_file_is_refused_and_kept(self, home: Path) -> None:
        """Unreadable JSON: exit 1, what to do, the file untouched, no backup."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        path.write_text("{not json")
        code, _, err = _wisp("agents", "setup", "claude-code")
        assert code == 1
        assert "fix it" in err and "Nothing was written" in err
        assert path.read_text() == "{not json"
        assert _backups(path) == []

    def test_a_symlinked_file_is_refused(self, home: Path, tmp_path: Path) -> None:
        """A settings file that is a symlink (a dotfiles checkout) is not replaced."""
        real = tmp_path / "dotfiles.json"
        real.write_text("{}")
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").symlink_to(real)
        code, _, err = _wisp("agents", "setup", "claude-code")
        assert code == 1
        assert "symbolic link" in err
        assert real.read_text() == "{}"

    def test_a_value_it_cannot_merge_into_is_refused(self, home: Path) -> None:
        """`hooks.PreToolUse` that is not a list, or a `sandbox` that is not a table: exit 1,
        which key and what to do; the file untouched."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        for text, key in (
            ('{"hooks": {"PreToolUse": "x"}}', "hooks.PreToolUse"),
            ('{"sandbox": true}', "sandbox"),
        ):
            path.write_text(text)
            code, _, err = _wisp("agents", "setup", "claude-code")
            assert code == 1
            assert f"`{key}`" in err and "run again" in err
            assert path.read_text() == text
            assert _backups(path) == []

    def test_a_file_it_cannot_write_is_refused(
        self, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A settings folder that cannot be made (under /proc, where not even root may):
        exit 1, what happened and what to do; nothing left behind."""
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/proc/wisp-cannot-be-here")
        code, _, err = _wisp("agents", "setup", "claude-code")
        assert code == 1
        assert "could not be written" in err and "run again" in err
        assert not Path("/proc/wisp-cannot-be-here").exists()

    def test_an_unknown_harness_is_refused(self, home: Path) -> None:
        """A harness wisp cannot set up: a usage error, exit 2 (docs/cli.md), the ones it
        can named."""
        code, _, err = _wisp("agents", "setup", "vim")
        assert code == 2
        assert "claude-code" in err and "codex" in err

    def test_the_persons_loosening_is_reported(self, home: Path) -> None:
        """excludedCommands stays (the person's), and setup says it leaves the home open."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"sandbox": {"excludedCommands": ["git"]}}))
        code, out, _ = _wisp("agents", "setup", "claude-code")
        assert code == 0
        assert "unprotected" in out and "excludedCommands" in out
        assert json.loads(path.read_text())["sandbox"]["excludedCommands"] == ["git"]


class TestRemove:
    def test_takes_out_only_wisps(self, home: Path) -> None:
        """Remove leaves the person's hook and deny rule, and takes wisp's out."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        path.write_text(
            json.dumps({"hooks": {"PreToolUse": [OTHER_HOOK]}, "permissions": {"deny": ["X"]}})
        )
        assert _wisp("agents", "setup", "claude-code")[0] == 0
        code, out, _ = _wisp("agents", "remove", "claude-code")
        assert code == 0
        data = json.loads(path.read_text())
        assert data["hooks"] == {"PreToolUse": [OTHER_HOOK]}
        assert data["permissions"]["deny"] == ["X"]
        assert len(_backups(path)) >= 1
        assert "-" in out

    def test_copilots_file_is_wisps_alone(self, home: Path) -> None:
        """Copilot CLI: setup writes ~/.copilot/hooks/wisp.json; remove deletes it."""
        path = home / ".copilot" / "hooks" / "wisp.json"
        assert _wisp("agents", "setup", "copilot")[0] == 0
        data = json.loads(path.read_text())
        assert data["hooks"]["preToolUse"][0]["timeoutSec"] == 600
        code, out, _ = _wisp("agents", "remove", "copilot")
        assert code == 0
        assert not path.exists()
        assert "+++ /dev/null" in out

    def test_copilots_file_with_other_hooks_is_refused(self, home: Path) -> None:
        """A ~/.copilot/hooks/wisp.json holding someone else's hook is neither overwritten
        by setup nor deleted by remove."""
        path = home / ".copilot" / "hooks" / "wisp.json"
        path.parent.mkdir(parents=True)
        other = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "audit"}]}}
        path.write_text(json.dumps(other))
        for verb in ("setup", "remove"):
            code, _, err = _wisp("agents", verb, "copilot")
            assert code == 1, verb
            assert "Nothing was written" in err
            assert json.loads(path.read_text()) == other

    def test_nothing_to_remove(self, home: Path) -> None:
        """No file: remove says there is nothing to change and writes nothing."""
        code, out, _ = _wisp("agents", "remove", "gemini")
        assert code == 0
        assert "nothing to change" in out
        assert not (home / ".gemini").exists()


class TestSetupGemini:
    def test_timeout_in_milliseconds_and_unprotected(self, home: Path) -> None:
        """Gemini CLI's hook timeout is written in ms; setup says the harness is unprotected."""
        code, out, _ = _wisp("agents", "setup", "gemini")
        assert code == 0
        data = json.loads((home / ".gemini" / "settings.json").read_text())
        assert data["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] == 600_000
        assert "unprotected" in out


class TestSetupWait:
    def test_wait_and_on_timeout_are_written_for_unattended_runs(self, home: Path) -> None:
        """`--wait 30 --on-timeout deny`: the hook command carries them and the harness's
        timeout is just above the wait (Gemini's in ms), as --print-settings prints them; the
        control: without them, the defaults (590 s, ask; a 600 s timeout)."""
        claude = home / ".claude" / "settings.json"
        code, _, err = _wisp("agents", "setup", "claude-code")
        assert code == 0, err
        (hook,) = json.loads(claude.read_text())["hooks"]["PreToolUse"][0]["hooks"]
        assert hook["timeout"] == 600 and "--wait" not in hook["command"]
        code, _, err = _wisp(
            "agents", "setup", "claude-code", "--wait", "30", "--on-timeout", "deny"
        )
        assert code == 0, err
        (hook,) = json.loads(claude.read_text())["hooks"]["PreToolUse"][0]["hooks"]
        assert hook["timeout"] == 40, hook
        assert hook["command"].endswith("hook claude-code --wait 30 --on-timeout deny"), hook
        code, _, err = _wisp("agents", "setup", "gemini", "--wait", "30")
        assert code == 0, err
        data = json.loads((home / ".gemini" / "settings.json").read_text())
        (hook,) = data["hooks"]["BeforeTool"][0]["hooks"]
        assert hook["timeout"] == 40_000 and hook["command"].endswith("hook gemini --wait 30")
        code, _, err = _wisp("agents", "setup", "gemini", "--wait", "-1")
        assert code == 2 and "--wait" in err, err


class TestSetupCodex:
    def test_keeps_comments_and_sets_the_sandbox(self, home: Path) -> None:
        """config.toml keeps the person's comments and tables; wisp's hook and
        `sandbox_mode = "workspace-write"` join; without codex on PATH, setup says the
        trust is not written and names the way out."""
        path = home / ".codex" / "config.toml"
        path.parent.mkdir()
        path.write_text('# mine\nmodel = "o3"\n\n[tui]\ntheme = "dark" # dark\n')
        code, out, err = _wisp("agents", "setup", "codex")
        assert code == 0, err
        text = path.read_text()
        assert "# mine" in text and "# dark" in text
        config = tomllib.loads(text)
        assert config["sandbox_mode"] == "workspace-write"
        assert config["tui"] == {"theme": "dark"}
        assert "hook codex" in config["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        assert "--dangerously-bypass-hook-trust" in out

    def test_a_protecting_mode_is_kept(self, home: Path) -> None:
        """A person's `read-only` stays read-only."""
        path = home / ".codex" / "config.toml"
        path.parent.mkdir()
        path.write_text('sandbox_mode = "read-only"\n')
        assert _wisp("agents", "setup", "codex")[0] == 0
        assert tomllib.loads(path.read_text())["sandbox_mode"] == "read-only"

    def test_remove_restores_the_persons_config(self, home: Path) -> None:
        """Remove takes wisp's hook out (and the sandbox mode setup set: the file comes back
        as it was, tests/test_agents_roundtrip.py)."""
        path = home / ".codex" / "config.toml"
        path.parent.mkdir()
        path.write_text('model = "o3"\n')
        assert _wisp("agents", "setup", "codex")[0] == 0
        assert _wisp("agents", "remove", "codex")[0] == 0
        config = tomllib.loads(path.read_text())
        assert "hooks" not in config
        assert config["model"] == "o3"

    def test_project_level_is_refused(self, home: Path, tmp_path: Path) -> None:
        """Codex is set up at the user level only: --project is refused with what to do."""
        code, _, err = _wisp("agents", "setup", "codex", "--project", str(tmp_path))
        assert code == 1
        assert "without --project" in err


class TestStatus:
    def test_nothing_on_path(self, home: Path) -> None:
        """No harness on PATH: an empty JSON list, exit 0."""
        code, out, _ = _wisp("agents", "status", "--json")
        assert code == 0
        assert json.loads(out) == []

    def test_a_gate_set_up_for_a_harness_not_on_path(self, home: Path) -> None:
        """`claude` not on PATH, wisp's hook set up in its settings: status checks the gate
        all the same, says what it could not check (the version) and why; the JSON lists it
        (`onPath` false); exit 0 (gated, fail-closed, protected). Removed: nothing listed."""
        code, out, _ = _wisp("agents", "status", "--json")
        assert code == 0 and json.loads(out) == []
        assert _wisp("agents", "setup", "claude-code")[0] == 0
        code, out, _ = _wisp("agents", "status")
        settings = home / ".claude" / "settings.json"
        assert "Claude Code (claude-code): `claude` not on PATH, so its version not checked" in out
        assert f"gate: PreToolUse in {settings}, timeout 600 s, fail-closed (wisp's guard)" in out
        code, out, _ = _wisp("agents", "status", "--json")
        [entry] = json.loads(out)
        assert entry["harness"] == "claude-code" and entry["onPath"] is False, entry
        assert entry["notChecked"] == [{"check": "version", "why": "`claude` is not on PATH"}]
        assert {h["event"] for h in entry["hooks"]} == {"PreToolUse", "SessionEnd"}
        for hook in entry["hooks"]:
            assert hook["failClosed"] and hook["works"] and hook["thisWisp"], hook
            assert set(hook["checked"]) == {c.value for c in Check}, hook
        assert code == (0 if entry["protected"] else 1), entry["unprotected"]
        assert _wisp("agents", "remove", "claude-code")[0] == 0
        assert json.loads(_wisp("agents", "status", "--json")[1]) == []

    def test_what_was_not_checked_reads_as_words(self, home: Path) -> None:
        """Codex set up but not on PATH: status says its version and its skipped hooks were
        not checked, in words (`--json` names the checks `version` and `skipped`)."""
        assert _wisp("agents", "setup", "codex")[0] == 0
        _code, out, _ = _wisp("agents", "status")
        assert "so its version and skipped hooks (Codex's trust" in out, out
        _code, out, _ = _wisp("agents", "status", "--json")
        [entry] = json.loads(out)
        assert [c["check"] for c in entry["notChecked"]] == ["version", "skipped"]

    def test_a_fifo_for_a_config_file_is_refused_not_waited_on(self, home: Path) -> None:
        """A FIFO at Claude Code's settings path (nobody writing to it): status passes it over
        at once, exit 0; setup refuses it, saying it is not a regular file, exit 1."""
        (home / ".claude").mkdir()
        os.mkfifo(home / ".claude" / "settings.json")
        code, out, _ = _wisp("agents", "status")
        assert code == 0 and "No agent harness wisp knows is on PATH" in out
        code, _, err = _wisp("agents", "setup", "claude-code")
        assert code == 1 and "is not a regular file" in err

    def test_a_harness_on_path(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A `gemini` on PATH: its version; gate installed, timeout in s, fail-closed;
        unprotected, so exit 1."""
        _on_path(tmp_path, monkeypatch, "gemini", "0.61.0")
        assert _wisp("agents", "setup", "gemini")[0] == 0
        code, out, _ = _wisp("agents", "status", "--json")
        assert code == 1
        [entry] = json.loads(out)
        assert entry["harness"] == "gemini"
        assert entry["version"] == "0.61.0"
        assert entry["installed"] is True
        [hook] = entry["hooks"]
        assert hook["timeout"] == 600 and hook["failClosed"] is True
        assert entry["protected"] is False

    def test_run_in_home_the_user_config_is_read_once(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Run in $HOME, where the project's config is the user's (`~/.gemini/settings.json`),
        status reads it once: one gate, not two. The control: run elsewhere, the same."""
        _on_path(tmp_path, monkeypatch, "gemini", "0.61.0")
        assert _wisp("agents", "setup", "gemini")[0] == 0
        for cwd in (tmp_path, home):
            done = subprocess.run(
                ["wisp", "agents", "status", "--json"],
                capture_output=True, text=True, cwd=cwd, timeout=60, env=dict(os.environ),
            )  # fmt: skip
            [entry] = json.loads(done.stdout)
            assert len(entry["hooks"]) == 1, (cwd, entry["hooks"])

    def test_the_doctor_has_the_section(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`wisp doctor --json` carries the same findings under `agents`; wisp's hook
        installed in an unprotected harness needs attention (exit 1)."""
        _on_path(tmp_path, monkeypatch, "copilot", "1.0.102")
        assert _wisp("agents", "setup", "copilot")[0] == 0
        code, out, _ = _wisp("doctor", "--json")
        [entry] = json.loads(out)["agents"]
        assert entry["harness"] == "copilot" and entry["installed"] is True
        assert code == 1


class TestCodexTrustKeys:
    def test_remove_moves_the_trust_of_the_persons_later_hook(self, home: Path) -> None:
        """Codex keys a hook's trust by its place: with wisp's group (0) taken out, the
        person's hook moves from group 1 to 0 and its trust entry follows it; wisp's goes."""
        path = home / ".codex" / "config.toml"
        path.parent.mkdir()
        wisp_cmd = "/bin/sh /x/wisp/agents/hookguard.sh 2 '{}' -- /x/bin/wisp hook codex"
        path.write_text(
            f"""# keep me
[[hooks.PreToolUse]]
matcher = ".*"
[[hooks.PreToolUse.hooks]]
type = "command"
command = {json.dumps(wisp_cmd)}
timeout = 600

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "/usr/bin/audit"

[hooks.state."{path}:pre_tool_use:0:0"]
trusted_hash = "sha256:wisp"

[hooks.state."{path}:pre_tool_use:1:0"]
trusted_hash = "sha256:mine"
"""
        )
        code, _, err = _wisp("agents", "remove", "codex")
        assert code == 0, err
        text = path.read_text()
        assert "# keep me" in text
        config = tomllib.loads(text)
        [group] = config["hooks"]["PreToolUse"]
        assert group["hooks"][0]["command"] == "/usr/bin/audit"
        assert config["hooks"]["state"] == {
            f"{path}:pre_tool_use:0:0": {"trusted_hash": "sha256:mine"}
        }

    def test_whitespace_only_settings_are_an_empty_file(self, home: Path) -> None:
        """A settings file holding only whitespace is set up as an empty one."""
        path = home / ".gemini" / "settings.json"
        path.parent.mkdir()
        path.write_text("  \n")
        assert _wisp("agents", "setup", "gemini")[0] == 0
        assert "BeforeTool" in json.loads(path.read_text())["hooks"]


class TestSetupCursor:
    def test_merges_into_hooks_json_beside_the_persons_hooks(self, home: Path) -> None:
        """Cursor's hooks.json keeps the person's own hooks; wisp's join each of its three
        events, fail-closed; a second run changes nothing; remove takes out wisp's alone."""
        path = home / ".cursor" / "hooks.json"
        path.parent.mkdir()
        theirs = {"command": "./audit.sh"}
        path.write_text(json.dumps({"version": 1, "hooks": {"beforeShellExecution": [theirs]}}))
        code, out, err = _wisp("agents", "setup", "cursor")
        assert code == 0, err
        data = json.loads(path.read_text())
        shell = data["hooks"]["beforeShellExecution"]
        assert shell[0] == theirs and "hook cursor" in shell[1]["command"]
        assert shell[1]["failClosed"] is True
        assert {"beforeMCPExecution", "preToolUse"} <= set(data["hooks"])
        written = path.read_text()
        code, out, _ = _wisp("agents", "setup", "cursor")
        assert code == 0 and path.read_text() == written and "nothing to change" in out
        code, _, err = _wisp("agents", "remove", "cursor")
        assert code == 0, err
        assert json.loads(path.read_text())["hooks"] == {"beforeShellExecution": [theirs]}


class TestSetupOpenCode:
    def test_writes_its_plugin_and_takes_it_out_again(self, home: Path) -> None:
        """The plugin lands in OpenCode's config plugin folder, 0600, running this wisp; a
        second run changes nothing; remove deletes it."""
        path = home / ".config" / "opencode" / "plugin" / "wisp.js"
        code, out, err = _wisp("agents", "setup", "opencode", "--dry-run")
        assert code == 0 and not path.exists(), err
        assert "+++ " + str(path) in out
        code, _, err = _wisp("agents", "setup", "opencode")
        assert code == 0, err
        text = path.read_text()
        assert text.startswith(setup.PLUGIN_MARK) and "tool.execute.before" in text
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        code, out, _ = _wisp("agents", "setup", "opencode")
        assert code == 0 and path.read_text() == text
        code, _, err = _wisp("agents", "remove", "opencode")
        assert code == 0 and not path.exists(), err

    def test_the_plugin_runs_wisp_hook_opencode(self, home: Path) -> None:
        """The plugin's command is `wisp hook opencode` (not bare `wisp`, which answers no
        event): run as the plugin runs it, it answers an OpenCode event in OpenCode's shape."""
        path = home / ".config" / "opencode" / "plugin" / "wisp.js"
        assert _wisp("agents", "setup", "opencode")[0] == 0
        found = re.search(r"^const WISP = (.*)$", path.read_text(), re.MULTILINE)
        assert found is not None
        argv = json.loads(found.group(1))
        assert argv[-2:] == ["hook", "opencode"], argv
        event = {"hook_event_name": "tool.execute.before", "cwd": str(home), "input": {}}
        done = subprocess.run(
            argv, input=json.dumps(event), capture_output=True, text=True, timeout=60
        )
        answer = json.loads(done.stdout)
        assert answer["decision"] == "deny" and "`input` and `output`" in answer["reason"], done

    def test_a_plugin_of_someone_elses_there_is_left_alone(self, home: Path) -> None:
        """A file that is not wisp's plugin in its place is refused (exit 1), unchanged."""
        path = home / ".config" / "opencode" / "plugin" / "wisp.js"
        path.parent.mkdir(parents=True)
        path.write_text("export const Mine = async () => ({})\n")
        code, _, err = _wisp("agents", "setup", "opencode")
        assert code == 1 and "not wisp's plugin" in err, err
        assert path.read_text() == "export const Mine = async () => ({})\n"

    def test_status_says_it_is_gated_and_fails_closed(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With OpenCode on PATH and the plugin set up, status names it installed and
        fail-closed (the plugin denies when wisp cannot answer), and unprotected."""
        _on_path(tmp_path, monkeypatch, "opencode", "1.18.33")
        assert _wisp("agents", "setup", "opencode")[0] == 0
        _code, out, err = _wisp("agents", "status", "--json")
        (entry,) = [e for e in json.loads(out) if e["harness"] == "opencode"]
        assert entry["installed"] is True and entry["version"] == "1.18.33", err
        assert all(h["failClosed"] for h in entry["hooks"]) and not entry["protected"]


class TestSetupQwen:
    def test_timeout_in_milliseconds_guarded_and_fail_closed(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Qwen Code's hook lands in ~/.qwen/settings.json beside the person's settings, its
        timeout in ms above the wait, its command wisp's guard; status: installed,
        fail-closed, unprotected (its sandbox turns hooks off); remove leaves theirs."""
        _on_path(tmp_path, monkeypatch, "qwen", "0.24.4")
        path = home / ".qwen" / "settings.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"model": {"name": "qwen3-coder-plus"}}))
        code, out, err = _wisp("agents", "setup", "qwen")
        assert code == 0 and "unprotected" in out, err
        data = json.loads(path.read_text())
        assert data["model"] == {"name": "qwen3-coder-plus"}
        (group,) = data["hooks"]["PreToolUse"]
        (hook,) = group["hooks"]
        assert hook["timeout"] == 600_000 and "hookguard.sh" in hook["command"]
        _code, out, err = _wisp("agents", "status", "--json")
        (entry,) = [e for e in json.loads(out) if e["harness"] == "qwen"]
        assert entry["installed"] and entry["version"] == "0.24.4", err
        assert all(h["failClosed"] and h["timeout"] == 600 for h in entry["hooks"]), entry
        assert entry["skipped"] == [] and not entry["protected"]
        assert _wisp("agents", "remove", "qwen")[0] == 0
        assert json.loads(path.read_text()) == {"model": {"name": "qwen3-coder-plus"}}

    def test_status_names_what_turns_its_hooks_off(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`disableAllHooks`, or Qwen Code's own shell sandbox (which runs no hook), beside
        wisp's hook: status says it is skipped, and why. The control: set up alone, nothing
        is skipped."""
        _on_path(tmp_path, monkeypatch, "qwen", "0.24.4")
        assert _wisp("agents", "setup", "qwen")[0] == 0
        assert _entry("qwen")["skipped"] == []
        path = home / ".qwen" / "settings.json"
        data = json.loads(path.read_text())
        sandbox = {"filesystem": "workspace-write", "network": "closed"}
        path.write_text(json.dumps(data | {"disableAllHooks": True, "tools": {
            "executionSandbox": sandbox}}))  # fmt: skip
        skipped = _entry("qwen")["skipped"]
        assert any("disableAllHooks" in s for s in skipped), skipped
        assert any("executionSandbox" in s for s in skipped), skipped

    def test_a_projects_hook_is_skipped_only_with_folder_trust_on(
        self,
        home: Path,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Set up with --project: with Qwen Code's folder trust off (its default) the project's
        hook is not skipped; turned on in the user's settings, status says it is skipped
        unless the folder is trusted."""
        _on_path(tmp_path, monkeypatch, "qwen", "0.24.4")
        project = tmp_path / "project"
        project.mkdir()
        code, _, err = _wisp("agents", "setup", "qwen", "--project", str(project))
        assert code == 0, err
        monkeypatch.chdir(project)
        assert _entry("qwen")["skipped"] == []
        user = home / ".qwen" / "settings.json"
        user.parent.mkdir(exist_ok=True)
        user.write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
        (said,) = _entry("qwen")["skipped"]
        assert said.startswith(str(project / ".qwen" / "settings.json")) and "trusted" in said


class TestSetupKilo:
    def test_writes_its_plugin_and_takes_it_out_again(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Kilo Code's plugin lands in its config plugin folder (~/.config/kilo/plugin), 0600,
        running `wisp hook kilo`; status: installed and fail-closed (the plugin denies when
        wisp cannot answer); remove deletes it."""
        _on_path(tmp_path, monkeypatch, "kilo", "7.7.7")
        path = home / ".config" / "kilo" / "plugin" / "wisp.js"
        code, _, err = _wisp("agents", "setup", "kilo")
        assert code == 0, err
        text = path.read_text()
        assert text.startswith("// wisp's Kilo Code plugin") and "tool.execute.before" in text
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        found = re.search(r"^const WISP = (.*)$", text, re.MULTILINE)
        assert found is not None and json.loads(found.group(1))[-2:] == ["hook", "kilo"]
        entry = _entry("kilo")
        assert entry["installed"] and entry["version"] == "7.7.7"
        assert all(h["failClosed"] and h["works"] for h in entry["hooks"]), entry
        code, _, err = _wisp("agents", "remove", "kilo")
        assert code == 0 and not path.exists(), err

    def test_an_opencode_plugin_of_wisps_there_is_not_taken_for_kilos(self, home: Path) -> None:
        """A file in Kilo Code's place that is wisp's OpenCode plugin (or anyone else's) is
        refused, unchanged; the control: the folder empty, setup writes Kilo Code's."""
        from wisp.agents import opencode

        path = home / ".config" / "kilo" / "plugin" / "wisp.js"
        path.parent.mkdir(parents=True)
        theirs = opencode.plugin(["wisp", "hook", "opencode"])
        path.write_text(theirs)
        code, _, err = _wisp("agents", "setup", "kilo")
        assert code == 1 and "not wisp's plugin" in err, err
        assert path.read_text() == theirs
        path.unlink()
        assert _wisp("agents", "setup", "kilo")[0] == 0 and path.exists()


class TestSetupCrush:
    def test_a_flat_entry_in_seconds_guarded_beside_the_persons(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Crush's hook lands in ~/.config/crush/crush.json as a flat PreToolUse entry beside
        the person's own, its timeout in seconds above the wait, its command wisp's guard;
        status: installed, fail-closed; remove leaves theirs."""
        _on_path(tmp_path, monkeypatch, "crush", "0.96.1")
        path = home / ".config" / "crush" / "crush.json"
        path.parent.mkdir(parents=True)
        theirs = {"matcher": "^bash$", "command": "./hooks/no-rm-rf.sh"}
        path.write_text(json.dumps({"hooks": {"PreToolUse": [theirs]}}))
        code, out, err = _wisp("agents", "setup", "crush")
        assert code == 0 and "unprotected" in out, err
        first, wisps = json.loads(path.read_text())["hooks"]["PreToolUse"]
        assert first == theirs and wisps["timeout"] == 600
        assert "hookguard.sh" in wisps["command"] and wisps["command"].endswith("hook crush")
        entry = _entry("crush")
        assert entry["installed"] and entry["version"] == "0.96.1"
        assert all(h["failClosed"] and h["timeout"] == 600 for h in entry["hooks"]), entry
        assert _wisp("agents", "remove", "crush")[0] == 0
        assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [theirs]}}


class TestSetupCline:
    def test_writes_its_hook_file_and_takes_it_out_again(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Cline's hook lands as ~/.cline/hooks/PreToolUse, 0600, execing wisp's guard around
        `wisp hook cline`; status: installed, fail-closed (by the guard), working; remove
        deletes it."""
        _on_path(tmp_path, monkeypatch, "cline", "3.0.65")
        path = home / ".cline" / "hooks" / "PreToolUse"
        code, out, err = _wisp("agents", "setup", "cline")
        assert code == 0 and "unprotected" in out, err
        text = path.read_text()
        assert text.startswith("#!/bin/sh\n# wisp's Cline hook") and "hookguard.sh" in text
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        entry = _entry("cline")
        assert entry["installed"] and entry["version"] == "3.0.65"
        assert all(h["failClosed"] and h["works"] for h in entry["hooks"]), entry
        code, _, err = _wisp("agents", "remove", "cline")
        assert code == 0 and not path.exists(), err

    def test_a_hook_of_someone_elses_there_is_left_alone(self, home: Path) -> None:
        """A PreToolUse file that is not wisp's is refused, unchanged; the control: once it is
        moved away, setup writes wisp's."""
        path = home / ".cline" / "hooks" / "PreToolUse"
        path.parent.mkdir(parents=True)
        path.write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
        code, _, err = _wisp("agents", "setup", "cline")
        assert code == 1 and "not wisp's" in err, err
        assert path.read_text() == "#!/bin/sh\necho '{\"cancel\": false}'\n"
        path.unlink()
        assert _wisp("agents", "setup", "cline")[0] == 0 and path.exists()

    def test_a_projects_hook_goes_in_clinerules(self, home: Path, tmp_path: Path) -> None:
        """--project: the file is the project's .clinerules/hooks/PreToolUse."""
        project = tmp_path / "project"
        project.mkdir()
        code, _, err = _wisp("agents", "setup", "cline", "--project", str(project))
        assert code == 0, err
        assert (project / ".clinerules" / "hooks" / "PreToolUse").read_text().startswith("#!")


class TestSetupDroid:
    def test_top_level_hooks_beside_the_persons_and_taken_out_again(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Factory Droid's hook lands in ~/.factory/hooks.json as a `PreToolUse` group at the
        file's top level beside the person's own, its command wisp's guard, its timeout in
        seconds; status: installed, fail-closed; remove leaves theirs."""
        _on_path(tmp_path, monkeypatch, "droid", "0.215.0")
        path = home / ".factory" / "hooks.json"
        path.parent.mkdir(parents=True)
        theirs = {"matcher": "Execute", "hooks": [{"type": "command", "command": "/bin/true"}]}
        path.write_text(json.dumps({"PreToolUse": [theirs]}))
        code, out, err = _wisp("agents", "setup", "droid")
        assert code == 0 and "unprotected" in out, err
        data = json.loads(path.read_text())
        assert set(data) == {"PreToolUse"}, data
        first, wisps = data["PreToolUse"]
        assert first == theirs and wisps["hooks"][0]["timeout"] == 600
        assert "hookguard.sh" in wisps["hooks"][0]["command"]
        entry = _entry("droid")
        assert entry["installed"] and entry["version"] == "0.215.0"
        assert all(h["failClosed"] and h["timeout"] == 600 for h in entry["hooks"]), entry
        assert _wisp("agents", "remove", "droid")[0] == 0
        assert json.loads(path.read_text()) == {"PreToolUse": [theirs]}


class TestSetupPi:
    def test_writes_its_extension_and_takes_it_out_again(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """pi's extension lands in ~/.pi/agent/extensions/wisp.js, 0600, running `wisp hook
        pi`; status: installed, fail-closed (the extension blocks unless wisp allows),
        working; remove deletes it."""
        _on_path(tmp_path, monkeypatch, "pi", "1.6.0")
        path = home / ".pi" / "agent" / "extensions" / "wisp.js"
        code, _, err = _wisp("agents", "setup", "pi")
        assert code == 0, err
        text = path.read_text()
        assert text.startswith("// wisp's pi extension") and "tool_call" in text
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        entry = _entry("pi")
        assert entry["installed"] and entry["version"] == "1.6.0"
        assert all(h["failClosed"] and h["works"] for h in entry["hooks"]), entry
        code, _, err = _wisp("agents", "remove", "pi")
        assert code == 0 and not path.exists(), err

    def test_an_extension_of_someone_elses_there_is_left_alone(self, home: Path) -> None:
        """A wisp.js there that is not wisp's is refused, unchanged; the control: once it is
        moved away, setup writes wisp's."""
        path = home / ".pi" / "agent" / "extensions" / "wisp.js"
        path.parent.mkdir(parents=True)
        path.write_text("export default function (pi) {}\n")
        code, _, err = _wisp("agents", "setup", "pi")
        assert code == 1 and "not wisp's" in err, err
        assert path.read_text() == "export default function (pi) {}\n"
        path.unlink()
        assert _wisp("agents", "setup", "pi")[0] == 0 and path.exists()


@pytest.fixture
def outside(out_of_tree_wisp: Path) -> Iterator[Path]:
    """A scratch directory of this test's own beside the run's out-of-tree install: in no
    working tree and no temporary directory (tmp_path is under /tmp)."""
    path = out_of_tree_wisp.parents[2] / "scratch" / uuid.uuid4().hex
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _install_in(folder: Path) -> Install:
    """An install of wisp laid out in *folder* as pip lays one out (program, venv, package
    folders, guard), for setup to plan with."""
    venv = folder / "venv"
    package = venv / "lib" / "python3.11" / "site-packages" / "wisp"
    return Install(
        argv=(str(venv / "bin" / "wisp"),),
        paths=(
            venv / "bin" / "wisp",
            venv,
            package,
            package.parent / "pending",
            package / "agents" / "hookguard.sh",
        ),
    )


class TestSetupRefusesAWispInReach:
    def test_the_clones_editable_wisp_is_refused(self, home: Path) -> None:
        """The clone's editable install (its `.venv`, its `wisp/` folder: the README's
        quickstart) lies in the clone's working tree: setup exits 1, says why and how to
        install wisp (pipx), writes nothing. The same setup by the out-of-tree wisp writes."""
        if not os.path.lexists(ROOT / ".git"):
            pytest.skip(f"{ROOT} is not a git working tree (an unpacked archive)")
        settings = home / ".claude" / "settings.json"
        code, out, err = _wisp("agents", "setup", "claude-code", "--dry-run")
        assert code == 0 and f"+++ {settings}" in out, err
        done = subprocess.run(
            [sys.executable, "-m", "wisp", "agents", "setup", "claude-code"],
            capture_output=True, text=True, timeout=60, cwd=home,
        )  # fmt: skip
        assert done.returncode == 1, done
        assert f"in the working tree of {ROOT} (it holds .git)" in done.stderr
        assert "pipx install" in done.stderr and "Nothing was written" in done.stderr
        assert not (home / ".claude").exists()
        assert _wisp("agents", "setup", "claude-code")[0] == 0
        assert settings.is_file()

    def test_in_a_projects_working_tree(self, home: Path, outside: Path) -> None:
        """An install inside a project (a folder holding `.git`, `.hg` or `.jj`) is refused,
        naming the tree; the same install with no project around it is planned."""
        assert setup.plan_setup("gemini", install=_install_in(outside)).after
        for mark in (".git", ".hg", ".jj"):
            project = outside / mark.strip(".")
            (project / mark).mkdir(parents=True)
            with pytest.raises(setup.SetupRefused) as refused:
                setup.plan_setup("gemini", install=_install_in(project))
            said = str(refused.value)
            assert f"in the working tree of {project} (it holds {mark})" in said
            assert "pipx install /path/to/clone" in said
        assert not (home / ".gemini").exists()

    def test_in_the_project_being_set_up(self, home: Path, outside: Path) -> None:
        """`--project DIR` with the install inside DIR (no `.git` there) is refused: the
        project's agent works in DIR; the same install set up for another project is not."""
        project, other = outside / "shop", outside / "other"
        project.mkdir()
        other.mkdir()
        install = _install_in(project)
        assert setup.plan_setup("gemini", other, install=install).after
        with pytest.raises(setup.SetupRefused, match=r"\(the project being set up\)"):
            setup.plan_setup("gemini", project, install=install)

    def test_under_tmp(self, home: Path, tmp_path: Path, outside: Path) -> None:
        """An install under /tmp (any harness: Codex's sandbox writes it) is refused; the
        same layout out of it is planned."""
        assert setup.plan_setup("codex", install=_install_in(outside)).after
        for name in (t.name for t in setup.harnesses()):
            with pytest.raises(setup.SetupRefused, match=r"under /tmp \(a temporary directory\)"):
                setup.plan_setup(name, install=_install_in(tmp_path))

    def test_under_tmpdir(self, home: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An install under $TMPDIR is refused; with TMPDIR elsewhere, the same is planned."""
        install = _install_in(outside / "t")
        assert setup.plan_setup("copilot", install=install).after
        monkeypatch.setenv("TMPDIR", str(outside))
        with pytest.raises(setup.SetupRefused, match=r"\$TMPDIR, a temporary directory"):
            setup.plan_setup("copilot", install=install)

    def test_under_a_writable_root_of_the_harness(self, home: Path, outside: Path) -> None:
        """Codex's `writable_roots` and Claude Code's `allowWrite` holding the install are
        refused for that harness; a root elsewhere is not."""
        install = _install_in(outside / "tools")
        codex_config = home / ".codex" / "config.toml"
        codex_config.parent.mkdir()
        claude_settings = home / ".claude" / "settings.json"
        claude_settings.parent.mkdir()
        for root in (outside / "elsewhere", outside):
            codex_config.write_text(f"[sandbox_workspace_write]\nwritable_roots = ['{root}']\n")
            allow = {"sandbox": {"filesystem": {"allowWrite": ["/" + str(root)]}}}
            claude_settings.write_text(json.dumps(allow))
            if root != outside:
                assert setup.plan_setup("codex", install=install).after
                assert setup.plan_setup("claude-code", install=install).after
                continue
            with pytest.raises(setup.SetupRefused, match="a writable root of Codex's sandbox"):
                setup.plan_setup("codex", install=install)
            with pytest.raises(setup.SetupRefused, match=r"sandbox\.filesystem\.allowWrite"):
                setup.plan_setup("claude-code", install=install)


def _status(*args: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = _wisp("agents", "status", "--json", *args)
    assert "Traceback" not in err and "Errno" not in err, err
    return code, json.loads(out)


def _entry(name: str) -> dict[str, Any]:
    return next(e for e in _status()[1] if e["harness"] == name)


def _respelled(path: Path, old: Path, new: Path) -> None:
    """Every mention of *old* in the config at *path* written as *new* instead."""
    path.write_text(path.read_text().replace(str(old), str(new)))


class TestStatusTellsTheTruth:
    def test_a_gate_whose_wisp_lies_in_a_working_tree_is_unprotected(
        self, home: Path, outside: Path, out_of_tree_wisp: Path
    ) -> None:
        """The same install named through a project's `.venv` (a link into it: the
        quickstart's layout, as the config spells it) makes status say UNPROTECTED, naming
        the tree; named where it lies, no reason of the kind."""
        venv = out_of_tree_wisp.parents[1]
        assert _wisp("agents", "setup", "claude-code")[0] == 0
        entry = _entry("claude-code")
        assert not any("within the agent's reach" in u for u in entry["unprotected"]), entry
        assert all(h["reach"] == [] and h["works"] for h in entry["hooks"])
        project = outside / "shop"
        (project / ".git").mkdir(parents=True)
        (project / ".venv").symlink_to(venv)
        _respelled(home / ".claude" / "settings.json", venv, project / ".venv")
        code, listed = _status()
        [entry] = listed
        assert code == 1 and entry["protected"] is False
        [why] = [u for u in entry["unprotected"] if "within the agent's reach" in u]
        assert f"in the working tree of {project} (it holds .git)" in why
        assert all(h["works"] and h["failClosed"] for h in entry["hooks"]), entry
        out = _wisp("agents", "status")[1]
        assert "protection: UNPROTECTED" in out and str(project / ".venv" / "bin" / "wisp") in out

    def test_wisp_home_under_tmp_with_codex(
        self, home: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Codex's workspace-write writes /tmp: with $WISP_HOME under it, status says
        UNPROTECTED and why; `exclude_slash_tmp` or a home elsewhere takes that reason away."""
        assert str(home).startswith("/tmp/")  # tmp_path, where the fixture puts $WISP_HOME
        assert _wisp("agents", "setup", "codex")[0] == 0
        config = home / ".codex" / "config.toml"
        under_tmp = [u for u in _entry("codex")["unprotected"] if "lies under /tmp" in u]
        assert len(under_tmp) == 1 and "exclude_slash_tmp" in under_tmp[0], under_tmp
        config.write_text(
            config.read_text() + "\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n"
        )
        assert not [u for u in _entry("codex")["unprotected"] if "lies under /tmp" in u]
        config.write_text(config.read_text().replace("exclude_slash_tmp = true", ""))
        monkeypatch.setenv("WISP_HOME", str(outside / ".wisp"))
        assert not [u for u in _entry("codex")["unprotected"] if "/tmp" in u]
        monkeypatch.setenv("TMPDIR", str(outside))
        [why] = [u for u in _entry("codex")["unprotected"] if "$TMPDIR" in u]
        assert "exclude_tmpdir_env_var" in why

    def test_a_deleted_wisp_and_guard(
        self, home: Path, outside: Path, out_of_tree_wisp: Path
    ) -> None:
        """The install a gate names moved away (the clone deleted): not fail-closed (the
        guard is gone: `/bin/sh` exits 127, and the call runs), the wisp does not run, each
        said with what to do; exit 1, in status and in the doctor. With only the wisp gone,
        the guard still denies: fail-closed, but broken. As set up: fail-closed, working."""
        venv = out_of_tree_wisp.parents[1]
        assert _wisp("agents", "setup", "gemini")[0] == 0
        settings = home / ".gemini" / "settings.json"
        [hook] = _entry("gemini")["hooks"]
        assert hook["failClosed"] and hook["works"] and hook["problems"] == [], hook
        gone = outside / "gone"
        _respelled(settings, venv, gone)
        code, [entry] = _status()
        [hook] = entry["hooks"]
        assert code == 1 and not hook["failClosed"] and not hook["works"], hook
        assert {"check": "wispRuns", "why": "it does not exist"} in hook["notChecked"]
        said = " | ".join(entry["problems"])
        assert f"the hook names {gone / 'bin' / 'wisp'}, which does not exist" in said
        assert "hookguard.sh, which does not exist" in said and "run setup again" in said
        out = _wisp("agents", "status")[1]
        assert "NOT fail-closed (its guard is missing)" in out and "BROKEN" in out
        code, out, _ = _wisp("doctor", "--json")  # the doctor too
        [found] = json.loads(out)["agents"]
        assert code == 1 and found["hooks"][0]["failClosed"] is False, found
        shutil.copytree(venv, gone, symlinks=True)
        (gone / "bin" / "wisp").unlink()
        [hook] = _entry("gemini")["hooks"]
        assert hook["failClosed"] and not hook["works"], hook
        assert any("its guard denies every call" in p for p in hook["problems"])

    def test_a_gate_set_up_by_another_wisp(
        self, home: Path, outside: Path, out_of_tree_wisp: Path
    ) -> None:
        """A gate naming a wisp that runs but is not the one asking (another copy of the
        install): status names it, and the gate still counts as working."""
        venv = out_of_tree_wisp.parents[1]
        assert _wisp("agents", "setup", "gemini")[0] == 0
        assert _entry("gemini")["hooks"][0]["thisWisp"] is True
        other = outside / "other"
        other.mkdir()
        (other / "bin").mkdir()
        shutil.copy2(out_of_tree_wisp, other / "bin" / "wisp")  # its own file, the same venv
        _respelled(
            home / ".gemini" / "settings.json", venv / "bin" / "wisp", other / "bin" / "wisp"
        )
        [hook] = _entry("gemini")["hooks"]
        assert hook["works"] is True and hook["thisWisp"] is False, hook
        assert hook["setUpBy"] == str(other / "bin" / "wisp")
        assert f"set up by another wisp: {other / 'bin' / 'wisp'}" in _wisp("agents", "status")[1]

    def test_the_opencode_plugins_argv_is_read(self, home: Path, out_of_tree_wisp: Path) -> None:
        """The plugin's `const WISP = [...]` is read: set up, it runs this wisp's `hook
        opencode` (checked: it runs, it is this install); a plugin whose argv runs bare
        `wisp` (every call refused, nothing filed) is a problem, exit 1, though its first line
        is wisp's."""
        path = home / ".config" / "opencode" / "plugin" / "wisp.js"
        assert _wisp("agents", "setup", "opencode")[0] == 0
        [hook] = _entry("opencode")["hooks"]
        assert hook["wisp"] == str(out_of_tree_wisp) and hook["works"] and hook["thisWisp"]
        assert hook["problems"] == [] and hook["failClosed"] is True
        text = path.read_text()
        argv = json.dumps([str(out_of_tree_wisp), "hook", "opencode"])
        assert f"const WISP = {argv}\n" in text
        path.write_text(text.replace(argv, json.dumps([str(out_of_tree_wisp)])))
        code, [entry] = _status()
        assert code == 1 and entry["installed"] is True
        assert "cannot be read as wisp's" in " ".join(entry["problems"]), entry

    def test_a_closed_stdout_ends_it_quietly(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`wisp agents status | head -c1`: the reader gone, status ends with nothing said
        on stderr; read whole, it says more, and no errno either (a `codex app-server` that
        closes its stdin at once is said in words: Codex's trust could not be asked)."""
        for program in ("gemini", "opencode"):
            _on_path(tmp_path, monkeypatch, program, "1.0")
        codex = tmp_path / "bin" / "codex"
        codex.write_text("#!/bin/sh\nexec 0<&-\necho 0.171.0\n")
        codex.chmod(0o755)
        assert _wisp("agents", "setup", "codex")[0] == 0
        code, out, err = _wisp("agents", "status")
        assert code == 1 and "Errno" not in out + err, out + err
        assert "could not ask Codex whether it trusts wisp's hook" in out
        done = subprocess.run(
            ["sh", "-c", "wisp agents status | head -c1"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert len(done.stdout) == 1 and done.stderr == "", done
