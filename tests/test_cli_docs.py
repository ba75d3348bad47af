"""`wisp docs [TOPIC]`: the pages an installed wisp can show, and the install hints its
messages give for a missing extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pexpect
import pytest
from cliterm import spawn
from helpers import ROOT, run_wisp, wisp_command

from wisp._errors import install_hint, requirements
from wisp.cli._manual import topics

PAGES = sorted(path.stem for path in (ROOT / "docs").glob("*.md"))


class TestDocsCommand:
    def test_lists_every_page(self, home: Path) -> None:
        """Without a topic: every page of docs/, one per line with what it is about (its
        title), and how to read one; at 40 columns the line wraps under its title."""
        done = run_wisp("docs", env={"COLUMNS": "200"})
        assert done.returncode == 0, done.stderr
        rows = [line.split(maxsplit=1) for line in done.stdout.splitlines()[1:]]
        assert [name for name, _ in rows] == PAGES
        for name, said in rows:
            title = (ROOT / "docs" / f"{name}.md").read_text().splitlines()[0]
            assert said == title.removeprefix("# ").replace("`", ""), name
        assert "wisp docs TOPIC" in done.stdout
        narrow = run_wisp("docs", env={"COLUMNS": "40"})
        assert all(len(line) <= 40 for line in narrow.stdout.splitlines()), narrow.stdout

    def test_a_page_piped_is_printed_plain(self, home: Path) -> None:
        """Piped, `wisp docs relay` prints the relay's page as it is, nothing added."""
        done = run_wisp("docs", "relay")
        assert done.returncode == 0, done.stderr
        assert done.stdout == (ROOT / "docs" / "relay.md").read_text()

    def test_in_a_terminal_it_goes_through_the_pager(self, home: Path) -> None:
        """In a terminal the page goes through $PAGER (here one that marks what it got)."""
        pager = home.parent / "pager"
        pager.write_text("#!/bin/sh\necho PAGED; head -n 1\n")
        pager.chmod(0o755)
        child = spawn("docs", "tui", cols=80, env={"PAGER": str(pager), "MANPAGER": ""})
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert "PAGED" in child.before and "# " in child.before

    def test_an_unknown_topic_is_refused_with_the_list(self, home: Path) -> None:
        """An unknown topic: exit 2, naming every topic and how to read one."""
        done = run_wisp("docs", "nope")
        assert done.returncode == 2
        flat = " ".join(done.stderr.split())
        assert "there is no page 'nope'" in flat and ", ".join(PAGES) in flat
        assert "Traceback" not in done.stderr

    def test_the_topics_are_the_pages(self) -> None:
        """In a clone (an editable install) the topics are docs/'s pages."""
        assert topics() == PAGES


class TestInstallHints:
    def test_the_extras_requirements_come_from_the_metadata(self) -> None:
        """The hint names what pyproject's extra lists, not a guess."""
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        for extra in ("tui", "mcp"):
            listed = {r.replace(" ", "") for r in project["optional-dependencies"][extra]}
            got = {r.replace(" ", "") for r in requirements(extra)}
            assert {r.split(">")[0].split("<")[0] for r in got} == {
                r.split(">")[0].split("<")[0] for r in listed
            }

    def test_a_clone_is_told_to_add_the_extra_to_its_editable_install(self) -> None:
        """Run from a clone: the command installs the clone again with the extra, into the
        very interpreter that runs wisp."""
        hint = install_hint("tui")
        assert f"{sys.executable} -m pip install -e" in hint and f"{ROOT}[tui]" in hint


class TestPackage:
    def test_every_package_is_listed(self) -> None:
        """pyproject lists its packages (docs/ ships as wisp._docs): every package directory
        of pending/ and wisp/ is among them, so none is left out of a wheel."""
        setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
        found = {
            ".".join(init.parent.relative_to(ROOT).parts)
            for top in ("pending", "wisp")
            for init in (ROOT / top).rglob("__init__.py")
        }
        assert set(setuptools["packages"]) == found | {"wisp._docs"}
        assert setuptools["package-dir"] == {"wisp._docs": "docs"}
        assert setuptools["package-data"]["wisp._docs"] == ["*.md"]

    def test_the_license_is_the_one_the_metadata_names(self) -> None:
        """A LICENSE file, MIT as `license` says."""
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
        text = (ROOT / "LICENSE").read_text()
        assert text.startswith("MIT License") and "the wisp authors" in text

    @pytest.mark.parametrize("extra", ["tui", "mcp"])
    def test_no_message_names_an_index_that_has_no_wisp(self, extra: str) -> None:
        """No message tells a person to `pip install 'wisp-pending[...]'`: no index has it."""
        for path in sorted((ROOT / "wisp").rglob("*.py")):
            text = path.read_text()
            assert f"pip install 'wisp-pending[{extra}]'" not in text.replace(
                "named `pip install 'wisp-pending[tui]'`", ""
            ), path

    def test_messages_point_to_wisp_docs_not_files(self) -> None:
        """A message or help text an installed user reads names `wisp docs TOPIC`, never a
        docs/*.md file a wheel does not have at that path."""
        done = subprocess.run(wisp_command("--help"), capture_output=True, text=True, timeout=60)
        assert "docs/" not in done.stdout and "wisp docs relay" in done.stdout
