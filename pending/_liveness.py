"""Liveness by a held lock: an asker holds `.servers/SID.lock` with flock(2) for its life.

The kernel releases a flock when the last descriptor of its open file closes, which a killed
process cannot prevent; a PID can be reused by an unrelated process, which a kill(pid, 0)
check cannot tell apart. So "is the server alive" is "is its lock held".

A legacy request (one an earlier build wrote, with no `format`) may name no lock that anyone
holds: its liveness falls back to its recorded pid (:func:`request_alive`). A reused pid can
make a dead asker look alive, never the reverse; and a request that names no pid at all is
taken as alive, so that nothing is ever swept on a guess.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import weakref
from enum import StrEnum
from types import TracebackType

from pending._errors import RESOURCE_ERRNOS, ChannelUnwritable
from pending._fsio import Op, _io
from pending._ids import is_valid_id, lock_name, new_id
from pending._records import Request, Server

# Server death makes no file event: whoever waits on a server (a watcher for its waiting
# requests, an answering face for an asker's outcome) re-checks its lock this often, and
# expiry with it. A second is quick for a person and costs one flock probe per live server;
# a clean stop (its lock file removed) is seen at once, by its event.
LIVENESS_RECHECK_S = 1.0

_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_PROBE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

# Every lock held in this process. A forked child (a multiprocessing worker) inherits the
# descriptor, and a flock lives as long as *any* descriptor of its open file: the child would
# keep a killed asker alive. So children close theirs at once (closing, not unlocking: the
# lock belongs to the parent's open file and must stay held for the parent). Exec'd children
# never get it: it is opened O_CLOEXEC.
_HELD: weakref.WeakSet[ServerLock] = weakref.WeakSet()


def _forget_in_child() -> None:
    for lock in list(_HELD):
        lock._drop_in_child()
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


class ServerLock:
    """The asker's lock: held from :meth:`acquire` until :meth:`release` or process death."""

    def __init__(
        self, servers_fd: int, server_id: str | None = None, *, shown: str = ".servers"
    ) -> None:
        """*shown* is the servers directory's path, for messages."""
        self._servers_fd = servers_fd
        self.id = server_id or new_id()
        self._name = lock_name(self.id)
        self._shown = shown
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> ServerLock:
        """Take the lock; raises :class:`ChannelUnwritable` if its file cannot be made."""
        while True:
            try:
                fd = _io(
                    Op.LOCK,
                    self._name,
                    lambda: os.open(self._name, _LOCK_FLAGS, 0o600, dir_fd=self._servers_fd),
                )
            except OSError as exc:
                path = os.path.join(self._shown, self._name)
                raise ChannelUnwritable(path, "create the lock", exc) from None
            fcntl.flock(fd, fcntl.LOCK_EX)
            # A sweeper may have unlinked a free lock file between our open and our flock;
            # holding a lock on an unlinked inode would look dead to everyone. Check the name
            # still refers to the inode we hold, and start over if not.
            try:
                on_disk = os.stat(self._name, dir_fd=self._servers_fd, follow_symlinks=False)
            except FileNotFoundError:
                os.close(fd)
                continue
            held = os.fstat(fd)
            if (on_disk.st_dev, on_disk.st_ino) != (held.st_dev, held.st_ino):
                os.close(fd)
                continue
            # The pid is for people (and earlier builds); liveness is the lock, so a disk too
            # full to take the pid's few bytes does not stop an asker.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            _HELD.add(self)
            return self

    def _drop_in_child(self) -> None:
        """In a forked child: close the inherited descriptor, leaving the file and the
        parent's lock alone. The child's copy of this lock is no longer held."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def release(self) -> None:
        """A clean stop: remove the lock file (watchers see it at once), then let go."""
        if self._fd is None:
            return
        # Not taken as alive without a probe from here on: a watcher hearing of the removal
        # below must find the lock file gone, not this process's word for it.
        _HELD.discard(self)
        # A lock file that cannot be removed (a read-only disk) is harmless: closing below
        # frees the lock, and a sweep removes the file once it can.
        with contextlib.suppress(OSError):
            _io(Op.UNLINK, self._name, lambda: os.unlink(self._name, dir_fd=self._servers_fd))
        os.close(self._fd)
        self._fd = None

    def record(
        self,
        *,
        client: str | None = None,
        thread: str | None = None,
        entry_point: str | None = None,
    ) -> Server:
        """The `server` field of a request this process files."""
        return Server(
            id=self.id, pid=os.getpid(), client=client, thread=thread, entry_point=entry_point
        )

    def __enter__(self) -> ServerLock:
        return self if self.held else self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def server_alive(servers_fd: int, server_id: str) -> bool:
    """Whether the server's lock is held by a living process."""
    if _held_here(servers_fd, server_id):
        return True
    return bool(lock_held(servers_fd, server_id))


