"""pending._classes: typing.NamedTuple's class syntax, without importing typing."""

from __future__ import annotations

import copy
import enum
import inspect
import pickle
import subprocess
import sys
from typing import NamedTuple as TypingNamedTuple

import pytest

from pending import NamedTuple, StrEnum


class Cheap(NamedTuple):
    """A record."""

    words: tuple[str, ...]
    cwd: str | None = None
    background: bool = False

    @property
    def first(self) -> str:
        return self.words[0]

    def shown(self) -> str:
        return " ".join(self.words)


class Typed(TypingNamedTuple):
    """A record."""

    words: tuple[str, ...]
    cwd: str | None = None
    background: bool = False


class Cheaper(StrEnum):
    """Where a call went."""

    ALLOWED = "allowed"
    ASKED = "asked"
    TIMED_OUT = "timed-out"


class Ordinary(enum.StrEnum):
    """Where a call went."""

    ALLOWED = "allowed"
    ASKED = "asked"
    TIMED_OUT = "timed-out"


ENUM_PROBE = """
import enum, json, pickle, sys
if sys.argv[1] == "without":
    del enum._simple_enum  # a Python without it
from pending import StrEnum
class E(StrEnum):
    \"\"\"doc\"\"\"
    A = "a"
    B_C = "b-c"
print(json.dumps([
    isinstance(E.A, enum.StrEnum), type(E) is enum.EnumType, E("b-c") is E.B_C,
    E["A"] is E.A, [m.value for m in E], str(E.B_C), f"{E.B_C}", repr(E.A), E.__doc__,
    pickle.loads(pickle.dumps(E.A)) is E.A, E.A == "a",
]))
"""


