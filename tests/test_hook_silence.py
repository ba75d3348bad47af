"""Silence and escalation by class (issue 57), through real `wisp hook claude-code` processes
and a real push server on 127.0.0.1: a must-ask call nobody answered is denied whatever
`--on-timeout` says (silence is never an allow), the rest as `policy.onSilence` sets; a call's
push goes only once it has waited its class's `policy.pushAfterSeconds`, and never when it
was answered first. No test reaches any address outside this machine."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import audit_records, in_terminal, wait_until
from pushserver import PushServer
from test_hook import Hook, event, waiting
from test_hook_harnesses import CursorHook

from pending import Kind

# How long a hook waits for the person here: past every push deadline these tests set, so
# that only an answer (or the test's own bound) ends it.
LONG_WAIT_S = 60
# The push deadline of the test that answers first: far beyond the few seconds an answer from
# a terminal takes, so the push cannot have been due before the hook ended.
LATE_PUSH_S = 30
HOOK_BOUND_S = 120  # how long a test waits for a hook to end, at most


@pytest.fixture(autouse=True)
def no_proxy_no_tmux(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is sent through a proxy (127.0.0.1 is reached directly), and no tmux route."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("TMUX", raising=False)


@pytest.fixture
def push_server() -> Iterator[PushServer]:
    server = PushServer()
    yield server
    server.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project: the session's project, as the policy finds it."""
    path = tmp_path / "project"
    (path / ".git").mkdir(parents=True)
    return path


def configure(home: Path, tree: dict[str, Any]) -> None:
    """config.json as the person would leave it (0600, in a 0700 home)."""
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.json").write_text(json.dumps(tree))
    os.chmod(home / "config.json", 0o600)


def bash(project: Path, command: str) -> dict[str, Any]:
    """Claude Code's PreToolUse for a Bash *command* in *project*, in its default mode (its
    dialog would put an `ask` to the person)."""
    return event(
        "pre-tool-use-bash", project, permission_mode="default", tool_input={"command": command}
    )


def decision_of(hook: Hook) -> dict[str, Any]:
    code, out, err = hook.result(HOOK_BOUND_S)
    assert code == 0, err
    decided: dict[str, Any] = out["hookSpecificOutput"]
    return decided


def timeouts(home: Path) -> list[dict[str, Any]]:
    return [
        r
        for r in audit_records(home)
        if r["event"] == "call.decided" and r.get("decider") == "timeout"
    ]


class TestSilenceByClass:
    def test_a_must_ask_call_unanswered_is_denied_even_with_on_timeout_ask(
        self, home: Path, project: Path
    ) -> None:
        """`git push` (network, a must-ask class) nobody answers within --wait is denied
        though the hook says `--on-timeout ask`, saying why; the audit records the time-out
        as a deny. The control: `npm test` (no must-ask class), the same hook, the same
        silence, is left to Claude Code's dialog (`ask`)."""
        pushed = decision_of(Hook(bash(project, "git push"), "--wait", "1", "--on-timeout", "ask"))
        assert pushed["permissionDecision"] == "deny", pushed
        reason = pushed["permissionDecisionReason"]
        assert "within 1 s (withdrawn)" in reason
        assert "a network call nobody answered is always denied" in reason
        tested = decision_of(Hook(bash(project, "npm test"), "--wait", "1", "--on-timeout", "ask"))
        assert tested["permissionDecision"] == "ask", tested
        assert [(r["command"], r["verdict"]) for r in timeouts(home)] == [
            ("git push", "deny"),
            ("npm test", "ask"),
        ]

    def test_on_silence_deny_for_a_class_denies_it_whatever_the_harness(
        self, home: Path, project: Path
    ) -> None:
        """`policy.onSilence: {"unread": "deny"}` makes an unanswered `eval x` (a line wisp
        cannot read fully: `unread`) a deny with `--on-timeout ask`, naming the setting. The
        control: `npm test` (class `other`, left to the harness) is still `ask`."""
        configure(home, {"policy": {"onSilence": {"unread": "deny"}}})
        unread = decision_of(Hook(bash(project, "eval x"), "--wait", "1", "--on-timeout", "ask"))
        assert unread["permissionDecision"] == "deny", unread
        said = "policy.onSilence says deny for unread calls nobody answered"
        assert said in unread["permissionDecisionReason"]
        tested = decision_of(Hook(bash(project, "npm test"), "--wait", "1", "--on-timeout", "ask"))
        assert tested["permissionDecision"] == "ask", tested

    def test_a_must_ask_call_unanswered_is_denied_where_cursor_would_ask(
        self, home: Path, tmp_path: Path
    ) -> None:
        """Cursor asks in its own dialog what nobody answered in wisp; but its example's
        `touch PROJECT/marker` in a folder of no git project (a write outside any project:
        must-ask) is denied instead, saying why. The control: the same event in a git
        project (`touch` there is no must-ask call) gets Cursor's `ask`."""
        folder = tmp_path / "project"
        folder.mkdir()
        code, said, err = CursorHook("before-shell-execution", folder, "--wait", "1").said()
        assert (code, said["permission"]) == (0, "deny"), err
        assert "write-outside-project call nobody answered is always denied" in json.dumps(said)
        (folder / ".git").mkdir()
        code, said, err = CursorHook("before-shell-execution", folder, "--wait", "1").said()
        assert (code, said["permission"]) == (0, "ask"), err


