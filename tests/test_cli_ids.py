"""One rule for every ID a person types — a request's, a fact's (`p…`), a grant's (`g…`):
the whole ID or its start (its letter and at least 4 hex characters), any case, naming one
only; every refusal says the rule. Run as a person runs them, in a real pseudo-terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliterm import run
from helpers import kept_fact

from pending import Channel, Scope
from wisp import FactStore
from wisp.stores.grants import GrantStore

RULE = "or its start: {lead}at least 4 hex characters"


def grants(home: Path, *commands: str) -> list[str]:
    """Standing `always` grants for *commands*, as an answer makes them: their IDs."""
    store = GrantStore(home)
    made = [
        store.add(scope=Scope.ALWAYS, command=c, cwd="/srv", request="0" * 16, user="me")
        for c in commands
    ]
    return [g.id for g in made if g.id is not None]


class TestOneRuleForEveryId:
    @pytest.mark.parametrize(
        ("args", "lead"),
        [
            (("show", "5f"), ""),
            (("facts", "forget", "p12"), "p and "),
            (("approvals", "revoke", "g12"), "g and "),
        ],
        ids=["request", "fact", "grant"],
    )
    def test_every_refusal_says_the_rule(
        self, home: Path, args: tuple[str, ...], lead: str
    ) -> None:
        """Too short: each says the same rule, with its letter."""
        Channel.open(home).close()
        code, output = run(*args, cols=200)
        assert code == 1, output
        assert RULE.format(lead=lead) in " ".join(output.split())

    def test_a_fact_by_its_start_in_any_case(self, home: Path) -> None:
        """`wisp facts forget P` + 4 characters of its ID, upper case, forgets it."""
        Channel.open(home).close()
        stored = kept_fact(home, "BLUE HERON")
        code, output = run("facts", "forget", stored.id[:5].upper(), cols=80)
        assert code == 0, output
        assert FactStore(home).list() == []

    def test_a_grant_by_its_start_in_any_case(self, home: Path) -> None:
        """`wisp approvals revoke G` + 4 characters of its ID revokes it (whole IDs were the
        only ones taken)."""
        Channel.open(home).close()
        (grant,) = grants(home, "make deploy")
        code, output = run("approvals", "revoke", grant[:5].upper(), cols=80)
        assert code == 0, output
        assert f"revoked {grant}" in output and GrantStore(home).list() == []

    def test_a_grant_prefix_two_start_is_refused(self, home: Path) -> None:
        """A start that two grants share is refused naming both; nothing is revoked."""
        Channel.open(home).close()
        first, second = grants(home, "make deploy", "rm -rf ~")
        twin = first[:5] + "ffff" if first[5:] != "ffff" else first[:5] + "0000"
        path = home / "grants.json"
        path.write_text(path.read_text().replace(second, twin))  # two IDs that start alike
        code, output = run("approvals", "revoke", first[:5], cols=200)
        assert code == 1 and first in output and twin in output, output
        assert len(GrantStore(home).list()) == 2
