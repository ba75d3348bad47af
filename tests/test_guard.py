"""The self-guard (wisp.agents.guard): a call that can reach `$WISP_HOME` or wisp's own
program, however it spells it, is put to the person and never allowed by a grant, even one
made for that very call."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pending import Scope
from wisp.agents.claude_code import Permission, answer_event
from wisp.agents.guard import Guard, Reached, program_paths
from wisp.agents.hookio import GUARD_SCRIPT
from wisp.stores.grants import GrantStore

ROOT = Path(__file__).resolve().parent.parent

USER = pwd.getpwuid(os.getuid())


class Layout:
    """A wisp home at BASE/.wisp inside the user's real home directory (so that `~user`
    reaches it), an agent working in BASE/proj/sub, and a link there to the home."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.wisp_home = base / ".wisp"
        self.cwd = base / "proj" / "sub"
        self.cwd.mkdir(parents=True)
        (self.cwd / "link").symlink_to(self.wisp_home)
        # The control: a link laid out the same way to a directory that is nobody's.
        self.elsewhere = base / "elsewhere"
        (self.elsewhere / "pending").mkdir(parents=True)
        (self.cwd / "other").symlink_to(self.elsewhere)
        self.rel = str(base.relative_to(USER.pw_dir))  # BASE from the user's home

    def spelled(self, template: str) -> str:
        return template.format(base=self.base, rel=self.rel, user=USER.pw_name)


