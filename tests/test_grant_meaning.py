"""A grant means exactly what the person saw: a shell call's options (a sandbox switched off
among them) are shown and bound; a project is a real one, bound to that directory itself; a
session grant is listed and can be revoked; `wisp exec` runs the file that was asked about."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pending import Channel, Kind, Scope
from wisp._asking import Asker
from wisp.agents.claude_code import Permission, answer_event
from wisp.kinds import view
from wisp.kinds.command_gate import ApprovalGate
from wisp.stores.grants import GrantStore

NO_SANDBOX = {"dangerouslyDisableSandbox": True}


def _bash(cwd: Path, command: str, **fields: object) -> bytes:
    return json.dumps(
        {
            "session_id": "s-meaning",
            "cwd": str(cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "list", **fields},
        }
    ).encode()


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    with Asker(channel, entry_point="approvals") as made:
        yield made


class TestShellOptions:
    def test_a_plain_grant_does_not_cover_the_sandbox_switched_off(
        self, home: Path, tmp_path: Path
    ) -> None:
        """An `always` grant for `ls -la` does not allow `ls -la` with
        dangerouslyDisableSandbox: that call is filed, its options and a warning shown."""
        GrantStore(home).add(
            scope=Scope.ALWAYS, command="ls -la", cwd=str(tmp_path), request="r1", user="u"
        )
        plain = answer_event(_bash(tmp_path, "ls -la"), wait_s=0.2, home=home)
        assert plain.permission is Permission.ALLOW, plain.reason
        answer = answer_event(_bash(tmp_path, "ls -la", **NO_SANDBOX), wait_s=0.2, home=home)
        assert answer.permission is not Permission.ALLOW, answer.reason
        assert answer.request_id is not None
        with Channel.open(home) as channel:
            request = channel.status(answer.request_id).request
        assert request.binding.options == NO_SANDBOX  # type: ignore[union-attr]
        rows = dict(view(Kind.COMMAND).paragraphs(request.binding))
        assert rows["with"] == "dangerouslyDisableSandbox: true"
        assert "OUTSIDE Claude Code's sandbox" in rows["reason"]

    def test_an_approval_binds_the_options_it_was_given_with(
        self, asker: Asker, channel: Channel
    ) -> None:
        """`always` given to a call with options keeps a grant of the command with exactly
        those options: the same call is covered, the command without them is not."""
        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("ls -la", "/srv", options={"timeout": 5, **NO_SANDBOX})
        channel.answer(request.id, "always", kind=request.kind, via="cli")
        ending = asker.wait(request.id, 30)
        assert ending is not None
        grant = gate.verdict(ending).grant
        assert grant is not None and grant.options is not None
        assert gate.granted("ls -la", "/srv") is None
        assert gate.granted("ls -la", "/srv", options={"timeout": 5}) is None
        assert gate.granted("ls -la", "/srv", options={**NO_SANDBOX, "timeout": 5}) is not None
        stored = json.loads(GrantStore(asker.home).path.read_text())["grants"][0]
        assert stored["options"] == {"timeout": 5, **NO_SANDBOX}

    def test_a_call_without_options_files_as_before(self, asker: Asker) -> None:
        """A command with no options is written as it always was: no `options` key, so its
        digest and every older reader are unchanged."""
        request = ApprovalGate(asker, timeout_s=30).file("make", "/srv")
        text = (asker.home / "pending" / f"{request.id}.request.json").read_text()
        assert "options" not in json.loads(text)["binding"]
