"""What `wisp agents setup` added to a harness's config file, so that `remove` takes out exactly
that; and the backups of the files it changed. Both live in `$WISP_HOME/agents/`, never beside
the config (a harness loads every file in its `hooks/` or `plugin/` folder).

A :class:`Record` per config file (`records/NAME.KEY.json`, 0600, in folders 0700; KEY a digest
of the file's path): the file's text before wisp's first setup (while nobody else has changed
it since, so remove can put it back byte for byte), whether the file existed, the folders
setup made for it, the digest of what setup last wrote, and each setting setup added or
changed (:class:`Change`): a key set (and what it held before, if anything) or an item added
to a list. A record is checked as it is read; one that does not hold (hand-edited, cut short,
of another file) is reported as :class:`RecordDamaged`, and remove falls back to taking out
wisp's own entries alone: never does a record make remove delete the person's settings.

Backups: `backups/NAME.KEY.TIME`, the file as it was before each write, the newest
:data:`BACKUPS_PER_FILE` kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, MutableMapping
from contextlib import suppress
from enum import StrEnum
from pathlib import Path
from typing import Any

import attrs

from wisp.agents.jsonsplice import same

AGENTS_DIR = "agents"
RECORDS_DIR = "records"
BACKUPS_DIR = "backups"
# Backups kept per config file: enough to step back over a few runs; every run writes one, so
# without a bound they would pile up.
BACKUPS_PER_FILE = 3
RECORD_VERSION = 1
# A record holds the config's old text (at most setup's MAX_CONFIG_BYTES, 1 MiB) as a JSON
# string, which escaping can grow to six times its size at worst.
MAX_RECORD_BYTES = 7 * 1024 * 1024
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


class RecordDamaged(Exception):
    """The record of a config file cannot be trusted: the message says why."""


class RecordUnwritable(Exception):
    """`$WISP_HOME/agents` cannot be used: the message says why and what to do."""


class ChangeKind(StrEnum):
    SET = "set"  # a key set: added (`had` false) or changed from `before`
    ITEM = "item"  # an item added to a list the file already had


@attrs.frozen(kw_only=True)
class Change:
    """One setting setup added or changed; `at` is its keys from the file's top."""

    kind: ChangeKind
    at: tuple[str, ...]
    value: Any  # what setup set, or the item it added
    had: bool = False  # SET: the key was there before
    before: Any = None  # SET: what it held then


@attrs.frozen(kw_only=True)
class Record:
    """What setup did to one config file (the module's docstring)."""

    version: int = RECORD_VERSION
    path: str
    existed: bool  # the file was there before wisp's first setup
    restorable: bool  # nobody else changed it since: `original` is what to put back
    original: str | None  # its text before wisp's first setup (when restorable and existed)
    written: str  # sha256 of the text setup last wrote
    made_dirs: tuple[str, ...] = ()  # the folders setup made for it, outermost first
    changes: tuple[Change, ...] = ()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _key(path: Path) -> str:
    return f"{path.name}.{hashlib.sha256(str(path).encode()).hexdigest()[:24]}"


# --- what changed -------------------------------------------------------------------------


def changes_between(
    before: Mapping[str, Any], after: Mapping[str, Any], skip: Iterable[str] = ()
) -> list[Change]:
    """The settings *after* adds to or changes in *before* (keys in *skip*, at the top, are
    left out: wisp's hooks, which remove finds by their command)."""
    found: list[Change] = []
    _walk(before, after, (), set(skip), found)
    return found


def _walk(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    at: tuple[str, ...],
    skip: set[str],
    found: list[Change],
) -> None:
    for key, value in after.items():
        if not at and key in skip:
            continue
        where = (*at, key)
        if key not in before:
            found.append(Change(kind=ChangeKind.SET, at=where, value=value))
            continue
        have = before[key]
        if same(have, value):
            continue
        if isinstance(have, Mapping) and isinstance(value, Mapping):
            _walk(have, value, where, skip, found)
        elif isinstance(have, list) and isinstance(value, list):
            found += [
                Change(kind=ChangeKind.ITEM, at=where, value=v)
                for v in value
                if not any(same(v, h) for h in have)
            ]
        else:
            found.append(Change(kind=ChangeKind.SET, at=where, value=value, had=True, before=have))


