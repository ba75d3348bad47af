"""The policy attacked (issue 57): an agent runs as the person and wants a dangerous call
through without the person being asked. Each hole found is a test here, beside its control —
the harmless twin the same setup lets through by rule:

- a read outside the project (`cat ~/.ssh/id_rsa`, `grep -r . ~/.aws`, through a link in the
  project, `git -C /elsewhere`, `grep -R` following links) was allowed by `read-only`;
- a repository whose own `.git/config` makes git run a program (`core.pager`,
  `core.fsmonitor`, `diff.external`, a textconv, a filter, an include) had `git status`,
  `git diff`, `git log` allowed by `read-only`;
- a dangerous long option abbreviated (`sort --compress=sh`, `sort --outp=~/x`, `git grep
  --op`) slipped past the option lists; `rg --hostname-bin` runs a program; `tail -f` never
  ends;
- a glob tool's pattern outside the project (`Glob` `/root/.ssh/*`) was allowed;
- a "this command with any arguments" grant (`cp *`) covered a write into `.git/hooks/`.

Decided in process by :func:`wisp.policy.decide.explain` (what `wisp policy check` prints),
and through the real `wisp hook claude-code` for one of each kind.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import audit_records, wisp_command

from pending import Scope
from wisp._entry import EntryPoint
from wisp.kinds.standing import StandingGrants
from wisp.policy.decide import Call, Decision, explain
from wisp.policy.reading import Effect, git_config_runs_text
from wisp.stores.grants import GrantStore, Width

QUICK_WAIT = "1"  # seconds a hook waits for the person in a test that expects it to ask
REQUEST = "0123456789abcdef"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A real git repository (`git init`: the config git itself writes), with `src/a.py`,
    a README, and a link `out` that leads out of the project."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README.md").write_text("hello\n")
    (root / "src" / "a.py").write_text("x = 1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret").write_text("key\n")
    (root / "out").symlink_to(elsewhere)
    return root


def check(home: Path, root: Path, command: str | None = None, **tool: Any) -> Decision:
    """What the policy decides of a shell line (or a tool call) run in *root*."""
    if command is not None:
        call = Call("claude-code", None, str(root), str(root), "Bash", Effect.SHELL, (), command)
    else:
        effect, paths = tool["effect"], tuple(tool["paths"])
        call = Call("claude-code", None, str(root), str(root), tool["name"], effect, paths)
    grants = None
    if tool.get("grants"):
        grants = StandingGrants(home, EntryPoint.HOOK)
    return explain(call, home=home, grants=grants)


def said(decision: Decision) -> str:
    """The verdict and what decided it, as one string: `allow rule`, `ask no-rule`, …"""
    return f"{decision.verdict.value} {decision.decider.value}"


def hook(data: dict[str, Any], *args: str) -> str:
    """`wisp hook claude-code ARGS` run on *data*: its answer, allow, deny or ask."""
    done = subprocess.run(
        wisp_command("hook", "claude-code", *args),
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=60,
    )
    return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"])


def event(root: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": "s-holes",
        "cwd": str(root),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_0001",
    }


class TestReadsOutsideTheProject:
    @pytest.mark.parametrize(
        "line",
        [
            "cat ~/.ssh/id_rsa",
            "grep -r . ~/.aws",
            "cat ../elsewhere/secret",
            "cat out/secret",
            "ls out/",
            "cat /etc/passwd",
            "head -c 99 /proc/self/environ",
            "cat $F",
            "cat {/etc/passwd,README.md}",
            "echo ~/.ssh/*",
            "git -C .. status",
            "git diff --no-index ../elsewhere/secret README.md",
            "grep -R key .",
            "cd src && cat ../../elsewhere/secret",
            "date -f ~/.ssh/id_rsa",
        ],
    )
    def test_a_read_outside_is_asked_but_not_must_ask(
        self, home: Path, project: Path, line: str
    ) -> None:
        """`cat README.md`, `grep -rn "/api" src` and `ls /usr/bin` run by rule (the
        control); the same commands reading the person's home, another folder, a link in the
        project that leads out, a word wisp cannot know, are asked — as no rule allowing
        them, not as a must-ask class: a read changes nothing, so a grant may cover it."""
        for harmless in ("cat README.md", 'grep -rn "/api" src', "ls /usr/bin", "echo ~"):
            assert said(check(home, project, harmless)) == "allow rule", harmless
        decision = check(home, project, line)
        assert said(decision) == "ask no-rule", decision
        assert "outside the project" in decision.reason or "links" in decision.reason

    def test_claude_codes_task_output_is_read_but_not_through_a_link(
        self, home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`tail -30 $TMPDIR/claude-UID/…/tasks/ID.output` (Claude Code's record of what a
        background command printed) runs by rule; a link there that leads to the person's
        files, and the same path in another `TMPDIR` folder, are asked."""
        tmp = tmp_path / "tmp"
        tasks = tmp / f"claude-{os.getuid()}" / "-project" / "tasks"
        tasks.mkdir(parents=True)
        (tasks / "b1.output").write_text("ok\n")
        (tasks / "b2.output").symlink_to(tmp_path / "elsewhere" / "secret")
        monkeypatch.setenv("TMPDIR", str(tmp))
        assert said(check(home, project, f"tail -30 {tasks / 'b1.output'}")) == "allow rule"
        assert said(check(home, project, f"tail -30 {tasks / 'b2.output'}")) == "ask no-rule"
        (tmp / "other").mkdir()
        monkeypatch.setenv("TMPDIR", str(tmp / "other"))
        assert said(check(home, project, f"tail -30 {tasks / 'b1.output'}")) == "ask no-rule"

    def test_the_hook_asks_for_a_key_in_home(self, home: Path, project: Path) -> None:
        """Through the real hook: `cat README.md` is allowed at once; `cat ~/.ssh/id_rsa` is
        filed for the person, and the record says no rule allowed it."""
        assert hook(event(project, "Bash", {"command": "cat README.md"})) == "allow"
        data = event(project, "Bash", {"command": "cat ~/.ssh/id_rsa"})
        assert hook(data, "--wait", QUICK_WAIT) == "ask"
        record = [r for r in audit_records(home) if r["event"] == "call.decided"][-1]
        assert (record["decider"], record["asked"]) == ("timeout", "no-rule")

    def test_a_glob_tools_pattern_outside_is_asked(self, home: Path, project: Path) -> None:
        """A `Glob` of `**/*.py` runs by rule; a `Glob` whose pattern leaves the project
        (`/root/.ssh/*`, `{src,/etc}/*`) is asked."""
        hook_ok = event(project, "Glob", {"pattern": "**/*.py"})
        assert hook(hook_ok) == "allow"
        for pattern in ("/root/.ssh/*", "{src,/etc}/*"):
            data = event(project, "Glob", {"pattern": pattern})
            assert hook(data, "--wait", QUICK_WAIT) == "ask", pattern


