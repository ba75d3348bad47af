"""`approve --scope always` (or project) on a command that names wisp's own directory: no
standing grant ever covers such a command (the gate asks each time), so the answer is given as
`once`, the person is told so and why, and no grant that could never apply is saved. Real
processes and a real terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import AskingCommand, in_terminal

from pending import Channel


class TestAStandingScopeOnWispsOwnDirectory:
    @pytest.mark.parametrize("scope", ["always", "project"])
    def test_it_is_approved_once_and_says_why(self, home: Path, scope: str) -> None:
        """The asker gets `approved once`; the answering command prints `approved once`,
        says on stderr that it was once only and why; grants.json holds no grant."""
        asking = AskingCommand(
            "approvals", "request", "--timeout", "60", "--", "rm", "-rf", "$WISP_HOME/grants.json"
        )
        code, out = in_terminal("approvals", "approve", asking.id, "--scope", scope)
        assert code == 0, out
        assert f"approved once ({asking.id})" in out, out
        said = " ".join(out.split())
        assert f"approved once only, not {scope}" in said and "names wisp's own directory" in said
        status, stdout, _err = asking.result()
        assert status == 0 and "approved once" in stdout + _err
        with Channel.open(home) as channel:
            answer = channel.status(asking.id).answer
        assert answer is not None and answer.decision == "once"
        grants = home / "grants.json"
        assert not grants.exists() or json.loads(grants.read_text()).get("grants", []) == []

    def test_elsewhere_always_is_kept(self, home: Path) -> None:
        """A command that does not name wisp's directory keeps its `always`."""
        asking = AskingCommand("approvals", "request", "--timeout", "60", "--", "make", "x")
        code, out = in_terminal("approvals", "approve", asking.id, "--scope", "always")
        assert code == 0, out
        assert f"approved always ({asking.id})" in out, out
        asking.result()
