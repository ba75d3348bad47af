"""Documents in WISP_HOME (facts.json, grants.json, config.json): written whole, never torn."""

from __future__ import annotations

from pathlib import Path

from pending import FactBinding
from wisp import FactStore

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
