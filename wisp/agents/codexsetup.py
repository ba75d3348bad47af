"""Codex's part of `wisp agents setup`: config.toml edited through tomlkit (the person's
comments and layout kept), `sandbox_mode`, and the trust Codex needs to run wisp's hook.

Codex (0.171) keys a hook's trust by `SOURCE:EVENT:GROUP:HOOK` (`…/config.toml:pre_tool_use:
0:0`) in `[hooks.state."KEY"]`, with `trusted_hash` the hash Codex computes of the hook's
definition. wisp does not recompute that hash: it asks the real `codex app-server`
(`hooks/list`, its JSON-RPC over stdio) on the candidate config in a scratch `CODEX_HOME`,
since the hash does not depend on the file's path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from wisp.agents import sandbox, setuprecord
from wisp.agents.configfile import SetupRefused, is_wisp_command, merge_hooks, shaped, wisp_hooks

if TYPE_CHECKING:
    from wisp.agents.hookio import Harness

APP_SERVER_TIMEOUT_S = 30.0
PROTECTING = "workspace-write"
TRUSTED = ("trusted", "managed")
BYPASS = "--dangerously-bypass-hook-trust"


class TrustUnknown(Exception):
    """Codex could not be asked for its hook hashes: the message says why."""


def _snake(event: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in event).lstrip("_")


def _parse(path: Path, text: str | None) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise SetupRefused(
            f"{path} is not TOML wisp can read ({exc}); fix it and run again."
        ) from None


def _hooks_table(doc: tomlkit.TOMLDocument) -> Any:
    if "hooks" not in doc:
        doc["hooks"] = tomlkit.table(is_super_table=True)
    hooks = doc["hooks"]
    shaped(hooks, Mapping, "hooks")
    shaped(hooks.get("state"), Mapping, "hooks.state")
    return hooks


def _set_groups(hooks: Any, event: str, groups: list[Any]) -> None:
    if not groups:
        if event in hooks:
            del hooks[event]
        return
    aot = tomlkit.aot()
    for group in groups:
        aot.append(tomlkit.item(group))
    hooks[event] = aot


def merged_text(
    path: Path, before: str | None, block: Mapping[str, Any], t: Harness
) -> tuple[str, bool]:
    """config.toml with wisp's hook, a protecting `sandbox_mode`, and Codex's trust of the
    hook; and whether that trust could be had."""
    doc = _parse(path, before)
    hooks = _hooks_table(doc)
    plain = doc.unwrap()
    hooks_plain = dict(plain.get("hooks") or {})
    merge_hooks(hooks_plain, block["hooks"], t)
    redefined = False
    for event in block["hooks"]:
        if hooks_plain[event] != (plain.get("hooks") or {}).get(event):
            _set_groups(hooks, event, hooks_plain[event])
            redefined = True
    if plain.get("sandbox_mode") not in sandbox.CODEX_PROTECTING_MODES:
        doc["sandbox_mode"] = PROTECTING
    try:
        trust = hashes(doc.as_string(), t)
    except TrustUnknown:
        trust = {}
    trusted = bool(trust)
    state = hooks.get("state")
    for key, digest in trust.items():
        real = f"{path}:{key}"
        have = state.get(real) if state is not None else None
        # A hook defined as before keeps the trust it has: it may be Codex's own hash, which
        # `trusted_again` wrote where the scratch home's did not satisfy Codex.
        if have is not None and (have.get("trusted_hash") == digest or not redefined):
            continue
        if state is None:
            hooks["state"] = tomlkit.table(is_super_table=True)
            state = hooks["state"]
        entry = tomlkit.table()
        entry["trusted_hash"] = digest
        state[real] = entry
    if before is not None and doc.unwrap() == tomlkit.parse(before).unwrap():
        return before, trusted
    return doc.as_string(), trusted


def plain(path: Path, text: str | None) -> dict[str, Any]:
    """config.toml's settings (none: no file)."""
    return dict(_parse(path, text).unwrap())


def removed_text(
    path: Path, before: str, t: Harness, changes: tuple[setuprecord.Change, ...] | None = None
) -> str:
    """config.toml without wisp's hooks and their trust (the person's hooks keep theirs: their
    keys follow them when wisp's group, before them, goes), and without the settings setup
    added (*changes*, its record: `sandbox_mode` set back; None: no record, they stay)."""
    doc = _parse(path, before)
    plain = doc.unwrap()
    hooks = doc.get("hooks")
    if hooks is None:
        return before
    shaped(hooks, Mapping, "hooks")
    state = hooks.get("state")
    shaped(state, Mapping, "hooks.state")
    renamed: dict[str, str | None] = {}
    for event in t.events:
        groups = (plain.get("hooks") or {}).get(event)
        shaped(groups, list, f"hooks.{event}")
        groups = list(groups or [])
        kept: list[Any] = []
        for index, group in enumerate(groups):
            old = f"{path}:{_snake(event)}:{index}:"
            if wisp_hooks(group, t):
                renamed[old] = None
                continue
            renamed[old] = f"{path}:{_snake(event)}:{len(kept)}:"
            kept.append(group)
        if len(kept) != len(groups):
            _set_groups(hooks, event, kept)
    if state is not None:
        _rename_state(hooks, state, renamed)
    if not hooks:
        del doc["hooks"]
    if changes is not None:
        setuprecord.undo(doc, changes)
    text = doc.as_string()
    if text.strip() and before.endswith("\n") and not before.endswith("\n\n"):
        text = text.rstrip("\n") + "\n"  # the blank line tomlkit leaves where a table went
    return before if tomlkit.parse(before).unwrap() == doc.unwrap() else text


