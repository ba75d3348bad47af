"""`wisp mcp` over the wire: the SDK's own client against the server as a real subprocess, with
answers given from real pseudo-terminals (`wisp approvals approve ID`, `wisp facts keep ID`)."""

from __future__ import annotations

import getpass
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from helpers import audit_records, in_terminal, read_line, running, server_pid, wait_until
from mcp import MCPError
from mcp_harness import (
    Wire,
    in_flight,
    recorder,
    server_env,
    stop,
    text_of,
    wisp_mcp,
    wisp_mcp_command,
)

from pending import Channel, FactBinding, Kind, Outcome, State
from wisp import FactStore

pytestmark = [
    pytest.mark.anyio,
    # Handshake-era subscriptions are what most clients use today; the SDK's client warns
    # (MCPDeprecationWarning, a UserWarning) that the 2026 protocol replaces them. We test
    # both eras on purpose.
    pytest.mark.filterwarnings("ignore:resources/subscribe is removed:UserWarning"),
    pytest.mark.filterwarnings("ignore:resources/unsubscribe is removed:UserWarning"),
]


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
        with pytest.raises(MCPError, match="no fact 'c999'"):
            await wire.read("wisp://facts/c999")

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

    async def test_the_announcement_keeps_the_facts_own_source(
        self, wire: Wire, home: Path
    ) -> None:
        """The `notification` record announcing a fact request says the notification's
        source (`approval`) and keeps the fact's own (`mcp record_fact`) as `requestSource`."""
        _fact, request_id = await ask_to_keep(wire)
        (note,) = [
            r
            for r in audit_records(home)
            if r["event"] == "notification" and r.get("id") == request_id
        ]
        assert (note["source"], note["requestSource"]) == ("approval", "mcp record_fact")

    async def test_resources_show_the_conflict_record_fact_said(
        self, wire: Wire, home: Path
    ) -> None:
        """A fact the person's permanent facts contradict: wisp://facts/{id} and
        wisp://facts/proposed show `conflict` as record_fact's result does."""
        binding = FactBinding(
            fact_id="c0",
            subject="release",
            name="codename",
            value="RED KITE",
            source="chat",
            proposed_by="model",
        )
        FactStore(home).keep(binding, request="0123456789abcdef", via="cli")
        recorded = await wire.data("record_fact", subject="release", name="codename", value="X")
        assert [c["value"] for c in recorded["conflict"]] == ["RED KITE"]
        shown = await wire.read(recorded["uri"])
        assert shown["conflict"] == recorded["conflict"]
        await wire.data("set_fact_scope", fact=recorded["id"], scope="permanent")
        (proposed,) = (await wire.read("wisp://facts/proposed"))["proposed"]
        assert proposed["conflict"] == recorded["conflict"]
        plain = await wire.data("record_fact", subject="other", name="codename", value="X")
        assert "conflict" not in plain and "conflict" not in await wire.read(plain["uri"])

    async def test_each_move_is_one_scope_change_by_the_caller(
        self, wire: Wire, home: Path
    ) -> None:
        """Moving a fact to the session and back writes one `fact.scope.changed` each (by
        `caller`, from and to, the old id as `fact` and the new as `moved`); a move to
        where it already is writes none."""
        fact = await wire.data("record_fact", subject="release", name="codename", value="HERON")
        session = await wire.data("set_fact_scope", fact=fact["id"], scope="session")
        back = await wire.data("set_fact_scope", fact=session["id"], scope="thread")
        await wire.data("set_fact_scope", fact=back["id"], scope="thread")
        changes = [r for r in audit_records(home) if r["event"] == "fact.scope.changed"]
        assert [(r["fact"], r["moved"], r["from"], r["to"], r["by"]) for r in changes] == [
            (fact["id"], session["id"], "thread", "session", "caller"),
            (session["id"], back["id"], "session", "thread", "caller"),
        ]
        assert all(r["entryPoint"] == "mcp" and r["value"] == "HERON" for r in changes)

    async def test_a_fact_asked_about_keeps_its_id_until_answered(self, wire: Wire) -> None:
        """While its keep request waits a fact cannot move (the request names its id, and a
        keep must apply to what the person was shown): a tool error naming the request;
        once the person has answered, it moves."""
        fact_id, request_id = await ask_to_keep(wire)
        refused = await wire.call("set_fact_scope", fact=fact_id, scope="session")
        said = text_of(refused)
        assert refused.is_error and request_id in said and "until they answer" in said, said
        uri = f"wisp://facts/{fact_id}"
        assert (await wire.read(uri))["scope"] == "thread"
        await wire.client.subscribe_resource(uri)
        code, output = await terminal("facts", "drop", request_id)
        assert code == 0, output
        while True:  # until the server has settled the drop
            seen = len(wire.inbox.updated())
            if (await wire.read(uri))["request"]["state"] == "dropped":
                break
            await wire.inbox.update_after(seen)
        moved = await wire.data("set_fact_scope", fact=fact_id, scope="session")
        assert moved["id"].startswith("s") and moved["was"] == fact_id

    async def test_dropped_then_refused_again(self, wire: Wire) -> None:
        """A drop leaves the fact in its thread and is remembered: asking again is refused
        with the drop's date and request."""
        fact_id, request_id = await ask_to_keep(wire)
        uri = f"wisp://facts/{fact_id}"
        await wire.client.subscribe_resource(uri)
        code, output = await terminal("facts", "drop", request_id)
        assert code == 0, output

        with anyio.fail_after(20):
            while True:  # each update is a hint: read again
                seen = len(wire.inbox.updated())
                shown = await wire.read(uri)
                if shown["request"]["state"] == "dropped":
                    break
                await wire.inbox.update_after(seen)
        assert (shown["id"], shown["scope"], shown["value"]) == (fact_id, "thread", "BLUE HERON")
        refused = await wire.call("set_fact_scope", fact=fact_id, scope="permanent")
        assert refused.is_error
        assert "dropped" in text_of(refused) and request_id in text_of(refused)
        awaited = await wire.data("await_request", id=request_id)  # a fact's: at once
        assert (awaited["id"], awaited["state"], awaited["via"]) == (request_id, "dropped", "cli")

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


