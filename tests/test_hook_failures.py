"""What a hook says when it cannot decide: the deny's reason says what happened and what to
do — a NUL byte in a path, an audit log wisp may not append to, too few open files — never
an exception's name. Real `wisp hook claude-code` processes."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest
from helpers import wisp_command

# Few enough open files that the hook's watch cannot start once the request is filed (it
# then withdraws it): measured, 16 leaves the interpreter room to start and to file.
FEW_OPEN_FILES = 16


def _hook(home: Path, event: dict[str, object], **popen: object) -> dict[str, object]:
    """The hook's decision (its stdout's JSON), after checking it blocked (exit 2)."""
    done = subprocess.run(
        wisp_command("hook", "claude-code", "--wait", "1"),
        input=json.dumps(event).encode(),
        capture_output=True,
        env={**os.environ, "WISP_HOME": str(home)},
        timeout=60,
        **popen,  # type: ignore[arg-type]
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    said: dict[str, object] = json.loads(done.stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    return said


def _bash(cwd: str) -> dict[str, object]:
    return {
        "session_id": "s1",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "make"},
    }


class TestWhatAHookSaysWhenItCannotDecide:
    def test_a_nul_in_the_working_directory(self, home: Path) -> None:
        """A cwd with a NUL byte is denied saying so, not as `ValueError: embedded null
        byte`."""
        reason = str(_hook(home, _bash("/tmp/a\x00b"))["permissionDecisionReason"])
        assert "NUL byte" in reason and "ValueError" not in reason, reason

    def test_a_nul_in_an_argument(self, home: Path) -> None:
        """An edit whose path holds a NUL byte is denied saying so; the same edit without it
        is not refused so (the control: it is put to the person, and nobody answers)."""
        edit = {**_bash("/tmp"), "tool_name": "Write", "tool_input": {"file_path": "/tmp/a"}}
        done = subprocess.run(
            wisp_command("hook", "claude-code", "--wait", "0.2"),
            input=json.dumps(edit).encode(),
            capture_output=True,
            env={**os.environ, "WISP_HOME": str(home)},
            timeout=60,
        )
        assert b"permissionDecision" in done.stdout and b"NUL byte" not in done.stdout, done
        edit["tool_input"] = {"file_path": "/tmp/a\x00b", "content": "x"}
        reason = str(_hook(home, edit)["permissionDecisionReason"])
        assert "NUL byte" in reason and "ValueError" not in reason, reason

    def test_an_audit_log_that_is_a_fifo(self, home: Path) -> None:
        """A FIFO where the audit log goes is denied naming what is wrong and the fix, not
        as `AuditLogUnsafe: …`."""
        (home / "logs").mkdir(parents=True, mode=0o700)
        home.chmod(0o700)
        os.mkfifo(home / "logs" / "audit.jsonl", 0o600)
        reason = str(_hook(home, _bash("/tmp"))["permissionDecisionReason"])
        assert "AuditLogUnsafe" not in reason and "audit" in reason, reason

    def test_too_few_open_files(self, home: Path) -> None:
        """Out of open files, the deny names `ulimit -n` and how to raise it, and does not
        send the person to `wisp doctor` (the channel is not at fault)."""

        def few_files() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (FEW_OPEN_FILES, FEW_OPEN_FILES))

        said = _hook(home, _bash("/tmp"), preexec_fn=few_files)
        reason = str(said["permissionDecisionReason"])
        assert "ulimit -n" in reason and "wisp doctor" not in reason, reason

    @pytest.mark.parametrize(
        ("event", "said"),
        [
            ({}, "the event has no `hook_event_name`"),
            ({"hook_event_name": None}, "the event has no `hook_event_name`"),
            ({"hook_event_name": 7}, "`hook_event_name` is not text"),
            ({"hook_event_name": ["PreToolUse"]}, "`hook_event_name` is not text"),
            (
                {"hook_event_name": "Stop"},
                "wisp answers PreToolUse, PermissionRequest, SessionEnd, not 'Stop'",
            ),
        ],
        ids=["empty", "null", "a-number", "a-list", "another-event"],
    )
    def test_an_event_it_does_not_answer(
        self, home: Path, event: dict[str, object], said: str
    ) -> None:
        """`echo '{}' | wisp hook claude-code` and kin: denied saying what the event lacks
        and which events to register it for, never Python's `None` or a list's repr (the
        control: an event of another name is named as sent)."""
        reason = str(_hook(home, event)["permissionDecisionReason"])
        assert said in reason and "--print-settings" in reason, reason
        assert "None" not in reason and "[" not in reason, reason
