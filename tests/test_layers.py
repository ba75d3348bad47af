"""The three layers hold: faces call the application; the application uses pending's facade.

docs/architecture.md draws them. These read the source (AST), so a face that starts publishing,
settling or auditing by itself fails here before it can drift from the one answering path.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import pending
import wisp

ROOT = Path(__file__).resolve().parent.parent
FACES = ("cli", "relay", "tui", "mcp", "web")
# What only the application layer may do with a channel: write to it, sweep it, audit it.
CHANNEL_WRITES = {"publish", "settle", "claim", "file", "sweep", "answer"}

# --- what a face may import (docs/architecture.md, "The layers") -------------------------
#
# A face parses, calls the application, renders. It imports its own package, and of the rest
# only what is named here: everything else of wisp and pending is behind the facade.
FACE_MAY_IMPORT = {
    "wisp": "the application's facade: its queries, stores, askers and records",
    "wisp.kinds": "the kinds' views: every per-kind word a face shows",
    "wisp.kinds._view": "the views' parts (KindView, ANSWERABLE)",
    "wisp.kinds.command": "the command kind's view and its words",
    "wisp.kinds.fact": "the fact kind's view and its words",
    "wisp.kinds.question": "the question kind's view and its words",
    "wisp.kinds.tool": "the tool kind's view and its words",
    "wisp.relay.protocol": "the relay's wire (pure), which the TUI and any front end speak",
    "wisp.relay.hosts": "a front end's names for its relays: this machine's, a host's (pure)",
    "wisp._text": "text made visible, wrapped (pure)",
    "wisp._render": "how a request reads, its JSON shape (pure)",
    "wisp._lines": "lines split, an overlong one skipped (pure)",
    "wisp._errors": "the application's error root (WispError) and which extra adds a face",
}
# The CLI also imports its typer-free half (what runs before typer loads) and the faces it
# starts (`wisp relay`, `wisp tui`, `wisp mcp`, `wisp web`), by their packages' front doors.
CLI_MAY_IMPORT = {
    "wisp.program.writes",
    "wisp.program.lookup",
    "wisp.program.waiting",
    "wisp.relay",
    "wisp.tui",
    "wisp.mcp",
    "wisp.web",
}
# pending's vocabulary: its enums, records and errors (by the module that defines them), and
# the pure functions that read and write them (IDs, times, a record from its JSON).
PENDING_VOCABULARY_HOMES = {
    "pending._names",
    "pending._records",
    "pending._bindings",
    "pending._errors",
    "pending._kinds",
    "pending._offers",  # what a request offers, an answer's width: pure, read by faces
}
PENDING_VOCABULARY_NAMES = {
    "DecodeError",  # an error (of pending._json)
    "Event",  # what happened to a request, an enum (of pending._watch)
    "Missed",  # records a subscription hands a reader
    "Transition",
    "format_time",
    "parse_time",
    "is_valid_id",
    "from_json",
    "binding_digest",  # a binding record's digest, as written (pure, of pending._convert)
    "known_json",
    "loads_strict",
    # Not vocabulary, but no channel either: how every thread of a wisp process starts (the
    # ending signals left to the main thread), a face's own threads included.
    "start_thread",
}
# What a face still imports past the application, each with why; nothing else may join.
FACE_EXCEPTIONS = {
    # The harness wing's own commands: `wisp hook NAME` and `wisp agents` are the faces of
    # wisp/agents/ (one record per harness, read from wisp._entry.HARNESS_MODULES), whose queries
    # are not the facade's: a hook's run is the program's fast path, before the CLI loads.
    ("wisp/cli/__init__.py", "wisp.agents.hookio"): "a hook arms its deny (`hookio.arm`) "
    "before the CLI loads: the harness wing's path",
    ("wisp/cli/agents.py", "wisp.agents"): "`wisp agents setup|remove|status`: the harness "
    "wing's hookio and setup, its command's own",
    ("wisp/cli/hook.py", "wisp.agents"): "`wisp hook NAME`: the harness table (hookio), one "
    "command per harness module",
    ("wisp/cli/hook.py", "wisp.agents.install"): "`wisp hook --print-settings`: the install "
    "the printed hook names",
    (
        "wisp/cli/hook.py",
        "wisp.agents.reach",
    ): "the same: its note on a printed hook an agent could rewrite",
    ("wisp/cli/admin.py", "wisp.agents.setup"): "`wisp status` reads each harness's setup "
    "(status, needs_attention)",
    ("wisp/cli/execute.py", "wisp.kinds.programs"): "`wisp exec` seals and runs the approved "
    "program files (sealed_fd, with_programs): the command kind's behaviour, run in the "
    "command's own process, not a query",
    ("wisp/cli/web.py", "wisp.web._server"): "`wisp web` loads the server (starlette, "
    "uvicorn) only when it serves (a front door in wisp.web would close a circle: the "
    "server reads the package's own words)",
    ("wisp/relay/_relay.py", "pending"): "Channel, the type of the channel the relay is "
    "handed (it opens it through the facade, `open_channel`, and reads it only through "
    "the Answerer and the LiveInbox)",
}


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


def _pending_vocabulary(name: str) -> bool:
    home = pending._HOMES.get(name)  # the facade's own table: where each name is defined
    return home is not None and (
        home[0] in PENDING_VOCABULARY_HOMES or name in PENDING_VOCABULARY_NAMES
    )


def _face_of(path: Path) -> str:
    return path.relative_to(ROOT / "wisp").parts[0]


def _past_the_application(path: Path, face: str) -> set[tuple[str, str]]:
    """(module, what) for each import of *path*, a module of *face* (at any depth), that the
    face allowlist does not name: a module of wisp, or names of pending not its vocabulary."""
    allowed = set(FACE_MAY_IMPORT) | (CLI_MAY_IMPORT if face == "cli" else set())
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules = [(alias.name, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [(node.module, ", ".join(alias.name for alias in node.names))]
        else:
            continue
        for module, what in modules:
            if module == "pending" and isinstance(node, ast.ImportFrom):
                behaviour = [a.name for a in node.names if not _pending_vocabulary(a.name)]
                if behaviour:
                    found.add((module, ", ".join(behaviour)))
            elif module.startswith("pending") or (
                module.startswith("wisp")
                and not (
                    module in allowed
                    or module == f"wisp.{face}"
                    or module.startswith(f"wisp.{face}.")
                )
            ):
                found.add((module, what))
    return found


class TestFaces:
    @pytest.mark.parametrize("path", _face_modules(), ids=lambda p: str(p.relative_to(ROOT)))
    def test_a_face_imports_only_the_application(self, path: Path) -> None:
        """A face imports the facade, the kinds' views, the relay protocol, the pure helpers
        and pending's vocabulary (FACE_MAY_IMPORT): no store, route, audit or channel
        behaviour of its own, bar the FACE_EXCEPTIONS, each with its reason."""
        name = str(path.relative_to(ROOT))
        past = {
            (m, w)
            for m, w in _past_the_application(path, _face_of(path))
            if (name, m) not in FACE_EXCEPTIONS
        }
        assert not past, past

    def test_every_exception_is_still_taken(self) -> None:
        """An exception no face needs any more is struck off, so the list only shrinks."""
        taken = {
            (str(path.relative_to(ROOT)), module)
            for path in _face_modules()
            for module, _ in _past_the_application(path, _face_of(path))
        }
        assert set(FACE_EXCEPTIONS) <= taken, set(FACE_EXCEPTIONS) - taken

    def test_the_allowlist_sees_a_face_reaching_past(self, tmp_path: Path) -> None:
        """The check reads what it should: the facade's store and pending's enum pass; the
        store's own module, the channel and an audit writer are each caught."""
        source = tmp_path / "probe.py"
        lines = [
            "from pending import Kind, State",
            "from wisp import GrantStore, contradicted",
            "from wisp.web._board import Board",
            "def f():",
            "    from wisp.stores.grants import GrantStore",
            "    from pending import Channel, Kind",
            "    import wisp.audit.writer",
        ]
        source.write_text("\n".join(lines) + "\n")
        found = _past_the_application(source, "web")
        assert found == {
            ("wisp.stores.grants", "GrantStore"),
            ("pending", "Channel"),
            ("wisp.audit.writer", "wisp.audit.writer"),
        }

    @pytest.mark.parametrize("path", _face_modules(), ids=lambda p: str(p.relative_to(ROOT)))
    def test_a_face_never_writes_the_channel(self, path: Path) -> None:
        """No face module calls a channel's write methods: it goes through Answerer, Asker,
        Inbox and the stores (a channel it is handed by the facade included)."""
        tree = ast.parse(path.read_text(), filename=str(path))
        offences = [
            f"line {node.lineno}: channel.{node.func.attr}()"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CHANNEL_WRITES
            and _receiver(node.func) == "channel"
        ]
        assert not offences, offences

    def test_the_programs_own_half_loads_no_framework(self) -> None:
        """wisp/program/ says what the CLI says without typer, click or rich: none of its
        modules imports them (a function's lazy import included), while the CLI does."""

        def frameworks(path: Path) -> set[str]:
            found = set()
            for node in ast.walk(ast.parse(path.read_text())):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                found |= {n.split(".")[0] for n in names} & {"typer", "click", "rich"}
            return found

        program = list(_modules("wisp", "program"))
        assert len(program) >= 4, program
        assert {f for p in program for f in frameworks(p)} == set()
        assert "typer" in {f for p in _modules("wisp", "cli") for f in frameworks(p)}

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
    "wisp._errors",
    "wisp._home",
    "wisp._lines",
    "wisp._startup",
    "wisp._text",
    "wisp._version",
}
CORE = {
    "wisp._answering",
    "wisp._asking",
    "wisp._doctor",
    "wisp._live",
    "wisp._render",
}
# The program (a face): what runs before the CLI loads (a harness's hook, `wisp mcp`, `wisp
# pending --json`), else the CLI's main; and its own half, wisp/program/ (what it writes, a
# request by what a person types, the listing), shared with the CLI without its framework.
PROGRAM = {"wisp.__main__", "wisp.program"}
LAYERS = ("helpers", "audit", "stores", "kinds", "policy", "routes", "core", "agents", "faces")
FACE_LAYER = LAYERS.index("faces")
WINGS = ("audit", "stores", "kinds", "policy", "routes", "agents")
# wisp/*.py beside the wings and the packages: the core, the helpers, the facade, the
# program's entry (`__main__`).
MAX_OWN_MODULES = 15


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    """The layer of a module of wisp (by its dotted name)."""
    parts = module.split(".")
    if module == "wisp":  # the public facade, which names AgentSession and all below it
        return LAYERS.index("agents")
    if module in PROGRAM or module.startswith("wisp.program."):
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
            elif base.startswith("wisp."):  # `from wisp.relay import protocol`: a module
                for alias in node.names:
                    inner = f"{base}.{alias.name}"
                    yield node.lineno, inner if _is_module(inner) else base
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "wisp" or alias.name.startswith("wisp."):
                    yield node.lineno, alias.name