def elicitation(action: str, content: dict[str, Any] | None = None) -> Any:
    """A client whose person answers every dialog with *action*; the dialogs it was shown."""
    shown: list[types.ElicitRequestParams] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.append(params)
        return types.ElicitResult(action=action, content=content)

    answer.shown = shown  # type: ignore[attr-defined]
    return answer


class TestFactsProposed:
    """ADR 0048: the results where the caller learns of its facts say how many wait for the
    person to keep them (`structuredContent.factsProposed`: `count` for the server, `thread`
    for this thread, `uri`), so the calling agent can mention them."""

    async def test_counts_follow_what_waits(self, wire: Wire) -> None:
        """Control: nothing asked about, nothing proposed (`count` 0, no words about it).
        A thread fact and a session fact asked about: both counted for the server, one for
        this thread, on record_fact, set_fact_scope and await_request alike, and said in
        words; the session fact's request answered (dropped), it no longer counts."""
        none = {"count": 0, "thread": 0, "uri": "wisp://facts/proposed"}
        first = await wire.call("record_fact", subject="release", name="codename", value="HERON")
        assert first.structured_content["factsProposed"] == none
        assert "proposed" not in text_of(first)
        session = await wire.data(
            "set_fact_scope", fact=first.structured_content["id"], scope="session"
        )
        assert session["factsProposed"] == none
        asked = await wire.data("set_fact_scope", fact=session["id"], scope="permanent")
        assert asked["factsProposed"] == {**none, "count": 1}
        _, in_thread = await ask_to_keep(wire, "RED KITE")
        both = {**none, "count": 2, "thread": 1}
        recorded = await wire.call("record_fact", subject="a", name="b", value="c")
        assert recorded.structured_content["factsProposed"] == both
        assert "2 proposed facts (1 of this thread's) wait" in text_of(recorded)
        assert "wisp://facts/proposed" in text_of(recorded)
        awaited = await wire.data("await_request", id=in_thread)
        assert (awaited["state"], awaited["factsProposed"]) == ("pending", both)
        code, output = await terminal("facts", "drop", asked["id"])
        assert code == 0, output
        after = await wire.data("await_request", id=asked["id"])
        assert (after["state"], after["factsProposed"]) == (
            "dropped",
            {**none, "count": 1, "thread": 1},
        )


