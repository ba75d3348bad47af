"""The `wisp` command, run as a person runs it: a real process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from helpers import FIXTURES, command, fact, install_fixture, run_wisp

from pending import Channel
from wisp import __version__


class TestBasics:
    def test_version(self) -> None:
        """`wisp --version` prints the installed version."""
        out = run_wisp("--version")
        assert out.returncode == 0 and out.stdout.strip() == f"wisp {__version__}"

    def test_help_lists_the_commands(self) -> None:
        """`wisp --help` works and names the commands."""
        out = run_wisp("--help")
        assert out.returncode == 0
        for word in ("pending", "doctor"):
            assert word in out.stdout

    def test_console_script_is_installed(self) -> None:
        """The `wisp` console script sits beside this interpreter."""
        assert (Path(sys.executable).parent / "wisp").exists()


class TestPendingList:
    def test_empty(self, home: Path) -> None:
        """An empty channel says nothing waits."""
        out = run_wisp("pending")
        assert out.returncode == 0 and "Nothing waits" in out.stdout

    def test_lists_what_waits(self, channel: Channel) -> None:
        """Waiting requests show with their id, kind and what is asked; hidden characters shown."""
        with channel.server() as lock:
            cmd = command(lock, text="echo hi\rrm -rf ~")
            channel.file(cmd)
            channel.file(fact(lock))
            out = run_wisp("pending")
        assert out.returncode == 0, out.stderr
        assert cmd.id in out.stdout and "command" in out.stdout and "fact" in out.stdout
        assert "echo hi⟨CR⟩rm -rf ~" in out.stdout
        assert "\r" not in out.stdout

    def test_json_shape(self, channel: Channel) -> None:
        """`--json` is an array of objects with the documented keys."""
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
            out = run_wisp("pending", "--json")
        rows = json.loads(out.stdout)
        assert [r["id"] for r in rows] == [req.id]
        row = rows[0]
        for key in (
            "id",
            "kind",
            "state",
            "filedAt",
            "expiresAt",
            "title",
            "body",
            "binding",
            "server",
        ):
            assert key in row
        assert row["server"]["alive"] is True and row["server"]["pid"] == os.getpid()
        assert row["binding"]["value"] == "BLUE HERON"

    def test_kind_filter_sweeps_first(self, channel: Channel) -> None:
        """The listing's sweep runs first: a stale request is not listed as waiting, and
        `--all` shows it ended `stale`, with why. `--kind` narrows."""
        with channel.server() as lock:
            channel.file(command(lock))
            channel.file(fact(lock))
        rows = json.loads(run_wisp("pending", "--json").stdout)
        assert [(r["kind"], r["state"]) for r in rows] == [("fact", "handed-over")]
        rows = json.loads(run_wisp("pending", "--all", "--json", "--kind", "command").stdout)
        assert [(r["kind"], r["state"], r["outcome"]) for r in rows] == [
            ("command", "settled", "stale")
        ]
        assert "has stopped" in rows[0]["reason"]

    def test_unsafe_channel_exits_2_with_the_fix(self, home: Path) -> None:
        """A world-writable channel is refused: exit 2, the chmod to run, no traceback."""
        Channel.open(home).close()
        os.chmod(home / "pending", 0o777)
        out = run_wisp("pending")
        assert out.returncode == 2
        assert f"chmod 700 {home / 'pending'}" in out.stderr
        assert "Traceback" not in out.stderr


class TestDoctor:
    def test_healthy(self, home: Path) -> None:
        """A clean channel: exit 0, its path and mode."""
        out = run_wisp("doctor")
        assert out.returncode == 0, out.stderr
        assert str(home / "pending") in out.stdout and "0700" in out.stdout

    def test_reports_skipped_entries(self, channel: Channel) -> None:
        """Bad entries are named with their reasons; exit 1."""
        install_fixture(channel, FIXTURES / "bad" / "0badf016.request.json")
        out = run_wisp("doctor", "--json")
        assert out.returncode == 1
        findings = json.loads(out.stdout)
        assert findings["problems"][0]["name"] == "0badf016.request.json"
        assert "altered" in findings["problems"][0]["reason"]
