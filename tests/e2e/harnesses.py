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
from typing import Any

from netns import LoopbackNamespace

HERE = Path(__file__).resolve().parent
CACHE = Path(
    os.environ.get("WISP_E2E_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wisp-e2e"
)
PROMPT = "Do what the task needs."


@dataclass(frozen=True)
class Pin:
    """One version of one harness, as install.sh installs it."""

    name: str
    package: str
    version: str
    binary: str

    @property
    def prefix(self) -> Path:
        return CACHE / f"{self.name}-{self.version}"

    @property
    def id(self) -> str:
        """The pin as a test id names it: `claude-code-2.1.197`."""
        return f"{self.name}-{self.version}"


def every_pin() -> list[Pin]:
    """Every version install.sh installs, a harness's floor first."""
    text = (HERE / "install.sh").read_text()
    table = text.split("harnesses=(", 1)[1].split(")", 1)[0]
    return [Pin(*found) for found in re.findall(r'"(\S+) (\S+) (\S+) (\S+)"', table)]


def pins() -> dict[str, Pin]:
    """Each harness's floor (its first line in install.sh), by name."""
    floors: dict[str, Pin] = {}
    for pin in every_pin():
        floors.setdefault(pin.name, pin)
    return floors


def versions(name: str) -> list[Pin]:
    """Harness *name*'s pins: its floor, then its newest where npm's newest is another."""
    return [pin for pin in every_pin() if pin.name == name]


def binary(which: str | Pin) -> Path | str:
    """The installed binary of *which* (a pin, or a harness's name: its floor), or (a str)
    why there is none."""
    pin = pins()[which] if isinstance(which, str) else which
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


def claude_code_env(home: Path, wisp_home: Path, url: str) -> dict[str, str]:
    """Claude Code's environment here: the fake server as its API, nothing else reached."""
    return base_env(home, wisp_home) | {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "x",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def start_claude_code(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    hooks: dict[str, object] | None,
    wisp_home: Path,
    prompt: str = PROMPT,
    settings: dict[str, Any] | None = None,
    pin: Pin | None = None,
) -> Popen:
    """`claude -p PROMPT` with *hooks* (a settings.json `hooks` block) in ~/.claude, and
    Claude Code's own rules allowing every tool the scripts use: a call the hook does not
    stop runs (so the hook is all that stands in its way, as where a person relies on it).
    *settings* are merged in beside them (a `sandbox` block, `permissions.deny` rules).
    *hooks* None: ~/.claude/settings.json is left as it is (`configure_claude_code`, then
    `wisp agents setup claude-code`, wrote it)."""
    if hooks is not None:
        configure_claude_code(home, {"hooks": hooks, **(settings or {})})
    env = claude_code_env(home, wisp_home, url)
    argv = [str(binary(pin or "claude-code")), "-p", prompt, "--output-format", "json"]
    return _start(ns, argv, cwd, env)


def configure_claude_code(home: Path, settings: dict[str, Any] | None = None) -> None:
    """~/.claude/settings.json: Claude Code's own rules allowing every tool the scripts use,
    and *settings* beside them (its `permissions` merged)."""
    allow = ["Bash", "Write", "Edit", "Read"]
    extra = dict(settings or {})
    permissions = {"allow": allow, **extra.pop("permissions", {})}
    _write_json(home / ".claude" / "settings.json", {**extra, "permissions": permissions})


def start_claude_code_prompt_tool(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    wisp: Path,
    wisp_home: Path,
    prompt: str = PROMPT,
    pin: Pin | None = None,
) -> Popen:
    """`claude -p PROMPT` with `wisp mcp` as an MCP server and its `permission_prompt` as
    the permission prompt tool (`--permission-prompt-tool`); no hook and no allow rule, so
    every call Claude Code would ask about is put to that tool. The server is `alwaysLoad`,
    as docs/agents.md says to make it: `-p` otherwise waits only 2 s for it, and a run whose
    prompt tool is not connected by then fails ("MCP tool … not found")."""
    _write_json(home / ".claude" / "settings.json", {})
    config = home / "mcp.json"
    _write_json(
        config,
        {
            "mcpServers": {
                "wisp": {
                    "command": str(wisp),
                    "args": ["mcp"],
                    "env": {"WISP_HOME": str(wisp_home)},
                    "alwaysLoad": True,
                }
            }
        },
    )
    env = claude_code_env(home, wisp_home, url)
    argv = [
        str(binary(pin or "claude-code")),
        "-p",
        prompt,
        "--output-format",
        "json",
        "--mcp-config",
        str(config),
        "--permission-prompt-tool",
        "mcp__wisp__permission_prompt",
    ]
    return _start(ns, argv, cwd, env)


# --- Codex CLI -----------------------------------------------------------------------------


def start_codex(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    hook: str | None,
    wisp_home: Path,
    prompt: str = PROMPT,
    timeout: int = 60,
    sandbox_mode: str = "danger-full-access",
    set_up: bool = False,
    pin: Pin | None = None,
) -> Popen:
    """`codex exec PROMPT` with *hook* as a PreToolUse command hook in $CODEX_HOME/config.toml,
    trusted for this run (`--dangerously-bypass-hook-trust`), its own approvals off and, by
    default, its sandbox too (the hook is all that stands in a call's way). *set_up*: the
    config is what `write_codex_config` and then `wisp agents setup codex` wrote, trust and all (no
    bypass)."""
    codex_home = home / ".codex"
    if not set_up:
        write_codex_config(home, url, sandbox_mode, hook, timeout)
    env = base_env(home, wisp_home) | {"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "x"}
    bypass = [] if set_up else ["--dangerously-bypass-hook-trust"]
    argv = [str(binary(pin or "codex")), "exec", "--skip-git-repo-check", *bypass, prompt]
    return _start(ns, argv, cwd, env)


def write_codex_config(
    home: Path, url: str, sandbox_mode: str, hook: str | None, timeout: int = 60
) -> None:
    """$CODEX_HOME/config.toml for the fake model (and *hook*, unless None)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    hooks = (
        ""
        if hook is None
        else f"""
[[hooks.PreToolUse]]
matcher = ".*"

[[hooks.PreToolUse.hooks]]
type = "command"
command = {json.dumps(hook)}
timeout = {timeout}
"""
    )
    (codex_home / "config.toml").write_text(
        f"""\
model = "gpt-5.2-codex"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = {json.dumps(sandbox_mode)}
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[model_providers.fake]
name = "fake"
base_url = {json.dumps(url + "/v1")}
wire_api = "responses"
{hooks}"""
    )


# --- Gemini CLI ----------------------------------------------------------------------------


def start_gemini(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    hook: str | None,
    wisp_home: Path,
    prompt: str = PROMPT,
    timeout_ms: int = 60_000,
    pin: Pin | None = None,
) -> Popen:
    """`gemini -p PROMPT --approval-mode yolo` with *hook* as a BeforeTool command hook in
    ~/.gemini/settings.json, the workspace trusted, API-key auth against the fake server.
    *hook* None: the settings are left as they are (`configure_gemini`, then `wisp agents
    setup gemini`, wrote them)."""
    if hook is not None:
        configure_gemini(home, hook, timeout_ms)
    env = base_env(home, wisp_home) | {
        "GEMINI_API_KEY": "x",
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    argv = [str(binary(pin or "gemini")), "-p", prompt, "--approval-mode", "yolo",
            "-m", "gemini-2.5-flash", "--output-format", "json"]  # fmt: skip
    return _start(ns, argv, cwd, env)


def configure_gemini(home: Path, hook: str | None = None, timeout_ms: int = 60_000) -> None:
    """~/.gemini/settings.json: API-key auth, nothing reported or updated, and *hook* (unless
    None) as a BeforeTool command hook."""
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "telemetry": {"enabled": False},
    }
    if hook is not None:
        settings["hooks"] = {
            "BeforeTool": [
                {
                    "matcher": ".*",
                    "hooks": [{"type": "command", "command": hook, "timeout": timeout_ms}],
                }
            ]
        }
    _write_json(home / ".gemini" / "settings.json", settings)


# --- Copilot CLI ---------------------------------------------------------------------------


def start_copilot(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    hook: str | None,
    wisp_home: Path,
    prompt: str = PROMPT,
    timeout: int = 60,
    pin: Pin | None = None,
) -> Popen:
    """`copilot -p PROMPT --allow-all-tools` offline (no login) with *hook* as a preToolUse
    command hook in ~/.copilot/hooks/, the model a BYOK OpenAI-compatible provider. *hook*
    None: no hook file is written (`wisp agents setup copilot` wrote one)."""
    if hook is not None:
        hooks = {"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": hook, "timeoutSec": timeout}]}}  # fmt: skip
        _write_json(home / ".copilot" / "hooks" / "e2e.json", hooks)
    env = base_env(home, wisp_home) | {
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_PROVIDER_BASE_URL": url + "/v1",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_MODEL": "gpt-4.1",
    }
    argv = [str(binary(pin or "copilot")), "-p", prompt, "--allow-all-tools", "--no-auto-update",
            "--disable-client-telemetry", "--output-format", "json"]  # fmt: skip
    return _start(ns, argv, cwd, env)


# --- OpenCode ------------------------------------------------------------------------------


def start_opencode(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    hook: str,
    wisp_home: Path,
    prompt: str = PROMPT,
    plugin: str | None = None,
    set_up: bool = False,
    pin: Pin | None = None,
) -> Popen:
    """`opencode run PROMPT` with the bridge plugin (opencode-hook.js: it runs *hook* before
    every tool call, and fails closed) or *plugin* (a plugin's text: wisp's, as
    `wisp hook opencode --print-settings` prints it) in ~/.config/opencode/plugin/, the model an
    OpenAI-compatible provider, its own permissions allowing the tools. The plugin package
    OpenCode wants in its config folder is linked from the cache (install.sh), so it does not
    try to fetch it. *set_up*: no plugin is written (`configure_opencode`, then `wisp agents
    setup opencode`, wrote the config and wisp's plugin)."""
    if not set_up:
        configure_opencode(home, url, pin)
        plugins = home / ".config" / "opencode" / "plugin"
        if plugin is None:
            (plugins / "wisp-e2e.js").write_text((HERE / "opencode-hook.js").read_text())
        else:
            (plugins / "wisp.js").write_text(plugin)
    env = base_env(home, wisp_home) | {
        "WISP_E2E_HOOK": hook,
        "OPENCODE_DISABLE_AUTOUPDATE": "true",
        "OPENCODE_DISABLE_SHARE": "true",
        "OPENCODE_DISABLE_MODELS_FETCH": "true",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "true",
    }
    argv = [str(binary(pin or "opencode")), "run", "--format", "json", prompt]
    return _start(ns, argv, cwd, env)


def configure_opencode(home: Path, url: str, pin: Pin | None = None) -> None:
    """~/.config/opencode: the fake model as its provider, its own permissions allowing the
    tools, the plugin package linked from the cache, an empty plugin folder."""
    config = home / ".config" / "opencode"
    (config / "plugin").mkdir(parents=True, exist_ok=True)
    deps = (pin or pins()["opencode"]).prefix / "config"
    for name in ("package.json", "package-lock.json"):
        (config / name).write_text((deps / name).read_text())
    if not (config / "node_modules").is_symlink():  # a second session in the same home
        (config / "node_modules").symlink_to(deps / "node_modules")
    _write_json(
        config / "opencode.json",
        {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": "fake/fake-model",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "fake",
                    "options": {"baseURL": url + "/v1", "apiKey": "x"},
                    "models": {"fake-model": {"name": "fake", "tool_call": True}},
                }
            },
            "permission": {"bash": "allow", "edit": "allow"},
        },
    )


# --- Qwen Code -----------------------------------------------------------------------------


def start_qwen(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    wisp_home: Path,
    prompt: str = PROMPT,
    pin: Pin | None = None,
) -> Popen:
    """`qwen -p PROMPT --approval-mode yolo` (its own approvals off: the hook is all that
    stands in a call's way), OpenAI-compatible auth against the fake server, ~/.qwen as
    `configure_qwen` and then `wisp agents setup qwen` left it."""
    env = base_env(home, wisp_home) | {
        "OPENAI_BASE_URL": url + "/v1",
        "OPENAI_API_KEY": "x",
        "OPENAI_MODEL": "fake-model",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
    }
    argv = [str(binary(pin or "qwen")), "-p", prompt, "--approval-mode", "yolo",
            "--output-format", "json"]  # fmt: skip
    return _start(ns, argv, cwd, env)


def configure_qwen(home: Path, hook: str | None = None, timeout_ms: int = 60_000) -> None:
    """~/.qwen/settings.json: OpenAI auth, nothing reported or updated, and *hook* (unless
    None) as a PreToolUse command hook."""
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": "fake-model"},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    if hook is not None:
        entry = {"type": "command", "command": hook, "timeout": timeout_ms}
        settings["hooks"] = {"PreToolUse": [{"matcher": ".*", "hooks": [entry]}]}
    _write_json(home / ".qwen" / "settings.json", settings)


# --- Kilo Code CLI -------------------------------------------------------------------------


def start_kilo(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    wisp_home: Path,
    prompt: str = PROMPT,
    pin: Pin | None = None,
    hook: str | None = None,
) -> Popen:
    """`kilo run PROMPT`, ~/.config/kilo as `configure_kilo` and then `wisp agents setup kilo`
    (wisp's plugin) left it; or, with *hook*, the bridge plugin (opencode-hook.js) running
    it before every tool call instead."""
    if hook is not None:
        plugins = home / ".config" / "kilo" / "plugin"
        (plugins / "wisp-e2e.js").write_text((HERE / "opencode-hook.js").read_text())
    env = base_env(home, wisp_home) | {
        "WISP_E2E_HOOK": hook or "",
        "KILO_DISABLE_AUTOUPDATE": "true",
        "KILO_DISABLE_SHARE": "true",
        "KILO_DISABLE_MODELS_FETCH": "true",
        "KILO_DISABLE_LSP_DOWNLOAD": "true",
    }
    argv = [str(binary(pin or "kilo")), "run", "--format", "json", prompt]
    return _start(ns, argv, cwd, env)


def configure_kilo(home: Path, url: str, pin: Pin | None = None) -> None:
    """~/.config/kilo: the fake model as its provider, its own permissions allowing the
    tools, the plugin package linked from the cache (install.sh: Kilo Code otherwise waits
    for its install to fail offline), an empty plugin folder."""
    config = home / ".config" / "kilo"
    (config / "plugin").mkdir(parents=True, exist_ok=True)
    deps = (pin or pins()["kilo"]).prefix / "config"
    for name in ("package.json", "package-lock.json"):
        (config / name).write_text((deps / name).read_text())
    if not (config / "node_modules").is_symlink():
        (config / "node_modules").symlink_to(deps / "node_modules")
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "fake",
        "options": {"baseURL": url + "/v1", "apiKey": "x"},
        "models": {"fake-model": {"name": "fake", "tool_call": True}},
    }
    _write_json(
        config / "kilo.json",
        {
            "$schema": "https://app.kilo.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": "fake/fake-model",
            "provider": {"fake": provider},
            "permission": {"bash": "allow", "edit": "allow"},
        },
    )


# --- Cline (CLI) ---------------------------------------------------------------------------

CLINE_PROVIDER = "openai-compatible"


def cline_env(home: Path, wisp_home: Path) -> dict[str, str]:
    """Cline's environment: its sessions run in the `cline` process itself
    (`CLINE_SESSION_BACKEND_MODE=local`; by default the first run starts a hub daemon that
    outlives it and runs every later session, and its hooks, with that first run's
    environment)."""
    return base_env(home, wisp_home) | {"CLINE_SESSION_BACKEND_MODE": "local"}


def start_cline(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    wisp_home: Path,
    prompt: str = PROMPT,
    pin: Pin | None = None,
) -> Popen:
    """`cline --json -P openai-compatible -m fake-model PROMPT` (its own approvals are
    auto by default: the hook is all that stands in a call's way), the provider
    `configure_cline` wrote, ~/.cline/hooks as `wisp agents setup cline` left it."""
    argv = [str(binary(pin or "cline")), "--json", "-P", CLINE_PROVIDER, "-m", "fake-model",
            prompt]  # fmt: skip
    return _start(ns, argv, cwd, cline_env(home, wisp_home))


def configure_cline(home: Path, url: str, pin: Pin | None = None) -> None:
    """Cline's provider: the fake model server, as `cline auth` writes it (no network)."""
    argv = [str(binary(pin or "cline")), "auth", "-p", CLINE_PROVIDER, "-k", "x",
            "-m", "fake-model", "-b", url + "/v1"]  # fmt: skip
    env = cline_env(home, home / ".wisp-unused")
    done = subprocess.run(argv, env=env, cwd=home, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def cline_stopped(home: Path) -> str:
    """Why Cline's last run stopped, as its log says: a hook's `{"cancel": true}` ends the
    run (the model is not asked again), its `errorMessage` logged as the stop's."""
    log = home / ".cline" / "data" / "logs" / "cline.log"
    said = [
        json.loads(line).get("errorMessage", "")
        for line in (log.read_text().splitlines() if log.exists() else [])
        if "ControlledStopError" in line
    ]
    return said[-1] if said else ""


# --- pi ------------------------------------------------------------------------------------


def pi_env(home: Path, wisp_home: Path, pin: Pin | None = None) -> dict[str, str]:
    """pi's environment: node 22 (install.sh links it beside `pi`) first on PATH, nothing
    fetched or reported."""
    where = Path(binary(pin or "pi")).parent
    env = base_env(home, wisp_home)
    return env | {"PATH": f"{where}:{env['PATH']}", "PI_OFFLINE": "1", "PI_TELEMETRY": "0"}


def start_pi(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    wisp_home: Path,
    prompt: str = PROMPT,
    pin: Pin | None = None,
) -> Popen:
    """`pi --provider fake --model fake-model -p PROMPT` (pi asks nothing before a tool call:
    the extension is all that stands in a call's way), the provider `configure_pi` wrote,
    ~/.pi/agent/extensions as `wisp agents setup pi` left it."""
    argv = [str(binary(pin or "pi")), "--provider", "fake", "--model", "fake-model", "-p",
            prompt]  # fmt: skip
    return _start(ns, argv, cwd, pi_env(home, wisp_home, pin))


def configure_pi(home: Path, url: str, pin: Pin | None = None) -> None:
    """~/.pi/agent/models.json: the fake model server as an OpenAI-compatible provider."""
    provider = {"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "x",
                "models": [{"id": "fake-model"}]}  # fmt: skip
    _write_json(home / ".pi" / "agent" / "models.json", {"providers": {"fake": provider}})


# --- Factory Droid -------------------------------------------------------------------------


def start_droid(
    ns: LoopbackNamespace,
    home: Path,
    cwd: Path,
    url: str,
    wisp_home: Path,
    prompt: str = PROMPT,
    pin: Pin | None = None,
) -> Popen:
    """`droid exec --auto high -m custom:fake-model PROMPT` (its own approvals let every call
    through: the hook is all that stands in a call's way), no Factory login, the custom model
    `configure_droid` wrote, ~/.factory/hooks.json as `wisp agents setup droid` left it."""
    argv = [str(binary(pin or "droid")), "exec", "--auto", "high", "-m", "custom:fake-model",
            prompt]  # fmt: skip
    return _start(ns, argv, cwd, base_env(home, wisp_home))


def configure_droid(home: Path, url: str, pin: Pin | None = None) -> None:
    """~/.factory/config.json: the fake model server as a custom (bring-your-own) model."""
    model = {"model_display_name": "fake", "model": "fake-model", "base_url": url + "/v1",
             "api_key": "x", "provider": "generic-chat-completion-api",
             "max_tokens": 4096}  # fmt: skip
    _write_json(home / ".factory" / "config.json", {"custom_models": [model]})
