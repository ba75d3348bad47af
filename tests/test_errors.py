"""One error tree: every error wisp raises derives from wisp.WispError, which carries what to
do (`remedy`), and no code decides by the words of an error's message (docs/architecture.md,
"Errors"). These read the modules themselves: the classes as imported, the source as parsed.
"""

from __future__ import annotations

import ast
import errno
import importlib
import inspect
from pathlib import Path

import pytest

from pending import PendingError
from wisp import WispError
from wisp._asking import CannotFollow
from wisp.audit.writer import AuditLogUnsafe
from wisp.stores.jsonstore import StoreError

ROOT = Path(__file__).resolve().parent.parent
WISP = ROOT / "wisp"

# Error classes of wisp that do not derive from WispError yet, each with why; the list only
# shrinks (test_every_one_left_out_is_still_there).
NOT_IN_THE_TREE = {
    "wisp.cli._ask.Stopped": "a signal, not an error: a KeyboardInterrupt, so that what does "
    "not catch it ends as Ctrl-C ends",
    **{
        f"wisp.agents.{name}": "the harness wing's, being redrawn beside issue 57 (the gate and "
        "the policy): its errors join the tree there"
        for name in (
            "claude_code.HookRefused",
            "codexsetup.TrustUnknown",
            "configfile.SetupRefused",
            "configfile.UnknownHarness",
            "gate.TooLarge",
            "hookio.EventUnread",
            "hookio.EventRefused",
            "session.StartError",
            "session.NotOurs",
            "session.NotFiled",
            "setuprecord.RecordDamaged",
            "setuprecord.RecordUnwritable",
        )
    },
}
# Where wisp reads the words of an error it did not make, each with why (test below).
READS_WORDS = {
    ("wisp/cli/_help.py", "exc"): "click's UsageError says `No such command` and `Got "
    "unexpected extra argument` only in words (no class of their own): wisp words them its way",
}
# Modules that load only with an optional extra, or run as a program.
UNIMPORTABLE = {"wisp.__main__", "wisp.mcp.__main__", "wisp.relay.__main__"}


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _error_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of wisp, by its dotted name."""
    found: dict[str, type[BaseException]] = {}
    for path in sorted(WISP.rglob("*.py")):
        name = _dotted(path)
        if name in UNIMPORTABLE:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError:  # an extra not installed here: its face is not read
            continue
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{attr}"] = value
    return found


def _words_read(path: Path) -> set[str]:
    """The names of caught errors (`except … as NAME`, or a parameter named error, exc or err)
    whose message *path* reads: `… in str(NAME)`, `str(NAME).startswith(…)`,
    `NAME.message.startswith(…)`, `… in NAME.message`, `NAME.args[0] == …`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    errors = {"error", "exc", "err"}
    errors |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name}

    def words_of(node: ast.AST) -> str | None:
        if (  # str(NAME)
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "str"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in errors
        ):
            return node.args[0].id
        if (  # NAME.message, NAME.args (and NAME.args[i])
            isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
        ):
            node = node.value
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("message", "args")
            and isinstance(node.value, ast.Name)
            and node.value.id in errors
        ):
            return node.value.id
        return None

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                name = words_of(side)
                if name is not None:
                    found.add(name)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith", "find", "count")
        ):
            name = words_of(node.func.value)
            if name is not None:
                found.add(name)
    return found


class TestTheErrorTree:
    def test_every_error_of_wisp_is_a_wisp_error(self) -> None:
        """Each error class wisp defines derives from WispError (the application's, its
        faces', and its own PendingError of the channel's: both), bar NOT_IN_THE_TREE."""
        classes = _error_classes()
        assert "wisp._asking.CannotFollow" in classes, "the test reads the wrong modules"
        outside = {
            name
            for name, cls in classes.items()
            if not issubclass(cls, WispError) and name not in NOT_IN_THE_TREE
        }
        assert not outside, outside

    def test_every_one_left_out_is_still_there(self) -> None:
        """An error class that joined the tree, or went, is struck off NOT_IN_THE_TREE."""
        classes = _error_classes()
        stale = {
            name
            for name in NOT_IN_THE_TREE
            if name not in classes or issubclass(classes[name], WispError)
        }
        assert not stale, stale

    def test_the_remedy_is_an_attribute(self) -> None:
        """What to do is an attribute: the class's own (the audit log's), or the one an error
        was raised with; an error with none says it in its message alone (None)."""
        assert AuditLogUnsafe("the audit log is a FIFO").remedy is not None
        assert "aside" in str(AuditLogUnsafe.remedy)
        assert StoreError("x", remedy="move it aside").remedy == "move it aside"
        assert StoreError("the store cannot be read: check it").remedy is None
        assert str(StoreError("x", remedy="y")) == "x"  # the message is as it was raised

    def test_an_asker_that_cannot_follow_says_whose_fault(self) -> None:
        """CannotFollow is both wisp's and the channel's, and says by an attribute whether a
        resource limit stopped it (then not the channel's fault), not only in words."""
        short = CannotFollow("r1", OSError(errno.EMFILE, "Too many open files"))
        assert isinstance(short, WispError) and isinstance(short, PendingError)
        assert short.shortage is not None and short.remedy is not None
        assert short.remedy in str(short)
        other = CannotFollow("r1", OSError("the disk is on fire"))
        assert other.shortage is None
        assert other.remedy is not None and "wisp doctor" in other.remedy


class TestTheHooksDenySortsByClass:
    def test_a_watch_a_limit_stopped_is_not_the_channels_fault(self) -> None:
        """A hook's deny tells a watch a resource limit stopped (CannotFollow.shortage) by
        its attribute: said as it is, with the limit and no `wisp doctor`; the same error
        with the channel at fault (the control) sends the person to `wisp doctor`."""
        from wisp.agents.gate import failure_reason

        short = CannotFollow("r1", OSError(errno.EMFILE, "Too many open files"))
        said = failure_reason(short)
        assert said == str(short) and "ulimit -n" in said and "wisp doctor" not in said
        other = failure_reason(CannotFollow("r1", OSError(errno.EIO, "I/O error")))
        assert other.startswith("the channel cannot be used") and "wisp doctor" in other


class TestNoDecisionByWords:
    @pytest.mark.parametrize(
        "path", sorted(WISP.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
    )
    def test_no_code_reads_an_errors_words(self, path: Path) -> None:
        """No code decides by matching an error's message: it asks its class and attributes
        (READS_WORDS lists where the words are a dependency's only signal)."""
        name = str(path.relative_to(ROOT))
        read = {error for error in _words_read(path) if (name, error) not in READS_WORDS}
        assert not read, read

    def test_every_word_reading_left_is_still_there(self) -> None:
        """A place that stopped reading an error's words is struck off READS_WORDS."""
        stale = {
            (name, error) for name, error in READS_WORDS if error not in _words_read(ROOT / name)
        }
        assert not stale, stale

    def test_the_check_sees_words_read(self, tmp_path: Path) -> None:
        """The check reads what it should: an error's words matched are caught, three ways;
        its class asked, or a plain string's words, are not (the control)."""
        probe = tmp_path / "probe.py"
        probe.write_text(
            "def f(error, line):\n"
            "    try:\n"
            "        g()\n"
            "    except OSError as oops:\n"
            "        if 'no room' in str(oops):\n"
            "            pass\n"
            "    if error.message.startswith('Got'):\n"
            "        pass\n"
            "    if isinstance(error, ValueError) or 'x' in line or line.startswith('#'):\n"
            "        pass\n"
        )
        assert _words_read(probe) == {"oops", "error"}
