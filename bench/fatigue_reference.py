"""Issue 57's reference policy, simulated exactly as the issue writes it, for bench/fatigue.py.

Independent of wisp's code: its own reading of a shell line with tree-sitter and its bash
grammar. A call is one of:

- ``run``: runs without asking: a shell line that parses fully as simple commands joined by
  ``&& || ; |``, with no write redirection (other than to ``/dev/null``), no ``$(…)`` or
  backticks, no background, every command read-only; an edit or write inside the session's
  project tree and not under ``.git/``; a tool the hook is not asked about;
- ``must-ask``: asked every time (a write outside the project, the network, ``rm -r``, a shell
  fed from ``curl``/``wget``, ``sudo su doas``), each with its class;
- ``prefix``: everything else: asked once per distinct prefix per project (the first two
  words of each simple command that is not read-only).

Where the issue's text leaves a case open, the choice made here (README.md, "fatigue.py"):
a line that is not read-only only by its structure (a substitution, a loop, a background
``&``, a write redirection inside the project) keys on the prefixes of all its commands; a
line the grammar cannot read keys on the whole line; an edit under ``.git/`` or a tool the
issue does not name (an MCP server's) keys on the tool and its path or name; wrappers
(``env time timeout nice nohup command exec xargs``) are read through to the command they
run; "package installs and publishes" are listed in :data:`PACKAGE_INSTALLS`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

BASH = Language(tree_sitter_bash.language())

READ_ONLY = frozenset(
    [
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "rg",
        "wc",
        "nl",
        "pwd",
        "echo",
        "which",
        "tree",
        "file",
        "stat",
        "du",
        "diff",
        "sort",
        "uniq",
        "cut",
        "tr",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "true",
        "false",
        "date",
        "whoami",
        "id",
        "uname",
        "type",
        "jq",
        "printf",
        "column",
        "cd",
    ]
)
GIT_READ_ONLY = frozenset(
    ["status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "grep"]
)
GIT_NEVER = ("-c", "--output", "--ext-diff", "--textconv")
GIT_BRANCH_LISTING = frozenset(
    [
        "-a",
        "-r",
        "-v",
        "-vv",
        "-l",
        "--list",
        "--all",
        "--remotes",
        "--verbose",
        "--show-current",
        "--no-color",
        "--color",
        "--merged",
        "--no-merged",
        "--contains",
        "--no-contains",
        "--points-at",
        "--sort",
        "--format",
        "--column",
        "--no-column",
        "--abbrev",
        "--no-abbrev",
    ]
)
GIT_BRANCH_TAKES_VALUE = frozenset(
    [
        "-l",
        "--list",
        "--merged",
        "--no-merged",
        "--contains",
        "--no-contains",
        "--points-at",
        "--sort",
        "--format",
    ]
)
FIND_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint")
NETWORK = frozenset(
    [
        "curl",
        "wget",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "nc",
        "telnet",
        "ftp",
        "gh",
        "npx",
        "brew",
        "apt",
        "apt-get",
        "yum",
        "dnf",
    ]
)
GIT_NETWORK = frozenset(["push", "pull", "fetch", "clone", "ls-remote", "submodule"])
# "package installs and publishes": each tool's subcommands that fetch or publish packages.
PACKAGE_INSTALLS: dict[str, frozenset[str]] = {
    "pip": frozenset({"install", "download"}),
    "pip3": frozenset({"install", "download"}),
    "uv": frozenset({"add", "sync", "pip", "tool"}),
    "cargo": frozenset({"install", "publish", "add", "update", "fetch"}),
    "go": frozenset({"get", "install"}),
    "gem": frozenset({"install"}),
    "docker": frozenset({"pull", "push", "login"}),
    "npm": frozenset({"install", "i", "ci", "add", "publish", "update", "upgrade"}),
    "pnpm": frozenset({"install", "i", "add", "publish", "update", "upgrade"}),
    "yarn": frozenset({"install", "add", "publish", "upgrade"}),
    "bun": frozenset({"install", "i", "add", "publish", "update"}),
    "poetry": frozenset({"install", "add", "publish", "update"}),
    "twine": frozenset({"upload"}),
    "conda": frozenset({"install", "update"}),
    "mix": frozenset({"deps.get", "deps.update", "hex.publish", "archive.install"}),
    "composer": frozenset({"install", "require", "update"}),
    "bundle": frozenset({"install", "update"}),
}
PYTHONS = re.compile(r"^python[0-9.]*$")
SHELLS = frozenset(["sh", "bash", "zsh", "dash", "ksh", "fish"])
PRIVILEGE = frozenset(["sudo", "su", "doas"])
PATH_WRITERS = frozenset(
    ["cp", "mv", "ln", "touch", "mkdir", "rm", "rmdir", "chmod", "chown", "install", "truncate"]
)
WRAPPERS = frozenset(["env", "time", "timeout", "nice", "nohup", "command", "exec", "xargs"])
# Options of a wrapper that take the next word as their value.
WRAPPER_VALUES = {
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
}
WRITE_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|"})
# Node types a line may hold and still be "simple commands joined by && || ; |".
SIMPLE_NODES = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "string",
        "string_content",
        "raw_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "variable_name",
        "variable_assignment",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "heredoc_redirect",
        "heredoc_start",
        "heredoc_body",
        "heredoc_end",
        "heredoc_content",
        "herestring_redirect",
        "comment",
        "ansi_c_string",
        "translated_string",
    }
)
SEPARATORS = frozenset({"&&", "||", ";", "|", "|&", ";;", "\n"})


@dataclass
class Verdict:
    """What the reference does with one call."""

    decision: str  # "run", "must-ask" or "prefix"
    why: str  # the class: "read-only", "in-project edit", "network: curl", …
    keys: tuple[tuple[str, ...], ...] = ()  # for "prefix": what the person's answer covers


@dataclass
class Line:
    """A shell line as the reference reads it."""

    commands: list[list[str]] = field(default_factory=list)  # each simple command's words
    structure: list[str] = field(default_factory=list)  # what makes it not simple
    writes: list[str] = field(default_factory=list)  # write redirection targets (as written)
    cwds: list[str] = field(default_factory=list)  # each command's cwd (after any `cd`)
    write_cwds: list[str] = field(default_factory=list)
    redirected: set[int] = field(default_factory=set)  # commands with a write redirection
    pipelines: list[list[int]] = field(default_factory=list)  # command indexes piped together
    unreadable: bool = False


def unquote(node: Node) -> str:
    text = (node.text or b"").decode("utf-8", "replace")
    if node.type == "raw_string" and len(text) >= 2:
        return text[1:-1]
    if node.type == "string" and len(text) >= 2:
        return text[1:-1]
    if node.type == "concatenation":
        return "".join(unquote(c) for c in node.children)
    return text


def read_line(text: str, cwd: str) -> Line:
    """The simple commands, writes and structure of one shell line."""
    tree = Parser(BASH).parse(text.encode())
    line = Line()
    if tree.root_node.has_error:
        line.unreadable = True
        return line
    state = {"cwd": cwd}

    def walk(node: Node, pipeline: list[int] | None) -> None:
        kind = node.type
        if kind not in SIMPLE_NODES and kind not in SEPARATORS and node.is_named:
            line.structure.append(kind)
        if not node.is_named and kind == "&":
            line.structure.append("background")
        if kind == "`":
            line.structure.append("backticks")
        if kind == "command":
            words: list[str] = []
            for child in node.children:
                if child.type == "variable_assignment":
                    continue
                if child.type == "command_name" or (
                    child.is_named
                    and child.type
                    in (
                        "word",
                        "string",
                        "raw_string",
                        "concatenation",
                        "number",
                        "simple_expansion",
                        "expansion",
                        "ansi_c_string",
                    )
                ):
                    words.append(
                        unquote(child.children[0] if child.type == "command_name" else child)
                    )
            for child in node.children:  # substitutions inside the command's words
                if child.type in ("command_substitution", "process_substitution"):
                    walk(child, None)
                else:
                    for sub in child.children:
                        walk(sub, None)
            if words:
                line.commands.append(words)
                line.cwds.append(state["cwd"])
                if pipeline is not None:
                    pipeline.append(len(line.commands) - 1)
                if words[0] == "cd" and len(words) > 1:
                    state["cwd"] = joined(state["cwd"], words[1])
            return
        if kind == "pipeline":
            members: list[int] = []
            for child in node.children:
                walk(child, members)
            line.pipelines.append(members)
            return
        if kind == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), "")
            target = [c for c in node.children if c.is_named and c.type != "file_descriptor"]
            if op in WRITE_REDIRECTS or (op == ">&" and target and target[0].type != "number"):
                where = unquote(target[0]) if target else ""
                if where != "/dev/null":
                    line.writes.append(where)
                    line.write_cwds.append(state["cwd"])
                    if line.commands:
                        line.redirected.add(len(line.commands) - 1)
            return
        if kind == "redirected_statement":
            before = len(line.commands)
            for child in node.children:
                walk(child, pipeline)
            # a write redirection on a statement writes for each command in it
            if any(i >= before for i in line.redirected):
                line.redirected.update(range(before, len(line.commands)))
            return
        for child in node.children:
            walk(child, pipeline)

    walk(tree.root_node, None)
    return line


def joined(cwd: str, path: str) -> str:
    if path.startswith(("~", "$")) or "$" in path:
        return path
    return os.path.normpath(path if path.startswith("/") else os.path.join(cwd, path))


def outside(path: str, cwd: str, root: str) -> bool:
    """A path the reference counts as outside the project (`~` and `$VAR` always are)."""
    if not path or path.startswith("~") or "$" in path:
        return True
    full = joined(cwd, path)
    return not (full == root or full.startswith(root.rstrip("/") + "/"))


def unwrap(words: list[str]) -> list[str]:
    """The command a wrapper (`env`, `timeout 60`, `xargs -n1`, …) runs, read through."""
    while words and words[0] in WRAPPERS:
        name, rest = words[0], words[1:]
        takes = WRAPPER_VALUES.get(name, frozenset())
        i = 0
        while i < len(rest):
            word = rest[i]
            if word in takes:
                i += 2
            elif word.startswith("-") or (name == "env" and "=" in word):
                i += 1
            elif name == "timeout" and re.fullmatch(r"[0-9.]+[smhd]?", word):
                i += 1
                break
            else:
                break
        words = rest[i:]
    return words


def options(words: list[str]) -> list[str]:
    return [w for w in words[1:] if w.startswith("-")]


def positional(words: list[str]) -> list[str]:
    return [w for w in words[1:] if not w.startswith("-")]


def git_read_only(words: list[str]) -> bool:
    rest = words[1:]
    while rest and rest[0].startswith("-"):  # global options: -C DIR, --no-pager, -P, …
        if rest[0] == "-c" or rest[0].startswith("--config-env"):
            return False
        rest = rest[2:] if rest[0] == "-C" else rest[1:]
    if not rest:
        return False
    sub, args = rest[0], rest[1:]
    if any(a == n or a.startswith(n + "=") for a in args for n in GIT_NEVER):
        return False
    if sub in GIT_READ_ONLY:
        return True
    if sub == "branch":
        i = 0
        while i < len(args):
            name = args[i].split("=", 1)[0]
            if name not in GIT_BRANCH_LISTING:
                return False
            i += 2 if args[i] in GIT_BRANCH_TAKES_VALUE and "=" not in args[i] else 1
        return True
    if sub == "remote":
        return all(a in ("-v", "--verbose") for a in args)
    return False


def git_sub(words: list[str]) -> str | None:
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
    return rest[0] if rest else None


def read_only(words: list[str]) -> bool:
    name = words[0]
    if name == "git":
        return git_read_only(words)
    if name == "sed":
        opts = options(words)
        in_place = any(o == "--in-place" or o.startswith("--in-place=") for o in opts) or any(
            not o.startswith("--") and "i" in o[1:] for o in opts
        )
        quiet = any(o in ("--quiet", "--silent") for o in opts) or any(
            not o.startswith("--") and "n" in o[1:] for o in opts
        )
        return quiet and not in_place
    if name == "find":
        return not any(w.startswith(FIND_ACTIONS) for w in words[1:])
    return name in READ_ONLY


def must_ask(words: list[str], cwd: str, root: str) -> str | None:
    """Why the simple command *words* is must-ask, or None."""
    name = words[0]
    if name in PRIVILEGE:
        return f"privilege: {name}"
    words = unwrap(words)
    if not words:
        return None
    name = words[0]
    if name in PRIVILEGE:
        return f"privilege: {name}"
    if name in NETWORK:
        return f"network: {name}"
    if name == "git" and git_sub(words) in GIT_NETWORK:
        return f"network: git {git_sub(words)}"
    sub = positional(words)[0] if positional(words) else None
    if PYTHONS.match(name) and words[1:3] == ["-m", "pip"] and "install" in words:
        return "network: pip install"
    if name in PACKAGE_INSTALLS and sub in PACKAGE_INSTALLS[name]:
        return f"network: {name} {sub}"
    if name == "rm" and any(
        o == "--recursive" or (not o.startswith("--") and ("r" in o or "R" in o))
        for o in options(words)
    ):
        return "rm -r"
    paths: list[str] = []
    if name in PATH_WRITERS:
        paths = positional(words)
        if name in ("chmod", "chown") and paths:
            paths = paths[1:]
        if name == "truncate":
            paths = [
                w
                for i, w in enumerate(words[1:], 1)
                if not w.startswith("-")
                and words[i - 1] not in ("-s", "--size", "-r", "--reference")
            ]
    elif name == "tee":
        paths = positional(words)
    elif name == "sed" and not read_only(words):
        opts = options(words)
        if any(
            o.startswith("--in-place") or (not o.startswith("--") and "i" in o[1:]) for o in opts
        ):
            args = positional(words)
            scripted = any(o in ("-e", "-f", "--expression", "--file") for o in opts)
            paths = args if scripted else args[1:]
    for path in paths:
        if path != "/dev/null" and outside(path, cwd, root):
            return f"write outside the project: {name} {path}"
    return None


def prefix(words: list[str]) -> tuple[str, ...]:
    words = unwrap(words) or words
    return tuple(words[:2])


def shell(command: str, cwd: str, root: str) -> Verdict:
    line = read_line(command, cwd)
    if line.unreadable:
        return Verdict("prefix", "unreadable line", ((command,),))
    reasons: list[str] = []
    for words, at in zip(line.commands, line.cwds, strict=True):
        why = must_ask(words, at, root)
        if why:
            reasons.append(why)
    for target, at in zip(line.writes, line.write_cwds, strict=True):
        if outside(target, at, root):
            reasons.append(f"write outside the project: > {target}")
    for members in line.pipelines:
        names = [unwrap(line.commands[i])[:1] for i in members]
        heads = [n[0] for n in names if n]
        fetch = [i for i, n in enumerate(heads) if n in ("curl", "wget")]
        if fetch and any(n in SHELLS or PYTHONS.match(n) for n in heads[fetch[0] + 1 :]):
            reasons.append("piped into a shell from curl/wget")
    if reasons:
        return Verdict("must-ask", reasons[0])
    writing = [
        not read_only(unwrap(w) or w) or i in line.redirected for i, w in enumerate(line.commands)
    ]
    if not line.structure and not any(writing):
        return Verdict("run", "read-only")
    keys = tuple(prefix(w) for w, wr in zip(line.commands, writing, strict=True) if wr)
    if not keys:  # read-only commands in a structure: key on all of them
        keys = tuple(prefix(w) for w in line.commands) or ((command,),)
        return Verdict("prefix", f"structure: {', '.join(sorted(set(line.structure)))}", keys)
    return Verdict("prefix", "not read-only", keys)


EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


def decide(tool: str, tool_input: dict[str, Any], cwd: str, root: str, gated: bool) -> Verdict:
    """The reference's verdict on one call (*gated*: the hook is asked about this tool)."""
    if not gated:
        return Verdict("run", "not put to the gate")
    if tool == "Bash":
        return shell(str(tool_input.get("command", "")), cwd, root)
    if tool in EDIT_TOOLS:
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
        if outside(path, cwd, root):
            return Verdict("must-ask", f"write outside the project: {tool}")
        full = joined(cwd, path)
        if "/.git/" in full + "/" and full.startswith(root):
            inner = full[len(root) :]
            if inner.startswith("/.git/") or inner == "/.git":
                return Verdict("prefix", "edit under .git/", ((tool, full),))
        return Verdict("run", "in-project edit")
    if tool == "WebFetch":
        return Verdict("must-ask", "network: WebFetch")
    return Verdict("prefix", "other tool", ((tool,),))


class Person:
    """The reference's scripted person: asked once per distinct prefix per project,
    every time for a must-ask call."""

    def __init__(self) -> None:
        self.granted: set[tuple[str, tuple[str, ...]]] = set()

    def asks(self, verdict: Verdict, project: str) -> bool:
        if verdict.decision == "run":
            return False
        if verdict.decision == "must-ask":
            return True
        new = [k for k in verdict.keys if (project, k) not in self.granted]
        self.granted.update((project, k) for k in verdict.keys)
        return bool(new)
