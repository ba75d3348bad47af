"""The pure parts of fitting text to a terminal: wrap() and the listing layout."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from strategies import ids, texts

from wisp._text import cell_width, visible, wrap
from wisp.cli._layout import TABLE_PARAGRAPH_LINES, Column, Role, labelled, layout

MARKER = re.compile(r"⟨(?:[A-Z]{2,3}|U\+[0-9A-F]{4,6})⟩")
widths = st.integers(min_value=1, max_value=120)
words = st.text(st.sampled_from("ab c-/="), min_size=0, max_size=300)


def overruns_alone(line: str, width: int) -> bool:
    """*line* fits *width*, or is one piece that cannot be split: a marker, a character."""
    return cell_width(line) <= width or bool(MARKER.fullmatch(line)) or len(line) == 1


def rebuilds(shown: str, lines: list[str]) -> bool:
    """Whether *lines*, joined by "" or by the one space a break consumed, are *shown*."""

    def rest(pos: int, index: int) -> bool:
        line = lines[index]
        if not shown.startswith(line, pos):
            return False
        end = pos + len(line)
        if index == len(lines) - 1:
            return end == len(shown) or shown[end:] == " "
        return rest(end, index + 1) or (shown[end : end + 1] == " " and rest(end + 1, index + 1))

    return rest(0, 0)


class TestWrap:
    @given(texts, widths)
    def test_lines_fit_and_nothing_is_lost(self, text: str, width: int) -> None:
        """Every line fits (a marker or a wide character wider than the line may overrun
        it alone), and the lines are the visible text, less only the one space each break
        consumed."""
        lines = wrap(text, width)
        for line in lines:
            assert overruns_alone(line, width), (line, width)
        assert rebuilds(visible(text), lines)

    @given(words, st.integers(min_value=8, max_value=80))
    def test_breaks_at_spaces_where_it_can(self, text: str, width: int) -> None:
        """A word no longer than the line is never split."""
        lines = wrap(text, width)
        for word in text.split():
            if len(word) <= width:
                assert any(word in line.split() for line in lines), (word, lines)

    def test_markers_are_never_split(self) -> None:
        """An escape shown as ⟨ESC⟩ stays one piece."""
        assert wrap("echo hi\rrm", 5) == ["echo", "hi", "⟨CR⟩r", "m"]

    @given(texts, st.integers(min_value=10, max_value=60), st.integers(min_value=4, max_value=60))
    def test_a_hanging_indent(self, text: str, first: int, then: int) -> None:
        """With *then*, lines after the first take that width."""
        lines = wrap(text, first, then=then)
        for n, line in enumerate(lines):
            assert overruns_alone(line, first if n == 0 else then)


REQUESTS = (
    Column(header="ID", role=Role.KEY),
    Column(header="KIND"),
    Column(header="ASKED", role=Role.FLEX),
    Column(header="BY", role=Role.FIELD, label="by"),
)


class TestLayout:
    @given(st.lists(st.tuples(ids, texts, texts), min_size=1, max_size=5), st.integers(20, 220))
    def test_fits_any_width_and_keys_are_whole(
        self, rows: list[tuple[str, str, str]], width: int
    ) -> None:
        """Table or stacked, every line fits and every key is whole on a line of its own
        row's start; what a table cuts, its pointer names."""
        cells = [(key, "command", [("command", asked)], by) for key, asked, by in rows]
        lines = layout(REQUESTS, cells, width, pointer=lambda key: f"wisp show {key}")
        texts_ = [line.text for line in lines]
        keys = {key for key, _, _ in rows}
        for text in texts_:
            # A marker folds whole; a key is never folded (a line of its own when wider).
            assert cell_width(text) <= width or MARKER.search(text) or text in keys, (text, width)
        for key, _, _ in rows:
            assert any(t.startswith(key) for t in texts_), key

    def test_a_table_cuts_with_a_pointer(self) -> None:
        """A paragraph longer than the table allows is cut with … and pointed to."""
        long = " ".join(["word"] * 200)
        lines = layout(
            REQUESTS,
            [("a1b2c3d4", "command", [("command", long)], "me")],
            120,
            pointer=lambda key: f"see wisp show {key}",
        )
        texts_ = [line.text for line in lines]
        assert texts_[0].split() == ["ID", "KIND", "ASKED", "BY"] and lines[0].header
        assert len(texts_) == 1 + TABLE_PARAGRAPH_LINES + 1
        assert texts_[TABLE_PARAGRAPH_LINES].endswith(" …")
        assert texts_[-1] == "see wisp show a1b2c3d4"

    def test_without_a_limit_nothing_is_cut(self) -> None:
        long = " ".join(["word"] * 200)
        lines = layout(REQUESTS, [("a1", "k", [("v", long)], "me")], 120, pointer=str, limit=None)
        assert "…" not in "".join(line.text for line in lines)

    def test_labelled_goes_under_the_label_when_narrow(self) -> None:
        """Too narrow to put a value beside its label: it goes under it, whole."""
        assert labelled([("command", "make deploy now")], 20) == ["command", "  make deploy now"]
        assert labelled([("in", "/srv")], 40) == ["in /srv"]
