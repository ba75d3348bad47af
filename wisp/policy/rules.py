"""The person's rules (`$WISP_HOME/policy.toml`) and a project's (`.wisp/policy.toml` in the
project: `ask` and `deny` only, since the agent can write its project — a project tightens,
never loosens), each rule carrying examples that must and must not match, checked as the file
loads (a failing example refuses the file, naming its line; the hook then asks).

How a rule matches (docs/policy.md, "How a rule matches"):

- `command`: a list of words, matched word by word against each simple command of a shell
  call as the parser read it (never as a string prefix: `["git", "push"]` does not match `git
  pushx`); `*` as the last word stands for any rest, none included. A `deny` or `ask` rule
  matches a line if ANY of its simple commands matches; an `allow` rule only if EVERY one does.
  For a deny or ask rule, a command run by a path (`/usr/bin/git push`) matches by its
  program's name too; an allow rule takes the program only as written.
- `path`: a glob matched against the call's absolute paths (:func:`glob_regex`); any path for
  deny or ask, every path for allow.
- `tool`, `harness`: the harness's own name for the tool, the harness's name, exactly.
- `project`: the session's project is that directory or inside it.

Loading costs one `stat` per file when there is none: tomllib is imported only to read one.
"""

from __future__ import annotations

# Paths here are text, as the calls they are matched against carry them (a hook's path pays
# for no Path object it does not need): os.path, not pathlib.
# ruff: noqa: PTH111, PTH118
import os
import re
import stat
from functools import lru_cache
from pathlib import Path

from pending import NamedTuple, StrEnum
from wisp._entry import harness_names
from wisp._errors import WispError
from wisp.policy.reading import Effect

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any, NoReturn

POLICY_FILE = "policy.toml"  # in $WISP_HOME; a project's is .wisp/policy.toml
PROJECT_DIR = ".wisp"  # the folder in a project's root that holds its policy file
# The most a policy file may hold: hundreds of rules with their examples fit in far less, and
# a file the hook reads on every call is never allowed to grow into a cost.
POLICY_CAP_BYTES = 256 * 1024
NAME_MAX_CHARS = 80  # a rule's name, as the audit records it and a face shows it
EXAMPLE_MAX_CHARS = 4096  # one example (a command line, a path, a tool name)
ANY_REST = "*"  # as a command's last word: any further words, none included

# The built-in rules' names, as a `[builtin]` table turns them off: one list, which
# wisp.policy.builtin names its rules by.
BUILTIN_NAMES: tuple[str, ...] = ("read-only", "project-edits")

# The harnesses a rule's `harness` names, as `wisp hook NAME` spells them (wisp.agents.hookio
# holds them, above this wing; tests/test_policy_rules.py checks the two agree): a name wisp
# does not know would be a rule that silently never matches.

