"""Where an agent can write: whether wisp's own program lies within its reach.

A hook runs outside the agent's sandbox, as the person. If the program it runs (`wisp`, its
virtual environment, wisp's package folders, the guard script) lies where the agent may write,
one approved write makes the hook the agent's: every later call is its own to allow. An agent
may write

- a project's working tree (an ancestor directory holding `.git` — a file, in a git worktree —
  `.hg` or `.jj`): the agent works in a project, and a project's `.venv` is inside it;
- the temporary directories: `/tmp`, `/var/tmp`, `/dev/shm` and `$TMPDIR` (Codex's
  `workspace-write` writes `/tmp` and `$TMPDIR`; nothing of an install belongs there);
- a writable root of its harness's sandbox: Codex's `sandbox_workspace_write.writable_roots`,
  Claude Code's `sandbox.filesystem.allowWrite`.

Each path is checked as spelled (`..` collapsed as the shell's `cd` does) and resolved (links
followed): either one in reach is in reach. The interpreter's own files (a pyenv or asdf
Python) are checked against the temporary directories and writable roots only: those version
managers keep their Pythons inside a git checkout of their own, which is no project an agent
works in.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from wisp.agents.install import Install
from wisp.agents.sandbox import claude_path_of, project_tree

# Named, not used: where wisp's program must not lie (every agent may write them).
TEMP_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))  # noqa: S108
# How to install wisp where no agent writes, said by every refusal.
PIPX_HINT = (
    "install wisp for everyday use outside any project and temporary directory: "
    "`pipx install /path/to/clone` (or `pipx install '.[tui,mcp]'` from the clone), then run "
    "setup again with that `wisp` (`~/.local/bin/wisp agents setup NAME`); a clone's editable "
    "`.venv` is for developing wisp"
)


@attrs.frozen(kw_only=True)
class WritableRoot:
    """A directory an agent may write, and why."""

    path: Path
    why: str


def temp_roots(env: Mapping[str, str]) -> list[WritableRoot]:
    """The temporary directories: every agent may write them."""
    roots = [WritableRoot(path=p, why="a temporary directory") for p in TEMP_DIRS]
    tmpdir = env.get("TMPDIR")
    if tmpdir and Path(tmpdir).is_absolute():
        roots.append(WritableRoot(path=Path(tmpdir), why="$TMPDIR, a temporary directory"))
    return roots


def codex_roots(config: Mapping[str, Any]) -> list[WritableRoot]:
    """Codex's own writable roots (config.toml, parsed): `sandbox_workspace_write`'s."""
    table = config.get("sandbox_workspace_write")
    listed = table.get("writable_roots") if isinstance(table, Mapping) else None
    return [
        WritableRoot(path=Path(r).expanduser(), why="a writable root of Codex's sandbox")
        for r in (listed if isinstance(listed, list) else [])
        if isinstance(r, str) and Path(r).expanduser().is_absolute()
    ]


def claude_roots(settings: Mapping[str, Any], user_home: Path) -> list[WritableRoot]:
    """Claude Code's `sandbox.filesystem.allowWrite` (settings, parsed), as it spells paths."""
    box = settings.get("sandbox")
    files = box.get("filesystem") if isinstance(box, Mapping) else None
    listed = files.get("allowWrite") if isinstance(files, Mapping) else None
    roots = []
    for spelled in listed if isinstance(listed, list) else []:
        path = claude_path_of(spelled, user_home) if isinstance(spelled, str) else None
        if path is not None:
            roots.append(
                WritableRoot(path=path, why="in Claude Code's sandbox.filesystem.allowWrite")
            )
    return roots


def config_roots(harness: str, text: str | None, user_home: Path) -> list[WritableRoot]:
    """The writable roots *harness*'s config file (its *text*) names (its record's `roots`);
    none for a file that cannot be read (setup refuses that itself)."""
    from wisp.agents import hookio

    found = hookio.harness(harness)
    if not text or found is None or found.roots is None:
        return []
    try:
        config = tomllib.loads(text) if found.fmt is hookio.Format.TOML else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return []
    return list(found.roots(config, None, user_home)) if isinstance(config, dict) else []


