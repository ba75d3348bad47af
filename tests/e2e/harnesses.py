"""Drivers for the real agent harnesses: one function a harness that starts it headless,
offline, inside a loopback-only network namespace, against the fake model server, with a hook
command in its path — the harness's own config files written under *home* (and *cwd* where the
harness reads the project's), its telemetry and update checks turned off by its own settings.

Each ``start_*`` returns the running process (stdout and stderr piped, stdin closed);
:func:`finish` waits for it. The pinned versions are :file:`install.sh`'s (read from it);
:func:`binary` finds an installed one. HARNESSES.md says what each config means.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from netns import LoopbackNamespace

HERE = Path(__file__).resolve().parent
CACHE = Path(
    os.environ.get("WISP_E2E_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wisp-e2e"
)
PROMPT = "Do what the task needs."


@dataclass(frozen=True)
class Pin:
    name: str
    package: str
    version: str
    binary: str

    @property
    def prefix(self) -> Path:
        return CACHE / f"{self.name}-{self.version}"


def pins() -> dict[str, Pin]:
    """The harnesses install.sh installs, by name."""
    text = (HERE / "install.sh").read_text()
    table = text.split("harnesses=(", 1)[1].split(")", 1)[0]
    found = re.findall(r'"(\S+) (\S+) (\S+) (\S+)"', table)
    return {name: Pin(name, *rest) for name, *rest in found}


def binary(name: str) -> Path | str:
    """The installed binary of harness *name*, or (a str) why there is none."""
    pin = pins()[name]
    path = pin.prefix / "node_modules" / ".bin" / pin.binary
    if (pin.prefix / ".installed").exists() and os.access(path, os.X_OK):
        return path
    log = pin.prefix / "install.log"
    said = log.read_text().strip().splitlines()[-1:] if log.exists() else []
    why = f": {said[0]}" if said else ""
    return f"{pin.package}@{pin.version} is not installed (tests/e2e/install.sh{why})"


def base_env(home: Path, wisp_home: Path) -> dict[str, str]:
    """A bare environment: nothing of the caller's but PATH; every per-user directory under
    *home*."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "USER": "root" if os.geteuid() == 0 else os.environ.get("USER", "user"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "CI": "true",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "WISP_HOME": str(wisp_home),
    }


def _start(ns: LoopbackNamespace, argv: list[str], cwd: Path, env: dict[str, str]) -> Popen:
    return subprocess.Popen(
        ns.argv(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


Popen = subprocess.Popen[str]


def finish(process: Popen, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Wait for *process* (killing its group past *timeout*) and return what it did."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        out, err = process.communicate()
        err += f"\n[e2e: killed after {timeout} s]"
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


# --- Claude Code ---------------------------------------------------------------------------


def claude_code_hooks(command: str, timeout: int = 60) -> dict[str, object]:
    """A settings.json `hooks` block running *command* before every tool call."""
    return {
        "PreToolUse": [
            {
                "matcher": ".*",
                "hooks": [{"type": "command", "command": command, "timeout": timeout}],
            }
        ]
    }


def start_claude_code(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    hooks: dict[str, object],
    wisp_home: Path,
    prompt: str = PROMPT,
) -> Popen:
    """`claude -p PROMPT` with *hooks* (a settings.json `hooks` block) in ~/.claude, and
    Claude Code's own rules allowing every tool the scripts use: a call the hook does not
    stop runs (so the hook is all that stands in its way, as where a person relies on it)."""
    allow = ["Bash", "Write", "Edit", "Read"]
    settings = {"hooks": hooks, "permissions": {"allow": allow}}
    _write_json(home / ".claude" / "settings.json", settings)
    env = base_env(home, wisp_home) | {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "x",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    argv = [str(binary("claude-code")), "-p", prompt, "--output-format", "json"]
    return _start(ns, argv, cwd, env)
