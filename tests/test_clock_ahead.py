"""An answerer whose clock runs ahead of its asker's: a request past its `expiresAt` by the
answerer's clock, whose asker holds its lock, is still answered (liveness is the held lock,
not the time), and the asker gets the answer. Real processes, a real pty, a real request file
(its `expiresAt` set back, as a clock 5 minutes ahead would read it)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from helpers import AskingCommand, in_terminal

AHEAD = timedelta(minutes=5)


def read_as_if_ahead(home: Path, request_id: str) -> None:
    """Rewrite the request so that this machine's clock reads it as 5 minutes past expiry."""
    path = home / "pending" / f"{request_id}.request.json"
    record = json.loads(path.read_text())
    past = datetime.now(UTC) - AHEAD
    record["expiresAt"] = past.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    staged = path.with_suffix(".tmp")
    staged.write_text(json.dumps(record, indent=2) + "\n")
    os.chmod(staged, 0o600)
    os.replace(staged, path)


class TestAnAnswererAhead:
    def test_a_live_asker_is_still_waiting(self, home: Path) -> None:
        """The asker lives (its lock held): `wisp approvals approve` is not told "Nobody is
        waiting"; its answer is taken and the asker approves."""
        asker = AskingCommand("approvals", "request", "--json", "--timeout", "120", "--", "make")
        try:
            read_as_if_ahead(home, asker.id)
            code, out = in_terminal("approvals", "approve", asker.id)
            assert code == 0, out
            assert "Nobody is waiting" not in out, out
            exit_code, verdict, err = asker.result()
            assert (exit_code, json.loads(verdict)["approved"]) == (0, True), err
        finally:
            asker.process.kill()
            asker.process.wait(timeout=30)