def spellings(path: Path) -> list[Path]:
    """*path* as spelled (absolute, `..` collapsed as `cd` does) and resolved."""
    spelled = Path(os.path.normpath(Path(path).absolute()))
    resolved = spelled.resolve()
    return [spelled] if resolved == spelled else [spelled, resolved]


def where_writable(path: Path, roots: Sequence[WritableRoot], *, trees: bool = True) -> str | None:
    """Where *path* lies that an agent may write (None: nothing says it may)."""
    for spelled in spellings(path):
        found = project_tree(spelled) if trees else None
        if found is not None:
            tree, mark = found
            return f"in the working tree of {tree} (it holds {mark})"
        for root in roots:
            if any(spelled.is_relative_to(r) for r in spellings(root.path)):
                return f"under {root.path} ({root.why})"
    return None


def reasons(
    paths: Iterable[Path], roots: Sequence[WritableRoot], *, interpreters: Iterable[Path] = ()
) -> list[str]:
    """Where an agent may write *paths* (checked against working trees too) and
    *interpreters* (against *roots* only), each place with the paths in it; none when it may
    write none of them."""
    found: dict[str, list[str]] = {}
    checked = [(p, True) for p in paths] + [(p, False) for p in interpreters]
    for path, trees in checked:
        where = where_writable(path, roots, trees=trees)
        if where is not None:
            found.setdefault(where, []).append(str(path))
    return [f"{', '.join(listed)} {where}" for where, listed in found.items()]


def install_reasons(install: Install, roots: Sequence[WritableRoot]) -> list[str]:
    """Why an agent may write this *install* of wisp: its program, venv, packages, guard
    (what lies in the interpreter's own folders is checked as the interpreter is)."""
    own = [p for p in install.paths if not _in_any(p, install.interpreters)]
    kept = [p for p in install.paths if _in_any(p, install.interpreters)]
    return reasons(own, roots, interpreters=kept)


def _in_any(path: Path, folders: Iterable[Path]) -> bool:
    """Whether *path*, as spelled (a venv's `python` is a link to its base's), lies in one
    of *folders*."""
    spelled = spellings(path)[0]
    return any(spelled.is_relative_to(f) for f in folders)


def setup_refusal(
    harness: str,
    install: Install,
    env: Mapping[str, str],
    config_text: str | None,
    project: Path | None = None,
) -> str | None:
    """What `wisp agents setup HARNESS [--project PROJECT]` says when it refuses:
    *install*'s program lies where an agent can write (None: it does not)."""
    user_home = Path(env.get("HOME") or Path.home())
    roots = [*temp_roots(env), *config_roots(harness, config_text, user_home)]
    if project is not None:  # its agent works there, a working tree or not
        roots.append(WritableRoot(path=project, why="the project being set up"))
    found = install_reasons(install, roots)
    if not found:
        return None
    listed = "; ".join(found)
    return (
        f"this wisp ({' '.join(install.argv)}) lies where an agent can write ({listed}). A hook "
        "runs it outside the agent's sandbox, as you, so one write would make the gate the "
        f"agent's. To set up {harness}, {PIPX_HINT}."
    )


def printed_note(install: Install, env: Mapping[str, str]) -> str | None:
    """What `wisp hook NAME --print-settings` says beside a hook naming *install* when it lies
    where an agent can write (None: it does not): setup refuses that hook, and one merged by
    hand is as much the agent's to rewrite."""
    found = install_reasons(install, temp_roots(env))
    if not found:
        return None
    return (
        f"the hook printed runs this wisp ({' '.join(install.argv)}), which lies where an agent "
        f"can write ({'; '.join(found)}): an agent could rewrite it and take the gate over "
        "(`wisp agents setup` refuses it; `wisp agents status` calls such a hook UNPROTECTED). "
        "Install wisp for everyday use (`pipx install /path/to/clone`) and print the settings "
        "with that `wisp`."
    )
