"""A harness's hook is run before the CLI loads (`wisp.__main__`): every agent tool call pays
for the hook's start, and typer with click is most of it (issue 41). Each check runs the
program in a fresh interpreter, as a harness starts it, and compares it with the CLI's own
command, run on the same event."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import START_PROBE, probe_env, probed_wisp

from pending import Scope
from wisp import GrantStore, current_user

CLI_FRAMEWORK = ("typer", "typer._click", "rich", "wisp.cli")
BASH_OPTIONS = {"timeout": 120000, "run_in_background": False}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def granted(home: Path, project: Path) -> Path:
    """*project*, where a standing grant covers `make deploy` (with BASH_OPTIONS)."""
    GrantStore(home).add(
        scope=Scope.ALWAYS,
        command="make deploy",
        cwd=str(project),
        request="r1",
        user=current_user(),
        options=BASH_OPTIONS,
    )
    return project


def bash_event(project: Path, command: str) -> bytes:
    return json.dumps(
        {
            "session_id": "s-1",
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Deploy", **BASH_OPTIONS},
            "tool_use_id": "toolu_01",
        }
    ).encode()


def program(home: Path, stdin: bytes, *args: str, cli: bool = False) -> tuple[int, str, str, Any]:
    """(status, stdout, stderr without the probe's line, the modules loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", START_PROBE, "wisp", *args],
        input=stdin,
        capture_output=True,
        env=probe_env(home, cli=cli),
        timeout=120,
        check=False,
    )
    err, _, probed = done.stderr.decode().rpartition("\nPROBED ")
    return done.returncode, done.stdout.decode(), err, json.loads(probed)


class TestTheHookBeforeTheCli:
    def test_a_granted_call_loads_no_cli_framework(self, home: Path, granted: Path) -> None:
        """A call a standing grant covers is allowed without typer, click, rich or the CLI
        ever being imported, nor shutil (with bz2 and lzma: for the printed settings only);
        decided from the grant store alone: no asking side loaded, no channel opened."""
        code, out, err, modules = program(
            home, bash_event(granted, "make deploy"), "hook", "claude-code"
        )
        assert code == 0, err
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert [m for m in modules if m.split(".")[0] in ("typer", "click", "rich")] == []
        assert "wisp.cli" not in modules
        assert "shutil" not in modules
        assert "wisp._asking" not in modules
        assert not (home / "pending").exists()

    def test_a_granted_call_loads_no_records(self, home: Path, granted: Path) -> None:
        """Nor attrs, cattrs, the channel's records and converter, the kinds' views or
        unicodedata: what a call a grant covers never needs (each was measured in its start,
        bench/README.md, issue 41)."""
        code, out, err, modules = program(
            home, bash_event(granted, "make deploy"), "hook", "claude-code"
        )
        assert code == 0, err
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert [m for m in modules if m.split(".")[0] in ("attr", "attrs", "cattrs")] == []
        spared = {"pending._records", "pending._convert", "pending._channel", "unicodedata"}
        assert spared & set(modules) == set()
        assert [m for m in modules if m.startswith("wisp.kinds.") and "_gate" in m] == []
        assert "wisp.kinds._view" not in modules

    def test_a_rule_decided_call_loads_no_signal_enums_or_parser_package(
        self, home: Path, project: Path
    ) -> None:
        """A call the built-in read-only rule decides (`ls -la` in a git project) is parsed
        by tree-sitter's compiled module alone: neither the `signal` module (its enums, ~3 M
        instructions; the hook takes `_signal`'s functions) nor tree_sitter's package
        __init__ (a typing Protocol) is loaded (issue 57); nor typing (~12 M: the hook's named
        tuples are pending._classes'), threading (~3.6 M: no harness is followed for a call
        nobody is asked) or datetime (~5.6 M: its record is stamped from `time`). Control:
        the parser did run, and the call was audited."""
        (project / ".git").mkdir()
        code, out, err, modules = program(
            home, bash_event(project, "ls -la"), "hook", "claude-code"
        )
        assert code == 0, err
        said = json.loads(out)["hookSpecificOutput"]
        assert said["permissionDecision"] == "allow"
        assert "tree_sitter._binding" in modules and "wisp.policy.shell" in modules
        assert "signal" not in modules
        assert "tree_sitter" not in modules
        assert {"typing", "threading", "datetime"} & set(modules) == set()
        assert '"event":"call.decided"' in (home / "logs" / "audit.jsonl").read_text()

    @pytest.mark.parametrize(
        "args",
        [
            ("hook", "claude-code"),
            ("hook", "claude-code", "--wait", "30", "--on-timeout=deny"),
        ],
    )
    def test_the_answer_is_the_clis(self, home: Path, granted: Path, args: tuple[str, ...]) -> None:
        """The program's answer to a granted call is byte for byte the CLI command's: its
        stdout, its stderr and its status."""
        event = bash_event(granted, "make deploy")
        fast = program(home, event, *args)
        cli = program(home, event, *args, cli=True)
        assert fast[:3] == cli[:3]
        assert "wisp.cli" not in fast[3] and "wisp.cli" in cli[3]

    @pytest.mark.parametrize(
        "harness", ["claude-code", "codex", "gemini", "copilot", "opencode", "cursor"]
    )
    def test_an_event_it_cannot_read_is_refused_as_the_cli_refuses_it(
        self, home: Path, harness: str
    ) -> None:
        """Each harness's hook, run before the CLI, refuses what is not an event in the same
        words, on the same stream, with the same status as its CLI command."""
        fast = program(home, b"not json", "hook", harness, "--wait=5")
        cli = program(home, b"not json", "hook", harness, "--wait=5", cli=True)
        assert fast[:3] == cli[:3]
        assert fast[0] != 0
        assert "wisp.cli" not in fast[3]

    @pytest.mark.parametrize(
        "args",
        [
            ("hook", "claude-code", "--wait", "soon"),
            ("hook", "claude-code", "--wait", "0"),
            ("hook", "claude-code", "--on-timeout", "allow"),
            ("hook", "claude-code", "--wait", "5", "--wait", "6"),
            ("hook", "codex", "--on-timeout", "deny"),
            ("hook", "claude-code", "--print-settings"),
            ("hook", "claude-code", "--help"),
            ("hook", "nobody"),
        ],
    )
    def test_any_other_command_line_is_the_clis(self, home: Path, args: tuple[str, ...]) -> None:
        """Help, the settings, an option twice or a value its option refuses, an unknown
        harness: the CLI parses it, and says and exits as it always did."""
        fast = program(home, b"{}", *args)
        cli = program(home, b"{}", *args, cli=True)
        assert fast[:3] == cli[:3]
        assert "wisp.cli" in fast[3]