class TestNamedTuple:
    def test_it_behaves_as_typings_named_tuple(self) -> None:
        """Construction (positional, keyword, defaults), fields, defaults, repr, equality,
        _replace, _asdict, _make, the signature and pattern matching: as typing's class
        with the same body gives."""
        cheap, typed = Cheap(("ls",), cwd="/p"), Typed(("ls",), cwd="/p")
        assert cheap == typed == (("ls",), "/p", False)
        assert repr(cheap).removeprefix("Cheap") == repr(typed).removeprefix("Typed")
        assert Cheap._fields == Typed._fields
        assert Cheap._field_defaults == Typed._field_defaults
        assert cheap._replace(background=True) == typed._replace(background=True)
        assert cheap._asdict() == typed._asdict()
        assert Cheap._make([("a",), None, True]) == Typed._make([("a",), None, True])

        def parameters(cls: type) -> list[tuple[str, object]]:
            return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()]

        assert parameters(Cheap) == parameters(Typed)  # (typing's also carries ForwardRefs)
        assert Cheap(cwd="/q", words=("x",)) == Typed(cwd="/q", words=("x",))
        match cheap:
            case Cheap(words, cwd):
                assert (words, cwd) == (("ls",), "/p")
            case _:
                pytest.fail("no match")

    def test_wrong_arguments_are_refused_as_collections_namedtuple_refuses_them(self) -> None:
        """Too many, too few, a field given twice, an unknown keyword: the same TypeError, word
        for word, as the class collections.namedtuple makes (its compiled __new__). Control:
        the right arguments make the record."""
        import collections

        class Pair(NamedTuple):
            a: int
            b: int

        plain = collections.namedtuple("Pair", "a b")
        calls: list[tuple[tuple[object, ...], dict[str, object]]] = [
            ((), {}),
            ((1,), {}),
            ((1, 2, 3), {}),
            ((1,), {"a": 2}),
            ((1, 2), {"z": 3}),
            ((), {"b": 2}),
        ]
        for args, kwargs in calls:
            with pytest.raises(TypeError) as ours:
                Pair(*args, **kwargs)  # type: ignore[call-arg, misc]
            with pytest.raises(TypeError) as theirs:
                plain(*args, **kwargs)
            assert str(ours.value) == str(theirs.value), (args, kwargs)
        assert Pair(1, b=2) == plain(1, b=2) == (1, 2)

    def test_the_class_bodys_methods_and_docstring_are_kept(self) -> None:
        """Properties, methods and the docstring of the class body are the class's; its
        module and name are where it was written."""
        cheap = Cheap(("git", "status"))
        assert cheap.first == "git" and cheap.shown() == "git status"
        assert Cheap.__doc__ == "A record."
        assert (Cheap.__module__, Cheap.__qualname__) == (__name__, "Cheap")
        assert Cheap.__annotations__["cwd"] == "str | None"  # postponed: kept as written

    def test_copies_and_pickles_are_equal(self) -> None:
        """copy and pickle give an equal record of the same class."""
        cheap = Cheap(("ls",), "/p", True)
        for again in (copy.copy(cheap), copy.deepcopy(cheap), pickle.loads(pickle.dumps(cheap))):
            assert again == cheap and type(again) is Cheap

    def test_what_typing_refuses_is_refused(self) -> None:
        """A field without a default after one with, a name of the tuple's own, a second base:
        refused as the class is made. Control: the same class without the fault is made."""
        with pytest.raises(TypeError, match="without a default"):

            class Late(NamedTuple):
                a: int = 0
                b: int

        with pytest.raises(AttributeError, match="_replace"):

            class Redefined(NamedTuple):
                a: int

                def _replace(self) -> None: ...

        with pytest.raises(TypeError, match="NamedTuple alone"):

            class Mixed(NamedTuple, Exception):  # type: ignore[misc]
                a: int

        class Fine(NamedTuple):
            b: int
            a: int = 0

        assert Fine(1) == (1, 0)

    def test_it_imports_no_typing(self) -> None:
        """Making a record loads no typing: the point of the module. Control: typing's own
        class does load it."""
        probe = (
            "import sys\n"
            "from pending import NamedTuple\n"
            "class R(NamedTuple):\n"
            "    a: int\n"
            "print('typing' in sys.modules)\n"
            "import typing\n"
            "print('typing' in sys.modules)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split()
        assert out == ["False", "True"]


class TestStrEnum:
    def test_it_is_enums_str_enum(self) -> None:
        """Members, values, lookups by value and name, order, str, format, repr, the
        docstring, identity through pickle: as the ordinary class statement's."""
        assert type(Cheaper) is enum.EnumType and issubclass(Cheaper, enum.StrEnum)
        assert [(m.name, m.value) for m in Cheaper] == [(m.name, m.value) for m in Ordinary]
        assert Cheaper("timed-out") is Cheaper.TIMED_OUT and Cheaper["ASKED"] is Cheaper.ASKED
        assert str(Cheaper.ASKED) == str(Ordinary.ASKED) == f"{Cheaper.ASKED}" == "asked"
        assert repr(Cheaper.ASKED).removeprefix("<Cheaper") == repr(Ordinary.ASKED).removeprefix(
            "<Ordinary"
        )
        assert Cheaper.__doc__ == Ordinary.__doc__
        assert (Cheaper.__module__, Cheaper.__qualname__) == (__name__, "Cheaper")
        assert pickle.loads(pickle.dumps(Cheaper.TIMED_OUT)) is Cheaper.TIMED_OUT
        assert Cheaper.ALLOWED == "allowed" and Cheaper.ALLOWED != Ordinary.ASKED

    def test_a_value_it_does_not_hold_is_refused_as_enums(self) -> None:
        """A value that is no member's: ValueError, as the ordinary class says it."""
        with pytest.raises(ValueError, match="'nope' is not a valid Cheaper"):
            Cheaper("nope")

    def test_without_simple_enum_the_ordinary_way_gives_the_same(self) -> None:
        """In a Python without enum._simple_enum, the class is made the ordinary way, and
        reads the same as the one made with it (control: with it)."""
        said = [
            subprocess.run(
                [sys.executable, "-c", ENUM_PROBE, how], capture_output=True, text=True, check=True
            ).stdout
            for how in ("with", "without")
        ]
        assert said[0] == said[1] and "true" in said[0]