class TestProgramsPlantedInTheProject:
    def test_a_read_only_name_found_in_the_project_by_path_is_asked(
        self, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With the project's `bin/` on PATH (direnv's `PATH_add bin`) and nothing there,
        `ls` runs by rule (the control); once an edit the rule allows has put an `ls` in
        `bin/`, `ls` is asked — it would run the project's file — while `cat` and bash's own
        `echo` still run. A relative entry (`.`) finds it from the command's directory."""
        bin_ = project / "bin"
        bin_.mkdir()
        monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
        assert said(check(home, project, "ls")) == "allow rule"
        (bin_ / "ls").write_text("#!/bin/sh\nid\n")
        (bin_ / "ls").chmod(0o755)
        decision = check(home, project, "ls -la")
        assert said(decision) == "ask no-rule"
        assert "a file in the project" in decision.reason
        assert said(check(home, project, "cat README.md && echo hi")) == "allow rule"
        monkeypatch.setenv("PATH", f".{os.pathsep}{os.environ['PATH'].split(os.pathsep, 1)[1]}")
        assert said(check(home, project, "ls")) == "allow rule"
        assert said(check(home, project, "cd bin && ls")) == "ask no-rule"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


class TestGitConfigThatRunsPrograms:
    @pytest.mark.parametrize(
        "key, value",
        [
            ("core.pager", "sh -c id"),
            ("core.fsmonitor", "./monitor.sh"),
            ("diff.external", "./diff.sh"),
            ("diff.x.textconv", "./conv.sh"),
            ("filter.x.clean", "./clean.sh"),
            ("pager.log", "./pager.sh"),
            ("gpg.program", "./gpg.sh"),
            ("core.worktree", "/"),
            ("include.path", "../elsewhere/config"),
            ("includeIf.gitdir:/.path", "x"),
        ],
    )
    def test_git_reads_are_asked_in_a_repo_whose_config_runs_a_program(
        self, home: Path, project: Path, key: str, value: str
    ) -> None:
        """`git status`, `git diff`, `git log` run by rule in a repository as `git init`
        made it (the control); once its own `.git/config` sets a key that can make git run
        a program or read elsewhere, each is asked, saying which key."""
        lines = ("git status", "git diff", "git log --oneline", "ls && git status")
        for line in lines:
            assert said(check(home, project, line)) == "allow rule", line
        git(project, "config", key, value)
        for line in lines:
            decision = check(home, project, line)
            assert said(decision) == "ask no-rule", (line, decision)
            assert "can make git run a program" in decision.reason
        assert said(check(home, project, "ls")) == "allow rule"

    def test_a_submodules_config_and_a_worktrees_are_read(
        self, home: Path, project: Path, tmp_path: Path
    ) -> None:
        """A submodule's own config (`.git/modules/NAME/config`) is read too, and a worktree
        (`.git` a file naming its git directory) is read through to its repository's."""
        module = project / ".git" / "modules" / "lib"
        module.mkdir(parents=True)
        (module / "config").write_text("[core]\n\tbare = false\n")
        assert said(check(home, project, "git status")) == "allow rule"
        (module / "config").write_text("[core]\n\tfsmonitor = ./m.sh\n")
        assert said(check(home, project, "git status")) == "ask no-rule"
        (module / "config").unlink()
        git(project, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
            "--allow-empty", "-m", "x")  # fmt: skip
        tree = tmp_path / "tree"
        git(project, "worktree", "add", "-q", str(tree))
        assert said(check(home, tree, "git status")) == "allow rule"
        git(project, "config", "core.pager", "./p.sh")
        assert said(check(home, tree, "git status")) == "ask no-rule"

    def test_the_hook_asks_for_git_status_where_the_config_runs_a_program(
        self, home: Path, project: Path
    ) -> None:
        """Through the real hook: `git status` allowed, then asked once the repository's
        config sets `core.fsmonitor`."""
        assert hook(event(project, "Bash", {"command": "git status"})) == "allow"
        git(project, "config", "core.fsmonitor", "./monitor.sh")
        data = event(project, "Bash", {"command": "git status"})
        assert hook(data, "--wait", QUICK_WAIT) == "ask"

    @pytest.mark.parametrize(
        "text, found",
        [
            ('[core]\n\tbare = false\n[remote "origin"]\n\turl = x\n', None),
            ("[core] pager = sh\n", "core.pager"),
            ("[CORE]\n\tPAGER = sh\n", "core.pager"),
            ('[diff "x"]\n\ttextConv = sh\n', "diff.textconv"),
            ("[core.sub]\n\tfsmonitor\n", "core.fsmonitor"),
            ('[includeIf "gitdir:/"]\n\tpath = x\n', "[includeif]"),
            ("[core\n", "a section header that does not close"),
        ],
    )
    def test_the_config_is_read_conservatively(self, text: str, found: str | None) -> None:
        """A key on its header's line, any case, a subsection, a key with no value, an
        include, a header that does not close: each is found (a plain config: nothing)."""
        assert git_config_runs_text(text) == found


