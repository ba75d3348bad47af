"""A shell line read by a real bash grammar (tree-sitter with tree-sitter-bash, the grammar
Codex reads commands with): its simple commands, pipelines, lists, redirections,
substitutions, subshells and `cd`s, or why it cannot be read fully.

Pure: no file is read, nothing runs. (Owned by the `shell` work: issue 57.)
"""

from __future__ import annotations

from typing import NamedTuple


class Redirect(NamedTuple):
    """One redirection of a simple command (or of a group around it)."""

    op: str  # as written: `>`, `>>`, `<`, `2>`, `&>`, `>|`, `<<`, `<<<`, …
    target: str | None  # the target word, unquoted; None when it is not a plain word
    writes: bool  # whether it writes a file (`>`, `>>`, `&>`, `>|`, `2>` …, not `<`, `>&2`)


class Simple(NamedTuple):
    """One simple command, as the shell will run it."""

    words: tuple[str, ...]  # the command's name and its arguments, each unquoted
    cwd: str | None  # the directory it runs in after the line's `cd`s; None when unknown
    redirects: tuple[Redirect, ...] = ()
    # The words of the command whose output is piped into this one (`curl … | sh`), if any.
    piped_from: tuple[str, ...] | None = None
    substituted: bool = False  # it runs inside `$(…)` or backticks (or a process substitution)
    background: bool = False  # it runs in the background (`&`)
    # A word it holds is not a plain word the parser can know (`$VAR`, `~`, a glob, `$(…)`):
    # the indexes of such words in `words`, whose text is kept as written.
    expanded: tuple[int, ...] = ()


class Line(NamedTuple):
    """A shell line, read."""

    text: str
    commands: tuple[Simple, ...]  # every simple command, substitutions' included, in order
    # Why the line cannot be read fully (a syntax error, `eval`, `source`, a function
    # definition, a here-document fed to a shell, …), in words; None when every part was.
    unread: str | None = None


def parse_line(line: str, cwd: str) -> Line:
    """*line* as bash reads it, run in *cwd* (absolute)."""
    raise NotImplementedError("issue 57: the shell work fills this in")
