"""The person's policy file and a project's (wisp.policy.rules), read from real files: a good
file's rules in force and matched as docs/policy.md says; each way a file is refused named by
FILE:LINE with what to do and no traceback, none of its rules in force; a project's file that
would loosen anything refused; files that are not the person's own, or are too big, refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wisp.policy.reading import Effect
from wisp.policy.rules import (
    POLICY_CAP_BYTES,
    TREE_FILE,
    Action,
    Origin,
    Policy,
    Rule,
    Subject,
    glob_regex,
    load_policy,
    words_match,
)

GOOD = """\
# my rules
[builtin]
project-edits = false

[[rule]]
name = "npm tests"
action = "allow"
command = ["npm", "test", "*"]
match = ["npm test", "npm test -- -u"]
not_match = ["npm testx", "npm test && git push"]

[[rule]]
name = "no push"
action = "deny"
command = ["git", "push"]
match = ["git push", "ls && git push"]
not_match = ["git pushx", "git push origin"]

[[rule]]
name = "keys"
action = "ask"
path = "**/*.pem"
match = ["/srv/a/key.pem", "~/x.pem"]
not_match = ["/srv/a/key.pem.txt"]

[[rule]]
action = "deny"
tool = "WebFetch"
harness = "claude-code"
match = ["WebFetch"]
not_match = ["WebSearch"]
"""


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(textwrap.dedent(text))
    path.chmod(mode)
    return path


def person(home: Path, text: str, mode: int = 0o600) -> Path:
    return write(home / "policy.toml", text, mode)


def shell(*commands: tuple[str, ...], harness: str = "claude-code") -> Subject:
    return Subject(
        harness=harness,
        tool="Bash",
        effect=Effect.SHELL,
        cwd="/srv/a",
        project="/srv/a",
        commands=commands,
    )


def edit(*paths: str, tool: str = "Write", project: str | None = "/srv/a") -> Subject:
    return Subject(
        harness="claude-code",
        tool=tool,
        effect=Effect.EDIT,
        cwd="/srv/a",
        project=project,
        paths=paths,
    )


def refused(home: Path, project: str | None = None) -> str:
    """The refusal of the files in force for *project*, which must be one, with no rule."""
    policy = load_policy(home, project)
    assert policy.refused is not None
    assert "Traceback" not in policy.refused and "Error" not in policy.refused
    return policy.refused


class TestLoadPolicy:
    def test_no_file_is_no_rule(self, tmp_path: Path) -> None:
        """No file (and no home at all): no rule, nothing off, nothing refused."""
        assert load_policy(tmp_path / "none", None) == Policy()
        assert load_policy(tmp_path / "none", str(tmp_path)) == Policy()

    def test_a_good_file_is_in_force_in_its_order(self, tmp_path: Path) -> None:
        """Every rule of a good file, in the file's order, with its name (else FILE:LINE),
        its line, its origin; `[builtin]` turns `project-edits` off."""
        home = tmp_path / "home"
        shown = person(home, GOOD)
        policy = load_policy(home, None)
        assert policy.refused is None, policy.refused
        assert [r.name for r in policy.rules] == ["npm tests", "no push", "keys", f"{shown}:26"]
        assert [r.where for r in policy.rules] == [f"{shown}:{n}" for n in (5, 12, 19, 26)]
        assert {r.origin for r in policy.rules} == {Origin.PERSON}
        assert policy.builtins_off == {"project-edits"}
        assert policy.rules[2].path == "**/*.pem"

    def test_a_rule_line_is_its_header_whatever_comes_before(self, tmp_path: Path) -> None:
        """A multi-line string holding `[[rule]]` is no header: lines count from the real
        headers (tomllib gives none; docs/policy.md says how they are found)."""
        home = tmp_path / "home"
        shown = person(
            home,
            '''\
            [[rule]]
            action = "deny"
            path = "/x/*"
            match = ["/x/y"]
            not_match = ["""/a
            [[rule]]
            b"""]

            [[rule]]
            action = "deny"
            tool = "Y"
            match = ["Y"]
            not_match = ["X"]
            ''',
        )
        policy = load_policy(home, None)
        assert policy.refused is None, policy.refused
        assert [r.where for r in policy.rules] == [f"{shown}:1", f"{shown}:9"]


class TestRuleMatches:
    def test_command_words_never_a_string_prefix(self, tmp_path: Path) -> None:
        """`["git","push"]` matches `git push` (the control) and not `git pushx` nor `git push
        origin`; `["npm","test","*"]` matches `npm test` and `npm test -- -u`, not `npm testx`."""
        assert words_match(("git", "push"), ("git", "push"), by_name=False)
        assert not words_match(("git", "push"), ("git", "pushx"), by_name=False)
        assert not words_match(("git", "push"), ("git", "push", "origin"), by_name=False)
        assert words_match(("npm", "test", "*"), ("npm", "test"), by_name=False)
        assert words_match(("npm", "test", "*"), ("npm", "test", "--", "-u"), by_name=False)
        assert not words_match(("npm", "test", "*"), ("npm", "testx"), by_name=False)

    def test_deny_any_command_allow_every_command(self) -> None:
        """A deny rule matches a line if any simple command matches; an allow rule only if
        every one does (and a line of one matching command: the control)."""
        deny = Rule("d", Action.DENY, Origin.PERSON, "f:1", command=("git", "push"))
        allow = Rule("a", Action.ALLOW, Origin.PERSON, "f:2", command=("npm", "test", "*"))
        assert deny.matches(shell(("ls",), ("git", "push")))
        assert not deny.matches(shell(("ls",), ("git", "status")))
        assert allow.matches(shell(("npm", "test"), ("npm", "test", "-u")))
        assert not allow.matches(shell(("npm", "test"), ("rm", "x")))
        assert not allow.matches(shell())

    def test_a_deny_rule_knows_a_program_by_its_path(self) -> None:
        """`/usr/bin/git push` is `git push` to a deny rule; an allow rule takes the program
        only as written (`./git` may be anything)."""
        deny = Rule("d", Action.DENY, Origin.PERSON, "f:1", command=("git", "push"))
        allow = Rule("a", Action.ALLOW, Origin.PERSON, "f:2", command=("git", "status"))
        assert deny.matches(shell(("/usr/bin/git", "push")))
        assert allow.matches(shell(("git", "status")))
        assert not allow.matches(shell(("./git", "status")))

    def test_paths_any_for_deny_every_for_allow(self) -> None:
        """A path rule: any path for deny, every path for allow."""
        deny = Rule("d", Action.DENY, Origin.PERSON, "f:1", path="**/.env")
        allow = Rule("a", Action.ALLOW, Origin.PERSON, "f:2", path="/srv/a/docs/**")
        assert deny.matches(edit("/srv/a/x.py", "/srv/a/.env"))
        assert not deny.matches(edit("/srv/a/x.py", "/srv/a/.envrc"))
        assert allow.matches(edit("/srv/a/docs/a.md", "/srv/a/docs/x/b.md"))
        assert not allow.matches(edit("/srv/a/docs/a.md", "/srv/a/x.py"))
        assert not deny.matches(edit("/srv/a/docs/../.env.bak"))
        assert deny.matches(edit("/srv/a/docs/../.env"))  # normalised before it is matched

    def test_globs(self) -> None:
        """`**` any folders (none included), a trailing `/**` the folder and all under it,
        `*` within a name, an unanchored glob at any depth."""
        cases = [
            ("/a/**", "/a", True),
            ("/a/**", "/a/b/c", True),
            ("/a/**", "/ab", False),
            ("/src/**/*.py", "/src/a.py", True),
            ("/src/**/*.py", "/src/x/y/a.py", True),
            ("/src/*.py", "/src/x/a.py", False),
            ("*.pem", "/x/y/k.pem", True),
            ("secrets/**", "/p/secrets/k", True),
            ("secrets/**", "/p/mysecrets/k", False),
            ("/p/[!a]b", "/p/cb", True),
            ("/p/[!a]b", "/p/ab", False),
            ("/p/?", "/p/x", True),
            ("/p/?", "/p/xy", False),
        ]
        for glob, path, wanted in cases:
            assert (glob_regex(glob).fullmatch(path) is not None) is wanted, (glob, path)

    def test_tool_harness_project(self) -> None:
        """Every field a rule gives must match: tool, harness, project (that folder or in it)."""
        rule = Rule(
            "r", Action.DENY, Origin.PERSON, "f:1", tool="Write", harness="claude-code",
            project="/srv/a",
        )  # fmt: skip
        assert rule.matches(edit("/srv/a/x"))
        assert not rule.matches(edit("/srv/a/x", tool="Edit"))
        assert not rule.matches(edit("/srv/a/x", project="/srv/ab"))
        assert not rule.matches(edit("/srv/a/x", project=None))
        assert not rule.matches(edit("/srv/a/x")._replace(harness="codex"))


class TestPolicyFirst:
    def test_first_of_an_action_in_order(self, tmp_path: Path) -> None:
        """first(action) is the first rule of that action that matches, in the file's order:
        `git push` is denied by `no push`; `npm test` allowed by `npm tests`; a WebFetch in
        Claude Code denied, in Codex not."""
        home = tmp_path / "home"
        person(home, GOOD)
        policy = load_policy(home, None)
        assert policy.first(Action.DENY, shell(("git", "push"))).name == "no push"  # type: ignore[union-attr]
        assert policy.first(Action.DENY, shell(("git", "status"))) is None
        assert policy.first(Action.ALLOW, shell(("npm", "test"))).name == "npm tests"  # type: ignore[union-attr]
        fetch = edit(tool="WebFetch")._replace(effect=Effect.NETWORK)
        assert policy.first(Action.DENY, fetch) is not None
        assert policy.first(Action.DENY, fetch._replace(harness="codex")) is None
        assert policy.first(Action.ASK, edit("/srv/a/k.pem")).name == "keys"  # type: ignore[union-attr]


class TestRefusals:
    """Each way a file is refused names FILE:LINE (or FILE) and what to do; no rule of it is
    in force. The control of each: GOOD, the same file fixed, loads (TestLoadPolicy)."""

    @pytest.mark.parametrize(
        ("text", "line", "said"),
        [
            ('[[rule]]\naction = "deny"\npath = \n', 3, "is not valid TOML"),
            ('[[rule]]\naction = "deny"\npaht = "*.pem"\n', 3, "a rule takes no key `paht`"),
            ('colour = "red"\n', 1, "a policy file takes no `colour`"),
            (
                '[[rule]]\naction = "deny"\ncommand = "git push"\nmatch = ["git push"]\n'
                'not_match = ["ls"]\n',
                3,
                "`command` takes a list of words",
            ),
            (
                '[[rule]]\naction = "maybe"\ntool = "X"\nmatch = ["X"]\nnot_match = ["Y"]\n',
                2,
                '`action` is "allow", "ask" or "deny"',
            ),
            ('[[rule]]\naction = "deny"\ntool = "X"\nnot_match = ["Y"]\n', 1, "needs `match"),
            (
                '[[rule]]\naction = "deny"\ncommand = ["git", "*", "push"]\nmatch = ["git"]\n'
                'not_match = ["ls"]\n',
                3,
                "only as its last word",
            ),
            ("[builtin]\nread-only = false\nreadonly = false\n", 3, "no built-in rule `readonly`"),
            ('[builtin]\nread-only = "no"\n', 2, "takes true (on) or false (off)"),
            (
                '[[rule]]\nname = "x"\naction = "deny"\ntool = "A"\nmatch = ["A"]\n'
                'not_match = ["B"]\n[[rule]]\nname = "x"\naction = "deny"\ntool = "B"\n'
                'match = ["B"]\nnot_match = ["A"]\n',
                8,
                "two rules are named `x` (lines 1 and 7)",
            ),
            ('rule = [{action = "deny", tool = "X"}]\n', 1, "under a `[[rule]]` header"),
            (
                '[[rule]]\naction = "deny"\ntool = "X"\nharness = "claude"\nmatch = ["X"]\n'
                'not_match = ["Y"]\n',
                4,
                "wisp knows no harness `claude`",
            ),
        ],
    )
    def test_each_refusal_names_its_line(
        self, tmp_path: Path, text: str, line: int, said: str
    ) -> None:
        """The file's name and line, the fault, and what to do; no rule in force."""
        home = tmp_path / "home"
        shown = person(home, text)
        why = refused(home)
        assert why.startswith(f"{shown}:{line}: "), why
        assert said in why, why
        assert "No rule of this file is in force" in why
        assert load_policy(home, None).rules == ()

    def test_a_failing_example_refuses_the_file(self, tmp_path: Path) -> None:
        """An example that does not do what the file says (must match, does not; must not
        match, does) refuses the file at the example's line, saying how it was read. The
        control: the same rule with its examples right loads."""
        home = tmp_path / "home"
        shown = person(
            home,
            """\
            [[rule]]
            action = "allow"
            command = ["npm", "test", "*"]
            match = ["npm test"]
            not_match = ["npm test -u"]
            """,
        )
        why = refused(home)
        assert why.startswith(f"{shown}:5: this rule must not match `npm test -u`"), why
        assert "read as the command `npm test -u`" in why and "but it does" in why
        person(
            home,
            """\
            [[rule]]
            action = "allow"
            command = ["npm", "test", "*"]
            match = ["npm test"]
            not_match = ["npm testx -u"]
            """,
        )
        assert load_policy(home, None).refused is None

    def test_a_path_example_must_match(self, tmp_path: Path) -> None:
        """A path example that the glob does not match refuses the file at `match`."""
        home = tmp_path / "home"
        shown = person(
            home,
            """\
            [[rule]]
            name = "pem"
            action = "deny"
            path = "/srv/*.pem"
            match = ["/srv/a/k.pem"]
            not_match = ["/srv/k.txt"]
            """,
        )
        why = refused(home)
        assert why.startswith(f"{shown}:5: the rule `pem` must match `/srv/a/k.pem`"), why

    def test_the_other_file_stays_in_force(self, tmp_path: Path) -> None:
        """A refused project file leaves the person's rules in force (and says which file was
        refused, by path)."""
        home, project = tmp_path / "home", tmp_path / "proj"
        person(home, GOOD)
        theirs = write(project / ".wisp" / "policy.toml", "nonsense =\n")
        policy = load_policy(home, str(project))
        assert len(policy.rules) == 4
        assert [file for file, _ in policy.refusals] == [str(theirs)]