class TestApprovals:
    async def test_approved_from_a_terminal(self, wire: Wire, home: Path) -> None:
        """request_approval waits; `wisp approvals approve ID` in a pty answers; the result
        says approved once, by whom, via cli; progress named the request meanwhile."""
        async with in_flight(
            wire, "request_approval", command="make deploy", cwd="/srv/shop", wait_seconds=30
        ) as call:
            code, output = await terminal("approvals", "approve", call.id)
            assert code == 0, output
            result = await call.returned()
        data = result.structured_content
        assert data is not None and not result.is_error
        assert (data["id"], data["state"], data["approved"]) == (call.id, "ended", True)
        assert (data["outcome"], data["decision"], data["scope"]) == ("answered", "once", "once")
        assert (data["via"], data["answeredBy"]) == (
            "cli",
            os.environ.get("USER") or data["answeredBy"],
        )
        assert [n["source"] for n in data["notifications"]] == ["approval"]
        assert "approved (once)" in text_of(result)
        assert call.progress and f"wisp approvals approve {call.id}" in (call.progress[0] or "")

    async def test_denied_from_a_terminal(self, wire: Wire) -> None:
        """A denial with a reason: not approved, the reason passed on, told not to run it."""
        async with in_flight(
            wire, "request_approval", command="rm -rf build", wait_seconds=30
        ) as call:
            code, output = await terminal("approvals", "deny", call.id, "--reason", "not today")
            assert code == 0, output
            result = await call.returned()
        data = result.structured_content
        assert data is not None
        assert (data["approved"], data["decision"], data["reason"]) == (False, "no", "not today")
        assert "Do not run it" in text_of(result)

    async def test_pending_then_awaited_with_progress(self, wire: Wire) -> None:
        """No answer within wait_seconds: state pending with the id (progress sent while it
        waited); answered later from a terminal; await_request returns the answer."""
        progress: list[str | None] = []

        async def seen(value: float, total: float | None, message: str | None) -> None:
            progress.append(message)

        result = await wire.call(
            "request_approval", command="make test", wait_seconds=5.5, _progress=seen
        )
        data = result.structured_content
        assert data is not None and not result.is_error
        assert (data["state"], data["approved"]) == ("pending", False)
        request_id = data["id"]
        assert len(progress) >= 2  # one at once, one PROGRESS_EVERY_S later
        assert "await_request" in text_of(result)
        waiting = await wire.read("wisp://pending")
        assert [r["id"] for r in waiting["requests"]] == [request_id]
        code, output = await terminal("approvals", "approve", request_id, "--scope", "session")
        assert code == 0, output
        awaited = await wire.data("await_request", id=request_id, wait_seconds=20)
        assert (awaited["state"], awaited["approved"], awaited["scope"]) == (
            "ended",
            True,
            "session",
        )
        again = await wire.data("await_request", id=request_id, wait_seconds=0)
        assert again["decision"] == "session"  # an ended request stays known
        assert (await wire.read("wisp://pending"))["requests"] == []

    @pytest.mark.parametrize(
        ("tool", "arguments", "answer"),
        [
            ("request_approval", {"command": "make x"}, ("approvals", "deny")),
            ("ask_person", {"question": "Which?"}, ("questions", "answer", "staging")),
        ],
        ids=["command", "question"],
    )
    async def test_pending_and_ended_results_have_one_shape(
        self, wire: Wire, tool: str, arguments: dict[str, Any], answer: tuple[str, ...]
    ) -> None:
        """A pending result carries every field the ended one does (null until it ends; a
        command's `command` as asked), plus `expiresAt` and `answerWith`; both carry the
        `notifications` array (docs/mcp.md's result table)."""
        pending = await wire.data(tool, **arguments, wait_seconds=0)
        assert pending["state"] == "pending"
        code, output = await terminal(answer[0], answer[1], pending["id"], *answer[2:])
        assert code == 0, output
        ended = await wire.data("await_request", id=pending["id"], wait_seconds=20)
        assert ended["state"] == "ended"
        assert set(pending) == set(ended) | {"expiresAt", "answerWith"}
        assert pending["reason"] is None and isinstance(pending["notifications"], list)
        if tool == "request_approval":
            assert (pending["command"], pending["grant"]) == ("make x", None)
        else:
            assert (pending["answer"], ended["answer"]) == (None, "staging")

    async def test_a_cancelled_call_leaves_the_request_waiting(
        self, wire: Wire, home: Path
    ) -> None:
        """The client cancels the call: it stops waiting, the request waits on; once
        answered, await_request returns the answer."""
        async with in_flight(
            wire, "request_approval", command="make lint", wait_seconds=60
        ) as call:
            call.cancel()
        assert call.result is None
        with Channel.open(home) as channel:
            assert channel.status(call.id).state is State.FILED
        code, output = await terminal("approvals", "approve", call.id)
        assert code == 0, output
        awaited = await wire.data("await_request", id=call.id, wait_seconds=20)
        assert (awaited["approved"], awaited["via"]) == (True, "cli")

    async def test_a_grant_answers_at_once(self, wire: Wire, notify_log: Path) -> None:
        """Approved `always` once; asked again, a grant approves at once without asking
        (no request filed, no notification)."""
        async with in_flight(wire, "request_approval", command="make fmt", wait_seconds=30) as call:
            code, output = await terminal("approvals", "approve", call.id, "--scope", "always")
            assert code == 0, output
            first = await call.returned()
        assert first.structured_content is not None
        assert first.structured_content["grant"].startswith("g")
        posted = len(notify_log.read_text().splitlines())
        again = await wire.data("request_approval", command="make fmt", wait_seconds=30)
        assert (again["outcome"], again["approved"], again["scope"], again["id"]) == (
            "granted",
            True,
            "always",
            None,
        )
        assert again["notifications"] == [] and len(notify_log.read_text().splitlines()) == posted

    async def test_bad_arguments(self, wire: Wire) -> None:
        """Empty or huge commands, relative cwd, waits that are negative, too long or not
        finite, malformed or unknown ids: tool errors, and the server carries on."""
        cases = [
            ({"command": "   "}, "command is empty"),
            ({"command": "x" * 100_000}, "at most 4096"),
            ({"command": "ls", "cwd": "relative/dir"}, "absolute"),
            ({"command": "ls", "cwd": "/tmp\u0000x"}, "cwd holds a NUL"),
            ({"command": "ls\u0000; rm -rf ~"}, "command holds a NUL"),
            ({"command": "ls", "wait_seconds": -1}, "finite"),
            ({"command": "ls", "wait_seconds": 1e9}, "at most 3600"),
            ({"command": "ls", "wait_seconds": "soon"}, "must be a number"),
            ({"command": "ls", "wait_seconds": 3600.0001}, "wait_seconds is 3600.0001; at most"),
        ]
        for arguments, said in cases:
            result = await wire.call("request_approval", **arguments)
            assert result.is_error and said in text_of(result), (arguments, text_of(result))
        for bad_id, said in [("../../etc", "not a request id"), ("0123456789abcdef", "not a")]:
            result = await wire.call("await_request", id=bad_id)
            assert result.is_error and said in text_of(result)
        fine = await wire.data("request_approval", command="ls", wait_seconds=0)
        assert fine["state"] == "pending"

    async def test_a_non_finite_wait_is_refused(self, wire: Wire) -> None:
        """A wait that is not a finite number is refused as a tool error, never a crash; as
        text ("1e999", "NaN") it is not a number at all. (The SDK's client turns float
        infinities into null; the raw wire test below sends the number itself.)"""
        for value in ("1e999", "NaN", "-inf"):
            result = await wire.call("request_approval", command="ls", wait_seconds=value)
            assert result.is_error and "must be a number" in text_of(result), text_of(result)
        fine = await wire.data("notify", title="still", message="alive")
        assert fine["posted"] is True

    async def test_no_lax_coercion(self, wire: Wire, home: Path) -> None:
        """wait_seconds is a JSON number and free_text a JSON boolean: true, false, "0",
        "yes", 1, "off" are tool errors saying so, and nothing is filed."""
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("request_approval", {"command": "ls", "wait_seconds": True}, "must be a number"),
            ("request_approval", {"command": "ls", "wait_seconds": False}, "must be a number"),
            ("request_approval", {"command": "ls", "wait_seconds": "0"}, "must be a number"),
            ("await_request", {"id": "0123456789abcdef", "wait_seconds": "0"}, "must be a number"),
        ]
        for value in ("yes", 1, "off"):
            arguments = {"question": "q", "options": ["a"], "free_text": value, "wait_seconds": 0}
            cases.append(("ask_person", arguments, "free_text must be true or false"))
        for tool, arguments, said in cases:
            result = await wire.call(tool, **arguments)
            assert result.is_error and said in text_of(result), (arguments, text_of(result))
        with Channel.open(home) as channel:
            assert channel.listing().statuses == ()

    def test_raw_wire_numbers_and_stdout_holds_only_protocol(
        self, home: Path, bin_dir: Path
    ) -> None:
        """Raw JSON-RPC, as any client may send it: `1e999` as a number is refused; every
        line the server writes to stdout is a JSON-RPC message."""
        process = subprocess.Popen(
            wisp_mcp_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(home, bin_dir),
        )
        assert process.stdin is not None and process.stdout is not None
        lines = [
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval",'
            '"arguments":{"command":"ls","wait_seconds":1e999}}}',
        ]
        try:
            process.stdin.write(("\n".join(lines) + "\n").encode())
            process.stdin.flush()
            replies = [json.loads(read_line(process.stdout)) for _ in range(2)]
            process.stdin.close()  # EOF: the server stops
            rest = process.stdout.read()
            assert process.wait(timeout=20) == 0
        finally:
            process.kill()
            process.wait()
        assert [r["id"] for r in replies] == [1, 2]
        assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines())
        result = replies[1]["result"]
        assert result["isError"] is True and "finite" in result["content"][0]["text"]


