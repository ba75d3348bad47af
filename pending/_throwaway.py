"""A kind added for the length of a test: proof that a kind is one row of the table.

:func:`throwaway_kind` adds a member to :class:`pending.Kind` and a row to
:data:`pending.KINDS` (with every index read from it), and takes both out again. It exists for
tests that hold the claim of docs/architecture.md: a new kind is its row here, its binding
record and its one module in `wisp/kinds/`, and no face changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pending._bindings import Binding
from pending._convert import _converter
from pending._kinds import KINDS, Decision, Kind, KindSpec, add_kind, remove_kind


def _add_member(name: str, value: str) -> Kind:
    # An Enum is closed by design; a test's throwaway member is made as the class makes its
    # own (a str carrying _name_/_value_), and listed where the class keeps its members.
    member = str.__new__(Kind, value)
    member._name_ = name
    member._value_ = value
    member._sort_order_ = len(Kind._member_names_)  # type: ignore[attr-defined]
    member.__objclass__ = Kind  # type: ignore[attr-defined]
    type.__setattr__(Kind, name, member)
    Kind._member_map_[name] = member
    Kind._value2member_map_[value] = member
    Kind._member_names_.append(name)
    return member


def _remove_member(member: Kind) -> None:
    Kind._member_names_.remove(member.name)
    del Kind._member_map_[member.name]
    del Kind._value2member_map_[member.value]
    type.__delattr__(Kind, member.name)


@contextmanager
def throwaway_kind(
    value: str,
    *,
    suffix: str,
    binding_type: type[Binding] | type[object],
    decisions: tuple[Decision, ...],
    dies_with_server: bool = True,
) -> Iterator[Kind]:
    """A kind named *value* for the length of the block: a `Kind` member, its row in
    :data:`pending.KINDS`, and its binding type known to the converter."""
    if value in Kind._value2member_map_:
        raise ValueError(f"{value!r} is a kind already")
    member = _add_member(value.upper().replace("-", "_"), value)
    try:
        add_kind(
            KindSpec(
                kind=member,
                suffix=suffix,
                binding_type=binding_type,  # type: ignore[arg-type]
                decisions=decisions,
                dies_with_server=dies_with_server,
            )
        )
        _converter.cache_clear()  # built for the kinds it knew
        yield member
    finally:
        if member in KINDS:
            remove_kind(member)
        _remove_member(member)
        _converter.cache_clear()
