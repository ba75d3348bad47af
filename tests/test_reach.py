"""Where an agent can write (wisp.agents.reach), and a gate's command read back
(wisp.agents.gatecheck): real folders, real links."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from wisp.agents import gatecheck, hookio, opencode, reach
from wisp.agents.install import Install, this_install


class TestWhereWritable:
    def test_a_working_tree_by_each_mark(self, tmp_path: Path) -> None:
        """A folder under one holding `.git` (a folder, or a worktree's file), `.hg` or
        `.jj` lies in that tree; the same path with no mark above it does not (with no
        other root named)."""
        path = tmp_path / "p" / ".venv" / "bin" / "wisp"
        path.parent.mkdir(parents=True)
        assert reach.where_writable(path, []) is None
        for mark, is_file in ((".git", True), (".git", False), (".hg", False), (".jj", False)):
            marked = tmp_path / "p" / mark
            if is_file:
                marked.write_text("gitdir: /elsewhere\n")
            else:
                marked.mkdir()
            said = reach.where_writable(path, [])
            assert said == f"in the working tree of {tmp_path / 'p'} (it holds {mark})"
            if is_file:
                marked.unlink()
            else:
                marked.rmdir()

    def test_spelled_and_resolved(self, tmp_path: Path) -> None:
        """A link into a project is in the project (resolved); `proj/../tools` is read as
        `cd` reads it, `tools` (spelled), not as the link it passes through."""
        (tmp_path / "proj" / ".git").mkdir(parents=True)
        (tmp_path / "tools").mkdir()
        (tmp_path / "link").symlink_to(tmp_path / "proj")
        assert reach.where_writable(tmp_path / "link" / "wisp", []) is not None
        assert reach.where_writable(tmp_path / "tools" / "wisp", []) is None
        root = reach.WritableRoot(path=tmp_path / "tools", why="a root")
        through = tmp_path / "proj" / ".." / "tools" / "wisp"
        assert reach.where_writable(through, [root]) == f"under {tmp_path / 'tools'} (a root)"

    def test_temporary_directories(self) -> None:
        """/tmp, /var/tmp, /dev/shm always; $TMPDIR when it is set, absolute."""
        assert [r.path for r in reach.temp_roots({})] == list(reach.TEMP_DIRS)
        roots = reach.temp_roots({"TMPDIR": "/scratch/me"})
        assert roots[-1].path == Path("/scratch/me") and "$TMPDIR" in roots[-1].why
        assert len(reach.temp_roots({"TMPDIR": "relative"})) == len(reach.TEMP_DIRS)

    def test_the_harnesses_writable_roots(self) -> None:
        """Codex's `writable_roots` and Claude Code's `allowWrite` (`~/…`, `//abs`) are read
        from the config's text; unreadable text names none."""
        codex = reach.config_roots("codex", "[sandbox_workspace_write]\nwritable_roots = ['/w']\n",
                                   Path("/home/u"))  # fmt: skip
        assert [r.path for r in codex] == [Path("/w")]
        allow = {"sandbox": {"filesystem": {"allowWrite": ["~/out", "//abs", "rel"]}}}
        claude = reach.config_roots("claude-code", json.dumps(allow), Path("/home/u"))
        assert [r.path for r in claude] == [Path("/home/u/out"), Path("/abs")]
        assert reach.config_roots("codex", "not = [toml", Path("/home/u")) == []
        assert reach.config_roots("gemini", json.dumps(allow), Path("/home/u")) == []

    def test_an_interpreter_in_its_managers_checkout(self, tmp_path: Path) -> None:
        """A pyenv-like checkout (`.git` above its Pythons) does not make the interpreter's
        own files (and a wisp installed into it) refused; a venv in that tree is."""
        manager = tmp_path / "pyenv"
        (manager / ".git").mkdir(parents=True)
        base = manager / "versions" / "3.11.7"
        site = base / "lib" / "python3.11" / "site-packages"
        install = Install(
            argv=(str(base / "bin" / "wisp"),),
            paths=(base / "bin" / "wisp", base, site / "wisp", site / "pending"),
            interpreters=(base,),
        )
        assert reach.install_reasons(install, []) == []
        venv = manager / "venv"
        inside = Install(argv=(str(venv / "bin" / "wisp"),), paths=(venv,), interpreters=(base,))
        assert reach.install_reasons(inside, []) == [
            f"{venv} in the working tree of {manager} (it holds .git)"
        ]


class TestTheGatesCommand:
    def test_guarded_as_setup_writes_it(self) -> None:
        """The guarded command setup writes reads back as its guard, wisp and `hook NAME`."""
        argv = hookio.guarded_command(opencode.HARNESS, ["/opt/w/bin/wisp"], wait_s=30)
        argv = hookio.guarded_argv(hookio.Said(stdout="{}", exit_code=2), argv)  # wrapped
        cmd = gatecheck.read_command(shlex.join(argv))
        assert cmd is not None
        assert cmd.guard == str(hookio.GUARD_SCRIPT) and cmd.shell == hookio.GUARD_SHELL
        assert cmd.wisp == ("/opt/w/bin/wisp",) and cmd.name == "opencode"
        assert cmd.options == ("--wait", "30")

    def test_unguarded_and_unreadable(self) -> None:
        """`python -m wisp hook codex` reads as that argv; text with no `hook NAME` reads as
        none; unbalanced quotes do not read at all."""
        cmd = gatecheck.read_command("/v/bin/python -m wisp hook codex")
        assert cmd is not None and cmd.wisp == ("/v/bin/python", "-m", "wisp")
        assert cmd.guard is None and cmd.name == "codex"
        bare = gatecheck.read_command("/v/bin/wisp")
        assert bare is not None and bare.name is None
        assert gatecheck.read_command("'unbalanced") is None

    def test_the_opencode_plugin(self) -> None:
        """The plugin setup writes reads back as its argv; a plugin without the line, or
        with a line that is not a list of strings, reads as none."""
        text = opencode.plugin(["/opt/w/bin/wisp", "hook", "opencode"])
        cmd = gatecheck.read_plugin(text)
        assert cmd is not None and cmd.wisp == ("/opt/w/bin/wisp",) and cmd.name == "opencode"
        assert gatecheck.read_plugin("// nothing\n") is None
        assert gatecheck.read_plugin("const WISP = [1, 2]\n") is None
        assert gatecheck.read_plugin("const WISP = nope\n") is None


class TestCheckHook:
    def test_this_install_checked_in_full(self) -> None:
        """A gate naming this process's own wisp and guard: every check made, none
        skipped (the reach check with no roots: only working trees count)."""
        install = this_install()
        argv = hookio.guarded_command(opencode.HARNESS, list(install.argv))
        argv = hookio.guarded_argv(hookio.Said(stdout="{}", exit_code=2), argv)
        found = gatecheck.check_hook(
            gatecheck.read_argv(argv), "opencode", install=install, roots=[],
            runs=gatecheck.Runs(),
        )  # fmt: skip
        assert found["failClosed"] and found["works"] and found["thisWisp"], found
        assert found["checked"] == [c.value for c in gatecheck.Check]
        assert found["notChecked"] == []

    def test_another_harnesss_hook(self) -> None:
        """A gate that runs `hook gemini` where Codex's is expected is a problem."""
        found = gatecheck.check_hook(
            gatecheck.read_command("/nowhere/wisp hook gemini"), "codex",
            install=this_install(), roots=[], runs=gatecheck.Runs(),
        )  # fmt: skip
        said = " | ".join(found["problems"])
        assert "runs `wisp hook gemini`, not `wisp hook codex`" in said
        assert "/nowhere/wisp, which does not exist" in said
        assert not found["works"] and not found["failClosed"]


class TestPrintedSettings:
    @pytest.mark.parametrize("harness", ["claude-code", "gemini"])
    def test_a_hook_printed_by_a_reachable_wisp_says_so(
        self, harness: str, out_of_tree_wisp: Path, tmp_path: Path
    ) -> None:
        """`wisp hook NAME --print-settings` by the clone's editable wisp (a working tree: the
        hook setup refuses) prints the block and a note on stderr saying an agent could
        rewrite it; the control: the out-of-tree wisp prints it without one."""
        env = {**os.environ, "WISP_HOME": str(tmp_path / "wisp")}
        editable = Path(sys.executable).parent / "wisp"  # the clone's .venv: a working tree
        for wisp, noted in ((editable, True), (out_of_tree_wisp, False)):
            done = subprocess.run(
                [str(wisp), "hook", harness, "--print-settings"],
                capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
            )  # fmt: skip
            assert done.returncode == 0 and "hooks" in json.loads(done.stdout), done.stderr
            assert ("lies where an agent can write" in done.stderr) is noted, done.stderr
