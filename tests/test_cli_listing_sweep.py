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
