"""A throwaway harness (tests/toyharness.py) is hooked, set up, reported by status and removed
by the real program, with no file of wisp's changed: one module and one line make a harness
(docs/architecture.md). Run by the run's out-of-tree install (tests/outoftree.py), as a person
runs wisp: setup refuses the clone's editable one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from pending import Scope
from wisp import GrantStore, current_user

TOY = ROOT / "tests" / "toyharness.py"
GRANTED = "make deploy"


@pytest.fixture
def env(tmp_path: Path, out_of_tree_wisp: Path) -> dict[str, str]:
    """A scratch user home and $WISP_HOME, the out-of-tree `wisp` on PATH, and a `toy`
    program there (its `--version`: `toy 1.0`)."""
    user = tmp_path / "u"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    toy = bin_dir / "toy"
    toy.write_text("#!/bin/sh\necho toy 1.0\n")
    toy.chmod(0o755)
    user.mkdir()
    return {
        "HOME": str(user),
        "WISP_HOME": str(user / ".wisp"),
        "PATH": f"{out_of_tree_wisp.parent}:{bin_dir}:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }


def toy(
    env: dict[str, str],
    out_of_tree_wisp: Path,
    *args: str,
    stdin: str = "",
    cwd: Path,
    plain: bool = False,
) -> tuple[int, str, str]:
    """`wisp ARGS` with the toy harness: tests/toyharness.py run by the out-of-tree install's
    Python (its wisp, not the clone's, is the one imported); *plain*: that install's `wisp`
    itself, which knows no toy."""
    program = [str(out_of_tree_wisp.parent / "python"), str(TOY)]
    done = subprocess.run(
        [*([str(out_of_tree_wisp)] if plain else program), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def event(project: Path, command: str) -> str:
    return json.dumps(
        {
            "toy_event": "wish",
            "session": "s-1",
            "cwd": str(project),
            "tool": "sh",
            "input": {"command": command},
        }
    )


class TestAThrowawayHarness:
    def test_it_is_hooked(
        self, env: dict[str, str], out_of_tree_wisp: Path, tmp_path: Path
    ) -> None:
        """`wisp hook toyharness` answers in the toy's shape: a call a grant covers is
        allowed, one nobody answers in time denied, an event it cannot read refused with its
        blocking status, both by the program's fast path and by the CLI's command
        (--print-settings); without the toy module the same `wisp` knows no such hook."""
        project = tmp_path / "project"
        project.mkdir()
        GrantStore(Path(env["WISP_HOME"])).add(
            scope=Scope.ALWAYS,
            command=GRANTED,
            cwd=str(project),
            request="r1",
            user=current_user(),
        )
        code, _out, err = toy(
            env,
            out_of_tree_wisp,
            "hook",
            "toyharness",
            "--print-settings",
            cwd=tmp_path,
            plain=True,
        )
        assert code == 2 and "No such command" in err  # the control
        code, out, err = toy(
            env, out_of_tree_wisp, "hook", "toyharness", stdin=event(project, GRANTED), cwd=project
        )
        assert (code, json.loads(out)["toy"]) == (0, "yes"), err
        code, out, err = toy(
            env,
            out_of_tree_wisp,
            "hook",
            "toyharness",
            "--wait",
            "1",
            stdin=event(project, "make clean"),  # no must-ask class: silence is the toy's own
            cwd=project,
        )
        said = json.loads(out)
        assert (code, said["toy"]) == (0, "no"), err
        assert "the toy has no dialog to ask in" in said["why"]
        code, out, err = toy(env, out_of_tree_wisp, "hook", "toyharness", stdin="{", cwd=project)
        assert (code, json.loads(out)["toy"]) == (2, "no") and err.startswith("wisp: ")
        code, out, err = toy(
            env, out_of_tree_wisp, "hook", "toyharness", "--print-settings", cwd=project
        )
        (hook,) = json.loads(out)["hooks"]["wish"][0]["hooks"]
        assert code == 0 and hook["timeout"] == 600, err
        assert hook["command"].endswith(f"{out_of_tree_wisp} hook toyharness")

    def test_it_is_set_up_reported_and_removed(
        self, env: dict[str, str], out_of_tree_wisp: Path, tmp_path: Path
    ) -> None:
        """Status reports the toy on PATH with no gate; setup writes its hook (in wisp's
        guard) into ~/.toy/hooks.json; status then reports the gate installed, fail-closed
        and working; remove deletes the file setup made."""
        config = Path(env["HOME"]) / ".toy" / "hooks.json"

        def status() -> dict[str, Any]:
            _code, out, _err = toy(
                env, out_of_tree_wisp, "agents", "status", "--json", cwd=tmp_path
            )
            (entry,) = [e for e in json.loads(out) if e["harness"] == "toyharness"]
            return entry

        before = status()
        assert before["onPath"] and before["version"] == "toy 1.0"
        assert before["installed"] is False and not config.exists()
        code, _out, err = toy(env, out_of_tree_wisp, "agents", "setup", "toyharness", cwd=tmp_path)
        assert code == 0, err
        (group,) = json.loads(config.read_text())["hooks"]["wish"]
        assert group["hooks"][0]["command"].endswith(f"{out_of_tree_wisp} hook toyharness")
        after = status()
        assert after["installed"] is True, after
        (gate,) = after["hooks"]
        assert (gate["event"], gate["timeout"]) == ("wish", 600)
        assert gate["failClosed"] and gate["guard"] and gate["works"], gate
        assert any("the toy's sandbox" in p for p in after["unprotected"])
        code, _out, err = toy(env, out_of_tree_wisp, "agents", "remove", "toyharness", cwd=tmp_path)
        assert code == 0, err
        assert not config.exists()
        assert status()["installed"] is False