RULE_KEYS = (
    "name",
    "action",
    "tool",
    "command",
    "path",
    "harness",
    "project",
    "match",
    "not_match",
)
TOP_KEYS = ("rule", "builtin")

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Action(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Origin(StrEnum):
    """Where a rule comes from (shown beside it, and in the audit record of what it decided)."""

    BUILTIN = "built-in"
    PERSON = "person"  # $WISP_HOME/policy.toml
    PROJECT = "project"  # the project's .wisp/policy.toml: ask and deny only


class Subject(NamedTuple):
    """What a rule is matched against: one call, as the policy reads it."""

    harness: str  # the harness's name as `wisp hook NAME` spells it ("" for wisp's own)
    tool: str  # the harness's own name for the tool
    effect: Effect
    cwd: str
    project: str | None
    commands: tuple[tuple[str, ...], ...] = ()  # a shell call's simple commands, as words
    paths: tuple[str, ...] = ()  # absolute paths the call reads or writes


class Rule(NamedTuple):
    """One rule: what it matches (every field given must match) and what it does."""

    name: str  # a built-in rule's name, or the person's `name`, else FILE:LINE
    action: Action
    origin: Origin
    where: str  # FILE:LINE, or "built in"
    tool: str | None = None
    command: tuple[str, ...] | None = None  # words, matched word by word (`*`: any rest)
    path: str | None = None  # a glob, absolute (`~` expanded; see glob_regex)
    harness: str | None = None
    project: str | None = None  # an absolute directory
    match: tuple[str, ...] = ()  # the examples it must match, as the file gives them
    not_match: tuple[str, ...] = ()  # and those it must not

    def matches(self, subject: Subject) -> bool:
        """Whether every field this rule gives matches *subject* (see the module's words)."""
        if self.tool is not None and subject.tool != self.tool:
            return False
        if self.harness is not None and subject.harness != self.harness:
            return False
        if self.project is not None and (
            subject.project is None or not within(subject.project, self.project)
        ):
            return False
        if self.command is not None and not self.matches_commands(subject.commands):
            return False
        return self.path is None or self.matches_paths(subject.paths)

    def matches_commands(self, commands: tuple[tuple[str, ...], ...]) -> bool:
        """Whether this rule's words match a shell call's simple *commands*: any of them for
        a deny or ask rule, every one (and at least one) for an allow rule."""
        if self.command is None or not commands:
            return False
        loose = self.action is not Action.ALLOW
        if loose:
            return any(words_match(self.command, words, by_name=True) for words in commands)
        return all(words_match(self.command, words, by_name=False) for words in commands)

    def matches_paths(self, paths: tuple[str, ...]) -> bool:
        """Whether this rule's glob matches the call's *paths*: any of them for a deny or ask
        rule, every one (and at least one) for an allow rule."""
        if self.path is None or not paths:
            return False
        pattern = glob_regex(self.path)
        found = (pattern.fullmatch(os.path.normpath(p)) is not None for p in paths)
        return any(found) if self.action is not Action.ALLOW else all(found)


class Policy(NamedTuple):
    """The rules in force for one project: the person's, then the project's."""

    rules: tuple[Rule, ...] = ()
    builtins_off: frozenset[str] = frozenset()  # built-in rules the person turned off
    # Why a policy file was refused (its examples failed, it does not parse), in words: the
    # hook then asks for every call (never allows by a rule of a refused file).
    refused: str | None = None
    # Each refused file and why (FILE:LINE, what is wrong, what to do): `refused`, by file.
    refusals: tuple[tuple[str, str], ...] = ()

    def first(self, action: Action, subject: Subject) -> Rule | None:
        """The first rule of *action* that matches *subject*, or None."""
        for rule in self.rules:
            if rule.action is action and rule.matches(subject):
                return rule
        return None


# --- matching ---------------------------------------------------------------------------


def words_match(pattern: tuple[str, ...], words: tuple[str, ...], *, by_name: bool) -> bool:
    """Whether a simple command's *words* are the rule's *pattern*, word for word; a last
    `*` takes any rest (none included). *by_name*: a program given by a path (`/usr/bin/git`)
    matches a pattern's bare first word (`git`) by its last part too."""
    if not words:
        return False
    if pattern[-1] == ANY_REST:
        fixed = pattern[:-1]
        if len(words) < len(fixed):
            return False
        words = words[: len(fixed)]
        pattern = fixed
    elif len(words) != len(pattern):
        return False
    if not pattern:
        return True
    if words[1:] != pattern[1:]:
        return False
    program = words[0]
    if program == pattern[0]:
        return True
    return by_name and "/" not in pattern[0] and program.rsplit("/", 1)[-1] == pattern[0]


def within(path: str, directory: str) -> bool:
    """Whether *path* is *directory* or inside it, compared as written (normalised)."""
    path, directory = os.path.normpath(path), os.path.normpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


@lru_cache(maxsize=256)
def glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob as the regular expression a whole absolute path must match.

    `*` is any part of one name (a leading dot included), `?` one character of a name,
    `[abc]`/`[!abc]` one of (not one of) those, `**` as a whole name any number of folders
    (none included): `/home/ana/**` matches /home/ana and everything under it, `/src/**/*.py` both
    `/src/a.py` and `/src/x/y/a.py`. A glob that does not start with `/` matches at any
    depth, as if it began `**/` (`*.pem`, `secrets/**`, `.env`)."""
    if not glob.startswith("/"):
        glob = "**/" + glob
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        at_name = i == 0 or glob[i - 1] == "/"
        if at_name and glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif at_name and glob[i:] == "**":
            if out and out[-1] == "/":  # a folder and everything under it
                out[-1] = "(?:/.*)?"
            else:
                out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            inner = glob[i + 1 : end]
            negate = inner.startswith("!")
            inner = inner[1:] if negate else inner
            body = "".join("\\" + c if c in "\\^]" else c for c in inner)
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


# --- loading ----------------------------------------------------------------------------


class _Refused(WispError):
    """A policy file refused: the message names FILE:LINE, what is wrong and what to do."""


def project_file(project: str) -> str:
    """Where a project's policy file is (it may not exist)."""
    return os.path.join(project, PROJECT_DIR, POLICY_FILE)


def load_policy(home: Path, project: str | None) -> Policy:
    """The rules in force for *project* (None: the person's only): the person's file's, then
    the project's. A file refused puts none of its rules in force and says why in
    :attr:`Policy.refused`; the other file's still are."""
    rules: list[Rule] = []
    off: frozenset[str] = frozenset()
    refused: list[tuple[str, str]] = []
    person = home / POLICY_FILE
    if _exists(str(person)):
        try:
            data = _read_person(home, person)
            person_rules, off = _parse(data, str(person), Origin.PERSON, home=home, root=None)
            rules += person_rules
        except _Refused as exc:
            refused.append((str(person), str(exc)))
    if project is not None:
        shown = project_file(project)
        if _exists(shown):
            try:
                data = _read_project(project, shown)
                project_rules, _ = _parse(data, shown, Origin.PROJECT, home=home, root=project)
                taken = {r.name for r in rules}
                rules += [_renamed(r, taken) for r in project_rules]
            except _Refused as exc:
                refused.append((shown, str(exc)))
    return Policy(
        rules=tuple(rules),
        builtins_off=off,
        refused=" ".join(why for _, why in refused) if refused else None,
        refusals=tuple(refused),
    )


def _renamed(rule: Rule, taken: set[str]) -> Rule:
    """A project's rule whose name the person's file already uses: shown as the project's."""
    if rule.name in taken:
        return rule._replace(name=f"project:{rule.name}")
    return rule


def _exists(path: str) -> bool:
    """Whether there is anything at *path* (not followed): the one system call a hook pays
    when there is no policy file."""
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


_AFTER = "No rule of this file is in force until then: calls it would decide are asked."


def _read_person(home: Path, shown: Path) -> bytes:
    """The person's file, as the house reads its own files: through a home that is theirs
    (no symlink, not writable by others), never through a symlink, a regular file of theirs
    that nobody else may write, under the cap."""
    from pending import PendingError, open_private_dir

    try:
        home_fd = open_private_dir(str(home), make=False)
    except FileNotFoundError:
        raise _Refused(f"{shown}: its folder went away while it was read. {_AFTER}") from None
    except PendingError as exc:
        raise _Refused(f"cannot use {shown}: {exc} {_AFTER}") from None
    try:
        try:
            fd = os.open(POLICY_FILE, _READ_FLAGS, dir_fd=home_fd)
        except OSError as exc:
            raise _Refused(_open_problem(shown, exc, "a file of yours")) from None
    finally:
        os.close(home_fd)
    try:
        st = os.fstat(fd)
        problem = _file_problem(st)
        if problem is None and st.st_uid != os.getuid():
            problem = f"it is owned by uid {st.st_uid}, not by you"
        if problem is None and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            problem = f"others may write it (mode {stat.S_IMODE(st.st_mode):o})"
        if problem is not None:
            raise _Refused(
                f"cannot use {shown}: {problem}. It must be a regular file of yours that only "
                f"you may write (`chmod 600 {shown}`). {_AFTER}"
            )
        return _read_capped(fd, str(shown))
    finally:
        os.close(fd)


def _read_project(project: str, shown: str) -> bytes:
    """A project's file, read as untrusted input (the agent can write it): no symlink for
    `.wisp` or the file, a regular file, under the cap."""
    try:
        root_fd = os.open(project, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _Refused(_open_problem(shown, exc, "a plain file in the project")) from None
    try:
        try:
            dir_fd = os.open(PROJECT_DIR, _DIR_FLAGS, dir_fd=root_fd)
        except OSError as exc:
            raise _Refused(
                _open_problem(shown, exc, "a plain file in the project", what=PROJECT_DIR)
            ) from None
        try:
            fd = os.open(POLICY_FILE, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _Refused(_open_problem(shown, exc, "a plain file in the project")) from None
        finally:
            os.close(dir_fd)
    finally:
        os.close(root_fd)
    try:
        problem = _file_problem(os.fstat(fd))
        if problem is not None:
            raise _Refused(
                f"cannot use {shown}: {problem}; a project's policy file must be a plain file "
                f"in the project. {_AFTER}"
            )
        return _read_capped(fd, shown)
    finally:
        os.close(fd)


def _open_problem(shown: Any, exc: OSError, must: str, *, what: str | None = None) -> str:
    import errno

    part = f"its folder {what}" if what else "it"
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        why = f"{part} is a symbolic link or not what it should be"
    else:
        why = f"{part} cannot be opened ({exc.strerror})"
    return f"cannot use {shown}: {why}; it must be {must}. {_AFTER}"


def _file_problem(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_size > POLICY_CAP_BYTES:
        return f"it is {st.st_size:,} bytes, over the {POLICY_CAP_BYTES:,}-byte cap"
    return None


def _read_capped(fd: int, shown: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total <= POLICY_CAP_BYTES:
        chunk = os.read(fd, POLICY_CAP_BYTES + 1 - total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > POLICY_CAP_BYTES:
        raise _Refused(
            f"cannot use {shown}: it grew over the {POLICY_CAP_BYTES:,}-byte cap while it was "
            f"read. {_AFTER}"
        )
    return b"".join(chunks)


# --- parsing: TOML, then each rule checked --------------------------------------------


class _Lines:
    """Where things are in a policy file, for its refusals: tomllib gives no line numbers,
    so the file's lines are scanned for its table headers (outside multi-line strings and
    comments), in order. The rules are taken only when the number of `[[rule]]` headers
    found is the number of rules tomllib read (each rule written under its own header, as
    docs/policy.md shows), so the Nth header is the Nth rule's line. A key's line is the
    first line of that rule's table that sets it (else the header's)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.tables: list[int] = []  # every table header's line (1-based)
        self.rules: list[int] = []  # the `[[rule]]` headers' lines
        self.builtin: int | None = None
        state: str | None = None
        for number, line in enumerate(self.lines, start=1):
            if state is None and line.lstrip().startswith("["):
                self.tables.append(number)
                if _header(line, "[[", "rule", "]]"):
                    self.rules.append(number)
                elif _header(line, "[", "builtin", "]") and self.builtin is None:
                    self.builtin = number
            state = _string_state(line, state)

    def key(self, start: int | None, key: str) -> int:
        """The line of *key* in the table whose header is on line *start* (None: the top)."""
        first = 0 if start is None else start
        end = next((t for t in self.tables if t > first), len(self.lines) + 1)
        if start is None:
            end = self.tables[0] if self.tables else len(self.lines) + 1
        for number in range(first + 1, end):
            if _sets(self.lines[number - 1], key):
                return number
        return start if start is not None else 1


# The file's lines are read with str's methods, not patterns: each pattern compiled is ~0.5 M
# instructions, and a hook reads the person's file on every call (issue 57).


def _header(line: str, opening: str, name: str, closing: str) -> bool:
    """Whether *line* is the table header `[name]` (`[[name]]`): white space around each
    part, and a comment after it, allowed."""
    rest = line.lstrip()
    for part in (opening, name, closing):
        if not rest.startswith(part):
            return False
        rest = rest[len(part) :].lstrip()
    return not rest or rest.startswith("#")


def _sets(line: str, key: str) -> bool:
    """Whether *line* sets *key* (bare, or quoted either way): `key =`, `"key"=`…"""
    rest = line.lstrip()
    return any(
        rest.startswith(form) and rest[len(form) :].lstrip().startswith("=")
        for form in (key, f'"{key}"', f"'{key}'")
    )


def _string_state(line: str, state: str | None) -> str | None:
    """Whether a multi-line string is open after *line* (its delimiter), given *state* before
    it: strings and comments skipped, as TOML reads them."""
    i, n = 0, len(line)
    while i < n:
        if state is not None:
            end = line.find(state, i)
            if end == -1:
                return state
            i, state = end + 3, None
            continue
        c = line[i]
        if c == "#":
            return None
        if line.startswith('"""', i) or line.startswith("'''", i):
            state = line[i : i + 3]
            i += 3
        elif c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            i = n if end == -1 else end + 1
        else:
            i += 1
    return state


_TOML_AT = r"\s*\(at (?:line (\d+), column \d+|end of document)\)$"  # where tomllib says


def _parse(
    data: bytes, shown: str, origin: Origin, *, home: Path, root: str | None
) -> tuple[list[Rule], frozenset[str]]:
    """The rules and the built-ins turned off of one file, or :class:`_Refused`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _Refused(
            f"{shown}:{line}: this is not UTF-8 text; save it as UTF-8. {_AFTER}"
        ) from None
    # The person's file as TOML read it last, when its text is the same (see _kept_tree).
    tree = _kept_tree(home, text) if origin is Origin.PERSON else None
    if tree is None:
        import tomllib  # here: only a file not read before pays for the TOML reader

        try:
            tree = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            said = str(exc)
            found = re.search(_TOML_AT, said)
            line = int(found.group(1)) if found and found.group(1) else len(text.splitlines()) or 1
            what = re.sub(_TOML_AT, "", said) if found else said
            raise _Refused(
                f"{shown}:{line}: this is not valid TOML ({what.lower()}). Fix that line "
                f"(docs/policy.md shows the format: `wisp docs policy`). {_AFTER}"
            ) from None
        if origin is Origin.PERSON:
            _keep_tree(home, text, tree)
    lines = _Lines(text)
    file = _File(shown, origin, lines, home=home, root=root)
    for key in tree:
        if key not in TOP_KEYS:
            file.refuse(
                lines.key(None, key),
                f"a policy file takes no `{key}`; it takes `[[rule]]` tables and a `[builtin]` "
                "table. Fix or remove it",
            )
    off = file.builtins(tree.get("builtin"))
    raw = tree.get("rule", [])
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        file.refuse(lines.key(None, "rule"), "`rule` must be `[[rule]]` tables. Write each so")
    if len(raw) != len(lines.rules):
        file.refuse(
            lines.key(None, "rule") if not lines.rules else lines.rules[0],
            f"{len(raw)} rule(s) read but {len(lines.rules)} `[[rule]]` header(s) found: write "
            "each rule under a `[[rule]]` header of its own, so that a refusal can name its "
            "line",
        )
    rules = [file.rule(entry, at) for entry, at in zip(raw, lines.rules, strict=True)]
    return rules, off


# The person's file as TOML read it, kept beside it in the home: {"format", "toml": the
# file's whole text, "tree": what tomllib made of it}. tomllib costs ~22 M instructions to
# import (its patterns are compiled as it loads): more than a hook's whole decision, on every
# call the person's file is read (issue 57). The tree is used only for the very same text, so
# it can never be stale; the rules are still checked from it (their examples too) every time.
# It is the person's as the file is: in their own home, 0600, never followed through a link.
TREE_FILE = ".policy.toml.json"
_TREE_FORMAT = 1
_TREE_CAP_BYTES = 4 * POLICY_CAP_BYTES  # the text, and the tree JSON writes of it
_PLAIN_TOML = (str, int, float, list, dict)  # bool is an int; TOML's dates are not kept


def _kept_tree(home: Path, text: str) -> dict[str, Any] | None:
    """The tree kept for *text* in *home* (:data:`TREE_FILE`); None if there is none for
    it, or anything about the file is not as this process would have written it."""
    import json

    try:
        fd = os.open(os.path.join(home, TREE_FILE), _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.getuid()
            or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            or st.st_size > _TREE_CAP_BYTES
        ):
            return None
        chunks: list[bytes] = []
        while chunk := os.read(fd, _TREE_CAP_BYTES + 1):
            chunks.append(chunk)
        kept = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if (
        isinstance(kept, dict)
        and kept.get("format") == _TREE_FORMAT
        and kept.get("toml") == text
        and isinstance(kept.get("tree"), dict)
    ):
        tree: dict[str, Any] = kept["tree"]
        return tree
    return None


def _keep_tree(home: Path, text: str, tree: dict[str, Any]) -> None:
    """Keep *tree*, read from *text*, in *home* for the next process (one file, replaced
    whole); one that cannot be written is no error: the next reads the file with tomllib."""
    import contextlib
    import json

    if not _plain(tree):
        return
    payload = json.dumps({"format": _TREE_FORMAT, "toml": text, "tree": tree}).encode()
    final = home / TREE_FILE
    temporary = home / f"{TREE_FILE}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temporary, flags, 0o600)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        temporary.replace(final)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _plain(value: object) -> bool:
    """Whether JSON gives *value* back as it is (TOML's dates and times it would not)."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, _PLAIN_TOML)


class _File:
    """One policy file's rules, checked one by one."""

    def __init__(
        self, shown: str, origin: Origin, lines: _Lines, *, home: Path, root: str | None
    ) -> None:
        self.shown = shown
        self.origin = origin
        self.lines = lines
        self.home = home
        self.root = root  # the project's root, for a project's file
        self.names: dict[str, int] = {}

    def refuse(self, line: int, what: str) -> NoReturn:
        raise _Refused(f"{self.shown}:{line}: {what}. {_AFTER}")

    def builtins(self, table: Any) -> frozenset[str]:
        if table is None:
            return frozenset()
        at = self.lines.builtin or self.lines.key(None, "builtin")
        if self.origin is Origin.PROJECT:
            self.refuse(
                at,
                "a project's policy file cannot turn built-in rules off: a project may only "
                "tighten (the agent can write it). Remove the `[builtin]` table; turn a "
                f"built-in rule off in your own {self.home / POLICY_FILE}",
            )
        if not isinstance(table, dict):
            self.refuse(at, "`builtin` must be a table: `[builtin]`, then `read-only = false`")
        off: set[str] = set()
        for name, value in table.items():
            line = self.lines.key(self.lines.builtin, name)
            if name not in BUILTIN_NAMES:
                self.refuse(
                    line,
                    f"there is no built-in rule `{_short(name)}`; the built-in rules are "
                    f"{', '.join(BUILTIN_NAMES)}. Fix the name",
                )
            if not isinstance(value, bool):
                self.refuse(line, f"`{name}` takes true (on) or false (off), not {_kind(value)}")
            if not value:
                off.add(name)
        return frozenset(off)

    def rule(self, entry: dict[str, Any], at: int) -> Rule:
        def line(key: str) -> int:
            return self.lines.key(at, key)

        for key in entry:
            if key not in RULE_KEYS:
                self.refuse(
                    line(key),
                    f"a rule takes no key `{_short(key)}`; it takes {', '.join(RULE_KEYS)}. "
                    "Fix or remove it",
                )
        action = self._action(entry.get("action"), line("action"), at)
        name = self._name(entry.get("name"), line("name"), at)
        tool = self._text(entry, "tool", line)
        harness = self._text(entry, "harness", line)
        if harness is not None and harness not in harness_names():
            self.refuse(
                line("harness"),
                f"wisp knows no harness `{_short(harness)}`; `harness` is one of "
                f"{', '.join(harness_names())}",
            )
        command = self._command(entry.get("command"), line("command"))
        path = self._path(entry.get("path"), line("path"))
        project = self._project(entry.get("project"), line("project"))
        if tool is None and command is None and path is None:
            self.refuse(at, "a rule needs `tool`, `command` or `path` to say what it matches")
        if command is not None and path is not None:
            self.refuse(
                line("path"),
                "a rule matches by `command` or by `path`, not both: write two rules",
            )
        match = self._examples(entry.get("match"), "match", line("match"))
        not_match = self._examples(entry.get("not_match"), "not_match", line("not_match"))
        rule = Rule(
            name=name or f"{self.shown}:{at}",
            action=action,
            origin=self.origin,
            where=f"{self.shown}:{at}",
            tool=tool,
            command=command,
            path=path,
            harness=harness,
            project=project,
            match=match,
            not_match=not_match,
        )
        for example in match:
            self._check(rule, example, True, line("match"))
        for example in not_match:
            self._check(rule, example, False, line("not_match"))
        return rule

    def _action(self, value: Any, line: int, at: int) -> Action:
        if value is None:
            self.refuse(at, 'a rule needs `action`: "allow", "ask" or "deny"')
        if not isinstance(value, str) or value not in tuple(Action):
            self.refuse(line, f'`action` is "allow", "ask" or "deny", not {_kind(value)}')
        action = Action(value)
        if action is Action.ALLOW and self.origin is Origin.PROJECT:
            self.refuse(
                line,
                "a project's policy file may only ask or deny: the agent can write its "
                "project, so a project tightens and never loosens. Make this rule `ask` or "
                f"`deny`, or move it to your own {self.home / POLICY_FILE}",
            )
        return action

    def _name(self, value: Any, line: int, at: int) -> str | None:
        if value is None:
            return None
        if (
            not isinstance(value, str)
            or not value.strip()
            or len(value) > NAME_MAX_CHARS
            or not value.isprintable()
        ):
            self.refuse(
                line,
                f"`name` takes a name of 1 to {NAME_MAX_CHARS} printable characters, not "
                f"{_kind(value)}",
            )
        if value in BUILTIN_NAMES:
            self.refuse(line, f"`{value}` is a built-in rule's name: give this rule another")
        if value in self.names:
            self.refuse(
                line,
                f"two rules are named `{value}` (lines {self.names[value]} and {at}): the "
                "audit names the rule that decided a call, so give each its own",
            )
        self.names[value] = at
        return value

    def _text(self, entry: dict[str, Any], key: str, line: Any) -> str | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value or not value.isprintable():
            self.refuse(line(key), f"`{key}` takes a name (text), not {_kind(value)}")
        return str(value)

    def _command(self, value: Any, line: int) -> tuple[str, ...] | None:
        if value is None:
            return None
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(w, str) and w for w in value)
        ):
            self.refuse(
                line,
                f'`command` takes a list of words, e.g. ["npm", "test", "*"], not {_kind(value)}',
            )
        words = tuple(value)
        if ANY_REST in words[:-1]:
            self.refuse(
                line,
                '`*` stands for any rest of a command only as its last word (["npm", "test", '
                '"*"]); a word is matched whole, never as a pattern',
            )
        if words[0] == ANY_REST:
            self.refuse(line, "a command's first word must be its program, not `*`")
        return words

    def _path(self, value: Any, line: int) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value or "\0" in value:
            self.refuse(line, f'`path` takes a glob, e.g. "**/.env", not {_kind(value)}')
        glob = str(value)
        if glob.startswith("~"):
            expanded = os.path.expanduser(glob)
            if expanded.startswith("~"):
                self.refuse(line, f"`{_short(glob)}`: that home folder is not known here")
            glob = str(expanded)
        return glob

    def _project(self, value: Any, line: int) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self.refuse(line, f"`project` takes a folder's path, not {_kind(value)}")
        folder = os.path.expanduser(str(value))
        if not folder.startswith("/"):
            self.refuse(line, f"`project` takes an absolute path (or ~/…), not `{_short(value)}`")
        return os.path.normpath(folder)

    def _examples(self, value: Any, key: str, line: int) -> tuple[str, ...]:
        what = "must match" if key == "match" else "must not match"
        if value is None:
            self.refuse(
                line,
                f"a rule needs `{key} = [...]`: examples it {what} (a command line for a "
                "command rule, a path for a path rule, a tool's name for a rule by tool "
                "alone), checked each time the file is read",
            )
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(e, str) and e and len(e) <= EXAMPLE_MAX_CHARS for e in value)
        ):
            self.refuse(
                line,
                f"`{key}` takes a list of examples (text, at most {EXAMPLE_MAX_CHARS} "
                f"characters each), not {_kind(value)}",
            )
        return tuple(value)

    def _check(self, rule: Rule, example: str, wanted: bool, line: int) -> None:
        """Refuse the file if *rule* does not do with *example* what the file says."""
        if rule.command is not None:
            commands = self._commands(example, line)
            got = rule.matches_commands(commands)
            read = "; ".join(" ".join(words) for words in commands)
            seen = f"read as the command{'s' if len(commands) > 1 else ''} `{read}`"
        elif rule.path is not None:
            path = self._example_path(example, line)
            got = rule.matches_paths((path,))
            seen = f"the path {path}"
        else:
            got = example == rule.tool
            seen = "a tool's name"
        if got != wanted:
            said = "must match" if wanted else "must not match"
            does = "does not" if wanted else "does"
            named = "this rule" if rule.name == rule.where else f"the rule `{rule.name}`"
            self.refuse(
                line,
                f"{named} {said} `{_short(example)}` ({seen}), but it {does}. "
                "Fix the rule or the example",
            )

    def _commands(self, example: str, line: int) -> tuple[tuple[str, ...], ...]:
        from wisp.policy.shell import parse_line

        read = parse_line(example, self.root or "/")
        if read.unread is not None:
            self.refuse(
                line,
                f"the example `{_short(example)}` cannot be read as a shell line "
                f"({read.unread}): give one the policy reads fully",
            )
        return tuple(simple.words for simple in read.commands)

    def _example_path(self, example: str, line: int) -> str:
        path = os.path.expanduser(example)
        if not path.startswith("/"):
            if self.root is None:
                self.refuse(
                    line,
                    f"the example `{_short(example)}` is a relative path: give it whole "
                    "(/…, or ~/…)",
                )
            path = os.path.join(str(self.root), path)
        return os.path.normpath(path)


def _short(value: Any) -> str:
    """Text from the file, as a refusal shows it: made printable, cut short."""
    text = str(value)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 60 else text[:59] + "…"


def _kind(value: Any) -> str:
    """What a wrong value is, in the file's words (TOML's, not Python's)."""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'"{_short(value)}"'
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "that list"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"
