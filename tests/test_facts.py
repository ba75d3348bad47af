"""Permanent facts: keep or drop from any terminal, even after the asking server stopped."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import (
    FIXTURES,
    Asker,
    audit_records,
    in_terminal,
    install_fixture,
    run_wisp,
    wait_until,
)

from pending import Channel, Delivery, FactBinding, Kind, Outcome, State, UnknownRequest
from wisp import FactKeeper, FactRefused, FactStore, KeepState
from wisp._asking import Asker as AskingServer
from wisp.audit.writer import EntryPoint
from wisp.stores.factids import (
    PERMANENT_PREFIX,
    SESSION_PREFIX,
    THREAD_PREFIX,
    FactScope,
    asked_from,
    fact_id_of,
    is_permanent,
    new_fact_id,
    scope_of,
)

SHOWN = {
    "fact_id": "c3",
    "subject": "release",
    "name": "codename",
    "value": "BLUE HERON",
    "source": "chat",
    "proposed_by": "model",
}


@pytest.fixture
def thread_facts() -> dict[str, FactBinding]:
    """The asking server's own view of its thread facts (what a real server would look up)."""
    return {"c3": FactBinding(**SHOWN)}


@pytest.fixture
def keeper(channel: Channel, thread_facts: dict[str, FactBinding]) -> Iterator[FactKeeper]:
    asker = AskingServer(channel, entry_point=EntryPoint.MCP)
    k = FactKeeper(asker, lookup=thread_facts.get)
    yield k
    k.close()
    asker.close()


def ask(keeper: FactKeeper, thread: str = "t1", **changes: str):  # type: ignore[no-untyped-def]
    return keeper.request(**{**SHOWN, **changes}, thread=thread)


def settled(channel: Channel, request_id: str):  # type: ignore[no-untyped-def]
    return wait_until(lambda: channel.status(request_id).settled, what="the outcome")


class TestNewcomerScenario:
    def test_request_pending_keep_list_and_keep_again(self, home: Path) -> None:
        """The README's scenario: request returns at once; pending shows it handed over; keep
        from a terminal prints the permanent fact's id; list shows it; a second keep is
        refused as already answered."""
        started = time.monotonic()
        out = run_wisp("facts", "request", "release", "codename", "BLUE HERON")
        assert out.returncode == 0 and time.monotonic() - started < 10
        request_id = out.stdout.strip()
        assert f"wisp facts keep {request_id}" in out.stderr
        rows = json.loads(run_wisp("facts", "pending", "--json").stdout)
        assert [(r["id"], r["state"]) for r in rows] == [(request_id, "handed-over")]
        code, output = in_terminal("facts", "keep", request_id)
        assert code == 0, output
        kept = FactStore(home).list()
        assert len(kept) == 1 and kept[0].value == "BLUE HERON"
        assert f"kept release codename = BLUE HERON as permanent fact {kept[0].id}" in output
        listed = json.loads(run_wisp("facts", "list", "--json").stdout)
        assert [(f["id"], f["keptBy"], f["request"], f["via"]) for f in listed] == [
            (kept[0].id, "person", request_id, "cli")
        ]
        code, output = in_terminal("facts", "keep", request_id)
        assert code == 1 and "already answered 'keep'" in output
        events = [
            (r["event"], r.get("delivery"))
            for r in audit_records(home)
            if r.get("id") == request_id
        ]
        assert events == [
            ("approval.pending", None),
            ("notification", None),
            ("approval.settled", None),
            ("approval.answered", None),
            ("fact.scope.changed", None),
            ("approval.settled", "applied"),
        ]
        assert audit_records(home)[2]["outcome"] == "handed-over"

    def test_a_held_value_is_not_asked_about(self, home: Path) -> None:
        """Once permanent, asking about the same value files nothing and names the fact."""
        first = run_wisp("facts", "request", "shop", "db", "postgres").stdout.strip()
        in_terminal("facts", "keep", first)
        again = run_wisp("facts", "request", "--json", "shop", "db", "postgres")
        result = json.loads(again.stdout)
        assert result["state"] == "kept" and result["id"] is None
        assert result["fact"]["value"] == "postgres"


