"""The person's rules (`$WISP_HOME/policy.toml`) and a project's (`.wisp/policy.toml` in the
project: `ask` and `deny` only, since the agent can write its project — a project tightens,
never loosens), each rule carrying examples that must and must not match, checked as the file
loads (a failing example refuses the file, naming its line; the hook then asks).

(Owned by the `rules` work: issue 57.)
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from wisp.policy.reading import Effect

POLICY_FILE = "policy.toml"  # in $WISP_HOME; a project's is .wisp/policy.toml


class Action(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Origin(StrEnum):
    """Where a rule comes from (shown beside it, and in the audit record of what it decided)."""

    BUILTIN = "built-in"
    PERSON = "person"  # $WISP_HOME/policy.toml
    PROJECT = "project"  # the project's .wisp/policy.toml: ask and deny only


class Subject(NamedTuple):
    """What a rule is matched against: one call, as the policy reads it."""

    harness: str  # the harness's name as `wisp hook NAME` spells it ("" for wisp's own)
    tool: str  # the harness's own name for the tool
    effect: Effect
    cwd: str
    project: str | None
    commands: tuple[tuple[str, ...], ...] = ()  # a shell call's simple commands, as words
    paths: tuple[str, ...] = ()  # absolute paths the call reads or writes


class Rule(NamedTuple):
    """One rule: what it matches (every field given must match) and what it does."""

    name: str  # a built-in rule's name, or the person's `name`, else FILE:LINE
    action: Action
    origin: Origin
    where: str  # FILE:LINE, or "built in"
    tool: str | None = None
    command: tuple[str, ...] | None = None  # words, matched word by word (`*`: any rest)
    path: str | None = None  # a glob
    harness: str | None = None
    project: str | None = None

    def matches(self, subject: Subject) -> bool:
        raise NotImplementedError("issue 57: the rules work fills this in")


class Policy(NamedTuple):
    """The rules in force for one project: the person's, then the project's."""

    rules: tuple[Rule, ...] = ()
    builtins_off: frozenset[str] = frozenset()  # built-in rules the person turned off
    # Why a policy file was refused (its examples failed, it does not parse), in words: the
    # hook then asks for every call (never allows by a rule of a refused file).
    refused: str | None = None

    def first(self, action: Action, subject: Subject) -> Rule | None:
        """The first rule of *action* that matches *subject*, or None."""
        raise NotImplementedError("issue 57: the rules work fills this in")


def load_policy(home: Path, project: str | None) -> Policy:
    """The rules in force for *project* (None: the person's only)."""
    raise NotImplementedError("issue 57: the rules work fills this in")
