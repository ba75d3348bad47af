"""AgentSession: the application an agent-facing server holds for its life, used directly (no
face, no MCP SDK) against a real channel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pending import MAX_RECORD_BYTES, Channel, Kind, Outcome, Request, State, Via
from wisp import AgentSession, FactRefused, FactScope, UnknownFact
from wisp._home import open_channel
from wisp.agents.session import NotOurs, PermissionVerdict, StartError, collecting
from wisp.audit.writer import EntryPoint
from wisp.routes.notify import Face
from wisp.stores.config import load_config


@pytest.fixture
def session(home: Path) -> Iterator[AgentSession]:
    app = AgentSession(
        open_channel(home),
        load_config(home),
        face=Face.MCP,
        entry_point=EntryPoint.MCP,
        dialog_via=Via.ELICITATION,
        client="test client",
    )
    try:
        yield app
    finally:
        app.close()


class TestAgentSession:
    def test_start_refuses_an_unsafe_channel_saying_why(self, home: Path) -> None:
        """A channel another user could write to: StartError, with the fix."""
        (home / "pending").mkdir(parents=True)
        (home / "pending").chmod(0o777)
        with pytest.raises(StartError, match="chmod 700"):
            AgentSession.start(
                face=Face.MCP,
                entry_point=EntryPoint.MCP,
                dialog_via=Via.ELICITATION,
                client="test client",
            )

    def test_a_command_waits_and_is_withdrawn_when_the_session_closes(
        self, home: Path, session: AgentSession
    ) -> None:
        """Filed: listed as this server's, its announcement collected for the call; closed:
        withdrawn."""
        with collecting() as posted:
            request = session.file_command("make deploy", "/srv", None)
        assert [n["source"] for n in posted] == ["approval"]
        assert [s.id for s in session.waiting()] == [request.id]
        assert session.request(request.id).id == request.id
        assert session.ended(request.id) is None
        session.close()
        with Channel.open(home) as channel:
            settled = channel.status(request.id).settled
        assert settled is not None and settled.outcome is Outcome.WITHDRAWN

    def test_a_request_it_did_not_file_is_not_ours(self, session: AgentSession) -> None:
        """An id this server never filed is refused, for waiting and for fact requests."""
        with pytest.raises(NotOurs, match="not a command or question this server asked"):
            session.request("0123456789abcdef")
        with pytest.raises(NotOurs, match="not a request this server filed"):
            session.fact_request("0123456789abcdef")

    def test_facts_move_and_are_handed_over_when_asked_to_keep(
        self, home: Path, session: AgentSession
    ) -> None:
        """A recorded fact moves to the session; asked to keep, it files a fact request that
        this session knows, and closing hands it over for the person."""
        fact = session.record_fact("release", "codename", "HERON", source="test")
        moved = session.set_scope(fact.id, FactScope.SESSION)
        assert moved.changed and moved.fact.id.startswith("s")
        asked = session.set_scope(moved.fact.id, FactScope.PERMANENT)
        assert asked.keep is not None and asked.keep.request_id is not None
        request_id = asked.keep.request_id
        assert session.fact_request(request_id).state is State.FILED
        assert [f.id for f, _ in session.proposed()] == [moved.fact.id]
        session.close()
        with Channel.open(home) as channel:
            assert channel.status(request_id).state is State.HANDED_OVER

    def test_permanent_and_unknown_facts_are_refused(self, session: AgentSession) -> None:
        """A p… fact is the person's: never moved; an unknown fact says which."""
        with pytest.raises(FactRefused, match="permanent facts are the person's"):
            session.set_scope("p1a2b3c4", FactScope.THREAD)
        with pytest.raises(UnknownFact, match="no fact 'c999'") as caught:
            session.set_scope("c999", FactScope.SESSION)
        assert caught.value.fact_id == "c999"
        assert session.conflicts("release", "codename", "HERON") == []

    def test_a_permission_call_that_cannot_be_asked_is_denied(
        self, home: Path, session: AgentSession
    ) -> None:
        """A Bash call with no command, and one larger than a request holds, are denied at
        once with the reason; nothing is filed."""
        for tool, tool_input in (
            ("Bash", {"description": "no command"}),
            ("Write", {"file_path": "/tmp/x", "content": "x" * (MAX_RECORD_BYTES + 1)}),
        ):
            verdict = session.ask_permission(tool, tool_input, "/srv/shop")
            assert isinstance(verdict, PermissionVerdict) and not verdict.allowed
            assert verdict.request_id is None and verdict.message.startswith("wisp: ")
        with Channel.open(home) as channel:
            assert not channel.listing().statuses

    def test_an_unanswered_permission_request_is_withdrawn_and_denied(
        self, home: Path, session: AgentSession
    ) -> None:
        """A wait that ends with no answer withdraws the request; the verdict is a deny that
        says nobody answered, never an allow."""
        request = session.ask_permission("WebFetch", {"url": "https://example.com"}, "/srv")
        assert isinstance(request, Request) and request.kind is Kind.TOOL
        verdict = session.permission_verdict(request, None)
        assert not verdict.allowed and verdict.request_id == request.id
        assert "nobody answered" in verdict.message and "withdrawn" in verdict.message
        with Channel.open(home) as channel:
            assert channel.status(request.id).outcome is Outcome.WITHDRAWN
