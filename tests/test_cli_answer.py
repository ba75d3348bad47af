"""Answering fast from any pane: a unique ID prefix in any case, an option by its number,
`--json`, and what is said (by you; what a session approval covers; Ctrl-C once answered) —
each in a real pseudo-terminal 40, 80 and 200 columns wide."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from cliterm import WIDTHS, run, spawn
from helpers import AskingCommand, command, wait_until

from pending import Channel, Kind, ServerLock, State
from wisp import ApprovalGate, Asker, QuestionAsker


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    """A live asking server in this process: it settles each answer as it is written."""
    with Asker(channel, entry_point="approvals", client="agent") as live:
        yield live


def no_answer_written(channel: Channel) -> bool:
    return not any(s.answer for s in channel.listing().statuses)


class TestPrefix:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_six_characters_in_any_case(self, asker: Asker, cols: int) -> None:
        """`wisp approvals approve` takes the first 6 characters of the ID, upper case too;
        the asker gets the approval."""
        gate = ApprovalGate(asker, timeout_s=60)
        request = gate.file("make deploy", "/srv/shop")
        code, output = run("approvals", "approve", request.id[:6].upper(), cols=cols)
        assert code == 0, output
        assert f"approved once ({request.id}); the asker has it." in " ".join(output.split())
        ending = asker.wait(request.id, 10)
        assert ending is not None and gate.verdict(ending).approved

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_an_ambiguous_prefix_lists_the_candidates(
        self, channel: Channel, server: ServerLock, cols: int
    ) -> None:
        """A prefix two IDs share is refused (exit 1), naming both; nothing is written."""
        first = command(server)._replace(id="abcdef0123456789")
        second = command(server, text="make clean")._replace(id="abcdef9876543210")
        channel.file(first)
        channel.file(second)
        code, output = run("approvals", "deny", "abcdef", cols=cols)
        flat = " ".join(output.split())
        assert code == 1, output
        assert "abcdef is the start of 2 IDs" in flat
        assert "abcdef0123456789 (command, filed: make deploy)" in flat
        assert "abcdef9876543210 (command, filed: make clean)" in flat
        assert no_answer_written(channel)

    def test_a_whole_id_another_starts_with_is_refused(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A whole ID that is also the start of a longer one is refused, naming both: typed
        for the longer one, it must not approve the shorter. The short one is named with a
        dot after it, and only it is answered."""
        longer = command(server)._replace(id="551043757d9c21d8")
        shorter = (command(server, text="rm -rf ~"))._replace(id="55104375")
        channel.file(longer)
        channel.file(shorter)
        code, output = run("approvals", "approve", "55104375", cols=200)
        flat = " ".join(output.split())
        assert code == 1, output
        assert "55104375 is the start of 2 IDs" in flat
        assert "551043757d9c21d8 (command, filed: make" in flat
        assert "55104375 (command, filed: rm -rf ~)" in flat
        assert "for 55104375 itself, type 55104375." in flat
        assert no_answer_written(channel)
        code, output = run("approvals", "deny", "55104375.", cols=200)
        assert code == 0, output
        assert channel.status(shorter.id).answer is not None
        assert channel.status(longer.id).answer is None

    @pytest.mark.parametrize(
        ("typed", "says"), [("abc", "at least 4 hex characters"), ("xyz!", "not a request ID")]
    )
    def test_too_short_or_not_hex(self, channel: Channel, typed: str, says: str) -> None:
        """Fewer than 4 characters, or not hex, is not an ID: refused, and never a path."""
        code, output = run("approvals", "approve", typed, cols=80)
        assert code == 1 and says in " ".join(output.split())

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_unknown_names_the_listing_command(self, home: Path, cols: int) -> None:
        """An ID nothing answers to says which command lists the waiting requests."""
        code, output = run("questions", "decline", "deadbeef", cols=cols)
        assert code == 1 and "`wisp pending` lists the waiting requests" in " ".join(output.split())


