"""`wisp log`: the audit log read, filtered and followed as it is written, in a real pseudo-
terminal 40, 80 and 200 columns wide."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pexpect
import pytest
from cliterm import WIDTHS, overflowing, run, spawn
from helpers import FIXTURES, run_wisp

from pending import Channel
from wisp import ApprovalGate, Asker
from wisp.audit.reader import LogFilter, LogReader, parse_since


def install_log(home: Path, source: Path = FIXTURES / "audit" / "legacy.jsonl") -> Path:
    logs = home / "logs"
    logs.mkdir(parents=True, mode=0o700)
    os.chmod(home, 0o700)
    target = logs / "audit.jsonl"
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)
    return target


def story(channel: Channel) -> str:
    """A command asked and approved: pending, notification, answered, settled in the log."""
    with Asker(channel, entry_point="approvals", client="agent") as asker:
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv/shop")
        code, output = run("approvals", "approve", request.id, cols=80)
        assert code == 0, output
        assert asker.wait(request.id, 10) is not None
    return request.id


class TestRead:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_a_requests_story(self, channel: Channel, cols: int) -> None:
        """`wisp log --request PREFIX`: that request's records, oldest first, each line
        within the width."""
        request_id = story(channel)
        code, output = run("log", "--request", request_id[:6].upper(), cols=cols)
        assert code == 0, output
        flat = " ".join(output.split())
        # Filed first; across processes the asker may settle before the answerer's line.
        first = flat.index("approval.pending")
        assert first < flat.index("approval.answered") and first < flat.index("approval.settled")
        assert "once via cli: make deploy" in flat
        assert overflowing(output, cols) == []

    def test_filters_and_json(self, channel: Channel) -> None:
        """`--kind`, `--event` (a name or a family), `--since`, and `--json` (one stored
        record a line)."""
        request_id = story(channel)
        out = run_wisp("log", "--json", "--event", "approval.answered")
        records = [json.loads(line) for line in out.stdout.splitlines()]
        assert [(r["event"], r["id"], r["decision"]) for r in records] == [
            ("approval.answered", request_id, "once")
        ]
        out = run_wisp("log", "--json", "--event", "approval", "--kind", "command")
        events = [json.loads(line)["event"] for line in out.stdout.splitlines()]
        assert set(events) == {"approval.pending", "approval.answered", "approval.settled"}
        assert run_wisp("log", "--json", "--kind", "fact").stdout == ""
        assert len(run_wisp("log", "--json", "--since", "1h").stdout.splitlines()) == 4
        assert run_wisp("log", "--since", "2099-01-01").stdout.strip() == "No audit records match."

    @pytest.mark.parametrize(
        ("args", "says"),
        [
            (("--event", "approval.maybe"), "--event takes an event"),
            (("--since", "yesterday"), "--since takes an age"),
            (("--request", "xyz"), "is not a request ID"),
            (("--kind", "poll"), "is not one of"),
        ],
    )
    def test_usage_errors(self, home: Path, args: tuple[str, str], says: str) -> None:
        """A filter that cannot match anything real is a usage error (exit 2), said."""
        out = run_wisp("log", *args)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_legacy_records_are_read(self, home: Path, cols: int) -> None:
        """A log an earlier build began: its fact.approval.* and fact.approved records are
        shown (legacy), a junk line is skipped and counted, and an escape sequence in a
        command is shown as a marker."""
        install_log(home)
        code, output = run("log", cols=cols)
        flat = " ".join(output.split())
        assert code == 0
        for event in ("fact.approval.asked", "fact.approval.decided", "fact.approved"):
            assert f"{event} (legacy)" in flat
        assert "skipped 1 line(s)" in flat
        assert "\x1b" not in output and "deploy⟨ESC⟩[2J" in output
        out = run_wisp("log", "--json", "--event", "fact")
        assert len(out.stdout.splitlines()) == 3  # the legacy family of fact events


class TestFollow:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_each_record_as_it_is_written(self, channel: Channel, home: Path, cols: int) -> None:
        """`wisp log -f` on a home with no log yet: when a request is filed, its records
        appear; Ctrl-C ends it with exit 0."""
        child = spawn("log", "-f", "--kind", "command", cols=cols)
        try:
            child.expect("Ctrl-C to stop")
            with Asker(channel, entry_point="approvals") as asker:
                request = ApprovalGate(asker, timeout_s=60).file("make test", "/srv")
                child.expect(r"approval\.pending")
                child.expect_exact(request.id)
            child.expect(r"approval\.withdrawn")  # closing the asker withdrew it
            child.sendintr()
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0

    def test_json_lines_as_written(self, channel: Channel, home: Path) -> None:
        """`-f --json`: the records already there, then each new one, as one JSON line."""
        story(channel)
        child = spawn("log", "-f", "--json", "--event", "approval.pending", cols=200)
        try:
            child.expect(r'"event": "approval\.pending"')
            with Asker(channel, entry_point="approvals") as asker:
                request = ApprovalGate(asker, timeout_s=60).file("make again", "/srv")
                child.expect_exact(f'"id": "{request.id}"')
            child.sendintr()
            child.expect(pexpect.EOF)
        finally:
            child.close()


class TestReader:
    def test_partial_lines_wait_and_a_replaced_log_is_read_again(self, home: Path) -> None:
        """A line still being written is read once it ends; a log replaced by a new one
        is read from its start."""
        log = install_log(home)
        reader = LogReader(home)
        assert len(reader.read()) == 5 and reader.skipped == 1
        with log.open("a") as f:
            f.write('{"ts":"2026-10-01T00:00:00.000Z","event":"watch.warning","mes')
        assert reader.read() == []
        with log.open("a") as f:
            f.write('sage":"hi"}\n')
        assert [r["message"] for r in reader.read()] == ["hi"]
        fresh = log.with_name("audit.jsonl.new")
        fresh.write_text('{"ts":"2026-10-02T00:00:00.000Z","event":"notification"}\n')
        os.chmod(fresh, 0o600)
        fresh.replace(log)
        assert [r["event"] for r in reader.read()] == ["notification"]
        reader.close()

    def test_since_takes_ages_and_times(self) -> None:
        """Ages (90s, 10m, 2h, 3d, 1w) count back from now; a time without a zone is local."""
        now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
        assert parse_since("2h", now) == datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
        assert parse_since("1w", now).day == 22
        assert parse_since("2026-11-29T12:00+00:00", now) == now
        with pytest.raises(ValueError, match="--since takes"):
            parse_since("soon", now)
        assert LogFilter(request="a1b2").matches({"event": "x", "id": "A1B2C3D4"})
