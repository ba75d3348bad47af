"""wisp installed as a person installs it for everyday use: out of any working tree and
temporary directory, not editable (`wisp agents setup` refuses to install a hook naming a
wisp an agent could rewrite: the clone's editable `.venv` is one).

Built once per test run (every xdist worker of the run shares it, a file lock keeping the
others waiting while the first builds), under the user's cache directory
(``$XDG_CACHE_HOME``, else ``~/.cache``) in ``wisp-tests/RUN``, and removed by the run's
controller at its end. A virtual environment without pip; the runtime dependencies copied
from this interpreter's environment (file by file, as their records list them: nothing
downloaded); wisp built as a wheel from a copy of the clone's sources (its working tree as
it is, uncommitted changes too) and installed by pip, which writes the `wisp` program. About
3 s on the 2-core machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "wisp-pending"
# What the wheel is built from: the files pyproject.toml names (its packages and their data).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "wisp", "pending", "docs")
DONE = "built"  # written last: a place holding it holds a whole install
BUILD_TIMEOUT_S = 120.0  # building takes ~3 s; a loaded machine may take many times that
STALE_AFTER_S = 24 * 3600  # no run takes a day: an install this old was left by a killed one


def place(env: Mapping[str, str], run: str) -> Path:
    """Where run *run*'s install lives: the user's cache directory, never a working tree or
    a temporary directory."""
    cache = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(cache) / "wisp-tests" / run


def program(where: Path) -> Path:
    """The `wisp` of the install at *where*, built first if it is not there yet."""
    wisp = where / "venv" / "bin" / "wisp"
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    with (where / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds; the rest wait, then reuse
        if not (where / DONE).exists():
            _build(where)
            (where / DONE).write_text(f"{time.time()}\n")
    return wisp


def remove(where: Path) -> None:
    """The run's install gone, and any a run killed before its end left a day ago or more."""
    shutil.rmtree(where, ignore_errors=True)
    with contextlib.suppress(OSError):  # none left; or another run's appeared meanwhile
        for other in where.parent.iterdir():
            if time.time() - other.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(other, ignore_errors=True)
        where.parent.rmdir()


def _run(*argv: str | Path) -> None:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"building the out-of-tree wisp: {' '.join(map(str, argv))} failed:\n"
            f"{done.stdout}{done.stderr}\n(the wheel is built with setuptools>=77 without "
            "build isolation: `.venv/bin/pip install -e '.[test]'` installs it)"
        )


def _build(where: Path) -> None:
    for stale in ("venv", "src", "wheel"):
        shutil.rmtree(where / stale, ignore_errors=True)
    venv = where / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    _copy_dependencies(site / "site-packages")
    src = where / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    wheels = where / "wheel"
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", wheels, src)  # fmt: skip
    [wheel] = wheels.glob("*.whl")
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
         "--no-deps", "--no-index", wheel)  # fmt: skip
    shutil.rmtree(src)
    shutil.rmtree(wheels)


def _copy_dependencies(site: Path) -> None:
    """wisp's runtime dependencies (no extras), copied from this environment into *site*."""
    seen: set[str] = set()
    todo = [DISTRIBUTION]
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        for text in dist.requires or []:
            wanted = Requirement(text)
            if wanted.marker is None or wanted.marker.evaluate({"extra": ""}):
                todo.append(wanted.name)
        if name == DISTRIBUTION:
            continue
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if ".." in file.parts or "__pycache__" in file.parts or not source.is_file():
                continue  # its scripts (outside site-packages) name this interpreter
            target = site / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
