"""A loopback-only network namespace for the e2e tier: the harnesses run in it and reach
nothing but 127.0.0.1, where the fake model server listens (its socket is made inside the
namespace, by this process, with setns(2) on one thread for a moment).

Needs root (or CAP_SYS_ADMIN), `unshare`, `nsenter` and `ip`: :func:`refusal` says what is
missing, for a skip's reason.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000


def refusal() -> str | None:
    """Why a loopback-only namespace cannot be made here, or None."""
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed"
    if os.geteuid() != 0:
        return "making a network namespace needs root"
    return None


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


class LoopbackNamespace:
    """A network namespace with only `lo`, up, held open by a sleeping process."""

    def __init__(self) -> None:
        script = "ip link set lo up && echo up && exec sleep 86400"
        self._holder = subprocess.Popen(
            ["unshare", "--net", "--", "sh", "-c", script],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._holder.stdout is not None
        line = self._holder.stdout.readline().strip()
        if line != "up":
            self.close()
            raise OSError("could not bring up lo in a new network namespace")
        self.path = f"/proc/{self._holder.pid}/ns/net"

    def argv(self, argv: list[str]) -> list[str]:
        """*argv* run inside the namespace."""
        return ["nsenter", f"--net={self.path}", "--", *argv]

    @contextmanager
    def entered(self) -> Iterator[None]:
        """This thread inside the namespace for the block (sockets made there stay there)."""
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(self.path, os.O_RDONLY)
        try:
            _setns(target)
            try:
                yield
            finally:
                _setns(own)
        finally:
            os.close(own)
            os.close(target)

    def close(self) -> None:
        self._holder.kill()
        self._holder.wait()
        if self._holder.stdout is not None:
            self._holder.stdout.close()

    def __enter__(self) -> LoopbackNamespace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
