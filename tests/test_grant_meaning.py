"""A grant means exactly what the person saw: a shell call's options (a sandbox switched off
among them) are shown and bound; a project is a real one, bound to that directory itself; a
session grant is listed and can be revoked; `wisp exec` runs the file that was asked about."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import AskingCommand, in_terminal, run_wisp

from pending import Channel, Kind, Scope
from wisp._asking import Asker
from wisp.agents.claude_code import Permission, answer_event
from wisp.kinds import view
from wisp.kinds.command_gate import ApprovalGate
from wisp.stores.grants import GrantStore, project_of

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


class TestProjectGrants:
    def test_a_git_file_in_a_world_writable_directory_makes_no_project(
        self, tmp_path: Path
    ) -> None:
        """`touch /tmp/x/.git` does not make /tmp/x a project: inside a directory anyone may
        write, only a real `.git` directory does; otherwise the project is the directory
        itself."""
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o1777)
        (shared / "x" / "y").mkdir(parents=True)
        (shared / "x" / ".git").touch()
        assert project_of(str(shared / "x" / "y")) == str(shared / "x" / "y")
        (shared / "repo" / ".git").mkdir(parents=True)
        (shared / "repo" / "src").mkdir()
        assert project_of(str(shared / "repo" / "src")) == str(shared / "repo")

    def test_a_root_owned_by_someone_else_is_no_project(self, tmp_path: Path) -> None:
        """A directory with `.git` that another user owns is not the person's project."""
        if os.getuid() != 0:
            pytest.skip("missing capability: root, to give a directory to another user")
        (tmp_path / "theirs" / ".git").mkdir(parents=True)
        (tmp_path / "theirs" / "sub").mkdir()
        os.chown(tmp_path / "theirs", 65534, 65534)
        assert project_of(str(tmp_path / "theirs" / "sub")) == str(tmp_path / "theirs" / "sub")

    def test_a_project_swapped_for_a_link_matches_nothing(self, home: Path, tmp_path: Path) -> None:
        """A project grant is bound to its directory itself: replaced later by a symbolic
        link to `/`, it reaches nothing (it reached all of `/etc` before)."""
        project = tmp_path / "proj"
        (project / ".git").mkdir(parents=True)
        (project / "sub").mkdir()
        store = GrantStore(home)
        store.add(
            scope=Scope.PROJECT, command="make", cwd=str(project / "sub"), request="r", user="u"
        )
        assert store.covering("make", str(project / "sub")) is not None
        project.rename(tmp_path / "proj.old")
        project.symlink_to("/")
        assert GrantStore(home).covering("make", "/etc") is None
        assert GrantStore(home).covering("make", str(project / "etc")) is None

    def test_approving_for_a_project_names_its_directory(self, home: Path, tmp_path: Path) -> None:
        """`approve --scope project` says which directory the grant reaches, not only
        `approved project`."""
        project = tmp_path / "proj"
        (project / ".git").mkdir(parents=True)
        (project / "sub").mkdir()
        asking = AskingCommand(
            "approvals", "request", "--timeout", "120", "--", "make", cwd=project / "sub"
        )
        try:
            code, out = in_terminal("approvals", "approve", asking.id, "--scope", "project")
            assert code == 0, out
            assert f"approved project {project} ({asking.id})" in out, out
            assert asking.result()[0] == 0
        finally:
            asking.process.kill()
            asking.process.wait(timeout=30)


class TestSessionGrants:
    def test_a_kept_session_grant_is_listed_and_can_be_revoked(self, home: Path) -> None:
        """A session approval kept for an agent's session (the ID a hook's allow names) is
        listed by `wisp approvals grants`, and `wisp approvals revoke` ends it."""
        grant = GrantStore(home).keep_session(thread="s-1", command="make", request="r", user="u")
        listed = json.loads(run_wisp("approvals", "grants", "--json").stdout)
        assert [(g["id"], g["scope"], g["thread"]) for g in listed] == [
            (grant.id, "session", "s-1")
        ]
        assert grant.id is not None
        revoked = run_wisp("approvals", "revoke", grant.id)
        assert revoked.returncode == 0, revoked.stderr
        assert GrantStore(home).covering_in_thread("make", "/", "s-1") is None


