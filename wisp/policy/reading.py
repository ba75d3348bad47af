"""A call read for the policy: which classes its parts fall in (read-only, each must-ask
class, the rest), the prefixes a person may grant, the paths it writes.

The classes are the issue's reference policy (issue 57), written exactly: the read-only
commands and their dangerous options, the must-ask classes (a write outside the project, the
network, `rm -r`, a download piped into a shell, another user's rights), and the rest.

A path is resolved against the call's directory and its `cd`s. It counts inside the project
only when both its lexical form and its real path (`os.path.realpath`, which reads the disk
to follow symlinks: a link in the project pointing out counts outside) lie inside; a glob is
expanded (a directory listing) to check what it matches. Nothing else is read; nothing runs.
(Owned by the `shell` work: issue 57.)
"""

from __future__ import annotations

# Paths here are strings as the call spells them, compared as strings: os.path's string
# functions are the right tool (pathlib would re-resolve and re-spell them).
# ruff: noqa: PTH112, PTH113, PTH117, PTH118, PTH119, PTH120, PTH123, PTH206, PTH207
import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

from pending import NamedTuple, StrEnum
from wisp.policy.shell import BRACE_PATTERN, SHELLS, Line, Simple, parse_line

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any


class Effect(StrEnum):
    """What a harness's tool does, as its harness module says (one table per harness)."""

    READ = "read"  # reads files or lists them (Read, Grep, Glob, LS, …)
    EDIT = "edit"  # edits or writes files (Edit, Write, MultiEdit, apply_patch, …)
    SHELL = "shell"  # runs a shell line: read by :func:`read_shell`
    NETWORK = "network"  # reaches the network (WebFetch, …)
    OTHER = "other"  # anything else: asked


class Class(StrEnum):
    """The classes a call or a part of it falls in. The must-ask ones (:data:`MUST_ASK`)
    are asked every time: no rule allows them, no grant wider than `once` covers them."""

    READ_ONLY = "read-only"
    EDIT_IN_PROJECT = "edit-in-project"
    WRITE_OUTSIDE = "write-outside-project"
    NETWORK = "network"
    RECURSIVE_DELETE = "recursive-delete"
    PIPE_TO_SHELL = "pipe-to-shell"
    PRIVILEGE = "privilege"
    UNREAD = "unread"  # the parser could not read it fully: asked, never allowed by a rule
    OTHER = "other"  # asked once per prefix


MUST_ASK = frozenset(
    {
        Class.WRITE_OUTSIDE,
        Class.NETWORK,
        Class.RECURSIVE_DELETE,
        Class.PIPE_TO_SHELL,
        Class.PRIVILEGE,
    }
)


class Reading(NamedTuple):
    """A call, read for the policy."""

    classes: frozenset[Class]  # every class a part of it falls in
    must_ask: tuple[str, ...]  # why it is must-ask, in words, one per finding; () if not
    # The first two words of each simple command that is not read-only (what a person grants
    # as "this command with any arguments"); () for a tool call.
    prefixes: tuple[tuple[str, ...], ...] = ()
    written: tuple[str, ...] = ()  # the absolute paths it writes, as far as they can be known
    line: Line | None = None  # a shell call's line, read
    # The paths it writes inside the project in a protected place (`.git/`, a harness's or an
    # editor's folder, a sensitive file: :func:`protected`), each with why: asked, and no
    # grant wider than this very call should cover them.
    protected: tuple[str, ...] = ()
    # Why it is asked though not must-ask (unread, a protected place), in words.
    notes: tuple[str, ...] = ()

    @property
    def read_only(self) -> bool:
        """Whether every part of it is read-only (and it was read fully)."""
        return self.classes == {Class.READ_ONLY}


# -- the reference policy's lists ---------------------------------------------------------

# Commands that only read and print (the reference's list): a line of them, with none of
# the options below, runs without asking. `cd` moves the commands after it.
READ_ONLY_COMMANDS = frozenset(
    {
        "ls", "cat", "head", "tail", "grep", "rg", "wc", "nl", "pwd", "echo", "which",
        "tree", "file", "stat", "du", "diff", "sort", "uniq", "cut", "tr", "basename",
        "dirname", "realpath", "readlink", "true", "false", "date", "whoami", "id", "uname",
        "type", "jq", "printf", "column", "cd",
    }
)  # fmt: skip

# Options of read-only commands that write a file, run a program or change the machine: a
# command with one is not read-only. By prefix (`--output=f` is `--output`); a short option
# matches itself or clustered first (`-ofile`).
# A long option also matches its abbreviations (GNU's and git's option readers take any
# unambiguous prefix: `sort --compress=sh` is `--compress-program=sh`), from
# LONG_ABBREVIATION_MIN characters on (`--c`), whether or not the prefix is ambiguous.
READ_ONLY_EXCEPT: Mapping[str, tuple[str, ...]] = {
    "sort": ("-o", "--output", "--compress-program"),  # writes FILE; runs a program
    "tree": ("-o", "-R"),  # writes FILE; -R writes 00Tree.html files
    # Runs a program on each file; `--hostname-bin` runs one to learn the host's name.
    "rg": ("--pre", "--search-zip", "-z", "--hostname-bin"),
    # Follows a file forever: the call never ends by itself, holding the agent's shell.
    "tail": ("-f", "-F", "--follow"),
    "date": ("-s", "--set"),  # sets the clock
    "file": ("-C", "--compile"),  # writes a magic file
    "grep": ("--pre",),
    "printf": ("-v",),  # sets a shell variable: `printf -v PATH …` moves every later command
}

# Read-only commands' options that name a file they write (checked like a redirection).
OUTPUT_OPTIONS: Mapping[str, tuple[str, ...]] = {"sort": ("-o", "--output"), "tree": ("-o",)}

# `sed` is read-only with `-n`, without `-i`, and a script of these commands only: print,
# quit, line and hold-space moves, labels and branches, appended text, reading a file. Not
# `w`/`W` (write a file), `e` (run a command) nor an `s` with the `w` or `e` flag.
SED_SAFE_COMMANDS = frozenset("pPlqQnNdDgGhHxzF=")
SED_SAFE_S_FLAGS = frozenset("gpiImM0123456789")

# `find` with any of these writes, deletes or runs a command: not read-only.
FIND_UNSAFE = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint")
FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})  # each runs the words after it

# git: these subcommands only read; `branch` and `remote` only in their listing forms.
GIT_READ_ONLY = frozenset({"status", "diff", "log", "show", "rev-parse", "ls-files", "blame"})
GIT_READ_ONLY |= {"grep"}
# git options before the subcommand that leave it reading the same repository's files.
GIT_SAFE_GLOBAL = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs"}
    | {"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-advice"}
)
# git options before the subcommand that take a value (`-C DIR`: read through; the others
# make the command not read-only: `-c core.pager=sh` runs a program).
GIT_VALUED_GLOBAL = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
    | {"--super-prefix", "--list-cmds", "--attr-source"}
)
# Options after a read-only subcommand that write a file or run a program: `--output`,
# `--ext-diff`, `--textconv`, and git grep's `-O`/`--open-files-in-pager` (runs a pager
# command). By prefix, as git takes an unambiguous abbreviation of a long option (`--outp`).
GIT_UNSAFE_OPTIONS: tuple[str, ...] = ("--out", "--ext", "--textc", "--open", "-O")
# The same options in full: a shorter abbreviation of one (`git grep --op`) is one too.
GIT_UNSAFE_LONG = ("--output", "--ext-diff", "--textconv", "--open-files-in-pager")
GIT_SAFE_NEAR_UNSAFE = frozenset({"--text"})  # a whole option of its own, not `--textconv`
# `git branch` listing options (anything else — a name to create, -d, -m, -u … — changes).
GIT_BRANCH_LIST = frozenset(
    {"-a", "--all", "-r", "--remotes", "-l", "--list", "-v", "-vv", "--verbose"}
    | {"--show-current", "--no-color", "--color", "--column", "--no-column", "-i"}
    | {"--ignore-case", "--omit-empty"}
)
GIT_BRANCH_VALUED: tuple[str, ...] = ("--contains", "--no-contains", "--merged", "--no-merged")
GIT_BRANCH_VALUED += ("--points-at", "--sort", "--format", "--abbrev")

