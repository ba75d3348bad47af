"""The self-guard (wisp.agents.guard): a call that can reach `$WISP_HOME`, however it spells
it, is put to the person and never allowed by a grant, even one made for that very call."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pending import Scope
from wisp.agents.claude_code import Permission, answer_event
from wisp.agents.guard import Guard
from wisp.stores.grants import GrantStore

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
    "WISP_HOME=../../.wisp true",
    "python3 -c \"import pty; pty.spawn(['wisp','approvals','approve','0123abcd'])\"",
    "wisp relay --via tui",
    "ls $WISP_HOME/pending",
]
# Other tools' calls, by their inputs.
TOOLS = [
    ("Write", {"file_path": "../../.wisp/grants.json", "content": "[]"}),
    ("Write", {"file_path": "link/config.json", "content": "{{}}"}),
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
