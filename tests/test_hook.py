"""`wisp hook claude-code`: Claude Code's documented hook events fed to a real process on its
stdin, answered from a real terminal (a pty), and its stdout's JSON checked exactly."""

from __future__ import annotations

import fcntl
import getpass
import json
import os
import shlex
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    FIXTURES,
    audit_records,
    in_terminal,
    run_wisp,
    wait_until,
    wisp_command,
    wisp_spawn,
)

from pending import Channel, Kind, Outcome, Scope
from wisp.agents import codex
from wisp.agents.claude_code import (
    CLAUDE_HOOK_TIMEOUT_S,
    DEFAULT_WAIT_S,
    SETTINGS_MATCHER,
    died,
    settings_block,
)
from wisp.agents.gate import MAX_ASKED_BYTES
from wisp.agents.hookio import (
    GUARD_SCRIPT,
    GUARD_SHELL,
    guarded_argv,
    guarded_command,
)
from wisp.policy.reading import read_shell
from wisp.stores.grants import GrantStore

EVENTS = FIXTURES / "claude-code"

# The CPU a hook may take for a call too large to show: its start alone is ~0.1 s; reading a
# 3 MB line took more than 5 minutes (the guard's reading grew faster than the line) before it
# was refused first. CPU time, not wall: a loaded machine stretches the second, not the first.
CPU_BOUND_S = 2.0


def event(name: str, project: Path, **changes: Any) -> dict[str, Any]:
    """A documented example event, its `cwd` (and paths under the example project) moved to
    *project*, with *changes* made to it (`tool_input` merged)."""
    text = (EVENTS / f"{name}.json").read_text().replace("/home/user/my-project", str(project))
    data: dict[str, Any] = json.loads(text)
    tool_input = changes.pop("tool_input", None)
    data.update(changes)
    if tool_input is not None:
        data["tool_input"] = {**data["tool_input"], **tool_input}
    return data