class TestPushAfterSeconds:
    def test_an_unanswered_call_is_pushed_only_once_it_has_waited(
        self, home: Path, project: Path, push_server: PushServer
    ) -> None:
        """With `policy.pushAfterSeconds: 1`, a call nobody answers reaches the push server
        no sooner than 1 s after its hook started (the deadline, held by the waiting hook),
        and once; the filing's own notification says the push is held, and the push's record
        says how long the call had waited. Then the person answers, and the hook allows."""
        configure(
            home,
            {
                "notifications": {"push": [f"json://127.0.0.1:{push_server.port}/hook"]},
                "policy": {"pushAfterSeconds": {"default": 1}},
            },
        )
        started = time.monotonic()
        hook = Hook(bash(project, "npm test"), "--wait", str(LONG_WAIT_S))
        request_id = waiting(home, Kind.COMMAND)
        (message,) = push_server.wait_for(1)
        assert message["at"] - started >= 1.0, "pushed before the call had waited 1 s"
        assert request_id in message["body"]["message"]
        code, _ = in_terminal("approvals", "approve", request_id)
        assert code == 0
        assert decision_of(hook)["permissionDecision"] == "allow"
        filed, pushed = wait_until(
            lambda: (
                [
                    r
                    for r in audit_records(home)
                    if r["event"] == "notification" and r.get("id") == request_id
                ][:2]
                if len([r for r in audit_records(home) if r["event"] == "notification"]) >= 2
                else None
            ),
            timeout=HOOK_BOUND_S,
            what="the filing's notification and the push's record",
        )
        assert "once it has waited 1 s (policy.pushAfterSeconds)" in (
            filed.get("push") or filed.get("detail") or ""
        ), filed
        assert (pushed["route"], pushed["outcome"], pushed["pushedAfterSeconds"]) == (
            "push",
            "posted",
            1,
        )
        assert len(push_server.received) == 1

    def test_a_call_answered_before_its_push_is_never_pushed(
        self, home: Path, project: Path, push_server: PushServer
    ) -> None:
        """With `policy.pushAfterSeconds: 30`, a call the person answers at once is never
        pushed: its hook ends well before the deadline, and the deadline ends with it. The
        control: the same setting says, on the filing's notification, that the push was
        held for it."""
        configure(
            home,
            {
                "notifications": {"push": [f"json://127.0.0.1:{push_server.port}/hook"]},
                "policy": {"pushAfterSeconds": LATE_PUSH_S},
            },
        )
        started = time.monotonic()
        hook = Hook(bash(project, "npm test"), "--wait", str(LONG_WAIT_S))
        request_id = waiting(home, Kind.COMMAND)
        code, _ = in_terminal("approvals", "deny", request_id)
        assert code == 0
        assert decision_of(hook)["permissionDecision"] == "deny"
        ended = time.monotonic() - started
        assert ended < LATE_PUSH_S, f"the hook took {ended:.1f} s: the push may have been due"
        # The hook has ended: nothing of it can push any more, and its push was not due.
        assert push_server.received == []
        notes = [r for r in audit_records(home) if r["event"] == "notification"]
        assert [n.get("id") for n in notes] == [request_id]
        assert f"once it has waited {LATE_PUSH_S} s" in (
            notes[0].get("push") or notes[0].get("detail") or ""
        )