class TestKeeper:
    def test_kept_while_watched(self, keeper: FactKeeper, channel: Channel, home: Path) -> None:
        """The keeper returns at once; the person keeps from a terminal; the keeper applies it
        (delivery: watched) and the store holds it as the person's."""
        asked = ask(keeper)
        assert (asked.state, asked.new) == ("pending", True)
        assert asked.uri == "wisp://facts/c3"
        code, output = in_terminal("facts", "keep", asked.request_id)
        assert code == 0, output
        outcome = settled(channel, asked.request_id)
        assert (outcome.outcome, outcome.delivery, outcome.by) == (
            Outcome.ANSWERED,
            Delivery.WATCHED,
            "asker",
        )
        fact = FactStore(home).list()[0]
        assert (fact.id, fact.kept_by) == (outcome.result, "person")
        assert f"as permanent fact {fact.id}" in output
        changed = [r for r in audit_records(home) if r["event"] == "fact.scope.changed"]
        assert [(r["by"], r["from"], r["to"], r["permanent"]) for r in changed] == [
            ("person", "thread", "permanent", fact.id)
        ]

    def test_dropped_and_remembered_for_the_thread(
        self, keeper: FactKeeper, channel: Channel, home: Path
    ) -> None:
        """A drop keeps nothing, and asking again in that thread is refused with the date and
        request of the drop, until the thread closes."""
        asked = ask(keeper)
        code, output = in_terminal("facts", "drop", asked.request_id)
        assert code == 0 and "dropped release codename = BLUE HERON" in output
        assert settled(channel, asked.request_id).decision == "drop"
        assert FactStore(home).list() == []
        with pytest.raises(FactRefused, match=rf"dropped .* \(request {asked.request_id}\)"):
            ask(keeper)
        assert ask(keeper, thread="other").new  # another thread may ask
        keeper.close_thread("t1")
        assert ask(keeper).state == "pending"

    def test_asked_twice_files_once(self, keeper: FactKeeper, channel: Channel) -> None:
        """Asking again while the request waits returns it, filing nothing new."""
        first, second = ask(keeper), ask(keeper)
        assert first.request_id == second.request_id and not second.new
        assert len(channel.listing(kinds=[Kind.FACT]).statuses) == 1

    def test_silence_keeps_nothing_and_never_expires(
        self, keeper: FactKeeper, channel: Channel, home: Path
    ) -> None:
        """Unanswered, a fact request has no expiry and keeps nothing."""
        asked = ask(keeper)
        status = channel.status(asked.request_id)
        assert status.request.expires_at is None and status.state is State.FILED
        assert FactStore(home).list() == []

    def test_a_keep_after_the_thread_closed(
        self, keeper: FactKeeper, channel: Channel, home: Path
    ) -> None:
        """The thread closes; the keeper's watch goes on; a later keep is admitted."""
        asked = ask(keeper)
        keeper.close_thread("t1")
        in_terminal("facts", "keep", asked.request_id)
        assert settled(channel, asked.request_id).delivery is Delivery.WATCHED
        assert len(FactStore(home).list()) == 1

    def test_a_fact_changed_after_asking(
        self, keeper: FactKeeper, channel: Channel, thread_facts: dict[str, FactBinding], home: Path
    ) -> None:
        """If the fact no longer says what was shown, a keep fails and the store is untouched."""
        asked = ask(keeper)
        thread_facts["c3"] = thread_facts["c3"]._replace(value="GREEN HERON")
        code, output = in_terminal("facts", "keep", asked.request_id)
        outcome = settled(channel, asked.request_id)
        assert outcome.outcome is Outcome.FAILED and "GREEN HERON" in (outcome.reason or "")
        assert FactStore(home).list() == []
        assert code == 1 and "Nothing was kept" in output

    def test_refusals(self, keeper: FactKeeper) -> None:
        """A permanent fact cannot be moved by a caller; only c…/s… facts can be asked about."""
        with pytest.raises(FactRefused, match="permanent facts are the person's"):
            ask(keeper, fact_id="p1")
        with pytest.raises(FactRefused, match="thread"):
            ask(keeper, fact_id="x1")


