"""wisp installed as a person installs it for everyday use (pipx-like): this clone, not
editable, into a virtual environment of its own under the e2e cache — never the clone's
`.venv` (a working tree the agent may write, which `wisp agents setup` refuses to hook), never
under /tmp. The tier's `wisp` (world.WISP) is this one.

Rebuilt when the clone's code changed: the install is keyed by a digest of the tracked files
a wheel is built from, as they are in the working tree (an uncommitted edit counts). The build
is from a copy of those files, so that nothing is written into the clone. The environment and
its dependencies are made once (from the package index); a rebuild reinstalls wisp only
(~5 s), without build isolation, so it needs no index.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from harnesses import CACHE

CLONE = Path(__file__).resolve().parents[2]
PLACE = CACHE / "wisp"
VENV = PLACE / "venv"
WISP = VENV / "bin" / "wisp"
# What a wheel of wisp is built from (pyproject.toml's packages, its readme and license).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "wisp", "pending", "docs")
# The build backend pyproject.toml asks for.
BUILD_REQUIRES = "setuptools>=77"
# `wisp mcp` (test_e2e_prompt_tool.py), the TUI and a push (test_e2e_hostile.py).
EXTRAS = "mcp,tui,push"


def tracked() -> list[str]:
    """The clone's tracked files a wheel is built from."""
    listed = subprocess.run(
        ["git", "-C", str(CLONE), "ls-files", "-z", "--", *SOURCES],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(name for name in listed.split("\0") if name and (CLONE / name).is_file())


def digest(files: list[str]) -> str:
    """The files' names and contents, hashed."""
    h = hashlib.sha256()
    for name in files:
        h.update(name.encode() + b"\0")
        h.update(hashlib.sha256((CLONE / name).read_bytes()).digest())
    return h.hexdigest()


def ensure() -> Path:
    """This clone's wisp, installed out of the tree (built now unless the installed one is
    of the same code); its `wisp` program. One process builds at a time (xdist workers)."""
    PLACE.mkdir(parents=True, exist_ok=True)
    stamp = PLACE / "source.sha256"
    with (PLACE / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        files = tracked()
        want = digest(files)
        if WISP.exists() and stamp.exists() and stamp.read_text() == want:
            return WISP
        stamp.unlink(missing_ok=True)
        source = PLACE / "source"
        shutil.rmtree(source, ignore_errors=True)
        for name in files:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CLONE / name, source / name)
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
        if not (VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            subprocess.run([*pip, "install", BUILD_REQUIRES], check=True)
        # Its dependencies (fetched by the first build only), and wisp itself (a local folder
        # is always built and installed again, whatever version is installed).
        subprocess.run([*pip, "install", "--no-build-isolation", f"{source}[{EXTRAS}]"], check=True)
        shutil.rmtree(source, ignore_errors=True)
        stamp.write_text(want)
        return WISP
