"""A call read for the policy: which classes its parts fall in (read-only, each must-ask
class, the rest), the prefixes a person may grant, the paths it writes.

Pure: a path is compared as written and as resolved against the call's directory and its
`cd`s, never by reading the disk. (Owned by the `shell` work: issue 57.)
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from wisp.policy.shell import Line


class Effect(StrEnum):
    """What a harness's tool does, as its harness module says (one table per harness)."""

    READ = "read"  # reads files or lists them (Read, Grep, Glob, LS, …)
    EDIT = "edit"  # edits or writes files (Edit, Write, MultiEdit, apply_patch, …)
    SHELL = "shell"  # runs a shell line: read by :func:`read_shell`
    NETWORK = "network"  # reaches the network (WebFetch, …)
    OTHER = "other"  # anything else: asked


class Class(StrEnum):
    """The classes a call or a part of it falls in. The must-ask ones (:data:`MUST_ASK`)
    are asked every time: no rule allows them, no grant wider than `once` covers them."""

    READ_ONLY = "read-only"
    EDIT_IN_PROJECT = "edit-in-project"
    WRITE_OUTSIDE = "write-outside-project"
    NETWORK = "network"
    RECURSIVE_DELETE = "recursive-delete"
    PIPE_TO_SHELL = "pipe-to-shell"
    PRIVILEGE = "privilege"
    UNREAD = "unread"  # the parser could not read it fully: asked, never allowed by a rule
    OTHER = "other"  # asked once per prefix


MUST_ASK = frozenset(
    {
        Class.WRITE_OUTSIDE,
        Class.NETWORK,
        Class.RECURSIVE_DELETE,
        Class.PIPE_TO_SHELL,
        Class.PRIVILEGE,
    }
)


class Reading(NamedTuple):
    """A call, read for the policy."""

    classes: frozenset[Class]  # every class a part of it falls in
    must_ask: tuple[str, ...]  # why it is must-ask, in words, one per finding; () if not
    # The first two words of each simple command that is not read-only (what a person grants
    # as "this command with any arguments"); () for a tool call.
    prefixes: tuple[tuple[str, ...], ...] = ()
    written: tuple[str, ...] = ()  # the absolute paths it writes, as far as they can be known
    line: Line | None = None  # a shell call's line, read

    @property
    def read_only(self) -> bool:
        """Whether every part of it is read-only (and it was read fully)."""
        return self.classes == {Class.READ_ONLY}


def read_shell(line: str, cwd: str, project: str | None) -> Reading:
    """A shell *line* run in *cwd*, in the session's *project* (None: no project, so every
    write is outside one), read for the policy."""
    raise NotImplementedError("issue 57: the shell work fills this in")


def read_tool(effect: Effect, paths: tuple[str, ...], cwd: str, project: str | None) -> Reading:
    """A tool call whose harness says it has *effect* on *paths* (absolute or relative to
    *cwd*), read for the policy."""
    raise NotImplementedError("issue 57: the shell work fills this in")


ToolInput = Mapping[str, Any]
