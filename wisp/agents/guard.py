"""The self-guard: does a tool call reach wisp's own directory, or wisp's own program?

An agent that can write into `$WISP_HOME` can answer for the person (an answer file, a
grant, a setting); one that can write wisp's program (the `wisp` the hook runs, its virtual
environment, wisp's package folders, the guard script) can take the hook over, and every
later call is its to allow. The harness's own sandbox is the wall (`wisp agents setup` turns
it on, docs/agents.md); this is the second line: a call that reaches `$WISP_HOME` or wisp's
program, or runs a `wisp` command that answers or grants, is always put to the person and
never covered by a grant.

Every path a call names is resolved as the harness would resolve it: relative to the call's
working directory (and to each directory a shell command `cd`s or `pushd`es into), `~` and
`~user`, `$VAR` and `${VAR}` from the hook's environment, `//`, `/proc/self/cwd` and
`/proc/self/root`, `file://` URIs, and shell globs (a pattern that can match a protected
path or a path in it). Each is read both ways a `..` can be taken: logically, `..` collapsed
as text first (as `cd` does without `-P`, so `cd link/../link` stays in `link`), then its
symbolic links followed; and physically, symbolic links followed first (as the kernel opens
a path, so `link/..` is the parent of where `link` points). A call is guarded when either
reading reaches a protected path. A shell command is read as the shell splits it
into words (quotes removed, `>` and `;` apart from their neighbours), each word and each
`NAME=value` or `PATH`-like part of it looked at.

What it cannot see is named in docs/agents.md: a path built as the command runs (`$(…)`,
`printf`, a script's own logic), a hard link made earlier, a file descriptor passed in. The
sandbox, which denies the write itself, is the answer to those.
"""

from __future__ import annotations

# Paths are worked on as text, as the shell and the harness would read them (`//`, `..` before
# symbolic links are resolved, `~user`): pathlib would normalise some of that away first.
# ruff: noqa: PTH100, PTH111, PTH118, PTH120
import fnmatch
import functools
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pending import NamedTuple, StrEnum
from wisp._text import texts_in

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

# Text longer than this, or with a line break, is no path (an edit's content, a file's text):
# only its spelled forms of the home are looked for, not resolved.
MAX_PATH_TEXT = 4096
_GLOB_CHARS = frozenset("*?[")
# Patterns, compiled on first use (re's cache) and only for text that may hold what they
# match: compiling them all is ~0.5 ms of every hook, most of whose calls hold none (issue 57).
_VARIABLE = r"\$(?:\{(\w+)\}|(\w+))"
_PROC_CWD = r"^/proc/(?:self|thread-self|\d+)/cwd(?=/|$)"
_PROC_ROOT = r"^/proc/(?:self|thread-self|\d+)/root(?=/|$)"
# `wisp` as a program or module (`wisp`, `/x/bin/wisp`, `python -m wisp.relay`, a list item
# 'wisp' in `python -c`), beside a word that answers, grants or loosens.
_WISP = r"(?<![\w-])wisp(?![\w-])"
_ANSWERING = (
    r"(?<![\w-])(approve|deny|answer|decline|keep|drop|revoke|relay|tui|web|pair|set|unset)"
    r"(?![\w-])"
)
_CHANGES_DIRECTORY = frozenset({"cd", "pushd"})
# Beside this module: wisp.agents.hookio.GUARD_SCRIPT (not imported: hookio names the gate,
# which imports this module, a circle tests/test_layers.py refuses).


class Reached(StrEnum):
    """What a guarded call reaches."""

    CHANNEL = "channel"  # $WISP_HOME: answers, grants, settings
    PROGRAM = "program"  # what the hook runs: `wisp`, its environment, wisp's package, the guard


class Touch(NamedTuple):
    """A protected path a call reaches (a named tuple, as the rest of the granted hook's path:
    no attrs to load, issue 41)."""

    reached: Reached
    path: str  # the home, or the program's file or folder, as wisp names it