class TestSchema:
    async def test_limits_are_declared_and_refused_in_wisps_words(self, wire: Wire) -> None:
        """tools/list shows every tool's limits (maxLength, maxItems, minimum, maximum), so a
        client sees them before it calls; an argument beyond one is a tool error in wisp's
        words (with structuredContent.error), never the SDK's validation text."""
        tools = {t.name: t.input_schema for t in (await wire.client.list_tools()).tools}
        assert set(tools) == {
            "record_fact",
            "set_fact_scope",
            "request_approval",
            "ask_person",
            "await_request",
            "notify",
            "permission_prompt",
        }
        prompt = tools["permission_prompt"]
        assert prompt["required"] == ["tool_name", "input"]
        assert prompt["properties"]["tool_name"]["maxLength"] == 256
        assert prompt["properties"]["input"]["type"] == "object"
        approval = tools["request_approval"]["properties"]
        assert approval["command"]["maxLength"] == 4096
        assert (approval["wait_seconds"]["minimum"], approval["wait_seconds"]["maximum"]) == (
            0,
            3600,
        )
        (options, _null) = tools["ask_person"]["properties"]["options"]["anyOf"]
        assert (options["maxItems"], options["items"]["maxLength"]) == (20, 200)
        assert tools["record_fact"]["properties"]["value"]["maxLength"] == 2000
        result = await wire.call("ask_person", question="q", options=["x" * 300])
        said = text_of(result)
        assert result.is_error and said.startswith("error: options[0] is 300 characters long")
        assert result.structured_content is not None
        assert result.structured_content["error"] == said.removeprefix("error: ")
        assert "Input should" not in said and "validation error" not in said


