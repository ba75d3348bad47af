"""The channel's directories: their names, opening one the caller alone may write
(:func:`open_private_dir`), and whether a channel holds nothing at all.

`HOME/pending` holds the published records; `.tmp` stages each before it is linked into place;
`.servers` holds the asking processes' lock files. Every directory is opened with
``O_NOFOLLOW`` and checked as opened. :func:`channel_empty` reads the three and loads nothing
of the records: the listing of an empty channel, which is what a person most often sees, pays
for no more than that (bench/README.md, issue 23).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from pending._errors import RESOURCE_ERRNOS, ChannelUnavailable, ChannelUnsafe, PendingError

PENDING_DIR = "pending"
TMP_DIR = ".tmp"  # staging for publication: outside what watchers see, never read as a request
SERVERS_DIR = ".servers"

DIR_MODE = 0o700
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


# wisp's own home when WISP_HOME names none: the one directory above the channel's own that
# wisp made, and so the one it may tell a person to move aside.
DEFAULT_HOME = "~/.wisp"


def _unavailable(path: str, exc: OSError) -> ChannelUnavailable:
    """*exc* on opening *path* as :class:`ChannelUnavailable`; a resource limit reached is
    passed on as it is (no fault of the path: :data:`RESOURCE_ERRNOS`)."""
    if exc.errno in RESOURCE_ERRNOS:
        raise exc
    return ChannelUnavailable(path, exc.strerror or str(exc))


def _no_parent(path: str) -> ChannelUnavailable:
    """*path* could not be made: a directory above it is missing. wisp makes the last part
    itself, not the ones it goes in: say which is missing, and the `mkdir -p` that makes
    them (errno's own words say neither)."""
    import shlex

    parent = os.path.dirname(os.path.abspath(path))
    missing = parent
    while True:  # up to the highest one missing: the one a person did not make
        above = os.path.dirname(missing)
        if above == missing or os.path.lexists(above):
            break
        missing = above
    what = (
        f"{missing} does not exist"
        if missing == parent
        else f"{missing} does not exist, nor the directories under it down to {parent}"
    )
    return ChannelUnavailable(
        path,
        f"{what} (wisp makes {os.path.basename(path)} itself, but not the directories it goes in)",
        f"Make {'it' if missing == parent else 'them'} (`mkdir -p {shlex.quote(parent)}`) and "
        "run it again, or set WISP_HOME to a directory of yours.",
    )


def open_private_dir(
    path: str, *, parent_fd: int | None = None, name: str | None = None, make: bool = True
) -> int:
    """Open (creating it 0700 if missing, unless *make* is false: then FileNotFoundError) a
    directory the caller alone may write, or refuse.

    With *parent_fd*, *name* is opened relative to it; *path* is then only for messages.
    Refused, as OpenSSH's StrictModes refuses: a symlink, a non-directory, another owner, or
    group/world write permission. Each refusal names the fix.
    """
    target = name if parent_fd is not None and name is not None else path
    # The usual case first: it is there, and ours. Opened as it is (never through a symlink,
    # only a directory), then checked as opened: two calls rather than four, for something
    # every audit record and every grant lookup opens. Anything else takes the long way,
    # which makes it or says exactly what is wrong with it.
    try:
        fd = os.open(target, DIR_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        if not make:
            raise
        return _make_or_refuse_dir(path, target, parent_fd, make=True)
    except OSError:
        return _make_or_refuse_dir(path, target, parent_fd, make=make)
    try:
        _check_dir_stat(path, os.fstat(fd))
    except ChannelUnsafe:
        os.close(fd)
        raise
    return fd


def _make_or_refuse_dir(path: str, target: str, parent_fd: int | None, *, make: bool) -> int:
    """:func:`open_private_dir` for a directory that did not simply open: made if missing
    (unless *make* is false: then FileNotFoundError, and nothing is made whatever the first
    open failed with, a descriptor limit included), else refused with the reason (a symlink,
    not a directory, ...)."""
    if make:
        try:
            os.mkdir(target, DIR_MODE, dir_fd=parent_fd)
        except FileExistsError:
            pass
        except FileNotFoundError:
            raise _no_parent(path) from None
        except OSError as exc:
            raise _unavailable(path, exc) from None
    try:
        st = os.stat(target, dir_fd=parent_fd, follow_symlinks=False)
    except OSError as exc:
        if not make and isinstance(exc, FileNotFoundError):
            raise
        raise _unavailable(path, exc) from None
    # A directory the channel keeps in its home (made by wisp), or wisp's default home: wisp's
    # own, which a person may be told to move aside; any other path was theirs to name.
    own = parent_fd is not None or os.path.abspath(path) == os.path.expanduser(DEFAULT_HOME)
    _check_dir_stat(path, st, own=own)
    try:
        fd = os.open(target, DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ChannelUnsafe(
                path, "it was replaced while being opened", f"check what is at {path}"
            ) from None
        raise _unavailable(path, exc) from None
    try:
        _check_dir_stat(path, os.fstat(fd))  # the directory actually opened, not the name
    except ChannelUnsafe:
        os.close(fd)
        raise
    return fd


def _not_yours_fix(path: str, uid: int, owner: int) -> str:
    """What to do about a directory of another user's. Only root can give it to you, and root
    taking a user's directory for itself (`chown 0 …`) is never the fix: so a user is told
    to use a directory of their own; root, to run as the directory's owner."""
    if uid == 0:
        return (
            f"run wisp as the user who owns it (`sudo -u '#{owner}' wisp …`), or set WISP_HOME "
            "to a directory of root's own (`export WISP_HOME=/root/.wisp`)"
        )
    return (
        "set WISP_HOME to a directory of your own (`export WISP_HOME=~/.wisp`); if this one "
        f"should be yours, ask an administrator to give it back: `sudo chown {uid} {path}`"
    )


def _check_dir_stat(path: str, st: os.stat_result, *, own: bool = True) -> None:
    """Refuse *path* (as *st* describes it) unless it is a directory of the caller's that
    nobody else may write. *own*: whether it is wisp's own path (a directory in the home,
    or the default home), which alone a person is told to move aside when it is no
    directory: a path they named (`WISP_HOME=/etc/passwd`) is theirs, not wisp's to move."""
    uid = os.getuid()
    if stat.S_ISLNK(st.st_mode):
        raise ChannelUnsafe(
            path,
            "it is a symbolic link, which could point the channel anywhere",
            f"replace it with a real directory: rm {path} && mkdir -m 700 {path}",
        )
    if not stat.S_ISDIR(st.st_mode):
        fix = "set WISP_HOME to a directory of yours (this path names something else)"
        if own:
            fix = (
                f"{path} is wisp's own and should be a directory: move what is there aside "
                f"and run again (mv {path} {path}.bak), or set WISP_HOME to a directory of yours"
            )
        raise ChannelUnsafe(path, "it is not a directory", fix)
    if st.st_uid != uid:
        raise ChannelUnsafe(
            path,
            f"it is owned by uid {st.st_uid}, not by you (uid {uid})",
            _not_yours_fix(path, uid, st.st_uid),
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ChannelUnsafe(
            path,
            f"it is group- or world-writable (mode {stat.S_IMODE(st.st_mode):04o}), "
            "so another user could plant or remove requests",
            f"chmod 700 {path}",
        )


def channel_empty(home: Path | str) -> bool:
    """Whether the channel under *home* is there, safe, and holds nothing: `HOME/pending`
    holds only `.tmp` and `.servers`, and both are empty. A listing of it finds nothing and
    its sweep has nothing to do.

    Each directory is opened and checked as :meth:`pending.Channel.open` checks it (never
    through a symlink; ours, not writable by others), but nothing is made. False for anything
    else (missing, unsafe, unreadable, anything in it): opening the channel then makes it,
    refuses it, or reads what is there, and says so."""
    try:
        with contextlib.ExitStack() as closing:
            home_fd = open_private_dir(str(home), make=False)
            closing.callback(os.close, home_fd)
            path = Path(home) / PENDING_DIR
            dir_fd = open_private_dir(str(path), parent_fd=home_fd, name=PENDING_DIR, make=False)
            closing.callback(os.close, dir_fd)
            if not _holds_only(dir_fd, {SERVERS_DIR, TMP_DIR}):
                return False
            for name in (TMP_DIR, SERVERS_DIR):
                fd = open_private_dir(str(path / name), parent_fd=dir_fd, name=name, make=False)
                closing.callback(os.close, fd)
                if not _holds_only(fd, set()):
                    return False
    except (OSError, PendingError):
        return False
    return True


def _holds_only(dir_fd: int, names: set[str]) -> bool:
    """Whether the directory open as *dir_fd* holds exactly *names*: read up to the first
    other name, not the whole of a directory of 10,000 requests."""
    seen: set[str] = set()
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            if entry.name not in names:
                return False
            seen.add(entry.name)
    return seen == names
