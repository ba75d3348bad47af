"""The MCP server's own facts (threads' `c…`, the session's `s…`) and what its results say,
without a client; and that the person's everyday commands never load the MCP SDK."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from strategies import texts

from pending import FactBinding
from wisp.mcp._threads import FactBook, FactScope, UnknownFact


def book_with_fact(value: str = "BLUE HERON") -> tuple[FactBook, str, str]:
    book = FactBook()
    thread = book.open_thread()
    fact = book.record(
        thread, subject="release", name="codename", value=value, source="s", proposed_by="cc"
    )
    return book, thread, fact.id


class TestFactBook:
    def test_record_and_see(self) -> None:
        """A recorded fact is the thread's (c…), seen by that thread alone."""
        book, thread, fact_id = book_with_fact()
        other = book.open_thread()
        assert fact_id.startswith("c")
        assert [f.id for f in book.seen_by(thread)] == [fact_id]
        assert book.seen_by(other) == []
        with pytest.raises(UnknownFact, match="no fact"):
            book.visible(other, fact_id)

    def test_move_renumbers_and_the_old_id_still_leads_there(self) -> None:
        """To the session it becomes s…, seen by every thread; the old id follows the move,
        so a keep request naming it still finds what the person was shown."""
        book, thread, fact_id = book_with_fact()
        other = book.open_thread()
        moved = book.move(fact_id, FactScope.SESSION, thread=thread)
        assert moved.id.startswith("s") and moved.was == fact_id
        assert [f.id for f in book.seen_by(other)] == [moved.id]
        assert book.binding(fact_id) == FactBinding(
            fact_id=moved.id,
            subject="release",
            name="codename",
            value="BLUE HERON",
            source="s",
            proposed_by="cc",
        )
        assert book.move(moved.id, FactScope.SESSION, thread=other) is not None
        back = book.move(moved.id, FactScope.THREAD, thread=other)
        assert back.id.startswith("c") and back.thread == other
        assert book.lookup(fact_id) == back

    def test_a_closing_thread_keeps_only_what_a_request_names(self) -> None:
        """Closed: its facts go, but one a keep request names stays known (a later keep
        still applies it)."""
        book, thread, fact_id = book_with_fact()
        plain = book.record(
            thread, subject="a", name="b", value="c", source="s", proposed_by="cc"
        ).id
        book.link(fact_id, "a1b2c3d4")
        book.close_thread(thread)
        assert book.lookup(plain) is None
        assert book.lookup(fact_id) is not None
        assert [f.id for f in book.asking("a1b2c3d4")] == [fact_id]
        assert book.seen_by(thread) == []

    @given(value=texts)
    def test_any_text_is_kept_as_given(self, value: str) -> None:
        """Facts hold any text exactly; what the person is shown is what was recorded."""
        book, _thread, fact_id = book_with_fact(value)
        binding = book.binding(fact_id)
        assert binding is not None and binding.value == value


class TestViews:
    def test_still_waiting_names_the_answer_and_the_bound(self, tmp_path: Path) -> None:
        """A pending result says how to answer, how to wait again, and when it ends."""
        from pending import CommandBinding, Kind, make_request
        from wisp._home import open_channel
        from wisp.mcp._views import still_waiting

        with open_channel(tmp_path / "home") as channel, channel.server() as lock:
            request = make_request(
                kind=Kind.COMMAND,
                binding=CommandBinding(command="make", cwd="/srv"),
                title="t",
                body="b",
                server=lock.record(client="c"),
                expires_in_s=600,
            )
        text, data = still_waiting(request)
        assert (data["state"], data["approved"], data["id"]) == ("pending", False, request.id)
        assert f"wisp approvals approve {request.id}" in text and "await_request" in text
        assert data["expiresAt"] and data["expiresAt"] in text
        assert request.expires_at is not None and request.expires_at > datetime.now(UTC)


class TestImports:
    def test_everyday_commands_never_load_the_sdk(self, home: Path) -> None:
        """`wisp pending` imports neither mcp nor mcp_types, nor `wisp mcp --help`: only
        running `wisp mcp` does, inside its command."""
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "wisp", "pending", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        loaded = re.findall(r"\|\s+(mcp(?:_types)?(?:\.\S+)?)\s*$", done.stderr, re.MULTILINE)
        assert loaded == []
        # Its help loads the command's module (the lazy root builds it), never its SDK.
        probe = (
            "import sys\n"
            "sys.argv = ['wisp', 'mcp', '--help']\n"
            "from wisp.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
        )
        helped = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
        )
        modules = set(helped.stderr.split())
        assert "wisp.cli.mcp" in modules, helped.stderr
        assert not {m for m in modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))}
