"""The documentation pages (the repository's docs/*.md), as `wisp docs` reads them.

A wheel ships them inside the package, as ``wisp/_docs/`` (pyproject maps the repository's
docs/ there), so an installed wisp can show the pages its messages point to; a clone (an
editable install) reads docs/ itself.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

_HERE = Path(__file__).resolve().parent.parent  # wisp/, where a wheel puts the pages
# Where to look, in order: what a wheel installed, then a clone's docs/ beside the package.
_PLACES = (_HERE / "_docs", _HERE.parent / "docs")


def _directory() -> Path | None:
    return next((place for place in _PLACES if place.is_dir()), None)


def topics() -> list[str]:
    """Every page's topic (its file name without `.md`), sorted; empty if none shipped."""
    directory = _directory()
    if directory is None:
        return []
    return sorted(path.stem for path in directory.glob("*.md"))


def summary(topic: str) -> str:
    """What the page *topic* is about, in a line: its title (its first heading), as read
    (markdown's backticks left out); empty if it has none."""
    text = page(topic)
    if text is None:
        return ""
    first = next((line for line in text.splitlines() if line.startswith("# ")), "")
    return first.removeprefix("# ").replace("`", "").strip()


# A line that is no paragraph's text: a table row, a heading, a fence, a quote, a list item's
# start (it begins a paragraph of its own), or a blank.
_KEPT = re.compile(r"^(\||#|```|>|\s*$)")
_ITEM = re.compile(r"^(\s*(?:[-*]|\d+\.)\s+)")


def rewrapped(text: str, width: int) -> str:
    """*text* (markdown) with its paragraphs and list items wrapped to *width* columns,
    never a word broken: code blocks, tables and headings as they are (a table row or a line
    of code longer than the width is the pager's to scroll)."""
    out: list[str] = []
    paragraph: list[str] = []
    indent = ""
    fenced = False

    def flush() -> None:
        nonlocal indent
        if paragraph:
            words = " ".join(line.strip() for line in paragraph)
            out.extend(
                textwrap.wrap(
                    words,
                    width=max(width, 20),
                    initial_indent=indent,
                    subsequent_indent=" " * len(indent),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
            paragraph.clear()
        indent = ""

    for line in text.splitlines():
        if line.startswith("```"):
            flush()
            fenced = not fenced
            out.append(line)
        elif fenced or _KEPT.match(line):
            flush()
            out.append(line)
        elif item := _ITEM.match(line):
            flush()
            indent = item.group(1)
            paragraph.append(line[len(indent) :])
        else:
            paragraph.append(line)
    flush()
    return "\n".join(out) + "\n"


def page(topic: str) -> str | None:
    """The text of *topic*'s page; None if there is no such page."""
    directory = _directory()
    if directory is None or topic not in topics():
        return None
    return (directory / f"{topic}.md").read_text(encoding="utf-8")
