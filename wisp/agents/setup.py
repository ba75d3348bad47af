"""`wisp agents setup|remove|status`: wisp's block in each harness's own config file.

Each harness's record (:class:`wisp.agents.hookio.Harness`, its module's HARNESS) says where
its config lives (user level, or a project's), its format, the hook events wisp owns there
and the rest of wisp's block (Claude Code's sandbox and deny rules, Codex's `sandbox_mode`
and hook trust); :func:`harnesses` reads them all from the one tuple of modules. A
:class:`Plan` is the file's text before and after; applying it keeps a backup (under
`$WISP_HOME/agents/backups`, never beside the file: a harness loads its `hooks/` or
`plugin/` folder whole) and writes atomically, 0600. Only wisp's entries are touched: a hook
is wisp's when its command runs `wisp hook NAME` (in wisp's guard or not); everything else
in the file is kept as it was, byte for byte (JSON edited in place by
:mod:`wisp.agents.jsonsplice`, Codex's TOML through tomlkit).

Setup and remove are a round trip: setup records what it added (:mod:`wisp.agents.setuprecord`),
and remove puts a file nobody else changed since back as it was (deleting it, and the folders
setup made for it, if setup made it), or else takes out just what setup added, the person's
changes kept.

Codex skips a hook that is not trusted (`codex exec` silently): trust is `hooks.state."KEY"
.trusted_hash`, the hash Codex itself computes of the hook's definition. Setup asks the real
`codex app-server` (`hooks/list`) for that hash, on the candidate config in a scratch
`CODEX_HOME` (the hash does not depend on the file's path), and writes it under the real key:
a changed definition is re-trusted by running setup again.
"""

from __future__ import annotations

import copy
import difflib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from wisp._home import wisp_home
from wisp.agents import gatecheck, hookio, jsonsplice, reach, setuprecord
from wisp.agents.configfile import (
    SetupRefused,
    UnknownHarness,
    event_list,
    merge_hooks,
    merge_values,
    parse_json,
    read_text,
    shaped,
    wisp_hooks,
    without_wisp,
)
from wisp.agents.hookio import Format, Harness, HookOptions
from wisp.agents.install import Install, this_install

__all__ = ["Format", "HookOptions", "SetupRefused", "UnknownHarness", "parse_json", "read_text"]

# What older setups named the backups they kept beside the config (docs/agents.md: left there).
BACKUP_SUFFIX = ".wisp-backup-"
VERSION_TIMEOUT_S = 15.0
# The first line of wisp's OpenCode plugin: what makes a file of wisp's own (Format.TEXT) its.
PLUGIN_MARK = "// wisp's OpenCode plugin"


def plugin_mark(t: Harness) -> str:
    """What wisp's own file for *t* starts with (OpenCode's plugin: PLUGIN_MARK; a harness
    whose file is a script: its :attr:`Harness.mark`)."""
    return t.mark if t.mark is not None else f"// wisp's {t.title} plugin"


def wisp_block(t: Harness, options: HookOptions) -> dict[str, Any]:
    """wisp's part of *t*'s config: its hooks (the settings `wisp hook NAME --print-settings`
    prints), and its sandbox where it has one; a file of wisp's own as `{"text": …}`."""
    settings = t.settings(options)
    if isinstance(settings, str):
        return {"text": settings}
    out = dict(settings)
    if t.sandbox is not None:
        out.update(t.sandbox())
    return out


def harnesses() -> tuple[Harness, ...]:
    """Every harness setup knows, in order (:data:`wisp._entry.HARNESS_MODULES`)."""
    return hookio.harnesses()


def target(name: str) -> Harness:
    found = hookio.harness(name)
    if found is None:
        known = ", ".join(hookio.names())
        raise UnknownHarness(f"wisp cannot set up {name!r} (yet); it sets up {known}.")
    return found


# --- merging ---------------------------------------------------------------------------------


