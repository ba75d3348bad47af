"""What `wisp agents status` checks of each gate a harness's config holds, read for real.

A hook's command is read as the harness runs it (`/bin/sh GUARD STATUS DENY -- WISP… hook
NAME [--wait S]`, or `WISP… hook NAME` unguarded; OpenCode's plugin's `const WISP = […]`),
and each part of it is checked: the guard exists (else `/bin/sh` exits 127, which a harness
takes as no opinion: the call runs), the wisp it names exists and runs (`WISP --version`,
once per distinct program), it is this install's (or another wisp's, named), and none of it
lies where an agent can write (:mod:`wisp.agents.reach`). Each check it made is listed, and
each it could not make, with why.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import attrs

from wisp.agents import reach
from wisp.agents.install import Install

# A cold `wisp --version` takes ~0.1 s on an idle machine and seconds on a loaded one (2
# CPUs shared by several agents); a wisp that has not answered by then is not one a hook can
# rely on either.
WISP_VERSION_TIMEOUT_S = 10.0
GUARD_NAME = "hookguard.sh"
# The plugin's line naming wisp's argv (opencode-plugin.js): `const WISP = ["/…/wisp", …]`;
# in a hook script (Cline's), the comment `# WISP = [...]` above the line that execs it.
PLUGIN_ARGV = re.compile(r"^(?:const|#) WISP = (.*)$", re.MULTILINE)


class Check(StrEnum):
    """What status checks of a hook (`checked`, `notChecked` in `--json`)."""

    COMMAND = "command"  # the command read: guard, wisp, `hook NAME`
    GUARD = "guard"  # the guard script (and its shell) exist
    WISP_EXISTS = "wispExists"  # the wisp it names exists
    WISP_RUNS = "wispRuns"  # `WISP --version` answers as wisp
    THIS_INSTALL = "thisInstall"  # the wisp it names is the one running status
    REACH = "reach"  # none of it lies where an agent can write


@attrs.frozen(kw_only=True)
class HookCommand:
    """A gate's command, read."""

    wisp: tuple[str, ...]  # how it runs wisp: the words before `hook NAME`
    name: str | None  # NAME in `hook NAME` (None: no `hook NAME` in it)
    options: tuple[str, ...]  # the words after `hook NAME`
    guard: str | None = None  # the guard script it runs wisp in
    shell: str | None = None  # the shell that runs the guard


def read_argv(words: Sequence[str]) -> HookCommand:
    """A hook's argv, read: the guard (if it runs wisp in one), wisp, `hook NAME`."""
    guard = shell = None
    argv = list(words)
    if len(argv) >= 2 and Path(argv[1]).name == GUARD_NAME:
        shell, guard = argv[0], argv[1]
        argv = argv[argv.index("--") + 1 :] if "--" in argv else []
    for i in range(len(argv) - 1):
        if argv[i] == "hook":
            return HookCommand(
                wisp=tuple(argv[:i]),
                name=argv[i + 1],
                options=tuple(argv[i + 2 :]),
                guard=guard,
                shell=shell,
            )
    return HookCommand(wisp=tuple(argv), name=None, options=(), guard=guard, shell=shell)


def read_command(command: str) -> HookCommand | None:
    """A hook's command line (as a harness's config holds it), read; None: not shell words."""
    try:
        return read_argv(shlex.split(command))
    except ValueError:
        return None


def read_plugin(text: str) -> HookCommand | None:
    """OpenCode's plugin's `const WISP = [...]`, read; None: it names no argv."""
    found = PLUGIN_ARGV.search(text)
    if found is None:
        return None
    try:
        argv = json.loads(found.group(1))
    except ValueError:
        return None
    if not isinstance(argv, list) or not argv or not all(isinstance(w, str) for w in argv):
        return None
    return read_argv(argv)


@attrs.define
class Runs:
    """What each distinct wisp said to `--version`, asked once per status."""

    said: dict[tuple[str, ...], tuple[str | None, str | None]] = attrs.field(factory=dict)

    def version(self, wisp: tuple[str, ...]) -> tuple[str | None, str | None]:
        """*wisp*'s version (None, and why, when it does not answer as wisp)."""
        if wisp not in self.said:
            self.said[wisp] = _ask_version(wisp)
        return self.said[wisp]


