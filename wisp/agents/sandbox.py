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

import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

# The programs Claude Code's sandbox needs on Linux (its sandboxing docs).
CLAUDE_SANDBOX_PROGRAMS = ("bwrap", "socat")
CODEX_PROTECTING_MODES = ("workspace-write", "read-only")
# What marks a project's working tree (an agent works in a project, and may write it).
PROJECT_MARKS = (".git", ".hg", ".jj")
SLASH_TMP = Path("/tmp")  # noqa: S108 - named, not used: Codex's workspace-write writes it


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
# outside the sandbox): the user's file (where Claude Code reads it and setup writes it:
# `$CLAUDE_CONFIG_DIR/settings.json`, by default this one under the user's home), and the
# working directory's. By name, never the folder (`./.claude`, `Edit(./.claude/**)`): Claude
# Code 2.1.197 then masks paths under a folder it has made read-only, and its bubblewrap
# cannot start ("Can't create file at …/.claude: Is a directory"): no command ran at all
# (2.1.332's starts).
CLAUDE_USER_SETTINGS = Path(".claude") / "settings.json"
CLAUDE_PROJECT_SETTINGS = ("./.claude/settings.json", "./.claude/settings.local.json")


def claude_code_block(home: Path, user_home: Path, settings: Path | None = None) -> dict[str, Any]:
    """What `wisp agents setup claude-code` merges into Claude Code's settings beside the
    hook: the sandbox on, fail-closed, no way out, *home* and Claude Code's own settings
    (*settings*, the user's file setup writes; by default `~/.claude/settings.json`) denied
    for writing."""
    user_settings = settings if settings is not None else user_home / CLAUDE_USER_SETTINGS
    protected = (claude_path(user_settings, user_home), *CLAUDE_PROJECT_SETTINGS)
    guarded = [claude_path(home, user_home), *protected]
    rules = [*claude_rules(home, user_home)]
    for spelled in protected:
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


def project_tree(path: Path) -> tuple[Path, str] | None:
    """The working tree *path* lies in, and its mark: its nearest ancestor (or itself)
    holding `.git`, `.hg` or `.jj`."""
    for directory in (path, *path.parents):
        for mark in PROJECT_MARKS:
            if os.path.lexists(directory / mark):
                return directory, mark
    return None


def codex_problems(
    config: Mapping[str, Any],
    home: Path,
    working_dirs: Iterable[Path] = (),
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """What in Codex's *config* (config.toml, parsed) leaves *home* within the agent's reach,
    for sessions in *working_dirs*; none when its sandbox holds it. `workspace-write` writes
    `/tmp` and `$TMPDIR` (from *env*, this process's when None) too, unless
    `exclude_slash_tmp` / `exclude_tmpdir_env_var`; and any session started in a project's
    working tree writes that tree."""
    mode = config.get("sandbox_mode")
    if mode not in CODEX_PROTECTING_MODES:
        said = "not set" if mode is None else f"{json.dumps(mode)}"
        return [
            f'`sandbox_mode` is {said}: set "workspace-write" so that commands write only '
            "the working directory, its writable roots and the temporary directories"
        ]
    if mode == "read-only":
        return []
    table = _table(config.get("sandbox_workspace_write"))
    roots = _strings(table.get("writable_roots"))
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
    tmpdir = (os.environ if env is None else env).get("TMPDIR")
    temporary = [] if table.get("exclude_slash_tmp") is True else [(SLASH_TMP, str(SLASH_TMP))]
    if tmpdir and table.get("exclude_tmpdir_env_var") is not True:
        temporary.append((Path(tmpdir), "$TMPDIR"))
    problems += [
        f"{home} lies under {name}, which Codex's workspace-write sandbox lets commands write "
        "(set `exclude_slash_tmp` / `exclude_tmpdir_env_var` under [sandbox_workspace_write], "
        "or move $WISP_HOME)"
        for root, name in temporary
        if _covers(root, home) or _covers(root.resolve(), home.resolve())
    ]
    tree = project_tree(home)
    if tree is not None:
        problems.append(
            f"{home} lies in the working tree of {tree[0]} (it holds {tree[1]}): a Codex "
            "session started there may write it"
        )
    return problems


def _covers(root: Path | None, path: Path) -> bool:
    if root is None:
        return False
    return path == root or path.is_relative_to(root)


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