def _unmerge_hooks(hooks: dict[str, Any], t: Harness) -> None:
    for event in t.events:
        current = hooks.get(event)
        if not isinstance(current, list):
            continue
        kept, _ = without_wisp(current, t)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]


def _drop_items(into: dict[str, Any], mine: Mapping[str, Any]) -> None:
    """wisp's list items out of *into* (its scalars stay: they may be the person's too)."""
    for key, value in mine.items():
        have = into.get(key)
        if isinstance(value, Mapping) and isinstance(have, Mapping):
            table = dict(have)
            _drop_items(table, value)
            into[key] = table
        elif isinstance(value, list) and isinstance(have, list):
            into[key] = [v for v in have if v not in value]


def merged(data: Mapping[str, Any], t: Harness, block: Mapping[str, Any]) -> dict[str, Any]:
    """*data* (a parsed config) with wisp's *block* merged in."""
    if t.whole_file:
        groups = [g for event in t.events for g in event_list(data, event)]
        if not all(wisp_hooks(g, t) for g in groups) or set(data) - {"version", "hooks"}:
            raise SetupRefused(
                "the file holds more than wisp's hook; move your own hooks to another file "
                "in that folder and run again."
            )
        return dict(block)
    if t.top_level:  # the file is the hooks table itself
        top = dict(data)
        merge_hooks(top, block, t)
        return top
    out = dict(data)
    shaped(out.get("hooks"), Mapping, "hooks")
    hooks = dict(out.get("hooks") or {})
    merge_hooks(hooks, block["hooks"], t)
    out["hooks"] = hooks
    merge_values(out, {k: v for k, v in block.items() if k != "hooks"})
    return out


def unmerged(
    data: Mapping[str, Any],
    t: Harness,
    block: Mapping[str, Any],
    changes: tuple[setuprecord.Change, ...] | None = None,
) -> dict[str, Any] | None:
    """*data* without wisp's hooks and what setup added: the recorded *changes* undone, or
    (no record) wisp's list items taken out; None: the file is wisp's alone."""
    if t.whole_file:
        return None
    out = copy.deepcopy(dict(data))
    if t.top_level:
        _unmerge_hooks(out, t)
        return out
    if isinstance(out.get("hooks"), Mapping):
        hooks = dict(out["hooks"])
        _unmerge_hooks(hooks, t)
        if hooks or changes is not None:  # with a record, an empty `hooks` goes if setup added it
            out["hooks"] = hooks
        else:
            del out["hooks"]
    if changes is None:
        _drop_items(out, {k: v for k, v in block.items() if k != "hooks"})
    else:
        setuprecord.undo(out, changes)
    return out


# --- files -------------------------------------------------------------------------------