class Guard:
    """What reaches *home* or wisp's *program* (its files and folders: by default this
    process's, :func:`program_paths`), for calls made with the environment *env*."""

    def __init__(
        self,
        home: Path,
        env: Mapping[str, str] | None = None,
        program: Iterable[str] | None = None,
    ) -> None:
        self.env = os.environ if env is None else env
        absolute = os.path.normpath(os.path.abspath(home))
        self.home = Touch(Reached.CHANNEL, absolute)
        targets = {absolute: self.home, os.path.realpath(absolute): self.home}
        for target, path in _program_targets(
            program_paths() if program is None else tuple(program)
        ):
            targets.setdefault(target, Touch(Reached.PROGRAM, path))
        # Each protected path with the "/" that starts a path inside it.
        self.targets = tuple((t, t.rstrip("/") + "/", touch) for t, touch in targets.items())
        self.forms = _home_forms(absolute, self.env)

    def reaches(
        self, cwd: str, tool_input: Mapping[str, Any], command: str | None = None
    ) -> Touch | None:
        """What a call in *cwd* with *tool_input* (a shell call: its *command*) can reach of
        the home or the program: run from inside it, naming it or a path in it, or running
        `wisp` to answer (the home); None if nothing."""
        # The cwd read both ways (a NUL in it raises ValueError: no such directory).
        for where in _readings(cwd):
            touch = self._protected(where)
            if touch is not None:
                return touch
        if command is not None:
            touch = self._command_reaches(command, cwd)
            if touch is not None:
                return touch
        for text in texts_in(tool_input):
            if any(form in text for form in self.forms):
                return self.home
            if len(text) <= MAX_PATH_TEXT and "\n" not in text:
                touch = self._path_reaches(text, cwd)
                if touch is not None:
                    return touch
        return None

    # --- a shell command ---------------------------------------------------------------

    def _command_reaches(self, command: str, cwd: str) -> Touch | None:
        if (
            "wisp" in command
            and re.search(_WISP, command) is not None
            and re.search(_ANSWERING, command) is not None
        ):
            return self.home
        words = _shell_words(command)
        cwds = [cwd]
        for before, word in zip(["", *words], words, strict=False):
            if before in _CHANGES_DIRECTORY:
                # Where the shell then is, both ways: `cd` (logically) and `cd -P`.
                moved = (each for where in cwds for each in self._readings(word, where))
                cwds = list(dict.fromkeys([*cwds, *moved]))
            for piece in _pieces(word):
                for where in cwds:
                    touch = self._path_reaches(piece, where)
                    if touch is not None:
                        return touch
        return None

    # --- one path ----------------------------------------------------------------------

    def _expanded(self, text: str, cwd: str) -> str:
        """*text* as the shell and the harness would read it as a path: a URI's path, its
        variables and `~` expanded, `/proc/self/…` named for what it is, made absolute."""
        if text.startswith("file:"):
            text = unquote(urlsplit(text).path)
        if "$" in text:
            text = re.sub(_VARIABLE, lambda m: self.env.get(m[1] or m[2], m[0]), text)
        if text.startswith("~"):
            name, sep, rest = text[1:].partition("/")
            if not name and "HOME" in self.env:
                text = self.env["HOME"] + sep + rest
            else:
                text = os.path.expanduser(text)  # ~user, from the password database
        if text.startswith("/proc/"):
            text = re.sub(_PROC_ROOT, "", re.sub(_PROC_CWD, lambda _: cwd, text))
        text = text or "/"
        return os.path.join(cwd, text)

    def _readings(self, text: str, cwd: str) -> list[str]:
        """The absolute paths *text* names from *cwd* (:func:`_readings`); none for a path
        with a NUL (no file has that name)."""
        try:
            return _readings(self._expanded(text, cwd))
        except ValueError:  # an embedded NUL: no such path
            return []

    def _path_reaches(self, text: str, cwd: str) -> Touch | None:
        try:
            path = self._expanded(text, cwd)
            if _GLOB_CHARS.intersection(path):
                return self._pattern_reaches(path) or self._pattern_reaches(os.path.normpath(path))
            readings = _readings(path)
        except ValueError:  # an embedded NUL: no file has that name
            return None
        for reading in readings:
            touch = self._protected(reading)
            if touch is not None:
                return touch
        return None

    def _pattern_reaches(self, pattern: str) -> Touch | None:
        """What a glob can match of the protected paths or a path in one: its fixed part
        resolved, then each of the target's remaining names matched against the pattern's."""
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        first = next(i for i, p in enumerate(parts) if _GLOB_CHARS.intersection(p))
        fixed = os.path.realpath("/" + "/".join(parts[:first]))
        rest = parts[first:]
        for target, _, touch in self.targets:
            if not (target == fixed or target.startswith(fixed.rstrip("/") + "/")):
                continue
            if ".." in rest:  # a pattern that climbs back out: anything under its fixed part
                return touch
            names = [n for n in target[len(fixed) :].split("/") if n]
            if len(rest) >= len(names) and all(
                fnmatch.fnmatchcase(name, part) for name, part in zip(names, rest, strict=False)
            ):
                return touch
        return None

    def _protected(self, path: str) -> Touch | None:
        """The protected path *path* is, or lies in (the home first); None if none."""
        for target, inside, touch in self.targets:
            if path == target or path.startswith(inside):
                return touch
        return None


def _readings(path: str) -> list[str]:
    """The paths absolute *path* names: logically (`..` collapsed as text, as `cd` reads it;
    as written, then its links followed) and physically (links followed first, as the kernel
    opens it). Raises ValueError for a NUL in it."""
    logical = os.path.normpath(path)
    readings = [logical, os.path.realpath(path)]
    if "/.." in path:  # only a `..` makes the two readings part
        readings.append(os.path.realpath(logical))
    return readings


@functools.cache
def program_paths() -> tuple[str, ...]:
    """The files and folders whose change changes what this process's hook runs, as
    :func:`wisp.agents.install.this_install` names them: the `wisp` program it was started
    as, its virtual environment, its interpreter (and that interpreter's own install where it
    lies in the person's home), wisp's and the channel's package folders, and the guard
    script."""
    from wisp.agents.install import this_install

    return tuple(str(path) for path in this_install().paths)


@functools.cache
def _program_targets(paths: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each of *paths*, as written and resolved, that the person can change (it, or the
    folder it lies in, is writable: the agent runs as the person; a system interpreter in
    /usr is not theirs to write), each with the path as wisp names it. Once per process: the links
    are followed at the first call, not at every one."""
    targets: dict[str, str] = {}
    for each in paths:
        path = os.path.normpath(os.path.abspath(each))
        for target in (path, os.path.realpath(path)):
            if os.access(target, os.W_OK) or os.access(os.path.dirname(target), os.W_OK):
                targets.setdefault(target, path)
    # The deepest first: a call reaching the guard script is named for it, not its package.
    return tuple(sorted(targets.items(), key=lambda item: -len(item[0])))


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
