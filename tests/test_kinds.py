"""Each kind is one module of wisp/kinds/: every face asks its view, none switches on a kind.

The proof is a throwaway fourth kind (tests/toykind.py): its row in pending.KINDS, its binding
record and its view, and nothing else. The real CLI lists, shows and answers it in real
processes; the relay carries it; the TUI's model reads and renders it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pexpect
import pytest
from relayproc import RelayProcess
from toykind import ToyBinding, toy_kind

from pending import KINDS, Channel, Decision, Kind, Outcome
from wisp import Asker
from wisp.audit.writer import EntryPoint
from wisp.kinds import view, views
from wisp.tui._model import Waiting, answer_word, asked, detail, read_relay_line

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
TOY = TESTS / "toykind.py"


def toy_wisp(*args: str) -> subprocess.CompletedProcess[str]:
    """`wisp ARGS` in a real process that has the toy kind."""
    return subprocess.run(
        [sys.executable, str(TOY), *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def toy(home: Path) -> Iterator[tuple[Asker, str]]:
    """The toy kind, and one toy request filed by a live asker in this process."""
    with toy_kind() as kind, Channel.open(home) as channel:
        asker = Asker(channel, entry_point=EntryPoint.APPROVALS, client="toy-test")
        try:
            toy_view = view(kind)
            request = asker.file(
                kind,
                ToyBinding(wish="a pony", where="/srv/stable"),  # type: ignore[arg-type]
                title=toy_view.title,
                body=lambda rid: toy_view.body("wish for a pony", rid),
                timeout_s=600,
            )
            yield asker, request.id
        finally:
            asker.close()


class TestThrowawayKind:
    def test_listed_by_the_cli(self, toy: tuple[Asker, str]) -> None:
        """`wisp pending` lists a toy request with what its view says is asked, and its
        `--json` names the kind and the binding as written."""
        _, request_id = toy
        listing = toy_wisp("pending")
        assert listing.returncode == 0, listing.stderr
        assert request_id in listing.stdout and "wish for a pony" in listing.stdout
        rows = json.loads(toy_wisp("pending", "--json").stdout)
        assert [(r["id"], r["kind"], r["binding"]["wish"]) for r in rows] == [
            (request_id, "toy", "a pony")
        ]
        narrowed = toy_wisp("toys", "pending")
        assert narrowed.returncode == 0 and request_id in narrowed.stdout

    def test_shown_by_the_cli(self, toy: tuple[Asker, str]) -> None:
        """`wisp show ID` shows the toy's noun, its detail rows and its answering commands."""
        _, request_id = toy
        shown = toy_wisp("show", request_id)
        assert shown.returncode == 0, shown.stderr
        assert "a wish to grant" in shown.stdout
        assert "/srv/stable" in shown.stdout
        assert f"wisp toys grant {request_id}" in shown.stdout
        assert f"wisp toys refuse {request_id}" in shown.stdout

    def test_answered_from_a_terminal(self, toy: tuple[Asker, str]) -> None:
        """`wisp toys grant ID`, typed in a real terminal, answers the toy request; the asker
        in this process settles it, and the CLI says it in the view's words."""
        asker, request_id = toy
        child = pexpect.spawn(
            sys.executable,
            [str(TOY), "toys", "grant", request_id[:6]],
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 200),
        )
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before
        assert f"granted ({request_id}); the asker has it." in child.before
        ending = asker.wait(request_id, 30)
        assert ending is not None and ending.outcome is Outcome.ANSWERED
        assert ending.decision == "once"

    def test_carried_by_the_relay_and_read_by_the_tui(
        self, toy: tuple[Asker, str], home: Path
    ) -> None:
        """A front end that declares the toy's effect is sent the toy request by a real
        relay; the TUI's model reads that line and renders it in the view's words."""
        _, request_id = toy
        relay = RelayProcess(home, wisp=(str(TOY),))
        try:
            relay.hello(effects=["grant-wishes"])
            line = next(ln for ln in relay.seen if ln.get("type") == "approval")
            assert (line["id"], line["kind"], line["wish"]) == (request_id, "toy", "a pony")
            raw = next(r for r in relay.raw if request_id.encode() in r)
        finally:
            relay.close()
        item = read_relay_line("local", raw)
        assert isinstance(item, Waiting) and item.kind.value == "toy"
        assert asked(item) == "wish for a pony"
        rows = dict(detail(item, datetime.now(UTC)))
        assert (rows["wish"], rows["at"], rows["id"]) == ("a pony", "/srv/stable", request_id)
        assert answer_word(item.kind, Decision.ONCE) == "granted"

    def test_a_front_end_without_its_effect_is_not_sent_it(
        self, toy: tuple[Asker, str], home: Path
    ) -> None:
        """A front end that declares only the three kinds' effects is not sent a toy."""
        relay = RelayProcess(home, wisp=(str(TOY),))
        try:
            ready = relay.hello()
        finally:
            relay.close()
        assert not [ln for ln in relay.seen if ln.get("type") == "approval"]
        assert ready["type"] == "ready"

    def test_the_kind_leaves_no_trace(self, home: Path) -> None:
        """Out of its block, the toy kind is gone from the channel and from the views."""
        with toy_kind() as kind:
            assert kind in KINDS and view(kind).group == "toys"
        assert "toy" not in {k.value for k in Kind}
        assert [v.kind for v in views()] == list(Kind)


ANSWER_COMMANDS = (
    "wisp approvals approve",
    "wisp approvals deny",
    "wisp facts keep",
    "wisp facts drop",
    "wisp questions answer",
    "wisp questions decline",
    "wisp tools approve",
    "wisp tools deny",
)


class TestOnePlace:
    def test_answer_commands_are_written_once(self) -> None:
        """The commands that answer each kind are written in its module of wisp/kinds/ and
        nowhere else in pending/ or wisp/ (code and strings: a docstring may name them)."""
        found = []
        for path in sorted(
            [*ROOT.joinpath("pending").rglob("*.py"), *ROOT.joinpath("wisp").rglob("*.py")]
        ):
            tree = ast.parse(path.read_text())
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(
                    node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)
                )
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docstrings
                ) and any(c in node.value for c in ANSWER_COMMANDS):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        allowed = {f"wisp/kinds/{v.kind.value}.py" for v in views()}
        assert {f.split(":")[0] for f in found} <= allowed, found

    def test_the_answerable_states_and_a_facts_contradictions_are_defined_once(self) -> None:
        """Which states can be answered is written once (wisp.ANSWERABLE, in the kinds' view
        module), and which kept facts a fact contradicts is asked of the facts store in one
        place (wisp.contradicted, the fact kind's module): every face uses those."""
        states, asks = set(), set()
        for path in sorted(ROOT.joinpath("wisp").rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
                    named = {
                        e.attr
                        for e in node.elts
                        if isinstance(e, ast.Attribute)
                        and isinstance(e.value, ast.Name)
                        and e.value.id == "State"
                    }
                    if named == {"FILED", "HANDED_OVER"} and len(node.elts) == 2:
                        states.add(str(path.relative_to(ROOT)))
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "contradicting"
                ):
                    asks.add(str(path.relative_to(ROOT)))
        assert states == {"wisp/kinds/_view.py"}  # found, and only there
        assert asks == {"wisp/kinds/fact.py"}

    def test_every_kind_has_a_view(self) -> None:
        """Every kind of the channel has its view, and each view's decisions are its kind's."""
        assert [v.kind for v in views()] == list(KINDS)
        for kind_view in views():
            given = {d for a in kind_view.answering for d in a.decisions}
            assert given == set(KINDS[kind_view.kind].decisions)
