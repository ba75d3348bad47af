"""What `wisp policy list` and `wisp policy suggest` show, decided here (the face renders it):
the rules in force and where each comes from, and rules proposed for what the person approved
again and again (never a must-ask class).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from wisp.policy.reading import Effect
from wisp.policy.rules import (
    ANY_REST,
    BUILTIN_NAMES,
    POLICY_FILE,
    Action,
    Origin,
    Policy,
    Rule,
    Subject,
    load_policy,
    project_file,
)

BUILTIN_WHERE = "built in"
# How often the person must have approved commands starting with the same words before a
# rule is proposed for them.
SUGGEST_MIN_APPROVALS = 3
EXAMPLES_KEPT = 3  # a proposed rule's `match` examples: the first lines approved, at most
# The decisions of an approval.answered record that let the call run (pending's Decision).
APPROVING = frozenset({"once", "session", "project", "always"})
# A line no rule proposed here lets through: the rule's words, then another command.
CHAINED = "git push"


class PolicyFile(NamedTuple):
    """One policy file that may hold rules for a call here, and what became of it."""

    path: str
    origin: Origin
    state: str  # "absent", "in force", "refused"
    reason: str | None = None  # a refused file's: FILE:LINE, what is wrong, what to do


class PolicyListing(NamedTuple):
    """The rules in force for a project, and the files they come from."""

    project: str | None
    builtins: tuple[tuple[str, bool], ...]  # each built-in rule's name, and whether it is on
    rules: tuple[Rule, ...]  # the person's, then the project's
    files: tuple[PolicyFile, ...]

    @property
    def refused(self) -> bool:
        return any(f.state == "refused" for f in self.files)


def policy_listing(home: Path, project: str | None) -> PolicyListing:
    """The rules in force for *project* (None: no project, the person's only)."""
    policy = load_policy(home, project)
    files = [_file(str(home / POLICY_FILE), Origin.PERSON, policy)]
    if project is not None:
        files.append(_file(project_file(project), Origin.PROJECT, policy))
    builtins = tuple((name, name not in policy.builtins_off) for name in builtin_names())
    return PolicyListing(project, builtins, policy.rules, tuple(files))


def builtin_names() -> tuple[str, ...]:
    return BUILTIN_NAMES


def _file(path: str, origin: Origin, policy: Policy) -> PolicyFile:
    if not os.path.lexists(path):
        return PolicyFile(path, origin, "absent")
    reasons = [why for file, why in policy.refusals if file == path]
    if reasons:
        return PolicyFile(path, origin, "refused", " ".join(reasons))
    return PolicyFile(path, origin, "in force")


def rule_json(rule: Rule, *, on: bool = True) -> dict[str, Any]:
    """A rule as `wisp policy list --json` and `suggest --json` show it."""
    return {
        "name": rule.name,
        "action": rule.action.value,
        "origin": rule.origin.value,
        "where": rule.where,
        "on": on,
        "tool": rule.tool,
        "command": list(rule.command) if rule.command is not None else None,
        "path": rule.path,
        "harness": rule.harness,
        "project": rule.project,
        "match": list(rule.match),
        "notMatch": list(rule.not_match),
    }


def policy_listing_json(found: PolicyListing) -> dict[str, Any]:
    builtins = [
        rule_json(
            Rule(name=name, action=Action.ALLOW, origin=Origin.BUILTIN, where=BUILTIN_WHERE),
            on=on,
        )
        for name, on in found.builtins
    ]
    return {
        "project": found.project,
        "rules": builtins + [rule_json(rule) for rule in found.rules],
        "files": [
            {"path": f.path, "origin": f.origin.value, "state": f.state, "reason": f.reason}
            for f in found.files
        ],
    }


# --- suggest ------------------------------------------------------------------------------


class RuleSuggestion(NamedTuple):
    """A rule proposed for commands the person approved again and again."""

    rule: Rule
    approvals: int  # how many approved calls it would have allowed without asking
    last: str | None  # when the last of them was approved (the record's `ts`)

    def toml(self) -> str:
        """The rule as it is pasted into `$WISP_HOME/policy.toml`."""
        rule = self.rule
        assert rule.command is not None
        return "\n".join(
            (
                f"# approved {self.approvals} times"
                + (f", last at {self.last}" if self.last else ""),
                "[[rule]]",
                f"name = {_toml_text(rule.name)}",
                f'action = "{rule.action.value}"',
                f"command = {_toml_list(rule.command)}",
                f"match = {_toml_list(rule.match)}",
                f"not_match = {_toml_list(rule.not_match)}",
            )
        )


def _toml_text(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string reads JSON's escapes


def _toml_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(_toml_text(i) for i in items) + "]"


class _Seen:
    def __init__(self) -> None:
        self.count = 0
        self.lines: list[str] = []
        self.last: str | None = None


def approved_lines(records: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str | None]]:
    """The shell lines the person approved (line, cwd, when), once each call: from the
    answers (`approval.answered`) and from the calls the person decided (`call.decided`,
    `decider: person`), the two records of one asked call counted once."""
    seen: set[str] = set()
    found: list[tuple[str, str, str | None]] = []
    for record in records:
        event = record.get("event")
        if record.get("kind") != "command":
            continue
        if event == "approval.answered":
            if record.get("decision") not in APPROVING:
                continue
            key = record.get("id")
        elif event == "call.decided":
            if record.get("decider") != "person" or record.get("verdict") != "allow":
                continue
            key = record.get("request")
        else:
            continue
        line, cwd = record.get("command"), record.get("cwd")
        if not isinstance(line, str) or not isinstance(cwd, str) or not line.strip():
            continue
        if isinstance(key, str):
            if key in seen:
                continue
            seen.add(key)
        ts = record.get("ts")
        found.append((line, cwd, ts if isinstance(ts, str) else None))
    return found


def rule_suggestions(records: Iterable[Mapping[str, Any]], policy: Policy) -> list[RuleSuggestion]:
    """Rules proposed for the first words of commands approved at least
    :data:`SUGGEST_MIN_APPROVALS` times; never for a line of a must-ask class, nor for
    words a rule in *policy* already allows. Most approved first."""
    from wisp.policy.reading import read_shell

    counts: dict[tuple[str, ...], _Seen] = {}
    for line, cwd, ts in approved_lines(records):
        try:
            reading = read_shell(line, cwd, cwd)
        except Exception:  # noqa: S112  # a line the reader fails on proposes nothing
            continue
        if reading.must_ask or reading.line is None or reading.line.unread is not None:
            continue
        for prefix in dict.fromkeys(reading.prefixes):
            if not prefix or ANY_REST in prefix:
                continue
            seen = counts.setdefault(tuple(prefix), _Seen())
            seen.count += 1
            seen.last = ts or seen.last
            words = tuple(simple.words for simple in reading.line.commands)
            if all(w[: len(prefix)] == prefix for w in words) and line not in seen.lines:
                seen.lines.append(line)
    found = [
        _suggestion(prefix, seen, policy)
        for prefix, seen in counts.items()
        if seen.count >= SUGGEST_MIN_APPROVALS
    ]
    kept = [s for s in found if s is not None]
    kept.sort(key=lambda s: (-s.approvals, s.rule.name))
    return kept


def _suggestion(prefix: tuple[str, ...], seen: _Seen, policy: Policy) -> RuleSuggestion | None:
    words = (*prefix, ANY_REST)
    named = " ".join(prefix)
    subject = Subject(
        harness="", tool="", effect=Effect.SHELL, cwd="/", project=None, commands=(prefix,)
    )
    already = policy.first(Action.ALLOW, subject)
    if already is not None and already.tool is None and already.harness is None:
        return None
    match = tuple(seen.lines[:EXAMPLES_KEPT]) or (shlex.join(prefix),)
    chained = f"{shlex.join(prefix)} && {CHAINED}"
    not_match = (shlex.join(prefix[:1]), chained) if len(prefix) > 1 else (chained,)
    rule = Rule(
        name=named,
        action=Action.ALLOW,
        origin=Origin.PERSON,
        where="suggested",
        command=words,
        match=match,
        not_match=not_match,
    )
    return RuleSuggestion(rule, seen.count, seen.last)


def suggestion_json(suggestion: RuleSuggestion) -> dict[str, Any]:
    found = rule_json(suggestion.rule)
    found.update(approvals=suggestion.approvals, last=suggestion.last, toml=suggestion.toml())
    return found


def suggest_rules(home: Path) -> tuple[list[RuleSuggestion], int]:
    """Rules proposed from the audit log (:func:`rule_suggestions`), and how many of its
    lines were skipped as no record. Raises AuditLogError when the log cannot be read."""
    from wisp.audit.reader import LogFilter, read_log

    records, skipped = read_log(home, LogFilter(events=("approval.answered", "call.decided")))
    return rule_suggestions(records, load_policy(home, None)), skipped


def project_here(cwd: str) -> str | None:
    """The project of a call run in *cwd*, as the hook finds it: the git root above it
    (:func:`wisp.stores.grants.project_of`), None when there is none."""
    from wisp.stores.grants import project_of

    found = project_of(cwd)
    return found if os.path.lexists(f"{found}/.git") else None