class TestMcpBeforeTheCli:
    INITIALIZE = (
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
        b'"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}\n'
    )

    def test_an_mcp_clients_start_loads_no_cli_framework(self, home: Path) -> None:
        """`wisp mcp` as an MCP client starts it answers `initialize` and stops at end of
        input as the command does, without typer or the CLI ever loaded (its client waits
        for that answer before its first tool call; click and rich are the SDK's own)."""
        code, out, err, modules = program(home, self.INITIALIZE, "mcp")
        assert code == 0, err
        assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"] == "wisp"
        assert [m for m in modules if m.split(".")[0] == "typer"] == []
        assert "wisp.cli" not in modules and "wisp.mcp" in modules

    def test_any_other_spelling_is_the_clis(self, home: Path) -> None:
        """`wisp mcp --help` is the CLI's, as it always was."""
        code, out, _, modules = program(home, b"", "mcp", "--help")
        assert code == 0 and "Serve MCP over stdio" in out
        assert "wisp.cli" in modules


# Runs the `wisp` program on argv; the moment the request is linked into place (the audit
# event of link(2), which comes before the call), says on stderr which modules are loaded.
PROBE_FILED = """\
import json, os, sys
def probe(event, args):
    if event == "os.link" and str(args[1]).endswith((".request.json", ".question.json")):
        os.write(2, ("\\nFILED " + json.dumps(sorted(sys.modules)) + "\\n").encode())
sys.addaudithook(probe)
sys.argv = ["wisp", *sys.argv[2:]]
from wisp.__main__ import run
run()
"""

# Measured in a filing's start (bench/README.md, issue 41): attrs' import alone costs more
# instructions than the interpreter's start, cattrs more again; logging and hashlib's OpenSSL
# a tenth of it each.
NOT_BEFORE_FILING = ("attr", "attrs", "cattrs", "logging", "hashlib", "_hashlib")


def loaded_when_filed(home: Path, stdin: bytes, *args: str, cwd: Path) -> list[str]:
    """The modules `wisp ARGS` had loaded when its request was filed (it is then left
    unanswered until the command's own short deadline)."""
    err = probed_wisp(PROBE_FILED, home, *args, cwd=cwd, stdin=stdin).stderr.decode()
    assert "\nFILED " in err, err
    modules: list[str] = json.loads(err.partition("\nFILED ")[2].partition("\n")[0])
    return modules


class TestFilingBeforeAttrs:
    def test_an_ungranted_call_is_filed_before_attrs_loads(self, home: Path, project: Path) -> None:
        """A call no grant covers is filed with none of attrs, cattrs, logging or hashlib
        loaded: the channel's records and a gate's verdicts are named tuples, the digest is
        CPython's own sha256 (what comes after the filing, the notifier and the watch, may
        load them)."""
        modules = loaded_when_filed(
            home,
            bash_event(project, "make test"),
            "hook",
            "claude-code",
            "--wait",
            "1",
            cwd=project,
        )
        assert "pending._records" in modules and "wisp._asking" in modules
        assert [m for m in modules if m.split(".")[0] in NOT_BEFORE_FILING] == []

    def test_a_request_from_the_cli_is_filed_before_attrs_loads(
        self, home: Path, project: Path
    ) -> None:
        """`wisp approvals request` files its request with none of them loaded either."""
        modules = loaded_when_filed(
            home, b"", "approvals", "request", "--timeout", "1", "--", "make test", cwd=project
        )
        assert "pending._records" in modules and "typer" in modules
        assert [m for m in modules if m.split(".")[0] in NOT_BEFORE_FILING] == []
