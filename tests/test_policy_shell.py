"""wisp.policy.shell: a shell line read by tree-sitter-bash into its simple commands, their
unquoted words, redirections, pipes, substitutions and `cd`s — or said unread, in words."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wisp.policy.shell import SCANNER_UNSAFE, Line, Redirect, Simple, parse_line

CWD = "/p/q"

# Pieces of shell text: its special characters, keywords and constructs, known and unknown
# to the reader, a NUL, a lone surrogate, a non-ASCII letter and a character past U+FFFF.
PIECES = [
    *" ab$'\"\\`(){}[]<>|&;*?~#=\n-!01",
    *("<<", "EOF", "$(", "${", "bash -c ", "cd ", "xargs ", "env ", "<<<", "2>&1"),
    *("for x in ", "do ", "done", "if ", "then ", "fi", "case ", "esac", "((", "))"),
    *("\x00", "\udcff", "é", "\U0010ffff", "{1..", "<(", "function ", "eval ", "ls "),
    *("rm -r ", "curl ", "sh"),
]
shell_like = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _as_text(data: bytes) -> str:
    """Bytes as a hook may receive them: undecodable ones carried as lone surrogates."""
    return data.decode("utf-8", "surrogateescape")


def words(line: str) -> list[tuple[str, ...]]:
    return [c.words for c in parse_line(line, CWD).commands]


def only(line: str) -> Simple:
    """The line's one command (it must be read fully)."""
    read = parse_line(line, CWD)
    assert read.unread is None, read.unread
    assert len(read.commands) == 1, read.commands
    return read.commands[0]


def named(read: Line, name: str) -> Simple:
    return next(c for c in read.commands if c.words and c.words[0] == name)


