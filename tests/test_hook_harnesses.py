"""`wisp hook codex|gemini|copilot|opencode|qwen|kilo|crush|cline|pi|droid`: each harness's
real pre-tool event (captured by the e2e tier, fixtures/agents/; Crush's written from its
source, Cline's, pi's and Factory Droid's captured by hand) fed to a real process, answered
from a real terminal, and its answer read in that harness's own shape. None of them has an
"ask": the wait is the ask, and anything but a grant or the person's approval is a deny."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import in_terminal, run_wisp, wait_until, wisp_command

from pending import Channel
from wisp.agents.hookio import GUARD_SCRIPT, GUARD_SHELL

EVENTS = Path(__file__).resolve().parent.parent / "fixtures" / "agents"


def codex_decision(out: str) -> tuple[str, str]:
    if not out.strip():
        return "allow", ""
    said = json.loads(out)["hookSpecificOutput"]
    return said["permissionDecision"], said["permissionDecisionReason"]


def gemini_decision(out: str) -> tuple[str, str]:
    said = json.loads(out)
    return said["decision"], said.get("reason", "")


def cline_decision(out: str) -> tuple[str, str]:
    said = json.loads(out)
    return ("deny" if said["cancel"] else "allow"), said.get("errorMessage", "")


def copilot_decision(out: str) -> tuple[str, str]:
    said = json.loads(out)
    return said["permissionDecision"], said["permissionDecisionReason"]


DECISIONS: dict[str, Callable[[str], tuple[str, str]]] = {
    "codex": codex_decision,
    "gemini": gemini_decision,
    "copilot": copilot_decision,
    "opencode": gemini_decision,  # wisp's plugin reads Gemini CLI's shape
    "qwen": codex_decision,  # Claude Code's shape
    "kilo": gemini_decision,  # wisp's OpenCode plugin, made Kilo Code's
    "crush": gemini_decision,  # its top-level `decision` and `reason`
    "cline": cline_decision,  # `{"cancel": true, "errorMessage"}`
    "pi": gemini_decision,  # wisp's pi extension reads the `decision` shape
    "droid": codex_decision,  # Claude Code's shape
}
HARNESSES = sorted(DECISIONS)
# OpenCode's and Kilo Code's plugins fail closed by themselves.
GUARDED = ["codex", "copilot", "crush", "droid", "gemini", "qwen"]


def event(harness: str, name: str, project: Path) -> bytes:
    text = (EVENTS / harness / f"{name}.json").read_text()
    return text.replace("/home/you/project", str(project)).encode()


class Hook:
    """`wisp hook HARNESS ARGS`, the event written to its stdin."""

    def __init__(self, harness: str, data: bytes, *args: str) -> None:
        self.harness = harness
        self.process = subprocess.Popen(
            wisp_command("hook", harness, *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.close()

    def result(self) -> tuple[int, str, str, str]:
        """(exit code, decision, reason, stderr)."""
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.wait(60)
        out, err = self.process.stdout.read(), self.process.stderr.read()
        decision, reason = DECISIONS[self.harness](out.decode())
        return self.process.returncode, decision, reason, err.decode()

    def result_json(self) -> tuple[int, dict[str, Any], str]:
        """(exit code, the JSON on stdout, stderr)."""
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.wait(60)
        out, err = self.process.stdout.read(), self.process.stderr.read()
        return self.process.returncode, json.loads(out), err.decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def filed(home: Path, suffix: str) -> str:
    def found() -> str | None:
        pending = home / "pending"
        names = [p.name for p in pending.glob(f"*{suffix}")] if pending.exists() else []
        return names[0].split(".")[0] if len(names) == 1 else None

    request_id: str = wait_until(found, timeout=30, what="a request filed")
    return request_id


@pytest.mark.parametrize("harness", HARNESSES)
class TestNoAskHarness:
    def test_its_shell_call_approved_from_a_terminal_is_allowed(
        self, home: Path, project: Path, harness: str
    ) -> None:
        """The shell call is filed as a command request (its command exactly); approved from
        a terminal, the harness is told to go on (exit 0)."""
        hook = Hook(harness, event(harness, "pre-tool-shell", project))
        request_id = filed(home, ".request.json")
        with Channel.open(home) as channel:
            binding = channel.status(request_id).request.binding
        assert binding.command == f"touch {project}/marker"  # type: ignore[union-attr]
        assert in_terminal("approvals", "approve", request_id)[0] == 0
        code, decision, _, _ = hook.result()
        assert (code, decision) == (0, "allow")

    def test_a_deny_with_a_reason_reaches_it(self, home: Path, project: Path, harness: str) -> None:
        """Denied from a terminal with a reason: the harness's deny, carrying the reason."""
        hook = Hook(harness, event(harness, "pre-tool-shell", project))
        request_id = filed(home, ".request.json")
        assert in_terminal("approvals", "deny", request_id, "--reason", "not here")[0] == 0
        code, decision, reason, _ = hook.result()
        assert (code, decision) == (0, "deny") and "not here" in reason

    def test_its_write_is_a_tool_request(self, home: Path, project: Path, harness: str) -> None:
        """Its file-writing tool is filed as a tool request (a shell heredoc for Codex)."""
        hook = Hook(harness, event(harness, "pre-tool-write", project), "--wait", "30")
        suffix = ".request.json" if harness == "codex" else ".tool.json"
        request_id = filed(home, suffix)
        group = "approvals" if harness == "codex" else "tools"
        assert in_terminal(group, "deny", request_id)[0] == 0
        assert hook.result()[1] == "deny"

    def test_nobody_answering_is_a_deny_naming_how_to_grant(
        self, home: Path, project: Path, harness: str
    ) -> None:
        """No answer within --wait: withdrawn, and a deny that says how to let it run
        without asking next time. (In a git project, where the example's `touch` is no
        must-ask call: a must-ask call's silence is a deny with nothing to grant,
        tests/test_hook_silence.py.)"""
        (project / ".git").mkdir()
        code, decision, reason, _ = Hook(
            harness, event(harness, "pre-tool-shell", project), "--wait", "1"
        ).result()
        assert (code, decision) == (0, "deny")
        assert "nobody answered" in reason and "--scope always" in reason

    def test_bad_input_is_a_blocking_deny(self, home: Path, harness: str) -> None:
        """Input it cannot read: exit 2 (the harness's block), a deny, no traceback."""
        code, decision, reason, err = Hook(harness, b"[1, 2]").result()
        assert (code, decision) == (2, "deny") and "not a JSON object" in reason
        assert "Traceback" not in err