def _rename_state(hooks: Any, state: Any, renamed: Mapping[str, str | None]) -> None:
    entries = {k: state[k] for k in list(state.keys())}
    changes = False
    for key, value in entries.items():
        prefix = next((p for p in renamed if key.startswith(p)), None)
        if prefix is None:
            continue
        new = renamed[prefix]
        if new == prefix:
            continue
        changes = True
        del state[key]
        if new is not None:
            state[new + key[len(prefix) :]] = value
    if changes and not state:
        del hooks["state"]


def notes(after: str, trusted: bool) -> list[str]:
    """What the person must know after setup: the sandbox's reach, and an untrusted hook."""
    home = _home()
    config = tomlkit.parse(after).unwrap()
    out = [f"unprotected: {p}" for p in sandbox.codex_problems(config, home)]
    out.append(
        f"a Codex session whose working directory holds $WISP_HOME ({home}) can write it: "
        "start Codex in your projects, not in a directory above $WISP_HOME"
    )
    if not trusted:
        out.append(
            f"Codex's trust of wisp's hook was not written (`codex` not found on PATH, or it "
            f"did not answer): `codex exec` skips an untrusted hook. Run this setup again with "
            f"codex on PATH, or trust it in Codex's /hooks, or run `codex exec {BYPASS}`."
        )
    return out


def trusted_again(path: Path, text: str, t: Harness) -> tuple[str, list[str]]:
    """*text* (config.toml as setup leaves it, unchanged) with Codex's trust written again for
    each of wisp's hooks that Codex itself, asked about the real file, does not trust (under
    the key and for the hash it names); and what the person must know. Without `codex` on
    PATH there is nothing to ask (the notes already say the trust could not be written)."""
    program = shutil.which("codex")
    if program is None:
        return text, []
    try:
        listed = app_server_hooks(program, path.parent, Path.cwd())
    except TrustUnknown as exc:
        return text, [
            f"could not ask Codex whether it trusts wisp's hook ({exc}): if `codex exec` "
            f"skips it, trust it in Codex's /hooks, or run `codex exec {BYPASS}`"
        ]
    stale = [
        h
        for h in _ours(listed, t)
        if h.get("trustStatus") not in TRUSTED and h.get("key") and h.get("currentHash")
    ]
    if not stale:
        return text, []
    doc = _parse(path, text)
    hooks = _hooks_table(doc)
    if hooks.get("state") is None:
        hooks["state"] = tomlkit.table(is_super_table=True)
    for h in stale:
        entry = tomlkit.table()
        entry["trusted_hash"] = str(h["currentHash"])
        hooks["state"][str(h["key"])] = entry
    keys = ", ".join(f"{h['key']} ({h['trustStatus']})" for h in stale)
    return doc.as_string(), [f"Codex did not trust wisp's hook ({keys}): its trust is written anew"]


def _home() -> Path:
    from wisp._home import wisp_home

    return wisp_home()


def app_server_hooks(program: str, codex_home: Path, cwd: Path) -> list[Mapping[str, Any]]:
    """The hooks `codex app-server` lists for *cwd* under *codex_home* (`hooks/list`)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "wisp", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]  # fmt: skip
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    try:
        proc = subprocess.Popen(
            [program, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
    except OSError as exc:
        why = exc.strerror or "it could not be run"
        raise TrustUnknown(f"{program} app-server did not start ({why})") from None
    deadline = threading.Timer(APP_SERVER_TIMEOUT_S, proc.kill)  # a deadline, not a poll
    deadline.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        proc.stdin.flush()
        for line in proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == 2:
                data = (message.get("result") or {}).get("data") or []
                return [h for d in data if isinstance(d, dict) for h in d.get("hooks") or []]
        raise TrustUnknown(f"{program} app-server ended without listing its hooks")
    except BrokenPipeError:
        raise TrustUnknown(f"{program} app-server ended before reading wisp's question") from None
    except OSError as exc:
        raise TrustUnknown(f"{program} app-server: {exc.strerror or 'could not be read'}") from None
    finally:
        deadline.cancel()
        proc.kill()
        proc.wait()


def _ours(hooks: list[Mapping[str, Any]], t: Harness) -> list[Mapping[str, Any]]:
    return [
        h for h in hooks if h.get("source") == "user" and is_wisp_command(h.get("command"), t.name)
    ]


def hashes(candidate: str, t: Harness) -> dict[str, str]:
    """Codex's hash of each of wisp's hooks in *candidate* (config.toml's text), by the key
    with the file's path taken off (`pre_tool_use:0:0`)."""
    program = shutil.which("codex")
    if program is None:
        raise TrustUnknown("codex is not on PATH")
    with tempfile.TemporaryDirectory(prefix="wisp-codex-") as scratch:
        home = Path(scratch)
        (home / "config.toml").write_text(candidate, encoding="utf-8")
        listed = app_server_hooks(program, home, home)
        prefix = f"{home / 'config.toml'}:"
        return {
            str(h["key"])[len(prefix) :]: str(h["currentHash"])
            for h in _ours(listed, t)
            if str(h.get("key", "")).startswith(prefix) and h.get("currentHash")
        }


def untrusted(program: str, t: Harness) -> list[str]:
    """wisp's hooks that Codex (as configured) would skip: not trusted, or trusted for an
    older definition."""
    config = t.user_file(os.environ, Path.home())
    try:
        listed = app_server_hooks(program, config.parent, Path.cwd())
    except TrustUnknown as exc:
        return [f"could not ask Codex whether it trusts wisp's hook: {exc}"]
    return [
        f"{h.get('key')}: {h.get('trustStatus')}, so `codex exec` skips it (run `wisp agents "
        "setup codex` again to trust it)"
        for h in _ours(listed, t)
        if h.get("trustStatus") not in TRUSTED
    ]
