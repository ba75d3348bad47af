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
    needed = requirements(extra) or [extra]
    quoted = " ".join(shlex.quote(r) for r in needed)
    prefix = Path(sys.prefix)
    if prefix.parent.name == "venvs" and "pipx" in prefix.parts[-3:-1]:
        return f"Add it to wisp's pipx install: pipx inject {DISTRIBUTION} {quoted}"
    python = shlex.quote(sys.executable)
    if (_CLONE / "pyproject.toml").is_file() and (_CLONE / "wisp").is_dir():
        target = shlex.quote(f"{_CLONE}[{extra}]")
        return f"Add it to this clone's install: {python} -m pip install -e {target}"
    return f"Add it to the Python that runs wisp: {python} -m pip install {quoted}"