def _ask_version(wisp: tuple[str, ...]) -> tuple[str | None, str | None]:
    try:
        done = subprocess.run(
            [*wisp, "--version"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=WISP_VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            cwd="/",  # not the caller's directory: nothing there is imported
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"did not answer `--version` within {WISP_VERSION_TIMEOUT_S:g} s"
    except PermissionError:
        return None, "is not executable"
    except OSError:
        return None, "could not be started"
    first = done.stdout.strip().splitlines()[:1]
    if done.returncode != 0 or not first or not first[0].startswith("wisp "):
        return None, f"does not answer `--version` as wisp does (exit {done.returncode})"
    return first[0], None


def _program(word: str) -> Path | None:
    """The file a command's first word runs (None: not found on PATH)."""
    if "/" in word:
        return Path(word)
    found = shutil.which(word)
    return Path(found) if found else None


def _same(a: str, b: str) -> bool:
    one, two = Path(a), Path(b)
    return os.path.normpath(one) == os.path.normpath(two) or one.resolve() == two.resolve()


def its_paths(cmd: HookCommand) -> list[Path]:
    """What the gate's command runs that could be rewritten: the program, its venv, the
    guard and the package folder holding it."""
    paths: list[Path] = []
    program = _program(cmd.wisp[0]) if cmd.wisp else None
    if program is not None:
        paths.append(program)
        venv = program.parent.parent
        if (venv / "pyvenv.cfg").is_file():
            paths.append(venv)
    if cmd.guard is not None:
        guard = Path(cmd.guard)
        paths.append(guard)
        if guard.parent.name == "agents":
            paths.append(guard.parent.parent)  # wisp's package folder
    return paths


def check_hook(
    cmd: HookCommand | None,
    name: str,
    *,
    install: Install,
    roots: Sequence[reach.WritableRoot],
    runs: Runs,
    fails_closed_itself: bool = False,
) -> dict[str, Any]:
    """What status says of one gate whose command is *cmd* (None: unreadable), for `wisp hook
    NAME`: its fields, `checked`, `notChecked` (each with why) and `problems`."""
    checked: list[Check] = []
    not_checked: list[dict[str, str]] = []
    problems: list[str] = []
    out: dict[str, Any] = {
        "wisp": None, "guard": None, "thisWisp": None, "setUpBy": None, "wispVersion": None
    }  # fmt: skip

    def skip(check: Check, why: str) -> None:
        not_checked.append({"check": check.value, "why": why})

    if cmd is None or not cmd.wisp or cmd.name is None:
        problems.append(
            "the hook's command cannot be read as wisp's (`WISP… hook NAME`): run "
            f"`wisp agents setup {name}` again"
        )
        for check in (Check.GUARD, Check.WISP_EXISTS, Check.WISP_RUNS, Check.THIS_INSTALL):
            skip(check, "the command could not be read")
        skip(Check.REACH, "the command could not be read")
        return {**out, "failClosed": fails_closed_itself, "works": False, "checked": [],
                "notChecked": not_checked, "problems": problems, "reach": []}  # fmt: skip
    checked.append(Check.COMMAND)
    if cmd.name != name:
        problems.append(f"the hook runs `wisp hook {cmd.name}`, not `wisp hook {name}`")
    guard_ok = False
    if cmd.guard is None:
        skip(Check.GUARD, "the command runs wisp in no guard")
    else:
        out["guard"] = cmd.guard
        checked.append(Check.GUARD)
        shell = _program(cmd.shell or "")
        if not Path(cmd.guard).is_file():
            problems.append(
                f"the hook names the guard {cmd.guard}, which does not exist: the shell then "
                "exits 127, which the harness takes as no opinion (the call runs); run setup "
                "again with the wisp you use"
            )
        elif shell is None or not os.access(shell, os.X_OK):
            problems.append(f"the guard's shell {cmd.shell} cannot be run")
        else:
            guard_ok = True
    program = _program(cmd.wisp[0])
    out["wisp"] = str(program) if program else cmd.wisp[0]
    works = False
    if program is None or not program.exists():
        checked.append(Check.WISP_EXISTS)
        denied = " (its guard denies every call)" if guard_ok else ""
        problems.append(
            f"the hook names {out['wisp']}, which does not exist{denied}: run setup again "
            "with the wisp you use"
        )
        skip(Check.WISP_RUNS, "it does not exist")
    else:
        checked += [Check.WISP_EXISTS, Check.WISP_RUNS]
        version, why = runs.version((str(program), *cmd.wisp[1:]))
        out["wispVersion"] = version
        works = version is not None
        if why is not None:
            problems.append(
                f"the hook's wisp {program} {why}: run setup again with the wisp you use"
            )
    checked.append(Check.THIS_INSTALL)
    ours = _same(str(program or cmd.wisp[0]), install.argv[0]) and cmd.wisp[1:] == install.argv[1:]
    out["thisWisp"] = ours
    out["setUpBy"] = None if ours else " ".join(cmd.wisp)
    checked.append(Check.REACH)
    # The paths as the command spells them (a link into a project is in that project), and
    # every file of this install when it is this install.
    found = reach.reasons(its_paths(cmd), roots)
    if ours:
        found = list(dict.fromkeys([*found, *reach.install_reasons(install, roots)]))
    return {
        **out,
        "failClosed": fails_closed_itself or guard_ok,
        "works": works,
        "checked": [c.value for c in checked],
        "notChecked": not_checked,
        "problems": problems,
        "reach": found,
    }
