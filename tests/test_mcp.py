"""`wisp mcp` over the wire: the SDK's own client against the server as a real subprocess, with
answers given from real pseudo-terminals (`wisp approvals approve ID`, `wisp facts keep ID`)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from helpers import audit_records, in_terminal, wait_until
from mcp_harness import Wire, recorder, server_pid, stop, text_of, wisp_mcp

from pending import Channel, State
from wisp import FactStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return recorder(tmp_path)[0]


@pytest.fixture
def notify_log(tmp_path: Path, bin_dir: Path) -> Path:
    return tmp_path / "notify-send.jsonl"


@pytest.fixture
async def wire(home: Path, bin_dir: Path) -> AsyncIterator[Wire]:
    async with wisp_mcp(home, bin_dir) as w:
        yield w


async def terminal(*args: str) -> tuple[int, str]:
    """`wisp ARGS` in a real pseudo-terminal, as the person runs it, off the event loop."""
    return await anyio.to_thread.run_sync(lambda: in_terminal(*args))


async def ask_to_keep(wire: Wire, value: str = "BLUE HERON") -> tuple[str, str]:
    """Record a thread fact and ask the person to keep it: (fact id, request id)."""
    fact = await wire.data("record_fact", subject="release", name="codename", value=value)
    asked = await wire.data("set_fact_scope", fact=fact["id"], scope="permanent")
    assert asked["state"] == "pending"
    return fact["id"], asked["id"]


class TestFacts:
    async def test_record_move_and_read(self, wire: Wire) -> None:
        """record_fact makes a thread fact (c…); set_fact_scope moves it to the session (s…)
        and back; wisp://facts/{id} shows it, the old id still leading to it."""
        fact = await wire.data("record_fact", subject="release", name="codename", value="HERON")
        assert fact["id"].startswith("c") and fact["scope"] == "thread"
        assert fact["uri"] == f"wisp://facts/{fact['id']}"
        assert fact["notifications"] == []
        session = await wire.data("set_fact_scope", fact=fact["id"], scope="session")
        assert session["id"].startswith("s") and session["was"] == fact["id"]
        shown = await wire.read(session["uri"])
        assert (shown["value"], shown["scope"], shown["request"]) == ("HERON", "session", None)
        back = await wire.data("set_fact_scope", fact=fact["id"], scope="thread")
        assert back["id"].startswith("c") and back["was"] == session["id"]
        again = await wire.call("set_fact_scope", fact=back["id"], scope="thread")
        assert not again.is_error and "already a thread fact" in text_of(again)

    async def test_permanent_returns_at_once_and_is_kept_from_a_terminal(
        self, wire: Wire, home: Path, notify_log: Path
    ) -> None:
        """permanent files a fact request and returns pending at once (no time limit), posting
        one notification (source approval); asking again returns the same request and posts
        nothing; `wisp facts keep ID` in a pty keeps it while the server runs, and the fact's
        resource shows `kept` with the permanent fact's id."""
        await wire.client.subscribe_resource("wisp://facts/proposed")
        fact = await wire.data("record_fact", subject="release", name="codename", value="HERON")
        asked = await wire.data("set_fact_scope", fact=fact["id"], scope="permanent")
        request_id = asked["id"]
        assert (asked["state"], asked["uri"], asked["new"]) == ("pending", fact["uri"], True)
        assert [(n["source"], n["posted"], n["route"]) for n in asked["notifications"]] == [
            ("approval", True, "desktop")
        ]
        with Channel.open(home) as channel:
            assert channel.status(request_id).request.expires_at is None  # no time limit
        again = await wire.data("set_fact_scope", fact=fact["id"], scope="permanent")
        assert (again["id"], again["new"], again["notifications"]) == (request_id, False, [])
        assert len(notify_log.read_text().splitlines()) == 1
        proposed = (await wire.read("wisp://facts/proposed"))["proposed"]
        assert [(p["id"], p["request"]["id"], p["request"]["state"]) for p in proposed] == [
            (fact["id"], request_id, "pending")
        ]
        before = len(wire.inbox.updated())
        code, output = await terminal("facts", "keep", request_id)
        assert code == 0, output
        kept = FactStore(home).list()
        assert [(k.value, k.request) for k in kept] == [("HERON", request_id)]
        await wire.inbox.wait_for(
            lambda: "wisp://facts/proposed" in wire.inbox.updated()[before:], "an update"
        )
        shown = await wire.read(fact["uri"])
        assert shown["request"]["state"] == "kept"
        assert shown["request"]["permanent"] == kept[0].id
        assert (await wire.read("wisp://facts/proposed"))["proposed"] == []
        permanent = await wire.read("wisp://facts/permanent")
        assert [f["id"] for f in permanent["facts"]] == [kept[0].id]
        assert (await wire.read(f"wisp://facts/{kept[0].id}"))["value"] == "HERON"
        settled = [r for r in audit_records(home) if r["event"] == "approval.settled"]
        assert settled[-1]["delivery"] == "watched" and settled[-1]["entryPoint"] == "mcp"

    async def test_dropped_then_refused_again(self, wire: Wire) -> None:
        """A drop leaves the fact in its thread and is remembered: asking again is refused
        with the drop's date and request."""
        fact_id, request_id = await ask_to_keep(wire)
        code, output = await terminal("facts", "drop", request_id)
        assert code == 0, output

        async def dropped() -> bool:
            return (await wire.read(f"wisp://facts/{fact_id}"))["request"]["state"] == "dropped"

        with anyio.fail_after(20):
            while not await dropped():
                await wire.inbox.wait_for(lambda: wire.inbox.items, "anything")
                wire.inbox.items.clear()
        refused = await wire.call("set_fact_scope", fact=fact_id, scope="permanent")
        assert refused.is_error
        assert "dropped" in text_of(refused) and request_id in text_of(refused)

    async def test_a_permanent_fact_is_refused_whatever_the_target(
        self, wire: Wire, home: Path
    ) -> None:
        """p… facts are the person's: every move is refused, saying so."""
        for scope in ("thread", "session", "permanent"):
            refused = await wire.call("set_fact_scope", fact="p1a2b3c4", scope=scope)
            assert refused.is_error
            assert "person" in text_of(refused) and "terminal" in text_of(refused)
            assert refused.structured_content is not None
            assert refused.structured_content["notifications"] == []

    async def test_bad_arguments_are_tool_errors(self, wire: Wire) -> None:
        """Unknown fact, wrong scope, empty or huge strings: tool errors with a message; the
        server carries on."""
        unknown = await wire.call("set_fact_scope", fact="c999", scope="session")
        assert unknown.is_error and "no fact 'c999'" in text_of(unknown)
        wrong = await wire.call("set_fact_scope", fact="c1", scope="forever")
        assert wrong.is_error and "permanent" in text_of(wrong)
        empty = await wire.call("record_fact", subject=" ", name="n", value="v")
        assert empty.is_error and "subject is empty" in text_of(empty)
        huge = await wire.call("record_fact", subject="s", name="n", value="x" * 100_000)
        assert huge.is_error and "at most 2000" in text_of(huge)
        fine = await wire.data("record_fact", subject="s", name="n", value="v")
        assert fine["id"].startswith("c")


