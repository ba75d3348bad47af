"""`wisp exec -- CMD ARGS…`: the argv approved is what runs, in wisp's place; nothing runs
otherwise. Answered from a real terminal."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from helpers import AskingCommand, in_terminal, wisp_command


def wisp_exec(*args: str, cwd: Path) -> AskingCommand:
    """`wisp exec ARGS` in its own process in *cwd*, once it has filed its request."""
    return AskingCommand("exec", *args, cwd=cwd)


class TestExec:
    def test_approved_it_becomes_the_command(self, home: Path, tmp_path: Path) -> None:
        """Approved, the exact argv runs in wisp's place: its output is stdout's, its exit
        status the process's (7), and the request's command is the argv shell-quoted."""
        argv = ["sh", "-c", "echo ran > marker; echo out; exit 7"]
        running = wisp_exec("--", *argv, cwd=tmp_path)
        assert shlex.join(argv) in running.prompt
        listed = json.loads(
            subprocess.run(
                wisp_command("approvals", "pending", "--json"),
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        )
        assert [r["binding"]["command"] for r in listed] == [shlex.join(argv)]
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        code, out, err = running.result()
        assert code == 7, err
        assert out == "out\n"
        assert (tmp_path / "marker").read_text() == "ran\n"

    def test_denied_nothing_runs(self, home: Path, tmp_path: Path) -> None:
        """Denied, nothing runs (the marker it would make is not made) and it exits 1."""
        running = wisp_exec("--reason", "try", "--", "sh", "-c", "touch marker", cwd=tmp_path)
        assert in_terminal("approvals", "deny", running.id)[0] == 0
        code, out, err = running.result()
        assert code == 1 and out == ""
        assert "denied" in err and "not run" in err
        assert not (tmp_path / "marker").exists()

    def test_timed_out_nothing_runs(self, home: Path, tmp_path: Path) -> None:
        """Unanswered within --timeout, nothing runs and it exits 124."""
        running = wisp_exec("--timeout", "1", "--", "sh", "-c", "touch marker", cwd=tmp_path)
        code, _, err = running.result()
        assert code == 124, err
        assert not (tmp_path / "marker").exists()

    def test_a_command_not_found_exits_127(self, home: Path, tmp_path: Path) -> None:
        """Approved but not found: 127, as a shell says it."""
        running = wisp_exec("--", "no-such-command-wisp-test", cwd=tmp_path)
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        code, _, err = running.result()
        assert code == 127 and "command not found" in err
