"""An asking server's own facts (threads' `c…`, the session's `s…`): the FactBook, plain data
that knows no face."""

from __future__ import annotations

import pytest
from hypothesis import given
from strategies import texts

from pending import FactBinding
from wisp import FactBook, FactScope, UnknownFact


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
