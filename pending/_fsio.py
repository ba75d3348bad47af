"""The filesystem edge: publishing, and reading defensively (trusted directories are opened
by :mod:`pending._dirs`).

Every path below the channel is opened relative to a directory descriptor with ``O_NOFOLLOW``,
so a symlink swapped in after a check cannot redirect a read or a write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from functools import partial

from pending._classes import NamedTuple, StrEnum
from pending._dirs import DIR_FLAGS
from pending._dirs import DIR_MODE as DIR_MODE
from pending._dirs import open_private_dir as open_private_dir
from pending._errors import RESOURCE_ERRNOS, ChannelUnwritable

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

MAX_RECORD_BYTES = 64 * 1024  # a request's text is for a person to read; 64 KiB is far beyond it
FILE_MODE = 0o600

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# A nameless file in the staging directory, linkable (no O_EXCL) once written. Linux only.
_TMPFILE_FLAGS = os.O_WRONLY | getattr(os, "O_TMPFILE", 0) | os.O_CLOEXEC
# What says the nameless way is not for this filesystem or system (no O_TMPFILE: NFS, an old
# kernel): publication falls back to a named staged file.
# (A kernel without O_TMPFILE reads its bits as O_DIRECTORY: EISDIR.)
_NAMELESS_UNSUPPORTED = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})


class Unreadable(Exception):
    """A file the channel will not read, with the reason (for the doctor's report)."""


class Op(StrEnum):
    """The channel's own filesystem operations, each a step of the fault-injection seam."""

    CREATE = "create"  # create a staged temp file in .tmp/ (nameless, O_TMPFILE; else O_EXCL)
    WRITE = "write"  # write (part of) its bytes
    FSYNC = "fsync"  # fsync it
    LINK = "link"  # link(2) it to its final name: the publication, first-wins
    UNLINK = "unlink"  # unlink a name: the staged temp, a swept file, a lock file
    FSYNC_DIR = "fsync-dir"  # fsync the directory once published
    LOCK = "lock"  # create or open a server's lock file


class Phase(StrEnum):
    BEFORE = "before"
    AFTER = "after"


class IoStep(NamedTuple):
    """One boundary of one operation: *op* on behalf of *name* (the final name it serves:
    `ID.answer.json` while its temp is staged, written, synced, linked and removed), and
    whether the operation touches the *staged* temp rather than the name itself.

    A named tuple, not an attrs record: this module is read by every store, and attrs costs
    a hook that decides from the grant store alone ~35 ms of CPU to import (bench/README.md)."""

    op: Op
    name: str
    phase: Phase
    staged: bool = False


IoHook = Callable[[IoStep], None]

# The seam: every filesystem operation the channel performs to change the directory goes
# through _io(), which tells the hook before and after it. Nothing is installed in normal
# use; pending.testing installs one to raise an errno, or to end the process, at any step.
_hook: IoHook | None = None


def set_io_hook(hook: IoHook | None) -> IoHook | None:
    """Install *hook* (None: none) at the seam; returns the one it replaces."""
    global _hook
    previous, _hook = _hook, hook
    return previous


def _io(op: Op, name: str, call: Callable[[], T], *, staged: bool = False) -> T:
    hook = _hook
    if hook is not None:
        hook(IoStep(op=op, name=name, phase=Phase.BEFORE, staged=staged))
    result = call()
    if hook is not None:
        hook(IoStep(op=op, name=name, phase=Phase.AFTER, staged=staged))
    return result


# Told (status, final) of a file being published, for a cache of what this process wrote:
# the staged file's status just before it is linked (final False: the link and the staged
# name's removal are still to change its ctime), so that a reader woken by the link already
# finds it; the published file's as it is once done (final True); or None (final True) when
# the link did not take, or the name no longer holds that file: forget what was staged.
Published = Callable[[os.stat_result | None, bool], None]


def publish(
    dir_fd: int,
    tmp_fd: int,
    name: str,
    data: bytes,
    *,
    shown: str,
    on_published: Published | None = None,
) -> bool:
    """Publish *data* as *name*, first-wins. True if this call created it, False if another
    publisher had; raises :class:`ChannelUnwritable` (naming ``shown/name``) if it cannot be
    written, having left nothing under *name*. *on_published*, if given, is told the
    published file's status (its identity, for a cache of what this process wrote): the
    staged file's before the link, and the published file's once this call created it (see
    :data:`Published`).

    Written to a temp file in the staging directory (nameless where it can be: see
    :func:`_create_staged`), fsynced, then ``link(2)``-ed to its name:
    link fails if the name exists, so of racing publishers exactly one wins, and no reader can
    see a partial file. (Never rename: rename overwrites.) A link reported as failed (EEXIST
    from a retransmitted request, EIO) that in fact took effect is recognised by the inode:
    the name then holds this call's file, and it won. Once the name is linked, failing to
    remove the staged copy or to sync the directory does not undo a publication others may
    already have read: the temp is left for the sweep.
    """
    path = os.path.join(shown, name)
    fd, tmp_name = _create_staged(tmp_fd, name, path)
    staged: os.stat_result | None = None
    try:
        try:
            staged = _write_staged(fd, name, data, on_published)
            linked, published = _link_staged(
                dir_fd, tmp_fd, fd, tmp_name, name, staged, on_published
            )
            if not linked:
                return False
        finally:
            os.close(fd)  # a nameless file not linked goes with it
    except OSError as exc:
        raise ChannelUnwritable(path, "write", exc) from None
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):  # gone already, or left for the sweep
                _io(Op.UNLINK, name, lambda: os.unlink(tmp_name, dir_fd=tmp_fd), staged=True)
    with contextlib.suppress(OSError):
        _io(Op.FSYNC_DIR, name, lambda: os.fsync(dir_fd))
    if staged is not None and on_published is not None:
        _tell_published(dir_fd, name, staged, published, on_published)
    return True