class TestDangerousOptionsAbbreviated:
    @pytest.mark.parametrize(
        "line, control",
        [
            ("sort --compress=./x README.md", "sort -u README.md"),
            ("sort --compress-prog=./x README.md", "sort -r README.md"),
            ("git grep --op foo", "git grep foo"),
            ("git log --outp=x", "git diff --text"),
            ("rg --hostname-bin=./x foo", "rg foo"),
            ("tail -f README.md", "tail -n 5 README.md"),
            ("tail --follow=name README.md", "tail README.md"),
        ],
    )
    def test_an_abbreviated_or_new_option_is_not_read_only(
        self, home: Path, project: Path, line: str, control: str
    ) -> None:
        """GNU's and git's option readers take any unambiguous prefix of a long option:
        `--compress` is `--compress-program`. The command without it runs by rule; with
        it, asked."""
        assert said(check(home, project, control)) == "allow rule", control
        assert said(check(home, project, line)) == "ask no-rule", line

    def test_an_abbreviated_output_option_is_a_write_outside(
        self, home: Path, project: Path
    ) -> None:
        """`sort --outp=~/x` writes the person's home: a must-ask class, as `--output=` is;
        `sort --outp=src/x` writes in the project (asked, not must-ask)."""
        assert said(check(home, project, "sort --outp=src/x a")) == "ask no-rule"
        for line in ("sort --outp=/tmp/x a", "sort --out /tmp/x a", "sort --o=/tmp/x a"):
            assert said(check(home, project, line)) == "ask must-ask", line


