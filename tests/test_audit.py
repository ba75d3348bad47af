"""The audit log: one JSON object per line, never interleaved."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

from wisp.audit.writer import audit, audit_path


def writer(home: str, index: int, count: int) -> None:
    for n in range(count):
        audit(
            Path(home),
            "test.line",
            {"writer": index, "n": n, "pad": "x" * 3000},
            entry_point="test",
        )


class TestAudit:
    def test_concurrent_writers_never_interleave(self, home: Path) -> None:
        """8 processes each write 200 long records: every line parses, none is lost."""
        ctx = multiprocessing.get_context("forkserver")  # forked from a clean server, not started
        procs = [ctx.Process(target=writer, args=(str(home), i, 200)) for i in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        lines = audit_path(home).read_text().splitlines()
        records = [json.loads(line) for line in lines]
        assert len(records) == 1600
        assert {(r["writer"], r["n"]) for r in records} == {
            (i, n) for i in range(8) for n in range(200)
        }
        assert all({"ts", "event", "entryPoint", "pid"} <= set(r) for r in records)
        assert oct(audit_path(home).stat().st_mode & 0o777) == "0o600"

    def test_an_unwritable_log_never_fails_the_action(self, home: Path, capsys: object) -> None:
        """If the log cannot be written the caller goes on; stderr says so once."""
        home.mkdir(mode=0o700)
        (home / "logs").write_text("not a directory")
        assert audit(home, "x", entry_point="test") is False

    def test_a_removed_home_is_not_made_again(self, home: Path, capsys: object) -> None:
        """With make_home false (a watch saying its channel went), a missing home stays
        missing, nothing is written and nothing is said; made as usual otherwise."""
        assert audit(home, "watch.warning", entry_point="pending", make_home=False) is False
        assert not home.exists()
        assert capsys.readouterr().err == ""  # type: ignore[attr-defined]
        assert audit(home, "watch.warning", entry_point="pending") is True
        assert audit_path(home).exists()
        assert audit(home, "watch.warning", entry_point="pending", make_home=False) is True

    def test_nothing_of_a_home_is_made_with_make_home_false(self, home: Path) -> None:
        """With make_home false, a home that is there (being removed, say) gets no logs
        directory and no log made in it: nothing is written."""
        home.mkdir(mode=0o700)
        assert audit(home, "watch.warning", entry_point="pending", make_home=False) is False
        assert list(home.iterdir()) == []
        (home / "logs").mkdir(mode=0o700)
        assert audit(home, "watch.warning", entry_point="pending", make_home=False) is False
        assert list((home / "logs").iterdir()) == []

    def test_a_home_removed_between_records_is_checked_again(self, home: Path) -> None:
        """The logs directory is kept open between records; a home removed since is not
        written into as it was: not made again with make_home false, made anew otherwise,
        and the next record is in the new log."""
        assert audit(home, "watch.warning", {"n": 1}, entry_point="pending") is True
        shutil.rmtree(home)
        assert (
            audit(home, "watch.warning", {"n": 2}, entry_point="pending", make_home=False) is False
        )
        assert not home.exists()
        assert audit(home, "watch.warning", {"n": 3}, entry_point="pending") is True
        lines = audit_path(home).read_text().splitlines()
        assert [json.loads(line)["n"] for line in lines] == [3]

    def test_logs_replaced_by_a_symlink_between_records_is_refused(
        self, home: Path, tmp_path: Path
    ) -> None:
        """A logs directory swapped for a symbolic link after a record is refused for the
        next record, as it would be for the first: nothing is written where it points."""
        assert audit(home, "watch.warning", entry_point="pending") is True
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        shutil.rmtree(home / "logs")
        (home / "logs").symlink_to(elsewhere)
        assert audit(home, "watch.warning", entry_point="pending") is False
        assert list(elsewhere.iterdir()) == []


class TestFullDisk:
    def test_a_full_disk_never_leaves_half_a_record(self, tmp_path: Path) -> None:
        """On a real 64 KiB tmpfs: records are appended until the disk is full; the one that
        did not fit leaves nothing behind, so after space is freed every line still parses."""
        import subprocess

        import pytest

        mount = tmp_path / "small"
        mount.mkdir()
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mount)],
            capture_output=True,
        )
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
        try:
            home = mount / "home"
            written = 0
            while audit(home, "test.line", {"n": written, "pad": "x" * 1500}, entry_point="t"):
                written += 1
                assert written < 1000, "the 64 KiB disk never filled"
            filler = sorted(mount.rglob("*.jsonl"))
            assert filler, "nothing was written before the disk filled"
            lines = audit_path(home).read_text().splitlines()
            assert [json.loads(line)["n"] for line in lines] == list(range(written))
            # Free space by cutting the log to its first record; the next record lands whole.
            audit_path(home).write_text(lines[0] + "\n")
            assert audit(home, "test.line", {"n": "after"}, entry_point="t")
            after = [json.loads(line) for line in audit_path(home).read_text().splitlines()]
            assert [r["n"] for r in after] == [0, "after"]
        finally:
            subprocess.run(["umount", "-l", str(mount)], check=False)
