"""Kernel limits for tests: a child with inotify limits of its own, and native watching asked
for explicitly.

Every process of a user shares that user's inotify instances (`fs.inotify.max_user_instances`,
128 by default). A test that used them up would starve every other process of the user
running the suite, its own parallel workers and the person's editor included. So a test that
exhausts them does it in a user namespace whose own ceiling is a handful of instances: the
hoard stops there, and the user keeps all but those few.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import sys

import pytest

# The namespace's ceiling on inotify instances: what the hoard takes from the user, at most.
OWN_INOTIFY_INSTANCES = 4

_SET_LIMIT = f'echo {OWN_INOTIFY_INSTANCES} > /proc/sys/user/max_inotify_instances && exec "$@"'


@functools.cache
def _namespace_refusal() -> str | None:
    """Why no user namespace with its own inotify ceiling can be made here (None: it can)."""
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed (util-linux)"
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c", _SET_LIMIT, "sh", "true"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        return f"cannot make a user namespace with its own inotify limit: {done.stderr.strip()}"
    return None


def own_inotify_limit(*argv: str) -> list[str]:
    """*argv* run in a user namespace that may hold only OWN_INOTIFY_INSTANCES inotify
    instances (the same user, mapped to root inside); skips the test, saying why, where no
    such namespace can be made."""
    refusal = _namespace_refusal()
    if refusal is not None:
        pytest.skip(f"missing capability: {refusal}")
    return ["unshare", "--user", "--map-root-user", "sh", "-c", _SET_LIMIT, "sh", *argv]


def native_watching_refusal() -> str | None:
    """Why this process cannot watch natively now (None: an inotify instance is free)."""
    if sys.platform != "linux":
        return f"inotify is Linux's; this is {sys.platform}"
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        return (
            f"no inotify instance is free for uid {os.geteuid()}: "
            f"{os.strerror(ctypes.get_errno())} (other processes hold them all)"
        )
    os.close(fd)
    return None