class Hook:
    """`wisp hook claude-code ARGS` in its own process, the event written to its stdin."""

    def __init__(self, data: dict[str, Any] | bytes, *args: str) -> None:
        payload = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.process = subprocess.Popen(
            wisp_command("hook", "claude-code", *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(payload)
        self.process.stdin.close()

    def result(self, timeout: float = 60) -> tuple[int, Any, str]:
        """(exit code, stdout as JSON — it must be exactly one JSON document, stderr)."""
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.wait(timeout)
        out = self.process.stdout.read().decode()
        err = self.process.stderr.read().decode()
        return self.process.returncode, json.loads(out), err


def waiting(home: Path, kind: Kind) -> str:
    """The ID of the one request of *kind* waiting in the channel, once there is one."""

    def found() -> str | None:
        pending = home / "pending"
        names = sorted(p.name for p in pending.glob("*.json")) if pending.exists() else []
        ids = [
            n.split(".")[0]
            for n in names
            if n.endswith({Kind.COMMAND: ".request.json", Kind.TOOL: ".tool.json"}[kind])
        ]
        answered = {n.split(".")[0] for n in names if n.endswith(".answer.json")}
        live = [i for i in ids if i not in answered]
        return live[0] if len(live) == 1 else None

    request_id: str = wait_until(found, timeout=30, what=f"a {kind} request filed")
    return request_id


def answer_of(home: Path, request_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / "pending" / f"{request_id}.answer.json").read_text())
    return data


def who(answer: dict[str, Any]) -> str:
    """How the hook names who answered, how and when."""
    return f"by {answer['user']} via {answer['via']} at {answer['answeredAt']}"


def pre_tool_use(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def answered_reason(home: Path, request_id: str, word: str, suffix: str = "") -> str:
    answer = answer_of(home, request_id)
    return f"wisp: {word} {who(answer)} (request {request_id}){suffix}"


class TestPreToolUse:
    def test_bash_waits_and_a_deny_from_a_terminal_denies(self, home: Path, project: Path) -> None:
        """A Bash call waits as a command request (its command exactly, its cwd, Claude's
        session as the thread); `wisp approvals deny ID` in a terminal makes the hook print
        a deny whose reason names the person and `cli`."""
        hook = Hook(event("pre-tool-use-bash", project, tool_input={"command": "rm -rf build"}))
        request_id = waiting(home, Kind.COMMAND)
        listed = json.loads(run_wisp("approvals", "pending", "--json").stdout)
        must_ask = read_shell("rm -rf build", str(project), None).must_ask
        # A must-ask line (`rm -r`, as the policy reads it) is offered `once` only, with why.
        assert [r["binding"]["offers"]["mustAsk"] for r in listed] == [list(must_ask)]
        shown = [{k: v for k, v in r["binding"].items() if k != "offers"} for r in listed]
        assert [(r["id"], binding) for r, binding in zip(listed, shown, strict=True)] == [
            (
                request_id,
                {
                    "command": "rm -rf build",
                    "cwd": str(project),
                    "thread": "abc123",
                    # Why it is asked (the must-ask findings), then what the agent says it
                    # is for.
                    "reason": "always asked: " + "; ".join(must_ask) + "; Run test suite",
                    # The call's other fields (the fixture's), bound and listed with it.
                    "options": {"timeout": 120000, "run_in_background": False},
                },
            )
        ]
        code, _ = in_terminal("approvals", "deny", request_id, "--reason", "not today")
        assert code == 0
        code, out, err = hook.result()
        assert code == 0, err
        reason = answered_reason(home, request_id, "denied", ": not today")
        assert out == pre_tool_use("deny", reason)
        assert f"by {getpass.getuser()} via cli" in reason

    def test_an_edit_shows_as_a_diff_and_an_approve_allows(self, home: Path, project: Path) -> None:
        """An Edit is a tool request that `wisp show ID` shows as a unified diff of the file
        it changes; `wisp tools approve ID` makes the hook print allow."""
        target = project / "notes.txt"
        target.write_text("one\noriginal text\nthree\n")
        hook = Hook(event("pre-tool-use-edit", project, tool_input={"file_path": str(target)}))
        request_id = waiting(home, Kind.TOOL)
        shown = run_wisp("show", request_id, env={"COLUMNS": "400"})
        assert shown.returncode == 0, shown.stderr
        for line in (f"--- {target}", f"+++ {target}", "@@ -1,3 +1,3 @@", "-original text"):
            assert line in shown.stdout
        assert f"wisp tools approve {request_id}" in shown.stdout
        code, _ = in_terminal("tools", "approve", request_id)
        assert code == 0
        code, out, err = hook.result()
        assert code == 0, err
        assert out == pre_tool_use("allow", answered_reason(home, request_id, "approved once"))

    def test_an_always_grant_allows_the_same_call_again_without_filing(
        self, home: Path, project: Path
    ) -> None:
        """Approved `always`, the same call (an MCP tool's: no rule decides it) is allowed at
        once the next time (nothing filed, the grant audited); a call with other input is
        asked about again."""
        data = event("pre-tool-use-mcp", project)
        hook = Hook(data)
        request_id = waiting(home, Kind.TOOL)
        assert in_terminal("tools", "approve", request_id, "--as", "always")[0] == 0
        assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "allow"
        before = sorted(os.listdir(home / "pending"))
        # The same call again, its input's keys in another order: the canonical input matches.
        again = dict(data, tool_input=dict(reversed(list(data["tool_input"].items()))))
        code, out, err = Hook(again).result()
        assert code == 0, err
        decision = out["hookSpecificOutput"]
        assert decision["permissionDecision"] == "allow"
        assert "always approval" in decision["permissionDecisionReason"]
        assert sorted(os.listdir(home / "pending")) == before  # nothing filed
        # One record of the call, the grant named as what decided it.
        last = audit_records(home)[-1]
        assert (last["event"], last["decider"], last["verdict"]) == (
            "call.decided",
            "grant",
            "allow",
        )
        assert last["grant"].startswith("g")
        other = Hook(dict(data, tool_input={**data["tool_input"], "title": "other"}), "--wait", "1")
        assert other.result()[1]["hookSpecificOutput"]["permissionDecision"] == "ask"

    def test_a_session_approval_lasts_for_that_claude_session(
        self, home: Path, project: Path
    ) -> None:
        """Approved `session` (the answer saying it covers this command in that Claude
        session until it ends or 24 hours, not "until pid N stops"), the same Bash command is
        allowed again in the same Claude session without filing, asked again in another, and
        forgotten at SessionEnd."""
        data = event("pre-tool-use-bash", project)
        hook = Hook(data)
        request_id = waiting(home, Kind.COMMAND)
        code, said = in_terminal("approvals", "approve", request_id, "--scope", "session")
        assert code == 0
        flat = " ".join(said.split())
        assert f"in its session {data['session_id']} only" in flat, flat
        assert "until that session ends or for 24 hours at most" in flat
        assert "pid" not in flat and "until it stops" not in flat
        assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "allow"
        _, out, _ = Hook(data).result()
        assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert "session approval" in out["hookSpecificOutput"]["permissionDecisionReason"]
        elsewhere = Hook(dict(data, session_id="other-session"), "--wait", "1").result()
        assert elsewhere[1]["hookSpecificOutput"]["permissionDecision"] == "ask"
        assert Hook(event("session-end", project)).result()[:2] == (0, {})
        after_end = Hook(data, "--wait", "1").result()
        assert after_end[1]["hookSpecificOutput"]["permissionDecision"] == "ask"

    def test_no_answer_in_time_withdraws_and_asks(self, home: Path, project: Path) -> None:
        """No answer within --wait: the request is withdrawn and the hook answers ask (with
        --on-timeout deny, a deny); silence is never an allow."""
        code, out, err = Hook(event("pre-tool-use-bash", project), "--wait", "1").result()
        assert code == 0, err
        decision = out["hookSpecificOutput"]
        assert decision["permissionDecision"] == "ask"
        assert "within 1 s (withdrawn)" in decision["permissionDecisionReason"]
        listed = json.loads(run_wisp("pending", "--all", "--json").stdout)
        assert [r["outcome"] for r in listed] == ["withdrawn"]
        _, out, _ = Hook(
            event("pre-tool-use-bash", project), "--wait", "1", "--on-timeout", "deny"
        ).result()
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"

    def test_a_command_too_large_to_show_is_asked_at_once(self, home: Path, project: Path) -> None:
        """A 3 MB shell command (as Claude Code may send: under the 4 MiB event cap) is left
        to Claude Code's dialog in bounded time: well under a second of CPU, however it is
        spelled (its reading grew with its size: 5 s for 1 MB, 121 s for 2 MB, issue 59).
        The control: the same words, small, are read and filed."""
        words = "echo a b 'c' $x ../y && cd d; "
        small = event("pre-tool-use-bash", project, tool_input={"command": words * 4})
        assert (
            Hook(small, "--wait", "0.5")
            .result()[1]["hookSpecificOutput"]["permissionDecisionReason"]
            .endswith("asking here instead")
        )
        listed = json.loads(run_wisp("pending", "--all", "--json").stdout)
        assert [r["outcome"] for r in listed] == ["withdrawn"]  # filed, then withdrawn
        large = event("pre-tool-use-bash", project, tool_input={"command": words * 100_000})
        hook = Hook(large)
        _pid, status, usage = os.wait4(hook.process.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert usage.ru_utime + usage.ru_stime < CPU_BOUND_S, usage
        assert hook.process.stdout is not None
        out = json.loads(hook.process.stdout.read())["hookSpecificOutput"]
        assert out["permissionDecision"] == "ask"
        assert "larger than a request" in out["permissionDecisionReason"]

    @pytest.mark.parametrize("mode", ["auto", "bypassPermissions", "dontAsk", "newMode"])
    def test_unanswered_in_a_mode_that_would_not_ask_you_is_denied(
        self, home: Path, project: Path, mode: str
    ) -> None:
        """Claude Code in a permission mode where an `ask` is not put to the person (`auto`:
        its classifier answers it; `bypassPermissions`, `dontAsk`; a mode wisp does not know):
        an unanswered call, and one too large to file, are denied, saying why. The control:
        the same calls in `default` mode are left to Claude Code's dialog (`ask`)."""
        too_large = {"content": "x" * (MAX_ASKED_BYTES + 1)}
        for which, permission in (("default", "ask"), (mode, "deny")):
            data = event("pre-tool-use-bash", project, permission_mode=which)
            code, out, err = Hook(data, "--wait", "1").result()
            decision = out["hookSpecificOutput"]
            assert (code, decision["permissionDecision"]) == (0, permission), err
            large = event(
                "pre-tool-use-write", project, permission_mode=which, tool_input=too_large
            )
            decision = Hook(large).result()[1]["hookSpecificOutput"]
            assert decision["permissionDecision"] == permission, decision
        assert "would not put an `ask` to you" in decision["permissionDecisionReason"]

    def test_a_call_too_large_for_a_request_is_left_to_claude_code(
        self, home: Path, project: Path
    ) -> None:
        """A Write larger than a request can hold is not filed: the hook answers ask."""
        content = "x" * (MAX_ASKED_BYTES + 1)
        data = event("pre-tool-use-write", project, tool_input={"content": content})
        code, out, _ = Hook(data).result()
        assert code == 0 and out["hookSpecificOutput"]["permissionDecision"] == "ask"
        assert "larger than a request" in out["hookSpecificOutput"]["permissionDecisionReason"]
        assert not list((home / "pending").glob("*.tool.json"))

    @pytest.mark.parametrize("size", [40_000, 57_000])
    def test_a_bash_command_too_large_with_its_title_is_asked_not_refused(
        self, home: Path, project: Path, size: int
    ) -> None:
        """A Bash command under the input's bound whose request (title and body with it) is
        over the record cap: `ask` (exit 0), as promised, not "the channel cannot be used"."""
        data = event("pre-tool-use-bash", project, tool_input={"command": "echo " + "y" * size})
        code, out, err = Hook(data).result()
        assert code == 0, err
        assert out["hookSpecificOutput"]["permissionDecision"] == "ask"
        assert "cannot be used" not in out["hookSpecificOutput"]["permissionDecisionReason"]
        assert not list((home / "pending").glob("*.request.json"))


class TestPermissionRequest:
    def test_approve_and_deny_in_its_decision_shape(self, home: Path, project: Path) -> None:
        """A PermissionRequest is answered with its decision object: behavior allow, or
        deny with a message."""
        hook = Hook(event("permission-request-bash", project))
        request_id = waiting(home, Kind.COMMAND)
        assert in_terminal("approvals", "approve", request_id)[0] == 0
        code, out, _ = hook.result()
        assert (code, out) == (
            0,
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "allow"},
                }
            },
        )
        hook = Hook(event("permission-request-bash", project))
        request_id = waiting(home, Kind.COMMAND)
        assert in_terminal("approvals", "deny", request_id)[0] == 0
        code, out, _ = hook.result()
        message = answered_reason(home, request_id, "denied")
        assert (code, out) == (
            0,
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "deny", "message": message},
                }
            },
        )

    def test_no_answer_leaves_claude_code_its_dialog(self, home: Path, project: Path) -> None:
        """No answer in time: no decision (Claude Code shows its own dialog), said to the
        person as a system message. (The example's `rm -rf node_modules` is must-ask, whose
        silence is a deny: tests/test_hook_silence.py; `npm test` is not.)"""
        data = event("permission-request-bash", project, tool_input={"command": "npm test"})
        code, out, _ = Hook(data, "--wait", "1").result()
        assert code == 0
        assert list(out) == ["systemMessage"] and "asking here instead" in out["systemMessage"]