class TestFactIds:
    def test_minted_ids_say_their_scope(self) -> None:
        """A minted ID is its scope's letter and 8 hex characters, and reads back as that
        scope; two are never the same."""
        for scope, letter in (
            (FactScope.PERMANENT, PERMANENT_PREFIX),
            (FactScope.THREAD, THREAD_PREFIX),
            (FactScope.SESSION, SESSION_PREFIX),
        ):
            minted = new_fact_id(scope)
            assert minted[0] == letter and len(minted) == 9 and int(minted[1:], 16) >= 0
            assert scope_of(minted) is scope
            assert new_fact_id(scope) != minted

    def test_serial_ids_and_classification(self) -> None:
        """A serial ID (a thread's `c3`) reads as its scope; only thread and session facts
        can be asked about; anything else is no fact ID."""
        assert fact_id_of(FactScope.THREAD, 3) == "c3"
        assert (scope_of("c3"), scope_of("s1"), scope_of("p1"), scope_of("x1"), scope_of("")) == (
            FactScope.THREAD,
            FactScope.SESSION,
            FactScope.PERMANENT,
            None,
            None,
        )
        assert (asked_from("c3"), asked_from("s1"), asked_from("p1")) == (
            FactScope.THREAD,
            FactScope.SESSION,
            None,
        )
        assert is_permanent("p3e8a91c0") and not is_permanent("s3e8a91c0")

    def test_the_store_and_the_cli_mint_by_the_scheme(self, home: Path) -> None:
        """A kept fact's ID is a permanent one; `wisp facts request` asks about a session
        fact (its audit says it came from the session)."""
        request_id = run_wisp("facts", "request", "shop", "db", "pg").stdout.strip()
        pending_record = next(r for r in audit_records(home) if r["event"] == "approval.pending")
        assert scope_of(pending_record["factId"]) is FactScope.SESSION
        in_terminal("facts", "keep", request_id)
        (fact,) = FactStore(home).list()
        assert scope_of(fact.id) is FactScope.PERMANENT
        changed = next(r for r in audit_records(home) if r["event"] == "fact.scope.changed")
        assert (changed["from"], changed["to"]) == ("session", "permanent")


class TestThroughTheAsker:
    def test_typed_states_serialise_as_before(self, keeper: FactKeeper, home: Path) -> None:
        """A keep request's state is a KeepState, compared as one, and written as the same
        word as ever."""
        asked = ask(keeper)
        assert asked.state is KeepState.PENDING and json.dumps(asked.state) == '"pending"'
        keeper.store.keep(FactBinding(**{**SHOWN, "value": "KEPT"}), request="r1", via="cli")
        assert ask(keeper, value="KEPT").state is KeepState.KEPT

    def test_settled_by_the_askers_one_settler(
        self, channel: Channel, thread_facts: dict[str, FactBinding], home: Path
    ) -> None:
        """A fact is filed by Asker.file (audited and announced as every request) and its
        answer applied on the asker's settler thread; no thread of the keeper's own exists,
        and nobody waits for a fact: wait() and waiting() do not know it."""
        applied_on: list[str] = []

        def lookup(fact_id: str) -> FactBinding | None:
            applied_on.append(threading.current_thread().name)
            return thread_facts.get(fact_id)

        asker = AskingServer(channel, entry_point=EntryPoint.MCP)
        try:
            threads_before = {t.name for t in threading.enumerate()}
            keeper = FactKeeper(asker, lookup=lookup)
            assert {t.name for t in threading.enumerate()} <= threads_before
            asked = ask(keeper)
            assert asked.request_id is not None
            assert asker.waiting() == []
            with pytest.raises(UnknownRequest):
                asker.wait(asked.request_id, 0)
            code, output = in_terminal("facts", "keep", asked.request_id)
            assert code == 0, output
            outcome = settled(channel, asked.request_id)
            assert (outcome.delivery, outcome.by) == (Delivery.WATCHED, "asker")
            assert applied_on == ["asker-settle"]
            keeper.close()
        finally:
            asker.close()
        # Two processes append to the log: this one (the asker, its settler thread included)
        # and the answering `wisp facts keep`. Each one's records are in its own order; the
        # two interleave as they happen (the settler can apply the answer before its answerer
        # has appended `approval.answered`), so they are compared process by process.
        records = [r for r in audit_records(home) if r.get("id") == asked.request_id]
        by_asker = [r["event"] for r in records if r["pid"] == os.getpid()]
        by_answerer = [r["event"] for r in records if r["pid"] != os.getpid()]
        assert by_asker == [
            "approval.pending",
            "notification",
            "fact.scope.changed",
            "approval.settled",
        ]
        assert by_answerer == ["approval.answered"]

    def test_a_hand_over_is_audited_with_its_value(self, channel: Channel, home: Path) -> None:
        """A stopping asker hands its fact request over: one approval.settled line, outcome
        `handed-over` (State.HANDED_OVER: no Outcome ends it), with the request's fields,
        exactly as before; the request stays for the person."""
        asker = AskingServer(channel, entry_point=EntryPoint.FACTS)
        keeper = FactKeeper(asker)
        asked = ask(keeper)
        assert asked.request_id is not None
        keeper.close()
        asker.close()
        (line,) = [
            r
            for r in audit_records(home)
            if r.get("id") == asked.request_id and r["event"] == "approval.settled"
        ]
        assert line["outcome"] == State.HANDED_OVER == "handed-over"
        assert set(line) == {
            "ts", "event", "entryPoint", "pid", "id", "kind", "factId", "subject", "name",
            "value", "source", "proposedBy", "server", "outcome",
        }  # fmt: skip
        assert line["entryPoint"] == "facts"
        assert channel.status(asked.request_id).state is State.HANDED_OVER


