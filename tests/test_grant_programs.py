"""A grant means what was shown, programs included: a command whose program (or interpreted
script) is a file the agent can write is bound to that file's sha256; a grant covers that
content only, and a changed file is asked about again, the request saying why. `wisp exec`
binds and checks its program the same way. Real files, the real hook and `wisp exec`
processes, answered from a real terminal."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from helpers import AskingCommand, audit_records, in_terminal, run_wisp
from test_hook import Hook, event, waiting

from pending import Channel, CommandBinding, Kind, Scope
from wisp._entry import EntryPoint
from wisp.kinds.programs import (
    MAX_PROGRAM_BYTES,
    PROGRAMS_OPTION,
    Unbound,
    bind_command,
    bound,
    coverable,
    programs_in,
    seal,
)
from wisp.kinds.standing import StandingGrants
from wisp.stores.grants import GrantStore


def script(path: Path, body: str) -> Path:
    """An executable `#!/bin/sh` script at *path* running *body*."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def rewrite_in_place(path: Path, body: str) -> None:
    """Rewrite *path*'s content in place, keeping its size and modification time: only its
    content tells the new file from the old."""
    before = path.stat()
    text = f"#!/bin/sh\n{body}"
    old = path.read_text()
    assert len(text) < len(old)
    path.write_text(text.ljust(len(old) - 1) + "\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size


def decision(out: dict[str, object]) -> str:
    return out["hookSpecificOutput"]["permissionDecision"]  # type: ignore[index, no-any-return]


def bash_event(project: Path, command: str) -> dict[str, object]:
    return event("pre-tool-use-bash", project, tool_input={"command": command})


def filed_binding(home: Path, request_id: str) -> CommandBinding:
    with Channel.open(home) as channel:
        binding = channel.status(request_id).request.binding
    assert isinstance(binding, CommandBinding)
    return binding


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


class TestProgramsALineRuns:
    def test_paths_cd_interpreters_and_path_lookup(
        self, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A path from the working directory (and a `cd` before it), a known interpreter's
        first argument that is no option, `sh -c CODE`'s programs, a line break as a command's
        end, a bare name found on PATH (a relative entry from the working directory): each
        is a program the line runs; an option's argument and a redirection's file are not."""
        bin_dir = project / "node_modules" / ".bin"
        script(bin_dir / "eslint", "exit 0")
        monkeypatch.setenv("PATH", f"node_modules/.bin:{os.environ['PATH']}")
        p = str(project)
        cases = {
            "./build.sh --prod": [f"{p}/build.sh"],
            "cd scripts && ./x.sh 2>/dev/null": [f"{p}/scripts/x.sh"],
            "eslint .": [f"{bin_dir}/eslint"],
            "true\n./evil.sh": [f"{p}/evil.sh"],
            "env A=1 timeout 10 ./t > out.txt": [f"{p}/t"],
            "if ./check; then scripts/go; fi": [f"{p}/check", f"{p}/scripts/go"],
        }
        for command, expected in cases.items():
            assert programs_in(command, p) == expected, command
        for command, script_path in {
            "bash x.sh": "x.sh",
            "sh -e -o pipefail y.sh arg": "y.sh",
            "python3 -W ignore z.py": "z.py",
            "node --require ./hook.js app.js": "app.js",
            "perl -w p.pl": "p.pl",
            "ruby r.rb": "r.rb",
            ". ./env.sh": "env.sh",
            "bash -lc './inner.sh'": "inner.sh",
        }.items():
            assert f"{p}/{script_path}" in programs_in(command, p), command
        for command in ("python3 -m pytest", "python3 -c 'print(1)'", "node -e 1", "echo ./no"):
            assert not [f for f in programs_in(command, p) if f.startswith(p)], command

    def test_only_files_the_agent_can_write_are_hashed(self, project: Path) -> None:
        """`./build.sh` in the project is bound to its sha256; the system's own programs
        (`/bin/sh`, `ls`) are not (control: hashing them would tell nothing a grant needs)."""
        script(project / "build.sh", "echo built")
        sealed = bound(programs_in("./build.sh && ls | /bin/sh", str(project)))
        assert list(sealed) == [f"{project}/build.sh"]
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", sealed[f"{project}/build.sh"])
        assert bind_command("ls -l", str(project), {"timeout": 5}) == {"timeout": 5}

    def test_a_file_with_no_digest_is_never_coverable(self, project: Path) -> None:
        """Gone, a directory, a FIFO (never opened to wait on it), larger than the cap: each
        has a word, not a digest, and a call binding one is never covered (control: a
        hashed one is)."""
        (project / "dir").mkdir()
        os.mkfifo(project / "fifo")
        with (project / "big").open("wb") as big:
            big.truncate(MAX_PROGRAM_BYTES + 1)  # sparse: nothing is written
        assert seal(str(project / "gone")) == Unbound.GONE
        assert seal(str(project / "dir")) == Unbound.NOT_A_FILE
        assert seal(str(project / "fifo")) == Unbound.NOT_A_FILE
        assert seal(str(project / "big")) == Unbound.TOO_LARGE
        assert not coverable({PROGRAMS_OPTION: {"/p/big": Unbound.TOO_LARGE}})
        script(project / "ok", "exit 0")
        assert coverable({PROGRAMS_OPTION: {"/p/ok": seal(str(project / "ok"))}})

    def test_a_field_of_that_name_from_the_call_is_dropped(self, project: Path) -> None:
        """A call's own `wisp.programs` field is not taken for a binding: only wisp binds."""
        forged = {PROGRAMS_OPTION: {"/usr/bin/make": "sha256:" + "0" * 64}, "timeout": 1}
        assert bind_command("make", str(project), forged) == {"timeout": 1}


class TestHookGrantCoversContent:
    def test_a_script_rewritten_after_an_always_grant_is_asked_again_saying_why(
        self, home: Path, project: Path
    ) -> None:
        """`./build.sh` approved `always` runs again unasked while unchanged (control);
        rewritten in place (same size, same mtime), it is asked again: the request says
        build.sh changed since you granted it and shows the file with its short digest."""
        build = script(project / "build.sh", f"touch {project}/built")
        data = bash_event(project, "./build.sh")
        hook = Hook(data)
        request_id = waiting(home, Kind.COMMAND)
        first = filed_binding(home, request_id)
        granted_seal = seal(str(build))
        assert first.options is not None
        assert first.options[PROGRAMS_OPTION] == {str(build): granted_seal}
        shown = run_wisp("show", request_id, env={"COLUMNS": "400"}).stdout
        assert f"{build} (sha256 {granted_seal[7:19]})" in shown
        assert in_terminal("approvals", "approve", request_id, "--scope", "always")[0] == 0
        assert decision(hook.result()[1]) == "allow"
        [grant] = json.loads(run_wisp("approvals", "grants", "--json").stdout)
        assert grant["options"][PROGRAMS_OPTION] == {str(build): granted_seal}

        before = sorted(os.listdir(home / "pending"))
        code, out, err = Hook(data).result()
        assert (code, decision(out)) == (0, "allow"), err
        assert sorted(os.listdir(home / "pending")) == before  # nothing filed
        # One record of the call, the grant named as what decided it.
        last = audit_records(home)[-1]
        assert (last["event"], last["decider"], last["verdict"]) == (
            "call.decided",
            "grant",
            "allow",
        )
        assert last["grant"].startswith("g")

        rewrite_in_place(build, f"touch {project}/evil")
        again = Hook(data, "--wait", "1")
        asked_id = waiting(home, Kind.COMMAND)
        assert decision(again.result()[1]) == "ask"
        asked = filed_binding(home, asked_id)
        assert asked.reason is not None
        assert f"build.sh changed since you granted it (grant {grant['id']}" in asked.reason
        assert asked.options is not None
        assert asked.options[PROGRAMS_OPTION] == {str(build): seal(str(build))}

    def test_the_interpreter_form_is_bound_to_its_script(self, home: Path, project: Path) -> None:
        """`bash job.sh` granted `always`: covered unchanged (control), asked again once
        job.sh changes, naming it; `make` beside it (a system program) binds nothing."""
        job = script(project / "job.sh", "echo one")
        grants = StandingGrants(home, EntryPoint.HOOK)
        command = "bash job.sh && make -v"
        options = bind_command(command, str(project), None)
        assert options is not None and list(options[PROGRAMS_OPTION]) == [str(job)]
        GrantStore(home).add(
            scope=Scope.ALWAYS,
            command=command,
            cwd=str(project),
            request="r1",
            user="u",
            options=options,
        )
        assert grants.grant_for(command, str(project), options=options) is not None
        job.write_text("#!/bin/sh\necho two\n")
        now = bind_command(command, str(project), None)
        assert grants.grant_for(command, str(project), options=now) is None
        said = grants.program_changes(command, str(project), None, now)
        assert said is not None and said.startswith("job.sh changed since you granted it")

    def test_changed_while_asked_the_approval_does_not_run_it(
        self, home: Path, project: Path
    ) -> None:
        """Approved after the script changed under the waiting request: the hook denies,
        saying it changed while you were asked (control: the same approval of an unchanged
        script allows)."""
        build = script(project / "build.sh", "echo one")
        hook = Hook(bash_event(project, "./build.sh"))
        request_id = waiting(home, Kind.COMMAND)
        assert in_terminal("approvals", "approve", request_id)[0] == 0
        assert decision(hook.result()[1]) == "allow"
        hook = Hook(bash_event(project, "./build.sh"))
        request_id = waiting(home, Kind.COMMAND)
        build.write_text("#!/bin/sh\necho two\n")
        assert in_terminal("approvals", "approve", request_id)[0] == 0
        _, out, _ = hook.result()
        assert decision(out) == "deny"
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert "build.sh changed while you were asked" in reason

    def test_a_file_too_large_to_hash_is_asked_each_time(self, home: Path, project: Path) -> None:
        """A program over the cap has no digest: even an `always` grant of the command does
        not cover it, and the request says why."""
        with (project / "big").open("wb") as big:
            big.truncate(MAX_PROGRAM_BYTES + 1)
        (project / "big").chmod(0o755)
        GrantStore(home).add(
            scope=Scope.ALWAYS, command="./big", cwd=str(project), request="r1", user="u"
        )
        hook = Hook(bash_event(project, "./big"), "--wait", "1")
        asked = filed_binding(home, waiting(home, Kind.COMMAND))
        assert decision(hook.result()[1]) == "ask"
        assert asked.reason is not None
        assert "big is larger than wisp hashes (128 MiB)" in asked.reason

    def test_always_for_a_file_with_no_digest_is_given_as_once(
        self, home: Path, project: Path
    ) -> None:
        """Approving `always` a call whose program has no digest (gone) saves no grant that
        could never apply: it is approved once, saying why (control: the same for a hashed
        script keeps its grant)."""
        script(project / "ok.sh", "exit 0")
        for command, kept in (("./ok.sh", 1), ("./gone.sh", 0)):
            hook = Hook(bash_event(project, command))
            request_id = waiting(home, Kind.COMMAND)
            code, said = in_terminal("approvals", "approve", request_id, "--scope", "always")
            assert code == 0, said
            assert decision(hook.result()[1]) == "allow"
            if not kept:
                assert "approved once only, not always: a program file" in " ".join(said.split())
            listed = json.loads(run_wisp("approvals", "grants", "--json").stdout)
            assert [g["command"] for g in listed] == ["./ok.sh"]


class TestGrantsKeptBefore:
    def test_an_old_grant_loads_and_covers_no_writable_program(
        self, home: Path, project: Path
    ) -> None:
        """A grants.json written before programs were bound (no `wisp.programs` in its
        options) still loads, lists and covers a system program's command (control), but
        not `./build.sh`: that is asked again, the request saying the grant was given
        without the file's content."""
        script(project / "build.sh", "echo built")
        home.mkdir(mode=0o700)
        old = [
            {
                "id": f"g000000{n}",
                "scope": "always",
                "command": command,
                "project": None,
                "grantedAt": "2026-01-01T00:00:00.000Z",
                "request": "0123456789abcdef",
                "user": "u",
                "options": {"timeout": 120000, "run_in_background": False},
            }
            for n, command in enumerate(("make deploy", "./build.sh"))
        ]
        (home / "grants.json").write_text(json.dumps({"version": 1, "grants": old}))
        (home / "grants.json").chmod(0o600)
        listed = json.loads(run_wisp("approvals", "grants", "--json").stdout)
        assert [g["command"] for g in listed] == ["make deploy", "./build.sh"]
        _, out, err = Hook(bash_event(project, "make deploy")).result()
        assert decision(out) == "allow", err
        hook = Hook(bash_event(project, "./build.sh"), "--wait", "1")
        asked = filed_binding(home, waiting(home, Kind.COMMAND))
        assert decision(hook.result()[1]) == "ask"
        assert asked.reason is not None
        assert "build.sh is a file the agent can write, and grant g0000001 was given" in (
            asked.reason
        )


class TestExecBindsContent:
    def test_a_program_rewritten_after_an_always_grant_is_asked_again(
        self, home: Path, tmp_path: Path
    ) -> None:
        """`wisp exec -- ./job.sh` approved `always` runs again unasked while unchanged
        (control); rewritten in place keeping its size and mtime, it is asked again (the
        request saying why) and, unanswered, does not run."""
        job = script(tmp_path / "job.sh", f"echo ran >> {tmp_path}/log")
        first = AskingCommand("exec", "--", "./job.sh", cwd=tmp_path)
        assert f"{job} (sha256 {seal(str(job))[7:19]})" in " ".join(first.prompt.split())
        assert in_terminal("approvals", "approve", first.id, "--scope", "always")[0] == 0
        assert first.result()[0] == 0
        again = run_wisp("exec", "--", "./job.sh", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert (tmp_path / "log").read_text() == "ran\nran\n"
        rewrite_in_place(job, f"echo bad >> {tmp_path}/log")
        changed = AskingCommand("exec", "--timeout", "1", "--", "./job.sh", cwd=tmp_path)
        assert "job.sh changed since you granted it" in " ".join(changed.prompt.split())
        code, _, err = changed.result()
        assert code == 124, err
        assert (tmp_path / "log").read_text() == "ran\nran\n"

    def test_a_program_rewritten_in_place_while_asked_is_refused(
        self, home: Path, tmp_path: Path
    ) -> None:
        """Rewritten in place during the wait, same size and mtime (its identity unchanged):
        approved, it is refused with 126, saying what changed, and nothing runs."""
        job = script(tmp_path / "job.sh", f"touch {tmp_path}/ran")
        running = AskingCommand("exec", "--", str(job), cwd=tmp_path)
        rewrite_in_place(job, f"touch {tmp_path}/bad")
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        code, _, err = running.result()
        assert code == 126, err
        assert f"{job} changed while you were asked" in " ".join(err.split())
        assert not (tmp_path / "ran").exists() and not (tmp_path / "bad").exists()

    def test_an_interpreters_script_is_checked_too(self, home: Path, tmp_path: Path) -> None:
        """`wisp exec -- sh job.sh`: the script changed while asked is refused (126), naming
        it; unchanged (control) it runs."""
        job = script(tmp_path / "job.sh", f"touch {tmp_path}/ran")
        running = AskingCommand("exec", "--", "sh", "job.sh", cwd=tmp_path)
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        assert running.result()[0] == 0 and (tmp_path / "ran").exists()
        (tmp_path / "ran").unlink()
        running = AskingCommand("exec", "--", "sh", "job.sh", cwd=tmp_path)
        job.write_text(f"#!/bin/sh\ntouch {tmp_path}/evil\n")
        assert in_terminal("approvals", "approve", running.id)[0] == 0
        code, _, err = running.result()
        assert code == 126, err
        assert "job.sh changed while you were asked" in " ".join(err.split())
        assert not (tmp_path / "ran").exists() and not (tmp_path / "evil").exists()


class TestAgentSessionBindsContent:
    def test_an_mcp_command_grant_covers_the_content_it_was_given_for(
        self, home: Path, project: Path
    ) -> None:
        """An agent-facing server (`wisp mcp`'s request_approval): a grant of `./build.sh`
        covers it unchanged (control); rewritten, it is not covered, and the request filed
        says why and binds the new content."""
        from pending import Via
        from wisp import AgentSession
        from wisp._home import open_channel
        from wisp.routes.notify import Face
        from wisp.stores.config import load_config

        build = script(project / "build.sh", "echo one")
        GrantStore(home).add(
            scope=Scope.ALWAYS,
            command="./build.sh",
            cwd=str(project),
            request="r1",
            user="u",
            options=bind_command("./build.sh", str(project), None),
        )
        session = AgentSession(
            open_channel(home),
            load_config(home),
            face=Face.MCP,
            entry_point=EntryPoint.MCP,
            dialog_via=Via.ELICITATION,
            client="test client",
        )
        try:
            assert session.granted("./build.sh", str(project)) is not None
            build.write_text("#!/bin/sh\necho two\n")
            assert session.granted("./build.sh", str(project)) is None
            request = session.file_command("./build.sh", str(project), "ship it")
        finally:
            session.close()
        assert isinstance(request.binding, CommandBinding)
        assert request.binding.reason is not None
        assert request.binding.reason.startswith("build.sh changed since you granted it")
        assert request.binding.reason.endswith("; ship it")
        assert request.binding.options == {PROGRAMS_OPTION: {str(build): seal(str(build))}}