class TestFailsClosed:
    @pytest.mark.parametrize(
        ("stdin", "said"),
        [
            (b"garbage", "not JSON"),
            (b"", "no event on stdin"),
            (b"[1, 2]", "not a JSON object"),
            (b'{"hook_event_name": "PostToolUse", "session_id": "s"}', "not 'PostToolUse'"),
            (b'{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/"}', "tool_input"),
            (b'{"a": 1, "a": 2}', "duplicate key"),
        ],
    )
    def test_unreadable_input_is_a_deny_with_its_reason(
        self, home: Path, stdin: bytes, said: str
    ) -> None:
        """Input it cannot answer: exit 2 (Claude Code blocks the call), the reason on
        stderr, a deny on stdout and nothing else there; never a traceback."""
        code, out, err = Hook(stdin).result()
        assert code == 2
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert out == pre_tool_use("deny", reason)
        assert said in reason and err == reason + "\n"
        assert "Traceback" not in err

    def test_a_channel_that_cannot_be_used_is_a_deny(self, home: Path, project: Path) -> None:
        """A WISP_HOME others can write: the channel refuses it, the hook denies (exit 2)."""
        home.mkdir(mode=0o700)
        home.chmod(0o777)
        code, out, err = Hook(event("pre-tool-use-bash", project)).result()
        assert code == 2
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "wisp doctor" in err and "Traceback" not in err

    def test_a_terminal_on_stdin_is_refused(self, home: Path) -> None:
        """Run by hand in a terminal, it does not wait for typing: a deny, exit 2."""
        import pexpect

        child = pexpect.spawn(*wisp_spawn("hook", "claude-code"), encoding="utf-8", timeout=60)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 2
        assert "not from a terminal" in child.before and "Traceback" not in child.before

    def test_ended_by_claude_code_it_withdraws_its_request(self, home: Path, project: Path) -> None:
        """SIGTERM (Claude Code ending a hook past its timeout) withdraws the request at once,
        and the hook denies (exit 2)."""
        hook = Hook(event("pre-tool-use-bash", project))
        request_id = waiting(home, Kind.COMMAND)
        hook.process.terminate()
        code, out, err = hook.result()
        assert code == 2 and "withdrawn" in err
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        with Channel.open(home) as channel:
            settled = channel.outcome(request_id)
        assert settled is not None and settled.outcome.value == "withdrawn"


