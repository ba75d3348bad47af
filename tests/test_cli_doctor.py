"""`wisp doctor` checks every store and setting wisp reads, the audit log and the free space,
and exits non-zero naming the fix when one is damaged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cliterm import WIDTHS, overflowing, run, unwrapped
from helpers import in_terminal, run_wisp, wisp_command
from isolation import native_watching_refusal, own_inotify_limit

from pending import Channel
from wisp._doctor import MIN_FREE_BYTES


def damage(home: Path, what: str) -> str:
    """Damage one thing the doctor checks; the name its check goes by."""
    Channel.open(home).close()
    if what == "config":
        (home / "config.json").write_text('{"approval": {"timeoutSeconds": "ten"}}')
    elif what == "facts":
        (home / "facts.json").write_text("{not json")
    elif what == "grants":
        (home / "grants.json").write_text('{"format": 1, "grants": [{"scope": "sometimes"}]}')
    elif what == "audit log":
        (home / "logs").mkdir(mode=0o700)
        (home / "logs" / "audit.jsonl").mkdir()  # a directory where the log should be
    for name in ("config.json", "facts.json", "grants.json"):
        if (home / name).exists():
            os.chmod(home / name, 0o600)
    return what


class TestDoctor:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_healthy(self, home: Path, cols: int) -> None:
        """Everything ok: exit 0, each check named with ok, every line within the width."""
        Channel.open(home).close()
        code, output = run("doctor", cols=cols)
        assert code == 0, output
        for check in ("config", "facts", "grants", "audit log", "disk"):
            assert any(line.startswith(check + " ") for line in output.split("\n")), check
        assert "NEEDS ATTENTION" not in output and ": ok" in output
        assert overflowing(output, cols) == []

    @pytest.mark.parametrize("what", ["config", "facts", "grants", "audit log"])
    def test_damaged_store_exits_1_with_the_fix(self, home: Path, what: str) -> None:
        """A damaged config.json, facts.json or grants.json, or an audit log that cannot be
        written: exit 1, that check not ok, its fix named; the rest still checked."""
        damage(home, what)
        out = run_wisp("doctor", "--json")
        assert out.returncode == 1, out.stdout + out.stderr
        findings = json.loads(out.stdout)
        checks = {c["check"]: c for c in findings["checks"]}
        assert findings["ok"] is False
        assert checks[what]["ok"] is False and checks[what]["fix"]
        assert [name for name, c in checks.items() if not c["ok"]] == [what]
        assert "Traceback" not in out.stderr

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_damaged_config_in_a_terminal(self, home: Path, cols: int) -> None:
        """For people: NEEDS ATTENTION and a `fix:` line naming the file."""
        damage(home, "config")
        code, output = run("doctor", cols=cols)
        flat = " ".join(output.split())
        assert code == 1
        assert "NEEDS ATTENTION" in flat and "fix: fix" in flat
        assert str(home / "config.json") in unwrapped(output)  # a long path may be folded
        assert overflowing(output, cols) == []


def _unshare() -> str | None:
    return shutil.which("unshare")


@pytest.mark.skipif(_unshare() is None, reason="unshare(1) is not installed")
class TestFullDisk:
    def test_a_full_filesystem_is_named(self, tmp_path: Path) -> None:
        """On a small tmpfs (mounted in a user namespace, so no root is needed), the doctor
        is content while there is room, and exits 1 naming the fix once it is full."""
        mount = tmp_path / "mnt"
        mount.mkdir()
        size = 2 * MIN_FREE_BYTES
        script = f"""
