"""Refusals that say what a person would do: another user's directory is never "chown 0"d;
root with `$HOME` at another user's home makes no root-owned `.wisp` there; `wisp facts
request` on a damaged store exits 2, as documented. Real processes; giving a directory
away needs root (skipped, saying why, elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import run_wisp

STRANGER_UID = 65534  # nobody


def given_away(path: Path) -> Path:
    path.mkdir(mode=0o700)
    try:
        os.chown(path, STRANGER_UID, STRANGER_UID)
    except PermissionError as exc:
        pytest.skip(f"missing capability: cannot give a directory to uid {STRANGER_UID}: {exc}")
    return path


class TestAnotherUsersDirectory:
    def test_root_is_not_told_to_take_it(self, tmp_path: Path) -> None:
        """WISP_HOME owned by another user, run as root: exit 2, the fix is to run as its
        owner or use a directory of one's own, never `chown 0`."""
        if os.getuid() != 0:
            pytest.skip("missing capability: root, to meet a directory as root meets it")
        theirs = given_away(tmp_path / "theirs")
        done = run_wisp("pending", env={"WISP_HOME": str(theirs)})
        assert done.returncode == 2, done.stderr
        assert "chown 0" not in done.stderr, done.stderr
        assert f"sudo -u '#{STRANGER_UID}'" in done.stderr, done.stderr

    def test_root_makes_no_wisp_in_another_users_home(self, tmp_path: Path) -> None:
        """No WISP_HOME and $HOME at another user's home: exit 2 saying why and what to do
        (run as them, or `sudo -H`), and no `.wisp` is made there: not by the channel's
        commands, nor by those that write or read the person's stores (config, grants,
        facts)."""
        theirs = given_away(tmp_path / "ana")
        env = {k: v for k, v in os.environ.items() if k != "WISP_HOME"}
        for args in (
            ("pending",),
            ("approvals", "request", "--timeout", "1", "--", "ls"),
            ("config", "set", "notifications.perMinute", "30"),  # a tightening: no terminal
        ):
            done = run_wisp(*args, env={**env, "HOME": str(theirs), "WISP_HOME": ""})
            assert done.returncode == 2, (args, done.stderr)
            assert "another user's home" in done.stderr and "sudo -H" in done.stderr, args
            assert not (theirs / ".wisp").exists(), args
        # What only reads the stores finds none there, and makes none either.
        for args in (("approvals", "revoke", "g1234"), ("facts", "list"), ("approvals", "grants")):
            done = run_wisp(*args, env={**env, "HOME": str(theirs), "WISP_HOME": ""})
            assert "Traceback" not in done.stderr, (args, done.stderr)
            assert not (theirs / ".wisp").exists(), args


class TestADamagedFactsStore:
    def test_facts_request_exits_2(self, home: Path) -> None:
        """`wisp facts request` with facts.json damaged: exit 2 (the store cannot be used),
        saying so; nothing is filed."""
        assert run_wisp("pending").returncode == 0
        store = home / "facts.json"
        store.write_text('{"format": 1, "facts": [')
        os.chmod(store, 0o600)
        done = run_wisp("facts", "request", "shop", "db", "postgres")
        assert done.returncode == 2, done.stderr
        assert "damaged" in done.stderr and "Nothing was filed" in done.stderr, done.stderr
        assert [n for n in os.listdir(home / "pending") if not n.startswith(".")] == []