def _is_module(dotted: str) -> bool:
    """Whether *dotted* names a module or package of this tree (not a name inside one)."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _importers() -> list[Path]:
    top = ROOT / "wisp" / "__init__.py"  # the facade names everything, lazily: above all
    return [p for p in _modules("wisp") if p != top and p.name != "__main__.py"]


def _module_of(name: str, known: set[str]) -> str:
    """The module *name* is, or is in (`wisp.kinds.view` → `wisp.kinds`)."""
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _import_graph(*, module_level: bool) -> dict[str, set[str]]:
    """Every module of wisp (`__main__` and the facade too) → the modules of wisp it
    imports: at module level, or everywhere. The facade's lazy map (`_HOMES`) counts as its
    imports (TestWings.test_no_circle_counting_every_import says why)."""
    paths = list(_modules("wisp"))
    known = {_dotted(p) for p in paths}
    graph = {
        _dotted(p): {_module_of(n, known) for _, n in _imports(p, module_level=module_level)}
        for p in paths
    }
    if not module_level:
        graph["wisp"] |= {_module_of(home, known) for home in wisp._HOMES.values()}
    return {module: imported - {module} for module, imported in graph.items()}


def _first_circle(graph: dict[str, set[str]]) -> tuple[str, ...] | None:
    """The first circle found in *graph* (its first module again at its end), or None."""
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> tuple[str, ...] | None:
        if node in trail:
            return (*trail[trail.index(node) :], node)
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, (*trail, node))
            if found is not None:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, ())
        if found is not None:
            return found
    return None


class TestWings:
    def test_wisp_is_laid_out_in_wings(self) -> None:
        """wisp/ holds the six wings, each a package whose docstring says what it is, and
        at most 15 modules of its own beside them."""
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
        circle = _first_circle(_import_graph(module_level=True))
        assert circle is None, " → ".join(circle or ())

    def test_no_circle_counting_every_import(self) -> None:
        """No circle either when the imports inside functions count (the lazy ones, that
        keep a start cheap): a lazy import hides a circle from the interpreter, not from the
        next engineer. Every module counts, the program's `__main__` and the facade
        included. The facade (`wisp/__init__.py`) loads a public name's home on first use
        (`_HOMES`, PEP 562): that is counted as an import from the facade to each home,
        because it is one the moment a name is asked (and its `TYPE_CHECKING` block names
        them all anyway). So a module of the application that asks the facade for a name
        (`from wisp import Asker`, `import wisp`) closes a circle through it: the
        application imports its homes directly, and only faces go through the facade."""
        circle = _first_circle(_import_graph(module_level=False))
        assert circle is None, " → ".join(circle or ())

    @pytest.mark.parametrize(
        ("home", "source", "circle"),
        [
            (
                "wisp.agents.sandbox",
                "def f():\n    from wisp.agents.reach import spellings\n",
                ("wisp.agents.reach", "wisp.agents.sandbox", "wisp.agents.reach"),
            ),
            (
                "wisp._asking",
                "def f():\n    from wisp import Asker\n",
                ("wisp", "wisp._asking", "wisp"),
            ),
        ],
        ids=["lazy", "through-the-facade"],
    )
    def test_the_circle_check_sees_a_lazy_circle(
        self, tmp_path: Path, home: str, source: str, circle: tuple[str, ...]
    ) -> None:
        """The circle check reads what it should: the tree as it stands has no circle (the
        control), and one lazy import added to a module closes one — back up to a module
        that imports it, or to the facade that loads it."""
        graph = _import_graph(module_level=False)
        assert _first_circle(graph) is None
        added = tmp_path / "added.py"
        added.write_text(source)
        known = set(graph)
        graph[home] |= {_module_of(name, known) for _, name in _imports(added, module_level=False)}
        assert _first_circle(graph) == circle

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
