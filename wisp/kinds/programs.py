"""The program files a command runs, bound to their content: a grant means what was shown.

A grant of `./build.sh` is a grant of the `build.sh` the person was shown, not of whatever the
agent writes there next. So a command whose program is a file the agent can write is bound to
that file's content digest (sha256) when its request is filed, and a grant keeps the digest:
a call whose file has changed since (or is gone, unreadable, not a regular file, too large to
hash) is not covered, and is asked again saying why.

Which files: each program the shell line runs (the first word of each simple command, after
`NAME=value` assignments, a keyword such as `if` or `!`, and a wrapper such as `env`, `exec`,
`nohup`, `time`, `timeout`, `nice` or `sudo`): a path (`./build.sh`, `scripts/x.sh`,
`/home/u/proj/run`) resolved against the call's working directory and any `cd` earlier in the
line (followed as if it succeeds), or a bare name found on `PATH` (`node_modules/.bin`,
`~/.local/bin`); and the script a known interpreter runs (`bash x.sh`, `python3 x.py`, `node
x.js`, `perl`, `ruby`, `source`: its first argument that is not an option). Of those, only
the files the agent can write (:func:`agent_can_write`) are hashed: a system program costs a
call nothing.

The binding travels as the call's options (:data:`PROGRAMS_OPTION`), so the request shows it
and a grant's exact match of the options covers it: `{path: "sha256:HEX"}`, or a word for a
file that has no digest (:class:`Unbound`), which no grant ever covers.

What it cannot see (docs/agents.md): what a program reads or runs in turn (a Makefile,
`package.json`'s scripts, a script's imports or `source`s), a program named by text built as
the line runs (`$(…)` output, `eval`), and a file rewritten between the hook's allow and the
harness's run. The harness's sandbox, which denies the write, is the answer to those.
"""

# Paths are worked on as text, as the shell would read them (a `cd` is logical): pathlib would
# normalise some of that away first.
# ruff: noqa: PTH114, PTH116, PTH118, PTH119, PTH120

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterator, Mapping

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

# The option a call's bound programs travel in (beside a harness's own fields, such as Claude
# Code's `timeout`): named so that no harness's field is taken for it. A call's own field of
# this name is dropped: only wisp binds programs.
PROGRAMS_OPTION = "wisp.programs"
DIGEST_PREFIX = "sha256:"
# A program larger than this is not hashed (and so never covered by a grant: asked each time).
# 128 MiB holds the largest program commonly run from a writable place (nvm's `node`, ~100 MB)
# and hashes in about 0.1 s; a hook must not spend longer than that on one call.
MAX_PROGRAM_BYTES = 128 * 1024 * 1024
_CHUNK_BYTES = 1024 * 1024
# Shown to the person: enough of a digest to tell two files apart at a glance.
SHORT_DIGEST_CHARS = 12
# Directories of the system's own programs. Running as root the person can write anything, so
# "can write" cannot tell a project's script from /usr/bin/make: there, a program in these is
# not bound. An agent that rewrites them as root can rewrite the shell itself, which no grant
# can guard against (the harness's sandbox must).
SYSTEM_DIRECTORIES = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/etc",
    "/nix/store",
    "/gnu/store",
    "/snap",
)


class Unbound:
    """Why a program file has no digest: a call that runs it is asked every time. (Plain
    text, not an enum: a hook loads this module for every call, issue 41.)"""

    GONE = "gone"
    NOT_A_FILE = "not-a-file"
    UNREADABLE = "unreadable"
    TOO_LARGE = "too-large"


UNBOUND_WORDS = {
    Unbound.GONE: "is not there",
    Unbound.NOT_A_FILE: "is not a regular file",
    Unbound.UNREADABLE: "cannot be read",
    Unbound.TOO_LARGE: f"is larger than wisp hashes ({MAX_PROGRAM_BYTES // (1024 * 1024)} MiB)",
}

# --- which programs a shell line runs ---------------------------------------------------------

