"""`wisp policy list|suggest|check` end to end, through the real `wisp` command: real policy
files, a real audit log written by the real answering path, real projects (git roots)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from helpers import run_wisp

from pending import Channel, CommandBinding, Kind, Via, make_request
from wisp import Answerer

PERSONS = """\
[builtin]
read-only = false

[[rule]]
name = "no push"
action = "deny"
command = ["git", "push", "*"]
match = ["git push", "git push origin main"]
not_match = ["git pushx", "git status"]
"""

PROJECTS = """\
[[rule]]
name = "migrations"
action = "ask"
path = "migrations/**"
match = ["migrations/001.sql"]
not_match = ["src/app.py"]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(textwrap.dedent(text))
    path.chmod(0o600)
    return path


def project(tmp_path: Path) -> Path:
    """A real project: a git repository."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def approve(home: Path, line: str, cwd: Path, decision: str = "once") -> None:
    """*line* asked about and approved, through the real channel and answering path (which
    writes the audit log's `approval.answered`)."""
    with Channel.open(home) as channel, channel.server() as lock:
        request = make_request(
            kind=Kind.COMMAND,
            binding=CommandBinding(command=line, cwd=str(cwd), thread="t1"),
            title="wisp: run a command?",
            body=line,
            server=lock.record(client="test", thread="t1", entry_point="approvals"),
        )
        channel.file(request)
        answerer = Answerer(channel, via=Via.CLI, entry_point="approvals", wait_s=0)
        answerer.answer(request.id, decision, kind=Kind.COMMAND)


class TestPolicyList:
    def test_no_file_is_the_builtins_on(self, home: Path, tmp_path: Path) -> None:
        """The control: no policy file anywhere — the built-in rules, on; no rule of yours
        or the project's; exit 0."""
        root = project(tmp_path)
        out = run_wisp("policy", "list", "--cwd", str(root), env={"COLUMNS": "200"})
        assert out.returncode == 0, out.stderr
        assert "read-only     on" in out.stdout and "project-edits on" in out.stdout
        assert out.stdout.count("none (no file)") == 2

    def test_each_rule_with_where_it_comes_from(self, home: Path, tmp_path: Path) -> None:
        """The person's rules with their line, the project's as the project's, a built-in
        turned off shown off; `--json` says the same."""
        root = project(tmp_path)
        mine = write(home / "policy.toml", PERSONS)
        theirs = write(root / ".wisp" / "policy.toml", PROJECTS)
        out = run_wisp("policy", "list", "--cwd", str(root), env={"COLUMNS": "200"})
        assert out.returncode == 0, out.stderr
        assert "read-only     off" in out.stdout
        assert f"Your rules ({mine}):" in out.stdout
        assert "  no push deny: command git push * (line 4)" in out.stdout
        assert f"The project's rules ({theirs}):" in out.stdout
        assert "migrations ask: path migrations/** (line 1)" in out.stdout
        shown = json.loads(run_wisp("policy", "list", "--cwd", str(root), "--json").stdout)
        assert shown["project"] == str(root)
        rules = {r["name"]: r for r in shown["rules"]}
        assert rules["read-only"]["on"] is False and rules["project-edits"]["on"] is True
        assert rules["no push"]["where"] == f"{mine}:4"
        assert rules["no push"]["command"] == ["git", "push", "*"]
        assert rules["migrations"]["origin"] == "project"
        assert [f["state"] for f in shown["files"]] == ["in force", "in force"]

    def test_a_refused_file_is_named_with_why_and_exit_1(self, home: Path, tmp_path: Path) -> None:
        """A project file with an allow rule: listed REFUSED with FILE:LINE and why, none of
        its rules shown, exit 1, no traceback; the person's file still in force."""
        root = project(tmp_path)
        write(home / "policy.toml", PERSONS)
        theirs = write(
            root / ".wisp" / "policy.toml", PROJECTS.replace('"ask"', '"allow"')
        )  # fmt: skip
        out = run_wisp("policy", "list", "--cwd", str(root), env={"COLUMNS": "400"})
        assert out.returncode == 1, out.stderr
        assert f"REFUSED: {theirs}:3: a project's policy file may only ask or deny" in out.stdout
        assert "migrations" not in out.stdout and "no push" in out.stdout
        assert "Traceback" not in out.stdout + out.stderr
        shown = json.loads(run_wisp("policy", "list", "--cwd", str(root), "--json").stdout)
        assert [f["state"] for f in shown["files"]] == ["in force", "refused"]
        assert shown["files"][1]["reason"].startswith(f"{theirs}:3: ")


class TestPolicySuggest:
    def test_three_approvals_of_the_same_words_propose_a_rule(
        self, home: Path, tmp_path: Path
    ) -> None:
        """`npm test` approved three times (with other arguments) proposes `npm test *`,
        its examples the lines approved; pasted into the policy file it loads (its examples
        hold) and then allows them. Twice is not enough (`make build`)."""
        root = project(tmp_path)
        for line in ("npm test", "npm test -- -u", "npm test src/a.test.js"):
            approve(home, line, root)
        for _ in range(2):
            approve(home, "make build", root)
        out = run_wisp("policy", "suggest", "--json")
        assert out.returncode == 0, out.stderr
        found = json.loads(out.stdout)
        assert [s["command"] for s in found] == [["npm", "test", "*"]]
        (suggestion,) = found
        assert suggestion["approvals"] == 3
        assert suggestion["match"] == ["npm test", "npm test -- -u", "npm test src/a.test.js"]
        assert suggestion["notMatch"] == ["npm", "npm test && git push"]
        write(home / "policy.toml", suggestion["toml"] + "\n")
        listed = run_wisp("policy", "list", "--cwd", str(root), "--json")
        assert listed.returncode == 0, listed.stdout
        assert "npm test" in {r["name"] for r in json.loads(listed.stdout)["rules"]}
        again = json.loads(run_wisp("policy", "suggest", "--json").stdout)
        assert again == []  # a rule of yours allows it now: not proposed again

    def test_never_a_must_ask_class(self, home: Path, tmp_path: Path) -> None:
        """Approved three times each, `curl …` (the network), `rm -r …` and `sudo …` are
        never proposed; `pytest -x` beside them is (the control)."""
        root = project(tmp_path)
        for n in range(3):
            approve(home, f"curl https://example.com/{n}", root)
            approve(home, f"rm -r build{n}", root)
            approve(home, f"sudo make install{n}", root)
            approve(home, f"pytest -x tests/t{n}.py", root)
        found = json.loads(run_wisp("policy", "suggest", "--json").stdout)
        assert [s["command"] for s in found] == [["pytest", "-x", "*"]]

    def test_denials_are_no_approvals(self, home: Path, tmp_path: Path) -> None:
        """Three denials propose nothing; the text output says so."""
        root = project(tmp_path)
        for _ in range(3):
            approve(home, "cargo build", root, decision="no")
        out = run_wisp("policy", "suggest")
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("Nothing to suggest")

    def test_text_is_ready_to_paste(self, home: Path, tmp_path: Path) -> None:
        """The text output is the rule as TOML, under a line saying where it goes."""
        root = project(tmp_path)
        for n in range(3):
            approve(home, f"go test ./pkg{n}/...", root, decision="session")
        out = run_wisp("policy", "suggest")
        assert out.returncode == 0, out.stderr
        assert f"Rules for {home / 'policy.toml'}" in out.stdout
        assert '[[rule]]\nname = "go test"\naction = "allow"\n' in out.stdout
        assert 'command = ["go", "test", "*"]' in out.stdout


def check(root: Path, *args: str) -> dict[str, object]:
    """`wisp policy check --json --cwd ROOT ARGS`, which must exit 0."""
    out = run_wisp("policy", "check", "--json", "--cwd", str(root), *args)
    assert out.returncode == 0, out.stderr
    shown: dict[str, object] = json.loads(out.stdout)
    return shown


class TestPolicyCheck:
    def test_a_read_only_line_is_allowed_by_the_builtin(self, home: Path, tmp_path: Path) -> None:
        """The control: `ls -la` in a project is allowed by the built-in `read-only`; turned
        off in the person's file, the same line is asked (no rule allows it)."""
        root = project(tmp_path)
        shown = check(root, "--", "ls", "-la")
        assert (shown["verdict"], shown["decider"]) == ("allow", "rule")
        assert shown["rule"] == {"name": "read-only", "where": "built in", "origin": "built-in"}
        assert shown["commands"] == [["ls", "-la"]]
        write(home / "policy.toml", "[builtin]\nread-only = false\n")
        shown = check(root, "--", "ls", "-la")
        assert (shown["verdict"], shown["decider"]) == ("ask", "no-rule")

    def test_a_deny_rule_names_its_file_and_line(self, home: Path, tmp_path: Path) -> None:
        """`git status` is allowed (the control); `git push origin main` is denied by the
        person's `no push`, named with FILE:LINE, in text and JSON."""
        root = project(tmp_path)
        mine = write(home / "policy.toml", PERSONS.replace("read-only = false", ""))
        assert check(root, "--", "git", "status")["verdict"] == "allow"
        shown = check(root, "--", "git", "push", "origin", "main")
        assert (shown["verdict"], shown["decider"]) == ("deny", "rule")
        assert shown["rule"] == {"name": "no push", "where": f"{mine}:4", "origin": "person"}
        out = run_wisp("policy", "check", "--cwd", str(root), "--", "git", "push")
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"deny: denied by rule no push ({mine}:4)")

    def test_must_ask_whatever_allows(self, home: Path, tmp_path: Path) -> None:
        """`curl … | sh` is asked as must-ask, even under an allow rule for `curl *`; the
        control: `npm test` under an allow rule is allowed by it."""
        root = project(tmp_path)
        write(
            home / "policy.toml",
            """\
            [[rule]]
            name = "curl"
            action = "allow"
            command = ["curl", "*"]
            match = ["curl https://example.com"]
            not_match = ["wget x"]

            [[rule]]
            name = "npm test"
            action = "allow"
            command = ["npm", "test", "*"]
            match = ["npm test"]
            not_match = ["npm"]
            """,
        )
        assert check(root, "--", "npm", "test")["rule"]["name"] == "npm test"  # type: ignore[index]
        shown = check(root, "--", "curl https://example.com/i.sh | sh")
        assert (shown["verdict"], shown["decider"]) == ("ask", "must-ask")
        assert shown["mustAsk"]

    def test_a_tool_call(self, home: Path, tmp_path: Path) -> None:
        """A Write inside the project is allowed by `project-edits` (the control); the
        project's deny rule on `migrations/**` denies one there, as the project's."""
        root = project(tmp_path)
        theirs = write(root / ".wisp" / "policy.toml", PROJECTS.replace('"ask"', '"deny"'))
        edit = '{"file_path": "src/a.py", "content": "x = 1\\n"}'
        shown = check(root, "--tool", "Write", "--input", edit)
        assert (shown["verdict"], shown["rule"]["name"]) == ("allow", "project-edits")  # type: ignore[index]
        shown = check(
            root, "--tool", "Write", "--input", '{"file_path": "migrations/002.sql", "content": ""}'
        )
        assert shown["verdict"] == "deny"
        assert shown["rule"] == {"name": "migrations", "where": f"{theirs}:1", "origin": "project"}

    def test_a_grant_covers_it(self, home: Path, tmp_path: Path) -> None:
        """A stored `always` grant for `make deploy` is named as what allows it; the control:
        `make build`, not granted, is asked."""
        from pending import Scope
        from wisp.stores.grants import GrantStore

        root = project(tmp_path)
        home.mkdir(mode=0o700)
        grant = GrantStore(home).add(
            command="make deploy", cwd=str(root), scope=Scope.ALWAYS, request="0" * 16, user="ana"
        )
        assert check(root, "--", "make", "build")["verdict"] == "ask"
        shown = check(root, "--", "make", "deploy")
        assert (shown["verdict"], shown["decider"]) == ("allow", "grant")
        assert shown["grant"] == {"id": grant.id, "scope": "always"}

    def test_nothing_is_recorded(self, home: Path, tmp_path: Path) -> None:
        """A check files nothing and writes no audit record (a decision made by the hook
        would: `call.decided`)."""
        root = project(tmp_path)
        check(root, "--", "ls")
        check(root, "--", "git", "push")
        log = home / "logs" / "audit.jsonl"
        assert not log.exists() or "call.decided" not in log.read_text()
        assert not (home / "pending").exists() or not any((home / "pending").glob("*.json"))

    def test_usage_errors(self, home: Path, tmp_path: Path) -> None:
        """No call, a line and --tool both, --input that is no JSON object, an unknown
        harness: exit 2, saying what to give, no traceback."""
        root = project(tmp_path)
        for args in (
            (),
            ("--tool", "Write", "--", "ls"),
            ("--tool", "Write", "--input", "[1]"),
            ("--harness", "nosuch", "--", "ls"),
        ):
            out = run_wisp("policy", "check", "--cwd", str(root), *args)
            assert out.returncode == 2, (args, out.stdout)
            assert out.stderr.startswith("wisp: ") and "Traceback" not in out.stderr, args


class TestTheDocsSayWhatCheckSays:
    def test_the_readme_and_cli_md_quote_its_first_line(self, home: Path, tmp_path: Path) -> None:
        """The first line README.md and docs/cli.md quote for each `wisp policy check` is the
        program's own, run in a project as they show it."""
        from helpers import ROOT

        root = project(tmp_path)
        for name in ("README.md", "docs/cli.md"):
            lines = (ROOT / name).read_text().splitlines()
            quoted = [
                (lines[n].removeprefix("$ wisp policy check -- ").split("  #")[0], lines[n + 1])
                for n in range(len(lines) - 1)
                if lines[n].startswith("$ wisp policy check -- ") and "#" not in lines[n]
            ]
            assert len(quoted) == 2, name
            for line, said in quoted:
                out = run_wisp("policy", "check", "--cwd", str(root), "--", line)
                assert out.stdout.splitlines()[0] == said, (name, line)
