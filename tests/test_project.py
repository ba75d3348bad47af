"""The project's promises to a newcomer: the README's commands are the ones CI runs."""

from __future__ import annotations

import re

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