class TestProjectFile:
    def test_ask_and_deny_are_the_projects(self, tmp_path: Path) -> None:
        """A project's ask and deny rules are in force after the person's, as the project's;
        a relative example path is the project's."""
        home, project = tmp_path / "home", tmp_path / "proj"
        person(home, GOOD)
        theirs = write(
            project / ".wisp" / "policy.toml",
            """\
            [[rule]]
            name = "no push"
            action = "deny"
            command = ["git", "push", "*"]
            match = ["git push --force"]
            not_match = ["git status"]

            [[rule]]
            action = "ask"
            path = "migrations/**"
            match = ["migrations/001.sql"]
            not_match = ["src/app.py"]
            """,
        )
        policy = load_policy(home, str(project))
        assert policy.refused is None, policy.refused
        ours = policy.rules[4:]
        assert [r.origin for r in ours] == [Origin.PROJECT, Origin.PROJECT]
        assert [r.where for r in ours] == [f"{theirs}:1", f"{theirs}:8"]
        assert ours[0].name == "project:no push"  # the person's file has a `no push`

    def test_an_allow_refuses_the_project_file(self, tmp_path: Path) -> None:
        """A project may only tighten: an allow rule refuses its file, saying why and where
        such a rule belongs; none of its rules is in force. The control: the same file with
        the rule made `ask` loads."""
        home, project = tmp_path / "home", tmp_path / "proj"
        rule = """\
            [[rule]]
            action = "{}"
            command = ["rm", "*"]
            match = ["rm -rf /"]
            not_match = ["ls"]
            """
        theirs = write(project / ".wisp" / "policy.toml", rule.format("allow"))
        why = refused(home, str(project))
        assert why.startswith(f"{theirs}:2: a project's policy file may only ask or deny"), why
        assert str(home / "policy.toml") in why
        assert load_policy(home, str(project)).rules == ()
        write(project / ".wisp" / "policy.toml", rule.format("ask"))
        assert load_policy(home, str(project)).refused is None

    def test_turning_a_builtin_off_refuses_the_project_file(self, tmp_path: Path) -> None:
        """A project's `[builtin]` table is refused: turning a built-in rule off is the
        person's alone."""
        home, project = tmp_path / "home", tmp_path / "proj"
        theirs = write(project / ".wisp" / "policy.toml", "[builtin]\nread-only = false\n")
        why = refused(home, str(project))
        assert why.startswith(f"{theirs}:1: a project's policy file cannot turn built-in"), why
        assert load_policy(home, str(project)).builtins_off == frozenset()

    def test_a_symlink_out_of_the_project_is_refused(self, tmp_path: Path) -> None:
        """`.wisp/policy.toml` (or `.wisp`) a symbolic link is refused, never followed out of
        the project; the control: a plain file there loads."""
        home, project = tmp_path / "home", tmp_path / "proj"
        elsewhere = write(tmp_path / "elsewhere.toml", GOOD.replace('"allow"', '"ask"'))
        (project / ".wisp").mkdir(parents=True)
        (project / ".wisp" / "policy.toml").symlink_to(elsewhere)
        assert "symbolic link" in refused(home, str(project))
        (project / ".wisp" / "policy.toml").unlink()
        (project / ".wisp").rmdir()
        (project / ".wisp").symlink_to(tmp_path)
        (tmp_path / "policy.toml").write_text("")
        assert "symbolic link" in refused(home, str(project))
        (project / ".wisp").unlink()
        write(project / ".wisp" / "policy.toml", "")
        assert load_policy(home, str(project)) == Policy()


