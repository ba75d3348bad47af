"""A helper a notification route runs: an argv list (never a shell), bounded in time, with
what went wrong said in a few words."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_bounded(
    argv: Sequence[str], *, timeout_s: float, env: Mapping[str, str], what: str | None = None
) -> tuple[bytes, str | None]:
    """*argv*'s stdout and None; or nothing and why it failed: it could not run, did not
    finish within *timeout_s*, or exited non-zero (with its last line on stderr). *what*
    names it in those words (its program's name by default)."""
    name = what or Path(argv[0]).name
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=timeout_s,
            env=dict(env),
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return b"", f"{name} did not finish within {timeout_s:g}s"
    except OSError as exc:
        return b"", f"{name} could not run ({exc.strerror})"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        tail = f": {detail[-1][:120]}" if detail else ""
        return b"", f"{name} exited {done.returncode}{tail}"
    return done.stdout, None
