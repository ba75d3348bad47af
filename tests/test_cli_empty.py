"""Nothing to show the person, nothing filed: an empty command, question or fact is a usage
error (exit 2) before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_wisp


class TestEmptyRequests:
    @pytest.mark.parametrize(
        "args",
        [
            ("approvals", "request", "--", ""),
            ("approvals", "request", "--", "   "),
            ("questions", "ask", "  "),
            ("questions", "ask", "Which?", "--option", "staging", "--option", " "),
            ("facts", "request", "", "codename", "BLUE HERON"),
            ("facts", "request", "release", "codename", " "),
        ],
        ids=["command", "blank-command", "question", "option", "subject", "value"],
    )
    def test_refused_before_anything_is_filed(self, home: Path, args: tuple[str, ...]) -> None:
        """Each exits 2 saying what is empty and how to give it; the channel holds no file."""
        done = run_wisp(*args)
        assert done.returncode == 2, done.stderr
        assert "is empty" in done.stderr and "Traceback" not in done.stderr
        pending = home / "pending"
        assert not pending.exists() or not [p for p in pending.iterdir() if p.is_file()]
