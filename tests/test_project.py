"""The project's promises to a newcomer: the README's commands are the ones CI runs."""

from __future__ import annotations

import re

import pytest
from conftest import auto_workers
from helpers import ROOT


def quickstart() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```(?:sh|bash|console)?\n(.*?)```", section, re.S)
    assert block, "the Quickstart has a code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


class TestQuickstart:
    def test_exactly_two_commands(self) -> None:
        """The Quickstart is two commands: run it, and test it."""
        commands = quickstart()
        assert len(commands) == 2
        assert "wisp" in commands[0]
        assert "pytest" in commands[1]

    def test_ci_runs_the_readme_test_command(self) -> None:
        """`.ci/run` runs the README's test command verbatim: no second recipe."""
        ci = (ROOT / ".ci" / "run").read_text()
        assert quickstart()[1] in ci.splitlines()


class TestPropertyTests:
    def test_no_clock_of_hypothesis_can_fail_a_test(self) -> None:
        """Every property test runs without hypothesis's deadline and its too-slow health
        check (the suite's profile, tests/conftest.py): a test fails for what it asserts, not
        for how busy the machine was."""
        from hypothesis import HealthCheck, settings

        assert settings.default.deadline is None
        assert HealthCheck.too_slow in settings.default.suppress_health_check


class TestWorkers:
    @pytest.mark.parametrize(
        ("cpus", "load", "workers"),
        [(2, 0.0, 4), (2, 0.5, 3), (2, 1.0, 2), (2, 1.2, 1), (2, 30.0, 1), (8, 2.0, 12)],
    )
    def test_the_suite_does_not_pile_onto_a_busy_machine(
        self, cpus: int, load: float, workers: int
    ) -> None:
        """`-n auto` starts two workers for each CPU the last minute's load left idle, at
        least one: four on an idle 2-core machine (the control), one at a load of 30 (a
        second suite beside it), never two a CPU whatever the load."""
        assert auto_workers(cpus, load) == workers

    def test_the_readme_says_what_it_needs(self) -> None:
        """The README says how long the suite takes by what it needs (its CPU time, the
        machine idle), not a bare "1½ to 3 minutes", and that a busy machine gets fewer
        workers."""
        readme = " ".join((ROOT / "README.md").read_text().split())
        assert "1½ to 3 minutes" not in readme
        assert "CPU time" in readme and "load average" in readme


class TestLaunchedInTheBackground:
    def test_the_commands_a_test_starts_can_be_interrupted(self) -> None:
        """A process a test starts does not inherit an ignored SIGINT, however the suite was
        launched: a shell's background job (`pytest &`, the soak's run beside another) starts
        with SIGINT ignored, and without tests/conftest.py's reset every Ctrl-C test failed
        there."""
        import subprocess
        import sys

        code = "import signal, sys; sys.exit(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
        assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