# The network (the reference's list; `ncat`, `netcat`, `socat`, `uvx`, `bunx`, `pipx` are
# the same tools under other names).
NETWORK_COMMANDS = frozenset(
    {
        "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "telnet", "ftp", "gh", "npx",
        "brew", "apt", "apt-get", "yum", "dnf", "ncat", "netcat", "socat", "uvx", "bunx",
    }
)  # fmt: skip
# bash opens a connection for a redirection to these (`cat < /dev/tcp/host/80`).
NETWORK_DEVICES = ("/dev/tcp/", "/dev/udp/")
# Commands that reach the network with one of these subcommands (package installs and
# publishes, git's remote operations, image pulls).
NETWORK_SUBCOMMANDS: Mapping[str, frozenset[str]] = {
    "git": frozenset({"push", "pull", "fetch", "clone", "ls-remote", "submodule"}),
    # npm's own aliases of install and clean-install included.
    "npm": frozenset({"install", "add", "publish", "i", "ci", "in", "ins", "inst", "insta"})
    | {"instal", "isnt", "isnta", "isntal", "isntall", "clean-install", "ic"}
    | {"install-clean", "isntall-clean", "install-test", "it", "update", "up", "upgrade"},
    "pnpm": frozenset({"install", "add", "publish", "i", "ci", "update", "up", "dlx"}),
    "yarn": frozenset({"install", "add", "publish", "i", "ci", "upgrade", "dlx"}),
    "bun": frozenset({"install", "add", "publish", "i", "update"}),
    "pip": frozenset({"install", "download"}),
    "pip3": frozenset({"install", "download"}),
    "pipx": frozenset({"install", "run", "upgrade"}),
    "uv": frozenset({"add", "sync", "pip", "tool"}),
    "cargo": frozenset({"install", "publish", "add", "update", "fetch"}),
    "go": frozenset({"get", "install"}),
    "gem": frozenset({"install"}),
    "docker": frozenset({"pull", "push", "login"}),
    "podman": frozenset({"pull", "push", "login"}),
}
NETWORK_BARE = frozenset({"yarn", "pnpm"})  # alone they install

# Downloaders, and what running their output means: a shell or an interpreter.
DOWNLOADERS = frozenset({"curl", "wget"})
INTERPRETERS = SHELLS | {"python", "python3", "perl", "ruby", "node", "php", "lua", "pwsh"}

# What runs the text it is handed: an interpreter, or the shell's own `eval` and `source`.
RUNS_TEXT = INTERPRETERS | {"eval", "source", "."}
# Patterns, compiled on first use (re's cache) rather than as the module loads.
SUBSTITUTION_PATTERN = r"\$\((?!\()|`"  # `$(…)` or backticks, not `$((…))`
DOWNLOAD_PATTERN = r"\b(curl|wget)\b"

# Commands that run what follows as another user.
PRIVILEGE_COMMANDS = frozenset({"sudo", "su", "doas", "pkexec", "run0"})
# sudo's and doas's options that take a value, so that the command after them is found.
_SUDO_VALUED = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"})

# Commands whose path arguments the reference counts as written, and their options that
# take a value which is not a path (skipped) or is one (`-t DIR`: a path).
WRITING_COMMANDS = frozenset(
    {"cp", "mv", "ln", "touch", "mkdir", "rm", "rmdir", "chmod", "chown", "install"} | {"truncate"}
)
_VALUE_NOT_PATH: Mapping[str, frozenset[str]] = {
    "cp": frozenset({"-S", "--suffix"}),
    "mv": frozenset({"-S", "--suffix"}),
    "ln": frozenset({"-S", "--suffix"}),
    "install": frozenset({"-m", "--mode", "-o", "--owner", "-g", "--group", "-S"}),
    "mkdir": frozenset({"-m", "--mode", "--context"}),
    "touch": frozenset({"-d", "--date", "-t"}),
    "truncate": frozenset({"-s", "--size", "-o"}),
}
_VALUE_PATH = frozenset({"-t", "--target-directory", "-r", "--reference"})
_FIRST_NOT_PATH = frozenset({"chmod", "chown"})  # their first word is a mode or an owner
_UNIQ_VALUED = frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"})

# Variables that may be set for a read-only command: they change only how it prints.
SAFE_ASSIGNMENTS = frozenset(
    {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "COLUMNS", "FORCE_COLOR", "CI"}
)
_SAFE_PREFIX = "LC_"
# Variables safe with these values only: agents turn pagers and prompts off this way
# (`GIT_PAGER=cat git log`), while `GIT_PAGER=sh` would run a program.
SAFE_ASSIGNMENT_VALUES: Mapping[str, frozenset[str]] = {
    "PAGER": frozenset({"cat", ""}),
    "GIT_PAGER": frozenset({"cat", ""}),
    "MANPAGER": frozenset({"cat", ""}),
    "TERM": frozenset({"dumb"}),
    "GIT_TERMINAL_PROMPT": frozenset({"0"}),
}

# Inside the project, places whose files a harness, an editor, git or the shell runs or
# obeys by themselves: an edit there is asked (never the in-project rule), a shell write
# there is noted (:attr:`Reading.protected`). By path component, anywhere in the project,
# compared without case (a case-insensitive disk makes `.GIT` the same folder).
PROTECTED_DIRS = frozenset(
    {
        ".git",  # hooks and config run programs
        ".wisp",  # the project's own policy: an agent must not loosen it
        # The harnesses' own folders: settings, hooks, commands, plugins.
        ".claude", ".codex", ".gemini", ".opencode", ".cursor", ".qwen", ".crush",
        ".kilo", ".cline", ".clinerules", ".pi", ".factory",
        ".windsurf", ".aider", ".continue", ".roo", ".kiro", ".amp", ".goose",
        # Editors' folders: tasks and settings that run programs on opening.
        ".vscode", ".idea", ".zed", ".devcontainer",
    }
)  # fmt: skip
PROTECTED_FILES = frozenset({".envrc"})  # direnv runs it on entering the directory
# Under .github: Copilot's instructions and hooks (not the rest of .github).
PROTECTED_GITHUB = ("copilot", "hooks")
# Files the person keeps secrets in: by file name (a glob; with a `/`, on the path inside
# the project). The caller may pass its own (the person's config).
SENSITIVE = (".env", ".env.*")

# A glob is expanded to check what it matches; past this many matches its paths count as
# outside (a listing that large is no longer a cheap check).
GLOB_MATCHES_MAX = 1000

