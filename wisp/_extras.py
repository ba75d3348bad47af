"""How to add an optional extra (`tui`, `mcp`) to the install the person already has.

A hint that named `pip install 'wisp-pending[tui]'` would send them to a package index that
has no wisp; this names the command that adds the extra's libraries where wisp runs: pipx's
own venv, the interpreter running wisp, or the clone an editable install came from.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

DISTRIBUTION = "wisp-pending"
_CLONE = Path(__file__).resolve().parent.parent  # a clone's root, if wisp runs from one


def requirements(extra: str) -> list[str]:
    """The extra's requirements as the installed metadata lists them (`textual>=8.2`)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        listed = requires(DISTRIBUTION) or []
    except PackageNotFoundError:
        return []
    marker = f'extra == "{extra}"'
    return [r.split(";", 1)[0].strip() for r in listed if marker in r.replace("'", '"')]


def install_hint(extra: str) -> str:
    """A sentence naming the command that adds *extra* to this install."""
    where, command = _install(extra)
    return f"Add it to {where}: {command}"


def install_command(extra: str) -> str:
    """Just the command that adds *extra* to this install (for a `fix:` line)."""
    return _install(extra)[1]


def _install(extra: str) -> tuple[str, str]:
    needed = requirements(extra) or [extra]
    quoted = " ".join(shlex.quote(r) for r in needed)
    prefix = Path(sys.prefix)
    if prefix.parent.name == "venvs" and "pipx" in prefix.parts[-3:-1]:
        return "wisp's pipx install", f"pipx inject {DISTRIBUTION} {quoted}"
    python = shlex.quote(sys.executable)
    if (_CLONE / "pyproject.toml").is_file() and (_CLONE / "wisp").is_dir():
        target = shlex.quote(f"{_CLONE}[{extra}]")
        return "this clone's install", f"{python} -m pip install -e {target}"
    return "the Python that runs wisp", f"{python} -m pip install {quoted}"
