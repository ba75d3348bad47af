"""What would be over the channel's 64 KiB record cap is refused before anything is written:
a command too long to ask about, a fact value too long, a `deny --reason` or a free-text
answer too long. The size checked is the record's as written (UTF-8, JSON-escaped), not the
count of characters. Real processes, real ptys."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import AskingCommand, audit_records, in_terminal, run_wisp

from pending import MAX_RECORD_BYTES

# Under the cap counted in characters, far over it as escaped JSON (each \x01 is `\u0001`,
# six bytes, and a request carries its command in its binding and its body).
ESCAPED = "\x01" * (MAX_RECORD_BYTES // 8)
OVER = "x" * (MAX_RECORD_BYTES + 1)
CAP_SAID = f"{MAX_RECORD_BYTES:,}-byte"


def request_files(home: Path) -> list[str]:
    return [n for n in os.listdir(home / "pending") if not n.startswith(".")]


class TestAskingOverTheCap:
    def test_a_command_too_long_once_escaped(self, home: Path) -> None:
        """`wisp approvals request` with a command under 64 Ki characters but over the cap as
        escaped JSON: exit 2 naming the cap; nothing filed, announced or audited."""
        assert len(ESCAPED) < MAX_RECORD_BYTES
        done = run_wisp("approvals", "request", "--timeout", "5", "--json", "--", ESCAPED)
        assert done.returncode == 2, done.stderr
        assert CAP_SAID in done.stderr and "nothing was written" in done.stderr, done.stderr
        assert "asking you" not in done.stderr, done.stderr
        assert request_files(home) == []
        assert audit_records(home) == []

    def test_a_fact_too_long(self, home: Path) -> None:
        """`wisp facts request` with a 64 KiB value: exit 2 naming the cap, nothing filed."""
        done = run_wisp("facts", "request", "shop", "notes", OVER)
        assert done.returncode == 2, done.stderr
        assert CAP_SAID in done.stderr, done.stderr
        assert request_files(home) == []
        assert audit_records(home) == []


class TestAnsweringOverTheCap:
    def test_a_deny_reason_too_long(self, home: Path) -> None:
        """`deny --reason` of 64 KiB: exit 2 naming the cap, no answer written or audited,
        and the request still waits (the asker is then answered normally)."""
        asker = AskingCommand("approvals", "request", "--json", "--timeout", "120", "--", "make")
        try:
            code, out = in_terminal("approvals", "deny", asker.id, "--reason", OVER)
            assert code == 2, out
            assert CAP_SAID in out and "not recorded" in out, out
            assert not (home / "pending" / f"{asker.id}.answer.json").exists()
            events = [r["event"] for r in audit_records(home)]
            assert "approval.answered" not in events, events
            code, out = in_terminal("approvals", "deny", asker.id, "--reason", "too slow")
            assert code == 0, out
            exit_code, verdict, err = asker.result()
            assert exit_code == 1, err
            assert json.loads(verdict)["reason"] == "too slow"
        finally:
            asker.process.kill()
            asker.process.wait(timeout=30)

    def test_a_free_text_answer_too_long(self, home: Path) -> None:
        """A free-text answer of 64 KiB: exit 2 naming the cap; the question still waits."""
        asker = AskingCommand("questions", "ask", "Anything to add?", "--timeout", "120")
        try:
            code, out = in_terminal("questions", "answer", asker.id, OVER)
            assert code == 2, out
            assert CAP_SAID in out, out
            assert not (home / "pending" / f"{asker.id}.answer.json").exists()
            assert asker.process.poll() is None  # still waiting for an answer
        finally:
            asker.process.kill()
            asker.process.wait(timeout=30)