class TestParseLine:
    def test_every_simple_command_of_lists_and_pipelines_is_found(self) -> None:
        """`&&`, `||`, `;`, `&`, newlines and pipes all split a line into its commands, in
        the order they run."""
        read = parse_line("a 1 && b 2 || c; d\ne | f |& g & h", CWD)
        assert read.unread is None
        assert [c.words for c in read.commands] == [
            ("a", "1"),
            ("b", "2"),
            ("c",),
            ("d",),
            ("e",),
            ("f",),
            ("g",),
            ("h",),
        ]

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("r''m -rf /", ("rm", "-rf", "/")),
            ('"rm" -rf /', ("rm", "-rf", "/")),
            ("r\\m -rf /", ("rm", "-rf", "/")),
            ("$'\\x72m' -rf /", ("rm", "-rf", "/")),
            ("$'\\162\\155' x", ("rm", "x")),
            ("echo 'a b'\"c\"d", ("echo", "a bcd")),
            ('echo "a\\"b\\$c\\\\d\\e"', ("echo", 'a"b$c\\d\\e')),
            ("echo a\\ b 'c\\d'", ("echo", "a b", "c\\d")),
            ("ls \\\n  -la", ("ls", "-la")),
            ("echo $'a\\tb\\n'", ("echo", "a\tb\n")),
            ("echo {}", ("echo", "{}")),
            ("echo 5 -1", ("echo", "5", "-1")),
        ],
    )
    def test_words_are_unquoted_as_the_shell_passes_them(
        self, line: str, expected: tuple[str, ...]
    ) -> None:
        """Quotes, backslashes, `$'…'` escapes and concatenations are undone: a name spelled
        to hide itself (`r''m`, `"rm"`, `$'\\x72m'`) is read as the command it runs."""
        assert only(line).words == expected

    def test_words_the_shell_expands_are_marked(self) -> None:
        """`$VAR`, `${…}`, `~`, globs, braces, `$(…)` and arithmetic are marked expanded and
        kept as written; quoted ones are plain words."""
        simple = parse_line("echo $X ${Y} ~ ~/a *.py a[0] {a,b} x{1..3} $(true) $((1+2)) \"$Z\" "
                      "'$W' \"~\" \\* '*' {}", CWD).commands[-1]  # fmt: skip
        assert simple.words[1:3] == ("$X", "${Y}")
        assert simple.expanded == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
        assert simple.words[12:] == ("$W", "~", "*", "*", "{}")

    def test_assignments_before_a_command_are_not_its_words(self) -> None:
        """`X=1 cmd`: the variables set for it are kept apart; a line of assignments alone is
        one command whose words are its assignments (never read as nothing)."""
        simple = only("X=1 Y='a b' ls -l")
        assert simple.words == ("ls", "-l")
        assert simple.assigns == ("X=1", "Y=a b")
        alone = parse_line("X=1 Y=2; ls", CWD)
        assert [c.words for c in alone.commands] == [("X=1", "Y=2"), ("ls",)]
        assert alone.commands[0].assigns == ("X=1", "Y=2")

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("ls > out", [Redirect(">", "out", True, "out")]),
            ("ls >> out", [Redirect(">>", "out", True, "out")]),
            ("ls &> out", [Redirect("&>", "out", True, "out")]),
            ("ls &>> out", [Redirect("&>>", "out", True, "out")]),
            ("ls >| out", [Redirect(">|", "out", True, "out")]),
            ("ls >& out", [Redirect(">&", "out", True, "out")]),
            ("ls 2> err", [Redirect("2>", "err", True, "err")]),
            ("ls > /dev/null", [Redirect(">", "/dev/null", False, "/dev/null")]),
            ("ls 2>&1", [Redirect("2>&", "1", False, "1")]),
            ("ls >&2", [Redirect(">&", "2", False, "2")]),
            ("ls 2>&-", [Redirect("2>&-", None, False, "")]),
            ("ls < in", [Redirect("<", "in", False, "in")]),
            ("ls > $OUT", [Redirect(">", None, True, "$OUT")]),
            ("ls > ~/x", [Redirect(">", None, True, "~/x")]),
            ("cat <<< 'hi'", [Redirect("<<<", "hi", False, "'hi'")]),
            ("cat <<EOF\nx\nEOF", [Redirect("<<", None, False, "")]),
        ],
    )
    def test_redirections_say_whether_they_write_a_file(
        self, line: str, expected: list[Redirect]
    ) -> None:
        """A `>`, `>>`, `&>`, `>|`, `>& FILE`, `2>` writes its target (None when the parser
        cannot know it); `/dev/null`, `2>&1`, `>&2`, `<` and here-documents write no file."""
        assert list(only(line).redirects) == expected

    def test_a_redirection_binds_to_the_last_command_of_a_list(self) -> None:
        """`cd a && ls > f` writes f from ls, in a (the grammar puts the redirection around
        the whole list; bash binds it to the last command): the cd has none."""
        read = parse_line("cd a && ls > f", CWD)
        cd, ls = read.commands
        assert cd.redirects == ()
        assert ls.redirects == (Redirect(">", "f", True, "f"),)
        assert ls.cwd == "/p/q/a"
        grouped = parse_line("ls && { pwd; } > f", CWD)
        assert grouped.commands[0].redirects == ()
        assert grouped.commands[1].redirects[0].target == "f"

    @pytest.mark.parametrize(
        "line",
        ["rm -rf > f /", "rm > f -rf /", "rm < x -rf /", "rm 2>&1 -rf /", "rm <<< x -rf /",
         "rm <<EOF -rf /\nEOF"],
    )  # fmt: skip
    def test_words_after_a_redirection_are_the_commands(self, line: str) -> None:
        """`rm > f -rf /`: the words after a redirection are the command's arguments, though
        the grammar hangs them on the redirection (a file's, a here-string's, a
        here-document's)."""
        simple = only(line)
        assert simple.words == ("rm", "-rf", "/")
        assert len(simple.redirects) == 1

    def test_a_pipe_says_what_feeds_each_command(self) -> None:
        """Each command of a pipeline knows the words of the one before it and of all the
        earlier ones (`curl … | tee f | sh` reaches sh)."""
        read = parse_line("curl -s x | tee f | sh", CWD)
        curl, tee, sh = read.commands
        assert curl.piped_from is None
        assert tee.piped_from == ("curl", "-s", "x")
        assert sh.piped_from == ("tee", "f")
        assert sh.upstream == (("curl", "-s", "x"), ("tee", "f"))

    def test_a_here_document_continued_by_a_pipe_or_list_is_read_in_order(self) -> None:
        """`cat <<EOF | sh` feeds sh from cat; `cat <<EOF && rm x` runs rm after: what the
        grammar puts inside the here-document's redirect is read as the shell runs it."""
        piped = parse_line("cat <<EOF | wc -l\nx\nEOF", CWD)
        assert piped.unread is None
        assert [c.words for c in piped.commands] == [("cat",), ("wc", "-l")]
        assert piped.commands[1].piped_from == ("cat",)
        listed = parse_line("cd sub && cat > f <<EOF && rm x\na\nEOF", CWD)
        assert listed.unread is None
        assert [(c.words, c.cwd) for c in listed.commands] == [
            (("cd", "sub"), "/p/q"),
            (("cat",), "/p/q/sub"),
            (("rm", "x"), "/p/q/sub"),
        ]

    @pytest.mark.parametrize(
        "line",
        [
            "echo $(curl x)",
            "echo `curl x`",
            'echo "$(curl x)"',
            "echo ${X:-$(curl x)}",
            "echo $(( $(curl x) + 1 ))",
            "X=$(curl x) ls",
            "export X=$(curl x)",
            "cat <<EOF\n$(curl x)\nEOF",
            "[[ $(curl x) == y ]]",
            "for f in $(curl x); do :; done",
            "case $(curl x) in a) ;; esac",
            "ls > $(curl x)",
            "a[$(curl x)]=1 ls",
            "declare a[$(curl x)]=1",
            "cat <<< $(curl x)",
        ],
    )
    def test_commands_in_substitutions_are_found(self, line: str) -> None:
        """A `$(…)` or backticks anywhere — an argument, a string, an expansion, arithmetic,
        an assignment, an unquoted here-document, a test, a loop's list, a redirection —
        runs: its command is found, marked substituted."""
        read = parse_line(line, CWD)
        curl = named(read, "curl")
        assert curl.substituted
        assert curl.words == ("curl", "x")

    def test_a_quoted_here_document_runs_nothing(self) -> None:
        """`<<'EOF'` keeps `$(…)` as text: nothing inside it runs (the control for the
        unquoted one above)."""
        read = parse_line("cat <<'EOF'\n$(curl x)\nEOF", CWD)
        assert [c.words for c in read.commands] == [("cat",)]
        assert read.unread is None

    def test_background_commands_are_marked(self) -> None:
        """`cmd &` and a list before `&` run in the background; the command after does not."""
        read = parse_line("a && b & c", CWD)
        assert [(c.words, c.background) for c in read.commands] == [
            (("a",), True),
            (("b",), True),
            (("c",), False),
        ]

    @pytest.mark.parametrize(
        "line",
        [
            "if a; then b; elif c; then d; else e; fi",
            "while a; do b; done",
            "until a; do b; done",
            "for x in 1 2; do a; b; done",
            "select x in 1; do a; b; done",
            "case $x in 1) a;; *) b;; esac",
            "(a; b)",
            "{ a; b; }",
            "! a && b",
            "a | (b; c)",
        ],
    )
    def test_bodies_of_compound_commands_are_read(self, line: str) -> None:
        """Conditions and bodies of if/while/until/for/select/case, subshells, groups and a
        negation are each read down to their simple commands."""
        read = parse_line(line, CWD)
        assert read.unread is None
        found = {c.words[0] for c in read.commands}
        assert found >= {"a", "b"}, found

    def test_tests_are_commands(self) -> None:
        """`[ … ]` and `[[ … ]]` are commands whose words are their expression's."""
        assert only("[ -f x ]").words == ("[", "-f", "x", "]")
        assert only('[[ -d "a b" && $x == y ]]').words == (
            "[[",
            "-d",
            "a b",
            "&&",
            "$x",
            "==",
            "y",
            "]]",
        )

    @pytest.mark.parametrize(
        ("line", "cwd_of_last"),
        [
            ("cd .. && ls", "/p"),
            ("cd sub; ls", "/p/q/sub"),
            ("cd sub\nls", "/p/q/sub"),
            ("cd /abs/dir && ls", "/abs/dir"),
            ("cd a/../b && ls", "/p/q/b"),
            ("cd -- x && ls", "/p/q/x"),
            ("cd -P x && ls", "/p/q/x"),
            ("pushd x && ls", "/p/q/x"),
            ("cd x && cd y && ls", "/p/q/x/y"),
            ("{ cd x; } && ls", "/p/q/x"),
            ("env -C /e ls", "/e"),
            ("(cd x); ls", "/p/q"),
            ("cd x | cat; ls", "/p/q"),
            ("cd x & ls", "/p/q"),
            ("echo $(cd x); ls", "/p/q"),
            ("bash -c 'cd x'; ls", "/p/q"),
            ("cd && ls", None),
            ("cd ~ && ls", None),
            ("cd ~/x && ls", None),
            ("cd $X && ls", None),
            ("cd - && ls", None),
            ("cd a b && ls", None),
            ("popd && ls", None),
            ("pushd +1 && ls", None),
            ("env -C $X ls", None),
            ("cd x || ls", None),
            ("if a; then cd x; fi; ls", None),
            ("for d in a b; do cd $d; ls; done", None),
            ("cd x; cd $Y; cd /abs; ls", "/abs"),
        ],
    )
    def test_cd_moves_the_commands_after_it(self, line: str, cwd_of_last: str | None) -> None:
        """A `cd` moves the commands after it in the same list, lexically from the current
        directory; in a subshell, a pipe, the background or a substitution it stays there;
        `cd` alone, `~`, `$X`, `-`, `popd`, after `||` or inside a branch or loop: unknown."""
        read = parse_line(line, CWD)
        assert read.commands[-1].words[0] == "ls"
        assert read.commands[-1].cwd == cwd_of_last

    @pytest.mark.parametrize(
        ("line", "expected", "through"),
        [
            ("env A=1 ls -l", ("ls", "-l"), ("env",)),
            ("env -i -u B -- ls", ("ls",), ("env",)),
            ("time ls", ("ls",), ("time",)),
            ("time -p ls", ("ls",), ("time",)),
            ("nice -n 5 ls", ("ls",), ("nice",)),
            ("nice -5 ls", ("ls",), ("nice",)),
            ("nohup ls", ("ls",), ("nohup",)),
            ("timeout 5 ls", ("ls",), ("timeout",)),
            ("timeout -s KILL -k 1 5s ls", ("ls",), ("timeout",)),
            ("timeout --signal=KILL 5 ls", ("ls",), ("timeout",)),
            ("command ls", ("ls",), ("command",)),
            ("builtin cd x", ("cd", "x"), ("builtin",)),
            ("timeout 9 env X=1 nice rm -r x", ("rm", "-r", "x"), ("timeout", "env", "nice")),
            ("bash -c 'rm -r x'", ("rm", "-r", "x"), ("bash",)),
            ("sh -ec 'rm -r x'", ("rm", "-r", "x"), ("sh",)),
            ("bash -o pipefail -c 'rm -r x' arg0", ("rm", "-r", "x"), ("bash",)),
            ("bash -lc \"bash -c 'rm -r x'\"", ("rm", "-r", "x"), ("bash", "bash")),
        ],
    )
    def test_wrappers_are_read_through(
        self, line: str, expected: tuple[str, ...], through: tuple[str, ...]
    ) -> None:
        """A command that only runs another (env, time, nice, nohup, timeout, command,
        builtin, `bash -c '…'`) is read as the command it runs, its name kept in `through`."""
        simple = only(line)
        assert simple.words == expected
        assert simple.through == through

    def test_env_assignments_are_the_commands(self) -> None:
        """`env A=1 cmd` sets A for cmd, as `A=1 cmd` does; a shell started with variables
        (`BASH_ENV=x bash -c '…'`) hands them to every command of its line."""
        assert only("env A=1 B=2 ls").assigns == ("A=1", "B=2")
        read = parse_line("BASH_ENV=./x bash -c 'ls; X=1 pwd'", CWD)
        assert [c.assigns for c in read.commands] == [("BASH_ENV=./x",), ("BASH_ENV=./x", "X=1")]

    def test_command_v_and_env_alone_are_commands_of_their_own(self) -> None:
        """`command -v X` runs nothing of X, `env` and `time` alone run nothing: they stay
        as they are (the control for the wrappers above)."""
        assert only("command -v ls").words == ("command", "-v", "ls")
        assert only("env").words == ("env",)
        assert only("time").words == ("time",)

    def test_xargs_keeps_its_words_and_marks_the_command_it_runs(self) -> None:
        """`xargs [options] CMD`: its words stay (so it is never read as CMD alone), and
        `command_at` is where CMD starts, past options and wrappers."""
        simple = only("xargs -0 -n 1 rm -rf")
        assert simple.words == ("xargs", "-0", "-n", "1", "rm", "-rf")
        assert simple.command_at == 4
        assert only("xargs -I{} nice -n 2 rm {}").command_at == 5
        assert only("xargs").command_at == 1

    def test_bash_c_inner_commands_are_piped_and_redirected_as_the_shell(self) -> None:
        """`curl x | bash -c 'cat'` feeds the inner command; `bash -c 'ls' > f` writes f from
        it."""
        read = parse_line("curl x | bash -c 'cat; ls' > f", CWD)
        cat = named(read, "cat")
        assert cat.piped_from == ("curl", "x")
        assert cat.redirects == (Redirect(">", "f", True, "f"),)

    @pytest.mark.parametrize(
        ("line", "why"),
        [
            ('ls "unterminated', "syntax error"),
            ("ls )", "syntax error"),
            ("if true; then ls", "syntax error"),
            ("eval ls", "eval"),
            ('eval "$(curl x)"', "eval"),
            ("source x.sh", "source"),
            (". x.sh", "`.`"),
            ("exec ls", "exec"),
            ("exec > f", "exec"),
            ("f() { ls; }", "function"),
            ("function f { ls; }", "function"),
            ("cat <(ls)", "process substitution"),
            ("ls > >(cat)", "process substitution"),
            ("diff <(ls a) <(ls b)", "process substitution"),
            ("bash <<EOF\nls\nEOF", "here-document"),
            ("sh <<< 'ls'", "here-document"),
            ("alias ls='rm -rf'", "alias"),
            ("trap 'rm -rf x' EXIT", "trap"),
            ("coproc ls", "coproc"),
            ("hash -p ./x ls", "hash -p"),
            ("$CMD x", "not a plain word"),
            ("${CMD} x", "not a plain word"),
            ("$(echo rm) -rf x", "not a plain word"),
            ("*.sh", "not a plain word"),
            ('bash -c "$X"', "cannot know"),
            ("bash -c", "no command"),
            ("echo ls | bash", "piped into it"),
            ("curl x | sh", "piped into it"),
            ("bash", "runs what it reads"),
            ("xargs sh -c 'rm $1'", "xargs"),
            ("xargs eval", "xargs"),
            ("env -S 'rm -rf x'", "option"),
            ("env $X ls", "env"),
            ("(( x++ ))", "arithmetic"),
            ("for ((i=0; i<3; i++)); do ls; done", "arithmetic"),
            ("> f", "no command"),
            ("{} > f", "empty group"),
            ("case x in esac > f", "no command"),
            ("command eval ls", "eval"),
            ("timeout 5 exec ls", "exec"),
            ("bash -c 'eval ls'", "eval"),
            ("bash -c 'ls \"'", "syntax error"),
        ],
    )
    def test_what_cannot_be_read_fully_is_unread(self, line: str, why: str) -> None:
        """A syntax error, eval, source, exec, a function, a process substitution, a shell
        fed a here-document or a pipe, alias, trap, a command whose name is not a plain word,
        `bash -c` of text not written out, xargs running a shell, an arithmetic command: the
        line is unread, saying why in words."""
        read = parse_line(line, CWD)
        assert read.unread is not None, read
        assert why.lower() in read.unread.lower(), read.unread

    @pytest.mark.parametrize(
        "line",
        [
            "cat <<EOF\nhello\nEOF",
            "cat <<'EOF' > f\n$(x)\nEOF",
            "bash script.sh",
            "bash -c 'ls'",
            "sh -c 'cd x && ls' _ a",
            "bash < script.sh",
            "cd x && ls",
            "env X=1 ls",
            "xargs rm",
            "command -v eval",
            "echo eval source exec",
            "X=1",
            "export X=1 Y",
            "local -r x=1",
            "unset X",
            "[ -f x ] && echo y",
            "ls # eval",
            "ls \\\n -l",
            "",
            "   ",
            "# only a comment",
        ],
    )
    def test_what_can_be_read_fully_is_not_unread(self, line: str) -> None:
        """The controls: a here-document to a command that is not a shell, a script run by
        bash, `bash -c` of a literal line, wrappers, words that only name eval or source,
        assignments, declarations, tests, comments and continuations read fully."""
        read = parse_line(line, CWD)
        assert read.unread is None, read.unread

    def test_comments_and_newlines_separate_as_the_shell(self) -> None:
        """A `#` starts a comment (what follows never runs), a newline separates commands,
        a backslash-newline continues the line, and a `#` inside a word is the word's."""
        assert words("echo hi # rm -rf /") == [("echo", "hi")]
        assert words("ls\nrm -r x") == [("ls",), ("rm", "-r", "x")]
        assert words("ls \\\n-l \\\n-a") == [("ls", "-l", "-a")]
        assert words("echo a#b '#c'") == [("echo", "a#b", "#c")]

    def test_nesting_past_any_real_line_is_unread_not_a_crash(self) -> None:
        """Thousands of nested `$(` or `{` (hostile text) make the line unread, never a
        RecursionError; deeply nested `bash -c` too."""
        for line in ("$(" * 3000 + "ls" + ")" * 3000, "{ " * 3000 + "ls; " + "}; " * 3000):
            read = parse_line(line, CWD)
            assert read.unread is not None
        nested = "ls"
        for _ in range(12):
            nested = "bash -c " + "'" + nested.replace("'", "'\\''") + "'"
        assert parse_line(nested, CWD).unread is not None

    def test_the_cwd_given_is_normalised(self) -> None:
        """The line's directory is taken lexically normalised (`/p/q/` and `/p/./q` are
        /p/q)."""
        assert parse_line("ls", "/p/./q/").commands[0].cwd == "/p/q"

    def test_a_brace_before_a_wide_character_is_masked_for_the_grammar_and_unread(
        self,
    ) -> None:
        """tree-sitter-bash's scanner reads the character after `{` (or `{1..`) with C's
        isdigit(), out of its table's bounds above 0xFF (a segfault the property test below
        found): such a character never reaches the grammar, the line is read with it masked
        and said unread. Control: a Latin-1 character there is read as written."""
        plain = parse_line("echo {é}", CWD)
        assert plain.unread is None and plain.commands[0].words == ("echo", "{é}")
        for wide in ("\U0010ffff", "\U000f3fe1", "\u4e00", "\udcff"):
            for line in (f"echo {{{wide}", f"rm -rf / {{1..{wide}}}", f"bash -c $'{{{wide}'"):
                read = parse_line(line, CWD)
                assert read.unread == SCANNER_UNSAFE, line
                assert read.text == line and read.commands[0].words[0] in ("echo", "rm", "bash")
        # Only the line `bash -c` runs holds it, once `$'…'` is unquoted.
        assert parse_line("bash -c $'{\\U0010ffff'", CWD).unread == SCANNER_UNSAFE

    @settings(max_examples=300)
    @given(shell_like)
    def test_never_raises_on_shell_like_text(self, line: str) -> None:
        """Any text built from the shell's own characters and keywords is read or said
        unread: parse_line never raises."""
        read = parse_line(line, CWD)
        assert isinstance(read, Line)

    @settings(max_examples=200)
    @given(st.text(max_size=60) | st.binary(max_size=60).map(_as_text))
    def test_never_raises_on_any_text(self, line: str) -> None:
        """Any text — including bytes that are not UTF-8, carried as lone surrogates — is
        read or said unread, never an exception."""
        read = parse_line(line, CWD)
        assert read.text == line


class TestGrammarLoading:
    def test_the_grammar_loads_without_importlib_resources_and_only_when_used(self) -> None:
        """Importing the module loads no parser; parsing loads tree-sitter's and the bash
        grammar's compiled bindings, never tree_sitter_bash's package (its __init__ imports
        importlib.resources, ~6 ms of a hook) nor tree_sitter's (a typing Protocol)."""
        probe = (
            "import sys\n"
            "import wisp.policy.shell as s\n"
            "print('tree_sitter._binding' in sys.modules)\n"
            "s.parse_line('ls', '/')\n"
            "print('tree_sitter._binding' in sys.modules, 'tree_sitter_bash' in sys.modules,"
            " 'importlib.resources' in sys.modules, 'tree_sitter' in sys.modules)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        assert out[0] == "False"
        assert out[1] == "True False False False"
