"""The real thing: a 64 KiB tmpfs filled to the last block, remounted read-only, and made
immutable (`chattr +i`), with every command run as a person runs it.

Each ends with a message naming the path and what to do, its documented exit code (errors
2, timed out 124; listings 0, saying on stderr what the sweep could not write; a sweep
that could not write, 2) and no
traceback; nothing is half-written under a final name, and nothing is approved.

Needs root (mount, chattr); skipped with the reason elsewhere.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from figures import note
from helpers import AskingCommand, command, fact, in_terminal, run_wisp
from invariants import violations

from pending import Channel, State

TMPFS_SIZE = "64k"
# Neither asker's deadline may race the test. One outlasts every command the test runs (it is
# killed at the end), so an answer tried meanwhile always meets a live asker, however slow the
# machine; had it expired first, its exit would free its lock's space and the answering sweep
# would settle it `stale`.
OUTLASTS_THE_TEST_S = 300
# The other's passes once the disk is full (or the directory immutable), which takes one write
# or one chattr: far under this. The test waits for it before anything else.
EXPIRES_SOON_S = 3


def sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


@pytest.fixture
def small_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """WISP_HOME on a fresh 64 KiB tmpfs of its own (unmounted after)."""
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = sh("mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(mount))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    home = mount / "home"
    monkeypatch.setenv("WISP_HOME", str(home))
    try:
        yield home
    finally:
        sh("chattr", "-R", "-i", str(mount))
        sh("mount", "-o", "remount,rw", str(mount))
        sh("umount", "-l", str(mount))


def fill(home: Path, name: str = "filler") -> Path:
    """Write a filler file until the disk is full; returns it (remove it to free space)."""
    filler = home / name
    with open(filler, "wb", buffering=0) as out:
        for size in (4096, 1):  # whole pages, then what is left of the last one
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    return filler


def prepare(home: Path) -> dict[str, str]:
    """A handed-over fact, a dead asker's command (a sweep has it to settle), and their IDs."""
    with Channel.open(home) as channel, channel.server() as lock:
        handed, dead = fact(lock), command(lock)
        channel.file(handed)
        channel.file(dead)
    return {"fact": handed.id, "dead": dead.id}


def askers() -> tuple[AskingCommand, AskingCommand]:
    """An asker that waits past the test's end, and one whose deadline comes in seconds."""
    request = ("approvals", "request", "--json", "--timeout")
    return (
        AskingCommand(*request, str(OUTLASTS_THE_TEST_S), "--", "make"),
        AskingCommand(*request, str(EXPIRES_SOON_S), "--", "make"),
    )


def timed_out(asker: AskingCommand, errno_name: str) -> None:
    """The asker reached its deadline: exit 124, not approved, no traceback, and (where the
    outcome could not be written) saying why."""
    code, out, err = asker.result()
    assert code == 124, err
    verdict = json.loads(out)
    assert (verdict["approved"], verdict["outcome"]) == (False, "timed-out")
    said(err)
    if errno_name == "ENOSPC":
        assert "not be recorded" in verdict["reason"] and errno_name in verdict["reason"]


def said(err: str, *needles: str) -> None:
    assert "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


def listings_go_on(ids: dict[str, str], errno_name: str) -> int:
    """Every listing lists, exit 0, and says on stderr that the sweep could not write;
    `wisp pending sweep`, whose whole job is writing, says so too and exits 2."""
    runs = 0
    for args in (
        ("pending",),
        ("pending", "--json"),
        ("approvals", "pending"),
        ("facts", "pending"),
        ("pending", "sweep"),
    ):
        done = run_wisp(*args)
        runs += 1
        assert done.returncode == (2 if args == ("pending", "sweep") else 0), (args, done.stderr)
        said(done.stderr, errno_name, "not tidied")
        if args == ("pending", "--json"):
            assert ids["fact"] in {r["id"] for r in json.loads(done.stdout)}
    return runs


