"""Every bad deadline is a usage error (exit 2), said plainly, before anything is filed: on the
command line, in config.json, through `wisp config set`, and through the Python API."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cliterm import WIDTHS, run
from helpers import audit_records, run_wisp

from pending import Channel, CommandBinding, Kind
from wisp import Asker, DeadlineError
from wisp._deadlines import MAX_DEADLINE_S, check_deadline

BAD = ["nan", "inf", "-inf", "1e309", "1e12", "1e10", "-1", "2592001"]


def nothing_filed(home: Path) -> bool:
    pending = home / "pending"
    files = [p for p in pending.iterdir() if p.is_file()] if pending.exists() else []
    return not files and not [r for r in audit_records(home) if r["event"] == "approval.pending"]


class TestFlag:
    @pytest.mark.parametrize("value", BAD)
    @pytest.mark.parametrize("asking", [("approvals", "request"), ("questions", "ask")])
    def test_refused_before_anything_is_filed(
        self, home: Path, asking: tuple[str, str], value: str
    ) -> None:
        """`--timeout nan|inf|1e309|1e12|1e10|-1|…`: exit 2, the range said, no traceback,
        nothing filed or audited."""
        what = ["--", "ls"] if asking[0] == "approvals" else ["Now?"]
        out = run_wisp(*asking, f"--timeout={value}", *what)
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr
        assert f"from 0 (waits until answered) to {MAX_DEADLINE_S}" in " ".join(out.stderr.split())
        assert nothing_filed(home)

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_in_a_terminal(self, home: Path, cols: int) -> None:
        """In a terminal of any width: the usage error, whole, and exit 2."""
        code, output = run("approvals", "request", "--timeout", "1e10", "--", "ls", cols=cols)
        assert code == 2 and "Traceback" not in output
        assert "(30 days), not 10000000000." in " ".join(output.split())
        assert nothing_filed(home)


class TestConfig:
    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("approval.timeoutSeconds", "99999999999"),
            ("approval.timeoutSeconds", "-5"),
            ("approval.timeoutSeconds", "1e10"),
            ("answer.waitSeconds", "1e309"),
            ("watch.livenessSeconds", "0"),
        ],
    )
    def test_config_set_refuses(self, home: Path, key: str, value: str) -> None:
        """`wisp config set` refuses a deadline out of range: exit 2, nothing written."""
        out = run_wisp("config", "set", key, "--", value)
        assert out.returncode == 2, out.stderr
        assert "Nothing was written" in out.stderr and "Traceback" not in out.stderr
        assert not (home / "config.json").exists()

    def test_a_negative_value_without_dashes_says_how(self, home: Path) -> None:
        """`config set KEY -5` reads -5 as an option: the message says to put it after --."""
        out = run_wisp("config", "set", "approval.timeoutSeconds", "-5")
        assert out.returncode == 2
        assert "goes after `--`" in out.stderr and "-- -5" in out.stderr

    def test_a_bad_value_in_the_file(self, home: Path) -> None:
        """A config.json with a deadline out of range: asking exits 2 naming the key and the
        fix; nothing is filed."""
        home.mkdir(mode=0o700)
        (home / "config.json").write_text(json.dumps({"approval": {"timeoutSeconds": 10**11}}))
        out = run_wisp("approvals", "request", "--", "ls")
        assert out.returncode == 2
        assert "approval.timeoutSeconds" in out.stderr and "Fix it" in out.stderr
        assert nothing_filed(home)


class TestPythonApi:
    @pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 1e10, MAX_DEADLINE_S + 1])
    def test_asker_file_refuses(self, channel: Channel, home: Path, value: float) -> None:
        """`Asker.file` raises DeadlineError (a ValueError) before filing anything."""
        with Asker(channel, entry_point="approvals") as asker:
            with pytest.raises(DeadlineError, match="timeout_s takes seconds"):
                asker.file(
                    Kind.COMMAND,
                    CommandBinding(command="ls", cwd="/"),
                    title="t",
                    body=lambda rid: "b",
                    timeout_s=value,
                )
            assert asker.waiting() == []
        assert nothing_filed(home)

    @pytest.mark.parametrize("value", [0, 0.25, 600, MAX_DEADLINE_S])
    def test_in_range_is_taken(self, value: float) -> None:
        """0 (until answered) up to the maximum pass unchanged."""
        assert check_deadline(value, what="x") == value