class TestOptionByNumber:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_the_second_option(self, channel: Channel, cols: int) -> None:
        """`wisp questions answer ID 2` answers the second option, by its text, and says
        which it recorded (its text and number, not only 2)."""
        with Asker(channel, entry_point="questions") as live:
            asking = QuestionAsker(live, timeout_s=60)
            request = asking.file("Which environment?", options=("staging", "production"))
            code, output = run("questions", "answer", request.id[:8], "2", cols=cols)
            assert code == 0, output
            said = f'answered "production" (option 2) ({request.id})'
            assert said in " ".join(output.split())
            ending = live.wait(request.id, 10)
        assert ending is not None and asking.reply(ending).text == "production"

    def test_a_number_with_no_option_and_literal(self, channel: Channel) -> None:
        """A number past the options is refused (nothing written); `--literal` answers the
        digits as text where free text is taken."""
        with Asker(channel, entry_point="questions") as live:
            asking = QuestionAsker(live, timeout_s=60)
            request = asking.file("Pick", options=("a", "b"), free_text=True)
            code, output = run("questions", "answer", request.id, "3", cols=80)
            assert code == 1 and "options 1 to 2, not 3" in output
            assert no_answer_written(channel)
            code, output = run("questions", "answer", request.id, "3", "--literal", cols=80)
            assert code == 0, output
            ending = live.wait(request.id, 10)
        assert ending is not None and asking.reply(ending).text == "3"


class TestAnswerJson:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_json_says_what_came_of_it(self, asker: Asker, cols: int) -> None:
        """`--json` on an answering command: one object with the answer and the outcome."""
        request = ApprovalGate(asker, timeout_s=60).file("ls", "/tmp")
        code, output = run("approvals", "approve", request.id, "--json", cols=cols)
        assert code == 0, output
        report = json.loads(output)
        assert (report["id"], report["kind"], report["won"], report["asker"]) == (
            request.id,
            "command",
            True,
            "settled",
        )
        assert report["answer"]["decision"] == "once" and report["answer"]["via"] == "cli"
        assert (report["outcome"], report["settled"]["decision"]) == ("answered", "once")


class TestSaid:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_already_answered_by_you(self, channel: Channel, server: ServerLock, cols: int) -> None:
        """A second answer is refused saying the first was given "by you" (your own name is
        not repeated back to you)."""
        request = command(server)
        channel.file(request)
        channel.answer(request.id, "no", kind=Kind.COMMAND, via="tui")
        code, output = run("approvals", "approve", request.id, cols=cols)
        assert code == 1 and "already answered 'no' by you (via tui" in " ".join(output.split())

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_session_scope_says_what_it_covers(self, home: Path, asker: Asker, cols: int) -> None:
        """A session approval says what it covers: for `wisp approvals request` (which asks
        once) this request only; for a long-lived asker, the same command while it runs."""
        one_shot = AskingCommand("approvals", "request", "--timeout", "60", "--", "ls")
        code, output = run("approvals", "approve", one_shot.id, "--scope", "session", cols=cols)
        flat = " ".join(output.split())
        assert code == 0 and "so it approves this request only" in flat
        code, out, err = one_shot.result()
        assert (code, out.strip()) == (0, "approved session")
        assert "this request only" in err
        request = ApprovalGate(asker, timeout_s=60).file("make test", "/srv")
        code, output = run("approvals", "approve", request.id, "--scope", "session", cols=cols)
        flat = " ".join(output.split())
        assert code == 0 and "lets agent (pid" in flat and "until it stops" in flat

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_ctrl_c_while_the_answer_waits(
        self, home: Path, channel: Channel, server: ServerLock, cols: int
    ) -> None:
        """Ctrl-C while waiting for an asker that has not picked the answer up: it says the
        answer was recorded and stands (exit 0), and it does stand."""
        (home / "config.json").write_text(json.dumps({"answer": {"waitSeconds": 60}}))
        request = command(server)  # a live server that never settles: the wait goes on
        channel.file(request)
        child = spawn("approvals", "approve", request.id, cols=cols)
        try:
            wait_until(lambda: channel.status(request.id).answer is not None, what="the answer")
            child.sendintr()
            child.expect(pexpect.EOF)
        finally:
            child.close()
        said = " ".join((child.before or "").split())
        assert child.exitstatus == 0, said
        assert f"your answer to {request.id} was recorded and stands" in said
        assert channel.status(request.id).state is State.ANSWERED
