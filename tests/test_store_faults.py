"""Faults of the person's facts store that a documented pre-check must meet: facts.json itself
immutable (`chattr +i`) refuses a keep before the answer is written (exit 2, nothing
written, the request still waits); a read-only filesystem still lists the facts (a read takes
no lock). Needs root (chattr, mount): skipped, saying why, elsewhere."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import in_terminal, run_wisp

from pending import Channel, State


def sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


def handed_over(home: Path, value: str) -> str:
    """A fact request whose asker has stopped: `wisp facts request` files it and returns."""
    done = run_wisp("facts", "request", "shop", f"note-{value}", value)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def immutable_store(home: Path) -> Iterator[Path]:
    """facts.json holding one kept fact, then made immutable (made mutable again after)."""
    kept = handed_over(home, "pg")
    code, out = in_terminal("facts", "keep", kept)
    assert code == 0, out
    store = home / "facts.json"
    chattr = sh("chattr", "+i", str(store))
    if chattr.returncode != 0:
        pytest.skip(f"missing capability: cannot make a file immutable: {chattr.stderr.strip()}")
    try:
        yield store
    finally:
        sh("chattr", "-i", str(store))


@pytest.fixture
def read_only_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """WISP_HOME on a small tmpfs of its own, holding one kept fact, remounted read-only."""
    mount = tmp_path / "ro"
    mount.mkdir()
    mounted = sh("mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount))
    if mounted.returncode != 0:
        pytest.skip(f"missing capability: cannot mount a tmpfs here: {mounted.stderr.strip()}")
    home = mount / "home"
    monkeypatch.setenv("WISP_HOME", str(home))
    try:
        kept = handed_over(home, "pg")
        code, out = in_terminal("facts", "keep", kept)
        assert code == 0, out
        remount = sh("mount", "-o", "remount,ro", str(mount))
        assert remount.returncode == 0, remount.stderr
        yield home
    finally:
        sh("umount", "-l", str(mount))


class TestAnImmutableFactsStore:
    def test_a_keep_is_refused_before_the_answer(self, home: Path, immutable_store: Path) -> None:
        """`wisp facts keep` with facts.json immutable: exit 2 naming the flag and the fix,
        no answer written, the request still handed over, the store as it was."""
        before = immutable_store.read_text()
        waiting = handed_over(home, "linux")
        code, out = in_terminal("facts", "keep", waiting)
        assert code == 2, out
        assert "chattr -i" in out and "nothing was written" in out, out
        assert "recorded" not in out, out
        assert not (home / "pending" / f"{waiting}.answer.json").exists()
        with Channel.open(home) as channel:
            assert channel.status(waiting).state is State.HANDED_OVER
        assert immutable_store.read_text() == before


class TestAReadOnlyFilesystem:
    def test_facts_list_reads_without_a_lock(self, read_only_home: Path) -> None:
        """`wisp facts list` on a read-only mount lists the kept fact (exit 0), as a read
        needs no lock file."""
        done = run_wisp("facts", "list", "--json")
        assert done.returncode == 0, done.stderr
        assert [f["value"] for f in json.loads(done.stdout)] == ["pg"]


class TestAnAskerThatCannotWrite:
    def test_json_says_what_failed(self, home: Path) -> None:
        """`wisp approvals request --json` with the channel immutable (its request cannot be
        published): exit 2 as before, and one JSON verdict on stdout saying what failed."""
        with Channel.open(home):
            pass
        pending = home / "pending"
        chattr = sh("chattr", "+i", str(pending))
        if chattr.returncode != 0:
            pytest.skip(f"missing capability: cannot make a directory immutable: {chattr.stderr}")
        try:
            done = run_wisp("approvals", "request", "--json", "--timeout", "5", "--", "ls")
        finally:
            sh("chattr", "-i", str(pending))
        assert done.returncode == 2, done.stderr
        verdict = json.loads(done.stdout)
        assert (verdict["approved"], verdict["outcome"]) == (False, "failed"), verdict
        assert "EPERM" in verdict["reason"] and "chattr -i" in verdict["reason"], verdict
        assert "Traceback" not in done.stderr
