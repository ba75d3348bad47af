"""Showing text that came from a request, so that what the person approves is what will run.

Control characters, bidirectional overrides and zero-width characters can make a command look
other than it is (`rm -rf ~` hidden behind a carriage return, a right-to-left override turning
`exe.txt` around). Each is replaced by a visible marker such as ``⟨ESC⟩`` or ``⟨U+202E⟩``.
"""

from __future__ import annotations

import unicodedata

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


def _marker(char: str) -> str:
    name = _NAMES.get(char)
    return f"⟨{name}⟩" if name else f"⟨U+{ord(char):04X}⟩"


def _hidden(char: str) -> bool:
    category = unicodedata.category(char)
    # Spaces other than the plain one (no-break, em, ideographic …) hide where words split.
    return category in _HIDDEN_CATEGORIES or (category == "Zs" and char != " ")


def visible(text: str) -> str:
    """*text* with every invisible or deceptive character replaced by a visible marker."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(_marker(char) if _hidden(char) else char for char in text)


def one_line(text: str, limit: int = 80) -> str:
    """:func:`visible`, cut to *limit* characters with an ellipsis."""
    shown = visible(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
