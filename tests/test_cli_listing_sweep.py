"""A listing sweeps first: what it lists as waiting never holds what its own sweep ended."""

from __future__ import annotations

import json

import pytest
from helpers import BUILDERS, run_wisp

from pending import Channel, Decision, Kind, Request, State, Via

GROUPS = {
    Kind.COMMAND: "approvals",
    Kind.FACT: "facts",
    Kind.QUESTION: "questions",
    Kind.TOOL: "tools",
}


def ended_by_the_sweep(channel: Channel, kind: Kind) -> Request:
    """A request the next sweep ends: stale (its asker stopped), or for a fact, answered
    `keep` with its asker gone (the sweep applies it; a fact never goes stale)."""
    with channel.server() as lock:
        request = BUILDERS[kind](lock)
        channel.file(request)
        if kind is Kind.FACT:
            channel.answer(request.id, Decision.KEEP, kind=kind, via=Via.CLI)
    return request


class TestListingAfterItsSweep:
    @pytest.mark.parametrize("kind", list(Kind))
    @pytest.mark.parametrize("group", [True, False], ids=["group", "pending"])
    def test_json_never_lists_what_it_ended(
        self, channel: Channel, kind: Kind, group: bool
    ) -> None:
        """`wisp GROUP pending --json` and `wisp pending --json`, the first time after the
        asker stopped, do not list the request their sweep ended; `--all` shows it ended."""
        request = ended_by_the_sweep(channel, kind)
        listing = [GROUPS[kind], "pending"] if group else ["pending"]
        out = run_wisp(*listing, "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == []
        assert channel.status(request.id).state is State.SETTLED
        out = run_wisp(*listing, "--all", "--json")
        (row,) = json.loads(out.stdout)
        assert (row["id"], row["state"]) == (request.id, "settled")
        if kind is not Kind.FACT:
            assert row["outcome"] == "stale" and "has stopped" in row["reason"]

    @pytest.mark.parametrize("kind", list(Kind))
    def test_people_are_not_shown_it_waiting(self, channel: Channel, kind: Kind) -> None:
        """For people too: the listing says nothing waits; `--all` shows the request ended,
        a stale one with why."""
        request = ended_by_the_sweep(channel, kind)
        out = run_wisp(GROUPS[kind], "pending", env={"COLUMNS": "200"})
        assert out.returncode == 0, out.stderr
        assert request.id not in out.stdout and "Nothing waits" in out.stdout
        out = run_wisp(GROUPS[kind], "pending", "--all", env={"COLUMNS": "200"})
        assert request.id in out.stdout
        if kind is not Kind.FACT:
            assert "stale" in out.stdout and "has stopped" in out.stdout


class TestAnEmptyChannel:
    """The listing of an empty channel, read without opening it, says what the listing that
    opens and sweeps the channel says when it has nothing to show: byte for byte."""

    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (("pending",), "Nothing waits for you (anything).\n"),
            (("pending", "--json"), "[]\n"),
            (("pending", "--all"), "Nothing waits for you (anything).\n"),
            (("pending", "--kind", "question"), "Nothing waits for you (question).\n"),
            (("approvals", "pending"), "Nothing waits for you (command).\n"),
            (("approvals", "pending", "--all", "--json"), "[]\n"),
            (("facts", "pending", "-n", "3"), "Nothing waits for you (fact).\n"),
            (("questions", "pending", "--limit", "0"), "Nothing waits for you (question).\n"),
            (("tools", "pending"), "Nothing waits for you (tool).\n"),
        ],
        ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
    )
    def test_as_the_listing_that_opens_the_channel(
        self, channel: Channel, args: tuple[str, ...], said: str
    ) -> None:
        """The same status, output and (no) error as with a writer's fresh temp file in the
        channel, for which the listing opens the channel and sweeps it (and leaves the
        file: it is younger than an hour; test_cli_imports checks that it loads the records)."""
        empty = run_wisp(*args)
        temp = channel.path / ".tmp" / "0123456789abcdef.request.json.tmp"
        temp.write_text("")
        opened = run_wisp(*args)
        assert (empty.returncode, empty.stdout, empty.stderr) == (0, said, "")
        assert (opened.returncode, opened.stdout, opened.stderr) == (0, said, "")
        assert temp.exists()