class TestQuestions:
    async def test_answered_from_a_terminal(self, wire: Wire) -> None:
        """ask_person with options; `wisp questions answer ID staging` answers it."""
        async with in_flight(
            wire, "ask_person", question="Which environment?", options=["staging", "production"]
        ) as call:
            code, output = await terminal("questions", "answer", call.id, "staging")
            assert code == 0, output
            result = await call.returned()
        data = result.structured_content
        assert data is not None
        assert (data["outcome"], data["answer"], data["via"]) == ("answered", "staging", "cli")
        assert [n["source"] for n in data["notifications"]] == ["inquiry"]

    async def test_bad_questions(self, wire: Wire) -> None:
        """Empty question, too many or repeated options: tool errors."""
        for arguments, said in [
            ({"question": ""}, "question is empty"),
            ({"question": "q", "options": [str(i) for i in range(50)]}, "at most 20"),
            ({"question": "q", "options": ["a", "a"]}, "repeat"),
        ]:
            result = await wire.call("ask_person", **arguments)
            assert result.is_error and said in text_of(result)


class TestElicitation:
    async def test_accepted_in_the_dialog(self, home: Path, bin_dir: Path) -> None:
        """A client with elicitation gets a fieldless dialog; accept approves once, audited
        with via elicitation."""
        accept = elicitation("accept", {})
        async with wisp_mcp(home, bin_dir, elicit=accept) as wire:
            data = await wire.data("request_approval", command="make deploy", wait_seconds=30)
        assert (data["approved"], data["scope"], data["via"]) == (True, "once", "elicitation")
        (shown,) = accept.shown
        assert "make deploy" in shown.message
        fields = shown.requested_schema["properties"]
        assert fields["answer"]["enum"] == ["Approve once", "Deny"] and "reason" in fields
        answered = [r for r in audit_records(home) if r["event"] == "approval.answered"]
        assert [(r["via"], r["decision"], r["entryPoint"]) for r in answered] == [
            ("elicitation", "once", "mcp")
        ]

    async def test_denied_in_the_dialog_with_a_reason(self, home: Path, bin_dir: Path) -> None:
        """Deny chosen in the dialog, with a reason: not approved, and the agent is told
        the reason typed there."""
        deny = elicitation("accept", {"answer": "Deny", "reason": "use the staging box"})
        async with wisp_mcp(home, bin_dir, elicit=deny) as wire:
            data = await wire.data("request_approval", command="make deploy", wait_seconds=30)
        assert (data["approved"], data["decision"]) == (False, "no")
        assert "use the staging box" in json.dumps(data)

    async def test_declined_in_the_dialog(self, home: Path, bin_dir: Path) -> None:
        """Decline denies."""
        async with wisp_mcp(home, bin_dir, elicit=elicitation("decline")) as wire:
            data = await wire.data("request_approval", command="make deploy", wait_seconds=30)
        assert (data["approved"], data["decision"], data["via"]) == (False, "no", "elicitation")

    async def test_a_question_in_the_dialog(self, home: Path, bin_dir: Path) -> None:
        """A question's options become the dialog's choices; the choice is the answer."""
        choose = elicitation("accept", {"answer": "production"})
        async with wisp_mcp(home, bin_dir, elicit=choose) as wire:
            data = await wire.data(
                "ask_person", question="Where?", options=["staging", "production"]
            )
        assert (data["answer"], data["via"]) == ("production", "elicitation")
        (shown,) = choose.shown
        assert shown.requested_schema["properties"]["answer"]["enum"] == ["staging", "production"]

    async def test_choices_are_made_visible_and_answered_as_filed(
        self, home: Path, bin_dir: Path
    ) -> None:
        """Options holding control or bidi characters reach the dialog's `enum` made visible,
        as the question does; the choice, as shown, answers with the option as filed."""
        raw = "prod\x1b[31m\u202e"
        choose = elicitation("accept", {"answer": "prod⟨ESC⟩[31m⟨U+202E⟩"})
        async with wisp_mcp(home, bin_dir, elicit=choose) as wire:
            data = await wire.data("ask_person", question="Where\x07?", options=["dev", raw])
        assert (data["answer"], data["via"]) == (raw, "elicitation")
        (shown,) = choose.shown
        assert "Where⟨U+0007⟩?" in shown.message
        enum = shown.requested_schema["properties"]["answer"]["enum"]
        assert enum == ["dev", "prod⟨ESC⟩[31m⟨U+202E⟩"]

    async def test_no_dialog_for_a_request_that_has_ended(self, home: Path, bin_dir: Path) -> None:
        """await_request on a request the person already answered elsewhere returns its
        answer and opens no dialog on it (finding 6)."""
        accept = elicitation("accept", {})
        async with wisp_mcp(home, bin_dir, elicit=accept) as wire:
            filed = await wire.data("request_approval", command="make x", wait_seconds=0)
            assert filed["state"] == "pending" and accept.shown == []
            code, output = await terminal("approvals", "deny", filed["id"])
            assert code == 0, output
            awaited = await wire.data("await_request", id=filed["id"], wait_seconds=20)
        assert (awaited["approved"], awaited["via"]) == (False, "cli")
        assert accept.shown == []

    async def test_lost_to_a_terminal(self, home: Path, bin_dir: Path) -> None:
        """The person answers at a terminal while the dialog is open: the terminal's answer
        wins, and the dialog is cancelled."""
        opened, cancelled = anyio.Event(), anyio.Event()

        async def hold(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            opened.set()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                cancelled.set()
                raise
            raise AssertionError("unreachable")

        async with (
            wisp_mcp(home, bin_dir, elicit=hold) as wire,
            in_flight(wire, "request_approval", command="make deploy", wait_seconds=30) as call,
        ):
            with anyio.fail_after(20):
                await opened.wait()
            code, output = await terminal("approvals", "approve", call.id)
            assert code == 0, output
            result = await call.returned()
            with anyio.fail_after(20):
                await cancelled.wait()
        data = result.structured_content
        assert data is not None and (data["approved"], data["via"]) == (True, "cli")


class TestNewerProtocol:
    async def test_2026_era_client(self, home: Path, bin_dir: Path) -> None:
        """A client that settles on the 2026-07-28 protocol (no handshake; no server requests
        mid-call, so no dialog even with elicitation declared): the terminal answers, and a
        `subscriptions/listen` stream hears the fact's resource change. Started cold
        (`python -m wisp mcp` itself, not forked warm): one whole session as a client runs it."""
        never = elicitation("accept", {})
        async with wisp_mcp(home, bin_dir, mode="auto", elicit=never, cold=True) as wire:
            assert wire.client.protocol_version == "2026-07-28"
            async with in_flight(wire, "request_approval", command="make", wait_seconds=30) as call:
                code, output = await terminal("approvals", "approve", call.id)
                assert code == 0, output
                result = await call.returned()
            assert result.structured_content is not None
            assert (result.structured_content["via"], never.shown) == ("cli", [])
            fact_id, request_id = await ask_to_keep(wire)
            uri = f"wisp://facts/{fact_id}"
            async with wire.client.listen(resource_subscriptions=[uri]) as stream:
                code, output = await terminal("facts", "keep", request_id)
                assert code == 0, output
                heard = []
                with anyio.fail_after(20):
                    async for event in stream:  # each event is a hint: read again
                        heard.append(getattr(event, "uri", None))
                        if (await wire.read(uri))["request"]["state"] == "kept":
                            break
            assert set(heard) == {uri}


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

    async def test_the_title_listed_is_the_one_posted(self, wire: Wire, home: Path) -> None:
        """A title over 64 characters is cut; the result's notifications[].title is the cut
        one, as posted and audited."""
        data = await wire.data("notify", title="T" * 100, message="m")
        (listed,) = data["notifications"]
        note = [r for r in audit_records(home) if r["event"] == "notification"][-1]
        assert listed["title"] == note["title"] and len(listed["title"]) == 64

    async def test_arguments_refused_in_wisps_words(self, wire: Wire) -> None:
        """A missing title or message, or one over 4,096 characters: a tool error in wisp's
        words, never the validator's text (with its URL)."""
        for arguments, said in [
            ({"message": "m"}, "error: title is missing: this tool needs it."),
            ({"title": "t"}, "error: message is missing: this tool needs it."),
            ({"title": "t" * 5000, "message": "m"}, "error: title is 5000 characters long; at"),
            ({"title": "t", "message": "m" * 4097}, "error: message is 4097 characters long;"),
        ]:
            result = await wire.call("notify", **arguments)
            assert result.is_error and text_of(result).startswith(said), text_of(result)
            assert "http" not in text_of(result) and "validation" not in text_of(result)

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


class TestStarting:
    @pytest.mark.parametrize("broken", ["unsafe channel", "broken config"])
    def test_refuses_to_start_saying_why(self, home: Path, bin_dir: Path, broken: str) -> None:
        """A channel another user could tamper with, or a config.json that does not parse:
        exit 2, the reason and the fix on stderr, nothing on stdout, nothing filed. Started
        cold (`python -m wisp mcp` itself): start-up is what is tested."""
        (home / "pending").mkdir(parents=True)
        if broken == "unsafe channel":
            (home / "pending").chmod(0o777)
        else:
            (home / "config.json").write_text("{not json")
        done = subprocess.run(
            [sys.executable, "-m", "wisp", "mcp"],
            input=b"",
            capture_output=True,
            env=server_env(home, bin_dir),
            timeout=60,
        )
        assert (done.returncode, done.stdout) == (2, b"")
        said = done.stderr.decode()
        assert said.startswith("wisp mcp: ") and "Traceback" not in said
        assert ("chmod 700" in said) if broken == "unsafe channel" else ("config.json" in said)


class TestStopping:
    @pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
    async def test_a_signal_withdraws_commands_and_hands_facts_over(
        self, home: Path, bin_dir: Path, how: signal.Signals
    ) -> None:
        """SIGTERM or SIGINT: the server stops at once (even with the client still
        connected), its waiting command withdrawn, its fact request handed over."""
        async with wisp_mcp(home, bin_dir) as wire:
            command = await wire.data("request_approval", command="make deploy", wait_seconds=0)
            _, fact_request = await ask_to_keep(wire)
            pid = server_pid(home, command["id"])
            stop(pid, how)
            wait_until(lambda: not running(pid), what="the server to exit")
        with Channel.open(home) as channel:
            ended = channel.status(command["id"])
            assert ended.state is State.SETTLED and ended.settled is not None
            assert ended.settled.outcome is Outcome.WITHDRAWN
            assert channel.status(fact_request).state is State.HANDED_OVER

    async def test_sigkill_leaves_commands_stale_and_facts_handed_over(
        self, home: Path, bin_dir: Path
    ) -> None:
        """SIGKILL (no chance to withdraw): the command reads stale, the fact request handed
        over; `wisp facts keep ID` still applies it."""
        async with wisp_mcp(home, bin_dir) as wire:
            command = await wire.data("request_approval", command="make deploy", wait_seconds=0)
            _, fact_request = await ask_to_keep(wire)
            pid = server_pid(home, command["id"])
            stop(pid, signal.SIGKILL)
            wait_until(lambda: not running(pid), what="the server to die")
        with Channel.open(home) as channel:
            assert channel.status(command["id"]).state is State.STALE
            assert channel.status(fact_request).state is State.HANDED_OVER
        code, output = await terminal("facts", "keep", fact_request)
        assert code == 0, output
        assert [k.request for k in FactStore(home).list()] == [fact_request]

    async def test_eof_hands_fact_requests_over(self, home: Path, bin_dir: Path) -> None:
        """The client goes (EOF): the server's fact request stays, handed over, and a later
        `wisp facts keep ID` from a terminal applies it."""
        async with wisp_mcp(home, bin_dir) as wire:
            _, request_id = await ask_to_keep(wire)
            pid = server_pid(home, request_id)
        wait_until(lambda: not running(pid), what="the server to exit")
        with Channel.open(home) as channel:
            assert channel.status(request_id).state is State.HANDED_OVER
        code, output = await terminal("facts", "keep", request_id)
        assert code == 0, output
        assert [k.request for k in FactStore(home).list()] == [request_id]
        handed = [r for r in audit_records(home) if r.get("outcome") == "handed-over"]
        assert [r["id"] for r in handed] == [request_id]


# --- permission_prompt: Claude Code's permission prompt tool (`claude -p
# --permission-prompt-tool mcp__wisp__permission_prompt`) ---------------------------------

SHORT_TIMEOUT_S = 2  # approval.timeoutSeconds for the time-out test: the request's own bound


def decision(result: types.CallToolResult) -> dict[str, Any]:
    """The result's text, which must be Claude Code's JSON and nothing else: one text block,
    no structured content (Claude Code 2.1.197 rejects any result but "a single text block
    param")."""
    assert not result.is_error, result.content
    assert result.structured_content is None
    assert [block.type for block in result.content] == ["text"]
    said = json.loads(text_of(result))
    assert isinstance(said, dict)
    return said


# Not a must-ask class (`rm -rf` is: asked every time, never granted wider than once).
BASH = {"command": "make clean", "description": "Clean the build directory"}


class TestPermissionPrompt:
    async def test_a_bash_call_approved_from_a_terminal(self, wire: Wire, home: Path) -> None:
        """A Bash call is filed as a command (its description as the reason); `wisp
        approvals approve ID` in a pty allows it, with the input unchanged."""
        async with in_flight(
            wire, "permission_prompt", tool_name="Bash", input=BASH, tool_use_id="toolu_01"
        ) as call:
            with Channel.open(home) as channel:
                request = channel.status(call.id).request
            assert request.kind is Kind.COMMAND
            assert request.binding.command == "make clean"  # type: ignore[union-attr]
            assert request.binding.reason == BASH["description"]  # type: ignore[union-attr]
            code, output = await terminal("approvals", "approve", call.id)
            assert code == 0, output
            result = await call.returned()
        assert decision(result) == {"behavior": "allow", "updatedInput": BASH}
        assert call.progress and f"wisp approvals approve {call.id}" in (call.progress[0] or "")

    async def test_a_tool_call_approved_from_a_terminal(self, wire: Wire, home: Path) -> None:
        """Any other tool is filed as a `tool` request; `wisp tools approve ID` allows it."""
        edit = {"file_path": "/srv/shop/app.py", "old_string": "a = 1", "new_string": "a = 2"}
        async with in_flight(wire, "permission_prompt", tool_name="Edit", input=edit) as call:
            with Channel.open(home) as channel:
                assert channel.status(call.id).request.kind is Kind.TOOL
            code, output = await terminal("tools", "approve", call.id)
            assert code == 0, output
            result = await call.returned()
        assert decision(result) == {"behavior": "allow", "updatedInput": edit}

    async def test_denied_saying_who_and_how(self, wire: Wire) -> None:
        """`wisp approvals deny ID --reason …`: a deny whose message names the person, `cli`,
        the request and the reason given."""
        async with in_flight(wire, "permission_prompt", tool_name="Bash", input=BASH) as call:
            code, output = await terminal("approvals", "deny", call.id, "--reason", "not today")
            assert code == 0, output
            result = await call.returned()
        said = decision(result)
        assert said["behavior"] == "deny" and set(said) == {"behavior", "message"}
        user = getpass.getuser()
        assert f"by {user} via cli" in said["message"], said
        assert call.id in said["message"] and "not today" in said["message"]

    async def test_a_standing_grant_allows_at_once(self, wire: Wire, home: Path) -> None:
        """Approved `always` once; the same call again is allowed at once, nothing filed,
        the message naming the grant."""
        async with in_flight(wire, "permission_prompt", tool_name="Bash", input=BASH) as call:
            code, output = await terminal("approvals", "approve", call.id, "--scope", "always")
            assert code == 0, output
            await call.returned()
        with Channel.open(home) as channel:
            filed = len(channel.listing().statuses)
        result = await wire.call("permission_prompt", tool_name="Bash", input=BASH)
        assert decision(result) == {"behavior": "allow", "updatedInput": BASH}
        with Channel.open(home) as channel:
            assert len(channel.listing().statuses) == filed

    async def test_a_call_touching_wisps_own_channel_always_asks(
        self, wire: Wire, home: Path
    ) -> None:
        """A Write under $WISP_HOME is put to the person even when a grant would cover it,
        and its request says that it touches wisp's own channel."""
        write = {"file_path": str(home / "answers" / "x.json"), "content": "{}"}
        async with in_flight(wire, "permission_prompt", tool_name="Write", input=write) as call:
            code, output = await terminal("tools", "approve", call.id, "--as", "always")
            assert code == 0, output
            await call.returned()
        async with in_flight(wire, "permission_prompt", tool_name="Write", input=write) as again:
            with Channel.open(home) as channel:
                reason = channel.status(again.id).request.binding.reason  # type: ignore[union-attr]
            assert reason is not None and "wisp's own channel" in reason
            code, output = await terminal("tools", "deny", again.id)
            assert code == 0, output
            result = await again.returned()
        assert decision(result)["behavior"] == "deny"


class TestTimeOut:
    async def test_no_answer_is_a_deny(self, home: Path, bin_dir: Path) -> None:
        """Nobody answers within the request's own bound (approval.timeoutSeconds): it
        times out, and the answer is a deny that says so, never an allow."""
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.json").write_text(
            json.dumps({"approval": {"timeoutSeconds": SHORT_TIMEOUT_S}})
        )
        async with (
            wisp_mcp(home, bin_dir) as wire,
            in_flight(wire, "permission_prompt", tool_name="Bash", input=BASH) as call,
        ):
            result = await call.returned()
        said = decision(result)
        assert said["behavior"] == "deny", said
        assert "nobody answered" in said["message"] and "timed-out" in said["message"]
        with Channel.open(home) as channel:
            assert channel.status(call.id).outcome is Outcome.TIMED_OUT


