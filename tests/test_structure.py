"""What the code's structure promises (docs/architecture.md), read from the source (AST).

Faces decide by enums, never by a string's spelling; the TUI stands on the relay's public
protocol; watching is pending's alone; and no function grows past what a reader takes in.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FACES = ("cli", "relay", "tui", "mcp", "web")
# The fields whose values are enums (Outcome, State, Decision, Via, Scope, AnswerFate…).
VERDICT_NAMES = {"outcome", "state", "decision", "via", "scope", "asker", "by", "delivery"}
MAX_FUNCTION_LINES = 100
# The functions that pressed that cap (issue 56), split into named steps: each, and each step,
# stays well under it, so the next rule added there starts a step of its own.
SPLIT_FUNCTIONS = {
    "wisp/_answering.py": ("_publish_and_wait", "_publish", "_follow"),
    "pending/_fsio.py": ("publish", "_write_staged", "_link_staged", "_tell_published"),
    "pending/_state.py": ("derive_status", "_slot_held", "_waiting"),
    "wisp/cli/approvals.py": ("request_approval", "_ask_approval", "_say_verdict"),
}
MAX_SPLIT_LINES = 70


def _sources(*parts: str) -> Iterator[Path]:
    yield from sorted(ROOT.joinpath(*parts).rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _named(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _strings(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_strings(e) for e in node.elts)
    return False


def _face_sources() -> list[Path]:
    return [p for face in FACES for p in _sources("wisp", face)]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


class TestFacesCompareEnums:
    @pytest.mark.parametrize("path", _face_sources(), ids=_rel)
    def test_no_verdict_compared_to_a_string(self, path: Path) -> None:
        """No face compares an outcome, state, decision, via or scope to a string literal
        (`outcome == "granted"`): it compares the enum the application returns."""
        found = []
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            ops_ok = all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops)
            names = {_named(side) for side in sides} & VERDICT_NAMES
            if ops_ok and names and any(_strings(side) for side in sides):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        assert not found, found


class TestTheTuiStandsOnTheRelay:
    @pytest.mark.parametrize("path", list(_sources("wisp", "tui")), ids=_rel)
    def test_no_private_relay_module(self, path: Path) -> None:
        """The TUI imports the relay's public protocol, never one of its private modules."""
        private = [
            node.module
            for node in ast.walk(_tree(path))
            if isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("wisp.relay._")
        ]
        assert not private, private


class TestWatchingIsPendings:
    @pytest.mark.parametrize("path", list(_sources("wisp")), ids=_rel)
    def test_wisp_imports_no_watchdog(self, path: Path) -> None:
        """Nothing in wisp/ imports watchdog, at the top or inside a function: watching is
        pending's one edge."""
        found = []
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Import):
                found += [a.name for a in node.names if a.name.split(".")[0] == "watchdog"]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == (
                "watchdog"
            ):
                found.append(node.module or "")
        assert not found, found


class TestFunctionsStayShort:
    @pytest.mark.parametrize("path", [*_sources("pending"), *_sources("wisp")], ids=_rel)
    def test_no_function_longer_than_the_limit(self, path: Path) -> None:
        """No function in pending/ or wisp/ is longer than MAX_FUNCTION_LINES lines."""
        long = [
            f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
            for node in ast.walk(_tree(path))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
        ]
        assert not long, long

    @pytest.mark.parametrize("path", sorted(SPLIT_FUNCTIONS))
    def test_the_split_functions_stay_well_under_it(self, path: str) -> None:
        """The four functions that pressed the cap (answering, publishing, deriving a state,
        `wisp approvals request`) and their steps are each at most MAX_SPLIT_LINES lines;
        every one named is found (a step renamed or folded back is seen here)."""
        lengths = {
            node.name: node.end_lineno - node.lineno + 1
            for node in ast.walk(_tree(ROOT / path))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno is not None
        }
        named = SPLIT_FUNCTIONS[path]
        assert set(named) <= set(lengths), set(named) - set(lengths)
        long = {name: lengths[name] for name in named if lengths[name] > MAX_SPLIT_LINES}
        assert not long, long
