"""`wisp docs [TOPIC]`: the documentation pages, shipped with wisp, wherever it is installed."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from wisp.cli._common import fail, say
from wisp.cli._exit import ExitCode
from wisp.cli._manual import page, topics

DOCS_EXAMPLES = """Examples:
  wisp docs                   the topics
  wisp docs relay             the relay's JSON-lines protocol (through a pager in a terminal)
  wisp docs cli | grep -n 124"""


def docs(
    topic: Annotated[
        str | None,
        typer.Argument(metavar="[TOPIC]", help="A page to read; without one, the topics."),
    ] = None,
) -> None:
    """Read a documentation page: every command, the file format, the relay's protocol, the
    TUI's keys. Without TOPIC, lists the topics. Through a pager when stdout is a terminal,
    plain otherwise. Exit 0; 2 for an unknown topic (or none shipped)."""
    known = topics()
    if not known:
        fail("no documentation pages were found in this installation; reinstall wisp.")
    if topic is None:
        from wisp.cli._common import emit, width
        from wisp.cli._layout import labelled
        from wisp.cli._manual import summary

        say("Topics (wisp docs TOPIC):")
        emit(labelled([(name, summary(name)) for name in known], width(), indent=2))
        return
    text = page(topic)
    if text is None:
        fail(
            f"there is no page {topic[:40]!r}. Topics: {', '.join(known)}; "
            "`wisp docs TOPIC` reads one.",
            ExitCode.ERROR,
        )
    if sys.stdout.isatty():
        import pydoc  # only here: a pager for a person (it honours $MANPAGER and $PAGER)
        import shutil

        from wisp.cli._manual import rewrapped

        # Written at 100 columns: wrapped to the terminal, so no pager breaks a word.
        pydoc.pager(rewrapped(text, shutil.get_terminal_size().columns - 1))
    else:
        sys.stdout.write(text)