class TestHandOver:
    def test_a_killed_server_hands_over_and_the_keep_applies_here(self, home: Path) -> None:
        """SIGKILL: the fact request is handed over; `wisp facts keep` applies it in the
        answering process (delivery: applied), audited there."""
        child = Asker(home, "fact")
        (request_id,) = child.filed()
        child.kill()
        with Channel.open(home) as channel:
            assert channel.status(request_id).state is State.HANDED_OVER
        code, output = in_terminal("facts", "keep", request_id)
        assert code == 0, output
        with Channel.open(home) as channel:
            outcome = channel.status(request_id).settled
        assert outcome is not None and outcome.delivery is Delivery.APPLIED and outcome.by == "cli"
        applied = [r for r in audit_records(home) if r["event"] == "approval.settled"]
        assert applied[-1]["delivery"] == "applied" and applied[-1]["entryPoint"] == "facts"

    def test_the_same_keep_raced_from_eight_terminals(self, home: Path) -> None:
        """Eight terminals keep one handed-over fact at once: one fact is kept, once."""
        request_id = run_wisp("facts", "request", "release", "codename", "BLUE HERON").stdout
        request_id = request_id.strip()
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: in_terminal("facts", "keep", request_id), range(8)))
        kept = [out for code, out in results if code == 0]
        refused = [out for code, out in results if code == 1]
        assert len(kept) == 1 and len(refused) == 7, results
        assert all("already" in out for out in refused)
        assert len(FactStore(home).list()) == 1

    def test_an_unwritable_store_fails_cleanly(self, home: Path) -> None:
        """A store that cannot be used: the keep is refused, nothing is written, and the
        request still waits; the damaged store is left exactly as it was."""
        request_id = run_wisp("facts", "request", "a", "b", "c").stdout.strip()
        (home / "facts.json").write_text('{"facts": [')
        os.chmod(home / "facts.json", 0o600)
        code, output = in_terminal("facts", "keep", request_id)
        assert code == 2 and "damaged" in output and "still waits" in output
        assert (home / "facts.json").read_text() == '{"facts": ['
        with Channel.open(home) as channel:
            status = channel.status(request_id)
        assert status.state is State.HANDED_OVER and status.answer is None
        (home / "facts.json").unlink()
        (home / "facts.json").mkdir()
        code, output = in_terminal("facts", "keep", request_id)
        assert code == 2 and "not a regular file" in output

    def test_an_answered_fact_left_unapplied_is_applied_by_the_next_process(
        self, home: Path
    ) -> None:
        """An answer whose applier died is applied, idempotently, by the next listing."""
        request_id = run_wisp("facts", "request", "x", "y", "z").stdout.strip()
        with Channel.open(home) as channel:
            channel.answer(request_id, "keep", kind=Kind.FACT, via="tui")  # then "crashed"
        run_wisp("facts", "pending")
        run_wisp("pending")
        assert [f.value for f in FactStore(home).list()] == ["z"]
        with Channel.open(home) as channel:
            assert channel.status(request_id).settled.delivery is Delivery.APPLIED  # type: ignore[union-attr]


class TestVersions:
    def test_a_0_22_0_fact_with_expiry_still_expires(self, channel: Channel, home: Path) -> None:
        """0.22.0 filed fact requests with expiresAt: past it, a keep is refused as stale."""
        install_fixture(channel, FIXTURES / "good" / "b2c3d4e5.fact.json")
        code, output = in_terminal("facts", "keep", "b2c3d4e5")
        assert code == 1 and "expired" in output
        assert FactStore(home).list() == []

    def test_a_0_16_0_command_is_not_a_fact(self, channel: Channel) -> None:
        """A 0.16.0 request (no kind) is a command: `wisp facts keep` names the right command."""
        install_fixture(channel, FIXTURES / "good" / "a1b2c3d4.request.json")
        code, output = in_terminal("facts", "keep", "a1b2c3d4")
        assert code == 1 and "`wisp approvals approve a1b2c3d4`" in output
