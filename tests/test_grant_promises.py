"""The person is never told "approved always" for a grant that was not saved: with grants.json
at its cap, or damaged, a `project` or `always` approval is refused before it is written
(exit 2, saying why and what to do), the request still waits, and `--scope once` answers it.
Real processes, a real pty."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import AskingCommand, in_terminal

from wisp import GrantStore
from wisp.stores.grants import GRANTS_MAX_BYTES


def at_its_cap(home: Path) -> str:
    """grants.json holding one grant long enough to leave it 100 bytes short of its cap."""
    grants = GrantStore(home)
    grants.add(scope="always", command="ls", cwd="/", request="0123456789abcdef", user="u")
    (item,) = json.loads(grants.path.read_text())["grants"]
    body = json.dumps({"format": 1, "grants": [item]}, indent=2) + "\n"
    item["command"] += "x" * (GRANTS_MAX_BYTES - 100 - len(body.encode()))
    text = json.dumps({"format": 1, "grants": [item]}, indent=2) + "\n"
    grants.path.write_text(text)
    os.chmod(grants.path, 0o600)
    return text


class TestAStandingApprovalThatCannotBeSaved:
    def test_a_full_grants_store_refuses_always(self, home: Path) -> None:
        """grants.json at its cap: `approve --scope always` exits 2 naming the cap and `--scope
        once`, writes nothing, and never says "approved always"; once then approves it."""
        asker = AskingCommand("approvals", "request", "--json", "--timeout", "120", "--", "make")
        try:
            before = at_its_cap(home)
            for scope in ("always", "project"):
                code, out = in_terminal("approvals", "approve", asker.id, "--scope", scope)
                assert code == 2, out
                assert "over its cap" in out and "--scope once" in out, out
                assert f"approved {scope}" not in out, out
                assert not (home / "pending" / f"{asker.id}.answer.json").exists()
            assert GrantStore(home).path.read_text() == before
            code, out = in_terminal("approvals", "approve", asker.id)
            assert code == 0 and "approved once" in out, out
            exit_code, verdict, err = asker.result()
            assert (exit_code, json.loads(verdict)["scope"]) == (0, "once"), err
        finally:
            asker.process.kill()
            asker.process.wait(timeout=30)

    def test_a_damaged_grants_store_refuses_always(self, home: Path) -> None:
        """A grants.json that does not parse: `approve --scope always` exits 2 saying it is
        damaged; the file is left as it was."""
        asker = AskingCommand("approvals", "request", "--timeout", "120", "--", "make")
        try:
            path = GrantStore(home).path
            path.write_text('{"format": 1, "grants": [')
            os.chmod(path, 0o600)
            code, out = in_terminal("approvals", "approve", asker.id, "--scope", "always")
            assert code == 2, out
            assert "damaged" in out and "approved always" not in out, out
            assert path.read_text() == '{"format": 1, "grants": ['
        finally:
            asker.process.kill()
            asker.process.wait(timeout=30)
