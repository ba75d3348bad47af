"""The smaller things a person meets at the terminal: NO_COLOR, `wisp notify "probe"`, a watch
that outlives its directory, and docs that name only commands this build has."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pexpect
import pytest
from cliterm import WIDTHS, run, spawn
from helpers import ROOT, command, wisp_command

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

    def test_wisp_home_removed_ends_it_saying_so(self, home: Path) -> None:
        """With WISP_HOME itself removed nothing can tell when it is back: the watch says
        so and exits 2, rather than going silently deaf."""
        Channel.open(home).close()
        child = spawn("pending", "watch", cols=80)
        try:
            child.expect("Ctrl-C to stop")
            shutil.rmtree(home)
            child.expect(r"nothing\s+left\s+to\s+watch")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 2
        assert not home.exists()  # nothing (the audit log included) made it again

    def test_a_home_removed_slowly_is_not_remade_as_it_goes(self, home: Path) -> None:
        """`rm -rf $WISP_HOME` taken slowly (as on a loaded machine): its channel directory
        first, the watch saying so, and only then the home. The watch makes nothing in the
        home as it goes — no logs/, no audit log — so the home's own removal succeeds (it
        failed "Directory not empty" on a logs/ the watch made again: the race behind the
        test above failing under load), and the watch ends saying so."""
        Channel.open(home).close()
        child = spawn("pending", "watch", cols=80)
        try:
            child.expect("Ctrl-C to stop")
            shutil.rmtree(home / "pending")
            child.expect(r"was\s+removed")
            assert sorted(p.name for p in home.iterdir()) == []
            home.rmdir()
            child.expect(r"nothing\s+left\s+to\s+watch")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 2
        assert not home.exists()


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


def console_output(doc: Path, command: str) -> list[str]:
    """The lines a console block in *doc* shows after `$ COMMAND` (up to the next `$` line or
    the block's end)."""
    lines = doc.read_text().splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.split("  #")[0].strip() == f"$ {command}"
    )
    shown = []
    for line in lines[start + 1 :]:
        if line.startswith(("$ ", "```")):
            break
        shown.append(line)
    return shown


class TestReadmeShowsWhatIsPrinted:
    def test_the_prompt(self, home: Path) -> None:
        """The README's `wisp approvals request -- make deploy` is what it prints (its ID and
        directory aside)."""
        # A short directory, as the README's, so that its first line is not wrapped either.
        shop = Path(tempfile.mkdtemp(prefix="shop", dir="/tmp"))
        process = subprocess.Popen(
            wisp_command("approvals", "request", "--", "make", "deploy"),
            cwd=shop,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "COLUMNS": "80"},
        )
        assert process.stderr is not None
        printed = []
        for line in process.stderr:
            printed.append(line.rstrip("\n"))
            if "Ctrl-C withdraws it" in line:
                break
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
        shop.rmdir()
        request_id = re.search(r"approve ([0-9a-f]{16})", "\n".join(printed)).group(1)  # type: ignore[union-attr]
        shown = console_output(ROOT / "README.md", "wisp approvals request -- make deploy")
        expected = [
            line.replace("3f9c0a1b2c3d4e5f", request_id).replace("/home/you/src/shop", str(shop))
            for line in shown
        ]
        assert printed == expected

    def test_the_listings(self) -> None:
        """The README's listings are what the layout prints at 80 columns for them."""
        from wisp.cli._layout import Column, Role, layout
        from wisp.cli._listing import request_columns

        readme = ROOT / "README.md"
        cases = [
            (
                "wisp approvals pending",
                request_columns(),
                (
                    "3f9c0a1b2c3d4e5f",
                    "command",
                    "4s",
                    [("command", "make deploy"), ("in", "/home/you/src/shop")],
                    "wisp-cli pid 41732",
                    "filed",
                ),
            ),
            (
                "wisp facts pending",
                request_columns(),
                (
                    "9d1c2b3a4f5e6d7c",
                    "fact",
                    "5s",
                    [("fact", "release codename = BLUE HERON")],
                    "wisp-cli pid 41790",
                    "handed-over",
                ),
            ),
            (
                "wisp facts list",
                (
                    Column(header="FACT", role=Role.KEY),
                    Column(header="SUBJECT"),
                    Column(header="NAME"),
                    Column(header="VALUE", role=Role.FLEX),
                    Column(header="SOURCE", role=Role.FIELD, label="source"),
                    Column(header="KEPT", role=Role.FIELD, label="kept"),
                ),
                (
                    "p3e8a91c0",
                    "release",
                    "codename",
                    [("value", "BLUE HERON")],
                    "wisp facts request",
                    "2026-11-29T20:50:05.323Z",
                ),
            ),
        ]
        for shown, columns, row in cases:
            printed = [line.text for line in layout(columns, [row], 80, pointer=str)]
            assert console_output(readme, shown) == printed, shown
