"""A shell line read by a real bash grammar (tree-sitter with tree-sitter-bash, the grammar
Codex reads commands with): its simple commands, pipelines, lists, redirections,
substitutions, subshells and `cd`s, or why it cannot be read fully.

Every simple command — inside lists (`&& || ;`, newlines), pipelines, subshells, groups,
`$(…)` and backticks, `if`/`while`/`for`/`case` bodies, and the line of a `bash -c '…'` — is
one :class:`Simple`, its words unquoted as the shell would (quotes, escapes, `$'…'`,
concatenations). Commands that only run another command (`env`, `time`, `nice`, `nohup`,
`timeout`, `command`, `builtin`, `bash -c`) are read through; `xargs` is kept, with the
command it runs marked (:attr:`Simple.command_at`). A `cd` moves the commands after it in
the same list (lexically, as bash's own `cd` does; a `cd` is assumed to succeed).

Whatever it cannot read fully — a syntax error, `eval`, `source`, `exec`, a function, a
process substitution, a here-document or pipe feeding a shell its commands, a command whose
name is not a plain word, a construct it does not know — sets :attr:`Line.unread`, in words.
Being conservative is the point: an unknown node is never guessed at.

Pure: no file is read, nothing runs.
"""

from __future__ import annotations

# A word is a string, not a filesystem path: os.path's string functions are the right tool.
# ruff: noqa: PTH117, PTH118, PTH119
import os
import re
from collections.abc import Callable

from pending import NamedTuple

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

    from tree_sitter import Node, Parser, Tree


class Redirect(NamedTuple):
    """One redirection of a simple command (or of a group around it)."""

    op: str  # as written: `>`, `>>`, `<`, `2>`, `&>`, `>|`, `<<`, `<<<`, …
    target: str | None  # the target word, unquoted; None when it is not a plain word
    writes: bool  # whether it writes a file (`>`, `>>`, `&>`, `>|`, `2>` …, not `<`, `>&2`)
    raw: str = ""  # the target as written (`~/x`, `$OUT`): to show the person


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
    # The variables set for this command alone (`X=1 cmd`, `env X=1 cmd`), as `NAME=value`
    # (value unquoted). A line of assignments alone (`X=1; …`) is one Simple whose words are
    # its assignments, so that it is never mistaken for nothing.
    assigns: tuple[str, ...] = ()
    # The commands read through to reach this one, by name, outermost first: `env`, `time`,
    # `nice`, `nohup`, `timeout`, `command`, `builtin`, and `bash`/`sh`… for `bash -c '…'`.
    through: tuple[str, ...] = ()
    # The words of every command earlier in the same pipeline (`piped_from` is the last of
    # them): what `curl … | tee f | sh` feeds into `sh`.
    upstream: tuple[tuple[str, ...], ...] = ()
    # Where in `words` the command that actually runs starts: 0, except for `xargs`, whose
    # words are kept (so that it is never read-only) and whose command starts past its
    # options (== len(words) when it runs its default, `echo`).
    command_at: int = 0


class Line(NamedTuple):
    """A shell line, read."""

    text: str
    commands: tuple[Simple, ...]  # every simple command, substitutions' included, in order
    # Why the line cannot be read fully (a syntax error, `eval`, `source`, a function
    # definition, a here-document fed to a shell, …), in words; None when every part was.
    unread: str | None = None


# Shells: `bash -c STR` is read through (STR parsed as a line); a shell fed its commands by a
# here-document, a here-string or a pipe runs text the policy does not read: unread.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})

# Commands that run text or a file as shell code, or change what later names mean: the
# policy cannot read what they will do, so the line is unread (asked, never allowed by rule).
UNREAD_COMMANDS = {
    "eval": "`eval` runs text as commands",
    "source": "`source` runs a file's commands",
    ".": "`.` runs a file's commands",
    "exec": "`exec` replaces the shell",
    "alias": "`alias` changes what a name runs",
    "unalias": "`unalias` changes what a name runs",
    "trap": "`trap` sets commands to run later",
    "coproc": "`coproc` runs a command beside the shell",
    "enable": "`enable` changes the shell's builtins",
    "fc": "`fc` re-runs earlier commands",
}

# Commands that only run their argument command, read through to it; xargs is handled apart
# (it adds arguments from its input). Each one's options that take a value, so that the
# command after them is found; an option not listed makes the line unread.
_ENV_VALUED = frozenset({"-u", "--unset", "-C", "--chdir"})
_ENV_FLAGS = frozenset({"-i", "--ignore-environment", "-", "-0", "--null", "-v", "--debug"})
_NICE_VALUED = frozenset({"-n", "--adjustment"})
_TIMEOUT_VALUED = frozenset({"-s", "--signal", "-k", "--kill-after"})
_TIMEOUT_FLAGS = frozenset({"--foreground", "--preserve-status", "-v", "--verbose", "-f", "-p"})
_XARGS_VALUED = frozenset(
    {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof"}
    | {"--max-lines", "--max-args", "--max-procs", "--max-chars", "--replace"}
    | {"--process-slot-var"}
)
_XARGS_FLAGS = frozenset(
    {"-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose"}
    | {"--interactive", "--exit", "--open-tty", "--show-limits"}
)
# A shell's options that take a value (`bash -o errexit -c …`).
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})

# `bash -c 'bash -c …'` nests: past this depth the line is unread (hostile text can nest
# without end; a real line never comes near).
MAX_NESTING = 8
NESTED_TOO_DEEP = "constructs nested deeper than the policy reads"

