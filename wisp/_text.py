"""Showing text that came from a request, so that what the person approves is what will run.

Control characters, bidirectional overrides and zero-width characters can make a command look
other than it is (`rm -rf ~` hidden behind a carriage return, a right-to-left override turning
`exe.txt` around). Each is replaced by a visible marker such as ``⟨ESC⟩`` or ``⟨U+202E⟩``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_NAMES = {
    "\x00": "NUL",
    "\t": "TAB",
    "\n": "LF",
    "\r": "CR",
    "\x1b": "ESC",
    "\x7f": "DEL",
}
# Categories never shown as themselves: controls, format characters (bidi marks, zero-width
# joiners, BOM), line/paragraph separators, private use, surrogates, unassigned.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
# Characters that draw nothing though their category says they are letters, marks or symbols:
# the Hangul fillers, the combining grapheme joiner, the blank braille pattern, and the
# variation selectors (which change how the character before them looks, or nothing at all).
_BLANK = frozenset(
    {"\u115f", "\u1160", "\u3164", "\uffa0", "\u034f", "\u2800"}
    | {chr(c) for c in range(0xFE00, 0xFE10)}
    | {chr(c) for c in range(0x180B, 0x1810)}
    | {chr(c) for c in range(0xE0100, 0xE01F0)}
)


# One scan for them (str.isprintable() already says whether any character is hidden by its
# category: it is false for exactly those, checked over every code point in
# tests/test_text.py). Written as ranges: the same class as the set's characters one by one,
# compiled in half the time (tests/test_text.py holds the two the same). Compiled on first
# use (re's cache), not as the module loads: a hook whose text is all ASCII never needs it
# (~0.5 ms of compiling, issue 57).
_BLANK_PATTERN = (
    "[\u034f\u115f\u1160\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)


def _marker(char: str) -> str:
    name = _NAMES.get(char)
    return f"⟨{name}⟩" if name else f"⟨U+{ord(char):04X}⟩"


def _hidden(char: str) -> bool:
    # Imported where a character is looked up, not with the module: loading the C module is
    # ~1 ms of every hook's start, and most text is printable ASCII (issue 41).
    import unicodedata

    category = unicodedata.category(char)
    # Spaces other than the plain one (no-break, em, ideographic …) hide where words split.
    return category in _HIDDEN_CATEGORIES or (category == "Zs" and char != " ") or char in _BLANK


def visible(text: str) -> str:
    """*text* with every invisible or deceptive character replaced by a visible marker."""
    if text.isprintable() and (text.isascii() or re.search(_BLANK_PATTERN, text) is None):
        return text  # nothing to mark: one pass in C, not a lookup per character
    return "".join(_marker(char) if _hidden(char) else char for char in text)


def one_line(text: str, limit: int = 80) -> str:
    """:func:`visible`, cut to *limit* characters with an ellipsis."""
    shown = visible(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def cut_path(path: str, limit: int) -> str:
    """:func:`visible` *path* in at most *limit* characters, cut in its middle with an
    ellipsis, so that its end stays: the file's name tells one file from another, its
    directories' first letters seldom do (`/home/newbie/src/app/main.py` in 20 characters
    is `/home/n…/app/main.py`). The end keeps two thirds of the room, or the whole name
    where that is longer and still leaves a character before the ellipsis."""
    shown = visible(path)
    if len(shown) <= limit:
        return shown
    if limit < 3:
        return one_line(shown, limit)
    room = limit - 1  # beside the ellipsis
    name = len(shown) - shown.rstrip("/").rfind("/")  # the last part, with its slash
    tail = max(room * 2 // 3, min(name, room - 1))
    return shown[: room - tail] + "…" + shown[len(shown) - tail :]


def cell_width(text: str) -> int:
    """How many terminal cells *text* takes (wide East Asian characters take two, combining
    marks none)."""
    return sum(_cells(char) for char in text)


def _cells(char: str) -> int:
    import unicodedata  # as in _hidden

    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _fitting(text: str, width: int) -> int:
    """How many leading characters of *text* fit in *width* cells (at least one)."""
    used = 0
    for index, char in enumerate(text):
        used += _cells(char)
        if used > width:
            return max(index, 1)
    return len(text)


_MARKER = r"⟨(?:[A-Z]{2,3}|U\+[0-9A-F]{4,6})⟩"  # compiled on first use, as _BLANK_PATTERN


def _unsplit(text: str, cut: int) -> int:
    """*cut* moved off the inside of a marker (``⟨ESC⟩`` is never split across lines)."""
    for found in re.compile(_MARKER).finditer(text, max(0, cut - 12), cut + 12):
        if found.start() < cut < found.end():
            return found.start() if found.start() > 0 else found.end()
    return cut


def wrap(text: str, width: int, *, then: int | None = None) -> list[str]:
    """:func:`visible` *text* in lines of at most *width* cells, for a person to read whole.

    Lines break at a space where one is in reach (that one space is the break, as in any
    wrapped text); a word longer than a line is folded (never inside a marker such as
    ``⟨ESC⟩``, which, like a wide character, may then overrun a line narrower than itself).
    Nothing else is dropped:
    every other character is on some line, in order. Lines after the first are *then*
    cells wide, if given (for a hanging indent).
    """
    shown = visible(text)
    width = max(width, 1)
    lines: list[str] = []
    while cell_width(shown) > width:
        cut = _unsplit(shown, _fitting(shown, width))
        space = shown.rfind(" ", 0, cut + 1)
        if space > 0:
            lines.append(shown[:space])
            shown = shown[space + 1 :]
        elif space == 0 and cut > 1:
            # A leading space before a word that does not fit after it: the space keeps a
            # line of its own, and the word is not split.
            lines.append(shown[:1])
            shown = shown[1:]
        else:
            lines.append(shown[:cut])
            shown = shown[cut:]
        if then is not None:
            width = max(then, 1)
    if shown or not lines:
        lines.append(shown)
    return lines


def texts_in(value: object) -> Iterator[str]:
    """Every text in a JSON value (a tool call's input): its strings, and its objects' keys."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