# What a read-only command may read outside the project without asking: the system's own
# programs, libraries and their documentation (`/usr/include/stdio.h`, `ls /usr/bin`), which
# hold nothing of the person's, and the empty device. Anything else outside the project —
# the person's home (`~/.ssh`, `~/.aws`), another project, `/etc`, `/tmp` (other people's and
# other sessions' files), `/proc` (`/proc/self/environ` holds the environment) — is asked
# (not must-ask: a read changes nothing). Both the path as written and where its links lead
# must lie under one of these.
SYSTEM_READABLE = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/dev/null")
# Claude Code keeps what the agent's own background commands print in
# `$TMPDIR/claude-UID/…/tasks/ID.output`, and its agent reads it back (`tail -30 …`): output
# of commands already decided, nothing else of the person's. Read without asking when that
# folder is a real folder of the person's own (not a link, not another user's: /tmp is
# everyone's), and where the path leads stays in it.
HARNESS_SCRATCH = ("claude-{uid}",)
# bash's own builtins among the read-only commands: PATH is never searched for them.
SHELL_BUILTINS = frozenset({"echo", "printf", "pwd", "cd", "type", "true", "false"})
_TMP_DEFAULT = "/tmp"  # noqa: S108 - only read from, and only a folder of the person's own
# Read-only commands whose arguments name no file they read (text to print, names to look
# up, sets of characters): only a glob among them is checked, as the shell lists a folder.
NO_FILE_ARGUMENTS = frozenset(
    {"echo", "printf", "basename", "dirname", "which", "type", "true", "false", "pwd"}
    | {"whoami", "id", "uname", "cd", "tr"}
)
# Read-only commands whose first argument is a pattern, a filter or a script, not a file —
# unless one of these options gives it (then every argument is a file).
PATTERN_FIRST: Mapping[str, tuple[str, ...]] = {
    "grep": ("-e", "--regexp", "-f", "--file"),
    "rg": ("-e", "--regexp", "-f", "--file", "--files", "--type-list"),
    "jq": ("-f", "--from-file", "-n", "--null-input"),
    "sed": ("-e", "--expression", "-f", "--file"),
}
# Read-only commands' options whose value is no path (a separator, a field list): skipped,
# attached (`-d/`) or not (`-t /`).
READ_VALUE_NOT_PATH: Mapping[str, frozenset[str]] = {
    "sort": frozenset({"-t", "--field-separator", "-k", "--key"}),
    "cut": frozenset({"-d", "--delimiter", "-f", "--fields", "-b", "--bytes", "-c"}),
    "column": frozenset({"-s", "--separator", "-o", "--output-separator"}),
    "grep": frozenset({"-e", "--regexp"}),
    "rg": frozenset({"-e", "--regexp"}),
    "sed": frozenset({"-e", "--expression"}),
}
# Options with which a read-only command follows the links it meets while walking a
# folder: a link in the project may lead anywhere (`grep -R key .` through `home -> ~`).
FOLLOWS_LINKS: Mapping[str, tuple[str, ...]] = {
    "grep": ("-R", "--dereference-recursive"),
    "rg": ("-L", "--follow"),
    "du": ("-L", "--dereference"),
    "tree": ("-l",),
}
FIND_FOLLOWS = frozenset({"-L", "-H", "-follow"})

# A repository's own configuration can make git's reading commands run a program: `git log`
# its pager (`core.pager`, `pager.log`), `git status` a file-system monitor (`core.fsmonitor`)
# and the clean filters (`filter.*.clean`, `filter.*.process`), `git diff` an external diff
# (`diff.external`, `diff.*.command`) or a text converter (`diff.*.textconv`), `git log
# --show-signature` a signing program (`gpg.program`); `core.worktree` points its reads
# anywhere, and an `include` brings in a file of anything. The agent can write the project's
# `.git/config` (by a line a grant covers), so what wisp reads there to decide is what the
# agent wrote: the check is conservative. A key whose name ends in one of these, or any key
# of these sections, and git's reading commands there are asked; so is a configuration wisp
# cannot read whole (larger than GIT_CONFIG_MAX_BYTES, a `.git` file it cannot follow).
GIT_CONFIG_RUNS = (
    "pager", "fsmonitor", "external", "textconv", "command", "cmd", "clean", "smudge",
    "process", "program", "worktree", "path", "editor", "askpass", "driver", "helper",
    "hook", "proxy", "uploadpack", "receivepack",
)  # fmt: skip
GIT_CONFIG_RUNS_SECTIONS = frozenset({"include", "includeif", "alias", "pager", "filter"})
GIT_CONFIG_MAX_BYTES = 256 * 1024
GIT_CONFIG_MAX_FILES = 64  # config files read at most: the repository's and its submodules'


# -- paths --------------------------------------------------------------------------------


def resolve(path: str, cwd: str | None) -> str | None:
    """*path* made absolute against *cwd*, NOT normalised: the system resolves `out/../x`
    from where the link `out` leads, so :func:`inside` needs it as written (the shown and
    recorded form is `os.path.normpath` of it). None when it cannot be known (relative with
    an unknown cwd, `~…`)."""
    if not path or path.startswith("~"):
        return None
    if not os.path.isabs(path):
        if cwd is None:
            return None
        path = os.path.join(cwd, path)
    return path


def _spelled(path: str) -> str:
    """An absolute path for the person: normalised, and where it really leads when a link
    takes it elsewhere."""
    shown = os.path.normpath(path)
    real = _real(path)
    if real is None or real == shown:
        return f"`{shown}`"
    return f"`{shown}` (through a link: `{real}`)"


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _real(path: str) -> str | None:
    """`os.path.realpath` of *path*; None when the system cannot take it (a NUL, a lone
    surrogate that is no byte): such a path counts outside."""
    try:
        return os.path.realpath(path)
    except (ValueError, UnicodeError, OSError):
        return None


def inside(path: str, project: str | None) -> bool:
    """Whether absolute *path* lies inside *project*: both lexically and once symlinks are
    followed (`os.path.realpath`, `..` after a link taken from where it leads, as the system
    does), so a link in the project pointing out is outside."""
    if project is None:
        return False
    root = os.path.normpath(project)
    if not _under(os.path.normpath(path), root):
        return False
    real, real_root = _real(path), _real(root)
    return real is not None and real_root is not None and _under(real, real_root)


def protected(path: str, project: str | None, sensitive: Iterable[str] = SENSITIVE) -> str | None:
    """Why absolute *path* inside *project* is in a protected place (a reason in words), or
    None: `.git/`, a harness's or editor's folder, `.envrc`, a sensitive file."""
    if project is None:
        return None
    root = os.path.normpath(project)
    spellings = {os.path.relpath(os.path.normpath(path), root)}
    real_root, real = _real(root), _real(path)
    if real is not None and real_root is not None and _under(real, real_root):
        spellings.add(os.path.relpath(real, real_root))
    patterns = tuple(sensitive)
    for rel in spellings:
        parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
        lowered = [p.lower() for p in parts]
        for k, part in enumerate(lowered):
            if part in PROTECTED_DIRS and k < len(parts) - 1:
                return f"`{parts[k]}/` is a protected folder"
            if part in PROTECTED_DIRS and k == len(parts) - 1:
                return f"`{parts[k]}` is a protected folder"
            if (
                part == ".github"
                and k + 1 < len(parts)
                and lowered[k + 1].startswith(PROTECTED_GITHUB)
            ):
                return f"`.github/{parts[k + 1]}` is read by Copilot"
        if lowered and lowered[-1] in PROTECTED_FILES:
            return f"`{parts[-1]}` runs by itself"
        name = parts[-1] if parts else ""
        for pattern in patterns:
            target = "/".join(parts) if "/" in pattern else name
            if fnmatch.fnmatchcase(target, pattern):
                return f"`{name}` is a sensitive file"
    return None