def composed(old: Iterable[Change], new: Iterable[Change]) -> tuple[Change, ...]:
    """The changes of two setups in turn as one: a key set twice keeps what it held before
    the first."""
    out = list(old)
    for change in new:
        if change.kind is ChangeKind.ITEM:
            if not any(c.kind is ChangeKind.ITEM and c == change for c in out):
                out.append(change)
            continue
        earlier = next(
            (i for i, c in enumerate(out) if c.kind is ChangeKind.SET and c.at == change.at), None
        )
        if earlier is None:
            out.append(change)
        else:
            first = out[earlier]
            out[earlier] = attrs.evolve(change, had=first.had, before=first.before)
    return tuple(out)


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)  # a tomlkit item
    return unwrap() if callable(unwrap) else value


def undo(data: MutableMapping[str, Any], changes: Iterable[Change]) -> None:
    """Take *changes* out of *data* (parsed JSON, or a tomlkit document), newest first: a key
    setup added goes if it still holds what setup set (an object it added keeps what the
    person put in it since), a key it changed gets its old value back if it still holds
    setup's, an item it added leaves its list. What the person changed since stays theirs."""
    for change in reversed(list(changes)):
        parent = _container(data, change.at[:-1])
        key = change.at[-1]
        if parent is None or key not in parent:
            continue
        if change.kind is ChangeKind.ITEM:
            items = parent[key]
            if isinstance(_plain(items), list):
                at = next((i for i, v in enumerate(items) if same(_plain(v), change.value)), None)
                if at is not None:
                    del items[at]
        elif change.had:
            if same(_plain(parent[key]), change.value):
                parent[key] = change.before
        else:
            _take_out(parent, key, change.value)


def _container(data: MutableMapping[str, Any], at: tuple[str, ...]) -> Any:
    here: Any = data
    for key in at:
        if not isinstance(_plain(here), dict) or key not in here:
            return None
        here = here[key]
    return here if isinstance(_plain(here), dict) else None


def _take_out(parent: Any, key: str, value: Any) -> None:
    have = parent[key]
    plain = _plain(have)
    if same(plain, value):
        del parent[key]
    elif isinstance(plain, dict) and isinstance(value, Mapping):
        for k, v in value.items():
            if k in have:
                _take_out(have, k, v)
        if not have:
            del parent[key]
    elif isinstance(plain, list) and isinstance(value, list):
        for v in value:
            at = next((i for i, h in enumerate(have) if same(_plain(h), v)), None)
            if at is not None:
                del have[at]
        if not have:
            del parent[key]


# --- records on disk ------------------------------------------------------------------------


def _converter() -> Any:
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True)
    # As they are: never `bool("no")`, `str(5)` (enums, str's subclasses, keep their own).
    conv.register_structure_hook_func(lambda kind: kind in (str, bool, int), _exactly)
    return conv


