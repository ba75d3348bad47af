"""wisp never runs code from where the agent writes (issue 55): a `wisp/` package, a `pending/`
one and the libraries wisp imports, planted in the agent's project, whose import writes a
marker file. From that directory (the working directory) the person runs the TUI, a push goes
out, `wisp mcp` and `wisp web` serve, every harness's hook answers (as the installed `wisp`
program and as the printed settings run it): the planted code never runs, and wisp's own
does (the relay shows the request, the push arrives, the server answers).

The control first: the same planted package runs when the same module is started the unsafe
way (`python -m` from that directory, as the TUI's relay, the push and the hook's fallback
command once were), so a test here fails when a child is started so again.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import WAIT_S, audit_records, command, in_terminal, read_line, wait_until
from mcp_harness import INITIALIZE, INITIALIZED
from pushserver import PushServer
from test_tui_tmux import SCREEN_WAIT_S, TMUX, Terminal, descendants

from pending import Channel, ServerLock
from wisp.routes.subproc import child_env

# The `wisp` program as installed beside this interpreter (what a person and a harness run).
WISP = Path(sys.executable).parent / "wisp"
EVENTS = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
HARNESSES = (
    "claude-code",
    "codex",
    "gemini",
    "copilot",
    "opencode",
    "cursor",
    "qwen",
    "kilo",
    "crush",
    "cline",
    "pi",
    "droid",
)
# Each harness's captured shell event (Cursor's own name for it).
SHELL_EVENT = {h: "pre-tool-shell" for h in HARNESSES} | {"cursor": "before-shell-execution"}
# Every module a start from the project could import in the place of wisp's: wisp's packages
# and the entry modules its children run, its channel, and libraries it imports.
PLANTED = (
    "wisp/__init__.py",
    "wisp/__main__.py",
    "wisp/relay/__init__.py",
    "wisp/relay/__main__.py",
    "wisp/routes/__init__.py",
    "wisp/routes/push.py",
    "wisp/agents/__init__.py",
    "wisp/mcp/__init__.py",
    "wisp/web/__init__.py",
    "wisp/tui/__init__.py",
    "pending/__init__.py",
    "attrs/__init__.py",
    "watchdog/__init__.py",
    "apprise/__init__.py",
    "textual/__init__.py",
    "json/__init__.py",
)
# What each planted module does on import: appends its own name to the marker file.
PLANT = """\
import os
_fd = os.open({marker!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
os.write(_fd, {name!r}.encode() + b"\\n")
os.close(_fd)
"""
# Where `wisp agents setup HARNESS` writes its hook, under HOME.
SETUP_FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "copilot": ".copilot/hooks/wisp.json",
    "opencode": ".config/opencode/plugin/wisp.js",
    "cursor": ".cursor/hooks.json",
    "qwen": ".qwen/settings.json",
    "kilo": ".config/kilo/plugin/wisp.js",
    "crush": ".config/crush/crush.json",
    "cline": ".cline/hooks/PreToolUse",
    "pi": ".pi/agent/extensions/wisp.js",
    "droid": ".factory/hooks.json",
}
SECRET = "planted-topic-5b2c"
BAD_EVENT = b"[1, 2]"  # an event every hook refuses at once, once wisp's own code has read it


class Project:
    """An agent's project holding the planted packages; :meth:`ran` names what of them ran."""

    def __init__(self, root: Path) -> None:
        self.path = root / "project"
        self.marker = root / "planted-ran"  # outside the project: nothing there reads it
        for name in PLANTED:
            module = self.path / name
            module.parent.mkdir(parents=True, exist_ok=True)
            module.write_text(PLANT.format(marker=str(self.marker), name=name))

    def ran(self) -> list[str]:
        """The planted modules that were imported, in order (none: the marker is absent)."""
        return self.marker.read_text().split() if self.marker.exists() else []


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    """A person's environment: their WISP_HOME, no proxy between wisp and 127.0.0.1, and no
    PYTHONSAFEPATH (which would keep the working directory off every import path by itself,
    and hide what wisp does)."""
    environ = {**os.environ, "WISP_HOME": str(home), "NO_PROXY": "127.0.0.1,localhost"}
    for name in ("PYTHONSAFEPATH", "TMUX", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        environ.pop(name, None)
        environ.pop(name.lower(), None)
    return environ


@pytest.fixture
def push_server() -> Iterator[PushServer]:
    server = PushServer()
    yield server
    server.close()


def set_push(server: PushServer) -> str:
    """`notifications.push` set to *server* (a change taken only from a terminal); the URL."""
    url = f"ntfy://127.0.0.1:{server.port}/{SECRET}"
    code, output = in_terminal("config", "set", "notifications.push", json.dumps([url]))
    assert code == 0, output
    return url


def posted(home: Path) -> list[dict[str, Any]]:
    """The pushes audited as posted."""
    return [
        r
        for r in audit_records(home)
        if r["event"] == "notification" and r.get("outcome") == "posted"
    ]


def hook_commands(text: str, harness: str, *, toml: bool = False) -> list[str]:
    """Every hook command in *harness*'s settings as printed or written: JSON, or TOML with
    *toml* (Codex's config.toml); OpenCode's plugin (and Kilo Code's), its argv; Cline's hook
    file, the line that execs it."""
    if harness in ("opencode", "kilo", "pi"):
        line = next(x for x in text.splitlines() if x.startswith("const WISP = "))
        return [shlex.join(json.loads(line.removeprefix("const WISP = ").rstrip(";")))]
    if harness == "cline":
        return [next(x for x in text.splitlines() if x.startswith("exec ")).removeprefix("exec ")]
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("command", "bash") and isinstance(item, str):
                    found.append(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(tomllib.loads(text) if toml else json.loads(text))
    assert found, text
    return found


def written_commands(
    how: str, harness: str, argv: list[str], env: dict[str, str], where: Path
) -> list[str]:
    """The hook commands *argv* (a way to run wisp) puts in *harness*'s settings, run in
    *where*: printed (--print-settings), or written by `wisp agents setup` into a fresh
    HOME there."""
    if how == "printed":
        done = subprocess.run(
            [*argv, "hook", harness, "--print-settings"],
            cwd=where, capture_output=True, text=True, env=env, timeout=WAIT_S * 2,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return hook_commands(done.stdout, harness)
    fresh = where / f"home-{len(list(where.iterdir()))}"
    fresh.mkdir()
    setup_env = {**env, "HOME": str(fresh)}
    for name in ("XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"):
        setup_env.pop(name, None)
    done = subprocess.run(
        [*argv, "agents", "setup", harness],
        cwd=where, capture_output=True, text=True, env=setup_env, timeout=WAIT_S * 2,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    written = fresh / SETUP_FILES[harness]
    return hook_commands(written.read_text(), harness, toml=written.suffix == ".toml")


def cmdline(pid: int) -> bytes:
    """*pid*'s argv, NUL-separated ("" once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def run_from(project: Project, argv: list[str], env: dict[str, str], data: bytes = b"") -> str:
    """*argv* run in the project with *data* on stdin, to its end; its stdout (and stderr)."""
    done = subprocess.run(
        argv, cwd=project.path, input=data, capture_output=True, env=env, timeout=WAIT_S * 2
    )
    return (done.stdout + done.stderr).decode(errors="replace")


class TestTheControl:
    @pytest.mark.parametrize("module", ["wisp.relay", "wisp.routes.push", "wisp"])
    def test_python_m_from_the_project_runs_the_planted_package(
        self, project: Project, env: dict[str, str], module: str
    ) -> None:
        """`python -m MODULE` run in the project (as the TUI's relay, a push and the hook's
        fallback command were started) imports the planted `wisp/` in the place of wisp's:
        the marker names it. `python -P -m MODULE` there does not."""
        assert project.ran() == []
        run_from(project, [sys.executable, "-P", "-m", module, "--help"], env)
        assert project.ran() == []
        run_from(project, [sys.executable, "-m", module], env)
        assert project.ran()[0] == "wisp/__init__.py", project.ran()


class TestChildEnv:
    def test_a_relative_home_is_made_absolute_for_a_child_started_in_root(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A child runs in `/`, not in the caller's directory: a relative `$WISP_HOME` is
        handed to it as the caller reads it (from the caller's directory), `~` expanded; an
        absolute one, and the rest of the environment, as they are."""
        monkeypatch.chdir(tmp_path)
        assert child_env({"WISP_HOME": "rel/home", "X": "1"}) == {
            "WISP_HOME": str(tmp_path / "rel" / "home"),
            "X": "1",
        }
        assert child_env({"WISP_HOME": "~/w"})["WISP_HOME"] == str(Path.home() / "w")
        assert child_env({"WISP_HOME": "/abs/home"}) == {"WISP_HOME": "/abs/home"}
        assert child_env({}) == {}


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)")
class TestTui:
    def test_the_tui_opened_in_the_project_runs_wisps_relay(
        self, home: Path, project: Project, channel: Channel, server: ServerLock
    ) -> None:
        """`wisp tui` opened in the project, in a real terminal: its local relay is wisp's
        (it shows the waiting request, never "local down"), runs in `/` with `-P`, and no
        planted module ran."""
        channel.file(command(server, text="make deploy"))
        term = Terminal(
            project.path.parent / "tmux.sock",
            [str(WISP), "tui"],
            {"WISP_HOME": str(home), "TERM": "xterm-256color"},
            cwd=project.path,
        )
        try:
            screen = wait_until(
                lambda: next(
                    (s for s in [term.screen()] if "1 waiting" in s or "local down" in s), None
                ),
                SCREEN_WAIT_S,
                "the request shown, or the local relay down",
            )
            assert "local down" not in screen and "make deploy" in screen, screen
            (relay,) = [p for p in descendants(term.pid()) if b"wisp.relay" in cmdline(p)]
            argv = cmdline(relay).split(b"\0")
            assert argv[1:4] == [b"-P", b"-m", b"wisp.relay"], argv
            assert os.readlink(f"/proc/{relay}/cwd") == "/"
            term.keys("q")
            wait_until(lambda: not term.alive(), SCREEN_WAIT_S, "the TUI to quit on q")
        finally:
            term.close()
        assert project.ran() == []


class TestPush:
    def test_a_filing_in_the_project_pushes_with_wisps_own_code(
        self, home: Path, project: Project, env: dict[str, str], push_server: PushServer
    ) -> None:
        """With `notifications.push` set, a request filed from the project is pushed (by a
        child of its own): the message arrives and is audited posted, and no planted module
        ran."""
        set_push(push_server)
        out = run_from(project, [str(WISP), "facts", "request", "release", "codename", "X"], env)
        assert "asked you to keep release codename = X" in out, out
        wait_until(lambda: project.ran() or posted(home), WAIT_S, "the push or the marker")
        assert project.ran() == []
        (message,) = push_server.wait_for(1)
        assert "release codename = X" in message["body"]["message"]


class TestMcp:
    def test_wisp_mcp_in_the_project_serves(self, project: Project, env: dict[str, str]) -> None:
        """`wisp mcp` started in the project (as an MCP client starts it) answers
        `initialize` and lists its tools; no planted module ran."""
        listing = '{"jsonrpc":"2.0","id":8,"method":"tools/list"}'
        process = subprocess.Popen(
            [str(WISP), "mcp"],
            cwd=project.path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(f"{INITIALIZE}\n{INITIALIZED}\n{listing}\n".encode())
            process.stdin.flush()
            replies: dict[Any, Any] = {}
            while 8 not in replies:
                message = json.loads(read_line(process.stdout))
                replies[message.get("id")] = message
            assert replies[0]["result"]["serverInfo"]["name"] == "wisp"
            tools = [tool["name"] for tool in replies[8]["result"]["tools"]]
            assert "request_approval" in tools
        finally:
            process.stdin.close()
            assert process.wait(WAIT_S) == 0
            process.stdout.close()
        assert project.ran() == []


class TestWeb:
    def test_wisp_web_in_the_project_serves(self, project: Project, env: dict[str, str]) -> None:
        """`wisp web` started in the project serves its page on 127.0.0.1; no planted
        module ran."""
        process = subprocess.Popen(
            [str(WISP), "web", "--listen", "127.0.0.1:0"],
            cwd=project.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdout is not None
        try:
            line = read_line(process.stdout)
            url = line.split("serving ", 1)[1].split()[0]
            assert url.startswith("http://127.0.0.1:"), line
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            try:
                status = opener.open(url, timeout=WAIT_S).status
            except urllib.error.HTTPError as refused:  # unpaired: refused, by wisp's own code
                status = refused.code
            assert 200 <= status < 500, status
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(WAIT_S)
            process.stdout.close()
        assert project.ran() == []


class TestHooks:
    def test_every_hook_in_the_project_files_and_pushes_with_wisps_own_code(
        self, home: Path, project: Project, env: dict[str, str], push_server: PushServer
    ) -> None:
        """Each harness's hook, run as the harness runs it (its cwd the project, its event on
        stdin), with `notifications.push` set: each files its request, pushes it, and says
        that nobody answered within its --wait; every push is audited posted; no planted
        module ran, in the hook or in its push."""
        set_push(push_server)
        hooks = {}
        for harness in HARNESSES:
            event = (EVENTS / harness / f"{SHELL_EVENT[harness]}.json").read_text()
            hook = subprocess.Popen(
                [str(WISP), "hook", harness, "--wait", "1"],
                cwd=project.path,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            hooks[harness] = hook
            assert hook.stdin is not None
            hook.stdin.write(event.replace("/home/you/project", str(project.path)).encode())
            hook.stdin.close()
        for harness, hook in hooks.items():
            assert hook.stdout is not None and hook.stderr is not None
            hook.wait(WAIT_S * 2)  # it says a few hundred bytes: the pipes never fill
            out, err = hook.stdout.read(), hook.stderr.read()
            hook.stdout.close()
            hook.stderr.close()
            assert hook.returncode == 0, (harness, out, err)
            assert b"nobody answered request" in out, (harness, out, err)
        wait_until(
            lambda: project.ran() or len(posted(home)) >= len(HARNESSES),
            WAIT_S * 2,
            "every hook's push or the marker",
        )
        assert project.ran() == []
        assert len(push_server.wait_for(len(HARNESSES))) == len(HARNESSES)

    @pytest.mark.parametrize("how", ["printed", "setup"])
    @pytest.mark.parametrize("harness", HARNESSES)
    def test_the_installed_hook_commands_run_wisps_own_code(
        self,
        project: Project,
        env: dict[str, str],
        harness: str,
        how: str,
        out_of_tree_wisp: Path,
    ) -> None:
        """Every hook command --print-settings prints, or `wisp agents setup` writes into a
        fresh HOME, by the installed `wisp` and by `python -P -m wisp` with no `wisp` on PATH
        (the fallback: this Python with -P), run in the project on an event it refuses:
        wisp's own hook answers, and no planted module ran. The control: the fallback's
        command without its -P runs the planted `wisp/`. Setup is run by the run's
        out-of-tree install (the clone's editable one it refuses: tests/test_reach.py)."""
        elsewhere = project.path.parent / "elsewhere"
        elsewhere.mkdir()
        bare = {**env, "PATH": "/usr/bin:/bin"}
        wisp = out_of_tree_wisp if how == "setup" else WISP
        interpreter = wisp.parent / "python" if how == "setup" else Path(sys.executable)
        installed = written_commands(how, harness, [str(wisp)], env, elsewhere)
        python = [str(interpreter), "-P", "-m", "wisp"]
        fallback = written_commands(how, harness, python, bare, elsewhere)
        assert all(f"{interpreter} -P -m wisp hook {harness}" in c for c in fallback)
        for line in [*installed, *fallback]:
            said = run_from(project, ["/bin/sh", "-c", line], bare, BAD_EVENT)
            assert "the event on stdin is not a JSON object" in said, (line, said)
        assert project.ran() == []
        unsafe = fallback[0].replace(" -P -m wisp ", " -m wisp ")
        run_from(project, ["/bin/sh", "-c", unsafe], bare, BAD_EVENT)
        assert project.ran()[:1] == ["wisp/__init__.py"], project.ran()
