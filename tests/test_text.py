"""What the person is shown: hidden characters made visible, nothing else changed."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wisp._text import _BLANK, _BLANK_PATTERN, cut_path, one_line, visible

HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"}


def shown_safely(text: str) -> bool:
    return all(
        unicodedata.category(c) not in HIDDEN and not (unicodedata.category(c) == "Zs" and c != " ")
        for c in text
    )


class TestVisible:
    @given(st.text())
    def test_nothing_hidden_survives(self, text: str) -> None:
        """Whatever the input, the output has no control, format, bidi, private-use or
        unassigned character, and no space but the plain one."""
        assert shown_safely(visible(text))

    @given(st.text(st.characters(codec="ascii", exclude_categories=["Cc"])))
    def test_plain_text_is_unchanged(self, text: str) -> None:
        """Printable ASCII is shown exactly as it is."""
        assert visible(text) == text

    def test_markers(self) -> None:
        """Each hidden character becomes a readable marker."""
        assert visible("rm -rf build/\rrm -rf ~") == "rm -rf build/⟨CR⟩rm -rf ~"
        assert visible("a\u202eb\u200bc\u00a0d\x1b[2J") == "a⟨U+202E⟩b⟨U+200B⟩c⟨U+00A0⟩d⟨ESC⟩[2J"

    def test_blank_letters_marks_and_symbols(self) -> None:
        """Characters that draw nothing though they are not controls (the Hangul fillers,
        the combining grapheme joiner, variation selectors, the blank braille pattern) are
        made visible too: `rm\u3164-rf` must not pass for a space."""
        blank = "\u115f\u1160\u3164\uffa0\u034f\ufe0f\ufe00\u2800\U000e0100\u180b"
        shown = visible(f"a{blank}b")
        assert shown == (
            "a⟨U+115F⟩⟨U+1160⟩⟨U+3164⟩⟨U+FFA0⟩⟨U+034F⟩⟨U+FE0F⟩⟨U+FE00⟩⟨U+2800⟩⟨U+E0100⟩⟨U+180B⟩b"
        )

    def test_printable_is_exactly_not_hidden_by_category(self) -> None:
        """visible()'s fast path: text that str.isprintable() passes holds no character
        hidden by its category (checked over every code point), so only the blank ones
        are left to look for."""
        wrong = [
            code
            for code in range(sys.maxunicode + 1)
            if chr(code).isprintable() != shown_safely(chr(code))
        ]
        assert wrong == []

    def test_printable_text_beyond_ascii(self) -> None:
        """Printable text with a dash or a letter beyond ASCII is shown as it is; a blank
        character in it is still marked."""
        assert visible("make deploy — wisp approvals approve a1b2c3d4") == (
            "make deploy — wisp approvals approve a1b2c3d4"
        )
        for blank in sorted(_BLANK):
            assert visible(f"é{blank}") == f"é⟨U+{ord(blank):04X}⟩"

    def test_the_blank_scan_finds_exactly_the_blank_characters(self) -> None:
        """The scan's ranges match exactly the blank set's characters, over every code
        point: the pattern is written as ranges for speed, the set is what is meant."""
        blank = re.compile(_BLANK_PATTERN)
        found = {chr(c) for c in range(sys.maxunicode + 1) if blank.fullmatch(chr(c))}
        assert found == _BLANK

    @given(st.text(), st.integers(2, 200))
    def test_one_line_is_bounded(self, text: str, limit: int) -> None:
        """one_line never exceeds its limit and stays safe."""
        shown = one_line(text, limit)
        assert len(shown) <= limit and shown_safely(shown)


class TestCutPath:
    @pytest.mark.parametrize(
        ("path", "limit", "shown"),
        [
            ("/srv/a.py", 20, "/srv/a.py"),
            ("/home/newbie/src/app/main.py", 20, "/home/n…/app/main.py"),
            ("/home/newbie/src/app/main.py", 12, "/ho…/main.py"),
            ("/srv/" + "x" * 30 + ".py", 12, "/…xxxxxxx.py"),
        ],
    )
    def test_the_file_name_stays(self, path: str, limit: int, shown: str) -> None:
        """A path that fits is whole; a longer one is cut in its middle, keeping its end
        (the file's name whole where it leaves a character before the ellipsis)."""
        assert cut_path(path, limit) == shown

    @given(st.text(max_size=80), st.integers(min_value=1, max_value=60))
    def test_bounded_and_visible(self, path: str, limit: int) -> None:
        """Never longer than its limit, and nothing hidden gets through."""
        shown = cut_path(path, limit)
        assert len(shown) <= limit and shown == visible(shown)
