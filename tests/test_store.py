"""Documents in WISP_HOME (facts.json, grants.json, config.json): written whole, never torn."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import AskingCommand

from pending import Channel, Decision, FactBinding, Kind
from wisp import FactStore
from wisp.stores.facts import FACTS_MAX_BYTES
from wisp.stores.grants import GRANTS_MAX_BYTES, GrantStore
from wisp.stores.jsonstore import StoreError

_BINDING = FactBinding(
    fact_id="s1",
    subject="release",
    name="codename",
    value="BLUE HERON",
    source="t",
    proposed_by="t",
)


class TestJsonStore:
    def test_a_crashed_writers_temp_file_is_swept_by_the_next_write(self, home: Path) -> None:
        """A `facts.json.*.tmp` left by a writer killed mid-write is removed by the next write
        of facts.json (under its lock, no living writer can own one); others' files stay."""
        store = FactStore(home)
        store.keep(_BINDING, request="0123456789abcdef", via="cli")
        leftover = home / "facts.json.4242.deadbeef.tmp"
        leftover.write_text('{"format": 1, "facts": [')
        unrelated = home / "grants.json.4242.deadbeef.tmp"
        unrelated.write_text("{")
        store.keep(_BINDING, request="fedcba9876543210", via="cli")
        assert not leftover.exists() and unrelated.exists()
        assert [f.request for f in store.list()] == ["0123456789abcdef", "fedcba9876543210"]


def _filled(path: Path, key: str, item: dict[str, str], field: str, cap: int, room: int) -> str:
    """Write a store at *path* holding one *item* whose *field* is made long enough to leave
    the file *room* bytes short of *cap*; returns what was written."""
    body = json.dumps({"format": 1, key: [item]}, indent=2, ensure_ascii=False) + "\n"
    item = {**item, field: item[field] + "x" * (cap - room - len(body.encode()))}
    text = json.dumps({"format": 1, key: [item]}, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text)
    os.chmod(path, 0o600)
    assert len(text.encode()) == cap - room
    return text


class TestStoreCaps:
    def test_long_facts_and_many_grants_stay_usable(self, home: Path) -> None:
        """Eight facts of 9,000 characters, and 17 `always` grants of 4 KB commands, each
        past the 64 KiB a request may hold: every one is listed, and every grant applies."""
        facts = FactStore(home)
        for n in range(8):
            binding = _BINDING._replace(name=f"note{n}", value=f"{n}" * 9000)
            facts.keep(binding, request=f"{n:016x}", via="cli")
        assert len(facts.list()) == 8
        grants = GrantStore(home)
        commands = [f"run {n} " + "y" * 4000 for n in range(17)]
        for n, command in enumerate(commands):
            grants.add(scope="always", command=command, cwd="/", request=f"{n:016x}", user="u")
        assert all(grants.covering(command, "/srv") is not None for command in commands)

    def test_a_keep_past_the_cap_writes_nothing_and_says_so(self, home: Path) -> None:
        """A facts.json one more fact would take past its cap: the keep (and the check made
        before answering) is refused naming the cap and what to do; the file is as it was."""
        home.mkdir(mode=0o700, exist_ok=True)
        stored = FactStore(home)
        stored.keep(_BINDING, request="0123456789abcdef", via="cli")
        (item,) = json.loads(stored.path.read_text())["facts"]
        before = _filled(stored.path, "facts", item, "value", FACTS_MAX_BYTES, room=100)
        binding = _BINDING._replace(name="other")
        with pytest.raises(StoreError, match=r"over its cap of 4,194,304.*wisp facts forget"):
            stored.keep(binding, request="fedcba9876543210", via="cli")
        with pytest.raises(StoreError, match="over its cap"):
            stored.check_writable()
        assert stored.path.read_text() == before
        assert len(stored.list()) == 1  # read whole, under the same cap

    def test_a_grant_past_the_cap_is_not_saved(self, home: Path) -> None:
        """A grants.json one more grant would take past its cap: adding it raises (so no
        one is told it was saved), naming what to revoke; the file is as it was."""
        grants = GrantStore(home)
        grants.add(scope="always", command="ls", cwd="/", request="0123456789abcdef", user="u")
        (item,) = json.loads(grants.path.read_text())["grants"]
        before = _filled(grants.path, "grants", item, "command", GRANTS_MAX_BYTES, room=100)
        with pytest.raises(StoreError, match=r"over its cap.*wisp approvals revoke"):
            grants.add(
                scope="always", command="make", cwd="/", request="fedcba9876543210", user="u"
            )
        assert grants.path.read_text() == before

    def test_the_asker_never_says_a_grant_it_could_not_save(self, channel: Channel) -> None:
        """`wisp approvals request`, answered `always` with grants.json at its cap: approved
        (exit 0), but stdout says the grant was not saved, and stderr why and what to do."""
        grants = GrantStore(channel.home)
        grants.add(scope="always", command="ls", cwd="/", request="0123456789abcdef", user="u")
        (item,) = json.loads(grants.path.read_text())["grants"]
        _filled(grants.path, "grants", item, "command", GRANTS_MAX_BYTES, room=100)
        asking = AskingCommand("approvals", "request", "--", "make test")
        channel.answer(asking.id, Decision.ALWAYS, kind=Kind.COMMAND, via="cli")
        code, out, err = asking.result()
        assert (code, out) == (0, "approved once: the always grant was not saved\n"), err
        assert "over its cap" in err and "wisp approvals revoke" in err
