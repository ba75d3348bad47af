"""The audit log's own file, made hostile: a FIFO at its name, a hard link to another user's
log, a hard link to a file of one's own elsewhere. Every command that audits refuses at once
(exit 2, saying what is wrong and what to do), files and answers nothing, never hangs, and
`wisp doctor` never calls such a log writable. Real files, real processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import fact, in_terminal, run_wisp

from pending import Channel
from wisp.audit.writer import AuditEvent, EntryPoint, audit

# Each asking command, with a deadline far under run_wisp's own 60 s: a hang is a failure.
AUDITING = (
    ("approvals", "request", "--timeout", "1", "--", "ls"),
    ("questions", "ask", "Which one?", "--timeout", "1"),
    ("facts", "request", "shop", "db", "postgres"),
    ("notify", "probe"),
)
STRANGER_UID = 65534  # nobody


def logs(home: Path) -> Path:
    with Channel.open(home):
        pass
    path = home / "logs"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def refused(done: object, *needles: str) -> None:
    code, err = done.returncode, done.stderr
    assert code == 2, err
    assert "Traceback" not in err, err
    for needle in ("audit log", "Move it aside", *needles):
        assert needle in err, (needle, err)


def nothing_filed(home: Path) -> None:
    names = [n for n in os.listdir(home / "pending") if not n.startswith(".")]
    assert names == [], names


def doctor_flags(*needles: str) -> None:
    done = run_wisp("doctor", "--json")
    assert done.returncode == 1, done.stderr
    check = next(c for c in json.loads(done.stdout)["checks"] if c["check"] == "audit log")
    assert check["ok"] is False, check
    for needle in needles:
        assert needle in check["detail"], check


class TestAFifoAtTheLog:
    def test_every_auditing_command_refuses_at_once(self, home: Path) -> None:
        """A FIFO nobody reads at logs/audit.jsonl: every asking command and `wisp notify`
        exits 2 naming it (no hang past its deadline), and nothing is filed."""
        os.mkfifo(logs(home) / "audit.jsonl", 0o600)
        for args in AUDITING:
            refused(run_wisp(*args), "FIFO")
        nothing_filed(home)

    def test_an_answer_is_refused_before_it_is_written(self, home: Path) -> None:
        """Answering from a terminal with a FIFO for a log: exit 2, the request still waits."""
        with Channel.open(home) as channel, channel.server() as lock:
            request = fact(lock)
            channel.file(request)
        os.mkfifo(logs(home) / "audit.jsonl", 0o600)
        code, out = in_terminal("facts", "drop", request.id)
        assert code == 2, out
        assert "FIFO" in out and "Traceback" not in out, out
        assert not (home / "pending" / f"{request.id}.answer.json").exists()

    def test_the_reader_and_the_doctor_do_not_hang(self, home: Path) -> None:
        """`wisp log` refuses the FIFO (exit 2) and `wisp doctor` says it is no log to write."""
        os.mkfifo(logs(home) / "audit.jsonl", 0o600)
        done = run_wisp("log")
        assert done.returncode == 2, done.stderr
        doctor_flags("FIFO")

    def test_the_writer_never_blocks(self, home: Path) -> None:
        """The writer itself, met with a FIFO (an asker that checked before it appeared):
        writes nothing and returns at once."""
        os.mkfifo(logs(home) / "audit.jsonl", 0o600)
        assert (
            audit(home, AuditEvent.WATCH_WARNING, {"message": "x"}, entry_point=EntryPoint.PENDING)
            is False
        )


class TestALinkedLog:
    @pytest.fixture
    def strangers(self, tmp_path: Path) -> Path:
        """Another user's log, elsewhere (needs root to give it away; skips otherwise)."""
        theirs = tmp_path / "theirs.jsonl"
        theirs.write_text('{"event":"theirs"}\n')
        try:
            os.chown(theirs, STRANGER_UID, STRANGER_UID)
        except PermissionError as exc:
            pytest.skip(f"missing capability: cannot give a file to uid {STRANGER_UID}: {exc}")
        return theirs

    def test_a_hard_link_to_another_users_log(self, home: Path, strangers: Path) -> None:
        """A hard link to another user's log: refused (exit 2, naming the owner), their log
        is untouched, and the doctor does not call it writable."""
        os.link(strangers, logs(home) / "audit.jsonl")
        for args in AUDITING:
            refused(run_wisp(*args), f"uid {STRANGER_UID}")
        assert strangers.read_text() == '{"event":"theirs"}\n'
        nothing_filed(home)
        doctor_flags(f"uid {STRANGER_UID}")

    def test_a_hard_link_to_a_file_of_ones_own(self, home: Path, tmp_path: Path) -> None:
        """A second link to one's own file: refused too, since records would reach it."""
        elsewhere = tmp_path / "elsewhere.txt"
        elsewhere.write_text("")
        os.link(elsewhere, logs(home) / "audit.jsonl")
        refused(run_wisp(*AUDITING[0]), "2 hard links")
        assert elsewhere.read_text() == ""
        doctor_flags("hard links")


class TestABadLogsDirectory:
    @pytest.mark.parametrize("what", ["symlink", "file", "world-writable"])
    def test_every_auditing_command_refuses_before_filing(
        self, home: Path, tmp_path: Path, what: str
    ) -> None:
        """`logs/` replaced by a symlink or a file, or left writable by others: every asking
        command and `wisp notify` exits 2 naming the directory and its fix, and nothing is
        filed (before, they filed and waited with nothing audited)."""
        path = logs(home)
        path.rmdir()
        if what == "symlink":
            elsewhere = tmp_path / "elsewhere"
            elsewhere.mkdir(mode=0o700)
            path.symlink_to(elsewhere)
        elif what == "file":
            path.write_text("")
        else:
            path.mkdir()
            path.chmod(0o777)
        for args in AUDITING:
            done = run_wisp(*args)
            assert done.returncode == 2, done.stderr
            assert "Traceback" not in done.stderr, done.stderr
            for needle in (f"refusing to use {path}", "To fix it", "Nothing was done"):
                assert needle in done.stderr, (needle, done.stderr)
        nothing_filed(home)