# tree-sitter-bash's scanner (0.25.1, src/scanner.c:1158 and 1172, the `{1..3}` brace
# start) calls C's isdigit() on the code point after a `{` (or after `{1..`): for a code
# point above 0xFF that indexes libc's character table out of bounds, a read of memory the
# process may not have — found as a segfault by the never-raises property test, shown as a
# use-after-free read by valgrind. Such a character is masked, for the parser only, with as
# many `_` as its UTF-8 bytes (every node's offsets stay right), and the line is unread.
_SCANNER_UNSAFE = r"\{[0-9]*(?:\.\.[0-9]*)?([^\x00-\xff])"
SCANNER_UNSAFE = "a `{` followed by a character outside Latin-1, which the bash grammar misreads"

# The operators of an expansion or arithmetic that set a variable.
_ASSIGNING = frozenset(
    {"=", ":=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--"}
)
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|"})
_NO_FILE = "/dev/null"  # a write there writes no file
_GLOB_CHARS = frozenset("*?[")
# Brace expansion (`{a,b}`, `{1..3}`; not `{}`). Patterns are compiled on first use (re's
# cache), not as the module loads: a hook that reads no such word pays nothing.
BRACE_PATTERN = r"\{[^{}]*(,|\.\.)[^{}]*\}"


def _braced(text: str) -> bool:
    """Whether *text* holds a brace expansion. Only a word with a `{` is matched against
    the pattern: most lines have none, and compiling it is ~0.5 M instructions a hook."""
    return "{" in text and re.search(BRACE_PATTERN, text) is not None


_parser: Parser | None = None


def _get_parser() -> Parser:
    """The bash parser, built once per process on first use.

    The grammar is loaded from tree_sitter_bash's compiled `_binding` module directly, not by
    importing the package: its __init__ imports importlib.resources (for a query file the
    policy never reads), about 6 ms of a hook's 25 ms floor. PathFinder finds the package's
    directory without running its __init__, then the extension module is loaded from there.
    tree_sitter's own classes come from its `_binding` the same way: its __init__ only adds a
    typing Protocol for query predicates the policy never runs (~0.5 M instructions a hook).
    """
    global _parser  # one parser per process, built on first use
    if _parser is None:
        binding = _binding("tree_sitter")
        grammar = _binding("tree_sitter_bash")
        _parser = binding.Parser(binding.Language(grammar.language()))
    return _parser


def _parse(text: str, reader: _Reader) -> Tree:
    """*text* parsed by the bash grammar; a character its scanner cannot read safely is
    masked first, and *reader* told the line is unread."""
    if "{" in text and re.search(_SCANNER_UNSAFE, text) is not None:
        reader.fail(SCANNER_UNSAFE)
        text = re.sub(
            _SCANNER_UNSAFE,
            lambda m: m[0][:-1] + "_" * len(m[1].encode("utf-8", "surrogatepass")),
            text,
        )
    return _get_parser().parse(text.encode("utf-8", "surrogatepass"))


def _binding(package: str) -> Any:
    """*package*'s compiled `_binding` module, loaded without running *package*'s __init__,
    and kept in sys.modules under its name: the package imported later (its __init__ imports
    it) finds it there, and no second copy of its types is made."""
    import importlib.machinery
    import importlib.util
    import sys

    name = f"{package}._binding"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    found = importlib.machinery.PathFinder.find_spec(package)
    places = found.submodule_search_locations if found else None
    spec = importlib.machinery.PathFinder.find_spec(name, places)
    if spec is None or spec.loader is None:
        raise ImportError(f"{package}'s compiled module (_binding) is not installed")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