set -e
mount -t tmpfs -o size={size} tmpfs {mount}
export WISP_HOME={mount}/home
{sys.executable} -m wisp doctor --json > {tmp_path}/before.json || echo $? > {tmp_path}/before.rc
dd if=/dev/zero of={mount}/filler bs=65536 2>/dev/null || true
{sys.executable} -m wisp doctor --json > {tmp_path}/after.json || echo $? > {tmp_path}/after.rc
"""
        done = subprocess.run(
            ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0 and "mount" in done.stderr:
            pytest.skip(f"cannot mount a tmpfs in a user namespace here: {done.stderr.strip()}")
        assert done.returncode == 0, done.stderr
        before = json.loads((tmp_path / "before.json").read_text())
        disk = next(c for c in before["checks"] if c["check"] == "disk")
        assert disk["ok"] and not (tmp_path / "before.rc").exists()
        after = json.loads((tmp_path / "after.json").read_text())
        disk = next(c for c in after["checks"] if c["check"] == "disk")
        assert (tmp_path / "after.rc").read_text().strip() == "1"
        assert disk["ok"] is False and disk["freeBytes"] < MIN_FREE_BYTES
        assert "free some space" in disk["fix"]


class TestWatching:
    def test_names_inotify_where_it_can_be_had(self, home: Path, native_watching: None) -> None:
        """With an inotify instance free, the doctor names inotify and the kernel's limits."""
        doctor = json.loads(run_wisp("doctor", "--json").stdout)
        refusal = native_watching_refusal()
        if doctor["watching"]["backend"] != "inotify" and refusal is not None:
            pytest.skip(f"missing capability: native watching, taken meanwhile: {refusal}")
        assert doctor["watching"]["backend"] == "inotify"
        assert doctor["watching"]["limits"]["max_user_watches"] > 0

    def test_names_polling_where_inotify_is_used_up(self, home: Path) -> None:
        """With every inotify instance it may have taken, the doctor names polling and why.
        (In a user namespace of its own inotify limit: the suite's user keeps its instances.)"""
        code = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
while libc.inotify_init1(0) >= 0:  # inherited by the doctor, which so finds none left
    pass
os.execv(sys.executable, [sys.executable, "-m", "wisp", "doctor", "--json"])
"""
        done = subprocess.run(
            own_inotify_limit(sys.executable, "-c", code),
            capture_output=True,
            text=True,
            timeout=60,
        )
        watching = json.loads(done.stdout)["watching"]
        assert watching["backend"] == "polling", watching
        assert "falling back to polling" in watching["note"]
        assert "Traceback" not in done.stderr


class TestReach:
    """The doctor names the route a notification from its own process would take."""

    def run(self, home: Path, **env: str) -> dict[str, Any]:
        """`wisp doctor --json` with no terminal (its own session, as under `setsid`)."""
        done = subprocess.run(
            wisp_command("doctor", "--json"),
            capture_output=True,
            text=True,
            env={**os.environ, "TMUX": "", "DBUS_SESSION_BUS_ADDRESS": "", **env},
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        notification: dict[str, Any] = json.loads(done.stdout)["notification"]
        return notification

    def test_without_a_terminal_the_terminal_route_is_not_named(self, home: Path) -> None:
        """Under setsid, in Ghostty's environment: /dev/tty does not open, so the terminal
        route is skipped saying so; nothing else reaches the person, and the doctor warns
        with the command that fixes it."""
        found = self.run(home, TERM_PROGRAM="ghostty")
        assert found["route"] is None
        assert any(
            s.startswith("terminal: no terminal (/dev/tty does not open") for s in found["skipped"]
        )
        assert found["warning"].startswith("no route can reach you from here")
        assert found["fix"].endswith(
            "wisp config set notifications.push 'ntfy://A-TOPIC-ONLY-YOU-KNOW'"
        )

    def test_push_targets_are_named_redacted(self, home: Path) -> None:
        """With push URLs set, push is the route (after the routes here), its targets shown
        as scheme and host only; no warning."""
        url = "ntfy://127.0.0.1:9/s3cret-topic"
        assert in_terminal("config", "set", "notifications.push", url)[0] == 0
        found = self.run(home)
        assert found["route"] == "push" and found["warning"] is None
        assert found["push"] == {
            "targets": ["ntfy://127.0.0.1:9"],
            "when": "always",
            "usable": True,
        }
        _code, output = run("doctor", cols=80)
        assert "push: to ntfy://127.0.0.1:9" in output and "s3cret" not in output

    def test_notifications_off_is_a_warning_with_its_fix(self, home: Path) -> None:
        """notifications.enabled false: no route, a warning, and the command to turn them
        back on; the doctor still exits 0 (a warning, not a fault)."""
        assert in_terminal("config", "set", "notifications.enabled", "false")[0] == 0
        found = self.run(home, TERM_PROGRAM="ghostty")
        assert found["route"] is None and "notifications are off" in found["warning"]
        assert found["fix"] == "wisp config set notifications.enabled true"

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_the_warning_in_a_terminal(self, home: Path, cols: int) -> None:
        """For people: a `warning` line and its `fix:`, within the width."""
        code, output = run("doctor", cols=cols)
        flat = " ".join(output.split())
        if "no route would post" in flat:
            assert "warning no route can reach you from here" in flat and "fix: wisp" in flat
        assert code == 0 and overflowing(output, cols) == []