def _held_here(servers_fd: int, server_id: str) -> bool:
    """Whether this process holds that lock itself, through that very servers directory: then
    it lives without asking the kernel. An asker derives its own request's state on every
    round trip, and each probe of its own lock cost an open, a flock and a close.

    The set is copied whole before it is looked through: `any()` over the WeakSet itself
    stops at the first match and leaves its iterator suspended inside the set's iteration
    guard, which is then closed as the iterator is freed, where an exception cannot be
    raised. A Ctrl-C that came in that instant was printed as "Exception ignored" and lost,
    and the asker went on waiting (tests/test_liveness.py)."""
    return any(
        lock.held and lock.id == server_id and lock._servers_fd == servers_fd
        for lock in list(_HELD)
    )


def lock_held(servers_fd: int, server_id: str) -> bool | None:
    """Whether the server's lock is held; None if there is no lock file to hold (a clean
    stop, a sweep, or an asker that never made one), or none we would trust."""
    try:
        fd = os.open(lock_name(server_id), _PROBE_FLAGS, dir_fd=servers_fd)
    except OSError as exc:
        if exc.errno in RESOURCE_ERRNOS:
            raise  # out of descriptors says nothing of the server: never judge it gone
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # not a file flock can judge (a FIFO on some systems): no lock to hold
        return None
    finally:
        os.close(fd)  # also releases the shared lock we may have taken
    return False


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists here. A pid reused by an unrelated process
    reads as alive: that errs towards waiting, never towards giving a request up."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError as exc:  # EPERM: it exists, and is someone else's
        return exc.errno == errno.EPERM
    return True


class Liveness(StrEnum):
    """Whether the process that filed a request lives, as far as can be told."""

    ALIVE = "alive"
    GONE = "gone"
    # A legacy request that names neither a lock nor a pid: nothing to judge by. Nothing is
    # ever given up on this (it is never swept stale but once it expires), and an answer to
    # it that nobody applies is, after a wait, applied by the process at hand.
    UNKNOWN = "unknown"


def request_liveness(servers_fd: int, request: Request) -> Liveness:
    """Whether the process that filed *request* lives.

    A current request: its server's lock is held (no lock file: it stopped). A legacy request
    (no `format`): its lock decides where it has a lock file; otherwise its recorded pid does
    (a reused pid errs towards alive); one that names neither is :attr:`Liveness.UNKNOWN`.
    """
    server = request.server
    if not request.legacy:
        return Liveness.ALIVE if server_alive(servers_fd, server.id) else Liveness.GONE
    if is_valid_id(server.id):
        held = lock_held(servers_fd, server.id)
        if held is not None:
            return Liveness.ALIVE if held else Liveness.GONE
    if server.pid > 0:
        return Liveness.ALIVE if pid_alive(server.pid) else Liveness.GONE
    return Liveness.UNKNOWN


def remove_if_free(servers_fd: int, name: str) -> bool:
    """Remove a lock file nobody holds (its server died); True if removed."""
    try:
        fd = os.open(name, _PROBE_FLAGS, dir_fd=servers_fd)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        _io(Op.UNLINK, name, lambda: os.unlink(name, dir_fd=servers_fd))
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)
    return True
