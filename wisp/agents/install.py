"""This install of wisp: how a harness runs it, and what on disk it is made of.

A hook runs outside the agent's sandbox, as the person: whatever can change the files it runs
can take the gate over (rewrite `wisp`, its package, its interpreter's environment or the
guard, and every later call is the agent's to allow). :func:`this_install` names those files,
so that setup can refuse to install a hook the agent could rewrite, `wisp agents status` can
say so, and the self-guard can put to the person any call that would write them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pending
from pending import NamedTuple

WISP_PACKAGE = Path(__file__).resolve().parents[1]
# The guard a hook is installed in (wisp.agents.hookio), shipped beside this module.
GUARD_SCRIPT = Path(__file__).with_name("hookguard.sh")


class Install(NamedTuple):
    """One install of wisp, as a hook would run it. (A named tuple, not attrs: the hook's
    path imports this module, and attrs alone costs more to import than the interpreter's
    start, bench/README.md, issue 41.)"""

    argv: tuple[str, ...]  # how to run this `wisp`, by absolute paths
    # The files and folders whose change changes what the hook runs: the `wisp` program, the
    # virtual environment it lives in (its interpreter, its site-packages: every library it
    # imports), wisp's own package folders (an editable install's lie in the clone) and the
    # guard script.
    paths: tuple[Path, ...]
    # Those of *paths* that are the interpreter's own (not its venv's): a version manager
    # (pyenv, asdf) keeps them in a git checkout of its own, no project an agent works in.
    interpreters: tuple[Path, ...] = ()


def this_wisp() -> list[str]:
    """How to run this `wisp`, absolutely: the program this process was started as, if it is
    a `wisp` executable; else the `wisp` on PATH; else this Python with `-m wisp`."""
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name == "wisp" and os.access(started, os.X_OK):
        return [str(started.resolve())]
    import shutil  # here: with bz2 and lzma, ~4 ms of every hook run, for the settings only

    found = shutil.which("wisp")
    if found is not None:
        return [str(Path(found).resolve())]
    # Not resolved: a virtual environment's python is a symlink to one that lacks its packages.
    # -P: the hook runs in the agent's project, and `-m` alone would import a `wisp/` planted
    # there in the place of this one (wisp.routes.subproc says why -P, not -I).
    return [str(Path(sys.executable).absolute()), "-P", "-m", "wisp"]


def this_install() -> Install:
    """This process's install of wisp."""
    argv = tuple(this_wisp())
    # The `wisp` program; not the fallback's Python (`python -P -m wisp`): that is the
    # interpreter, below, and its virtual environment (a pyenv Python resolves into pyenv's
    # own git checkout, which is no project the agent works in).
    paths: list[Path] = [Path(argv[0])] if len(argv) == 1 else []
    if sys.prefix != sys.base_prefix:  # a virtual environment: all of it runs in the hook
        paths.append(Path(sys.prefix).absolute())
    interpreters = [Path(sys.executable).resolve()]
    # An interpreter the person built or installed in their own home (pyenv, uv, conda): its
    # standard library is imported by every hook, and the agent may write there. A system's
    # (/usr) is not the person's to write.
    base = Path(sys.base_prefix).resolve()
    if base.is_relative_to(Path.home()):
        interpreters.append(base)
    paths += interpreters
    paths += [WISP_PACKAGE, Path(pending.__file__).parent.resolve()]
    paths.append(GUARD_SCRIPT.resolve())
    unique = dict.fromkeys(paths)
    return Install(argv=argv, paths=tuple(unique), interpreters=tuple(dict.fromkeys(interpreters)))
