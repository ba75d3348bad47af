"""The docs say what the program does, for each thing issue 40 found them saying otherwise:
the README's listing, its quoted deny, its Python snippets; docs/cli.md's topics and `wisp
log --kind`; docs/relay.md's effects; docs/tui.md's footer; docs/mcp.md's `scope`; and
`wisp docs` wrapped to the terminal. Words checked against the program, not against
themselves, wherever the program can say them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
from helpers import ROOT, run_wisp, wisp_spawn
from relayproc import RelayProcess
from test_tui import WispTui, screen_text, tui

from pending import CommandBinding, Kind, Scope, Width
from pending._offers import width_problem
from wisp.kinds import views
from wisp.kinds.command_gate import Widths, offers_for
from wisp.stores.grants import GrantStore

DOCS = ROOT / "docs"


def text(name: str) -> str:
    return (ROOT / name).read_text()


class TestReadme:
    def test_the_listing_says_when_it_is_a_block(self) -> None:
        """The README no longer says its block is what 80 columns prints, full stop: it
        says the layout depends on what each request shows."""
        readme = " ".join(text("README.md").split())
        assert "depends on the width and on what each request shows" in readme
        assert "(as here, at 80 columns):" not in readme

    def test_the_quoted_deny_names_the_login_as_the_hook_does(self) -> None:
        """Claude Code's deny reason names the person's login name (the hook writes the
        answer's `user`), so the README quotes a login name, not "you"."""
        readme = " ".join(text("README.md").split())
        assert "denied by you via cli" not in readme
        assert "`wisp: denied by ana via cli at … : keep the build`" in readme

    def test_the_python_snippets_say_where_to_run_them_and_who_answers(self) -> None:
        """The README says the snippets fail from the directory holding a clone named wisp,
        and that the Answerer takes answers with no terminal (the rule is the faces')."""
        readme = " ".join(text("README.md").split())
        assert (
            "Run these, and keep scripts that use them, anywhere but the directory that holds"
            " your clone" in readme
        )
        assert "The `wisp` command and the relay take answers only from a terminal" in readme
        assert "with no terminal asked for" in readme


class TestCliMd:
    def test_the_docs_topics_are_those_wisp_docs_lists(self, home: Path) -> None:
        """docs/cli.md's list of `wisp docs` topics is exactly what `wisp docs` prints."""
        shown = run_wisp("docs", env={"COLUMNS": "200"}).stdout  # a topic a line
        listed = [line.split()[0] for line in shown.splitlines()[1:]]
        said = " ".join(text("docs/cli.md").split())
        found = re.search(r"`wisp docs` lists the topics \(([^)]*)\)", said)
        assert found is not None
        assert re.findall(r"`([a-z]+)`", found.group(1)) == listed

    def test_log_kind_lists_every_kind(self) -> None:
        """`wisp log --kind` takes every kind, and docs/cli.md names each."""
        said = text("docs/cli.md")
        line = next(x for x in said.splitlines() if x.startswith("- `--kind K` (`-k`"))
        for kind_view in views():
            assert f"`{kind_view.kind.value}`" in line, line

    def test_a_grant_id_keeps_its_g(self, home: Path) -> None:
        """The README's "4 or more characters" is a request's: it says a grant's start keeps
        its `g` (`g7446`), and the program holds it to that: 4 characters without the `g`
        are refused where the `g` and 4 find the grant (the control)."""
        readme = " ".join(text("README.md").split())
        assert "the first 4 or more characters of a request's ID will do" in readme
        assert "a grant's `g74467441` is `g7446`" in readme
        home.mkdir(mode=0o700)
        grant = GrantStore(home).add(
            command="make test", cwd="/tmp", scope=Scope.ALWAYS, request="0" * 16, user="ana"
        )
        without_g = run_wisp("approvals", "revoke", grant.id[1:5])
        assert without_g.returncode == 1 and "g and at least 4" in without_g.stderr
        assert run_wisp("approvals", "revoke", grant.id[:5]).returncode == 0

    def test_the_widths_it_names_are_the_programs(self) -> None:
        """docs/cli.md's `--width` takes every width the program does (and docs/channel.md's
        table names each), and the refusals both quote are the program's words for the same
        requests: a must-ask call answered `always`, a prefix not offered."""
        cli, channel = text("docs/cli.md"), text("docs/channel.md")
        for width in Width:
            assert f"| `{width.value}`" in cli or f"| `{width.value}` (the default)" in cli
            assert f"| `{width.value}` |" in channel
        must = CommandBinding(
            command="curl x",
            cwd="/",
            offers=offers_for(Widths(must_ask=("it reaches the network (curl)",)), Kind.COMMAND),
        )
        wide = CommandBinding(
            command="npm test",
            cwd="/",
            offers=offers_for(Widths(prefixes=(("npm", "test"),)), Kind.COMMAND),
        )
        refusals = [
            width_problem(must, "always", None),
            width_problem(wide, "always", {"name": "command", "prefix": ["npm", "x"]}),
        ]
        for problem in refusals:
            assert problem is not None
            said = f"{problem[0]}. {problem[1]}"
            assert said in " ".join(channel.split()), said
        assert f"{refusals[0][0]}. {refusals[0][1]}" in " ".join(cli.split())

    def test_the_import_error_it_quotes_is_pythons(self, tmp_path: Path) -> None:
        """The README quotes what a script run from the folder that holds the clone meets
        (an editable install, a clone named `wisp` beside the script): Python's words, as
        quoted; an install that is not editable is found there all the same. The control:
        the same script run from another folder imports wisp."""
        readme = text("README.md")
        quoted = next(line for line in readme.splitlines() if line.startswith("ImportError:"))
        beside = tmp_path / "src"
        beside.mkdir()
        (beside / "wisp").symlink_to(ROOT)
        script = "from wisp import ApprovalGate\nprint(ApprovalGate.__name__)\n"
        (beside / "my_script.py").write_text(script)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "my_script.py").write_text(script)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        fine = subprocess.run(
            [sys.executable, "my_script.py"], cwd=elsewhere, capture_output=True, text=True, env=env
        )
        assert (fine.returncode, fine.stdout) == (0, "ApprovalGate\n"), fine.stderr
        shadowed = subprocess.run(
            [sys.executable, "my_script.py"], cwd=beside, capture_output=True, text=True, env=env
        )
        import wisp

        if not Path(wisp.__file__).resolve().is_relative_to(ROOT.resolve()):
            # Not an editable install: as the README says, it is found first anywhere.
            assert (shadowed.returncode, shadowed.stdout) == (0, "ApprovalGate\n")
            return
        assert shadowed.returncode == 1
        assert shadowed.stderr.splitlines()[-1] == quoted