def _write_staged(
    fd: int, name: str, data: bytes, on_published: Published | None
) -> os.stat_result | None:
    """Write *data* to the staged file *fd* (its mode exact, whatever the umask) and sync it;
    its status once written, if a cache is to be told of it (and then told, staged)."""
    os.fchmod(fd, FILE_MODE)
    view = memoryview(data)
    while view:
        view = view[_io(Op.WRITE, name, partial(os.write, fd, view), staged=True) :]
    _io(Op.FSYNC, name, lambda: os.fsync(fd), staged=True)
    staged: os.stat_result | None = None
    if on_published is not None:
        # Before the link: the process's own watcher, woken by it on another thread, may
        # read the name before link() has even returned here.
        with contextlib.suppress(OSError):
            staged = os.fstat(fd)
            on_published(staged, False)
    return staged


def _link_staged(
    dir_fd: int,
    tmp_fd: int,
    fd: int,
    tmp_name: str | None,
    name: str,
    staged: os.stat_result | None,
    on_published: Published | None,
) -> tuple[bool, os.stat_result | None]:
    """Link the staged file (*tmp_name*, or nameless: *fd*) as *name*: whether the name holds
    it now (False: another publisher's file does), and the published file's status as read
    right after a nameless link (nothing changes it after that: no staged name to remove, so
    it is what a cache is told, one stat less). Raises :class:`OSError` if it cannot be
    linked."""

    def link() -> None:
        if tmp_name is None:  # nameless: linked from its descriptor
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
        else:
            os.link(tmp_name, name, src_dir_fd=tmp_fd, dst_dir_fd=dir_fd, follow_symlinks=False)

    try:
        _io(Op.LINK, name, link)
        if tmp_name is not None:
            return True, None
        return True, _check_linked(dir_fd, name, staged if staged is not None else os.fstat(fd))
    except _NotOurs:
        if staged is not None and on_published is not None:
            on_published(None, True)  # forget what was staged: it is not there
        raise
    except OSError as exc:
        # Kept open until here: a failed link asks which file it staged (known already when
        # a cache is told of it).
        if _holding(dir_fd, name, staged if staged is not None else os.fstat(fd)) is not None:
            return True, None
        if staged is not None and on_published is not None:
            on_published(None, True)
        if exc.errno == errno.EEXIST:
            return False, None
        raise


def _tell_published(
    dir_fd: int,
    name: str,
    staged: os.stat_result,
    published: os.stat_result | None,
    on_published: Published,
) -> None:
    """Tell *on_published* the published file as it is now (its link, and a staged name's
    removal, changed its ctime), if it is still ours: a nameless one's as read just after its
    link (*published*)."""
    st = published
    if st is None:
        with contextlib.suppress(OSError):
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    ours = st is not None and (st.st_dev, st.st_ino) == (staged.st_dev, staged.st_ino)
    on_published(st if ours else None, True)


# Whether publication first tries a nameless staged file: Linux, with /proc mounted (asked
# once, at import). Each publication tries it afresh: where the filesystem refuses it, that
# is one failed open(2) before the named file, and nothing remembered.
_NAMELESS = bool(getattr(os, "O_TMPFILE", 0)) and os.path.isdir("/proc/self/fd")


def _create_staged(tmp_fd: int, name: str, path: str) -> tuple[int, str | None]:
    """The staged file, open for writing, and its name in the staging directory: None for a
    nameless one (``O_TMPFILE``), linked to its name from ``/proc/self/fd``. A nameless
    file leaves nothing to remove after the link (one system call less), makes no second
    event for every watcher of every publication (a staged name's removal changes the
    published file's link count: IN_ATTRIB), and goes with its writer if the writer dies
    before the link. Where the filesystem cannot (NFS: EOPNOTSUPP), a uniquely named one."""
    if _NAMELESS:
        try:
            opened = _io(
                Op.CREATE,
                name,
                lambda: os.open(".", _TMPFILE_FLAGS, FILE_MODE, dir_fd=tmp_fd),
                staged=True,
            )
        except OSError as exc:
            if exc.errno not in _NAMELESS_UNSUPPORTED:
                raise ChannelUnwritable(path, "write", exc) from None
        else:
            return opened, None
    tmp_name = f"{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    try:
        opened = _io(
            Op.CREATE,
            name,
            lambda: os.open(tmp_name, _CREATE_FLAGS, FILE_MODE, dir_fd=tmp_fd),
            staged=True,
        )
    except OSError as exc:
        raise ChannelUnwritable(path, "write", exc) from None
    return opened, tmp_name