@pytest.fixture
def layout(monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    if not os.access(USER.pw_dir, os.W_OK):
        pytest.skip(f"missing capability: a writable home directory ({USER.pw_dir})")
    base = Path(tempfile.mkdtemp(prefix=".wisp-guard-test-", dir=USER.pw_dir))
    try:
        made = Layout(base)
        monkeypatch.setenv("HOME", USER.pw_dir)
        monkeypatch.setenv("WISP_HOME", str(made.wisp_home))
        yield made
    finally:
        shutil.rmtree(base, ignore_errors=True)


ANSWER = "pending/0123abcd.answer.json"
# Shell commands, each of which writes into the wisp home or answers through wisp.
COMMANDS = [
    "echo y > ${{HOME}}/{rel}/.wisp/" + ANSWER,
    'echo y > "$HOME"/{rel}/.wisp/' + ANSWER,
    'echo y > ~/"{rel}/.wisp"/' + ANSWER,
    "echo y > ~{user}/{rel}/.wisp/" + ANSWER,
    "echo y > {base}//.wisp/" + ANSWER,
    "echo y > {base}/./.wisp/" + ANSWER,
    "echo y > ../../proj/../.wisp/" + ANSWER,
    "echo y > ../../.wisp/" + ANSWER,
    "echo y > /proc/self/cwd/../../.wisp/" + ANSWER,
    "echo y > ~/{rel}/.w?sp/" + ANSWER,
    "echo y > {base}/.w*/" + ANSWER,
    "echo y > link/f",
    "cp /dev/null link",
    "cd .. && cd .. && echo y > .wisp/" + ANSWER,
    # `..` after a link: `cd` collapses it first (logically), the kernel follows the link first.
    "cd link/../link && touch pending/zz",
    "pushd link/../link; touch pending/zz",
    "cd link/../link/pending && touch zz",
    "echo y > link/../link/" + ANSWER,
    "WISP_HOME=../../.wisp true",
    "python3 -c \"import pty; pty.spawn(['wisp','approvals','approve','0123abcd'])\"",
    "wisp relay --via tui",
    "ls $WISP_HOME/pending",
]
# Other tools' calls, by their inputs.
TOOLS = [
    ("Write", {"file_path": "../../.wisp/grants.json", "content": "[]"}),
    ("Write", {"file_path": "link/config.json", "content": "{{}}"}),
    ("Write", {"file_path": "link/../link/config.json", "content": "{{}}"}),
    ("Edit", {"file_path": "~/{rel}/.wisp/config.json", "old_string": "a", "new_string": "b"}),
    ("mcp__files__write", {"uri": "file://{base}/.wisp/" + ANSWER, "text": "y"}),
    ("mcp__files__write", {"uri": "file://{base}/%2Ewisp/" + ANSWER, "text": "y"}),
]


def _event(layout: Layout, tool: str, tool_input: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "session_id": "s-guard",
            "cwd": str(layout.cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    ).encode()


def _spelled_input(layout: Layout, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {k: layout.spelled(v) if isinstance(v, str) else v for k, v in tool_input.items()}


class TestEverySpellingIsAsked:
    @pytest.mark.parametrize("template", COMMANDS)
    def test_a_command_granted_always_is_still_asked(self, layout: Layout, template: str) -> None:
        """A shell command that reaches the wisp home by any spelling is filed for the person,
        saying why, even with an `always` grant for exactly that command."""
        command = layout.spelled(template)
        GrantStore(layout.wisp_home).add(
            scope=Scope.ALWAYS, command=command, cwd=str(layout.cwd), request="r1", user="u"
        )
        answer = answer_event(
            _event(layout, "Bash", {"command": command}), wait_s=0.2, home=layout.wisp_home
        )
        assert answer.permission is not Permission.ALLOW, answer.reason
        assert answer.request_id is not None, answer.reason

    @pytest.mark.parametrize(("tool", "template"), TOOLS)
    def test_a_tool_call_granted_always_is_still_asked(
        self, layout: Layout, tool: str, template: dict[str, Any]
    ) -> None:
        """A Write, Edit or MCP call whose path or URI reaches the wisp home (relative to the
        call's cwd, through a link, `~`, a `file://` URI) is asked, grant or none."""
        tool_input = _spelled_input(layout, template)
        GrantStore(layout.wisp_home).add_tool(
            scope=Scope.ALWAYS,
            tool=tool,
            tool_input=tool_input,
            cwd=str(layout.cwd),
            request="r1",
            user="u",
        )
        answer = answer_event(_event(layout, tool, tool_input), wait_s=0.2, home=layout.wisp_home)
        assert answer.permission is not Permission.ALLOW, answer.reason
        assert answer.request_id is not None, answer.reason


class TestGuard:
    def test_ordinary_calls_are_not_flagged(self, tmp_path: Path) -> None:
        """Commands and paths that do not reach the home are left to the grants: the guard
        is no reason to ask about everything."""
        guard = Guard(tmp_path / ".wisp", env={"HOME": str(tmp_path)})
        cwd = tmp_path / "proj"
        cwd.mkdir()
        for command in ("ls -la", "git status && pytest -q", "echo wisp > notes.txt", "cd .."):
            assert not guard.reaches(str(cwd), {"command": command}, command), command
        assert not guard.reaches(str(cwd), {"file_path": "src/main.py", "content": "x"})
        assert not guard.reaches(str(cwd), {"file_path": "../.wispy/x"})

    def test_running_inside_the_home_is_flagged(self, tmp_path: Path) -> None:
        """A call made from a working directory inside the home reaches it whatever it says."""
        home = tmp_path / ".wisp"
        (home / "pending").mkdir(parents=True)
        assert Guard(home, env={}).reaches(str(home / "pending"), {"command": "ls"}, "ls")

    def test_a_command_that_cannot_be_split_is_still_read(self, tmp_path: Path) -> None:
        """An open quote does not hide a path: the command is then split at white space."""
        guard = Guard(tmp_path / ".wisp", env={})
        command = f"echo 'y > {tmp_path}/.wisp/pending/a.answer.json"
        assert guard.reaches(str(tmp_path), {"command": command}, command)

    def test_a_nul_in_a_path_is_no_path(self, tmp_path: Path) -> None:
        """Text with a NUL names no file: it is not resolved, and nothing raises."""
        guard = Guard(tmp_path / ".wisp", env={})
        assert not guard.reaches(str(tmp_path), {"file_path": "a\x00b"})


def _reason(home: Path, request_id: str) -> str:
    """The reason a filed request shows the person."""
    from pending import Channel

    with Channel.open(home) as channel:
        return channel.status(request_id).request.binding.reason or ""


class TestLogicalAndPhysical:
    @pytest.mark.parametrize(
        "template",
        ["cd {link}/../{link} && touch pending/zz", "pushd {link}/../{link}; touch pending/zz"],
    )
    def test_a_dot_dot_after_a_link_is_read_as_the_shell_reads_it(
        self, layout: Layout, template: str
    ) -> None:
        """`cd link/../link` stays in `link` (bash's `cd` collapses `..` first): through the
        link to another directory the `always` grant covers the command (the control) and
        bash writes there; through the link to the wisp home, it is asked, grant or none.
        (All of it in one git project: a write outside the session's project is asked
        whatever the grant, issue 57.)"""
        (layout.base / ".git").mkdir()
        for link, target, allowed in (("other", layout.elsewhere, True), ("link", None, False)):
            command = template.format(link=link)
            GrantStore(layout.wisp_home).add(
                scope=Scope.ALWAYS, command=command, cwd=str(layout.cwd), request="r1", user="u"
            )
            answer = answer_event(
                _event(layout, "Bash", {"command": command}), wait_s=0.2, home=layout.wisp_home
            )
            assert (answer.permission is Permission.ALLOW) is allowed, answer.reason
            if target is not None:  # what the grant let run: bash writes through the link
                subprocess.run(["bash", "-c", command], cwd=layout.cwd, check=True, timeout=30)
                assert (target / "pending" / "zz").exists()
            else:
                assert answer.request_id is not None
                assert "wisp's own channel" in _reason(layout.wisp_home, answer.request_id)

    def test_either_reading_is_enough(self, tmp_path: Path) -> None:
        """A path guarded logically only (`link/../link`, `link` pointing into the home) and
        one guarded physically only (`up/..`, `up` a link to a folder inside the home, is the
        home itself to the kernel, its parent to `cd`): both reach it, as a path, after a
        `cd`, and as the call's own cwd."""
        home = tmp_path / ".wisp"
        (home / "pending").mkdir(parents=True)
        cwd = tmp_path / "proj"
        cwd.mkdir()
        (cwd / "link").symlink_to(home)
        (cwd / "up").symlink_to(home / "pending")
        (tmp_path / "elsewhere").mkdir()
        (cwd / "other").symlink_to(tmp_path / "elsewhere")  # the control's link
        guard = Guard(home, env={}, program=())
        assert not guard.reaches(str(cwd), {"file_path": "other/../other/x"})  # the control
        assert guard.reaches(str(cwd), {"file_path": "link/../link/x"})
        assert guard.reaches(str(cwd), {"file_path": "up/../x"})
        for command in ("cd link/../link; touch x", "cd up/.. && touch x"):
            assert guard.reaches(str(cwd), {"command": command}, command), command
        assert not guard.reaches(str(cwd / "other" / ".." / "other"), {"command": "ls"}, "ls")
        assert guard.reaches(str(cwd / "link" / ".." / "link"), {"command": "ls"}, "ls")


class Clone:
    """wisp installed editable in a clone, as the README's quickstart once did: its program
    `.venv/bin/wisp`, the venv's interpreter a link out of it, the package `wisp/` with the
    guard script; the agent works in the clone (and its `tests/`), a link `venv` to the venv."""

    def __init__(self, base: Path) -> None:
        self.root = base / "clone"
        self.venv = self.root / ".venv"
        (self.venv / "bin").mkdir(parents=True)
        self.program = self.venv / "bin" / "wisp"
        self.program.write_text("#!/bin/sh\n")
        self.program.chmod(0o755)
        (self.venv / "bin" / "python").symlink_to(base / "python3")
        self.package = self.root / "wisp"
        (self.package / "agents").mkdir(parents=True)
        self.guard_script = self.package / "agents" / "hookguard.sh"
        self.guard_script.write_text("exit 2\n")
        (self.root / "tests").mkdir()
        (self.root / "src").mkdir()
        (self.root / "venv").symlink_to(self.venv)
        self.paths = (str(self.program), str(self.venv), str(self.package), str(self.guard_script))


# Calls that can write wisp's program, from the clone (cwd: the clone, or `tests` in it).
PROGRAM_COMMANDS = [
    ("", "sed -i s/exit/true/ .venv/bin/wisp"),
    ("tests", "sed -i s/exit/true/ ../.venv/bin/wisp"),
    ("", "cp /dev/null .venv/bin/wisp"),
    ("", "printf x > wisp/agents/hookguard.sh"),
    ("tests", "cd ../wisp/agents && cp /dev/null hookguard.sh"),
    ("", "cd venv/../venv/bin && cp /dev/null wisp"),
    ("", "ln -sf /bin/true .venv/bin/python"),
    ("", "pip install --target .venv/lib/python3/site-packages evil"),
]
PROGRAM_TOOLS = [
    ("Edit", {"file_path": ".venv/bin/wisp", "old_string": "exit", "new_string": "true"}),
    ("Write", {"file_path": "wisp/agents/hookguard.sh", "content": "exit 0\n"}),
    ("MultiEdit", {"file_path": "wisp/agents/hookguard.sh", "edits": []}),
    ("NotebookEdit", {"notebook_path": "wisp/agents/../x.ipynb", "new_source": ""}),
    ("Write", {"file_path": "venv/../venv/bin/wisp", "content": ""}),
]
# The same kind of calls on the clone's own files: not wisp's program.
HARMLESS_COMMANDS = [
    ("", "sed -i s/a/b/ src/main.py"),
    ("tests", "cp /dev/null ../src/wisp"),
    ("", "cd src/../src && cp /dev/null main.py"),
    ("", "python3 -m pytest tests"),
]
HARMLESS_TOOLS = [
    ("Edit", {"file_path": "src/main.py", "old_string": "a", "new_string": "b"}),
    ("Write", {"file_path": "tests/hookguard.sh", "content": ""}),
]


class TestWispsProgram:
    @pytest.fixture
    def clone(self, tmp_path: Path) -> Clone:
        return Clone(tmp_path)

    def test_a_call_that_can_write_wisps_program_is_guarded(self, clone: Clone) -> None:
        """Shell commands and Edit, Write, MultiEdit and NotebookEdit calls that reach the
        `wisp` program, its venv, its package or the guard (relative, `..`, through a link,
        after a `cd`) reach wisp's program; the same calls on the clone's own files (the
        control, first) reach nothing."""
        guard = Guard(clone.root.parent / ".wisp", env={}, program=clone.paths)
        for where, command in HARMLESS_COMMANDS:
            assert guard.reaches(str(clone.root / where), {"command": command}, command) is None
        for tool_input in (i for _, i in HARMLESS_TOOLS):
            assert guard.reaches(str(clone.root), tool_input) is None
        for where, command in PROGRAM_COMMANDS:
            touch = guard.reaches(str(clone.root / where), {"command": command}, command)
            assert touch is not None and touch.reached is Reached.PROGRAM, command
        for tool_input in (i for _, i in PROGRAM_TOOLS):
            touch = guard.reaches(str(clone.root), tool_input)
            assert touch is not None and touch.reached is Reached.PROGRAM, tool_input

    def test_it_names_the_program_as_wisp_runs_it(self, clone: Clone) -> None:
        """What is reached is named as wisp names it (the program, not where a link leads)."""
        guard = Guard(clone.root.parent / ".wisp", env={}, program=clone.paths)
        touch = guard.reaches(str(clone.root), {"file_path": "venv/bin/wisp"})
        assert touch is not None and touch.path == str(clone.program)

    def test_a_program_path_nobody_can_write_is_left_alone(self, tmp_path: Path) -> None:
        """An interpreter the person cannot write (a system one) is not guarded: a call
        naming it reaches nothing of wisp's; one they can write is."""
        if os.getuid() == 0:
            pytest.skip("missing capability: a user who cannot write /usr/bin (not root)")
        guard = Guard(tmp_path / ".wisp", env={}, program=("/usr/bin/env", str(tmp_path)))
        assert guard.reaches("/", {"command": "/usr/bin/env"}, "/usr/bin/env") is None
        assert guard.reaches("/", {"file_path": str(tmp_path / "x")}) is not None

    def test_this_process_guards_its_own_install(self) -> None:
        """By default the guard protects this process's own install: its venv, wisp's and the
        channel's package folders and the guard script beside it."""
        paths = program_paths()
        assert sys.prefix in paths and str(ROOT / "wisp") in paths
        assert str(ROOT / "pending") in paths
        assert str(GUARD_SCRIPT) in paths

    @pytest.mark.parametrize(("tool", "tool_input"), PROGRAM_TOOLS[:4])
    def test_a_grant_never_covers_a_write_to_this_wisp(
        self, home: Path, tmp_path: Path, tool: str, tool_input: dict[str, Any]
    ) -> None:
        """An agent working in this very clone (the venv and package this hook runs) edits
        wisp's program: with an `always` grant for exactly that call it is still filed, and
        its request says it touches wisp's own program; the same grant for a call on the
        clone's own files lets that run (the control, first: a write in a git project, which
        the built-in `project-edits` rule allows, grant or not)."""
        project = tmp_path / "project"
        (project / ".git").mkdir(parents=True)
        control = {"file_path": str(project / "notes.txt"), "content": "x"}
        for cwd, call_tool, call_input in (
            (project, "Write", control),
            (ROOT, tool, tool_input),
        ):
            GrantStore(home).add_tool(
                scope=Scope.ALWAYS,
                tool=call_tool,
                tool_input=call_input,
                cwd=str(cwd),
                request="r1",
                user="u",
            )
            data = json.dumps(
                {
                    "session_id": "s-program",
                    "cwd": str(cwd),
                    "hook_event_name": "PreToolUse",
                    "tool_name": call_tool,
                    "tool_input": call_input,
                }
            ).encode()
            answer = answer_event(data, wait_s=0.2, home=home)
            if call_input is control:
                assert answer.permission is Permission.ALLOW, answer.reason
                continue
            assert answer.permission is not Permission.ALLOW, answer.reason
            assert answer.request_id is not None
            reason = _reason(home, answer.request_id)
            assert "wisp's own program" in reason and str(ROOT) in reason, reason