class _Ctx(NamedTuple):
    """What the enclosing constructs give the commands inside them."""

    substituted: bool = False
    background: bool = False
    piped_from: tuple[str, ...] | None = None
    upstream: tuple[tuple[str, ...], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    through: tuple[str, ...] = ()
    depth: int = 0
    # Variables a `bash -c` was started with (`BASH_ENV=x bash -c 'ls'`): its commands'.
    assigns: tuple[str, ...] = ()


class _Word(NamedTuple):
    text: str
    expanded: bool


def _unescape(raw: str) -> str:
    """An unquoted word's backslashes removed, as the shell does (`r\\m` is `rm`)."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":  # a backslash-newline is a line continuation: nothing
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unescape_double(raw: str) -> str:
    """Inside double quotes a backslash escapes only `$`, a backtick, `"`, `\\` and a newline."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str:
    """The text of `$'…'` (its body given), its escapes decoded as bash does."""
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
        elif e in "01234567":
            j = i - 1
            while j < n and j < i + 2 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i - 1 : j], 8) & 0xFF))
            i = j
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while j < n and j < i + width and body[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i:
                out.append("\\" + e)
            else:
                code = int(body[i:j], 16)
                out.append(chr(code) if code < 0x110000 else "\ufffd")
                i = j
        elif e == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return "".join(out)


def _is_globbed(raw: str) -> bool:
    """Whether an unquoted word holds a glob character the shell expands (not escaped)."""
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if c in _GLOB_CHARS:
            return True
        i += 1
    return False


class _Reader:
    """One line's walk: the simple commands found, and the first reason it is unread."""

    def __init__(self) -> None:
        self.out: list[Simple] = []
        self.unread: str | None = None

    def fail(self, why: str) -> None:
        if self.unread is None:
            self.unread = why

    # -- statements ------------------------------------------------------------------------

    def block(self, nodes: list[Node], cwd: str | None, ctx: _Ctx) -> str | None:
        """Statements one after another (a program, a group, a body); the cwd after them."""
        for k, node in enumerate(nodes):
            if not node.is_named or node.type == "comment":
                continue
            after = nodes[k + 1] if k + 1 < len(nodes) else None
            if after is not None and after.type == "&" and not after.is_named:
                self.statement(node, cwd, ctx._replace(background=True))
                continue  # it runs in a subshell of its own: its `cd`s stay there
            cwd = self.statement(node, cwd, ctx)
        return cwd

    def statement(self, node: Node, cwd: str | None, ctx: _Ctx) -> str | None:
        """One statement; the cwd the statements after it run in."""
        kind = node.type
        if kind == "command":
            return self.command(node, cwd, ctx, ())
        if kind in ("declaration_command", "unset_command"):
            self.declaration(node, cwd, ctx, ())
            return cwd
        if kind in ("variable_assignment", "variable_assignments"):
            self.bare_assignments(node, cwd, ctx)
            return cwd
        if kind == "list":
            return self.list_(node, cwd, ctx)
        if kind == "pipeline":
            self.pipeline([c for c in node.children if c.is_named], cwd, ctx)
            return cwd
        if kind == "redirected_statement":
            return self.redirected(node, cwd, ctx)
        if kind == "subshell":
            self.block(node.children, cwd, ctx)
            return cwd
        if kind == "compound_statement":
            first = node.children[0] if node.children else None
            if first is None or first.type != "{":
                self.fail("an arithmetic command `(( … ))`")
                return cwd
            if not any(c.is_named and c.type != "comment" for c in node.children):
                self.fail("an empty group `{}`, which bash runs as a command named `{}`")
                return cwd
            return self.block(node.children, cwd, ctx)
        if kind == "negated_command":
            return self.block(node.children, cwd, ctx)
        if kind == "test_command":
            self.test(node, cwd, ctx, ())
            return cwd
        if kind in ("if_statement", "case_statement"):
            return self.conditional(node, cwd, ctx)
        if kind in ("while_statement", "for_statement"):
            return self.loop(node, cwd, ctx)
        if kind == "function_definition":
            self.fail("a function definition")
            return cwd
        if kind == "c_style_for_statement":
            self.fail("an arithmetic `for ((…))` loop")
            return cwd
        self.fail(f"a shell construct the policy does not read ({kind})")
        return cwd

    def list_(self, node: Node, cwd: str | None, ctx: _Ctx) -> str | None:
        return self.redirected_body(node, cwd, ctx, (), [])

    def joined(
        self,
        left: Callable[[str | None], str | None],
        op: str,
        right: Callable[[str | None], str | None],
        cwd: str | None,
    ) -> str | None:
        """`left && right` or `left || right`: the right side runs after the left's `cd`s
        (`&&`: they succeeded); after `||` which side ran is not known."""
        after_left = left(cwd)
        if op == "&&":
            return right(after_left)
        start = after_left if after_left == cwd else None
        after_right = right(start)
        return after_left if after_right == after_left else None

    def pipeline(
        self,
        parts: list[Node],
        cwd: str | None,
        ctx: _Ctx,
        last: Callable[[Node, str | None, _Ctx], object] | None = None,
    ) -> None:
        """Each part runs in a subshell of its own, its input the output of the part before
        (*last*, when given, reads the last part)."""
        upstream = ctx.upstream
        piped_from = ctx.piped_from
        parts = [p for p in parts if p.type != "comment"]
        for k, part in enumerate(parts):
            start = len(self.out)
            here = ctx._replace(piped_from=piped_from, upstream=upstream)
            if last is not None and k == len(parts) - 1:
                last(part, cwd, here)
            else:
                self.statement(part, cwd, here)
            mine = [s for s in self.out[start:] if s.substituted == ctx.substituted]
            if mine:
                upstream = upstream + tuple(s.words for s in mine)
                piped_from = mine[-1].words

    def redirected(self, node: Node, cwd: str | None, ctx: _Ctx) -> str | None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        extra_words: list[Node] = []
        tail: list[Node] = []
        for k, child in enumerate(node.children):
            field = node.field_name_for_child(k)
            if field == "body" or not child.is_named or child.type == "comment":
                continue
            if field == "redirect" or child.type.endswith("_redirect"):
                self.redirect(child, cwd, ctx, redirects, extra_words, tail)
            else:
                self.fail(f"a redirection the policy does not read ({child.type})")
        if body is None:
            self.fail("a redirection with no command")
            return cwd
        own = tuple(redirects)
        if not tail:
            return self.redirected_body(body, cwd, ctx, own, extra_words)
        # `cat <<EOF | sh` and `cat <<EOF && rm x`: the grammar puts what follows the
        # here-document's start inside the redirect; read it as the shell runs it.
        first = tail[0]
        if first.type == "pipeline" and len(tail) == 1:
            start = len(self.out)
            self.redirected_body(body, cwd, ctx, own, extra_words)
            mine = [s for s in self.out[start:] if s.substituted == ctx.substituted]
            upstream = ctx.upstream + tuple(s.words for s in mine)
            piped_from = mine[-1].words if mine else ctx.piped_from
            parts = [c for c in first.children if c.is_named]
            self.pipeline(parts, cwd, ctx._replace(piped_from=piped_from, upstream=upstream))
            return cwd
        if first.type not in ("&&", "||") or len(tail) != 2:
            self.fail("a here-document followed by more than the policy reads")
            return cwd
        return self.joined(
            lambda c: self.redirected_body(body, c, ctx, own, extra_words),
            first.type,
            lambda c: self.statement(tail[1], c, ctx),
            cwd,
        )

    def redirected_body(
        self,
        body: Node,
        cwd: str | None,
        ctx: _Ctx,
        own: tuple[Redirect, ...],
        extra_words: list[Node],
    ) -> str | None:
        """*body* with redirections *own* (and words the grammar put after them). bash binds
        a redirection to the last command of a list or pipeline (`cd a && ls > f` writes f
        from ls), where the grammar puts it around the whole: read as bash does."""
        kind = body.type
        if kind == "list":
            named = [c for c in body.children if c.is_named and c.type != "comment"]
            ops = [c.type for c in body.children if not c.is_named]
            if len(named) != 2 or len(ops) != 1 or ops[0] not in ("&&", "||"):
                self.fail("a list the policy does not read")
                return cwd
            return self.joined(
                lambda c: self.statement(named[0], c, ctx),
                ops[0],
                lambda c: self.redirected_body(named[1], c, ctx, own, extra_words),
                cwd,
            )
        if kind == "pipeline" and (own or extra_words):
            self.pipeline(
                [c for c in body.children if c.is_named],
                cwd,
                ctx,
                lambda part, c, here: self.redirected_body(part, c, here, own, extra_words),
            )
            return cwd
        inner = ctx._replace(redirects=ctx.redirects + own)
        if kind == "command":
            return self.command(body, cwd, inner, tuple(extra_words))
        if kind in ("declaration_command", "unset_command"):
            self.declaration(body, cwd, inner, tuple(extra_words))
            return cwd
        if kind == "test_command":
            self.test(body, cwd, inner, tuple(extra_words))
            return cwd
        if extra_words:
            self.fail("words after a redirection of a compound command")
        start = len(self.out)
        after = self.statement(body, cwd, inner)
        if own and len(self.out) == start:
            # `{} > f` still opens f: with no command to carry it, the write would be lost.
            self.fail("a redirection around no command")
        return after

    def conditional(self, node: Node, cwd: str | None, ctx: _Ctx) -> str | None:
        """`if`/`case`: which branch runs is not known, so a `cd` in one makes the cwd after
        the whole statement unknown."""
        after = self.branches(node, cwd, ctx)
        return after if after == cwd else None

    def branches(self, node: Node, cwd: str | None, ctx: _Ctx) -> str | None:
        for child in node.children:
            if not child.is_named or child.type == "comment":
                continue
            if child.type in ("elif_clause", "else_clause", "case_item"):
                self.branches(child, cwd, ctx)
            elif (
                node.type in ("case_statement", "case_item")
                and node.child_by_field_name("value") is not None
                and child in node.children_by_field_name("value")
            ):
                self.word(child, cwd, ctx)  # a pattern: only its substitutions run
            else:
                cwd = self.statement(child, cwd, ctx)
        return cwd

    def loop(self, node: Node, cwd: str | None, ctx: _Ctx) -> str | None:
        """`while`/`until`/`for`/`select`: a body that changes directory runs the next time
        round elsewhere, so then every command in it runs where it is not known."""
        start = None if _changes_directory(node) else cwd
        for child in node.children:
            if not child.is_named or child.type == "comment":
                continue
            if child in node.children_by_field_name("value"):
                self.word(child, cwd, ctx)  # `for x in WORDS`: only their substitutions run
            elif child.type == "variable_name":
                continue
            elif child.type == "do_group":
                self.block(child.children, start, ctx)
            else:
                self.statement(child, start, ctx)
        return cwd if start == cwd else None

    # -- redirections ----------------------------------------------------------------------

    def redirect(
        self,
        node: Node,
        cwd: str | None,
        ctx: _Ctx,
        out: list[Redirect],
        extra_words: list[Node],
        heredoc_tail: list[Node],
    ) -> None:
        kind = node.type
        if kind == "file_redirect":
            descriptor = node.child_by_field_name("descriptor")
            ops = [c for c in node.children if not c.is_named]
            op = ops[0].type if ops else ""
            destinations = node.children_by_field_name("destination")
            target: str | None = None
            raw = ""
            if destinations:
                word = self.word(destinations[0], cwd, ctx)
                target = None if word.expanded else word.text
                raw = _decode(destinations[0].text or b"")
                extra_words.extend(destinations[1:])  # `echo a > f b`: b is echo's argument
            fd = _decode(descriptor.text or b"") if descriptor is not None else ""
            for k, child in enumerate(node.children):
                if child.is_named and node.field_name_for_child(k) not in (
                    "descriptor",
                    "destination",
                ):
                    self.fail(f"a redirection the policy does not read ({child.type})")
            if op in ("<&", ">&", "<&-", ">&-") and (
                not destinations
                or (
                    target is not None
                    and ((target.isascii() and target.isdigit()) or target == "-")
                )
            ):
                writes = False  # `2>&1`, `>&2`, `>&-`: a descriptor copied or closed
            elif op == ">&":
                writes = True  # `>& FILE`: stdout and stderr to a file
            else:
                writes = op in _WRITE_OPS and target != _NO_FILE
            out.append(Redirect(fd + op, target, writes, raw))
        elif kind == "heredoc_redirect":
            ops = [c for c in node.children if not c.is_named]
            op = ops[0].type if ops else "<<"
            for k, child in enumerate(node.children):
                if not child.is_named:
                    if node.field_name_for_child(k) == "operator":
                        heredoc_tail.append(child)  # `<<EOF && …`: the list goes on
                    continue
                if child.type in ("heredoc_start", "heredoc_end", "heredoc_content"):
                    continue
                if child.type == "heredoc_body":
                    self.substitutions(child, cwd, ctx)  # an unquoted one's `$(…)` run
                elif child.type in ("file_redirect", "herestring_redirect"):
                    self.redirect(child, cwd, ctx, out, extra_words, heredoc_tail)
                elif child.type == "pipeline" or (
                    heredoc_tail and heredoc_tail[-1].type in ("&&", "||")
                ):
                    heredoc_tail.append(child)  # `<<EOF | sh`: the pipeline goes on
                elif node.field_name_for_child(k) == "argument":
                    extra_words.append(child)  # `rm <<EOF -rf /`: rm's arguments
                else:
                    self.fail("a here-document followed by more than the policy reads")
            out.append(Redirect(op, None, False))
        elif kind == "herestring_redirect":
            parts = [c for c in node.children if c.is_named]
            text: str | None = None
            raw = ""
            if parts:
                word = self.word(parts[0], cwd, ctx)
                text = None if word.expanded else word.text
                raw = _decode(parts[0].text or b"")
                extra_words.extend(parts[1:])  # the command's, as after a file redirection
            out.append(Redirect("<<<", text, False, raw))
        else:
            self.fail(f"a redirection the policy does not read ({kind})")

    # -- words -----------------------------------------------------------------------------

    def word(self, node: Node, cwd: str | None, ctx: _Ctx) -> _Word:
        """One word as the shell will pass it: unquoted, and whether it is not plain."""
        kind = node.type
        raw = _decode(node.text or b"")
        if kind in ("word", "extglob_pattern"):
            return _Word(
                _unescape(raw),
                raw.startswith("~") or _is_globbed(raw) or _braced(raw),
            )
        if kind in ("number", "variable_name", "test_operator", "regex", "special_variable_name"):
            return _Word(raw, False)
        if kind == "raw_string":
            return _Word(raw[1:-1], False)
        if kind == "ansi_c_string":
            return _Word(_ansi_c(raw[2:-1]), False)
        if kind in ("string", "translated_string"):
            return self.string(node, cwd, ctx)
        if kind == "concatenation":
            return self.concatenation(node, cwd, ctx)
        if kind in ("simple_expansion", "expansion", "arithmetic_expansion", "brace_expression"):
            if kind != "simple_expansion" and _assigns_a_variable(node):
                self.fail("an expansion that sets a variable (`${X:=…}`, `$((X=…))`)")
            self.substitutions(node, cwd, ctx)
            return _Word(raw, True)
        if kind == "command_substitution":
            self.substitution(node, cwd, ctx)
            return _Word(raw, True)
        if kind == "process_substitution":
            self.fail("a process substitution `<(…)` or `>(…)`")
            self.substitution(node, cwd, ctx)  # its commands are still found (`<(curl …)`)
            return _Word(raw, True)
        if kind == "array":
            for child in node.children:
                if child.is_named:
                    self.word(child, cwd, ctx)
            return _Word(raw, True)
        self.fail(f"a word the policy does not read ({kind})")
        return _Word(raw, True)

    def string(self, node: Node, cwd: str | None, ctx: _Ctx) -> _Word:
        """`"…"`: its text with its escapes undone; expanded if it holds an expansion."""
        src = node.text or b""
        base = node.start_byte
        pieces: list[str] = []
        expanded = False
        pos = 1 if node.type == "string" else 2  # past `"` or `$"`
        end = len(src) - 1
        for child in node.children:
            if not child.is_named:
                continue
            lo, hi = child.start_byte - base, child.end_byte - base
            if lo > pos:
                pieces.append(_unescape_double(_decode(src[pos:lo])))
            if child.type == "string_content":
                pieces.append(_unescape_double(_decode(child.text or b"")))
            else:
                word = self.word(child, cwd, ctx)
                pieces.append(word.text)
                expanded = expanded or word.expanded
            pos = max(pos, hi)
        if end > pos:
            pieces.append(_unescape_double(_decode(src[pos:end])))
        return _Word("".join(pieces), expanded)

    def concatenation(self, node: Node, cwd: str | None, ctx: _Ctx) -> _Word:
        pieces: list[str] = []
        shape: list[str] = []  # the unquoted parts as written, quoted ones as a placeholder
        expanded = False
        for k, child in enumerate(c for c in node.children if c.is_named):
            word = self.word(child, cwd, ctx)
            pieces.append(word.text)
            if child.type == "word":
                raw = _decode(child.text or b"")
                shape.append(raw)
                expanded = expanded or _is_globbed(raw) or (k == 0 and raw.startswith("~"))
            else:
                shape.append("Q")
                expanded = expanded or word.expanded
        for child in node.children:
            if not child.is_named:
                self.fail(f"a word the policy does not read ({child.type})")
        if _braced("".join(shape)):
            expanded = True
        return _Word("".join(pieces), expanded)

    def substitutions(self, node: Node, cwd: str | None, ctx: _Ctx) -> None:
        """The command and process substitutions anywhere inside *node* (an expansion, a
        here-document's body): they run."""
        for child in node.children:
            if child.type == "command_substitution":
                self.substitution(child, cwd, ctx)
            elif child.type == "process_substitution":
                self.fail("a process substitution `<(…)` or `>(…)`")
                self.substitution(child, cwd, ctx)
            elif child.type == "ERROR" or child.is_missing:
                self.fail("a syntax error")
            else:
                self.substitutions(child, cwd, ctx)

    def substitution(self, node: Node, cwd: str | None, ctx: _Ctx) -> None:
        """`$(…)`, backticks or `<(…)`: its commands run, in a subshell (its `cd`s stay
        there)."""
        inner = _Ctx(substituted=True, background=ctx.background, depth=ctx.depth)
        self.block(node.children, cwd, inner)

    # -- commands --------------------------------------------------------------------------

    def assignment(self, node: Node, cwd: str | None, ctx: _Ctx) -> str:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        ops = [c.type for c in node.children if not c.is_named]
        if name is not None and name.type != "variable_name":
            self.substitutions(name, cwd, ctx)  # `a[$(id)]=1` runs id
        if len([c for c in node.children if c.is_named]) > 2:
            self.fail("an assignment the policy does not read")
        text = _decode(name.text or b"") if name is not None else ""
        text += ops[0] if ops else "="
        if value is not None:
            text += self.word(value, cwd, ctx).text
        return text

    def bare_assignments(self, node: Node, cwd: str | None, ctx: _Ctx) -> None:
        nodes = [node] if node.type == "variable_assignment" else node.named_children
        assigns = tuple(self.assignment(n, cwd, ctx) for n in nodes if n.type != "comment")
        self.emit(Simple(words=assigns, cwd=cwd, redirects=ctx.redirects, assigns=assigns), ctx)

    def declaration(self, node: Node, cwd: str | None, ctx: _Ctx, extra: tuple[Node, ...]) -> None:
        """`export`, `declare`, `local`, `readonly`, `typeset`, `unset`: a command of their own."""
        keyword = next((c.type for c in node.children if not c.is_named), "declare")
        words = [keyword]
        expanded: list[int] = []
        for child in (*node.children, *extra):
            if not child.is_named or child.type == "comment":
                continue
            if child.type == "variable_assignment":
                words.append(self.assignment(child, cwd, ctx))
                continue
            word = self.word(child, cwd, ctx)
            if word.expanded:
                expanded.append(len(words))
            words.append(word.text)
        self.emit(Simple(tuple(words), cwd, ctx.redirects, expanded=tuple(expanded)), ctx)

    def test(self, node: Node, cwd: str | None, ctx: _Ctx, extra: tuple[Node, ...]) -> None:
        """`[ … ]` and `[[ … ]]`: a command whose words are the expression's, flattened."""
        words: list[str] = []
        expanded: list[int] = []

        def flatten(n: Node) -> None:
            for child in n.children:
                if child.type in (
                    "binary_expression",
                    "unary_expression",
                    "parenthesized_expression",
                    "ternary_expression",
                    "postfix_expression",
                ):
                    flatten(child)
                elif not child.is_named:
                    words.append(child.type)
                elif child.type != "comment":
                    word = self.word(child, cwd, ctx)
                    if word.expanded:
                        expanded.append(len(words))
                    words.append(word.text)

        flatten(node)
        for child in extra:
            word = self.word(child, cwd, ctx)
            if word.expanded:
                expanded.append(len(words))
            words.append(word.text)
        self.emit(Simple(tuple(words), cwd, ctx.redirects, expanded=tuple(expanded)), ctx)

    def command(
        self, node: Node, cwd: str | None, ctx: _Ctx, extra: tuple[Node, ...]
    ) -> str | None:
        """A simple command; the cwd after it (a `cd` moves it)."""
        assigns: list[str] = []
        words: list[str] = []
        expanded: list[int] = []
        redirects: list[Redirect] = []
        extra_words: list[Node] = []
        tail: list[Node] = []
        for k, child in enumerate(node.children):
            field = node.field_name_for_child(k)
            if child.type == "comment":
                continue
            if child.type == "variable_assignment":
                assigns.append(self.assignment(child, cwd, ctx))
            elif field == "redirect" or child.type.endswith("_redirect"):
                self.redirect(child, cwd, ctx, redirects, extra_words, tail)
            elif child.type == "command_name":
                name = child.named_children
                if len(name) != 1:
                    self.fail("a command name the policy does not read")
                    continue
                self.add_word(name[0], cwd, ctx, words, expanded)
            elif child.is_named:
                self.add_word(child, cwd, ctx, words, expanded)
            else:
                self.fail(f"a word the policy does not read (`{child.type}`)")
        for child in (*extra_words, *extra):
            self.add_word(child, cwd, ctx, words, expanded)
        if tail:
            self.fail("a here-document inside a command")
        if not words:
            self.fail("a command with no name")
            return cwd
        simple = Simple(
            words=tuple(words),
            cwd=cwd,
            redirects=ctx.redirects + tuple(redirects),
            piped_from=ctx.piped_from,
            substituted=ctx.substituted,
            background=ctx.background,
            expanded=tuple(expanded),
            assigns=ctx.assigns + tuple(assigns),
            through=ctx.through,
            upstream=ctx.upstream,
        )
        return self.run(simple, ctx)

    def add_word(
        self, node: Node, cwd: str | None, ctx: _Ctx, words: list[str], expanded: list[int]
    ) -> None:
        word = self.word(node, cwd, ctx)
        if word.expanded:
            expanded.append(len(words))
        words.append(word.text)

    def emit(self, simple: Simple, ctx: _Ctx) -> None:
        self.out.append(
            simple._replace(
                piped_from=ctx.piped_from,
                substituted=ctx.substituted,
                background=ctx.background,
                through=ctx.through,
                upstream=ctx.upstream,
            )
        )

    def run(self, simple: Simple, ctx: _Ctx) -> str | None:
        """*simple* read through its wrappers, checked, and added; the cwd after it."""
        cwd = simple.cwd
        while True:
            if 0 in simple.expanded:
                self.fail(f"the command's name `{simple.words[0]}` is not a plain word")
                break
            name = simple.words[0]
            if name in UNREAD_COMMANDS:
                self.fail(UNREAD_COMMANDS[name])
                break
            if name == "hash" and any(w[:1] == "-" and "p" in w for w in simple.words[1:]):
                self.fail("`hash -p` changes what a name runs")
                break
            inner = self.through(simple)
            if inner is None:
                break
            if not isinstance(inner, Simple):  # the wrapper could not be read (said why)
                return cwd
            simple = inner
            if not simple.words:
                return cwd
        name = simple.words[0]
        if os.path.basename(name) in SHELLS:
            return self.shell(simple, ctx)
        if name == "xargs":
            simple = self.xargs(simple)
        self.out.append(simple)
        if name in ("cd", "pushd", "popd") and not simple.substituted:
            return _cd(simple)
        return cwd

    def through(self, simple: Simple) -> Simple | str | None:
        """The command a wrapper runs (its words dropped, its name added to `through`), or
        None when *simple* is not a wrapper, or "unread" when it could not be read."""
        words = simple.words
        name = words[0]
        i = 1
        n = len(words)
        assigns = list(simple.assigns)
        cwd = simple.cwd
        if name == "env":
            while i < n:
                w = words[i]
                if i in simple.expanded:
                    self.fail("`env` with a word the policy cannot know")
                    return "unread"
                if "=" in w and not w.startswith("-"):
                    assigns.append(w)
                elif w in _ENV_VALUED:
                    if w in ("-C", "--chdir") and i + 1 < n:
                        known = i + 1 not in simple.expanded
                        cwd = _moved(cwd, words[i + 1]) if known else None
                    i += 1
                elif w.startswith(("--unset=", "-u")) or w in _ENV_FLAGS:
                    pass
                elif w.startswith("--chdir="):
                    cwd = _moved(cwd, w.partition("=")[2])
                elif w == "--":
                    i += 1
                    break
                elif w.startswith("-"):
                    self.fail(f"`env` with an option the policy does not read (`{w}`)")
                    return "unread"
                else:
                    break
                i += 1
        elif name == "time":
            while i < n and words[i] in ("-p", "--"):
                i += 1
        elif name == "nice":
            while i < n and words[i].startswith("-"):
                w = words[i]
                if w in _NICE_VALUED:
                    i += 1
                elif not (w.startswith(("-n", "--adjustment=")) or w[1:].isdigit() or w == "--"):
                    self.fail(f"`nice` with an option the policy does not read (`{w}`)")
                    return "unread"
                i += 1
                if w == "--":
                    break
        elif name == "nohup":
            if i < n and words[i] == "--":
                i += 1
        elif name == "timeout":
            while i < n and words[i].startswith("-"):
                w = words[i]
                if w in _TIMEOUT_VALUED:
                    i += 1
                elif not (w in _TIMEOUT_FLAGS or w.startswith(("--signal=", "--kill-after="))):
                    if w == "--":
                        i += 1
                        break
                    self.fail(f"`timeout` with an option the policy does not read (`{w}`)")
                    return "unread"
                i += 1
            i += 1  # the duration
        elif name in ("command", "builtin"):
            if name == "command":
                if i < n and words[i] in ("-v", "-V"):
                    return None  # `command -v X` says what X is: it runs nothing
                while i < n and words[i] in ("-p", "--"):
                    i += 1
        else:
            return None
        if i >= n:
            if name == "env" and i == n and len(assigns) == len(simple.assigns):
                return None  # `env` alone prints the environment
            if name in ("time", "command", "builtin") and n == 1:
                return None
            self.fail(f"`{name}` with no command to run")
            return "unread"
        expanded = tuple(k - i for k in simple.expanded if k >= i)
        return simple._replace(
            words=words[i:],
            expanded=expanded,
            assigns=tuple(assigns),
            through=(*simple.through, name),
            cwd=cwd,
        )

    def xargs(self, simple: Simple) -> Simple:
        """`xargs [options] CMD …`: its words kept (it runs CMD with arguments from its
        input, so it is never read-only), `command_at` where CMD starts."""
        words = simple.words
        i = 1
        n = len(words)
        while i < n and words[i].startswith("-"):
            w = words[i]
            if w == "--":
                i += 1
                break
            if w in _XARGS_VALUED:
                i += 2
                continue
            if not (
                w in _XARGS_FLAGS
                or w.startswith(("--", "-i", "-l", "-e"))
                or (len(w) > 2 and w[:2] in {v for v in _XARGS_VALUED if len(v) == 2})
            ):
                self.fail(f"`xargs` with an option the policy does not read (`{w}`)")
            i += 1
        i = min(i, n)
        # What it runs, read through the same wrappers, so that `xargs nice rm -r` is rm.
        rest = simple._replace(words=words[i:], expanded=(), through=())
        while rest.words:
            name = rest.words[0]
            if i in simple.expanded:
                self.fail("`xargs` runs a command whose name is not a plain word")
                break
            if os.path.basename(name) in SHELLS or name in UNREAD_COMMANDS or name == "xargs":
                self.fail(f"`xargs` runs `{name}` on its input, which the policy cannot read")
                break
            inner = self.through(rest)
            if not isinstance(inner, Simple):
                break
            i += len(rest.words) - len(inner.words)
            rest = inner
        return simple._replace(command_at=i)

    def shell(self, simple: Simple, ctx: _Ctx) -> str | None:
        """`bash -c STR`: STR read as a line (its commands added, run through the shell);
        a shell reading its commands from its input is unread; `bash FILE` is a command."""
        words = simple.words
        i = 1
        n = len(words)
        command_string = False
        reads_input = False
        while i < n and words[i][:1] in ("-", "+") and words[i] not in ("-", "--"):
            w = words[i]
            if w in _SHELL_VALUED:
                i += 2
                continue
            if not w.startswith("--") and "c" in w[1:]:
                command_string = True
            if not w.startswith("--") and "s" in w[1:]:
                reads_input = True
            i += 1
        if i < n and words[i] in ("-", "--"):
            i += 1
        if command_string:
            why = None
            if i >= n:
                why = f"`{words[0]} -c` with no command"
            elif i in simple.expanded:
                why = f"`{words[0]} -c` runs text the policy cannot know"
            elif ctx.depth >= MAX_NESTING:
                why = NESTED_TOO_DEEP
            if why is not None:
                self.fail(why)
                self.out.append(simple)
                return simple.cwd
            tree = _parse(words[i], self)
            if tree.root_node.has_error:
                self.fail(f"a syntax error in the line `{words[0]} -c` runs")
            inner = ctx._replace(
                redirects=simple.redirects,
                through=(*simple.through, os.path.basename(words[0])),
                depth=ctx.depth + 1,
                assigns=simple.assigns,
            )
            start = len(self.out)
            self.block(tree.root_node.children, simple.cwd, inner)
            if len(self.out) == start:
                self.out.append(simple)  # `bash -c '' > f`: the shell itself carries the write
            return simple.cwd
        fed = [r.op for r in simple.redirects if r.op in ("<<", "<<-", "<<<")]
        if fed:
            self.fail(f"a here-document fed to `{words[0]}`: it runs text the policy does not read")
        elif i >= n or reads_input:
            if simple.piped_from is not None:
                self.fail(
                    f"`{words[0]}` runs the commands piped into it, which the policy cannot read"
                )
            elif not any(r.op.endswith("<") for r in simple.redirects):
                self.fail(f"`{words[0]}` with no command runs what it reads")
        self.out.append(simple)
        return simple.cwd


def _moved(cwd: str | None, to: str) -> str | None:
    """The directory `cd TO` goes to from *cwd*; None when it cannot be known."""
    if not to or to == "-" or to.startswith("~"):
        return None
    if os.path.isabs(to):
        return os.path.normpath(to)
    if cwd is None:
        return None
    return os.path.normpath(os.path.join(cwd, to))


def _cd(simple: Simple) -> str | None:
    """The cwd after a `cd`, `pushd` or `popd`: `cd DIR` goes to DIR (lexically, as bash's
    logical `cd` does); `cd` alone, `cd ~`, `cd -`, `cd $X`, `popd` → unknown."""
    words = simple.words
    if words[0] == "popd" or (words[0] == "pushd" and any(w[:1] in "+-" for w in words[1:])):
        return None  # the directory stack: where it leads is not known
    args = [k for k in range(1, len(words)) if words[k] not in ("-L", "-P", "-e", "-@")]
    if args and words[args[0]] == "--":
        args = args[1:]
    if len(args) != 1 or args[0] in simple.expanded:
        return None
    return _moved(simple.cwd, words[args[0]])


def _assigns_a_variable(node: Node) -> bool:
    """Whether an expansion sets a shell variable (`${X=v}`, `${X:=v}`, `$((X=1))`, `$((i++))`)
    for the commands after it — `${CDPATH:=/tmp}` would move every later `cd`. Substitutions
    inside run in a subshell of their own: not looked into."""
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if not n.is_named and n.type in _ASSIGNING:
            return True
        if n.type not in ("command_substitution", "process_substitution"):
            stack.extend(n.children)
    return False


def _changes_directory(node: Node) -> bool:
    """Whether a `cd`, `pushd` or `popd` appears anywhere inside *node*."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "command_name" and (n.text or b"").strip(b"\"'\\") in (
            b"cd",
            b"pushd",
            b"popd",
        ):
            return True
        stack.extend(n.children)
    return False


def parse_line(line: str, cwd: str) -> Line:
    """*line* as bash reads it, run in *cwd* (absolute)."""
    reader = _Reader()
    tree = _parse(line, reader)
    root = tree.root_node
    if root.has_error:
        reader.fail("a syntax error")
    try:
        reader.block(root.children, os.path.normpath(cwd), _Ctx())
    except RecursionError:  # thousands of nested `$(` or `(`: no real line; hostile text
        return Line(text=line, commands=tuple(reader.out), unread=NESTED_TOO_DEEP)
    return Line(text=line, commands=tuple(reader.out), unread=reader.unread)