class TestOnASmallDisk:
    def test_a_full_disk(self, small_home: Path) -> None:
        """ENOSPC everywhere: answers and askers exit 2 naming the path; a waiting asker
        reaching its deadline exits 124; listings list; freeing space makes all well."""
        ids = prepare(small_home)
        waiting, expiring = askers()
        try:
            fillers = [fill(small_home)]
            timed_out(expiring, "ENOSPC")
            runs = 1
            fillers.append(fill(small_home, "filler2"))  # what its exit freed (its lock)

            answer_path = small_home / "pending" / f"{waiting.id}.answer.json"
            for verb in ("approve", "deny"):
                code, out = in_terminal("approvals", verb, waiting.id)
                runs += 1
                assert code == 2, out
                said(out, str(answer_path), "ENOSPC", "free some space", "not recorded")
            code, out = in_terminal("facts", "keep", ids["fact"])
            runs += 1
            assert code == 2, out
            said(out, "ENOSPC", "nothing was written")

            runs += listings_go_on(ids, "ENOSPC")
            for args in (
                ("approvals", "request", "--timeout", "1", "--", "ls"),
                ("questions", "ask", "which?", "--timeout", "1"),
                ("facts", "request", "shop", "db", "postgres"),
            ):
                done = run_wisp(*args)
                runs += 1
                assert done.returncode == 2, (args, done.stderr)
                said(done.stderr, "could not", "ENOSPC")

            with Channel.open(small_home) as channel:
                assert channel.status(ids["fact"]).state is State.HANDED_OVER
                for asker in (waiting, expiring):
                    assert channel.read(asker.id).answer is None  # nothing decided it
                assert violations(channel) == []
            for filler in fillers:
                filler.unlink()
            code, out = in_terminal("facts", "keep", ids["fact"])
            runs += 1
            assert code == 0 and "kept" in out, out
        finally:
            waiting.process.kill()
            waiting.process.wait(timeout=30)
        audit = (small_home / "logs" / "audit.jsonl").read_text().splitlines()
        assert all(json.loads(line) for line in audit)  # never torn
        note("full-disk", mode="ENOSPC", commands=runs)

    def test_a_read_only_mount(self, small_home: Path) -> None:
        """EROFS: answering and asking exit 2 saying to remount; listings list. (A live
        asker's lock is open for writing, which would keep the mount from going read-only:
        what waits here is a handed-over fact.)"""
        ids = prepare(small_home)
        remount = sh("mount", "-o", "remount,ro", str(small_home.parent))
        assert remount.returncode == 0, remount.stderr
        runs = 0
        for verb in ("drop", "keep"):  # drop: the answer's own write; keep: the store's first
            code, out = in_terminal("facts", verb, ids["fact"])
            runs += 1
            assert code == 2, out
            said(out, "EROFS", "read-only")
        runs += listings_go_on(ids, "EROFS")
        done = run_wisp("approvals", "request", "--timeout", "1", "--", "ls")
        runs += 1
        assert done.returncode == 2
        said(done.stderr, "EROFS", "read-only")
        with Channel.open(small_home) as channel:
            assert channel.status(ids["fact"]).state is State.HANDED_OVER
            assert violations(channel) == []
        note("full-disk", mode="EROFS", commands=runs)

    def test_an_immutable_directory(self, small_home: Path) -> None:
        """EPERM (chattr +i on the channel): answers and new askers exit 2 naming the fix; an
        asker already waiting reaches its deadline and exits 124, not 1."""
        ids = prepare(small_home)
        waiting, expiring = askers()
        pending = small_home / "pending"
        try:
            chattr = sh("chattr", "+i", str(pending))
            if chattr.returncode != 0:
                pytest.skip(f"cannot make a directory immutable here: {chattr.stderr.strip()}")
            try:
                timed_out(expiring, "EPERM")
                code, out = in_terminal("approvals", "approve", waiting.id)
                assert code == 2, out
                said(out, "EPERM", "chattr -i", "not recorded")
                runs = 2 + listings_go_on(ids, "EPERM")
                done = run_wisp("approvals", "request", "--timeout", "1", "--", "ls")
                runs += 1
                assert done.returncode == 2
                said(done.stderr, "EPERM", "chattr -i")
            finally:
                sh("chattr", "-i", str(pending))
        finally:
            waiting.process.kill()
            waiting.process.wait(timeout=30)
        with Channel.open(small_home) as channel:
            assert violations(channel) == []
            assert not os.listdir(pending / ".tmp")
        note("full-disk", mode="EPERM", commands=runs)
