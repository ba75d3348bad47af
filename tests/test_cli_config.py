"""`wisp config` as a person meets it: laid out for a narrow terminal, and the trust model —
changes that loosen what an agent may do need a terminal; revoking a grant does not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cliterm import overflowing, run, unwrapped
from helpers import ROOT, in_terminal, run_wisp
from test_cli_ids import grants

from pending import Channel
from wisp.stores.config import SETTINGS
from wisp.stores.grants import GrantStore


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


def settings_table() -> list[tuple[str, str]]:
    """docs/cli.md's settings table: (key, default as written), in its order."""
    said = (ROOT / "docs" / "cli.md").read_text()
    table = said[said.index("## Settings: `$WISP_HOME/config.json`") :]
    table = table[: table.index("\n## ")]
    return re.findall(r"^\| `([a-zA-Z.]+)` \| `?([^|`]*?)`? \|", table, re.M)


class TestConfigAsTheTableSaysIt:
    def test_the_same_settings_in_the_same_order_with_the_same_defaults(self, home: Path) -> None:
        """`wisp config` lists the settings in docs/cli.md's table's order, each default as
        the table writes it (`3`, not `3.0`), and `--json` and `get` say the same."""
        table = settings_table()
        assert [key for key, _ in table] == list(SETTINGS)
        out = run_wisp("config", env={"COLUMNS": "200"})
        assert out.returncode == 0, out.stderr
        listed = re.findall(r"^(\S+) = (.*?)  \(default\)$", out.stdout, re.M)
        assert listed == table
        as_json = run_wisp("config", "--json")
        assert list(json.loads(as_json.stdout)) == list(SETTINGS)
        for key, default in table:
            assert json.loads(as_json.stdout)[key] == json.loads(default)
        assert run_wisp("config", "get", "answer.waitSeconds").stdout == "3\n"

    def test_a_value_set_is_shown_as_given(self, home: Path) -> None:
        """Control: a fraction stays a fraction; a whole number of seconds set as `2` or
        `2.0` reads `2`."""
        assert run_wisp("config", "set", "answer.waitSeconds", "1.5").stdout == (
            "answer.waitSeconds = 1.5\n"
        )
        assert run_wisp("config", "set", "answer.waitSeconds", "2.0").stdout == (
            "answer.waitSeconds = 2\n"
        )
        assert run_wisp("config", "get", "answer.waitSeconds").stdout == "2\n"


class TestTheTrustModel:
    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("notifications.enabled", "false"),
            ("notifications.push", "ntfy://example.org/elsewhere"),
            ("notifications.pushWhen", "unseen"),
            ("notifications.perMinute", "1"),
        ],
    )
    def test_loosening_without_a_terminal_is_refused(
        self, home: Path, key: str, value: str
    ) -> None:
        """`echo | wisp config set KEY VALUE` that loosens what protects the person (told of
        fewer requests, or their text sent somewhere new) writes nothing and exits 2, as an
        answer without a terminal does; from a terminal it is set."""
        out = run_wisp("config", "set", key, value, input="\n")
        assert out.returncode == 2 and "only from a terminal" in out.stderr, out.stderr
        assert not (home / "config.json").exists()
        code, output = in_terminal("config", "set", key, value)
        assert code == 0, output

    def test_tightening_or_neutral_needs_no_terminal(self, home: Path) -> None:
        """A change that loosens nothing (a deadline, notifications back on) is taken from a
        script."""
        for key, value in (("approval.timeoutSeconds", "300"), ("notifications.enabled", "true")):
            out = run_wisp("config", "set", key, value, input="\n")
            assert out.returncode == 0, out.stderr

    def test_revoking_a_grant_needs_no_terminal(self, home: Path) -> None:
        """Revoking only takes a permission away, so `echo | wisp approvals revoke` does it."""
        Channel.open(home).close()
        (grant,) = grants(home, "make deploy")
        out = run_wisp("approvals", "revoke", grant, input="\n")
        assert out.returncode == 0 and f"revoked {grant}" in out.stdout, out.stderr
        assert GrantStore(home).list() == []
