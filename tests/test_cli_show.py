"""Seeing exactly what you approve, at any width: `wisp show`, the listings and the asker's
prompt, in a real pseudo-terminal 40, 80 and 200 columns wide."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from cliterm import WIDTHS, lines, overflowing, run, spawn
from helpers import Asker, command, fact, question, wait_until

from pending import Channel, CommandBinding, Kind, Outcome, ServerLock, State, Via, make_request

# 2,000 characters of command, in words: what a person approves, to be shown whole.
LONG = " ".join(f"--flag{i}=value{i}" for i in range(200))[:2000]
assert len(LONG) == 2000 and not LONG.endswith(" ")


def long_command(lock: ServerLock, text: str = LONG, reason: str | None = None) -> object:
    return make_request(
        kind=Kind.COMMAND,
        binding=CommandBinding(command=text, cwd="/srv/shop", thread="c1", reason=reason),
        title="wisp: run a command?",
        body=text,
        server=lock.record(client="test", thread="c1", entry_point="approvals"),
    )


def field(output: str, label: str) -> str:
    """A labelled value of `wisp show` (or a stacked block), its wrapped lines joined again."""
    found: list[str] = []
    for line in lines(output):
        stripped = line.lstrip()
        if found and line.startswith(" ") and not re.match(r"[a-z][a-z ]*\s{2,}", stripped):
            found.append(stripped)
            continue
        if found:
            break
        match = re.match(rf"\s*{label}\s+(.*)", line)
        if match:
            found.append(match.group(1))
    return " ".join(found)


@pytest.fixture
def waiting(channel: Channel) -> Iterator[tuple[ServerLock, dict[str, str]]]:
    """A live asker's long command (with a reason), a question with options, and a fact."""
    with channel.server() as lock:
        command = long_command(lock, reason="ship the release")
        ask = question(lock, options=("staging", "production"))
        keep = fact(lock)
        for request in (command, ask, keep):
            channel.file(request)  # type: ignore[arg-type]
        yield lock, {"command": command.id, "question": ask.id, "fact": keep.id}  # type: ignore[attr-defined]


