"""typing.NamedTuple's class syntax, without importing typing.

Importing `typing` costs about 12 M instructions (callgrind, Python 3.11): an eighth of a
`wisp hook` the policy decides, and more than the rest of wisp's imports on that path but the
parser's. The modules a hook imports name typing for mypy only (under ``TYPE_CHECKING``, their
annotations postponed) and take their named tuples' base from here. For mypy it *is*
``typing.NamedTuple``; at run time it makes the class typing's would: a
:func:`collections.namedtuple` whose fields are the class's annotated names, in order, with
their defaults, carrying the class body's methods, properties and docstring. Its
``__annotations__`` are kept as written (strings: postponed), where typing's would have
turned each into a ``ForwardRef`` (and checked it), which nothing on a hook's path reads.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing's own flag, without importing typing: mypy reads it the same

if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple as NamedTuple

# As typing.NamedTupleMeta: what a class body may not redefine, and what is not copied.
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
    | {"_make", "_replace", "_asdict", "_source"}
)
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
# Called by another name: mypy reads a call of collections.namedtuple as a class definition.
_namedtuple: Any = collections.namedtuple


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
        made: type = _namedtuple(
            typename, list(fields), defaults=[ns[n] for n in defaults], module=ns["__module__"]
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


if not TYPE_CHECKING:
    NamedTuple = _Base
