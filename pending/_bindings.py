"""The bindings: what each kind of request is bound to, exactly as the person is shown it.

A request's ``bindingDigest`` is the sha256 of its binding's canonical JSON; an answer carries
the digest of the binding the person saw, so a changed binding never takes an old answer.
"""

# Records are named tuples, not attrs classes, and their annotations are not postponed (no
# `from __future__ import annotations`): importing attrs costs more than the interpreter's own
# start, and a named tuple's postponed field types are each compiled by typing at import
# (bench/README.md, issue 41). Fields are given by keyword everywhere; `_replace` is `evolve`.

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

# The default of every record's ``extra`` (the keys it did not understand): none. Read-only, as
# a named tuple's default is shared by every record that takes it.
NO_EXTRA: Mapping[str, Any] = MappingProxyType({})


class CommandBinding(NamedTuple):
    """What a command approval is bound to: the exact command, where, for which thread, and
    with which options."""

    command: str
    cwd: str
    thread: str | None = None
    reason: str | None = None
    # A shell call's fields besides its command and description (Claude Code's `timeout`,
    # `dangerouslyDisableSandbox`, …), as a JSON object: part of what the person is shown and
    # of what a grant covers. None (and absent from the file) when the call had none.
    options: Mapping[str, Any] | None = None
    # The answers it offers beside `no` (pending._offers: the exact call's scopes, and the
    # wider widths), as a JSON object; None (and absent from the file): every scope of the
    # exact call, as before widths.
    offers: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = NO_EXTRA


class FactBinding(NamedTuple):
    """What a fact request is bound to: the fact exactly as the person is shown it."""

    fact_id: str
    subject: str
    name: str
    value: str
    source: str
    proposed_by: str
    extra: Mapping[str, Any] = NO_EXTRA


class QuestionBinding(NamedTuple):
    """What a question is bound to: its text, and the answers it takes."""

    question: str
    options: tuple[str, ...] | None = None
    free_text: bool = True
    extra: Mapping[str, Any] = NO_EXTRA


class ToolBinding(NamedTuple):
    """What a tool call's approval is bound to: the tool, its arguments exactly as given (a
    JSON object), where, for which thread (for Claude Code, its session)."""

    tool: str
    input: Mapping[str, Any]
    cwd: str
    thread: str | None = None
    reason: str | None = None  # what the person should know (wisp's own channel touched)
    offers: Mapping[str, Any] | None = None  # as CommandBinding's
    extra: Mapping[str, Any] = NO_EXTRA


Binding = CommandBinding | FactBinding | QuestionBinding | ToolBinding