class TestExecRunsWhatWasAsked:
    def test_a_program_found_elsewhere_on_path_is_not_covered(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`wisp exec -- true` approved always covers the `true` that was asked about: with
        another `true` first on PATH, that one is asked about (and, unanswered, not run)."""
        first = AskingCommand("exec", "--", "true", cwd=tmp_path)
        assert in_terminal("approvals", "approve", first.id, "--scope", "always")[0] == 0
        assert first.result()[0] == 0
        evil = tmp_path / "evil"
        evil.mkdir()
        (evil / "true").write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\n")
        (evil / "true").chmod(0o755)
        monkeypatch.setenv("PATH", f"{evil}:{os.environ['PATH']}")
        second = AskingCommand("exec", "--timeout", "1", "--", "true", cwd=tmp_path)
        code, _, err = second.result()
        assert code == 124, err
        assert not (tmp_path / "ran").exists()

    def test_a_link_swapped_while_asking_runs_what_was_approved(
        self, home: Path, tmp_path: Path
    ) -> None:
        """argv[0] is resolved when asked: a link pointed elsewhere during the wait does not
        change what runs."""
        for name in ("a", "b"):
            script = tmp_path / f"{name}.sh"
            script.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran-{name}\n")
            script.chmod(0o755)
        (tmp_path / "run").symlink_to(tmp_path / "a.sh")
        running = AskingCommand("exec", "--", "./run", cwd=tmp_path)
        swapped = tmp_path / "run.new"
        swapped.symlink_to(tmp_path / "b.sh")
        swapped.replace(tmp_path / "run")
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        code, _, err = running.result()
        assert code == 0, err
        assert (tmp_path / "ran-a").exists() and not (tmp_path / "ran-b").exists()

    def test_a_file_changed_while_asking_is_not_run(self, home: Path, tmp_path: Path) -> None:
        """The approved file rewritten during the wait is refused (126), saying why."""
        script = tmp_path / "job.sh"
        script.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\n")
        script.chmod(0o755)
        running = AskingCommand("exec", "--", str(script), cwd=tmp_path)
        script.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran; touch {tmp_path}/more\n")
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        code, _, err = running.result()
        assert code == 126, err
        assert "changed while you were asked" in err
        assert not (tmp_path / "ran").exists()


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"


def _shell_event(harness: str, cwd: Path, **fields: object) -> bytes:
    """*harness*'s captured shell event (`touch CWD/marker`), *fields* added to the call's
    own input."""
    name = "pre-tool-use-shell" if harness == "cursor" else "pre-tool-shell"
    event = json.loads(
        (FIXTURES / harness / f"{name}.json").read_text().replace("/home/you/project", str(cwd))
    )
    where = {
        "copilot": lambda e: e["toolArgs"],
        "opencode": lambda e: e["output"]["args"],
    }.get(harness, lambda e: e["tool_input"])(event)
    where.pop("working_directory", None)
    where.update(fields)
    return json.dumps(event).encode()


@pytest.mark.parametrize("harness", ["codex", "gemini", "copilot", "opencode", "cursor"])
class TestEveryHarnessShellOptions:
    def test_a_grant_covers_only_the_options_it_was_given_with(
        self, home: Path, tmp_path: Path, harness: str
    ) -> None:
        """Through hookio's shared reading, as for Claude Code: an `always` grant for the
        command allows it as it was shown, not with another field set (filed instead, the
        field shown as its options, and a sandbox switched off said first)."""
        import importlib

        from wisp._deadlines import Cancel
        from wisp.agents.hookio import answer_harness

        module = importlib.import_module(f"wisp.agents.{harness}")
        (tmp_path / ".git").mkdir()  # a project: `touch` writes inside it (not must-ask)
        GrantStore(home).add(
            scope=Scope.ALWAYS,
            command=f"touch {tmp_path}/marker",
            cwd=str(tmp_path),
            request="r1",
            user="u",
        )

        def answer(data: bytes) -> str:
            said = answer_harness(module.HARNESS, data, wait_s=0.2, cancel=Cancel(), home=home)
            return said.stdout + (said.stderr or "")  # Codex's allow says its reason on stderr

        assert "allowed by u's always approval" in answer(_shell_event(harness, tmp_path))
        said = answer(_shell_event(harness, tmp_path, sandbox_permissions="require_escalated"))
        assert "allowed by" not in said
        found = re.search(r"request ([0-9a-f]{16})", said)
        assert found is not None, said
        with Channel.open(home) as channel:
            request = channel.status(found[1]).request
        assert request.binding.options == {  # type: ignore[union-attr]
            "sandbox_permissions": "require_escalated"
        }
        rows = dict(view(Kind.COMMAND).paragraphs(request.binding))
        assert rows["reason"].startswith("⚠ it asks to run OUTSIDE")
