"""`wisp config` as a person meets it: laid out for a narrow terminal, and the trust model —
changes that loosen what an agent may do need a terminal; revoking a grant does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliterm import overflowing, run, unwrapped
from helpers import run_wisp

from wisp._config import SETTINGS


class TestConfigFitsTheWidth:
    @pytest.mark.parametrize("cols", [40, 80])
    def test_wrapped_to_columns(self, home: Path, cols: int) -> None:
        """At 40 (and 80) columns no line is wider than the terminal, and each setting's
        description is there whole, indented under its name."""
        code, output = run("config", cols=cols)
        assert code == 0, output
        assert overflowing(output, cols) == []
        flat = unwrapped(output).replace(" ", "")
        for key, setting in SETTINGS.items():
            assert key in flat and setting.doc.replace(" ", "") in flat

    def test_columns_is_honoured_in_a_pipe(self, home: Path) -> None:
        """`COLUMNS=40 wisp config | less`: wrapped to 40 there too."""
        out = run_wisp("config", env={"COLUMNS": "40"})
        assert out.returncode == 0 and out.stdout
        assert all(len(line) <= 40 for line in out.stdout.splitlines()), out.stdout
