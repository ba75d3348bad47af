"""typing.NamedTuple's and enum.StrEnum's class syntax, their classes made for less.

Importing `typing` costs about 12 M instructions (callgrind, Python 3.11): an eighth of a
`wisp hook` the policy decides, and more than the rest of wisp's imports on that path but the
parser's. The modules a hook imports name typing for mypy only (under ``TYPE_CHECKING``, their
annotations postponed) and take their named tuples' and enums' bases from here.

For mypy :class:`NamedTuple` *is* ``typing.NamedTuple``; at run time it makes the class
typing's would: the class :func:`collections.namedtuple` makes, its fields the class's
annotated names, in order, with their defaults, carrying the class body's methods, properties
and docstring (made for less: the same methods, __new__ included, for every class, where
collections.namedtuple makes and compiles them for each). Its ``__annotations__`` are kept as
written (strings: postponed), where typing's would have turned each into a ``ForwardRef``
(and checked it), which nothing on a hook's path reads.

Their :class:`StrEnum` is enum's, made by ``enum._simple_enum`` (what the standard library
makes its own enums with: ``re.RegexFlag``, ``http.HTTPStatus``): the same class, without
the checks of a class statement, at 60 % of its cost. The 129 members of the 25 enums a hook
loads cost ~19 M instructions the ordinary way (callgrind), a fifth of all wisp adds to a
rule-decided hook's start. Where ``enum._simple_enum`` is missing, the ordinary way.
"""

from __future__ import annotations

import enum
import types
from collections import _tuplegetter  # type: ignore[attr-defined]  # namedtuple's own
from keyword import iskeyword

TYPE_CHECKING = False  # typing's own flag, without importing typing: mypy reads it the same

if TYPE_CHECKING:
    from enum import StrEnum as StrEnum
    from typing import Any
    from typing import NamedTuple as NamedTuple

# As typing.NamedTupleMeta: what a class body may not redefine, and what is not copied.
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
    | {"_make", "_replace", "_asdict", "_source"}
)
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

# One __new__ for every named tuple, reading the class's fields: collections.namedtuple
# compiles one for each class (a lambda of its fields), ~35 K instructions a field, ~4 M of a
# hook's start even once per number of fields. Its arguments are bound as that lambda's would
# be, with the same refusals; the class's signature is the lambda's (:class:`_Signature`).


def _new(cls: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Create a new instance of the named tuple *cls*."""
    fields = cls._fields
    if len(args) == len(fields) and not kwargs:
        return tuple.__new__(cls, args)
    return tuple.__new__(cls, _bound(cls, fields, args, kwargs))


_UNSET = object()  # a field no argument gave


def _bound(
    cls: Any, fields: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[Any]:
    """The values of *fields* from *args* and *kwargs*, defaults filling the rest; refused
    with the TypeError the compiled lambda's call would raise."""
    name = f"{cls.__name__}.__new__()"
    if len(args) > len(fields):
        raise TypeError(
            f"{name} takes {len(fields) + 1} positional arguments but {len(args) + 1} were given"
        )
    values = [*args, *[_UNSET] * (len(fields) - len(args))]
    for key, value in kwargs.items():
        if key not in fields:
            raise TypeError(f"{name} got an unexpected keyword argument {key!r}")
        index = fields.index(key)
        if index < len(args):
            raise TypeError(f"{name} got multiple values for argument {key!r}")
        values[index] = value
    missing = []
    for index, value in enumerate(values):
        if value is _UNSET:
            if fields[index] in cls._field_defaults:
                values[index] = cls._field_defaults[fields[index]]
            else:
                missing.append(repr(fields[index]))
    if missing:
        said = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
        plural = "" if len(missing) == 1 else "s"
        raise TypeError(
            f"{name} missing {len(missing)} required positional argument{plural}: {said}"
        )
    return values


class _Signature:
    """A named tuple's ``__signature__``, made when asked for (by `inspect`, which a hook never
    loads): its fields as parameters, with their defaults, as collections.namedtuple's is."""

    def __get__(self, record: Any, cls: Any) -> Any:
        import inspect

        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        empty = inspect.Parameter.empty
        return inspect.Signature(
            [
                inspect.Parameter(f, kind, default=cls._field_defaults.get(f, empty))
                for f in cls._fields
            ]
        )


_SIGNATURE = _Signature()


# The methods collections.namedtuple makes for each class, written once for all: they read
# the class's fields where it keeps them.


@classmethod  # type: ignore[misc]
def _make(cls: Any, iterable: Any) -> Any:
    """Make a new instance from a sequence or iterable."""
    result = tuple.__new__(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _replace(self: Any, /, **kwds: Any) -> Any:
    """Return a new instance replacing specified fields with new values."""
    result = self._make(map(kwds.pop, self._fields, self))
    if kwds:
        raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
    return result


def _repr(self: Any) -> str:
    """Return a nicely formatted representation string."""
    shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))
    return f"{self.__class__.__name__}({shown})"