_PUNCTUATION = ";&|()<>\n"
# Compiled on first use (re's cache): most words hold no `$` (issue 57).
_VARIABLE = r"\$(?:\{(\w+)\}|(\w+))"
# Words that start a command and are not its program.
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"})
_KEYWORDS_ENDING = frozenset({"fi", "done", "esac", "for", "case", "select", "function"})
_BUILTINS = frozenset(
    {"cd", "pushd", "popd", "echo", "printf", "test", "[", "[[", "true", "false", ":", "export"}
    | {"set", "unset", "read", "eval", "exit", "return", "shift", "trap", "wait", "pwd"}
    | {"alias", "unalias", "type", "local", "declare", "typeset", "readonly", "let", "ulimit"}
    | {"umask", "hash", "jobs", "fg", "bg", "kill", "disown", "history", "shopt", "getopts"}
)
_CHANGES_DIRECTORY = frozenset({"cd", "pushd"})
# Wrappers that run the rest of their words as a command, and their options taking an argument.
_WRAPPERS: Mapping[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "-D", "-h", "-p", "-r", "-t"}),
    "doas": frozenset({"-u", "-C"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
}
_WRAPPER_OPERANDS = {"timeout": 1}  # its duration, before the command
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh"})


class _Interpreter:
    """How an interpreter is told its script: options taking an argument, and options after
    which there is no script file (code given inline, a module, stdin)."""

    def __init__(self, takes_argument: set[str], no_script: set[str]) -> None:
        self.takes_argument = frozenset(takes_argument)
        self.no_script = frozenset(no_script)


_SHELL = _Interpreter({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}, {"-c", "-s", "-"})
_INTERPRETERS: Mapping[str, _Interpreter] = {
    "python": _Interpreter({"-W", "-X", "--check-hash-based-pycs"}, {"-c", "-m", "-"}),
    "node": _Interpreter(
        {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C"}
        | {"--conditions", "--input-type", "--env-file", "--title"},
        {"-e", "--eval", "-p", "--print", "-"},
    ),
    "perl": _Interpreter({"-I", "-M", "-m", "-x"}, {"-e", "-E", "-"}),
    "ruby": _Interpreter({"-I", "-r", "-C", "-E", "-x", "--encoding"}, {"-e", "-"}),
    "source": _Interpreter(set(), set()),
}


def _interpreter(name: str) -> _Interpreter | None:
    if name in _SHELLS:
        return _SHELL
    if name.startswith("python") and (name == "python" or name[6:].replace(".", "").isdigit()):
        return _INTERPRETERS["python"]
    if name == "nodejs":
        return _INTERPRETERS["node"]
    if name == ".":
        return _INTERPRETERS["source"]
    return _INTERPRETERS.get(name)


def _assignment(word: str) -> bool:
    """Whether *word* is a `NAME=value` assignment."""
    name, sep, _ = word.partition("=")
    return bool(sep) and name.isidentifier() and name.isascii()


def _shell_code(word: str) -> bool:
    """Whether a shell's option *word* is `-c` (alone or with others: `-lc`, `-ec`)."""
    return word[:1] == "-" and word[1:].isalpha() and word[1:].isascii() and "c" in word


def _tokens(command: str) -> list[str]:
    """The line's words and operators as the shell splits them (quotes removed; a line break
    ends a command, as `;` does); a line it cannot split is split at white space."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
        lexer.whitespace = " \t\r"
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return command.split()


def words(command: str) -> list[str]:
    """A command line's arguments as the shell splits them (quotes removed), operators as
    words of their own: what a face shows beside the exact line."""
    return _tokens(command)


def _simple_commands(command: str) -> Iterator[list[str]]:
    """Each simple command's words, redirections (and their targets) left out."""
    words: list[str] = []
    tokens = _tokens(command)
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
        elif token and all(c in _PUNCTUATION for c in token):
            if "<" in token or ">" in token:
                skip = True  # the file a redirection names is no program
                if words and words[-1].isdigit() and tokens[i - 1] == words[-1]:
                    words.pop()  # `2>`: a descriptor, not a word
            else:
                yield words
                words = []
        else:
            words.append(token)
    yield words


class _Line:
    """A shell line read for its programs: the directory and environment as it goes."""

    def __init__(self, cwd: str, env: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.env = env
        self.assigned: dict[str, str] = {}  # `NAME=value` in the line, over *env*
        self.found: dict[str, None] = {}  # in order, once each

    def expand(self, word: str) -> str:
        if "$" in word:
            word = re.sub(_VARIABLE, lambda m: self.variable(m[1] or m[2]) or "", word)
        if word == "~" or word.startswith("~/"):
            word = (self.variable("HOME") or "~") + word[1:]
        return word

    def path(self, word: str) -> str:
        """*word* as a path from the line's directory, as the kernel reads it (a `..` is not
        collapsed: it follows the link before it)."""
        path = os.path.join(self.cwd, self.expand(word))
        return path if ".." in path.split("/") else os.path.normpath(path)

    def on_path(self, name: str) -> str | None:
        """The file the shell runs for bare *name*: the first executable file on `PATH` (a
        relative entry from the line's directory)."""
        for entry in (self.variable("PATH") or os.defpath).split(os.pathsep):
            directory = entry if entry.startswith("/") else f"{self.cwd}/{entry or '.'}"
            candidate = f"{directory}/{name}"
            try:
                if os.access(candidate, os.X_OK) and stat.S_ISREG(os.stat(candidate).st_mode):
                    return os.path.normpath(candidate)
            except (OSError, ValueError):
                continue
        return None

    def variable(self, name: str) -> str | None:
        found = self.assigned.get(name)
        return self.env.get(name) if found is None else found

    def read(self, words: list[str]) -> None:
        """Note the programs of one simple command (and follow its `cd`, its assignments)."""
        i = 0
        while i < len(words):
            word = words[i]
            if _assignment(word):
                name, _, value = word.partition("=")
                self.assigned[name] = self.expand(value)
            elif word in _KEYWORDS:
                pass
            elif word in _KEYWORDS_ENDING:
                return
            elif word in _CHANGES_DIRECTORY:
                target = next((w for w in words[i + 1 :] if not w.startswith("-")), "~")
                self.cwd = os.path.normpath(os.path.join(self.cwd, self.expand(target)))
                return
            elif word in _WRAPPERS:
                i = _after_options(words, i + 1, _WRAPPERS[word]) + _WRAPPER_OPERANDS.get(word, 0)
                while word == "env" and i < len(words) and _assignment(words[i]):
                    i += 1
                continue
            else:
                self._program(words, i)
                return
            i += 1

    def _program(self, words: list[str], i: int) -> None:
        word = words[i]
        if "/" in word:
            self.found[self.path(word)] = None
        elif word not in _BUILTINS:
            found = self.on_path(self.expand(word))
            if found is not None:
                self.found[found] = None
        self.script(words, i)

    def script(self, words: list[str], i: int) -> None:
        """Note the script the interpreter *words[i]* names runs (or `-c CODE`'s programs)."""
        interpreter = _interpreter(os.path.basename(words[i]))
        if interpreter is None:
            return
        if interpreter is _SHELL:  # `bash -lc CODE`, `sh -ec CODE`: as `-c CODE`
            words = [
                *words[: i + 1],
                *("-c" if _shell_code(w) else w for w in words[i + 1 :]),
            ]
        at = _after_options(words, i + 1, interpreter.takes_argument, interpreter.no_script)
        if at >= len(words):
            return
        if at > i + 1 and words[at - 1] in interpreter.no_script:
            if interpreter is _SHELL and words[at - 1] == "-c":
                for inner in _simple_commands(words[at]):  # `bash -c CODE`: CODE's programs
                    self.read(inner)
            return
        self.found[self.path(words[at])] = None


def _after_options(
    words: list[str], i: int, takes_argument: frozenset[str], stop: frozenset[str] = frozenset()
) -> int:
    """The index of the first word from *i* that is not an option (or an option's argument);
    just past an option in *stop* (after which comes no script)."""
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1
        if not word.startswith(("-", "+")) or word in ("-", "+"):
            return i + (1 if word in stop else 0)
        i += 1
        if word in stop:
            return i
        if word in takes_argument:
            i += 1
    return i


def programs_in(command: str, cwd: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The program (and interpreted script) files a shell *command* run in *cwd* runs, as
    absolute paths, in order: every one, writable or not."""
    line = _Line(cwd, os.environ if env is None else env)
    for words in _simple_commands(command):
        line.read(words)
    return list(line.found)


def scripts_of(argv: list[str], cwd: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The script files an argv runs when its program is a known interpreter (`bash x.sh`,
    `python3 x.py`, `sh -c CODE`'s programs), as absolute paths (`wisp exec`)."""
    line = _Line(cwd, os.environ if env is None else env)
    if argv:
        line.script(list(argv), 0)
    return list(line.found)


# --- which of them the agent can write --------------------------------------------------------


def _in_system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRECTORIES)


def agent_can_write(path: str) -> bool:
    """Whether the file at *path* (absolute: as named, and where its links lead) is one the
    agent, which runs as the person, can rewrite or replace: the person can write it or any
    directory on its way. As root, anything outside :data:`SYSTEM_DIRECTORIES`."""
    try:
        linked = os.path.islink(path)
        starts = [path, os.path.realpath(path)] if linked else [path]
        if os.geteuid() == 0:
            return not all(_in_system(start) for start in starts)
        if os.access(path, os.W_OK):
            return True
    except ValueError:  # a NUL: no such file
        return False
    for start in starts:
        directory = os.path.dirname(start)
        while True:
            if os.access(directory, os.W_OK):
                return True
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return False


# --- their content ----------------------------------------------------------------------------


def sealed_fd(fd: int) -> str:
    """The seal of the file open as *fd*, read from its start: `sha256:HEX`, or why it has
    none (:class:`Unbound`)."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Unbound.NOT_A_FILE
        if st.st_size > MAX_PROGRAM_BYTES:
            return Unbound.TOO_LARGE
        import hashlib  # here: only a call that runs a writable program pays for it

        digest = hashlib.sha256()
        read = 0
        while chunk := os.pread(fd, _CHUNK_BYTES, read):
            read += len(chunk)
            if read > MAX_PROGRAM_BYTES:  # it grew as it was read
                return Unbound.TOO_LARGE
            digest.update(chunk)
        return DIGEST_PREFIX + digest.hexdigest()
    except OSError:
        return Unbound.UNREADABLE


def seal(path: str) -> str:
    """The program file at *path*'s seal: `sha256:HEX`, or why it has none (:class:`Unbound`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put there does not block
    except FileNotFoundError:
        return Unbound.GONE
    except (OSError, ValueError):
        return Unbound.UNREADABLE
    try:
        return sealed_fd(fd)
    finally:
        os.close(fd)


def bound(paths: list[str]) -> dict[str, str]:
    """The seals of those of *paths* the agent can write (empty: none is bound)."""
    return {path: seal(path) for path in paths if agent_can_write(path)}


def with_programs(
    options: Mapping[str, Any] | None, programs: Mapping[str, str]
) -> Mapping[str, Any] | None:
    """A call's *options* with its bound *programs* (a call's own field of that name dropped:
    only wisp binds programs); None when there are none."""
    if not programs and PROGRAMS_OPTION not in (options or {}):
        return options
    merged = {k: v for k, v in (options or {}).items() if k != PROGRAMS_OPTION}
    if programs:
        merged[PROGRAMS_OPTION] = dict(programs)
    return merged or None


def bind_command(
    command: str,
    cwd: str,
    options: Mapping[str, Any] | None,
    env: Mapping[str, str] | None = None,
) -> Mapping[str, Any] | None:
    """A shell call's *options* with the programs it runs that the agent can write bound."""
    return with_programs(options, bound(programs_in(command, cwd, env)))


def programs_bound(options: Mapping[str, Any] | None) -> Mapping[str, str]:
    """The programs bound in a call's (or a grant's) *options*: path → seal."""
    value = (options or {}).get(PROGRAMS_OPTION)
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def coverable(options: Mapping[str, Any] | None) -> bool:
    """Whether a grant may cover a call with these options: every program it binds has a
    digest (one that is gone, unreadable, not a file or too large is asked every time)."""
    if not options or PROGRAMS_OPTION not in options:
        return True
    return all(s.startswith(DIGEST_PREFIX) for s in programs_bound(options).values())


def _short(sealed: str) -> str:
    return sealed[len(DIGEST_PREFIX) :][:SHORT_DIGEST_CHARS]


def _why_unbound(sealed: str) -> str:
    return UNBOUND_WORDS.get(sealed, "has no digest")  # a word only a newer wisp knows


def shown(path: str, sealed: str) -> str:
    """One bound program as the person is shown it: the file and a short digest, or why it
    has none."""
    if sealed.startswith(DIGEST_PREFIX):
        return f"{path} (sha256 {_short(sealed)})"
    return f"{path} ({_why_unbound(sealed)}: asked each time)"


def named(path: str, cwd: str) -> str:
    """*path* as the person would name it from *cwd*: relative inside it, else whole."""
    return os.path.relpath(path, cwd) if path.startswith(cwd.rstrip("/") + "/") else path


def changes(
    now: Mapping[str, str], granted: Mapping[str, str] | None, cwd: str, grant: str
) -> list[str]:
    """Why the programs bound *now* are not what *grant* (its name) was given with (its
    *granted* programs; None: a grant kept before programs were bound), in words."""
    said = []
    for path, sealed in now.items():
        name = shlex.quote(named(path, cwd))
        if not sealed.startswith(DIGEST_PREFIX):
            said.append(
                f"{name} {_why_unbound(sealed)}: no grant covers it, so it is asked each time"
            )
        elif granted is None or path not in granted:
            said.append(
                f"{name} is a file the agent can write, and {grant} was given without its "
                f"content (now sha256 {_short(sealed)})"
            )
        elif granted[path] != sealed:
            said.append(
                f"{name} changed since you granted it ({grant}: sha256 "
                f"{_short(granted[path])}, now {_short(sealed)})"
            )
    return said


def changed_since(programs: Mapping[str, str], cwd: str) -> str | None:
    """Which of the *programs* bound when a call was asked about are not that content now
    (rewritten, replaced, gone), in words; None when each is as it was."""
    changed = [path for path, sealed in programs.items() if seal(path) != sealed]
    if not changed:
        return None
    return ", ".join(shlex.quote(named(path, cwd)) for path in changed) + " changed"