@pytest.mark.parametrize("harness", GUARDED)
class TestPrintedSettings:
    def test_the_printed_settings_run_it_in_the_guard(self, home: Path, harness: str) -> None:
        """--print-settings: JSON whose command is wisp's guard around `wisp hook HARNESS`,
        with a timeout above the wait."""
        printed = run_wisp("hook", harness, "--print-settings")
        assert printed.returncode == 0, printed.stderr
        text = json.dumps(json.loads(printed.stdout))
        assert str(GUARD_SCRIPT) in text
        hooks: list[Any] = []

        def commands(value: Any) -> None:
            if isinstance(value, dict):
                for key, item in value.items():
                    if key in ("command", "bash") and isinstance(item, str):
                        hooks.append(item)
                    commands(item)
            elif isinstance(value, list):
                for item in value:
                    commands(item)

        commands(json.loads(printed.stdout))
        (command,) = hooks
        argv = shlex.split(command)
        assert argv[:2] == [GUARD_SHELL, str(GUARD_SCRIPT)]
        assert argv[-2:] == ["hook", harness]


NODE = shutil.which("node")


class OpenCodePlugin:
    """wisp's OpenCode plugin (as --print-settings makes it, running *argv* for wisp; *kilo*:
    Kilo Code's) loaded by node and called as OpenCode calls it, with the captured shell
    event."""

    def __init__(self, tmp: Path, argv: list[str], *, kilo: bool = False) -> None:
        from wisp.agents import kilo as kilo_code
        from wisp.agents import opencode

        self.path = tmp / "wisp.mjs"
        self.path.write_text((kilo_code if kilo else opencode).plugin(argv))
        harness = "kilo" if kilo else "opencode"
        shell = json.loads((EVENTS / harness / "pre-tool-shell.json").read_text())
        self.driver = tmp / "driver.mjs"
        self.driver.write_text(
            f"import {{ Wisp }} from {json.dumps(str(self.path))}\n"
            f"const hooks = await Wisp({{ directory: {json.dumps(str(tmp))} }})\n"
            "try {\n"
            f"  await hooks['tool.execute.before']({json.dumps(shell['input'])}, "
            f"{json.dumps(shell['output'])})\n"
            "  console.log('RAN')\n"
            "} catch (error) { console.log('THREW ' + error.message) }\n"
        )

    def call(self) -> str:
        """RAN (OpenCode runs the tool) or THREW and the message (it does not)."""
        assert NODE is not None
        done = subprocess.run(
            [NODE, str(self.driver)], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()


@pytest.mark.skipif(NODE is None, reason="node is not installed")
class TestOpenCodePlugin:
    def test_an_allow_lets_the_call_run(self, tmp_path: Path) -> None:
        """wisp exits 0 answering allow: the hook returns, and OpenCode runs the call."""
        answer = 'cat >/dev/null; echo \'{"decision": "allow"}\''
        assert OpenCodePlugin(tmp_path, ["/bin/sh", "-c", answer]).call() == "RAN"

    def test_a_deny_throws_its_reason(self, tmp_path: Path) -> None:
        """wisp's deny: a throw carrying wisp's reason (what the model is told)."""
        answer = 'cat >/dev/null; echo \'{"decision": "deny", "reason": "wisp: no"}\''
        assert OpenCodePlugin(tmp_path, ["/bin/sh", "-c", answer]).call() == "THREW wisp: no"

    def test_wisp_not_runnable_throws(self, tmp_path: Path) -> None:
        """A wisp that cannot be run (moved, uninstalled): a throw that says so."""
        said = OpenCodePlugin(tmp_path, [str(tmp_path / "gone" / "wisp"), "hook"]).call()
        assert said.startswith("THREW wisp:") and "could not be run" in said

    def test_wisp_killed_throws(self, tmp_path: Path) -> None:
        """A wisp killed before it answers (SIGKILL): a throw, never a run."""
        said = OpenCodePlugin(tmp_path, ["/bin/sh", "-c", "kill -9 $$"]).call()
        assert said.startswith("THREW") and "SIGKILL" in said

    def test_an_allow_with_a_failing_exit_throws(self, tmp_path: Path) -> None:
        """An allow on stdout with a non-zero exit is not an allow: both must say so."""
        answer = 'cat >/dev/null; echo \'{"decision": "allow"}\'; exit 1'
        assert OpenCodePlugin(tmp_path, ["/bin/sh", "-c", answer]).call().startswith("THREW")

    def test_printed_it_runs_this_wisp_unguarded(self, home: Path) -> None:
        """--print-settings prints the plugin running `wisp hook opencode` itself (the plugin
        is the guard), saying where it goes."""
        printed = run_wisp("hook", "opencode", "--print-settings")
        assert printed.returncode == 0, printed.stderr
        assert "~/.config/opencode/plugin/wisp.js" in printed.stdout
        line = next(x for x in printed.stdout.splitlines() if x.startswith("const WISP = "))
        argv = json.loads(line.removeprefix("const WISP = "))
        assert argv[-2:] == ["hook", "opencode"] and str(GUARD_SCRIPT) not in argv


def cursor_event(name: str, project: Path) -> dict[str, Any]:
    text = (EVENTS / "cursor" / f"{name}.json").read_text()
    loaded: dict[str, Any] = json.loads(text.replace("/home/you/project", str(project)))
    return loaded


class CursorHook(Hook):
    """`wisp hook cursor ARGS` fed one of Cursor's documented events."""

    def __init__(self, name: str, project: Path, *args: str) -> None:
        super().__init__("cursor", json.dumps(cursor_event(name, project)).encode(), *args)

    def said(self) -> tuple[int, dict[str, Any], str]:
        """(exit code, Cursor's JSON, stderr)."""
        return self.result_json()


class TestCursorEvents:
    def test_a_shell_execution_is_a_command_request(self, home: Path, project: Path) -> None:
        """beforeShellExecution is filed as a command request, its command exactly and its
        cwd; approved from a terminal, Cursor is told `allow`."""
        hook = CursorHook("before-shell-execution", project)
        request_id = filed(home, ".request.json")
        with Channel.open(home) as channel:
            binding = channel.status(request_id).request.binding
        assert binding.command == f"touch {project}/marker"  # type: ignore[union-attr]
        assert binding.cwd == str(project)  # type: ignore[union-attr]
        assert in_terminal("approvals", "approve", request_id)[0] == 0
        code, said, _ = hook.said()
        assert (code, said["permission"]) == (0, "allow")

    def test_an_mcp_call_is_a_tool_request_naming_its_server(
        self, home: Path, project: Path
    ) -> None:
        """beforeMCPExecution is a tool request whose input is the arguments (read from
        their JSON string) and the server they go to; a deny says who denied it, to the
        agent and to the person."""
        hook = CursorHook("before-mcp-execution", project)
        request_id = filed(home, ".tool.json")
        with Channel.open(home) as channel:
            binding = channel.status(request_id).request.binding
        assert binding.tool == "MCP:database_query"  # type: ignore[union-attr]
        assert binding.input == {  # type: ignore[union-attr]
            "arguments": {"query": "SELECT * FROM users"},
            "server": {"url": "http://127.0.0.1:8765/mcp"},
        }
        assert in_terminal("tools", "deny", request_id)[0] == 0
        code, said, _ = hook.said()
        assert (code, said["permission"]) == (0, "deny")
        assert "wisp: denied by" in said["agent_message"] and request_id in said["user_message"]

    def test_a_pre_tool_write_is_a_tool_request(self, home: Path, project: Path) -> None:
        """preToolUse for Write is a tool request; its Shell is a command request."""
        hook = CursorHook("pre-tool-use-write", project, "--wait", "30")
        request_id = filed(home, ".tool.json")
        assert in_terminal("tools", "deny", request_id)[0] == 0
        assert hook.said()[1]["permission"] == "deny"
        shell = CursorHook("pre-tool-use-shell", project, "--wait", "30")
        request_id = filed(home, ".request.json")
        assert in_terminal("approvals", "deny", request_id)[0] == 0
        assert shell.said()[1]["permission"] == "deny"

    def test_nobody_answering_asks_in_cursor(self, home: Path, project: Path) -> None:
        """No answer within --wait: withdrawn, and `ask` (Cursor asks in its own dialog),
        never an allow. (In a git project, where the example's `touch` is no must-ask call,
        whose silence is a deny: tests/test_hook_silence.py.)"""
        (project / ".git").mkdir()
        code, said, _ = CursorHook("before-shell-execution", project, "--wait", "1").said()
        assert (code, said["permission"]) == (0, "ask")
        assert "nobody answered" in said["user_message"]

    def test_an_unknown_event_is_a_blocking_deny(self, home: Path, project: Path) -> None:
        """An event wisp does not answer (beforeReadFile): exit 2 and a deny, no
        traceback."""
        event = cursor_event("before-shell-execution", project) | {
            "hook_event_name": "beforeReadFile"
        }
        code, said, err = Hook("cursor", json.dumps(event).encode()).result_json()
        assert (code, said["permission"]) == (2, "deny") and "beforeReadFile" in err
        assert "Traceback" not in err

    def test_the_printed_settings_fail_closed_in_the_guard(self, home: Path) -> None:
        """--print-settings: hooks.json with the three events, each `failClosed`, each the
        guard around `wisp hook cursor`, preToolUse for the tools that change files."""
        printed = run_wisp("hook", "cursor", "--print-settings")
        assert printed.returncode == 0, printed.stderr
        hooks = json.loads(printed.stdout)["hooks"]
        assert sorted(hooks) == ["beforeMCPExecution", "beforeShellExecution", "preToolUse"]
        for (entry,) in hooks.values():
            assert entry["failClosed"] is True and entry["timeout"] > 590
            argv = shlex.split(entry["command"])
            assert argv[:2] == [GUARD_SHELL, str(GUARD_SCRIPT)]
            assert argv[-2:] == ["hook", "cursor"]
        assert "Write" in hooks["preToolUse"][0]["matcher"]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
class TestKiloPlugin:
    def test_an_allow_lets_the_call_run_and_a_deny_throws(self, tmp_path: Path) -> None:
        """Kilo Code's plugin (OpenCode's, made Kilo Code's) called with Kilo Code's captured
        shell event: wisp's deny is a throw carrying its reason; the control: its allow runs."""
        deny = 'cat >/dev/null; echo \'{"decision": "deny", "reason": "wisp: no"}\''
        allow = 'cat >/dev/null; echo \'{"decision": "allow"}\''
        assert OpenCodePlugin(tmp_path, ["/bin/sh", "-c", deny], kilo=True).call() == (
            "THREW wisp: no"
        )
        assert OpenCodePlugin(tmp_path, ["/bin/sh", "-c", allow], kilo=True).call() == "RAN"

    def test_wisp_killed_throws_naming_wisp_hook_kilo(self, tmp_path: Path) -> None:
        """A wisp killed before it answers: a throw that names `wisp hook kilo`, never a run."""
        said = OpenCodePlugin(tmp_path, ["/bin/sh", "-c", "kill -9 $$"], kilo=True).call()
        assert said.startswith("THREW") and "SIGKILL" in said and "wisp hook kilo" in said

    def test_printed_it_is_kilo_codes_running_this_wisp_unguarded(self, home: Path) -> None:
        """--print-settings prints the plugin for Kilo Code's plugin folder, running
        `wisp hook kilo` itself (the plugin is the guard), with no word of OpenCode's left."""
        printed = run_wisp("hook", "kilo", "--print-settings")
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout.startswith("// wisp's Kilo Code plugin")
        assert "~/.config/kilo/plugin/wisp.js" in printed.stdout
        assert "opencode" not in printed.stdout.lower()
        line = next(x for x in printed.stdout.splitlines() if x.startswith("const WISP = "))
        argv = json.loads(line.removeprefix("const WISP = "))
        assert argv[-2:] == ["hook", "kilo"] and str(GUARD_SCRIPT) not in argv


class TestQwenGuard:
    def test_a_killed_wisp_is_exit_2_with_the_reason_on_stderr(self, tmp_path: Path) -> None:
        """Qwen Code reads only stderr on exit 2 (and runs the call if it is empty): the guard
        as setup installs it, its wisp killed, exits 2 and says why there. The control: a
        wisp that answers allow is passed through as it said it."""
        from wisp.agents.hookio import guarded_command
        from wisp.agents.qwen import HARNESS

        data = event("qwen", "pre-tool-shell", tmp_path)
        killed = guarded_command(HARNESS, ["/bin/sh", "-c", "cat >/dev/null; kill -9 $$", "-"])
        done = subprocess.run(killed, input=data, capture_output=True, timeout=60, check=False)
        assert done.returncode == 2 and "ended without answering" in done.stderr.decode(), done
        assert codex_decision(done.stdout.decode())[0] == "deny"
        allow = HARNESS.allow("wisp: approved").stdout
        answers = ["/bin/sh", "-c", f"cat >/dev/null; echo {shlex.quote(allow)}", "-"]
        done = subprocess.run(
            guarded_command(HARNESS, answers), input=data, capture_output=True, timeout=60
        )
        assert done.returncode == 0 and codex_decision(done.stdout.decode())[0] == "allow"

    def test_the_printed_timeout_is_in_milliseconds_above_the_wait(self, home: Path) -> None:
        """--print-settings --wait 30: Qwen Code's timeout is 40 000 (milliseconds: 0.24
        reads 1000 or more as ms), so wisp answers before Qwen Code gives up and runs it."""
        printed = run_wisp("hook", "qwen", "--print-settings", "--wait", "30")
        assert printed.returncode == 0, printed.stderr
        (group,) = json.loads(printed.stdout)["hooks"]["PreToolUse"]
        (hook,) = group["hooks"]
        assert group["matcher"] == ".*" and hook["timeout"] == 40_000
        assert shlex.split(hook["command"])[-4:] == ["hook", "qwen", "--wait", "30"]


class PiExtension:
    """wisp's pi extension (as --print-settings makes it, running *argv* for wisp) loaded by
    node and called as pi calls a `tool_call` handler, with the captured shell event."""

    def __init__(self, tmp: Path, argv: list[str], *, mutate: bool = False) -> None:
        from wisp.agents import pi

        self.path = tmp / "wisp.mjs"
        self.path.write_text(pi.extension(argv))
        shell = json.loads((EVENTS / "pi" / "pre-tool-shell.json").read_text())
        event = {"type": "tool_call", "toolName": "bash", "toolCallId": "call_0001",
                 "input": shell["tool_input"]}  # fmt: skip
        later = (
            "  try { event.input.command = 'rm -rf ~'; console.log('CHANGED') }\n"
            "  catch { console.log('FROZEN') }\n"
            if mutate
            else ""
        )
        self.driver = tmp / "driver.mjs"
        self.driver.write_text(
            f"import wisp from {json.dumps(str(self.path))}\n"
            "let handler\n"
            "wisp({ on: (name, fn) => { if (name === 'tool_call') handler = fn } })\n"
            f"const event = {json.dumps(event)}\n"
            f"const ctx = {{ cwd: {json.dumps(str(tmp))}, "
            "sessionManager: { getSessionId: () => 's' } }\n"
            "const said = await handler(event, ctx)\n"
            "if (said === undefined) {\n  console.log('RAN')\n" + later + "}\n"
            "else console.log((said.block ? 'BLOCKED ' : 'ODD ') + said.reason)\n"
        )

    def call(self) -> str:
        """RAN (pi runs the tool; FROZEN/CHANGED after it with *mutate*) or BLOCKED and the
        reason (it does not)."""
        assert NODE is not None
        done = subprocess.run(
            [NODE, str(self.driver)], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()


ALLOW = 'cat >/dev/null; echo \'{"decision": "allow"}\''


@pytest.mark.skipif(NODE is None, reason="node is not installed")
class TestPiExtension:
    def test_an_allow_lets_the_call_run_and_freezes_its_input(self, tmp_path: Path) -> None:
        """wisp exits 0 answering allow: the handler returns nothing, and pi runs the call;
        its input is then frozen, so an extension after wisp's cannot change what runs."""
        assert PiExtension(tmp_path, ["/bin/sh", "-c", ALLOW], mutate=True).call() == (
            "RAN\nFROZEN"
        )

    def test_a_deny_blocks_with_its_reason(self, tmp_path: Path) -> None:
        """wisp's deny: `{block: true}` carrying wisp's reason (what the model is told)."""
        answer = 'cat >/dev/null; echo \'{"decision": "deny", "reason": "wisp: no"}\''
        assert PiExtension(tmp_path, ["/bin/sh", "-c", answer]).call() == "BLOCKED wisp: no"

    def test_wisp_not_runnable_or_killed_blocks(self, tmp_path: Path) -> None:
        """A wisp that cannot be run, or is killed before it answers: a block saying so."""
        said = PiExtension(tmp_path, [str(tmp_path / "gone" / "wisp"), "hook"]).call()
        assert said.startswith("BLOCKED wisp:") and "could not be run" in said
        said = PiExtension(tmp_path, ["/bin/sh", "-c", "kill -9 $$"]).call()
        assert said.startswith("BLOCKED") and "SIGKILL" in said

    def test_an_allow_with_a_failing_exit_blocks(self, tmp_path: Path) -> None:
        """An allow on stdout with a non-zero exit is not an allow."""
        answer = ALLOW + "; exit 1"
        assert PiExtension(tmp_path, ["/bin/sh", "-c", answer]).call().startswith("BLOCKED")

    def test_printed_it_runs_this_wisp_unguarded(self, home: Path) -> None:
        """--print-settings prints the extension (its mark first) running `wisp hook pi`
        itself: the extension is its own guard."""
        printed = run_wisp("hook", "pi", "--print-settings")
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout.startswith("// wisp's pi extension")
        line = next(x for x in printed.stdout.splitlines() if x.startswith("const WISP = "))
        argv = json.loads(line.removeprefix("const WISP = "))
        assert argv[-2:] == ["hook", "pi"] and str(GUARD_SCRIPT) not in argv


class TestDroid:
    def test_a_killed_wisp_is_exit_2_with_the_reason_on_stderr(self, tmp_path: Path) -> None:
        """Factory Droid runs the call on an exit 1 or a time-out: the guard, its wisp
        killed, exits 2 with the deny and its reason on stderr. The control: an allow
        passes through as wisp said it."""
        from wisp.agents.droid import HARNESS
        from wisp.agents.hookio import guarded_command

        data = event("droid", "pre-tool-shell", tmp_path)
        killed = guarded_command(HARNESS, ["/bin/sh", "-c", "cat >/dev/null; kill -9 $$", "-"])
        done = subprocess.run(killed, input=data, capture_output=True, timeout=60, check=False)
        assert done.returncode == 2 and "ended without answering" in done.stderr.decode(), done
        assert codex_decision(done.stdout.decode())[0] == "deny"
        allow = HARNESS.allow("wisp: approved").stdout
        answers = ["/bin/sh", "-c", f"cat >/dev/null; echo {shlex.quote(allow)}", "-"]
        done = subprocess.run(
            guarded_command(HARNESS, answers), input=data, capture_output=True, timeout=60
        )
        assert done.returncode == 0 and codex_decision(done.stdout.decode())[0] == "allow"

    def test_the_printed_hooks_are_top_level_with_a_timeout_above_the_wait(
        self, home: Path
    ) -> None:
        """--print-settings --wait 30: `PreToolUse` at the top level (as ~/.factory/hooks.json
        holds it), matcher `*`, timeout 40 s."""
        printed = run_wisp("hook", "droid", "--print-settings", "--wait", "30")
        assert printed.returncode == 0, printed.stderr
        (group,) = json.loads(printed.stdout)["PreToolUse"]
        (hook,) = group["hooks"]
        assert group["matcher"] == "*" and hook["timeout"] == 40

    def test_executes_words_about_the_call_are_its_description(
        self, home: Path, tmp_path: Path
    ) -> None:
        """Execute's `riskLevel` and `riskLevelReason` (the model's own words) are shown as
        its description, not bound as options a grant would have to match."""
        hook = Hook("droid", event("droid", "pre-tool-shell", tmp_path))
        request_id = filed(home, ".request.json")
        with Channel.open(home) as channel:
            binding = channel.status(request_id).request.binding
        assert not binding.options, binding  # type: ignore[union-attr]
        text = (home / "pending" / f"{request_id}.request.json").read_text()
        assert "creates one empty file" in text
        assert in_terminal("approvals", "deny", request_id)[0] == 0
        assert hook.result()[1] == "deny"


class TestClineHookFile:
    def _printed(self, *args: str) -> str:
        printed = run_wisp("hook", "cline", "--print-settings", *args)
        assert printed.returncode == 0, printed.stderr
        return printed.stdout

    def test_the_file_execs_wisp_in_its_guard_waiting_less_than_clines_timeout(
        self, home: Path
    ) -> None:
        """The printed hook file starts with its shebang and wisp's mark, and execs wisp's
        guard around `wisp hook cline`; a wait above Cline's fixed 120 s (which kills the
        hook and runs the call) is cut to 110 s, and the control: a wait below stays."""
        from wisp.agents.cline import MAX_WAIT_S

        text = self._printed()
        assert text.startswith("#!/bin/sh\n# wisp's Cline hook")
        line = next(x for x in text.splitlines() if x.startswith("exec "))
        argv = shlex.split(line.removeprefix("exec "))
        assert argv[:2] == [GUARD_SHELL, str(GUARD_SCRIPT)]
        assert argv[-4:] == ["hook", "cline", "--wait", f"{MAX_WAIT_S:g}"]
        argv = shlex.split(self._printed("--wait", "30").splitlines()[-1].removeprefix("exec "))
        assert argv[-4:] == ["hook", "cline", "--wait", "30"]

    def test_the_file_run_as_cline_runs_it_answers_its_deny(
        self, home: Path, tmp_path: Path
    ) -> None:
        """Run by `sh FILE` with Cline's event (as Cline runs a file by its shebang), nobody
        answering: `{"cancel": true}` with the reason on stdout, which is all Cline reads."""
        hook = tmp_path / "PreToolUse"
        hook.write_text(self._printed("--wait", "1"))
        done = subprocess.run(
            ["sh", str(hook)],
            input=event("cline", "pre-tool-shell", tmp_path),
            capture_output=True,
            timeout=60,
        )
        decision, reason = cline_decision(done.stdout.decode())
        assert decision == "deny" and "nobody answered" in reason, done

    def test_a_killed_wisp_is_clines_deny_on_stdout(self, tmp_path: Path) -> None:
        """Cline reads no exit status and runs the call on empty output: the guard, its wisp
        killed, prints `{"cancel": true}` with why. The control: an allow passes through."""
        from wisp.agents.cline import HARNESS
        from wisp.agents.hookio import guarded_command

        data = event("cline", "pre-tool-shell", tmp_path)
        killed = guarded_command(HARNESS, ["/bin/sh", "-c", "cat >/dev/null; kill -9 $$", "-"])
        done = subprocess.run(killed, input=data, capture_output=True, timeout=60, check=False)
        decision, reason = cline_decision(done.stdout.decode())
        assert decision == "deny" and "ended without answering" in reason, done
        allow = HARNESS.allow("wisp: approved").stdout
        answers = ["/bin/sh", "-c", f"cat >/dev/null; echo {shlex.quote(allow)}", "-"]
        done = subprocess.run(
            guarded_command(HARNESS, answers), input=data, capture_output=True, timeout=60
        )
        assert done.returncode == 0 and cline_decision(done.stdout.decode())[0] == "allow"

    def test_every_line_of_run_commands_is_asked(self, home: Path, tmp_path: Path) -> None:
        """`run_commands` runs each of its `commands`: all of them are the one command asked,
        a line each (the control, one line, is that line exactly: the shared cases)."""
        data = json.loads(event("cline", "pre-tool-shell", tmp_path))
        data["tool_call"]["input"]["commands"] = ["true", f"touch {tmp_path}/marker"]
        hook = Hook("cline", json.dumps(data).encode())
        request_id = filed(home, ".request.json")
        with Channel.open(home) as channel:
            binding = channel.status(request_id).request.binding
        assert binding.command == f"true\ntouch {tmp_path}/marker"  # type: ignore[union-attr]
        assert in_terminal("approvals", "deny", request_id)[0] == 0
        assert hook.result()[1] == "deny"

    def test_another_event_is_refused(self, home: Path, tmp_path: Path) -> None:
        """A file of wisp's run for another of Cline's events (a `tool_result`): a deny that
        says to install it as PreToolUse only, exit 2, no traceback."""
        data = json.loads(event("cline", "pre-tool-shell", tmp_path))
        data["hookName"] = "tool_result"
        code, decision, reason, err = Hook("cline", json.dumps(data).encode()).result()
        assert (code, decision) == (2, "deny") and "PreToolUse" in reason
        assert "Traceback" not in err
