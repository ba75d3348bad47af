"""The harness's own sandbox, with `$WISP_HOME` out of the agent's reach: the wall.

wisp's hook runs outside the agent's sandbox; the agent's commands run inside it. With
`$WISP_HOME` unwritable from inside, no answer file, grant or setting can be written by the
agent, by any route — a pty, a relay, a symlink, a path built at run time — which no check of
what a call names (:mod:`wisp.agents.guard`) can promise. This module says, per harness, what
its settings must hold for that, and what in a person's settings undoes it:

- Claude Code: `sandbox.enabled`, `failIfUnavailable` (else a missing bubblewrap silently
  means no sandbox), `allowUnsandboxedCommands: false` (else a call can ask to leave it), no
  `excludedCommands` (each runs outside), `filesystem.denyWrite` naming the home, and
  `permissions.deny` rules for `Edit` and `Write` under it (those tools are not sandboxed).
  Paths are spelled `~/…` under the user's home, else `//abs` (one slash would be relative to
  the settings file). On Linux the sandbox needs bubblewrap and socat.
- Codex: `sandbox_mode = "workspace-write"` (or `read-only`) writes only the working
  directory, its writable roots and the temporary directories; none of them may hold the home.

A harness with no sandbox, or one whose working directory or writable root holds the home,
is unprotected: `wisp agents status` says so, and docs/agents.md says what that means.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

# The programs Claude Code's sandbox needs on Linux (its sandboxing docs).
CLAUDE_SANDBOX_PROGRAMS = ("bwrap", "socat")
CODEX_PROTECTING_MODES = ("workspace-write", "read-only")


def claude_path(path: Path, user_home: Path) -> str:
    """*path* as Claude Code's settings spell it: `~/…` under the user's home, else `//abs`."""
    if path == user_home or path.is_relative_to(user_home):
        rest = path.relative_to(user_home).as_posix()
        return "~" if rest == "." else f"~/{rest}"
    return "/" + path.as_posix()


def claude_rules(home: Path, user_home: Path) -> list[str]:
    """The permission rules that keep Claude Code's own file tools out of *home*."""
    spelled = claude_path(home, user_home)
    return [f"Edit({spelled}/**)", f"Write({spelled}/**)"]


# Claude Code's own settings, which a command could rewrite to take the hook or the sandbox
# away from the next session (a project's settings outrank the user's, and its hooks run
# outside the sandbox): the user's file, and the working directory's. By name, never the
# folder (`./.claude`, `Edit(./.claude/**)`): Claude Code 2.1.197 then masks paths under a
# folder it has made read-only, and its bubblewrap cannot start ("Can't create file at
# …/.claude: Is a directory"): no command ran at all (2.1.332's starts).
CLAUDE_SETTINGS = (
    "~/.claude/settings.json",
    "./.claude/settings.json",
    "./.claude/settings.local.json",
)


def claude_code_block(home: Path, user_home: Path) -> dict[str, Any]:
    """What `wisp agents setup claude-code` merges into Claude Code's settings beside the
    hook: the sandbox on, fail-closed, no way out, *home* and Claude Code's own settings
    denied for writing."""
    guarded = [claude_path(home, user_home), *CLAUDE_SETTINGS]
    rules = [*claude_rules(home, user_home)]
    for spelled in CLAUDE_SETTINGS:
        pattern = spelled if spelled.endswith(".json") else f"{spelled}/**"
        rules += [f"Edit({pattern})", f"Write({pattern})"]
    return {
        "sandbox": {
            "enabled": True,
            "failIfUnavailable": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyWrite": guarded},
        },
        "permissions": {"deny": rules},
    }


def claude_code_problems(
    settings: Mapping[str, Any],
    home: Path,
    user_home: Path,
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    """What in Claude Code's (merged) *settings*, or on this machine, leaves *home* within the
    agent's reach; none when the sandbox holds it."""
    sandbox = _table(settings.get("sandbox"))
    problems = []
    if sandbox.get("enabled") is not True:
        problems.append("the sandbox is off (`sandbox.enabled` is not true)")
    if sandbox.get("failIfUnavailable") is not True:
        problems.append(
            "without `sandbox.failIfUnavailable: true`, a sandbox that cannot start (no "
            "bubblewrap) silently runs commands unsandboxed"
        )
    if sandbox.get("allowUnsandboxedCommands") is not False:
        problems.append(
            "`sandbox.allowUnsandboxedCommands` is not false: a command may ask to run "
            "outside the sandbox (dangerouslyDisableSandbox)"
        )
    excluded = sandbox.get("excludedCommands")
    if excluded:
        problems.append(f"`sandbox.excludedCommands` run outside the sandbox: {excluded!r}")
    spelled = claude_path(home, user_home)
    deny_write = _strings(_table(sandbox.get("filesystem")).get("denyWrite"))
    if not any(_covers(claude_path_of(d, user_home), home) for d in deny_write):
        problems.append(f"`sandbox.filesystem.denyWrite` does not name {spelled}")
    denied = set(_strings(_table(settings.get("permissions")).get("deny")))
    missing = [rule for rule in claude_rules(home, user_home) if rule not in denied]
    if missing:
        problems.append(
            f"Edit and Write are not sandboxed, and `permissions.deny` lacks {', '.join(missing)}"
        )
    single = [r for r in denied if r.startswith(("Edit(/", "Write(/")) and "(//" not in r]
    if single:
        problems.append(
            f"{', '.join(sorted(single))}: one slash is relative to the settings file; "
            "write `//abs/**` or `~/…`"
        )
    lacking = [p for p in CLAUDE_SANDBOX_PROGRAMS if which(p) is None]
    if lacking and sandbox.get("enabled") is True:
        problems.append(
            f"the sandbox needs {' and '.join(lacking)} on PATH "
            "(Debian: `apt-get install bubblewrap socat`)"
        )
    return problems


def claude_path_of(spelled: str, user_home: Path) -> Path | None:
    """A path as Claude Code's settings spell it, read back (None: relative to a settings
    file, which wisp does not guess)."""
    if spelled.startswith("~/") or spelled == "~":
        return user_home / spelled[2:]
    if spelled.startswith("//"):
        return Path(spelled[1:])
    return None


def codex_problems(
    config: Mapping[str, Any], home: Path, working_dirs: Iterable[Path] = ()
) -> list[str]:
    """What in Codex's *config* (config.toml, parsed) leaves *home* within the agent's reach,
    for sessions in *working_dirs*; none when its sandbox holds it."""
    mode = config.get("sandbox_mode")
    if mode not in CODEX_PROTECTING_MODES:
        return [
            f'`sandbox_mode` is {mode!r}: set "workspace-write" so that commands write only '
            "the working directory, its writable roots and the temporary directories"
        ]
    if mode == "read-only":
        return []
    roots = _strings(_table(config.get("sandbox_workspace_write")).get("writable_roots"))
    problems = [
        f"the writable root {root} holds {home}"
        for root in roots
        if _covers(Path(root).expanduser(), home)
    ]
    problems += [
        f"the working directory {where} holds {home}: the agent may write there"
        for where in working_dirs
        if _covers(where, home)
    ]
    return problems


def _covers(root: Path | None, path: Path) -> bool:
    if root is None:
        return False
    return path == root or path.is_relative_to(root)


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
