"""Liveness by a held lock: an asker holds `.servers/SID.lock` with flock(2) for its life.

The kernel releases a flock when the last descriptor of its open file closes, which a killed
process cannot prevent; a PID can be reused by an unrelated process, which a kill(pid, 0)
check cannot tell apart. So "is the server alive" is "is its lock held".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import weakref
from types import TracebackType

from pending._ids import lock_name, new_id
from pending._records import Server

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

    def __init__(self, servers_fd: int, server_id: str | None = None) -> None:
        self._servers_fd = servers_fd
        self.id = server_id or new_id()
        self._name = lock_name(self.id)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> ServerLock:
        while True:
            fd = os.open(self._name, _LOCK_FLAGS, 0o600, dir_fd=self._servers_fd)
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
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())  # for people; liveness is the lock
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
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._name, dir_fd=self._servers_fd)
        os.close(self._fd)
        self._fd = None
        _HELD.discard(self)

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
    try:
        fd = os.open(lock_name(server_id), _PROBE_FLAGS, dir_fd=servers_fd)
    except OSError:
        return False  # no lock file (a clean stop, or swept), or not one we would trust
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the shared lock we may have taken
    return False


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
        os.unlink(name, dir_fd=servers_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)
    return True