class TestWideGrantsAndProtectedPlaces:
    def test_a_command_grant_never_reaches_a_protected_place(
        self, home: Path, project: Path
    ) -> None:
        """A grant of `cp *` (this command with any arguments) covers `cp a src/b`; it does
        not cover `cp a .git/hooks/pre-commit`, `cp a .envrc` or `cp a .wisp/policy.toml`:
        files that run or decide by themselves are covered only by a grant of that very
        line."""
        GrantStore(home).add_wide(
            scope=Scope.ALWAYS,
            width=Width.COMMAND,
            cwd=str(project),
            request=REQUEST,
            user="me",
            prefix=("cp",),
        )
        assert said(check(home, project, "cp a src/b", grants=True)) == "allow grant"
        for target in (".git/hooks/pre-commit", ".envrc", ".wisp/policy.toml"):
            decision = check(home, project, f"cp a {target}", grants=True)
            assert said(decision) == "ask no-rule", target
        GrantStore(home).add(
            scope=Scope.ALWAYS, command="cp a .envrc", cwd=str(project), request=REQUEST, user="me"
        )
        assert said(check(home, project, "cp a .envrc", grants=True)) == "allow grant"

    def test_a_read_outside_in_a_list_is_not_carried_by_a_command_grant(
        self, home: Path, project: Path
    ) -> None:
        """With `npm test *` granted, `npm test && cat README.md` runs (the grant covers
        `npm test`, and `cat README.md` reads the project: the control); `npm test && cat
        ~/.ssh/id_rsa` is asked — a read outside is a part no grant covers — and so is
        `cp a .git/hooks/x && ls` under a `cp *` grant."""
        for prefix in (("npm", "test"), ("cp",)):
            GrantStore(home).add_wide(
                scope=Scope.ALWAYS,
                width=Width.COMMAND,
                cwd=str(project),
                request=REQUEST,
                user="me",
                prefix=prefix,
            )
        assert said(check(home, project, "npm test && cat README.md", grants=True)) == (
            "allow grant"
        )
        for line in ("npm test && cat ~/.ssh/id_rsa", "cp a .git/hooks/x && ls"):
            assert said(check(home, project, line, grants=True)) == "ask no-rule", line