class TestShow:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_prints_all_of_a_2000_character_command(
        self, waiting: tuple[ServerLock, dict[str, str]], cols: int
    ) -> None:
        """`wisp show ID` prints the whole 2,000-character command, wrapped to the width
        (no line wider), with where it runs, why, who asks and how to answer."""
        _, ids = waiting
        code, output = run("show", ids["command"], cols=cols)
        assert code == 0, output
        assert field(output, "command") == LONG
        assert overflowing(output, cols) == []
        assert "…" not in output
        assert field(output, "in") == "/srv/shop"
        assert field(output, "reason") == "ship the release"
        assert "test, pid" in output and "thread c1" in output and "running" in output
        assert field(output, "state").startswith("filed")
        assert f"wisp approvals approve {ids['command']}" in " ".join(output.split())

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_a_question_its_options_and_the_json(
        self, waiting: tuple[ServerLock, dict[str, str]], cols: int
    ) -> None:
        """A question shows each option numbered; `--json` is the `wisp pending --json`
        element of that request."""
        _, ids = waiting
        code, output = run("questions", "show", ids["question"], cols=cols)
        assert code == 0 and "1) staging" in output and "2) production" in output
        code, output = run("show", ids["question"][:6], "--json", cols=cols)
        shown = json.loads(output)
        assert (shown["id"], shown["kind"], shown["binding"]["options"]) == (
            ids["question"],
            "question",
            ["staging", "production"],
        )

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_hidden_characters_are_made_visible(self, channel: Channel, cols: int) -> None:
        """Control and bidi characters in what is asked are shown as markers, never raw."""
        with channel.server() as lock:
            hostile = long_command(lock, text="ls\x1b[2J\rrm -rf ~ \u202etxt.exe")
            channel.file(hostile)  # type: ignore[arg-type]
            code, output = run("show", hostile.id, cols=cols)  # type: ignore[attr-defined]
        assert code == 0
        assert "\x1b[2J" not in output and "\u202e" not in output
        assert "ls⟨ESC⟩[2J⟨CR⟩rm -rf ~ ⟨U+202E⟩txt.exe" in field(output, "command")

    def test_an_ended_request_says_no_countdown_and_stale_once(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A withdrawn request shows no `expires … (in 9m)` countdown; a stale one says
        `stale: it can no longer be answered` (never `stale: stale:`) and why."""
        withdrawn = command(server, expires_in_s=600)
        channel.file(withdrawn)
        channel.claim(withdrawn, Outcome.WITHDRAWN, via=Via.ASKER, reason="the asker stopped")
        code, output = run("show", withdrawn.id, cols=200)
        assert code == 0, output
        assert field(output, "expires").endswith("(it ended first)")
        asker = Asker(channel.home, "command")
        (stale_id,) = asker.filed()
        asker.kill()
        code, output = run("show", stale_id, cols=200)
        assert code == 0, output
        assert field(output, "state") == "stale: it can no longer be answered"
        assert "has stopped" in field(output, "why")


class TestListing:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_fits_the_width_and_never_cuts_an_id(
        self, waiting: tuple[ServerLock, dict[str, str]], cols: int
    ) -> None:
        """Every line fits; every ID is whole; narrow terminals get one block per request
        with the command whole, a wide one a table that cuts the command only with a
        pointer to `wisp show ID`."""
        _, ids = waiting
        code, output = run("pending", cols=cols)
        assert code == 0, output
        assert overflowing(output, cols) == []
        words = set(output.split())
        assert set(ids.values()) <= words
        assert "1) staging" in output and "/srv/shop" in output
        table = output.startswith("ID ")
        assert table is (cols > 40)  # 40 columns leave too little room for a table
        if table:
            assert "ASKED" in lines(output)[0]
            assert f"`wisp show {ids['command']}` prints all of it" in " ".join(output.split())
            assert "…" in output
        else:
            assert field(output, "command") == LONG and "…" not in output

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_a_stale_row_says_why(self, channel: Channel, cols: int) -> None:
        """A stale request's row says why it can no longer be answered (its asker stopped),
        in the table and in the stacked blocks."""
        asker = Asker(channel.home, "command")
        (stale_id,) = asker.filed()
        asker.kill()
        wait_until(lambda: channel.status(stale_id).state is State.STALE)
        code, output = run("pending", "--all", cols=cols)
        assert code == 0, output
        flat = " ".join(output.split())
        assert stale_id in flat and "stale" in flat
        assert "has stopped" in flat

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_a_short_request_is_a_table_where_it_fits(self, channel: Channel, cols: int) -> None:
        """A short command fits a table at 80 columns (as the README shows), whole."""
        with channel.server() as lock:
            short = long_command(lock, text="make deploy")
            channel.file(short)  # type: ignore[arg-type]
            code, output = run("approvals", "pending", cols=cols)
        assert code == 0 and overflowing(output, cols) == []
        if cols >= 80:
            header, row = lines(output)[:2]
            assert header.split() == ["ID", "KIND", "AGE", "ASKED", "BY", "STATE"]
            assert row.startswith(short.id) and "make deploy" in row  # type: ignore[attr-defined]
        assert "…" not in output


class TestPrompt:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_the_asker_shows_the_whole_command(self, home: Path, cols: int) -> None:
        """`wisp approvals request` tells the person the whole command, wrapped to their
        terminal, and how to see and answer it; Ctrl-C withdraws it."""
        child = spawn("approvals", "request", "--timeout", "60", "--", LONG, cols=cols)
        try:
            child.expect(r"withdraws\s+it\)")
            prompt = (child.before or "").replace("\r\n", "\n")
            body = " ".join(line.strip() for line in lines(prompt)[1:] if line.startswith("  "))
            assert LONG in body
            assert overflowing(prompt, cols) == []
            assert "wisp show" in prompt
            with Channel.open(home) as channel:
                wait_until(lambda: channel.listing().statuses, what="the request filed")
            child.sendintr()
            child.expect("withdrawn")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 1