class TestNotClaudeCodes:
    """Devin CLI runs the hooks in a project's .claude/ with its own tool names: such an event
    is refused (a deny, exit 2, which Devin CLI's documentation says blocks), never read as
    Claude Code's."""

    def _devin(self, project: Path) -> dict[str, Any]:
        text = (FIXTURES / "agents" / "devin" / "pre-tool-exec.json").read_text()
        data: dict[str, Any] = json.loads(text.replace("/home/you/project", str(project)))
        return data

    def test_devins_documented_exec_event_is_refused(self, home: Path, project: Path) -> None:
        """Devin CLI's documented `exec` call: exit 2, a deny saying the event is not Claude
        Code's and naming Devin CLI, nothing filed. The control: Claude Code's own `Bash`
        call of the same command is filed and, unanswered, denied on wisp's wait."""
        code, out, err = Hook(self._devin(project)).result()
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert code == 2 and out == pre_tool_use("deny", reason), out
        assert "not Claude Code's" in reason and "Devin CLI" in reason and "'exec'" in reason
        assert "Traceback" not in err and not (home / "pending").exists()
        bash = event("pre-tool-use-bash", project, tool_input={"command": "ls"})
        code, out, _ = Hook(bash, "--wait", "1").result()
        assert (
            code == 0 and "nobody answered" in out["hookSpecificOutput"]["permissionDecisionReason"]
        )

    def test_a_claude_shaped_event_from_devin_is_refused(
        self, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With Devin CLI's `DEVIN_PROJECT_DIR` in the environment, even a `Bash` call (or an
        MCP tool's, named alike in both) is refused: wisp does not know Devin CLI reads its
        answer as Claude Code does."""
        monkeypatch.setenv("DEVIN_PROJECT_DIR", str(project))
        code, out, err = Hook(event("pre-tool-use-bash", project)).result()
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert code == 2 and "Devin CLI runs this hook" in reason, out
        assert err == reason + "\n"

    def test_an_mcp_tool_is_claude_codes(self, home: Path, project: Path) -> None:
        """An MCP tool's name (`mcp__server__tool`, lowercase) is Claude Code's too: filed,
        and unanswered, denied on wisp's wait (not refused)."""
        data = event("pre-tool-use-bash", project, tool_name="mcp__github__create_issue")
        data["tool_input"] = {"title": "x"}
        code, out, _ = Hook(data, "--wait", "1").result()
        assert (
            code == 0 and "nobody answered" in out["hookSpecificOutput"]["permissionDecisionReason"]
        )


class TestOwnChannel:
    def test_a_write_under_wisp_home_is_always_asked_and_says_so(
        self, home: Path, project: Path
    ) -> None:
        """A Write under $WISP_HOME is put to the person even with a covering always grant,
        and its request says it touches wisp's own channel."""
        target = str(home / "pending" / "0123abcd.answer.json")
        data = event("pre-tool-use-write", project, tool_input={"file_path": target})
        hook = Hook(data)
        request_id = waiting(home, Kind.TOOL)
        assert in_terminal("tools", "approve", request_id, "--as", "always")[0] == 0
        assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "allow"
        hook = Hook(data)
        request_id = waiting(home, Kind.TOOL)  # asked again: no grant covers it
        shown = run_wisp("show", request_id).stdout
        assert "wisp's own channel" in shown
        assert in_terminal("tools", "deny", request_id)[0] == 0
        assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "deny"

    def test_a_bash_command_naming_wisp_home_is_asked(self, home: Path, project: Path) -> None:
        """A Bash command naming $WISP_HOME is filed with a reason that says so."""
        data = event("pre-tool-use-bash", project, tool_input={"command": f"ls {home}/pending"})
        hook = Hook(data, "--wait", "30")
        request_id = waiting(home, Kind.COMMAND)
        with Channel.open(home) as channel:
            status = channel.status(request_id)
        assert "wisp's own channel" in (status.request.binding.reason or "")
        assert in_terminal("approvals", "deny", request_id)[0] == 0
        assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "deny"

    def test_a_write_to_wisps_own_program_is_asked_whatever_the_grant(
        self, home: Path, project: Path
    ) -> None:
        """An agent working in the clone this hook runs from (its venv, its package) writes
        wisp's guard script: with an `always` grant for exactly that Write it is still filed,
        its request saying it touches wisp's own program; the same grant for a Write of the
        project's own file lets that run unasked (the control, first: a write in a git
        project, which the built-in `project-edits` rule allows, grant or not)."""
        (project / ".git").mkdir()
        root = GUARD_SCRIPT.parents[2]
        for cwd, path in ((project, project / "notes.txt"), (root, GUARD_SCRIPT)):
            tool_input = {"file_path": str(path.relative_to(cwd)), "content": "exit 0\n"}
            data = event("pre-tool-use-write", cwd, tool_input=tool_input)
            GrantStore(home).add_tool(
                scope=Scope.ALWAYS,
                tool="Write",
                tool_input=data["tool_input"],
                cwd=str(cwd),
                request="r1",
                user="u",
            )
            hook = Hook(data, "--wait", "30")
            if cwd == project:
                assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "allow"
                continue
            request_id = waiting(home, Kind.TOOL)
            with Channel.open(home) as channel:
                reason = channel.status(request_id).request.binding.reason or ""
            assert "wisp's own program" in reason and str(GUARD_SCRIPT) in reason, reason
            assert in_terminal("tools", "deny", request_id)[0] == 0
            assert hook.result()[1]["hookSpecificOutput"]["permissionDecision"] == "deny"


class TestPrintSettings:
    def test_the_settings_block_is_valid_json_naming_this_wisp(self, home: Path) -> None:
        """--print-settings prints JSON: a PreToolUse hook (its matcher, this wisp's absolute
        path, a timeout just over the wait, `onFailure: "block"` for the Claude Code versions
        that take it) and a SessionEnd hook, the same wisp in a guard that answers in
        SessionEnd's form (`{}`, exit 0: it has nothing to deny)."""
        printed = run_wisp("hook", "claude-code", "--print-settings")
        assert printed.returncode == 0
        block = json.loads(printed.stdout)
        (entry,) = block["hooks"]["PreToolUse"]
        assert entry["matcher"] == SETTINGS_MATCHER
        (command,) = entry["hooks"]
        assert command["type"] == "command" and command["timeout"] == CLAUDE_HOOK_TIMEOUT_S
        assert command["onFailure"] == "block"
        shell, guard, status, deny, dashes, program, *rest = shlex.split(command["command"])
        assert (shell, guard, status, dashes) == (GUARD_SHELL, str(GUARD_SCRIPT), "2", "--")
        assert json.loads(deny)["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert os.path.isabs(program) and os.access(program, os.X_OK)
        assert rest[-2:] == ["hook", "claude-code"]
        assert DEFAULT_WAIT_S < CLAUDE_HOOK_TIMEOUT_S
        ending = shlex.split(block["hooks"]["SessionEnd"][0]["hooks"][0]["command"])
        assert ending == [shell, guard, "0", "{}", dashes, program, *rest]

    def test_its_options_are_carried_into_the_block(self, home: Path) -> None:
        """--wait and --on-timeout given with --print-settings are in the printed command,
        and the timeout is the wait plus the margin."""
        printed = run_wisp(
            "hook", "claude-code", "--print-settings", "--wait", "120", "--on-timeout", "deny"
        )
        (command,) = json.loads(printed.stdout)["hooks"]["PreToolUse"][0]["hooks"]
        assert command["command"].endswith("hook claude-code --wait 120 --on-timeout deny")
        assert command["timeout"] == 130


def withdrawn(home: Path, request_id: str) -> bool:
    with Channel.open(home) as channel:
        settled = channel.outcome(request_id)
    return settled is not None and settled.outcome.value == "withdrawn"


def unread(pipe: Any) -> int:
    """How many bytes written to *pipe* (our end of the hook's stdin) it has not read."""
    return int(struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0" * 4))[0])


class OpenHook:
    """`wisp hook claude-code` whose stdin stays open after *data* is written (as a harness
    may keep it), its stdout read by us."""

    def __init__(self, data: bytes, *args: str, argv: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            argv or wisp_command("hook", "claude-code", *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def read(self) -> None:
        """Once the hook has read all we wrote (so it is past start-up, in its read)."""
        assert self.process.stdin is not None
        wait_until(lambda: unread(self.process.stdin) == 0, timeout=30, what="the event read")

    def result(self, timeout: float = 60) -> tuple[int, Any, str]:
        """(exit code, stdout as JSON — exactly one JSON document, in the guard too —, stderr),
        once it has ended: its stdin still open."""
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.wait(timeout)
        out, err = self.process.stdout.read(), self.process.stderr.read()
        assert self.process.stdin is not None
        still_open = not self.process.stdin.closed
        self.process.stdin.close()
        assert still_open
        return self.process.returncode, json.loads(out), err.decode()


class TestSignals:
    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    def test_a_signal_while_waiting_withdraws_and_denies(
        self, home: Path, project: Path, signum: int
    ) -> None:
        """TERM, INT or HUP while the hook waits: the request is withdrawn at once and the
        answer is Claude Code's block (exit 2, a deny on stdout naming the signal), never an
        exit by signal, an empty stdout or a traceback."""
        hook = OpenHook(json.dumps(event("pre-tool-use-bash", project)).encode())
        request_id = waiting(home, Kind.COMMAND)
        hook.process.send_signal(signum)
        code, out, err = hook.result()
        assert code == 2, err
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert out == pre_tool_use("deny", reason)
        assert signal.Signals(signum).name in reason and "withdrawn" in reason
        assert "Traceback" not in err
        assert withdrawn(home, request_id)

    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    def test_a_signal_while_reading_denies_filing_nothing(self, home: Path, signum: int) -> None:
        """A signal while the event is still being read (half of it sent): a deny, exit 2,
        nothing filed."""
        hook = OpenHook(b'{"hook_event_name": "PreToolUse", ')
        hook.read()
        hook.process.send_signal(signum)
        code, out, err = hook.result()
        assert code == 2 and "Traceback" not in err
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert signal.Signals(signum).name in err
        assert not (home / "pending").exists() or not list((home / "pending").glob("*.json"))

    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    def test_a_signal_at_start_up_is_a_deny_through_the_guard(
        self, home: Path, signum: int
    ) -> None:
        """A signal to the installed (guarded) command as soon as it has started wisp, which
        is still starting: passed on to wisp, and whenever it lands (before wisp armed
        itself too) Claude Code gets its block (exit 2 and a deny), never a traceback's
        exit 1 and an empty stdout."""
        argv = shlex.split(settings_block()["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
        hook = OpenHook(b"", argv=argv)
        children = Path(f"/proc/{hook.process.pid}/task/{hook.process.pid}/children")
        wait_until(lambda: children.read_text().split(), timeout=30, what="wisp started")
        hook.process.send_signal(signum)
        code, out, err = hook.result()
        assert code == 2, err
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "Traceback" not in err


# The signals a harness (or a person at its terminal) ends a hook with, and their bits in the
# masks /proc/PID/status shows (SigBlk, SigCgt: bit N-1 for signal N).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
STOP_BITS = sum(1 << (s - 1) for s in STOP_SIGNALS)
# Moments to signal a hook at (seconds): from its start (the guard's first instruction, or
# wisp's first), through wisp's import, the event read and the filing; a waiting hook besides.
# Each one a cold start, as a harness starts the hook: together they stay within ~20 s here.
MOMENTS_S = tuple(round(0.2 * (step / 17) ** 2, 4) for step in range(18))  # denser early
INSTALLED_WISP = Path(sys.executable).with_name("wisp")  # this venv's `wisp` program


def masks(pid: int, task: int | None = None) -> dict[str, int]:
    """A process's (or one of its threads') signal masks, from /proc: SigBlk, SigCgt, …"""
    where = f"/proc/{pid}/task/{task}/status" if task is not None else f"/proc/{pid}/status"
    lines = Path(where).read_text().splitlines()
    return {
        k: int(v, 16)
        for k, _, v in (line.partition(":\t") for line in lines)
        if k in ("SigPnd", "SigBlk", "SigIgn", "SigCgt")
    }


def started(pid: int) -> bool:
    """Whether *pid* (the guard, or a bare hook) runs its own first instructions: it blocks or
    catches TERM. (Before that, its interpreter (`/bin/sh`, Python) is still starting, and a
    TERM takes its default action: nothing of the hook's can answer it.)"""
    try:
        found = masks(pid)
    except (FileNotFoundError, ProcessLookupError):
        return True  # already ended: there is nothing left to wait for
    return bool((found["SigBlk"] | found["SigCgt"]) & (1 << (signal.SIGTERM - 1)))


def hook_argv(harness: str, guarded: bool) -> list[str]:
    """The installed program's `wisp hook HARNESS`, bare or in its guard as setup installs it."""
    if harness == "codex":
        return (
            guarded_command(codex.HARNESS, [str(INSTALLED_WISP)])
            if guarded
            else [str(INSTALLED_WISP), "hook", "codex"]
        )
    argv = [str(INSTALLED_WISP), "hook", "claude-code"]
    return guarded_argv(died(), argv) if guarded else argv


def signalled_once(
    home: Path,
    project: Path,
    argv: list[str],
    signum: int,
    moment: float | None,
    *,
    group: bool = False,
) -> str:
    """Start *argv* cold (its stdin kept open), signal it with *signum* at *moment* (seconds
    after its first instruction: the guard's, or bare, wisp's; None: once a request waits),
    *group*: its whole process group (the guard and wisp both), and check what it said:
    exactly one deny, exit 2, no traceback, nothing left waiting. Returns what went wrong,
    or "" if nothing did."""
    data = json.dumps(event("pre-tool-use-bash", project)).encode()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "WISP_HOME": str(home)},
        start_new_session=group,
    )
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()
    if moment is None:
        waiting(home, Kind.COMMAND)
    else:
        deadline = time.monotonic() + 30
        while not started(process.pid):  # watched closely: the moments are milliseconds
            if time.monotonic() > deadline:
                process.kill()
                process.communicate()
                return "it never blocked nor caught TERM within 30 s"
            time.sleep(0.0002)
        time.sleep(moment)
    if group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return f"no end within 30 s after {signum!r}"
    lines = out.decode().splitlines()
    said = (
        f"{signal.Signals(signum).name} at {moment}: exit {process.returncode}, "
        f"stdout {lines}, stderr {err.decode()[-300:]!r}"
    )
    if process.returncode != 2 or len(lines) != 1 or b"Traceback" in err:
        return said
    if json.loads(lines[0])["hookSpecificOutput"]["permissionDecision"] != "deny":
        return said
    if (home / "pending").exists():
        with Channel.open(home) as channel:
            for status in channel.listing().statuses:
                settled = channel.outcome(status.request.id)
                if settled is None or settled.outcome is not Outcome.WITHDRAWN:
                    return f"{said}; request {status.request.id} left {status.state}"
    return ""


class TestEverySignalIsOneDeny:
    @pytest.mark.parametrize("harness", ["claude-code", "codex"])
    @pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "bare"])
    def test_a_signal_at_any_moment_is_exactly_one_deny(
        self, tmp_path: Path, harness: str, guarded: bool
    ) -> None:
        """TERM, INT and HUP, each at many moments of a hook's life (from the guard's first
        instruction, or bare from wisp's first; and while its request waits), sent to the
        guard alone or to its whole process group (wisp too): every run ends in exactly one
        deny on stdout, the harness's block (exit 2), and any request it filed withdrawn:
        never two denies, never silence, never a request left waiting."""
        project = tmp_path / "project"
        project.mkdir()
        argv = hook_argv(harness, guarded)
        problems = []
        for index, moment in enumerate((*MOMENTS_S, None)):
            signum = STOP_SIGNALS[index % len(STOP_SIGNALS)]
            home = tmp_path / f"home{index}"
            group = guarded and index % 2 == 1  # the guard alone, or its whole group
            problem = signalled_once(home, project, argv, signum, moment, group=group)
            if problem:
                problems.append(problem)
        assert not problems, "\n".join(problems)

    def test_only_the_main_thread_takes_a_signal(self, home: Path, project: Path) -> None:
        """A waiting hook's threads (the harness's watch, the channel's) all block TERM, INT
        and HUP, so that the kernel gives them to the main thread, which handles them (a
        signal another thread took would leave the main thread asleep in its wait); the main
        thread blocks none of them and catches all three (the control)."""
        hook = OpenHook(
            json.dumps(event("pre-tool-use-bash", project)).encode(),
            argv=hook_argv("claude-code", False),
        )
        waiting(home, Kind.COMMAND)
        pid = hook.process.pid
        # The main thread blocks them for an instant while it starts a thread (so that the
        # thread is born blocking them: pending.start_thread), which a read may land in.
        wait_until(
            lambda: masks(pid, pid)["SigBlk"] & STOP_BITS == 0,
            timeout=30,
            what="the main thread waiting with TERM, INT and HUP unblocked",
        )
        assert masks(pid, pid)["SigCgt"] & STOP_BITS == STOP_BITS
        threads = [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]
        assert threads  # it watches its harness on a thread of its own
        for task in threads:
            name = Path(f"/proc/{pid}/task/{task}/comm").read_text().strip()
            assert masks(pid, task)["SigBlk"] & STOP_BITS == STOP_BITS, name
        hook.process.terminate()
        code, out, _ = hook.result()
        assert code == 2 and out["hookSpecificOutput"]["permissionDecision"] == "deny"


class TestOneEvent:
    def test_it_waits_once_the_event_is_read_not_for_end_of_file(
        self, home: Path, project: Path
    ) -> None:
        """The event written, stdin left open (`(cat ev.json; sleep 5) | wisp hook …`): the
        request is filed, and `--wait 1` ends it within seconds, not at stdin's end."""
        start = time.monotonic()
        hook = OpenHook(json.dumps(event("pre-tool-use-bash", project)).encode(), "--wait", "1")
        request_id = waiting(home, Kind.COMMAND)
        code, out, _ = hook.result(timeout=30)
        assert code == 0 and out["hookSpecificOutput"]["permissionDecision"] == "ask"
        assert withdrawn(home, request_id)
        assert time.monotonic() - start < 25


class TestHarnessGone:
    def test_stdout_closed_withdraws_at_once(self, home: Path, project: Path) -> None:
        """Claude Code gone (the read end of the hook's stdout closed) while the hook waits:
        the request is withdrawn at once (not left for 590 s), and the hook exits 2."""
        hook = OpenHook(json.dumps(event("pre-tool-use-bash", project)).encode())
        request_id = waiting(home, Kind.COMMAND)
        assert hook.process.stdout is not None
        hook.process.stdout.close()
        hook.process.wait(timeout=30)
        assert hook.process.returncode == 2
        assert withdrawn(home, request_id)

    def test_its_parent_ended_withdraws_at_once(self, home: Path, project: Path) -> None:
        """The hook's parent process ends (killed) while the hook waits, its stdout not a
        pipe (nothing hangs up): the request is withdrawn at once. (Started cold, as the
        harness starts it: a warm test start's parent is its zygote.)"""
        events = project / "ev.json"
        events.write_text(json.dumps(event("pre-tool-use-bash", project)))
        script = (
            "import subprocess, sys, os; "
            f"subprocess.Popen([sys.executable, '-m', 'wisp', 'hook', 'claude-code'], "
            f"stdin=open({str(events)!r}), stdout=subprocess.DEVNULL); "
            "sys.stdin.read()"
        )
        parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE)
        request_id = waiting(home, Kind.COMMAND)
        parent.kill()
        parent.wait(timeout=30)
        wait_until(lambda: withdrawn(home, request_id), timeout=30, what="withdrawn")


class TestGuard:
    def test_wisp_killed_is_a_deny(self, home: Path, project: Path) -> None:
        """The installed command (the guard around `wisp hook claude-code`) with wisp
        SIGKILLed while it waits: Claude Code still gets its block (exit 2, a deny)."""
        argv = shlex.split(settings_block()["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
        hook = OpenHook(json.dumps(event("pre-tool-use-bash", project)).encode(), argv=argv)
        request_id = waiting(home, Kind.COMMAND)
        with Channel.open(home) as channel:
            pid = channel.status(request_id).request.server.pid
        os.kill(pid, signal.SIGKILL)
        code, out, err = hook.result()
        assert code == 2
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "ended without answering" in err

    def test_a_term_to_the_guard_reaches_wisp(self, home: Path, project: Path) -> None:
        """SIGTERM to the guard (Claude Code ending its hook): passed on to wisp, which
        withdraws its request and answers the one deny (naming the signal); the guard, which
        waited for it, adds none."""
        argv = shlex.split(settings_block()["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
        hook = OpenHook(json.dumps(event("pre-tool-use-bash", project)).encode(), argv=argv)
        request_id = waiting(home, Kind.COMMAND)
        hook.process.terminate()
        code, out, err = hook.result()
        assert code == 2 and out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "stopped by SIGTERM" in out["hookSpecificOutput"]["permissionDecisionReason"]
        assert "ended without answering" not in err
        assert withdrawn(home, request_id)

    def test_a_wisp_that_never_answers_its_term_is_killed_and_denied(self, tmp_path: Path) -> None:
        """The guard waits for wisp's answer to the TERM it passed on, but not for ever: a
        program in wisp's place that ignores TERM is sent it again after 1 s and killed 3 s
        later, and the guard writes the one deny (its stdout otherwise empty)."""
        ready = tmp_path / "ready"
        stubborn = (
            "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            f"open({str(ready)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
        )
        hook = OpenHook(b"", argv=guarded_argv(died(), [sys.executable, "-c", stubborn]))
        pid = int(wait_until(lambda: ready.exists() and ready.read_text(), what="it started"))
        start = time.monotonic()
        hook.process.terminate()
        code, out, err = hook.result(timeout=30)
        assert code == 2 and out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "ended without answering (status 137)" in err
        assert 3.5 < time.monotonic() - start < 20
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
