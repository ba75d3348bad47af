"""Arguments that are no UTF-8 text (a file name in Latin-1, a stray byte): every one is
refused in wisp's own words with exit 2 and nothing written, never a traceback that reads as
"denied" (docs/cli.md, "Exit codes"). Real processes, real bytes on the command line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import run_wisp

# What a shell passes for $'caf\xe9.txt' and $'\xff': Python carries the bytes as surrogates,
# and subprocess gives them back to the child as the same bytes.
LATIN = os.fsdecode(b"caf\xe9.txt")
BYTE = os.fsdecode(b"\xff")

ARGVS = (
    ("exec", "--timeout", "1", "--", "rm", LATIN),
    ("approvals", "request", "--timeout", "1", "--", "rm", LATIN),
    ("approvals", "request", "--timeout", "1", "--reason", BYTE, "--", "ls"),
    ("approvals", "request", "--timeout", "1", "--cwd", "/tmp/" + BYTE, "--", "ls"),
    ("questions", "ask", "--timeout", "1", BYTE + "?"),
    ("questions", "ask", "--timeout", "1", "--option", BYTE, "--option", "b", "Which?"),
    ("facts", "request", BYTE, "name", "value"),
    ("facts", "request", "--source", BYTE, "shop", "db", "postgres"),
    ("config", "set", "approval.timeoutSeconds", BYTE),
    ("config", "set", BYTE, "1"),
)


class TestArgumentsThatAreNoText:
    @pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a[:2]))
    def test_refused_in_wisps_words(self, home: Path, argv: tuple[str, ...]) -> None:
        """Each is refused with exit 2, the argument named with its bytes escaped, and
        nothing is filed, audited or set."""
        done = run_wisp(*argv)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and "UnicodeEncodeError" not in done.stderr
        assert "is not UTF-8 text" in done.stderr, done.stderr
        assert "\\xe9" in done.stderr or "\\xff" in done.stderr, done.stderr
        assert "Nothing was written" in done.stderr
        pending = home / "pending"
        filed = (
            [n for n in os.listdir(pending) if not n.startswith(".")] if pending.exists() else []
        )
        assert filed == []
        assert not (home / "logs").exists()
        assert not (home / "config.json").exists()