class _NotOurs(OSError):
    """A nameless file's link put another file under its name."""


def _check_linked(dir_fd: int, name: str, staged: os.stat_result) -> os.stat_result:
    """After a nameless file's link: *name*'s status if it holds the very file written, else
    raise (the name removed). Its link goes through /proc/self/fd, a path: where /proc is not
    the kernel's (a directory the same user can write, in a sandbox without procfs), it could
    lead to another file, which would then be published as this one."""
    st = _holding(dir_fd, name, staged)
    if st is not None:
        return st
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)
    raise _NotOurs(
        errno.EIO,
        "/proc/self/fd led to another file than the one written (is /proc the kernel's?)",
    )


def _holding(dir_fd: int, name: str, staged: os.stat_result) -> os.stat_result | None:
    """*name*'s status if it is the very file staged (its link took effect, whatever was
    said), else None."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st if (st.st_dev, st.st_ino) == (staged.st_dev, staged.st_ino) else None


# The caller's uid, asked once: every file read is checked against it (a listing of 10,000
# requests asked the kernel 10,000 times). wisp never changes its uid while running.
_UID = os.getuid()


def open_checked(
    dir_fd: int, name: str, *, cap: int = MAX_RECORD_BYTES
) -> tuple[int, os.stat_result] | None:
    """Open a channel file for reading, checked; None if it does not exist, else the open
    descriptor (the caller closes it) and its fstat. Raises :class:`Unreadable`.

    Refused: a symlink, anything but a regular file, another owner, more than two links (a
    file staged by name has two for the instant between its ``link`` and the staged copy's
    unlink), and anything over *cap* bytes.
    """
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("it is a symbolic link") from None
        if exc.errno in RESOURCE_ERRNOS:
            raise  # not the file's fault: a face says what ran out
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        problem = _file_problem(st, cap)
        if problem is not None:
            raise Unreadable(problem)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _file_problem(st: os.stat_result, cap: int) -> str | None:
    """Why a channel file with status *st* is refused (see :func:`open_checked`), if it is."""
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid != _UID:
        return f"it is owned by uid {st.st_uid}, not by you"
    if st.st_nlink > 2:
        return f"it has {st.st_nlink} hard links"
    if st.st_size > cap:
        return f"it is {st.st_size} bytes, over the {cap}-byte cap"
    return None


def stat_checked(dir_fd: int, name: str) -> os.stat_result | None:
    """The status of the file at *name* (not followed) if :func:`open_checked` would take it;
    None if it is absent, cannot be asked, or would be refused (open_checked says why). One
    system call: for telling whether a file read before is still there, unchanged.

    Its owner must be able to read it too, which open would find out: a file made unreadable
    since it was read (a change of mode, which a key taken while the file had two names, its
    change time still to come, would not show) is left to open_checked to open, and refuse."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    if not st.st_mode & stat.S_IRUSR or _file_problem(st, MAX_RECORD_BYTES) is not None:
        return None
    return st


def read_fd(fd: int, *, cap: int = MAX_RECORD_BYTES) -> bytes:
    """All of an open regular file (:func:`open_checked` makes sure), refusing one that has
    grown past *cap* by the time it is read."""
    chunks: list[bytes] = []
    total = 0
    while total <= cap:
        want = cap + 1 - total
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want:
            # A regular file reads short only at its end: no second call to be told so
            # (every record a watcher or an answer reads took two before).
            break
    if total > cap:
        raise Unreadable(f"it grew over the {cap}-byte cap while being read")
    return b"".join(chunks)


def read_bytes(dir_fd: int, name: str, *, cap: int = MAX_RECORD_BYTES) -> bytes | None:
    """The bytes of a channel file (checked as :func:`open_checked`), None if absent."""
    opened = open_checked(dir_fd, name, cap=cap)
    if opened is None:
        return None
    fd, _ = opened
    try:
        return read_fd(fd, cap=cap)
    finally:
        os.close(fd)


def entry_problem(dir_fd: int, name: str) -> str | None:
    """Why a directory entry is not the caller's plain file (a cheap lstat); None if it is."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by you"
    return None


def list_dir(dir_fd: int) -> list[str]:
    """The names in a directory, through a descriptor of this call's own.

    ``os.listdir(fd)`` reads through a duplicate that shares *fd*'s offset, so two threads
    listing through one descriptor at once can each miss entries; a fresh open of "." does not
    share it.
    """
    fd = os.open(".", DIR_FLAGS, dir_fd=dir_fd)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def remove(dir_fd: int, name: str, *, shown: str) -> bool:
    """Unlink *name*; False if it was already gone. Raises :class:`ChannelUnwritable`
    (naming ``shown/name``) if it cannot be removed."""
    try:
        _io(Op.UNLINK, name, lambda: os.unlink(name, dir_fd=dir_fd))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ChannelUnwritable(os.path.join(shown, name), "remove", exc) from None
    return True