def _exactly(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise TypeError(f"not a {kind.__name__}")
    return value


def _folder(home: Path, name: str) -> int:
    """`$WISP_HOME/agents/NAME`, made 0700 if missing (and refused if not the person's
    alone): its descriptor."""
    from pending import PendingError, open_private_dir
    from wisp._home import refuse_anothers_home

    try:
        refuse_anothers_home(home)
        fd = open_private_dir(str(home))
        try:
            agents = open_private_dir(str(home / AGENTS_DIR), parent_fd=fd, name=AGENTS_DIR)
        finally:
            os.close(fd)
        try:
            return open_private_dir(str(home / AGENTS_DIR / name), parent_fd=agents, name=name)
        finally:
            os.close(agents)
    except PendingError as exc:
        raise RecordUnwritable(str(exc)) from None


def _write(dir_fd: int, name: str, data: bytes) -> None:
    scratch = f".{name}.{os.getpid()}.tmp"
    fd = os.open(scratch, _CREATE, 0o600, dir_fd=dir_fd)
    try:
        os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(scratch, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def record_path(home: Path, path: Path) -> Path:
    return home / AGENTS_DIR / RECORDS_DIR / (_key(path) + ".json")


def read_record(home: Path, path: Path) -> Record | None:
    """The record of the config file *path* (None: there is none). Raises
    :class:`RecordDamaged` for one that does not hold."""
    from pending import PendingError, read_private_file

    where = record_path(home, path)
    if not where.parent.is_dir():
        return None
    try:
        fd = _folder(home, RECORDS_DIR)
    except RecordUnwritable as exc:
        raise RecordDamaged(str(exc)) from None
    try:
        raw = read_private_file(fd, where.name, cap=MAX_RECORD_BYTES)
    except PendingError as exc:
        raise RecordDamaged(str(exc)) from None
    finally:
        os.close(fd)
    if raw is None:
        return None
    try:
        record: Record = _converter().structure(json.loads(raw), Record)
    except Exception as exc:  # any shape that is not a record's: damaged, whatever the cause
        raise RecordDamaged(f"it is not a record wisp wrote ({type(exc).__name__})") from None
    _check(record, path)
    return record


def _check(record: Record, path: Path) -> None:
    if record.version != RECORD_VERSION:
        raise RecordDamaged(f"its version is {record.version}, not {RECORD_VERSION}")
    if record.path != str(path):
        raise RecordDamaged("it is the record of another file")
    if len(record.written) != 64 or set(record.written) - set("0123456789abcdef"):
        raise RecordDamaged("its digest of the written file is not one")
    if record.restorable and record.existed and record.original is None:
        raise RecordDamaged("it holds no text to put back")
    if not all(Path(d) in path.parents for d in record.made_dirs):
        raise RecordDamaged("it names folders that do not hold the file")
    for change in record.changes:
        if not change.at or not all(isinstance(k, str) for k in change.at):
            raise RecordDamaged("a change in it names no setting")


def write_record(home: Path, record: Record) -> None:
    data = json.dumps(_converter().unstructure(record), ensure_ascii=False).encode()
    fd = _folder(home, RECORDS_DIR)
    try:
        _write(fd, record_path(home, Path(record.path)).name, data)
    except OSError as exc:
        raise RecordUnwritable(
            f"{record_path(home, Path(record.path))} could not be written "
            f"({exc.strerror or exc}); fix that (its folder's owner and mode, free space) and "
            "run again."
        ) from None
    finally:
        os.close(fd)


def drop_record(home: Path, path: Path) -> None:
    where = record_path(home, path)
    if where.parent.is_dir():
        with suppress(FileNotFoundError):
            where.unlink()


def keep_backup(home: Path, path: Path, text: str) -> Path:
    """*text* (the config *path* as it was) as its newest backup; the oldest beyond
    :data:`BACKUPS_PER_FILE` go. Its path."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f".{time.time_ns() % 10**9:09d}Z"
    name = f"{_key(path)}.{stamp}"
    fd = _folder(home, BACKUPS_DIR)
    try:
        _write(fd, name, text.encode())
        for old in backups_of(home, path)[:-BACKUPS_PER_FILE]:
            with suppress(FileNotFoundError):
                os.unlink(old.name, dir_fd=fd)
    except OSError as exc:
        raise RecordUnwritable(
            f"the backup of {path} could not be written under {home / AGENTS_DIR} "
            f"({exc.strerror or exc}); fix that and run again."
        ) from None
    finally:
        os.close(fd)
    return home / AGENTS_DIR / BACKUPS_DIR / name


def backups_of(home: Path, path: Path) -> list[Path]:
    """The backups of the config *path*, oldest first."""
    folder = home / AGENTS_DIR / BACKUPS_DIR
    if not folder.is_dir():
        return []
    return sorted(folder.glob(_key(path) + ".*"))
