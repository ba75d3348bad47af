"""The built-in rules: allow rules wisp holds on by default, each with a name the audit records
(`decider: rule`, `rule: NAME`), each switchable off in the person's policy file
(:attr:`~wisp.policy.rules.Policy.builtins_off`). They come last of the allow rules, after
the person's own, and never before the self-guard, a deny or ask rule, or a must-ask class
(:mod:`wisp.policy.decide`).

- `read-only`: a shell line that parsed fully and whose every command is read-only
  (:attr:`~wisp.policy.reading.Reading.read_only`), every command run in or under the
  session's project; and a tool that only reads (`Read`, `Grep`, …) files in the project;
- `project-edits`: an edit or a write whose every path is in the session's project
  (:data:`~wisp.policy.reading.Class.EDIT_IN_PROJECT`), never into a folder or file that
  runs or configures by itself (:data:`NEVER_EDITED`: `.git/`, the harnesses' own config
  folders, `.vscode/`, `.envrc`, …) nor a secret (`.env`).

With no project (a cwd in no git repository), neither allows anything.
"""

# Paths here are strings, as the call and its reading hold them: os.path on a hook's path.
# ruff: noqa: PTH118, PTH206
# Annotations here are not postponed (issue 41: a hook's path loads no typing work it spares).

import os
from collections.abc import Sequence

from wisp.policy.reading import MUST_ASK, Class, Effect, Reading, readable_outside
from wisp.policy.rules import BUILTIN_NAMES, Action, Origin, Policy, Rule

# Their names, as the person's policy file turns them off (rules.BUILTIN_NAMES: one list).
READ_ONLY, PROJECT_EDITS = BUILTIN_NAMES
WHERE = "built in"
RULES: dict[str, Rule] = {
    name: Rule(name=name, action=Action.ALLOW, origin=Origin.BUILTIN, where=WHERE)
    for name in BUILTIN_NAMES
}
# What no built-in rule lets an agent edit, anywhere in the project: folders whose files run
# or configure by themselves (git's hooks, the harnesses' settings and hooks, editors' tasks,
# CI workflows, commit hooks), wisp's own, and files of secrets or of a shell's environment.
NEVER_EDITED = frozenset(
    {
        ".git",
        ".wisp",
        ".claude",
        ".codex",
        ".gemini",
        ".cursor",
        ".opencode",
        ".copilot",
        ".github",
        ".vscode",
        ".idea",
        ".husky",
        ".direnv",
        ".envrc",
        ".env",
    }
)
BRACE = "{"  # a glob tool's alternatives (`{a,b}`): each may lead anywhere
SECRET_PREFIX = ".env."  # noqa: S105 (a file name, not a secret) - `.env.local`, `.env.production`: secrets as `.env` is


def within(path: str, root: str) -> bool:
    """Whether *path* (absolute), links resolved, is *root* or under it."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def never_edited(path: str, project: str) -> bool:
    """Whether *path* (in *project*) is one no built-in rule lets an agent edit."""
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(project))
    parts = relative.split(os.sep)
    return any(part in NEVER_EDITED or part.startswith(SECRET_PREFIX) for part in parts)


def _absolute(paths: Sequence[str], cwd: str) -> tuple[str, ...]:
    return tuple(os.path.normpath(os.path.join(cwd, path)) for path in paths)


def reads_in_project(
    effect: Effect, reading: Reading, cwd: str, project: str, paths: Sequence[str]
) -> bool:
    """The `read-only` rule's test."""
    if reading.classes & MUST_ASK or Class.UNREAD in reading.classes:
        return False
    if effect is Effect.SHELL:
        line = reading.line
        if not reading.read_only or line is None or line.unread or not line.commands:
            return False
        return all(c.cwd is not None and within(c.cwd, project) for c in line.commands)
    if effect is Effect.READ:
        absolute = _absolute(paths, cwd) or (cwd,)
        return all(_read_here(path, project) for path in absolute)
    return False


def _read_here(path: str, project: str) -> bool:
    """Whether a read tool's *path* (absolute; a glob tool's pattern too) stays in the project
    or a system place (:data:`~wisp.policy.reading.SYSTEM_READABLE`). A brace in it
    (`{src,/etc}/*`) may name any place: not."""
    if BRACE in path:
        return False
    return within(path, project) or readable_outside(path)


def edits_in_project(
    effect: Effect, reading: Reading, cwd: str, project: str, paths: Sequence[str]
) -> bool:
    """The `project-edits` rule's test."""
    if effect is not Effect.EDIT or not paths or reading.classes != {Class.EDIT_IN_PROJECT}:
        return False
    absolute = _absolute(paths, cwd)
    return all(within(p, project) and not never_edited(p, project) for p in absolute)


def allowing(
    effect: Effect,
    reading: Reading,
    cwd: str,
    project: str | None,
    paths: Sequence[str],
    policy: Policy,
) -> Rule | None:
    """The first built-in rule (not turned off in *policy*) that allows the call, or None."""
    if project is None:
        return None
    off = policy.builtins_off
    if READ_ONLY not in off and reads_in_project(effect, reading, cwd, project, paths):
        return RULES[READ_ONLY]
    if PROJECT_EDITS not in off and edits_in_project(effect, reading, cwd, project, paths):
        return RULES[PROJECT_EDITS]
    return None