def write_atomically(path: Path, text: str | None) -> None:
    """*text* as *path*, replaced at once, 0600 (None: the file goes)."""
    if text is None:
        path.unlink(missing_ok=True)
        return
    missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    for directory in reversed(missing):  # each one it makes is the person's alone
        directory.mkdir(mode=0o700, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        Path(scratch).chmod(0o600)
        Path(scratch).replace(path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


@attrs.frozen(kw_only=True)
class Plan:
    """One config file, before and after; and what setup's record of it becomes."""

    harness: str
    path: Path
    before: str | None
    after: str | None
    notes: tuple[str, ...] = ()  # what the person must know: unprotected, skipped hooks
    record: setuprecord.Record | None = None  # setup: what it added, recorded with the write
    previous: setuprecord.Record | None = None  # setup: the record it replaces
    forget: bool = False  # remove: the file's record goes
    made_dirs: tuple[Path, ...] = ()  # remove: folders setup made, removed if left empty

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        name = str(self.path)
        lines = difflib.unified_diff(
            old,
            new,
            name if self.before is not None else "/dev/null",
            name if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def apply(plan: Plan) -> Path | None:
    """Write *plan* (if it changes anything): the old file kept as a backup under
    `$WISP_HOME/agents/backups`, setup's record of it written (or, for remove, dropped), the
    folders setup made for it removed when it goes and they are left empty. The backup."""
    home = wisp_home()
    if not plan.changed:
        if plan.forget:
            setuprecord.drop_record(home, plan.path)
        return None
    backup = None
    try:
        if plan.before is not None:
            backup = setuprecord.keep_backup(home, plan.path, plan.before)
        if plan.record is not None:
            setuprecord.write_record(home, plan.record)
    except setuprecord.RecordUnwritable as exc:
        raise SetupRefused(f"{exc} {plan.path} is unchanged.") from None
    try:
        write_atomically(plan.path, plan.after)
    except OSError as exc:
        if plan.record is not None:  # the file is as it was: so is its record
            if plan.previous is None:
                setuprecord.drop_record(home, plan.path)
            else:
                setuprecord.write_record(home, plan.previous)
        raise SetupRefused(
            f"{plan.path} could not be written ({exc.strerror or exc}); it is unchanged. "
            "Fix that (the folder's owner and mode, free space) and run again."
        ) from None
    if plan.forget:
        setuprecord.drop_record(home, plan.path)
    if plan.after is None:
        for folder in sorted(plan.made_dirs, key=lambda d: len(d.parts), reverse=True):
            try:
                folder.rmdir()  # only an empty folder goes; a symbolic link is not one
            except OSError:
                continue  # it holds something now (or is gone): it stays
    return backup


def config_file(t: Harness, project: Path | None, env: Mapping[str, str] | None = None) -> Path:
    if project is None:
        return t.user_file(os.environ if env is None else env, Path.home())
    if t.project_file is None:
        raise SetupRefused(
            f"{t.title}'s hooks are set up at the user level only (its trust of a hook is "
            f"kept there); run `wisp agents setup {t.name}` without --project."
        )
    if not project.is_dir():
        raise SetupRefused(f"{project} is not a directory; name the project's directory.")
    return t.project_file(project.resolve())


def plan_setup(
    name: str,
    project: Path | None = None,
    install: Install | None = None,
    options: HookOptions | None = None,
) -> Plan:
    """What `wisp agents setup NAME` would write, its hook waiting as *options* say; refused
    when *install* (this process's, which the hook names) lies where an agent can write
    (:mod:`wisp.agents.reach`)."""
    t = target(name)
    path = config_file(t, project)
    before = read_text(path)
    refusal = reach.setup_refusal(name, install or this_install(), os.environ, before, project)
    if refusal is not None:
        raise SetupRefused(refusal)
    block = wisp_block(t, options or HookOptions())
    old: Mapping[str, Any] = {}
    new: Mapping[str, Any] = {}
    if t.fmt is Format.TEXT:
        _refuse_not_ours(t, path, before)
        after = block["text"]
        notes = _notes(t, {}, project)
        ours = before is not None
    elif t.fmt is Format.TOML:
        from wisp.agents import codexsetup

        after, trusted = codexsetup.merged_text(path, before, block, t)
        notes = codexsetup.notes(after, trusted)
        old = codexsetup.plain(path, before)
        ours = bool(installed_hooks(t, old))
        if before is not None and after == before:  # Codex may still not trust it: ask again
            after, said = codexsetup.trusted_again(path, after, t)
            notes += said
        new = codexsetup.plain(path, after)
    else:
        old = parse_json(path, before)
        new = merged(old, t, block)
        after = before if before is not None and jsonsplice.same(old, new) else None
        if after is None:
            after = jsonsplice.splice(before, new)
        notes = _notes(t, new, project)
        ours = bool(installed_hooks(t, old))
    plan = Plan(harness=name, path=path, before=before, after=after, notes=tuple(notes))
    if not plan.changed:
        return plan
    changes = setuprecord.changes_between(old, new, skip=("hooks",))
    if "hooks" not in old:  # its table is setup's: it goes once empty again
        changes.insert(
            0, setuprecord.Change(kind=setuprecord.ChangeKind.SET, at=("hooks",), value={})
        )
    record, previous, said = _record_of_setup(path, before, after, changes, ours)
    return attrs.evolve(plan, record=record, previous=previous, notes=(*notes, *said))


def _record_of_setup(
    path: Path,
    before: str | None,
    after: str,
    changes: list[setuprecord.Change],
    ours: bool,
) -> tuple[setuprecord.Record, setuprecord.Record | None, list[str]]:
    """What setup's record of *path* becomes with this write (and the one it replaces): the
    text to put back while nobody else has changed the file, and every change setup made."""
    home = wisp_home()
    old, said = _record_of(
        home, path, ": it is replaced, and `wisp agents remove` will take out wisp's entries only"
    )
    written = setuprecord.digest(after)
    if before is None:  # setup makes the file (and the folders it lacks)
        made = [d for d in path.parents if not d.exists()]
        record = setuprecord.Record(
            path=str(path),
            existed=False,
            restorable=True,
            original=None,
            written=written,
            made_dirs=tuple(str(d) for d in reversed(made)),
            changes=tuple(changes),
        )
    elif old is not None:  # setup again: the same story, while nobody else wrote the file
        unchanged = setuprecord.digest(before) == old.written
        record = attrs.evolve(
            old,
            restorable=old.restorable and unchanged,
            original=old.original if unchanged else None,
            written=written,
            changes=setuprecord.composed(old.changes, changes),
        )
    else:  # the person's file; one holding wisp's entries already cannot simply be put back
        record = setuprecord.Record(
            path=str(path),
            existed=True,
            restorable=not ours,
            original=None if ours else before,
            written=written,
            changes=tuple(changes),
        )
    return record, old, said


def _record_of(
    home: Path, path: Path, if_damaged: str
) -> tuple[setuprecord.Record | None, list[str]]:
    """Setup's record of *path* (None: there is none, or it does not hold), and, when it does
    not hold, the note saying so followed by *if_damaged* (what comes of it)."""
    try:
        return setuprecord.read_record(home, path), []
    except setuprecord.RecordDamaged as exc:
        where = setuprecord.record_path(home, path)
        note = f"the record of what setup added to {path} ({where}) does not hold ({exc})"
        return None, [
            f"{note}: {if_damaged}" if if_damaged.startswith("it ") else f"{note}, {if_damaged}"
        ]


def plan_remove(name: str, project: Path | None = None) -> Plan:
    """What `wisp agents remove NAME` would write: the file as it was before setup, when
    nobody else changed it since; else without what setup added (its record), the person's
    changes kept; with no record to go by, without wisp's hooks and deny rules."""
    t = target(name)
    path = config_file(t, project)
    before = read_text(path)
    home = wisp_home()
    record, notes = _record_of(
        home,
        path,
        ", so it is not used (and is removed): wisp's hooks, deny rules and trust entries are "
        "taken out, any sandbox settings setup turned on stay: look them over",
    )
    plan = Plan(harness=name, path=path, before=before, after=before, forget=True)
    if before is None:
        return plan
    if record is not None:
        plan = attrs.evolve(plan, made_dirs=tuple(Path(d) for d in record.made_dirs))
        if record.restorable and setuprecord.digest(before) == record.written:
            return attrs.evolve(plan, after=record.original if record.existed else None)
    elif not notes:
        notes.append(
            f"wisp has no record of what setup added to {path} (set up by an earlier wisp): "
            "wisp's hooks, deny rules and trust entries are taken out, any sandbox settings "
            "stay (they may be yours): look them over"
        )
    after = _removed(t, path, before, record)
    return attrs.evolve(plan, after=after, notes=tuple(notes) if after != before else ())


def _removed(t: Harness, path: Path, before: str, record: setuprecord.Record | None) -> str | None:
    """*before* without wisp's part: what *record* says setup added (None: no record)."""
    changes = record.changes if record is not None else None
    if t.fmt is Format.TEXT:
        _refuse_not_ours(t, path, before)
        return None
    if t.fmt is Format.TOML:
        from wisp.agents import codexsetup

        return codexsetup.removed_text(path, before, t, changes)
    data = parse_json(path, before)
    if t.whole_file:
        owned = all(wisp_hooks(h, t) for h in event_list(data, t.events[0]))
        if not owned:
            raise SetupRefused(
                f"{path} holds hooks that are not wisp's; take wisp's out of it by hand."
            )
        return None
    out = unmerged(data, t, wisp_block(t, HookOptions()), changes) or {}
    if jsonsplice.same(out, data):
        return before
    if record is not None and not record.existed and not out:
        return None  # setup made it, and nothing else is in it
    return jsonsplice.splice(before, out)


def _refuse_not_ours(t: Harness, path: Path, text: str | None) -> None:
    """A file of wisp's own that someone else's stands in the place of is left alone."""
    if text is not None and not text.startswith(plugin_mark(t)):
        raise SetupRefused(
            f"{path} is not wisp's plugin; move it away (or merge by hand: `wisp hook "
            f"{t.name} --print-settings`) and run again."
        )


def _notes(t: Harness, data: Mapping[str, Any], project: Path | None) -> list[str]:
    if t.notes is not None:
        return t.notes(data, project)
    home = wisp_home()
    notes = [
        f"unprotected: setup does not turn on {t.title}'s sandbox; an agent's command can "
        f"write into $WISP_HOME ({home}) and answer its own request (docs/agents.md)"
    ]
    if t.project_note is not None and project is not None:
        notes.append(t.project_note)
    return notes


# --- status ------------------------------------------------------------------------------


def installed_hooks(t: Harness, data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """wisp's hooks in a parsed config of *t*, each with its event."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for event in t.events:
        for group in event_list(data, event, t.top_level):
            found.extend((event, hook) for hook in wisp_hooks(group, t))
    return found


def version_of(program: str) -> str | None:
    try:
        done = subprocess.run(
            [program, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = (done.stdout or done.stderr).strip().splitlines()
    return words[0].strip() if words else None


def _read_config(t: Harness, path: Path) -> Mapping[str, Any]:
    text = read_text(path)
    if text is None:
        return {}
    if t.fmt is Format.TEXT:  # the plugin: wisp's when it carries the mark
        return {"plugin": text} if text.startswith(plugin_mark(t)) else {}
    if t.fmt is Format.TOML:
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SetupRefused(f"{path} is not TOML wisp can read ({exc})") from None
    return parse_json(path, text)


def _gates(t: Harness, path: Path, data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """wisp's gates in one parsed config of *t*: each hook's file, event and timeout, and
    its command read (the plugin's argv, for OpenCode)."""
    if t.fmt is Format.TEXT:
        if "plugin" not in data:
            return []
        cmd = gatecheck.read_plugin(data["plugin"])
        return [{"file": str(path), "event": t.events[0] if t.events else None,
                 "timeout": None, "cmd": cmd,
                 # a plugin denies whatever goes wrong; a script runs wisp's guard
                 "closed": not t.guarded}]  # fmt: skip
    gates = []
    for event, hook in installed_hooks(t, data):
        timeout = hook.get(t.timeout_key)
        command = hook.get(t.command_key)
        gates.append(
            {
                "file": str(path),
                "event": event,
                "timeout": timeout // t.timeout_scale if isinstance(timeout, int) else None,
                "cmd": gatecheck.read_command(command) if isinstance(command, str) else None,
                # Cursor's own `failClosed`: a hook that dies is its deny.
                "closed": t.flat and hook.get("failClosed") is True,
            }
        )
    return gates


def _roots(t: Harness, config: Mapping[str, Any], cwd: Path) -> list[reach.WritableRoot]:
    """Where *t*'s agent may write, as far as its settings say (and the temporary
    directories)."""
    roots = reach.temp_roots(os.environ)
    if t.roots is not None:
        roots += t.roots(config, cwd, Path.home())
    return roots


def harness_status(
    t: Harness,
    cwd: Path,
    *,
    install: Install | None = None,
    runs: gatecheck.Runs | None = None,
) -> dict[str, Any] | None:
    """What `wisp agents status` says of *t*; None when it is neither on PATH nor holds
    wisp's gate in its config. *runs*: what each wisp said to `--version` (asked once per
    status)."""
    program = shutil.which(t.program)
    files = [config_file(t, None)]
    if t.project_file is not None and t.project_file(cwd).absolute() != files[0].absolute():
        files.append(t.project_file(cwd))  # not when run in $HOME: the same file, once
    gates: list[dict[str, Any]] = []
    problems: list[str] = []
    config: Mapping[str, Any] = {}
    for path in files:
        try:
            data = _read_config(t, path)
        except SetupRefused as exc:
            problems.append(str(exc))
            continue
        if path == files[0]:
            config = data
        gates += _gates(t, path, data)
    if program is None and not gates:
        return None
    install = install or this_install()
    runs = runs or gatecheck.Runs()
    roots = _roots(t, config, cwd)
    hooks = []
    for gate in gates:
        found = gatecheck.check_hook(
            gate["cmd"],
            t.name,
            install=install,
            roots=roots,
            runs=runs,
            fails_closed_itself=gate["closed"],
        )
        hooks.append({k: v for k, v in gate.items() if k not in ("cmd", "closed")} | found)
        problems += [f"{gate['file']}: {p}" for p in found["problems"]]
    reached = dict.fromkeys(r for h in hooks for r in h["reach"])
    protection = _protection(t, config, cwd) + [
        f"the gate's wisp is within the agent's reach: {r}; one write there and the gate is "
        "the agent's (install wisp with pipx and run setup again: docs/agents.md)"
        for r in reached
    ]
    checked = ["configFiles", "sandbox"]
    not_checked: list[dict[str, str]] = []
    if program is None:
        why = f"`{t.program}` is not on PATH"
        not_checked.append({"check": "version", "why": why})
        if t.skipped is not None:
            not_checked.append({"check": "skipped", "why": why})
        skipped: list[str] = []
    else:
        checked += ["version", "skipped"] if t.skipped is not None else ["version"]
        skipped = t.skipped(program, hooks) if t.skipped is not None else []
    return {
        "harness": t.name,
        "title": t.title,
        "executable": t.program,
        "program": program,
        "onPath": program is not None,
        "version": version_of(program) if program else None,
        "installed": bool(hooks),
        "hooks": hooks,
        "skipped": skipped,
        "protected": not protection,
        "unprotected": protection,
        "problems": problems,
        "checked": checked,
        "notChecked": not_checked,
    }


def _protection(t: Harness, config: Mapping[str, Any], cwd: Path) -> list[str]:
    if t.protection is not None:
        return t.protection(config, cwd)
    home = wisp_home()
    return [f"wisp does not set up {t.title}'s sandbox: nothing keeps its commands out of {home}"]


def needs_attention(entry: Mapping[str, Any]) -> bool:
    """Whether a harness's status calls for the person: wisp's gate installed there, but
    skipped, not fail-closed, not working, with a problem, or with its sandbox leaving
    $WISP_HOME (or wisp's own program) within reach."""
    if not entry["installed"]:
        return False
    broken = not all(h["failClosed"] and h["works"] for h in entry["hooks"])
    return bool(entry["skipped"] or entry["problems"]) or broken or not entry["protected"]


def status(cwd: Path | None = None) -> list[dict[str, Any]]:
    """Every harness wisp knows that is on PATH or whose config holds wisp's gate: its
    version, wisp's gate (each part checked), protection."""
    here = Path.cwd() if cwd is None else cwd
    install, runs = this_install(), gatecheck.Runs()
    found = []
    for t in harnesses():
        try:
            entry = harness_status(t, here, install=install, runs=runs)
        except RuntimeError:  # no home to look in (config_file): nothing to say of it
            continue
        if entry is not None:
            found.append(entry)
    return found
