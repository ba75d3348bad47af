"""What went wrong, and what to do: the root of the application's errors, and the remedy
for a face whose optional extra is not installed.

:class:`WispError` is the base of every error the application raises (its stores, audit
log, deadlines, asking). Its message says what happened and what to do, whole, as every
refusal of wisp does; :attr:`WispError.remedy` is the what-to-do alone, for a caller that
decides by it or says it its own way. What handles an error decides by its class and its
attributes, never by the words of its message. `pending` keeps its own tree
(:class:`pending.PendingError`); an error of the application that is also the channel's (an
asker's :class:`wisp._asking.CannotFollow`) derives from both.

The extras: a hint that named `pip install 'wisp-pending[tui]'` would send the person to a
package index that has no wisp; :func:`install_hint` names the command that adds the
extra's libraries where wisp runs: pipx's own venv, the interpreter running wisp, or the
clone an editable install came from.
"""

from __future__ import annotations

import sys
from pathlib import Path

DISTRIBUTION = "wisp-pending"
_CLONE = Path(__file__).resolve().parent.parent  # a clone's root, if wisp runs from one


class WispError(Exception):
    """The base of the application's errors. Its message says what happened and what to do;
    :attr:`remedy` is what to do alone: the class's usual one, or the one it was raised with
    (``remedy=``), or None where only the message can say it."""

    remedy: str | None = None

    def __init__(self, *args: object, remedy: str | None = None) -> None:
        super().__init__(*args)
        if remedy is not None:
            self.remedy = remedy


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
    import shlex  # here: every error's import would load it, and only a hint uses it

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