# -- one command --------------------------------------------------------------------------


class _State(NamedTuple):
    known: bool  # a plain word, or a glob (expanded to check)
    glob: bool  # a glob the shell expands


class _Finding(NamedTuple):
    cls: Class
    why: str


class _Scan:
    """The findings of one line, gathered command by command."""

    def __init__(self, project: str | None, sensitive: tuple[str, ...]) -> None:
        self.project = project
        self.sensitive = sensitive
        self.findings: list[_Finding] = []
        self.written: list[str] = []
        self.protected: list[str] = []
        self.notes: list[str] = []

    def find(self, cls: Class, why: str) -> None:
        if _Finding(cls, why) not in self.findings:
            self.findings.append(_Finding(cls, why))

    def writes(self, word: str | None, simple: Simple, what: str, state: _State) -> None:
        """*simple* writes the path *word* (None, or a word the parser cannot know: a path
        wisp cannot know, so outside)."""
        if word is None or not state.known:
            shown = f" `{word}`" if word else ""
            self.find(Class.WRITE_OUTSIDE, f"{what} writes{shown}, a path wisp cannot know")
            return
        paths = _expand(word, simple.cwd) if state.glob else [resolve(word, simple.cwd)]
        for path in paths:
            if path is None:
                self.find(Class.WRITE_OUTSIDE, f"{what} writes `{word}`, a path wisp cannot know")
                continue
            shown = os.path.normpath(path)
            if shown not in self.written:
                self.written.append(shown)
            if not inside(path, self.project):
                self.find(
                    Class.WRITE_OUTSIDE, f"{what} writes {_spelled(path)}, outside the project"
                )
                continue
            why = protected(path, self.project, self.sensitive)
            if why is not None and shown not in self.protected:
                self.protected.append(shown)
                self.notes.append(f"{what} writes `{shown}`: {why}")


_PLAIN = _State(True, False)
_UNKNOWN = _State(False, False)


def _state(simple: Simple, index: int) -> _State:
    """What the policy can know of word *index* of *simple*: a plain word; a glob, whose
    matches it can list; or a word it cannot know (`$VAR`, `~`, `$(…)`, braces)."""
    if index not in simple.expanded:
        return _PLAIN
    word = simple.words[index]
    if "$" in word or "`" in word or word.startswith("~") or re.search(BRACE_PATTERN, word):
        return _UNKNOWN
    return _State(True, True) if _globbed(word) else _UNKNOWN


def _globbed(word: str) -> bool:
    return any(c in word for c in "*?[")


def _expand(word: str, cwd: str | None) -> list[str | None]:
    """A glob word's matches as absolute paths (the word itself when nothing matches, as
    bash passes it); [None] when they cannot be known."""
    base = resolve(word, cwd)
    if base is None:
        return [None]
    import glob  # only a line that writes a glob lists a directory

    matches: list[str | None] = []
    try:
        for k, match in enumerate(glob.iglob(base)):
            if k >= GLOB_MATCHES_MAX:
                return [None]
            matches.append(match)
    except (ValueError, UnicodeError, OSError):
        return [None]
    return matches or [base]


def _versioned(name: str, program: str) -> bool:
    """Whether *name* is *program* or a versioned one (`python3.12`, `pip3`)."""
    return name.startswith(program) and all(c in "0123456789." for c in name[len(program) :])


def _name(simple: Simple) -> str:
    """The name of the program *simple* runs (xargs's command for xargs), without its
    directory; "" when xargs runs its default."""
    at = simple.command_at
    return os.path.basename(simple.words[at]) if at < len(simple.words) else ""


def _options(words: tuple[str, ...]) -> list[str]:
    """The option words before `--`."""
    out = []
    for w in words[1:]:
        if w == "--":
            break
        if w.startswith("-") and w != "-":
            out.append(w)
    return out


LONG_ABBREVIATION_MIN = 3  # `--c`: the shortest word taken as a long option's abbreviation


def _long_matches(word: str, option: str) -> bool:
    """Whether the long option *word* (`--name` or `--name=value`) is *option* — given in
    full, with a value, or abbreviated as GNU's and git's readers take it (`--compress` for
    `--compress-program`)."""
    name = word.partition("=")[0]
    if word.startswith(option):
        return True
    return len(name) >= LONG_ABBREVIATION_MIN and option.startswith(name)


def _has_option(words: tuple[str, ...], options: Iterable[str]) -> bool:
    """Whether one of *options* is given: a long one by prefix (`--output=f`) or abbreviated
    (`--out`: :func:`_long_matches`), a short one anywhere in a cluster (`-no`; a letter in
    another option's value counts too: the safe side)."""
    for w in _options(words):
        for o in options:
            if o.startswith("--"):
                if w.startswith("--") and _long_matches(w, o):
                    return True
            elif not w.startswith("--") and o[1] in w[1:]:
                return True
    return False


def _sed_skip(script: str, i: int, delim: str) -> int:
    """The index past the closing *delim* of a regex or replacement starting at *i*; -1
    when there is none."""
    n = len(script)
    while i < n:
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i + 1
        if c == "\n":
            return -1
        i += 1
    return -1


def _sed_to_line_end(script: str, i: int) -> int:
    n = len(script)
    while i < n and script[i] != "\n":
        i += 2 if script[i] == "\\" else 1
    return i


def sed_script_reads_only(script: str) -> bool:
    """Whether a sed script only prints (no `w`, `W`, `e`, no `s///w` or `s///e`, nothing
    unknown)."""
    i = 0
    n = len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!,$~+" or c.isdigit():
            i += 1
        elif c in "/\\":  # an address regex: /RE/ or \cREc
            if c == "\\":
                if i + 1 >= n:
                    return False
                i = _sed_skip(script, i + 2, script[i + 1])
            else:
                i = _sed_skip(script, i + 1, "/")
            if i < 0:
                return False
            while i < n and script[i] in "IM":
                i += 1
        elif c == "#" or c in ":btTaicrR":  # comments, labels, text, reading a file
            i = _sed_to_line_end(script, i) if c in "#aicrR" else _sed_label_end(script, i)
        elif c in SED_SAFE_COMMANDS:
            i += 1
        elif c in "sy":
            if i + 1 >= n or script[i + 1] in "\n\\":
                return False
            delim = script[i + 1]
            i = _sed_skip(script, i + 2, delim)
            if i < 0:
                return False
            i = _sed_skip(script, i, delim)
            if i < 0:
                return False
            if c == "s":
                while i < n and script[i] not in ";\n} \t":
                    if script[i] not in SED_SAFE_S_FLAGS:
                        return False
                    i += 1
        else:
            return False
    return True


def _sed_label_end(script: str, i: int) -> int:
    n = len(script)
    i += 1
    while i < n and script[i] not in ";\n":
        i += 1
    return i


class _Sed(NamedTuple):
    read_only: bool
    in_place: bool
    files: tuple[int, ...]  # the indexes of the files it reads (in place: writes)


