"""The three layers hold: faces call the application; the application uses pending's facade.

docs/architecture.md draws them. These read the source (AST), so a face that starts publishing,
settling or auditing by itself fails here before it can drift from the one answering path.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FACES = ("cli", "relay", "tui", "mcp")
# What only the application layer may do with a channel: write to it, sweep it, audit it.
CHANNEL_WRITES = {"publish", "settle", "claim", "file", "sweep", "answer"}
FACE_FORBIDDEN_NAMES = {"audit", "Watcher", "RequestWatch", "apply_answered", "apply_awaiting"}


def _modules(*parts: str) -> Iterator[Path]:
    base = ROOT.joinpath(*parts)
    if base.exists():
        yield from sorted(base.rglob("*.py"))


def _face_modules() -> list[Path]:
    return [path for face in FACES for path in _modules("wisp", face)]


def _receiver(node: ast.Attribute) -> str:
    value = node.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else ""


class TestFaces:
    @pytest.mark.parametrize("path", _face_modules(), ids=lambda p: str(p.relative_to(ROOT)))
    def test_a_face_neither_writes_the_channel_nor_audits(self, path: Path) -> None:
        """No face module calls a channel's write methods, audit(), or builds its own
        watcher or answer-applier: it goes through Answerer, Asker, Inbox and the stores."""
        tree = ast.parse(path.read_text(), filename=str(path))
        offences = []
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in CHANNEL_WRITES
                and _receiver(node.func) == "channel"
            ):
                offences.append(f"line {node.lineno}: channel.{node.func.attr}()")
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in FACE_FORBIDDEN_NAMES:
                        offences.append(f"line {node.lineno}: imports {alias.name}")
        assert not offences, offences

    def test_the_cli_has_its_command_modules(self) -> None:
        """The CLI is a package of thin command modules, one per group."""
        names = {p.stem for p in _modules("wisp", "cli")}
        assert {"approvals", "questions", "facts", "pending", "admin"} <= names


class TestApplication:
    @pytest.mark.parametrize("path", list(_modules("wisp")), ids=lambda p: str(p.relative_to(ROOT)))
    def test_wisp_uses_only_pendings_public_facade(self, path: Path) -> None:
        """Nothing in wisp imports a private module of pending (pending._x)."""
        tree = ast.parse(path.read_text(), filename=str(path))
        private = [
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("pending._")
        ]
        assert not private, private

    def test_only_the_application_audits(self) -> None:
        """audit() is called from the application modules alone (wisp/_*.py)."""
        callers = set()
        for path in _modules("wisp"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "audit"
                ):
                    callers.add(path.relative_to(ROOT).parts[1])
        assert callers and all(name.startswith("_") for name in callers), callers