class TestSubscriptions:
    async def _barrier(self, wire: Wire, keep_id: str, later: str) -> None:
        """Keep the fact from a terminal and wait for `wisp://facts/permanent` (said by the
        channel's follower, after every transition before it); then move the fact *later*
        names, and wait for its update (said by the tool, after that)."""
        code, output = await terminal("facts", "keep", keep_id)
        assert code == 0, output
        await wire.inbox.wait_for(
            lambda: "wisp://facts/permanent" in wire.inbox.updated(), "the keep's update"
        )
        seen = wire.inbox.updated().count(f"wisp://facts/{later}")
        await wire.data("set_fact_scope", fact=later, scope="session")
        await wire.inbox.wait_for(
            lambda: wire.inbox.updated().count(f"wisp://facts/{later}") > seen, "the move's"
        )

    async def test_each_change_is_said_once_however_often_subscribed(self, wire: Wire) -> None:
        """Subscribed twice to `wisp://facts/permanent` and `wisp://pending`: one keep is one
        `permanent` update, and five filings are five `pending` updates (plus at most three
        for the keep request: filed, answered, settled), never one from the tool that filed and
        another from the channel."""
        later = (await wire.data("record_fact", subject="a", name="b", value="c"))["id"]
        await wire.client.subscribe_resource(f"wisp://facts/{later}")
        for uri in ("wisp://facts/permanent", "wisp://pending") * 2:
            await wire.client.subscribe_resource(uri)
        for n in range(5):
            await wire.data("request_approval", command=f"make {n}", wait_seconds=0)
        _fact, keep_id = await ask_to_keep(wire)
        await self._barrier(wire, keep_id, later)
        updated = wire.inbox.updated()
        assert updated.count("wisp://facts/permanent") == 1, updated
        assert 5 + 2 <= updated.count("wisp://pending") <= 5 + 3, updated

    async def test_unsubscribe_stops_updates(self, wire: Wire) -> None:
        """After `resources/unsubscribe` (a request of its own, so a new session object in
        the SDK) a client that subscribed twice hears nothing more of that resource: nothing
        of `wisp://pending` up to the keep's `wisp://facts/permanent`, which the channel's
        follower says after every transition before it."""
        for _ in range(2):
            await wire.client.subscribe_resource("wisp://pending")
        await wire.client.unsubscribe_resource("wisp://pending")
        await wire.client.subscribe_resource("wisp://facts/permanent")
        await wire.data("request_approval", command="make", wait_seconds=0)
        _fact, keep_id = await ask_to_keep(wire)
        code, output = await terminal("facts", "keep", keep_id)
        assert code == 0, output
        await wire.inbox.wait_for(
            lambda: "wisp://facts/permanent" in wire.inbox.updated(), "the keep's update"
        )
        assert wire.inbox.updated() == ["wisp://facts/permanent"]