def read_sed(words: tuple[str, ...]) -> _Sed:
    """A sed command's options: read-only (`-n`, no `-i`, scripts that only print), in place
    (`-i`), and the files it reads (and, in place, writes)."""
    quiet = in_place = from_file = unknown = False
    scripts: list[str] = []
    positional: list[int] = []
    i = 1
    n = len(words)
    while i < n:
        w = words[i]
        i += 1
        if w == "--":
            positional.extend(range(i, n))
            break
        if w.startswith("--"):
            option, _, value = w.partition("=")
            if option in ("--quiet", "--silent"):
                quiet = True
            elif option == "--in-place":
                in_place = True
            elif option == "--expression":
                if not value and i < n:
                    value, i = words[i], i + 1
                scripts.append(value)
            elif option == "--file":
                from_file = True
                i += 0 if value else 1
            elif option in ("--line-length",):
                i += 0 if value else 1
            elif option not in (
                "--regexp-extended",
                "--posix",
                "--separate",
                "--unbuffered",
                "--null-data",
                "--zero-terminated",
                "--debug",
                "--sandbox",
                "--follow-symlinks",
            ):
                unknown = True
            continue
        if w.startswith("-") and w != "-":
            for k, c in enumerate(w[1:], 1):
                rest = w[k + 1 :]
                if c == "n":
                    quiet = True
                elif c == "i":
                    in_place = True
                    break  # the rest is the backup suffix
                elif c in "ef":
                    value = rest
                    if not value and i < n:
                        value, i = words[i], i + 1
                    if c == "e":
                        scripts.append(value)
                    else:
                        from_file = True
                    break
                elif c == "l":
                    if not rest:
                        i += 1
                    break
                elif c not in "Ersuz":
                    unknown = True
            continue
        positional.append(i - 1)
    if not scripts and not from_file and positional:
        scripts.append(words[positional.pop(0)])
    # sed joins its scripts with newlines: checked as it runs them.
    safe = sed_script_reads_only("\n".join(scripts))
    read_only = quiet and not in_place and not from_file and not unknown and safe
    return _Sed(read_only, in_place, tuple(positional))


class _Git(NamedTuple):
    sub: str | None  # the subcommand; None when there is none
    at: int  # its index in the words
    safe_global: bool  # every option before it leaves it reading the same repository


def read_git(words: tuple[str, ...]) -> _Git:
    """git's subcommand past its global options, and whether those are all harmless."""
    i = 1
    n = len(words)
    safe = True
    while i < n and words[i].startswith("-"):
        w = words[i]
        option = w.partition("=")[0]
        if option in GIT_VALUED_GLOBAL:
            if option != "-C":
                safe = False
            i += 1 if "=" in w else 2
            continue
        if w not in GIT_SAFE_GLOBAL:
            safe = False
        i += 1
    if i >= n:
        return _Git(None, n, safe)
    return _Git(words[i], i, safe)


def _git_read_only(words: tuple[str, ...]) -> bool:
    git = read_git(words)
    if git.sub is None or not git.safe_global:
        return False
    args = words[git.at + 1 :]
    for w in args:
        if w == "--":
            break
        if w.startswith(GIT_UNSAFE_OPTIONS):
            return False
        exact = w in GIT_SAFE_NEAR_UNSAFE  # git takes an option given in full over a prefix
        if not exact and w.startswith("--") and any(_long_matches(w, o) for o in GIT_UNSAFE_LONG):
            return False
    if git.sub in GIT_READ_ONLY:
        return True
    if git.sub == "remote":
        return all(w in ("-v", "--verbose") for w in args)
    if git.sub == "branch":
        listing = any(w in ("-l", "--list") for w in args)
        k = 0
        while k < len(args):
            w = args[k]
            option = w.partition("=")[0]
            if option in GIT_BRANCH_VALUED:
                k += 1 if "=" in w else 2
                continue
            if w.startswith("-"):
                if w not in GIT_BRANCH_LIST:
                    return False
            elif not listing:
                return False  # `git branch NAME` makes a branch
            k += 1
        return True
    return False


def _subs(words: tuple[str, ...]) -> list[str]:
    """The words after the command that are not options, up to `--`."""
    out = []
    for w in words[1:]:
        if w == "--":
            break
        if not w.startswith("-"):
            out.append(w)
    return out


def _assignment_safe(assignment: str, bare: bool) -> bool:
    name, _, value = assignment.partition("=")
    if name in SAFE_ASSIGNMENTS or name.startswith(_SAFE_PREFIX):
        return True
    if value in SAFE_ASSIGNMENT_VALUES.get(name, ()):
        return True
    name = name.rstrip("+")
    # A shell variable of lower case set alone (`f=src/x; cat $f`) reaches no program's
    # environment (none is exported under such a name) and no shell setting.
    return bare and name == name.lower()


def _uniq_files(words: tuple[str, ...]) -> list[str]:
    out = []
    i = 1
    options = True
    while i < len(words):
        w = words[i]
        i += 1
        if options and w == "--":
            options = False
        elif options and w in _UNIQ_VALUED:
            i += 1
        elif not (options and w.startswith("-") and w != "-"):
            out.append(w)
    return out


def command_reads_only(simple: Simple) -> bool:
    """Whether the command itself only reads (its options included), whatever surrounds it."""
    words = simple.words
    bare = simple.assigns == words  # a line of assignments alone
    if not all(_assignment_safe(a, bare) for a in simple.assigns):
        return False
    if bare:
        return True
    name = words[0]
    if name in READ_ONLY_COMMANDS:
        if name == "uniq" and len(_uniq_files(words)) > 1:
            return False  # `uniq IN OUT` writes OUT
        return not _has_option(words, READ_ONLY_EXCEPT.get(name, ()))
    if name == "sed":
        return read_sed(words).read_only
    if name == "find":
        return not any(w.startswith(FIND_UNSAFE) for w in words[1:])
    if name == "git":
        return _git_read_only(words)
    return False


def reads_only(simple: Simple) -> bool:
    """Whether *simple* is read-only as the reference says: a read-only command, writing no
    file, not in the background, not inside a substitution, holding none."""
    if simple.substituted or simple.background or simple.command_at:
        return False
    if any(r.writes for r in simple.redirects):
        return False
    if any(re.search(SUBSTITUTION_PATTERN, simple.words[k]) for k in simple.expanded):
        return False
    return command_reads_only(simple)


def _privileged_at(words: tuple[str, ...], at: int, end: int) -> int:
    """Where the command `sudo [options] CMD …` (or doas's) starts; *end* when none."""
    i = at + 1
    while i < end and words[i].startswith("-"):
        if words[i] == "--":
            return i + 1
        i += 2 if words[i] in _SUDO_VALUED else 1
    return min(i, end)