class TestNotify:
    async def test_posted_via_a_route_never_the_terminal(
        self, wire: Wire, notify_log: Path, home: Path
    ) -> None:
        """notify posts through the first route that works (here the desktop's), never the
        terminal even with Ghostty named; the result lists it."""
        result = await wire.call("notify", title="Build", message="finished")
        assert not result.is_error and text_of(result) == "notification posted via desktop"
        assert result.structured_content is not None
        assert [n["route"] for n in result.structured_content["notifications"]] == ["desktop"]
        assert json.loads(notify_log.read_text().splitlines()[0])[-2:] == ["Build", "finished"]
        note = [r for r in audit_records(home) if r["event"] == "notification"][-1]
        assert any("MCP client owns the terminal" in s for s in note["skipped"])

    async def test_refusals_say_why(self, home: Path, bin_dir: Path) -> None:
        """Empty message, the off switch, and the per-minute limit: `error: notification not
        shown: <reason>`."""
        (home).mkdir(parents=True, exist_ok=True)
        (home / "config.json").write_text(json.dumps({"notifications": {"perMinute": 1}}))
        async with wisp_mcp(home, bin_dir) as wire:
            empty = await wire.call("notify", title="t", message="  ")
            assert empty.is_error
            assert text_of(empty) == "error: notification not shown: the message is empty"
            first = await wire.call("notify", title="t", message="one")
            assert not first.is_error
            second = await wire.call("notify", title="t", message="two")
            assert second.is_error and "per-minute limit" in text_of(second)
        (home / "config.json").write_text(json.dumps({"notifications": {"enabled": False}}))
        async with wisp_mcp(home, bin_dir) as wire:
            off = await wire.call("notify", title="t", message="m")
            assert off.is_error and "notifications are off" in text_of(off)


class TestStopping:
    async def test_eof_hands_fact_requests_over(self, home: Path, bin_dir: Path) -> None:
        """The client goes (EOF): the server's fact request stays, handed over, and a later
        `wisp facts keep ID` from a terminal applies it."""
        async with wisp_mcp(home, bin_dir) as wire:
            _, request_id = await ask_to_keep(wire)
            pid = server_pid(home, request_id)
        wait_until(lambda: not _alive(pid), what="the server to exit")
        with Channel.open(home) as channel:
            assert channel.status(request_id).state is State.HANDED_OVER
        code, output = await terminal("facts", "keep", request_id)
        assert code == 0, output
        assert [k.request for k in FactStore(home).list()] == [request_id]
        handed = [r for r in audit_records(home) if r.get("outcome") == "handed-over"]
        assert [r["id"] for r in handed] == [request_id]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0): it has exited all the same.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


__all__ = ["stop"]
