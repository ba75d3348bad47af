"""The self-guard: does a tool call reach wisp's own directory?

An agent that can write into `$WISP_HOME` can answer for the person (an answer file, a
grant, a setting). The harness's own sandbox is the wall (`wisp agents setup` turns it on,
docs/agents.md); this is the second line: a call that reaches `$WISP_HOME`, or runs a `wisp`
command that answers or grants, is always put to the person and never covered by a grant.

Every path a call names is resolved as the harness would resolve it: relative to the call's
working directory (and to each directory a shell command `cd`s or `pushd`es into), `~` and
`~user`, `$VAR` and `${VAR}` from the hook's environment, `..`, `//`, `/proc/self/cwd` and
`/proc/self/root`, `file://` URIs, symbolic links (`realpath`), and shell globs (a pattern
that can match `$WISP_HOME` or a path in it). A shell command is read as the shell splits it
into words (quotes removed, `>` and `;` apart from their neighbours), each word and each
`NAME=value` or `PATH`-like part of it looked at.

What it cannot see is named in docs/agents.md: a path built as the command runs (`$(…)`,
`printf`, a script's own logic), a hard link made earlier, a file descriptor passed in. The
sandbox, which denies the write itself, is the answer to those.
"""

# Paths are worked on as text, as the shell and the harness would read them (`//`, `..` before
# symbolic links are resolved, `~user`): pathlib would normalise some of that away first.
# ruff: noqa: PTH100, PTH111, PTH118

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from wisp._text import texts_in

# Text longer than this, or with a line break, is no path (an edit's content, a file's text):
# only its spelled forms of the home are looked for, not resolved.
MAX_PATH_TEXT = 4096
_GLOB_CHARS = frozenset("*?[")
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_PROC_CWD = re.compile(r"^/proc/(?:self|thread-self|\d+)/cwd(?=/|$)")
_PROC_ROOT = re.compile(r"^/proc/(?:self|thread-self|\d+)/root(?=/|$)")
# `wisp` as a program or module (`wisp`, `/x/bin/wisp`, `python -m wisp.relay`, a list item
# 'wisp' in `python -c`), beside a word that answers, grants or loosens.
_WISP = re.compile(r"(?<![\w-])wisp(?![\w-])")
_ANSWERING = re.compile(
    r"(?<![\w-])(approve|deny|answer|decline|keep|drop|revoke|relay|tui|web|pair|set|unset)"
    r"(?![\w-])"
)
_CHANGES_DIRECTORY = frozenset({"cd", "pushd"})


class Guard:
    """What reaches *home*, for calls made with the environment *env*."""

    def __init__(self, home: Path, env: Mapping[str, str] | None = None) -> None:
        self.env = os.environ if env is None else env
        absolute = os.path.normpath(os.path.abspath(home))
        self.targets = frozenset({absolute, os.path.realpath(absolute)})
        self.forms = _home_forms(absolute, self.env)

    def reaches(self, cwd: str, tool_input: Mapping[str, Any], command: str | None = None) -> bool:
        """Whether a call in *cwd* with *tool_input* (a shell call: its *command*) can reach
        the home: run from inside it, naming it or a path in it, or running `wisp` to answer."""
        if self._is_home(os.path.realpath(cwd)):
            return True
        if command is not None and self._command_reaches(command, cwd):
            return True
        for text in texts_in(tool_input):
            if any(form in text for form in self.forms):
                return True
            if len(text) <= MAX_PATH_TEXT and "\n" not in text and self._path_reaches(text, cwd):
                return True
        return False

    # --- a shell command ---------------------------------------------------------------

    def _command_reaches(self, command: str, cwd: str) -> bool:
        if _WISP.search(command) and _ANSWERING.search(command):
            return True
        words = _shell_words(command)
        cwds = [cwd]
        for before, word in zip(["", *words], words, strict=False):
            if before in _CHANGES_DIRECTORY:
                cwds.extend(self._resolved(word, where) for where in tuple(cwds))
            for piece in _pieces(word):
                if any(self._path_reaches(piece, where) for where in cwds):
                    return True
        return False

    # --- one path ----------------------------------------------------------------------

    def _expanded(self, text: str, cwd: str) -> str:
        """*text* as the shell and the harness would read it as a path: a URI's path, its
        variables and `~` expanded, `/proc/self/…` named for what it is, made absolute."""
        if text.startswith("file:"):
            text = unquote(urlsplit(text).path)
        text = _VARIABLE.sub(lambda m: self.env.get(m[1] or m[2], m[0]), text)
        if text.startswith("~"):
            name, sep, rest = text[1:].partition("/")
            if not name and "HOME" in self.env:
                text = self.env["HOME"] + sep + rest
            else:
                text = os.path.expanduser(text)  # ~user, from the password database
        text = _PROC_ROOT.sub("", _PROC_CWD.sub(lambda _: cwd, text)) or "/"
        return os.path.join(cwd, text)

    def _resolved(self, text: str, cwd: str) -> str:
        try:
            return os.path.realpath(self._expanded(text, cwd))
        except ValueError:  # an embedded NUL: no such path
            return cwd

    def _path_reaches(self, text: str, cwd: str) -> bool:
        try:
            path = self._expanded(text, cwd)
            if _GLOB_CHARS.intersection(path):
                return self._pattern_reaches(path)
            return self._is_home(os.path.normpath(path)) or self._is_home(os.path.realpath(path))
        except ValueError:  # an embedded NUL: no file has that name
            return False

    def _pattern_reaches(self, pattern: str) -> bool:
        """Whether a glob can match the home or a path in it: its fixed part resolved, then
        each of the home's remaining names matched against the pattern's."""
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        first = next(i for i, p in enumerate(parts) if _GLOB_CHARS.intersection(p))
        fixed = os.path.realpath("/" + "/".join(parts[:first]))
        rest = parts[first:]
        for target in self.targets:
            if not (target == fixed or target.startswith(fixed.rstrip("/") + "/")):
                continue
            if ".." in rest:  # a pattern that climbs back out: anything under its fixed part
                return True
            names = [n for n in target[len(fixed) :].split("/") if n]
            if len(rest) >= len(names) and all(
                fnmatch.fnmatchcase(name, part) for name, part in zip(names, rest, strict=False)
            ):
                return True
        return False

    def _is_home(self, path: str) -> bool:
        return any(path == t or path.startswith(t.rstrip("/") + "/") for t in self.targets)


def _home_forms(home: str, env: Mapping[str, str]) -> frozenset[str]:
    """The ways text may spell the home outright (looked for in any text, however long)."""
    forms = {home, os.path.realpath(home), "$WISP_HOME", "${WISP_HOME}"}
    user_home = env.get("HOME") or str(Path("~").expanduser())
    for form in tuple(forms):
        if user_home and form.startswith(user_home.rstrip("/") + "/"):
            rest = form[len(user_home.rstrip("/")) :]
            forms.update({"~" + rest, "$HOME" + rest, "${HOME}" + rest})
    return frozenset(f.rstrip(os.sep) for f in forms if f)


def _shell_words(command: str) -> list[str]:
    """The words a POSIX shell would see (quotes removed; `;`, `|`, `>` … words of their own);
    a command it cannot split (an open quote) is split at white space instead."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return command.split()


def _pieces(word: str) -> set[str]:
    """A word, and the paths it may hold: after `NAME=` or `--option=`, between `:`."""
    pieces = {word}
    _, sep, value = word.partition("=")
    if sep:
        pieces.add(value)
    for candidate in tuple(pieces):
        pieces.update(p for p in candidate.split(":") if p)
    return pieces