class TestRelayMd:
    def test_every_effect_is_in_the_table(self) -> None:
        """docs/relay.md's effects table names each kind's effect (approve-tools among
        them) and notify: a front end built from it is sent every kind."""
        said = text("docs/relay.md")
        table = set(re.findall(r"^\| `([a-z-]+)` \| ", said, re.M))
        for kind_view in views():
            assert kind_view.effect in table, kind_view.effect
        assert "notify" in table

    def test_every_ready_example_has_the_relays_fields(self, home: Path) -> None:
        """Each `ready` line docs/relay.md shows has the fields a real `wisp relay` writes
        in its `ready` (`via` and `answers` among them), no more, no fewer."""
        with RelayProcess(home) as relay:
            ready = relay.hello()
        shown = [
            json.loads(line)
            for line in text("docs/relay.md").splitlines()
            if line.startswith('{"type":"ready"')
        ]
        assert len(shown) >= 2
        for example in shown:
            assert list(example) == list(ready), example


class TestTuiMd:
    def test_the_footer_at_80_columns_is_the_apps(self, home: Path) -> None:
        """The footer docs/tui.md draws at 80 columns is the one the TUI draws, whole."""

        async def body(app: WispTui, pilot: Any) -> None:
            await pilot.pause()
            footer = screen_text(app)[-1].rstrip()
            drawn = [x.rstrip() for x in text("docs/tui.md").splitlines() if "⏎ answer" in x]
            assert footer in drawn, (footer, drawn)
            assert footer.endswith("i detail"), footer

        tui(home, body, size=(80, 24))

    def test_f_cycles_every_kind(self) -> None:
        """docs/tui.md's `f` row names every kind in its cycle."""
        row = next(x for x in text("docs/tui.md").splitlines() if x.startswith("| `f` |"))
        for kind_view in views():
            assert kind_view.kind.value in row, row


class TestMcpMd:
    def test_ask_persons_scope_is_documented(self) -> None:
        """`ask_person`'s result carries `scope` (null for a question), and says so."""
        said = " ".join(text("docs/mcp.md").split())
        assert "`scope`, always `null` for a question" in said


class TestWispDocsWraps:
    def test_a_page_is_wrapped_to_an_80_column_terminal(self, home: Path) -> None:
        """`wisp docs relay` in an 80-column terminal: every line of prose fits (tables and
        code stay as written, for the pager to scroll)."""
        child = pexpect.spawn(
            *wisp_spawn("docs", "relay"),
            encoding="utf-8",
            timeout=60,
            dimensions=(24, 80),
            env={**os.environ, "PAGER": "cat", "MANPAGER": "cat"},
        )
        child.expect(pexpect.EOF)
        child.close()
        lines = (child.before or "").replace("\r\n", "\n").splitlines()
        fenced = False
        for line in lines:
            if line.startswith("```"):
                fenced = not fenced
                continue
            if fenced or line.startswith(("|", "#")):
                continue
            words = line.split()
            if len(words) == 1:
                continue  # a single word longer than the line is never broken
            assert len(line) < 80, line
