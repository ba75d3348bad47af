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
FACES = ("cli", "relay", "tui", "mcp", "web")
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
        """audit() is called from the application alone (wisp's core and wings), never from
        a face."""
        callers = set()
        for path in _modules("wisp"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "audit"
                ):
                    callers.add(_dotted(path))
        assert callers, "nothing audits: the test reads the wrong files"
        assert not [c for c in callers if _layer(c) == FACE_LAYER], callers


# --- the wings (docs/architecture.md, "The wings") ----------------------------------------
#
# Bottom to top: the small shared helpers (wisp's own modules that import no other wing),
# the lower wings in the order their imports allow, the asking and answering core, the
# agents wing, the faces. A module may import its own layer or any below, never one above.
HELPERS = {
    "wisp._deadlines",
    "wisp._entry",
    "wisp._extras",
    "wisp._home",
    "wisp._lines",
    "wisp._manual",
    "wisp._startup",
    "wisp._text",
    "wisp._version",
}
CORE = {
    "wisp._answering",
    "wisp._asking",
    "wisp._doctor",
    "wisp._hello",
    "wisp._live",
    "wisp._lookup",
    "wisp._render",
    "wisp._waiting",
}
# The program (a face): what runs before the CLI loads (a harness's hook, `wisp mcp`, `wisp
# pending --json`), else the CLI's main; and what it writes, shared with the CLI.
PROGRAM = {"wisp.__main__", "wisp._program"}
LAYERS = ("helpers", "audit", "stores", "kinds", "routes", "core", "agents", "faces")
FACE_LAYER = LAYERS.index("faces")
WINGS = ("audit", "stores", "kinds", "routes", "agents")
# wisp/*.py beside the wings: the core, the helpers, the facade, the program (`__main__`, and
# `_program`: what it writes without the CLI's framework, shared with the CLI).
MAX_OWN_MODULES = 20


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    """The layer of a module of wisp (by its dotted name)."""
    parts = module.split(".")
    if module == "wisp":  # the public facade, which names AgentSession and all below it
        return LAYERS.index("agents")
    if module in PROGRAM:
        return FACE_LAYER
    if module in HELPERS:
        return LAYERS.index("helpers")
    if module in CORE:
        return LAYERS.index("core")
    if len(parts) > 1 and parts[1] in WINGS:
        return LAYERS.index(parts[1])
    if len(parts) > 1 and parts[1] in (*FACES, "web"):
        return FACE_LAYER
    raise AssertionError(f"{module} is in no layer: add it to a wing, CORE or HELPERS")


def _imports(path: Path, *, module_level: bool) -> Iterator[tuple[int, str]]:
    """(line, module) for each module of wisp that *path* imports: everywhere, or only at
    module level (a `TYPE_CHECKING` block included, a function's body not)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes: list[ast.AST] = list(tree.body) if module_level else list(ast.walk(tree))
    if module_level:  # the bodies of module-level if/try blocks (TYPE_CHECKING) count too
        for node in list(nodes):
            if isinstance(node, (ast.If, ast.Try)):
                nodes.extend(ast.walk(node))
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            if base == "wisp":  # `from wisp import _x` names a module of wisp
                for alias in node.names:
                    yield node.lineno, f"wisp.{alias.name}"
            elif base.startswith("wisp."):
                yield node.lineno, base
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("wisp."):
                    yield node.lineno, alias.name


def _importers() -> list[Path]:
    top = ROOT / "wisp" / "__init__.py"  # the facade names everything, lazily: above all
    return [p for p in _modules("wisp") if p != top and p.name != "__main__.py"]


def _module_of(name: str, known: set[str]) -> str:
    """The module *name* is, or is in (`wisp.kinds.view` → `wisp.kinds`)."""
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


class TestWings:
    def test_wisp_is_laid_out_in_wings(self) -> None:
        """wisp/ holds the five wings, each a package whose docstring says what it is, and
        at most 20 modules of its own beside them."""
        for wing in WINGS:
            init = ROOT / "wisp" / wing / "__init__.py"
            assert init.is_file(), f"wisp/{wing}/ is not a package"
            assert ast.get_docstring(ast.parse(init.read_text())), f"wisp/{wing}/ says nothing"
        own = sorted(p.name for p in (ROOT / "wisp").glob("*.py"))
        assert len(own) <= MAX_OWN_MODULES, own

    def test_every_module_has_a_layer(self) -> None:
        """Every module of wisp belongs to one layer: a wing, the core, the helpers, a face."""
        for path in _importers():
            _layer(_dotted(path))

    @pytest.mark.parametrize("path", _importers(), ids=lambda p: str(p.relative_to(ROOT)))
    def test_no_module_imports_a_layer_above_its_own(self, path: Path) -> None:
        """faces → agents → the core → routes → kinds → stores → audit → helpers: an
        import (at any depth, a function's lazy one included) goes down or across, never up."""
        known = {_dotted(p) for p in _modules("wisp")}
        own = _layer(_dotted(path))
        upward = [
            f"line {line}: {name}"
            for line, name in _imports(path, module_level=False)
            if _layer(_module_of(name, known)) > own
        ]
        assert not upward, upward

    def test_no_circle_among_module_level_imports(self) -> None:
        """No module of wisp reaches itself again through the imports made as modules load
        (`TYPE_CHECKING` blocks counted): each layer stands on the ones below."""
        known = {_dotted(p) for p in _modules("wisp")}
        graph = {
            _dotted(p): {_module_of(n, known) for _, n in _imports(p, module_level=True)}
            for p in _importers()
        }
        done: set[str] = set()

        def visit(node: str, trail: tuple[str, ...]) -> None:
            if node in trail:
                circle = (*trail[trail.index(node) :], node)
                raise AssertionError(" → ".join(circle))
            if node in done:
                return
            for nxt in sorted(graph.get(node, ())):
                if nxt != node:
                    visit(nxt, (*trail, node))
            done.add(node)

        for start in sorted(graph):
            visit(start, ())

    def test_a_kinds_gate_never_imports_the_core(self) -> None:
        """A kind's gate is handed the asker it uses (typed by wisp.kinds._asker's protocol):
        nothing in wisp/kinds/ imports wisp._asking or wisp._answering."""
        found = [
            f"{path.name} line {line}: {name}"
            for path in _modules("wisp", "kinds")
            for line, name in _imports(path, module_level=False)
            if name in CORE
        ]
        assert not found, found

    def test_the_checks_see_an_upward_import(self, tmp_path: Path) -> None:
        """The direction check reads what it should: a store importing the core is caught."""
        source = tmp_path / "bad.py"
        source.write_text("def f():\n    from wisp._asking import Asker\n")
        names = [name for _, name in _imports(source, module_level=False)]
        assert names == ["wisp._asking"]
        assert _layer("wisp._asking") > _layer("wisp.stores.grants")