def _find_execs(words: tuple[str, ...], at: int, end: int) -> list[tuple[int, int]]:
    """Where the commands `find … -exec CMD … ;` runs start and end."""
    out = []
    i = at + 1
    while i < end:
        if words[i] in FIND_RUNS:
            j = i + 1
            while j < end and words[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                out.append((i + 1, j))
            i = j
        i += 1
    return out


def _scan_command(
    scan: _Scan, simple: Simple, at: int, end: int, unknown_args: str | None = None
) -> None:
    """The must-ask findings of the command in words *at*…*end* of *simple* (*unknown_args*:
    what supplies further arguments the policy cannot see, e.g. xargs's input)."""
    if at >= end:
        return
    words = simple.words[at:end]
    name = os.path.basename(words[0])
    shown = f"`{name}`"
    if name in PRIVILEGE_COMMANDS:
        scan.find(Class.PRIVILEGE, f"{shown} runs a command as another user")
        if name in ("sudo", "doas", "run0"):
            inner = _privileged_at(simple.words, at, end)
            _scan_command(scan, simple, inner, end, unknown_args)
        return
    if name in NETWORK_COMMANDS:
        scan.find(Class.NETWORK, f"{shown} reaches the network")
    subs = NETWORK_SUBCOMMANDS.get("pip" if _versioned(name, "pip") else name)
    if subs is not None:
        # The subcommand: git's past its global options; for the others the first or second
        # word that is not an option (`npm --prefix x install`: an option's value first).
        candidates = [read_git(words).sub] if name == "git" else _subs(words)[:2]
        sub = next((c for c in candidates if c in subs), None)
        if sub is not None or (not candidates and name in NETWORK_BARE):
            said = f"`{name} {sub}`" if sub else shown
            scan.find(Class.NETWORK, f"{said} reaches the network")
    pip = _versioned(name, "python") and len(words) > 3 and words[1:3] == ("-m", "pip")
    if pip and words[3] in ("install", "download"):
        scan.find(Class.NETWORK, f"`{name} -m pip {words[3]}` reaches the network")
    if name == "rm" and _rm_recursive(words):
        scan.find(Class.RECURSIVE_DELETE, "`rm -r` deletes a whole tree")
    if name in WRITING_COMMANDS or name == "tee":
        found = _tee_paths(words) if name == "tee" else _path_arguments(name, words)
        for k, path in found:
            if unknown_args and "{}" in path:
                continue  # find's placeholder: what it stands for is the unknown below
            scan.writes(path, simple, shown, _state(simple, at + k))
        if unknown_args:
            scan.writes(None, simple, f"{shown} run by {unknown_args}", _UNKNOWN)
    elif name in OUTPUT_OPTIONS or name == "uniq":
        outputs = _uniq_files(words)[1:2] if name == "uniq" else []
        outputs += _option_values(words, OUTPUT_OPTIONS.get(name, ()))
        for word in outputs:
            state = _UNKNOWN if "$" in word or "`" in word else _PLAIN  # `~`: resolve says
            scan.writes(word, simple, shown, state)
    elif name == "sed":
        sed = read_sed(words)
        if sed.in_place:
            for k in sed.files:
                scan.writes(words[k], simple, "`sed -i`", _state(simple, at + k))
            if unknown_args or not sed.files:
                scan.writes(None, simple, "`sed -i`", _UNKNOWN)
    elif name == "find":
        for start, stop in _find_execs(simple.words, at, end):
            inner_name = os.path.basename(simple.words[start])
            if inner_name in SHELLS or inner_name in ("eval", "xargs"):
                note = f"`find` runs `{inner_name}`, whose commands wisp cannot read"
                scan.notes.append(note)
                scan.find(Class.UNREAD, note)
            _scan_command(scan, simple, start, stop, "`find`")


def _option_values(words: tuple[str, ...], options: Iterable[str]) -> list[str]:
    """The values given to *options* (`-o F`, `-oF`, `-no F`, `--output=F`, `--output F`)."""
    out = []
    names = tuple(options)
    i = 1
    while i < len(words):
        w = words[i]
        i += 1
        if w == "--":
            break
        for o in names:
            if o.startswith("--"):
                if not (w.startswith("--") and _long_matches(w, o)):
                    continue
                name, eq, value = w.partition("=")
                if eq:  # `--output=F`, `--outp=F`
                    out.append(value)
                elif i < len(words) and o.startswith(name):  # `--output F`, `--out F`
                    out.append(words[i])
                    i += 1
            elif w.startswith("-") and not w.startswith("--") and o[1] in w[1:]:
                rest = w[w.index(o[1], 1) + 1 :]  # in a cluster: the rest, or the next word
                if rest:
                    out.append(rest)
                elif i < len(words):
                    out.append(words[i])
                    i += 1
    return out


def _rm_recursive(words: tuple[str, ...]) -> bool:
    for w in words[1:]:
        if w == "--":
            return False
        if w.startswith("--"):
            if len(w) > 2 and "recursive".startswith(w[2:]):
                return True
        elif w.startswith("-") and ("r" in w or "R" in w):
            return True
    return False


def _path_arguments(name: str, words: tuple[str, ...]) -> list[tuple[int, str]]:
    """A writing command's path arguments: each one's index in *words* and its path (the
    value of `--target-directory=DIR`, the word itself otherwise)."""
    not_path = _VALUE_NOT_PATH.get(name, frozenset())
    out: list[tuple[int, str]] = []
    first = name in _FIRST_NOT_PATH
    options = True
    i = 1
    while i < len(words):
        w = words[i]
        i += 1
        if options and w == "--":
            options = False
            continue
        if options and w.startswith("-") and w != "-":
            option, eq, value = w.partition("=")
            if option in _VALUE_PATH and not eq and i < len(words):
                out.append((i, words[i]))  # `-t DIR`
                i += 1
            elif option in _VALUE_PATH and eq:
                out.append((i - 1, value))  # `--target-directory=DIR`
            elif option in not_path:
                i += 0 if eq else 1
            if name in _FIRST_NOT_PATH and option == "--reference":
                first = False
            continue
        if first:
            first = False  # chmod's mode, chown's owner
            continue
        out.append((i - 1, w))
    return out


def _tee_paths(words: tuple[str, ...]) -> list[tuple[int, str]]:
    out = []
    options = True
    for i, w in enumerate(words[1:], 1):
        if options and w == "--":
            options = False
        elif not (options and w.startswith("-") and w != "-"):
            out.append((i, w))
    return out


def _pipe_to_shell(scan: _Scan, simple: Simple) -> None:
    """A downloader's output reaching a shell or interpreter, directly or through a
    pipeline (`curl … | tee f | sh`), or through sudo (`curl … | sudo bash`)."""
    names = [_name(simple)]
    if names[0] in PRIVILEGE_COMMANDS:
        inner = _privileged_at(simple.words, simple.command_at, len(simple.words))
        if inner < len(simple.words):
            names.append(os.path.basename(simple.words[inner]))
    runner = next((n for n in names if n in RUNS_TEXT or _versioned(n, "python")), None)
    if runner is None:
        return
    for k in simple.expanded:  # `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(wget …)"`
        found = re.search(DOWNLOAD_PATTERN, simple.words[k])
        if found and ("$(" in simple.words[k] or "(" in simple.words[k] or "`" in simple.words[k]):
            scan.find(
                Class.PIPE_TO_SHELL,
                f"`{found.group(1)}`'s download is handed to `{runner}`, which runs it",
            )
    for upstream in simple.upstream:
        source = _downloader(upstream)
        if source is not None:
            scan.find(
                Class.PIPE_TO_SHELL,
                f"`{source}`'s download is piped into `{runner}`, which runs it",
            )


def _downloader(words: tuple[str, ...]) -> str | None:
    for w in words[:3]:
        base = os.path.basename(w)
        if base in DOWNLOADERS:
            return base
    return None


def _prefix(simple: Simple) -> tuple[str, ...]:
    """The first two words (one if it has one), cut before a word the parser cannot know."""
    words = simple.words[:2]
    for k in simple.expanded:
        if k < len(words):
            words = words[: max(k, 1)]
    return words


# -- reads outside the project ------------------------------------------------------------


def _scratch_roots() -> tuple[str, ...]:
    """The harnesses' scratch folders (:data:`HARNESS_SCRATCH`) that are the person's own."""
    import stat

    tmp = os.path.normpath(os.environ.get("TMPDIR") or _TMP_DEFAULT)
    uid = os.getuid()
    roots = []
    for name in HARNESS_SCRATCH:
        root = os.path.join(tmp, name.format(uid=uid))
        try:
            st = os.lstat(root)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and _real(root) == root:
            roots.append(root)
    return tuple(roots)


def readable_outside(path: str) -> bool:
    """Whether absolute *path* lies under :data:`SYSTEM_READABLE` or a harness's scratch
    folder of the person's (:data:`HARNESS_SCRATCH`), as written and once its links are
    followed."""
    real = _real(path)
    if real is None:
        return False
    shown = os.path.normpath(path)
    if any(_under(shown, root) and _under(real, root) for root in SYSTEM_READABLE):
        return True
    return any(_under(shown, root) and _under(real, root) for root in _scratch_roots())


def _read_where(word: str, simple: Simple, index: int | None, project: str) -> str | None:
    """Why the word *word* (at *index* of *simple*'s words; None: part of one, as written),
    read as a path, reaches outside *project*; None when it stays inside (or in a system
    place)."""
    state = _PLAIN if index is None else _state(simple, index)
    if index is not None and index in simple.expanded and not state.known:
        return f"`{word}` may name any path (wisp cannot know which)"
    paths = _expand(word, simple.cwd) if state.glob else [resolve(word, simple.cwd)]
    for path in paths:
        if path is None:
            return f"`{word}` may name any path (wisp cannot know which)"
        if not inside(path, project) and not readable_outside(path):
            return f"`{os.path.normpath(path)}` is outside the project"
    return None


def reads_outside(simple: Simple, project: str | None) -> str | None:
    """Why the read-only command *simple* reads outside *project* — a file or folder it names
    that lies outside (`cat ~/.ssh/id_rsa`, `grep -r key ../other`, through a link in the
    project), a word wisp cannot know (`$F`, `~`), a walk that follows links — in words; None
    when everything it names is inside (or in :data:`SYSTEM_READABLE`). Every argument that
    is not an option counts as a path, and every option's value after `=` (the safe side: a
    pattern is taken for a file when it is not known to be one)."""
    if project is None or simple.assigns == simple.words:
        return None
    words = simple.words
    name = words[0]
    said = f"`{name}` reads outside the project"
    if name == "find" and any(w in FIND_FOLLOWS for w in words[1:]):
        return f"{said}: it follows links, which may lead anywhere"
    if _has_option(words, FOLLOWS_LINKS.get(name, ())):
        return f"{said}: it follows links, which may lead anywhere"
    no_files = name in NO_FILE_ARGUMENTS
    not_path = READ_VALUE_NOT_PATH.get(name, frozenset())
    pattern = name in PATTERN_FIRST and not _has_option(words, PATTERN_FIRST[name])
    if name == "git":
        git = read_git(words)
        pattern = git.sub == "grep" and not _has_option(words[git.at :], PATTERN_FIRST["grep"])
    options = True
    i = 1
    while i < len(words):
        w = words[i]
        at = i
        i += 1
        if no_files:
            if at in simple.expanded and _globbed(w):  # `echo ~/.ssh/*` lists a folder
                why = _read_where(w, simple, at, project)
                if why is not None:
                    return f"{said}: {why}"
            continue
        if options and w == "--":
            options = False
            continue
        if options and w.startswith("-") and w != "-":
            option, eq, value = w.partition("=")
            skip = option in not_path or (
                not option.startswith("--") and f"-{option[1:2]}" in not_path
            )
            # `-t /`: its value is the next word (`-d/`: attached, in this word)
            if option in not_path and not eq and (option.startswith("--") or len(option) == 2):
                i += 1
            if skip:
                continue
            if eq:
                why = _read_where(value, simple, None, project)
            elif not option.startswith("--") and any(c in w for c in "/~."):
                why = _read_where(w[2:], simple, None, project) if len(w) > 2 else None
            else:
                why = None
            if why is not None:
                return f"{said}: {why}"
            continue
        if pattern:
            pattern = False
            if name == "git" and at <= read_git(words).at:
                pattern = True  # git's own words come before its pattern
            else:
                continue
        if name == "git" and at == read_git(words).at:
            continue  # the subcommand
        why = _read_where(w, simple, at, project)
        if why is not None:
            return f"{said}: {why}"
    return None


# -- a repository's configuration ----------------------------------------------------------


def _git_dirs(start: str) -> tuple[str, str] | None:
    """The git directory and the common directory (a worktree's main one) of the repository
    git finds from folder *start*, walking up as git does; None when there is none. Raises
    OSError (or ValueError) when a `.git` file cannot be followed."""
    here = os.path.realpath(start)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            git_dir = dot
            break
        if os.path.lexists(dot):
            with open(dot, "rb") as f:
                text = f.read(GIT_CONFIG_MAX_BYTES).decode("utf-8").strip()
            if not text.startswith("gitdir:"):
                raise ValueError("a `.git` file that names no git directory")
            git_dir = os.path.join(here, text.partition(":")[2].strip())
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    common = git_dir
    commondir = os.path.join(git_dir, "commondir")
    if os.path.lexists(commondir):
        with open(commondir, "rb") as f:
            common = os.path.join(git_dir, f.read(GIT_CONFIG_MAX_BYTES).decode("utf-8").strip())
    return git_dir, common


def git_config_runs_text(text: str) -> str | None:
    """The first key of git configuration *text* that may run a program or read elsewhere
    (:data:`GIT_CONFIG_RUNS`), as `section.key`; None when there is none. Read line by line
    without git's quoting: a value running on over lines is read as keys too (the safe side)."""
    section = ""
    for raw in text.splitlines():
        line = raw.strip().lstrip("\ufeff")
        if line.startswith("["):
            head, close, line = line[1:].partition("]")
            if not close:
                return "a section header that does not close"
            section = re.split(r"[\s.\"]", head.strip(), maxsplit=1)[0].lower()
            line = line.strip()
            if section in GIT_CONFIG_RUNS_SECTIONS:
                return f"[{section}]"
        if not line or line[0] in "#;":
            continue
        key = re.match(r"[A-Za-z0-9-]*", line)
        name = (key.group(0) if key else "").lower()
        if name.endswith(GIT_CONFIG_RUNS) or not name:
            return f"{section}.{name}" if name else f"a line it cannot read ({line[:40]!r})"
    return None


def _config_files(git_dir: str, common: str) -> list[str]:
    files = [os.path.join(common, "config"), os.path.join(git_dir, "config.worktree")]
    if common != git_dir:
        files.append(os.path.join(git_dir, "config"))
    modules = os.path.join(common, "modules")
    if os.path.isdir(modules):  # a submodule's own configuration: `git status` reads it
        for top, dirs, names in os.walk(modules):
            dirs.sort()
            files.extend(os.path.join(top, n) for n in names if n in ("config", "config.worktree"))
    return files


def git_config_runs(cwd: str) -> str | None:
    """Why the configuration of the repository git finds from *cwd* may make a reading git
    command run a program (a key of :data:`GIT_CONFIG_RUNS`, or a configuration wisp cannot
    read whole), in words; None when it cannot."""
    try:
        dirs = _git_dirs(cwd)
        if dirs is None:
            return None
        files = _config_files(*dirs)
        if len(files) > GIT_CONFIG_MAX_FILES:
            return "the repository has more configuration files than wisp reads"
        for path in files:
            try:
                with open(path, "rb") as f:
                    data = f.read(GIT_CONFIG_MAX_BYTES + 1)
            except FileNotFoundError:
                continue
            if len(data) > GIT_CONFIG_MAX_BYTES:
                return f"`{path}` is larger than wisp reads"
            found = git_config_runs_text(data.decode("utf-8", "replace"))
            if found is not None:
                return f"`{path}` sets `{found}`, which can make git run a program"
    except (OSError, ValueError, UnicodeError) as exc:
        return f"wisp cannot read the repository's configuration ({type(exc).__name__})"
    return None


def _git_start(simple: Simple) -> str | None:
    """The folder a git command starts from: its cwd, moved by its `-C DIR`s."""
    cwd = simple.cwd
    words = simple.words
    git = read_git(words)
    k = 1
    while k < git.at:
        if words[k] == "-C" and k + 1 < len(words):
            cwd = None if cwd is None or k + 1 in simple.expanded else _moved_to(cwd, words[k + 1])
            k += 2
            continue
        if words[k].startswith("-C") and len(words[k]) > 2:
            return None
        k += 1
    return cwd


def planted(simple: Simple, project: str | None) -> str | None:
    """Why the program *simple* names may be one planted in the project: a PATH entry (as
    this process's environment has it, which the harness passes on) that is relative (`.`,
    empty, `bin`) or inside *project* (direnv's `PATH_add bin`, `node_modules/.bin`) holds a
    file of that name before any other entry does — an edit the `project-edits` rule allows
    could have put an `ls` there. None when what runs is outside the project."""
    name = simple.words[0] if simple.words else ""
    if project is None or "/" in name or name in SHELL_BUILTINS:
        return None
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        folder = entry if os.path.isabs(entry) else None
        if folder is None:
            if simple.cwd is None:
                return f"`{name}` is looked up in a relative PATH entry (`{entry}`)"
            folder = os.path.join(simple.cwd, entry)
        program = os.path.join(folder, name)
        if not os.path.isfile(program) or not os.access(program, os.X_OK):
            continue
        real_folder = _real(folder)
        if inside(program, project) or (real_folder is not None and inside(real_folder, project)):
            return f"`{name}` runs `{os.path.normpath(program)}`, a file in the project"
        return None
    return None


def not_read_here(simple: Simple, project: str | None) -> str | None:
    """Why the read-only command *simple* is still not one the `read-only` rule may allow:
    its program may be one planted in the project (:func:`planted`), it reads outside
    *project* (:func:`reads_outside`), or it is git in a repository whose configuration can
    make it run a program (:func:`git_config_runs`); None when none of these."""
    outside = planted(simple, project) or reads_outside(simple, project)
    if outside is None and simple.words and simple.words[0] == "git":
        start = _git_start(simple)
        runs = "where it runs is not known" if start is None else git_config_runs(start)
        outside = None if runs is None else f"`git` here may run a program: {runs}"
    return outside


def _moved_to(cwd: str, to: str) -> str:
    return os.path.normpath(os.path.join(cwd, to))


# -- the public readers -------------------------------------------------------------------


def read_shell(
    line: str, cwd: str, project: str | None, sensitive: Iterable[str] = SENSITIVE
) -> Reading:
    """A shell *line* run in *cwd*, in the session's *project* (None: no project, so every
    write is outside one), read for the policy."""
    parsed = parse_line(line, cwd)
    scan = _Scan(project, tuple(sensitive))
    classes: set[Class] = set()
    prefixes: list[tuple[str, ...]] = []
    for simple in parsed.commands:
        before = len(scan.findings)
        for redirect in simple.redirects:
            if (redirect.target or "").startswith(NETWORK_DEVICES):
                scan.find(Class.NETWORK, f"`{redirect.op} {redirect.target}` reaches the network")
            if redirect.writes:
                state = _PLAIN if redirect.target is not None else _UNKNOWN
                word = redirect.target if redirect.target is not None else redirect.raw
                scan.writes(word, simple, f"`{redirect.op}`", state)
        unknown = "`xargs`'s input" if simple.command_at else None
        _scan_command(scan, simple, simple.command_at, len(simple.words), unknown)
        _pipe_to_shell(scan, simple)
        if reads_only(simple) and len(scan.findings) == before:
            outside = not_read_here(simple, project)
            if outside is None:
                classes.add(Class.READ_ONLY)
                continue
            scan.notes.append(outside)
        if len(scan.findings) == before:
            classes.add(Class.OTHER)
        prefix = _prefix(simple)
        if prefix and prefix not in prefixes:
            prefixes.append(prefix)
    if not parsed.commands:
        classes.add(Class.READ_ONLY)  # nothing runs (an empty line, a comment)
    if parsed.unread is not None:
        classes.add(Class.UNREAD)
        scan.notes.insert(0, f"wisp cannot read the whole line: {parsed.unread}")
    classes.update(f.cls for f in scan.findings)
    if scan.protected:
        classes.add(Class.OTHER)
    return Reading(
        classes=frozenset(classes),
        must_ask=tuple(f.why for f in scan.findings if f.cls in MUST_ASK),
        prefixes=tuple(prefixes),
        written=tuple(scan.written),
        line=parsed,
        protected=tuple(scan.protected),
        notes=tuple(scan.notes),
    )


def read_tool(
    effect: Effect,
    paths: tuple[str, ...],
    cwd: str,
    project: str | None,
    sensitive: Iterable[str] = SENSITIVE,
) -> Reading:
    """A tool call whose harness says it has *effect* on *paths* (absolute or relative to
    *cwd*), read for the policy. An edit inside the project and in no protected place
    (:func:`protected`) is EDIT_IN_PROJECT; in a protected place OTHER (asked); outside, or
    where it writes is not known, WRITE_OUTSIDE."""
    if effect == Effect.READ:
        return Reading(frozenset({Class.READ_ONLY}), ())
    if effect == Effect.NETWORK:
        return Reading(frozenset({Class.NETWORK}), ("the tool reaches the network",))
    if effect == Effect.SHELL:
        why = "a shell call is read from its line"
        return Reading(frozenset({Class.UNREAD}), (), notes=(why,))
    if effect != Effect.EDIT:
        return Reading(frozenset({Class.OTHER}), ())
    classes: set[Class] = set()
    must_ask: list[str] = []
    written: list[str] = []
    guarded: list[str] = []
    notes: list[str] = []
    for path in paths:
        joined = resolve(path, cwd)
        if joined is None:
            classes.add(Class.WRITE_OUTSIDE)
            must_ask.append(f"the edit writes `{path}`, a path wisp cannot know")
            continue
        absolute = os.path.normpath(joined)
        written.append(absolute)
        if not inside(joined, project):
            classes.add(Class.WRITE_OUTSIDE)
            must_ask.append(f"the edit writes {_spelled(joined)}, outside the project")
            continue
        reason = protected(joined, project, sensitive)
        if reason is not None:
            classes.add(Class.OTHER)
            guarded.append(absolute)
            notes.append(f"the edit writes `{absolute}`: {reason}")
            continue
        classes.add(Class.EDIT_IN_PROJECT)
    if not paths:
        classes.add(Class.WRITE_OUTSIDE)
        must_ask.append("the edit's file is not known")
    return Reading(
        frozenset(classes),
        tuple(must_ask),
        written=tuple(written),
        protected=tuple(guarded),
        notes=tuple(notes),
    )


ToolInput = Mapping[str, "Any"]  # "Any" named as a string: typing is not imported at run time