class TestPersonsFile:
    def test_others_may_not_write_it(self, tmp_path: Path) -> None:
        """A file group- or world-writable is refused, saying the fix; 0644 is fine."""
        home = tmp_path / "home"
        person(home, GOOD, mode=0o664)
        why = refused(home)
        assert "others may write it (mode 664)" in why and "chmod 600" in why
        person(home, GOOD, mode=0o644)
        assert load_policy(home, None).refused is None

    def test_a_symlink_is_refused(self, tmp_path: Path) -> None:
        """`$WISP_HOME/policy.toml` a symbolic link (to a good file) is refused."""
        home = tmp_path / "home"
        good = write(tmp_path / "good.toml", GOOD)
        home.mkdir(mode=0o700)
        (home / "policy.toml").symlink_to(good)
        assert "symbolic link" in refused(home)

    def test_over_the_cap_is_refused(self, tmp_path: Path) -> None:
        """A file over the cap is refused by its size, for both files; at the cap (comments)
        it loads."""
        home, project = tmp_path / "home", tmp_path / "proj"
        person(home, "#" * (POLICY_CAP_BYTES - 1) + "\n")
        assert load_policy(home, None).refused is None
        person(home, "#" * POLICY_CAP_BYTES + "\n")
        assert "over the" in refused(home)
        (home / "policy.toml").unlink()
        write(project / ".wisp" / "policy.toml", "#" * POLICY_CAP_BYTES + "\n")
        assert "over the" in refused(home, str(project))

    def test_not_utf8(self, tmp_path: Path) -> None:
        """Bytes that are not UTF-8 are refused at their line."""
        home = tmp_path / "home"
        shown = person(home, "")
        shown.write_bytes(b"# fine\n# caf\xe9\n")
        assert refused(home).startswith(f"{shown}:2: this is not UTF-8 text")

    def test_a_missing_file_loads_no_toml_reader(self, tmp_path: Path) -> None:
        """With no policy file, loading it imports no TOML reader."""
        import subprocess
        import sys

        code = (
            "import sys; from pathlib import Path; from wisp.policy.rules import load_policy;"
            f"load_policy(Path({str(tmp_path / 'h')!r}), {str(tmp_path)!r});"
            "print('tomllib' in sys.modules)"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.stdout.strip() == "False", out.stderr


class TestNames:
    def test_the_names_a_file_takes_are_wisps(self) -> None:
        """`[builtin]` takes the built-in rules' names and `harness` the harnesses' own, as
        the wings that hold them name them."""
        from wisp._entry import harness_names
        from wisp.agents import hookio
        from wisp.policy import builtin
        from wisp.policy.rules import BUILTIN_NAMES

        assert hookio.names() == harness_names()  # one table, read by both
        assert tuple(builtin.RULES) == BUILTIN_NAMES


# Loads the person's rules in a fresh interpreter; prints whether tomllib was loaded, and the
# rules' names (or the refusal).
KEPT_PROBE = """\
import sys
from pathlib import Path
from wisp.policy.rules import load_policy
policy = load_policy(Path(sys.argv[1]), None)
print("tomllib" in sys.modules, policy.refused or [r.name for r in policy.rules])
"""


def probe_load(home: Path) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", KEPT_PROBE, str(home)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


class TestKeptTree:
    def test_the_same_text_is_read_without_tomllib_the_second_time(self, tmp_path: Path) -> None:
        """The first load reads the file with tomllib and keeps its tree (0600) beside it;
        the next process loads the same rules without importing tomllib (~22 M instructions
        of every hook call, issue 57)."""
        home = tmp_path / "home"
        person(home, GOOD)
        first = probe_load(home)
        assert first.startswith("True ") and "'npm tests'" in first
        kept = home / TREE_FILE
        assert kept.stat().st_mode & 0o777 == 0o600
        assert probe_load(home) == "False" + first[len("True") :]

    def test_a_changed_file_is_read_again(self, tmp_path: Path) -> None:
        """A file edited since (even to the same size) is read with tomllib again: the kept
        tree serves only the very text it was read from. Control: unchanged, it serves."""
        home = tmp_path / "home"
        person(home, GOOD)
        probe_load(home)
        assert probe_load(home).startswith("False ")
        person(home, GOOD.replace('name = "npm tests"', 'name = "npm tasks"'))
        again = probe_load(home)
        assert again.startswith("True ") and "'npm tasks'" in again and "'npm tests'" not in again

    def test_a_kept_tree_that_is_not_the_persons_own_is_not_used(self, tmp_path: Path) -> None:
        """A kept tree others may write, or one that is not JSON, is ignored and the file
        read with tomllib, its rules as written (its examples checked); none is an error."""
        home = tmp_path / "home"
        person(home, GOOD)
        probe_load(home)
        kept = home / TREE_FILE
        forged = kept.read_text().replace('"npm tests"', '"forged"')
        kept.write_text(forged)
        kept.chmod(0o622)
        read = probe_load(home)
        assert read.startswith("True ") and "'npm tests'" in read and "forged" not in read
        kept.write_text("not json")
        kept.chmod(0o600)
        assert "'npm tests'" in probe_load(home)

    def test_a_file_with_a_date_keeps_no_tree(self, tmp_path: Path) -> None:
        """A value JSON would not give back as TOML read it (a date) keeps nothing: the
        file is read with tomllib every time, as before."""
        home = tmp_path / "home"
        person(home, "when = 2026-12-07\n")
        assert "no `when`" in refused(home)
        assert not (home / TREE_FILE).exists()
