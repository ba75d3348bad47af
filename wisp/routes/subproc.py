"""The child processes wisp starts. A helper a notification route runs: an argv list (never a
shell), bounded in time, with what went wrong said in a few words (:func:`run_bounded`). A
Python process of wisp's own (the TUI's local relay, a push): never with the working
directory, which the agent writes, on its import path, nor in it (:func:`python_module`).

`python -m MODULE` puts the current directory first on `sys.path`: a `wisp/` package the
agent plants in its project would be imported in the place of wisp's, and run as the person,
outside any sandbox (issue 55).
"""

from __future__ import annotations

import os
import subprocess
import sys
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


# Python's safe-path flag (3.11+, as wisp requires): `-m` adds nothing to `sys.path`. Not
# -I, which also drops every PYTHON* variable and the user's site-packages: a wisp installed
# with `pip install --user` lives there, and its child could not import wisp at all.
SAFE_PATH_FLAG = "-P"
# Where the child runs: a directory no agent writes, so that nothing the child or a library
# it loads reads relative to its working directory (a relative PYTHONPATH entry, a library's
# `./` config file) comes from the agent's project.
SAFE_CWD = "/"


def python_module(module: str, *args: str) -> list[str]:
    """The argv that runs *module* with this interpreter, its import path wisp's own
    (:data:`SAFE_PATH_FLAG`); start it in :data:`SAFE_CWD` with :func:`child_env`."""
    return [sys.executable, SAFE_PATH_FLAG, "-m", module, *args]


def child_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a child started in :data:`SAFE_CWD`: a relative
    `$WISP_HOME` made absolute from this process's working directory, so that the child
    opens the same home."""
    env = dict(os.environ if environ is None else environ)
    home = env.get("WISP_HOME")
    if home:
        env["WISP_HOME"] = str(Path(home).expanduser().absolute())
    return env