def _asdict(self: Any) -> dict[str, Any]:
    """Return a new dict which maps field names to their values."""
    return dict(zip(self._fields, self, strict=True))


def _getnewargs(self: Any) -> tuple[Any, ...]:
    """Return self as a plain tuple. Used by copy and pickle."""
    return tuple(self)


def _named_tuple(
    typename: str, fields: tuple[str, ...], defaults: tuple[Any, ...], module: str
) -> type:
    """The class collections.namedtuple(typename, fields, defaults=defaults, module=module)
    makes, but with the methods every class here shares, where namedtuple makes (and
    compiles) them for each."""
    namespace: dict[str, Any] = {
        "__doc__": f"{typename}({', '.join(fields)})",
        "__slots__": (),
        "_fields": fields,
        "_field_defaults": dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True)),
        "__new__": _new,
        "__signature__": _SIGNATURE,
        "_make": _make,
        "_replace": _replace,
        "__repr__": _repr,
        "_asdict": _asdict,
        "__getnewargs__": _getnewargs,
        "__match_args__": fields,
        "__module__": module,
    }
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
    return type(typename, (tuple,), namespace)


class _TupleMeta(type):
    def __new__(mcs, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
        if not bases:  # the base itself
            return super().__new__(mcs, typename, bases, ns)
        if bases != (_Base,):
            raise TypeError(f"{typename}: a named tuple derives from NamedTuple alone")
        fields = ns.get("__annotations__", {})
        defaults: list[str] = []
        for name in fields:
            if name in ns:
                defaults.append(name)
            elif defaults:
                raise TypeError(
                    f"{typename}: field {name} without a default follows {', '.join(defaults)}"
                )
            if name.startswith("_") or not name.isidentifier() or iskeyword(name):
                raise ValueError(f"{typename}: {name!r} cannot be a field's name")
        made = _named_tuple(
            typename, tuple(fields), tuple(ns[n] for n in defaults), ns["__module__"]
        )
        made.__annotations__ = dict(fields)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError(f"{typename}: a named tuple cannot redefine {key}")
            if key not in _SPECIAL and key not in fields:
                setattr(made, key, value)
        return made


class _Base(metaclass=_TupleMeta):
    """Derive a record from this, as from typing.NamedTuple."""


class _EnumMeta(type):
    def __new__(mcs, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
        if not bases:  # the base itself
            return super().__new__(mcs, typename, bases, ns)
        if bases != (_EnumBase,):
            raise TypeError(f"{typename}: a StrEnum here derives from StrEnum alone")
        simple = getattr(enum, "_simple_enum", None)
        if simple is None:  # not in this Python: the ordinary class statement's class
            return types.new_class(
                typename, (enum.StrEnum,), exec_body=lambda body: _fill(body, ns)
            )
        made: type = simple(enum.StrEnum)(type(typename, (), dict(ns)))
        return made


def _fill(body: dict[str, Any], ns: dict[str, Any]) -> None:
    for key, value in ns.items():
        body[key] = value  # enum's own namespace: each name checked as a class body's is


class _EnumBase(metaclass=_EnumMeta):
    """Derive an enum from this, as from enum.StrEnum."""


if not TYPE_CHECKING:
    NamedTuple = _Base
    StrEnum = _EnumBase
