"""A listing sweeps first: what it lists as waiting never holds what its own sweep ended."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import BUILDERS, audit_records, run_wisp, wisp_command

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


def endings_in_log(home: Path, request_id: str) -> list[dict[str, object]]:
    """The records of *request_id*'s ending in the audit log."""
    return [
        r
        for r in audit_records(home)
        if r.get("id") == request_id and r["event"] in ("approval.settled", "approval.withdrawn")
    ]


class TestTheSweepAuditsWhatItEnds:
    """ADR 0048, DESIGN.md: every ending is audited, by whoever settles; a request a sweep
    ends as stale gets its `approval.settled … outcome stale`, once."""

    @pytest.mark.parametrize(
        "sweeper", [("pending",), ("pending", "sweep"), ("questions", "pending")]
    )
    def test_wisp_log_shows_the_stale_ending(
        self, channel: Channel, home: Path, sweeper: tuple[str, ...]
    ) -> None:
        """Control: a request whose asker lives is not ended, and nothing of an ending is
        logged. Once its asker stopped, the first listing (or `wisp pending sweep`) ends it
        stale and `wisp log --request ID` shows `approval.settled … stale`, by the sweep."""
        with channel.server() as lock:
            request = BUILDERS[Kind.QUESTION](lock)
            channel.file(request)
            assert run_wisp(*sweeper).returncode == 0
            assert channel.status(request.id).state is State.FILED
            assert endings_in_log(home, request.id) == []
        out = run_wisp(*sweeper)
        assert out.returncode == 0, out.stderr
        (ending,) = endings_in_log(home, request.id)
        assert ending["event"] == "approval.settled"
        assert (ending["outcome"], ending["by"]) == ("stale", "sweep")
        assert "has stopped" in str(ending["outcomeReason"])
        for option in ("--request", "--id"):
            log = run_wisp("log", option, request.id, env={"COLUMNS": "200"})
            assert log.returncode == 0, log.stderr
            (last,) = [line for line in log.stdout.splitlines() if "approval.settled" in line]
            assert f"approval.settled  {request.id}  question  stale" in last, log.stdout

    def test_racing_listings_audit_each_ending_once(self, channel: Channel, home: Path) -> None:
        """Six listings and sweeps started at once over twelve stale requests: each request
        is ended by one of them and audited exactly once."""
        with channel.server() as lock:
            requests = [BUILDERS[Kind.COMMAND](lock) for _ in range(12)]
            for request in requests:
                channel.file(request)
        sweepers = [("pending", "--json"), ("pending", "sweep"), ("approvals", "pending")] * 2
        procs = [
            subprocess.Popen(
                wisp_command(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            for args in sweepers
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        for request in requests:
            assert channel.status(request.id).state is State.SETTLED
            (ending,) = endings_in_log(home, request.id)
            assert ending["outcome"] == "stale"


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
