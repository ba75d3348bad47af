"""One JSON document in `$WISP_HOME`, written whole and atomically under an exclusive lock.

Writes go to a temp file, are fsynced, renamed over the document, and the directory fsynced;
all under `flock` on a sibling lock file, so concurrent writers never lose each other's work.
A document that cannot be read is never overwritten: every use of it fails with its path and
what to do, until the person fixes it or moves it aside.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path

from pending import (
    ChannelUnwritable,
    DecodeError,
    PendingError,
    Unreadable,
    loads_strict,
    open_private_dir,
    read_private_file,
)
from wisp._errors import WispError
from wisp._home import refuse_anothers_home

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar

    T = TypeVar("T")
else:
    T = object

    class Generic:
        """typing.Generic's subscription, for JsonStore's class statement alone: a generic
        class is for mypy, and importing typing costs a hook ~12 M instructions
        (pending._classes)."""

        def __class_getitem__(cls, _: object) -> type:
            return object


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Room a write is checked to have beyond the document's current size: a few more records.
PROBE_SLACK_BYTES = 16 * 1024


class StoreError(WispError):
    """The store cannot be used now; the message names the file and what to do."""


def unwritable(path: Path, action: str, exc: OSError) -> StoreError:
    """A failed write as a StoreError: the path, the cause, and what to do about it (the
    channel's wording for the same faults)."""
    return StoreError(str(ChannelUnwritable(str(path), action, exc)))


@contextmanager
def locked_home(home: Path, name: str) -> Iterator[int]:
    """Hold the lock of document *name* in *home*; yields the home directory's descriptor."""
    try:
        refuse_anothers_home(home)
        home_fd = open_private_dir(str(home))
    except PendingError as exc:
        raise StoreError(str(exc)) from None
    try:
        try:
            lock_fd = os.open(
                f"{name}.lock",
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=home_fd,
            )
        except OSError as exc:
            raise unwritable(home / f"{name}.lock", "lock", exc) from None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            yield home_fd
        finally:
            os.close(lock_fd)
    finally:
        os.close(home_fd)


def _sweep_leftovers(home_fd: int, name: str) -> None:
    """Remove temp files of *name* that crashed writers left. Called under the document's
    lock, so no living writer of it is mid-write: every one of them is a leftover."""
    prefix = f"{name}."
    for entry in os.listdir(home_fd):
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            with suppress(OSError):
                os.unlink(entry, dir_fd=home_fd)


def write_atomically(home_fd: int, name: str, data: bytes, *, shown: Path) -> None:
    """Replace document *name*: temp file, fsync, rename over it, fsync the directory.
    The caller holds the document's lock (:func:`locked_home`)."""
    import secrets  # here, not at import: it loads hmac and OpenSSL, ~20 M instructions

    tmp = f"{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        _sweep_leftovers(home_fd, name)
        fd = os.open(tmp, _CREATE, 0o600, dir_fd=home_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=home_fd, dst_dir_fd=home_fd)
        os.fsync(home_fd)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(tmp, dir_fd=home_fd)
        raise unwritable(shown, "write", exc) from None


class JsonStore(Generic[T]):
    """A list of items under *key* in `$WISP_HOME/NAME`, decoded by *load*, encoded by *dump*."""

    def __init__(
        self,
        home: Path,
        name: str,
        key: str,
        *,
        load: Callable[[Any], T],
        dump: Callable[[T], dict[str, Any]],
        cap_bytes: int,
        when_full: str,
    ) -> None:
        self.home = home
        self.name = name
        self.path = home / name
        self._key = key
        self._load = load
        self._dump = dump
        # The most the document may hold, checked on every write as on every read: a store
        # written past what it can read back would lock its person out of it.
        self.cap_bytes = cap_bytes
        self._when_full = when_full  # what to do when a write would pass the cap

    def _full(self, size: int) -> StoreError:
        return StoreError(
            f"{self.path} would hold {size:,} bytes, over its cap of {self.cap_bytes:,}; "
            f"nothing was written. {self._when_full}"
        )

    def locked(self) -> AbstractContextManager[int]:
        """Hold the store's lock; yields the home directory's descriptor."""
        return locked_home(self.home, self.name)

    def read(self, home_fd: int) -> list[T]:
        try:
            data = read_private_file(home_fd, self.name, cap=self.cap_bytes)
        except Unreadable as exc:
            raise StoreError(f"cannot use {self.path}: {exc}. Fix it or move it aside.") from None
        if data is None:
            return []
        try:
            return [self._load(item) for item in loads_strict(data)[self._key]]
        except (DecodeError, KeyError, TypeError, ValueError) as exc:
            raise StoreError(
                f"{self.path} is damaged ({exc}); it was left as it is, and is not used until "
                "you fix it or move it aside."
            ) from None

    def write(self, home_fd: int, items: list[T]) -> None:
        body = (
            json.dumps(
                {"format": 1, self._key: [self._dump(i) for i in items]},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        ).encode()
        if len(body) > self.cap_bytes:
            raise self._full(len(body))
        write_atomically(home_fd, self.name, body, shown=self.path)

    def items(self) -> list[T]:
        """The items, read without the lock: the document is only ever replaced whole (renamed
        over), so a reader sees the old one or the new one, never half of either; and a
        read-only filesystem, where no lock file can be made, is still read. (Nothing is
        made: with no home, there is nothing stored.)"""
        try:
            home_fd = open_private_dir(str(self.home), make=False)
        except FileNotFoundError:
            return []
        except PendingError as exc:
            raise StoreError(str(exc)) from None
        try:
            return self.read(home_fd)
        finally:
            os.close(home_fd)

    def check_writable(self) -> None:
        """Raise :class:`StoreError` now if a write would fail (damaged, unwritable, no room
        on the disk for the document and a few more records, or none under its cap)."""
        with self.locked() as home_fd:
            self.read(home_fd)
            probe = f"{self.name}.{os.getpid()}.probe.tmp"
            try:
                try:
                    size = os.stat(self.name, dir_fd=home_fd, follow_symlinks=False).st_size
                except FileNotFoundError:
                    size = 0
                if size + PROBE_SLACK_BYTES > self.cap_bytes:
                    raise self._full(size + PROBE_SLACK_BYTES)
                _replaceable(home_fd, self.name, self.path)
                fd = os.open(probe, _CREATE, 0o600, dir_fd=home_fd)
                try:
                    _reserve(fd, size + PROBE_SLACK_BYTES)
                finally:
                    os.close(fd)
                    os.unlink(probe, dir_fd=home_fd)
            except OSError as exc:
                raise unwritable(self.path, "write", exc) from None


def _replaceable(home_fd: int, name: str, shown: Path) -> None:
    """Refuse (:class:`StoreError`) a document that cannot be replaced though its directory
    takes new files: the file itself immutable or append-only (`chattr +i`, `+a`), which
    opening it to write finds (EPERM), as renaming over it would. Opened, never written; a
    missing one is fine; anything else raises OSError."""
    try:
        fd = os.open(
            name, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=home_fd
        )
    except FileNotFoundError:
        return
    except PermissionError as exc:
        code = errno.errorcode.get(exc.errno or 0, "?")
        raise StoreError(
            f"{shown} cannot be replaced: {exc.strerror} [{code}] (an immutable or "
            f"append-only flag: `lsattr {shown}`; `chattr -i -a {shown}` clears them; or its "
            "permissions: `ls -l` it)."
        ) from None
    os.close(fd)


def _reserve(fd: int, size: int) -> None:
    """Make the filesystem set *size* bytes aside for *fd* (ENOSPC if it cannot): a full
    disk still takes an empty file, so creating one proves nothing. Where the filesystem
    cannot reserve space at all, nothing is proved, and nothing is refused."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
