"""A harness's config file as setup reads it: the file read (refusing what setup must not
edit), which of its hooks are wisp's, and wisp's part merged in. Setup
(:mod:`wisp.agents.setup`), Codex's TOML (:mod:`wisp.agents.codexsetup`) and a harness's own
capabilities (Claude Code's settings as a project sees them) all stand on it; it stands on
none of them.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wisp.agents.hookio import Harness

MAX_CONFIG_BYTES = 1024 * 1024


class SetupRefused(Exception):
    """Setup cannot do this: the message says what happened and what to do."""


class UnknownHarness(SetupRefused):
    """A harness wisp does not set up: a usage error."""


# --- which hooks are wisp's ----------------------------------------------------------------


def is_wisp_command(command: object, name: str) -> bool:
    """Whether a hook's *command* runs `wisp hook NAME` (guarded or not)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    ours = any(Path(w).name in ("wisp", "hookguard.sh") for w in words) or "wisp" in words
    return ours and any(words[i : i + 2] == ["hook", name] for i in range(len(words)))


def wisp_hooks(group: object, t: Harness) -> list[Mapping[str, Any]]:
    if not isinstance(group, Mapping):
        return []
    if t.whole_file or t.flat:  # Copilot, Cursor: the event's list holds the hooks themselves
        return [group] if is_wisp_command(group.get(t.command_key), t.name) else []
    hooks = group.get("hooks")
    if not isinstance(hooks, list):
        return []
    return [
        h for h in hooks if isinstance(h, Mapping) and is_wisp_command(h.get("command"), t.name)
    ]


def without_wisp(groups: list[Any], t: Harness) -> tuple[list[Any], int | None]:
    """*groups* with wisp's hooks taken out (a group left empty goes), and where wisp's first
    group stood."""
    kept: list[Any] = []
    first: int | None = None
    for group in groups:
        ours = wisp_hooks(group, t)
        if not ours:
            kept.append(group)
            continue
        if first is None:
            first = len(kept)
        if t.whole_file or t.flat:
            continue
        rest = [h for h in group["hooks"] if h not in ours]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, first


# --- merging ---------------------------------------------------------------------------------


def shaped(have: Any, kind: type, where: str) -> None:
    """Refuse a person's value wisp would have to replace to merge into it."""
    if have is not None and not isinstance(have, kind):
        shape = "a table (object)" if kind is Mapping else "a list"
        raise SetupRefused(
            f"`{where}` in the config is not {shape}, so wisp cannot merge beside it; fix it "
            "(or merge by hand: `wisp hook NAME --print-settings`) and run again."
        )


def merge_hooks(hooks: dict[str, Any], mine: Mapping[str, Any], t: Harness) -> None:
    for event, groups in mine.items():
        current = hooks.get(event)
        shaped(current, list, f"hooks.{event}")
        current = list(current or [])
        kept, first = without_wisp(current, t)
        at = len(kept) if first is None else first
        hooks[event] = [*kept[:at], *groups, *kept[at:]]


def merge_values(into: dict[str, Any], mine: Mapping[str, Any], where: str = "") -> None:
    """wisp's sandbox settings into *into*: tables merged, lists gain wisp's items, scalars
    set."""
    for key, value in mine.items():
        have = into.get(key)
        if isinstance(value, Mapping):
            shaped(have, Mapping, where + key)
            table = dict(have or {})
            merge_values(table, value, f"{where}{key}.")
            into[key] = table
        elif isinstance(value, list):
            shaped(have, list, where + key)
            items = list(have or [])
            into[key] = items + [v for v in value if v not in items]
        else:
            into[key] = value


# --- files -------------------------------------------------------------------------------


def read_text(path: Path) -> str | None:
    """The config file's text (None: there is none), refusing what setup must not edit."""
    try:
        # O_NONBLOCK: a FIFO at its name with no writer would hang the command on open.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise SetupRefused(
                f"{path} is a symbolic link; setup edits only the file itself: merge the "
                "block by hand (`wisp hook NAME --print-settings`) into its target."
            ) from None
        raise SetupRefused(
            f"{path} cannot be read ({exc.strerror}); fix that and run again."
        ) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SetupRefused(f"{path} is not a regular file; setup leaves it alone.")
        data = f.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise SetupRefused(
            f"{path} is larger than {MAX_CONFIG_BYTES} bytes; setup leaves it alone."
        )
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise SetupRefused(f"{path} is not UTF-8 text; fix it and run again.") from None


def parse_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SetupRefused(
            f"{path} is not JSON wisp can read ({exc}); fix it (or move it away) and run again."
        ) from None
    if not isinstance(data, dict):
        raise SetupRefused(f"{path} does not hold a JSON object; fix it and run again.")
    return data


def event_list(data: Mapping[str, Any], event: str, top_level: bool = False) -> list[Any]:
    """*event*'s list in a parsed config: under its `hooks`, or (*top_level*) the file's own."""
    hooks = data if top_level else data.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, Mapping) else None
    return groups if isinstance(groups, list) else []


def read_json_quiet(path: Path) -> Mapping[str, Any]:
    """The JSON object in *path*; none where there is no file, or none setup could read."""
    try:
        return parse_json(path, read_text(path))
    except SetupRefused:
        return {}
