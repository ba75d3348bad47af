"""The smaller things a person meets at the terminal: NO_COLOR, `wisp notify "probe"`, a watch
that outlives its directory, and docs that name only commands this build has."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pexpect
import pytest
from cliterm import WIDTHS, run, spawn
from helpers import ROOT, command

from pending import Channel, Kind


class TestNoColor:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_no_color_means_no_styling_at_all(self, channel: Channel, cols: int) -> None:
        """In a terminal the listing's header is bold; with NO_COLOR set, not even bold."""
        with channel.server() as lock:
            channel.file(command(lock))
            _, styled = run("pending", cols=cols, styled=True)
            _, plain = run("pending", cols=cols, styled=True, env={"NO_COLOR": "1"})
        assert "\x1b[1m" in styled
        assert "\x1b[" not in plain and "make deploy" in plain


class TestNotify:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_one_argument_is_the_message(self, home: Path, cols: int) -> None:
        """`wisp notify --route terminal "probe"`, as the seeds write it: posted through the
        terminal's own sequence (OSC 9), titled "wisp"."""
        child = spawn(
            "notify", "--route", "terminal", "probe", cols=cols, env={"TERM_PROGRAM": "ghostty"}
        )
        child.expect(pexpect.EOF)
        child.close()
        output = child.before or ""
        assert child.exitstatus == 0, output
        assert "\x1b]9;wisp: probe" in output
        assert "notification posted via terminal" in output

    def test_three_arguments_are_a_usage_error(self, home: Path) -> None:
        code, output = run("notify", "a", "b", "c", cols=80)
        assert code == 2 and "a title and a message" in output


class TestWatchOutlivesItsDirectory:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_removed_and_made_again(self, home: Path, cols: int) -> None:
        """`wisp pending watch` says when the channel directory is removed, and when it is
        made again goes on there: a request filed in the new one shows."""
        with Channel.open(home) as first:
            child = spawn("pending", "watch", cols=cols)
            try:
                child.expect("Ctrl-C to stop")
                with first.server() as lock:
                    before = command(lock)
                    first.file(before)
                    child.expect_exact(before.id)
                shutil.rmtree(home / "pending")
                child.expect(r"was\s+removed")
                with Channel.open(home) as again, again.server() as lock:
                    child.expect(r"made\s+again")
                    after = command(lock, text="make again")
                    again.file(after)
                    child.expect_exact(after.id)
                    again.answer(after.id, "no", kind=Kind.COMMAND, via="tui")
                    child.expect(r"answered\s+" + after.id)
                    child.expect(r"by\s+you\s+via\s+tui")
                child.sendintr()
                child.expect(pexpect.EOF)
            finally:
                child.close()
        assert child.exitstatus == 0


class TestDocs:
    def test_no_command_this_build_lacks(self) -> None:
        """Docs, README and messages never send a person to `wisp chat`."""
        texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        texts += sorted((ROOT / "wisp").rglob("*.py"))
        for path in texts:
            assert not re.search(r"wisp chat\b", path.read_text()), path

    def test_every_command_in_cli_md_exists(self) -> None:
        """Each `wisp …` command docs/cli.md shows at a line's start is one this build has."""
        from typer.testing import CliRunner

        from wisp.cli import app

        shown = set(
            re.findall(r"^\$ wisp ([a-z]+(?: [a-z]+)?)", (ROOT / "docs/cli.md").read_text(), re.M)
        )
        assert shown
        runner = CliRunner()
        for words in sorted(shown):
            result = runner.invoke(app, [*words.split(), "--help"], prog_name="wisp")
            assert result.exit_code == 0, (words, result.output)
