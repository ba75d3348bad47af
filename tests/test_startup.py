"""The `wisp` program pauses Python's cyclic garbage collector while it starts, and a process
that lives on resumes it (`wisp._startup`, issue 41)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import probed_wisp

from wisp import _startup

# Runs the `wisp` program on argv; says on stderr whether the collector was on when the
# request was linked into place, and again as the process ends.
PROBE = """\
import atexit, gc, os, sys
def probe(event, args):
    if event == "os.link" and str(args[1]).endswith(".request.json"):
        os.write(2, ("\\nFILED " + str(gc.isenabled()) + "\\n").encode())
sys.addaudithook(probe)
atexit.register(lambda: os.write(2, ("\\nENDED " + str(gc.isenabled()) + "\\n").encode()))
sys.argv = ["wisp", *sys.argv[2:]]
from wisp.__main__ import run
run()
"""


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, whatever a test did to it."""
    was = gc.isenabled()
    try:
        yield
    finally:
        _startup._paused = False
        (gc.enable if was else gc.disable)()


def said(err: str, word: str) -> list[str]:
    return [line.split()[1] for line in err.splitlines() if line.startswith(word + " ")]


class TestStartupCollector:
    def test_paused_then_resumed(self, collector: None) -> None:
        """pause() stops collection; resume() starts it again, once."""
        gc.enable()
        _startup.pause()
        assert not gc.isenabled()
        _startup.resume()
        assert gc.isenabled()
        gc.disable()
        _startup.resume()  # nothing left to resume
        assert not gc.isenabled()

    def test_a_library_keeps_its_collector(self, collector: None) -> None:
        """A program that turned its collector off keeps it off: only a pause made by
        pause() is resumed."""
        gc.disable()
        _startup.pause()
        _startup.resume()
        assert not gc.isenabled()

    def test_an_asker_collects_again_once_it_has_filed(self, home: Path, tmp_path: Path) -> None:
        """`wisp approvals request` files with the collector paused, and collects again while
        it waits (here, until its one-second deadline)."""
        done = probed_wisp(
            PROBE, home, "approvals", "request", "--timeout", "1", "--", "make test", cwd=tmp_path
        )
        err = done.stderr.decode()
        assert said(err, "FILED") == ["False"], err
        assert said(err, "ENDED") == ["True"], err

    def test_a_command_that_ends_never_collects(self, home: Path, tmp_path: Path) -> None:
        """A listing starts, lists and ends with the collector paused throughout."""
        done = probed_wisp(PROBE, home, "pending", "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == []
        assert said(done.stderr.decode(), "ENDED") == ["False"]


# Runs the `wisp` program on argv, sending itself SIGINT (Ctrl-C) as the module named by
# WISP_PROBE_INTERRUPT_AT is imported, once: a Ctrl-C at a known point of its start.
INTERRUPTING_PROBE = """\
import os, signal, sys
at = os.environ["WISP_PROBE_INTERRUPT_AT"]
sent = []
def probe(event, args):
    if event == "import" and args[0] == at and not sent:
        sent.append(at)
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(probe)
sys.argv = ["wisp", *sys.argv[2:]]
from wisp.__main__ import run
run()
"""


class TestCtrlCWhileStarting:
    @pytest.mark.parametrize("module", ["wisp.cli", "typer", "wisp.kinds.command_gate"])
    def test_an_asker_interrupted_as_it_loads_says_no_traceback(
        self, home: Path, tmp_path: Path, module: str
    ) -> None:
        """Control: the probe interrupting at a module never imported lets the asker run to its
        one-second deadline (exit 124). Ctrl-C as the CLI's framework, the command or the
        asker loads (an asker's first tenth of a second) ends it with 130, as typer ends a
        command it interrupts: no traceback, nothing filed."""
        env = {"WISP_HOME": str(home), "PATH": "/usr/bin:/bin"}
        argv = [sys.executable, "-c", INTERRUPTING_PROBE, "wisp", "approvals", "request"]
        argv += ["--timeout", "1", "--", "make test"]

        def run(at: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                argv,
                capture_output=True,
                text=True,
                env={**env, "WISP_PROBE_INTERRUPT_AT": at},
                cwd=tmp_path,
                timeout=120,
                check=False,
            )

        control = run("no.such.module")
        assert control.returncode == 124, control.stderr
        filed = set((home / "pending").glob("*.request.json"))
        done = run(module)
        assert (done.returncode, done.stdout) == (130, ""), done.stderr
        assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
        assert set((home / "pending").glob("*.request.json")) == filed
