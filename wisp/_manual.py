"""The documentation pages (the repository's docs/*.md), as `wisp docs` reads them.

A wheel ships them inside the package, as ``wisp/_docs/`` (pyproject maps the repository's
docs/ there), so an installed wisp can show the pages its messages point to; a clone (an
editable install) reads docs/ itself.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
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


def page(topic: str) -> str | None:
    """The text of *topic*'s page; None if there is no such page."""
    directory = _directory()
    if directory is None or topic not in topics():
        return None
    return (directory / f"{topic}.md").read_text(encoding="utf-8")
