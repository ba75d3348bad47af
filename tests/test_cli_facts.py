"""Forgetting a permanent fact (the person only, from a terminal, audited), and the warning
when a keep would contradict a kept fact — in a real pseudo-terminal 40, 80 and 200 wide."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cliterm import WIDTHS, run
from helpers import audit_records, fact, kept_fact, run_wisp

from pending import Channel, ServerLock
from wisp import FactStore, contradicted


class TestForget:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_forget_by_prefix(self, home: Path, cols: int) -> None:
        """`wisp facts forget p1a2b` removes that fact, says so, and audits it as the fact
        leaving the permanent scope (by the person)."""
        Channel.open(home).close()
        stored = kept_fact(home, "BLUE HERON")
        code, output = run("facts", "forget", stored.id[:6].upper(), cols=cols)
        assert code == 0, output
        assert f"forgot {stored.id}: release codename = BLUE HERON" in " ".join(output.split())
        assert FactStore(home).list() == []
        (record,) = [r for r in audit_records(home) if r["event"] == "fact.scope.changed"]
        assert (record["permanent"], record["from"], record["to"], record["by"]) == (
            stored.id,
            "permanent",
            "forgotten",
            "person",
        )
        assert record["entryPoint"] == "facts"

    def test_only_from_a_terminal(self, home: Path) -> None:
        """Without a terminal it is refused (exit 2) and nothing is removed or audited."""
        Channel.open(home).close()
        stored = kept_fact(home, "BLUE HERON")
        out = run_wisp("facts", "forget", stored.id, stdin=subprocess.DEVNULL)
        assert out.returncode == 2 and "only from a terminal" in out.stderr
        assert [f.id for f in FactStore(home).list()] == [stored.id]
        assert not audit_records(home)

    @pytest.mark.parametrize(
        ("typed", "says"), [("p9999999", "no fact p9999999"), ("q12", "is not a fact ID")]
    )
    def test_unknown_or_malformed(self, home: Path, typed: str, says: str) -> None:
        """An ID no fact has, or not a fact ID at all: exit 1, nothing removed."""
        Channel.open(home).close()
        kept_fact(home, "BLUE HERON")
        code, output = run("facts", "forget", typed, cols=80)
        assert code == 1 and says in output
        assert len(FactStore(home).list()) == 1

    def test_json(self, home: Path) -> None:
        """`--json`: the fact removed, as `wisp facts list --json` shows a fact."""
        Channel.open(home).close()
        stored = kept_fact(home, "BLUE HERON")
        code, output = run("facts", "forget", stored.id, "--json", cols=200)
        assert code == 0 and json.loads(output) == stored.to_json()


class TestContradiction:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_keeping_another_value_warns(
        self, channel: Channel, server: ServerLock, home: Path, cols: int
    ) -> None:
        """Keeping RED KITE where BLUE HERON is kept for the same subject and name: kept,
        with a note naming the other fact and how to forget it; `wisp show` says so first."""
        older = kept_fact(home, "BLUE HERON")
        request = fact(server, value="RED KITE")
        channel.file(request)
        code, output = run("facts", "show", request.id, cols=cols)
        flat = " ".join(output.split())
        assert code == 0 and f"you keep release codename = BLUE HERON ({older.id})" in flat
        server.release()  # handed over: the keep is applied in the answering process
        code, output = run("facts", "keep", request.id, cols=cols)
        flat = " ".join(output.split())
        assert code == 0, output
        assert "kept release codename = RED KITE" in flat
        assert f"you also keep release codename = BLUE HERON ({older.id})" in flat
        assert f"wisp facts forget {older.id}" in flat
        assert {f.value for f in FactStore(home).list()} == {"BLUE HERON", "RED KITE"}

    def test_every_face_asks_the_same_question(
        self, channel: Channel, server: ServerLock, home: Path
    ) -> None:
        """wisp.contradicted, which `wisp show`, `wisp facts keep`, the relay and the web page
        ask: the kept fact a request's other value contradicts; none for the same value, and
        none (not an error) where the facts store cannot be read."""
        older = kept_fact(home, "BLUE HERON")
        other, same = fact(server, value="RED KITE"), fact(server, value="BLUE HERON")
        assert contradicted(other, home) == [older]
        assert contradicted(same, home) == []
        (home / "facts.json").write_text("{not json")
        assert contradicted(other, home) == []

    def test_the_same_value_is_no_contradiction(self, home: Path) -> None:
        """The store tells a different value from the same one, and other names apart."""
        Channel.open(home).close()
        stored = kept_fact(home, "BLUE HERON")
        store = FactStore(home)
        assert store.contradicting("release", "codename", "BLUE HERON") == []
        assert store.contradicting("release", "date", "May") == []
        assert store.contradicting("release", "codename", "RED KITE") == [stored]
