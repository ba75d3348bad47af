"""The decision: one call → allow, deny or ask, and what decided it, in one order — the
self-guard, deny and ask rules, the must-ask classes, the person's grants, allow rules (the
person's, then the built-in ones), else ask — and one audit record (`call.decided`) for each
call, whoever decided it.

Every harness's hook (:func:`wisp.agents.gate.decide_call`), the permission prompt tool
(:class:`wisp.agents.session.AgentSession`) and `wisp exec` decide here:

1. **the self-guard**: a call that reaches wisp's own channel or program is asked, whatever
   any rule or grant says (the caller finds it: the guard reads paths as the harness would,
   in the agents wing, and hands its finding in);
2. **deny rules, then ask rules** (the person's and the project's): a rule that says "deny" or
   "ask me" is never loosened by a grant (an `ask` rule is the person saying "always ask me
   this", and a project's `ask` must be able to tighten what the person granted);
3. **the must-ask classes** (a write outside the project, the network, `rm -r`, a pipe into
   a shell, `sudo`): asked; no grant covers them (only the `once` the person answers);
4. **the person's grants**: the stored and session grants, looked up exactly as before
   (:meth:`~wisp.kinds.standing.StandingGrants.covering_call`), audited here, once;
5. **allow rules**: the person's (none while their policy file is refused: the refusal is
   said in the request), then the built-in ones (:mod:`wisp.policy.builtin`);
6. else the person is asked (a line the parser could not read fully: said so).

Cheap on a hook's path: no attrs, no channel, no asker; the person's policy file is read
only when it (or the project's) exists.
"""

from __future__ import annotations

# Paths here are strings, as the call and its reading hold them: os.path on a hook's path.
# ruff: noqa: PTH118
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from pending import NamedTuple
from wisp._entry import EntryPoint
from wisp.audit.writer import AuditEvent, audit
from wisp.kinds.standing import StandingGrants
from wisp.policy import builtin
from wisp.policy.calls import Decider as Decider  # named here too: the decision's words
from wisp.policy.calls import Verdict as Verdict
from wisp.policy.reading import MUST_ASK, Class, Effect, Reading, read_shell, read_tool
from wisp.policy.rules import POLICY_FILE, Action, Policy, Rule, Subject, load_policy
from wisp.stores.grants import Grant, project_of

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

NO_INPUT: Mapping[str, Any] = MappingProxyType({})


class Call(NamedTuple):
    """One tool call, as the policy needs it: what :func:`decide` reads, matches rules and
    grants against, and records. The agents wing builds it from its own
    :class:`~wisp.agents.gate.ToolCall` (:meth:`~wisp.agents.gate.ToolCall.policy_call`)."""

    harness: str  # as `wisp hook NAME` spells it ("" for wisp's own, `wisp exec`)
    session: str | None  # the harness's session: a session grant's thread
    cwd: str  # absolute
    project: str | None  # the git root of cwd (:func:`project_for`); None: no project
    tool: str  # the harness's own name for the tool
    effect: Effect  # what the tool does, as its harness's table says
    paths: tuple[str, ...] = ()  # the paths its input names (absolute, or relative to cwd)
    command: str | None = None  # a shell call's line
    input: Mapping[str, Any] = NO_INPUT
    options: Mapping[str, Any] | None = None  # a shell call's other fields: bound by a grant


class Decision(NamedTuple):
    verdict: Verdict
    decider: Decider
    name: str | None  # the rule's name or the grant's ID
    reason: str  # in words, for the harness and the person
    reading: Reading | None = None
    rule: Rule | None = None  # the rule that decided, if one did
    grant: Grant | None = None  # the grant that allowed it, if one did


def project_for(cwd: str) -> str | None:
    """The session's project for a call run in *cwd*: the git root above it
    (:func:`~wisp.stores.grants.project_of`), or None when there is none (every edit is then
    outside a project)."""
    found = project_of(cwd)
    return found if os.path.lexists(os.path.join(found, ".git")) else None


def policy_for(home: Path, project: str | None) -> Policy:
    """The rules in force for *project* (:func:`~wisp.policy.rules.load_policy`: one `lstat`
    a file when there is none, no TOML reader loaded); a file refused, or one that cannot be
    read at all, is a refused policy (nothing of the person's allows; the request says why)."""
    try:
        return load_policy(home, project)
    except Exception as exc:  # never a traceback on a hook's path: the refusal is said instead
        return Policy(refused=f"{home / POLICY_FILE} could not be read ({exc})")


def read_call(call: Call) -> Reading:
    """*call* read for the policy; whatever cannot be read is unread (asked)."""
    try:
        if call.effect is Effect.SHELL and call.command is not None:
            return read_shell(call.command, call.cwd, call.project)
        return read_tool(call.effect, call.paths, call.cwd, call.project)
    except Exception:  # a reading that fails allows nothing: the person is asked
        return Reading(classes=frozenset({Class.UNREAD}), must_ask=())


def subject_of(call: Call, reading: Reading) -> Subject:
    """What a rule is matched against."""
    commands = tuple(s.words for s in reading.line.commands) if reading.line is not None else ()
    paths = reading.written or tuple(
        os.path.normpath(os.path.join(call.cwd, p)) for p in call.paths
    )
    return Subject(
        harness=call.harness,
        tool=call.tool,
        effect=call.effect,
        cwd=call.cwd,
        project=call.project,
        commands=commands,
        paths=paths,
    )


def rule_reason(rule: Rule, verb: str) -> str:
    """`denied by rule NAME (FILE:LINE)`, and as it asks or allows."""
    return f"{verb} by rule {rule.name} ({rule.where})"


def refusal_note(policy: Policy) -> str | None:
    if policy.refused is None:
        return None
    return (
        f"your policy file was refused ({policy.refused}): none of your rules allows "
        "anything until it is fixed (`wisp policy list` says what is wrong)"
    )


def _joined(*parts: str | None) -> str:
    return "; ".join(part for part in parts if part)


def decide(
    call: Call,
    *,
    home: Path,
    grants: StandingGrants | None,
    guard: str | None = None,
    policy: Policy | None = None,
    entry_point: EntryPoint = EntryPoint.HOOK,
) -> Decision:
    """*call* decided, in the order above: allow or deny (audited here, one `call.decided`
    record), or ask (the caller files it and records how it ended, :func:`record_call`).
    *guard* is the self-guard's finding in words (None: it reaches nothing of wisp's);
    *grants* None looks up no grant (a caller with none to give)."""
    decision = _decided(call, home, grants, guard, policy)
    if decision.verdict is not Verdict.ASK:
        record_call(home, call, decision, entry_point=entry_point)
    return decision


def explain(
    call: Call,
    *,
    home: Path,
    grants: StandingGrants | None,
    guard: str | None = None,
    policy: Policy | None = None,
) -> Decision:
    """What :func:`decide` would decide of *call*, recording nothing: `wisp policy check`."""
    return _decided(call, home, grants, guard, policy)


def _decided(
    call: Call,
    home: Path,
    grants: StandingGrants | None,
    guard: str | None,
    policy: Policy | None,
) -> Decision:
    if guard is not None:  # never loosened: not read further, no rule, no grant
        return Decision(Verdict.ASK, Decider.GUARD, None, guard)
    reading = read_call(call)
    if policy is None:
        policy = policy_for(home, call.project)
    note = refusal_note(policy)
    subject = subject_of(call, reading)
    for action, verdict in ((Action.DENY, Verdict.DENY), (Action.ASK, Verdict.ASK)):
        rule = _first(policy, action, subject)
        if rule is not None:
            verb = "denied" if verdict is Verdict.DENY else "asked"
            reason = _joined(rule_reason(rule, verb), note)
            return Decision(verdict, Decider.RULE, rule.name, reason, reading, rule)
    if reading.classes & MUST_ASK:
        said = "; ".join(reading.must_ask) or ", ".join(sorted(reading.classes & MUST_ASK))
        reason = _joined(f"always asked: {said}", note)
        return Decision(Verdict.ASK, Decider.MUST_ASK, None, reason, reading)
    grant = _grant(grants, call, reading, subject.paths)
    if grant is not None:
        return Decision(Verdict.ALLOW, Decider.GRANT, grant.name, "", reading, grant=grant)
    rule = None if policy.refused is not None else _first(policy, Action.ALLOW, subject)
    if rule is None:
        rule = builtin.allowing(call.effect, reading, call.cwd, call.project, subject.paths, policy)
    if rule is not None:
        return Decision(
            Verdict.ALLOW, Decider.RULE, rule.name, rule_reason(rule, "allowed"), reading, rule
        )
    if Class.UNREAD in reading.classes:
        unread = reading.line.unread if reading.line is not None else None
        why = f"wisp could not read it fully ({unread})" if unread else "wisp could not read it"
        return Decision(Verdict.ASK, Decider.UNREAD, None, _joined(why, note), reading)
    return Decision(Verdict.ASK, Decider.NO_RULE, None, _joined(*reading.notes, note), reading)


def _first(policy: Policy, action: Action, subject: Subject) -> Rule | None:
    if not policy.rules:
        return None
    try:
        return policy.first(action, subject)
    except Exception:  # a rule that cannot be matched decides nothing (the person is asked)
        return None


def _grant(
    grants: StandingGrants | None, call: Call, reading: Reading, paths: tuple[str, ...]
) -> Grant | None:
    """The person's grant that covers *call* (exactly, or a wider one: a command's words,
    an edit's file or project), or None. Asked only for a call of no must-ask class."""
    if grants is None:
        return None
    if call.command is not None:
        from wisp.policy.widths import grant_parts, grant_words

        # A line that writes into a protected place (`.git/hooks/`, `.wisp/`, `.envrc`: what
        # runs or decides by itself) is covered only by a grant of that very line, never by
        # "this command with any arguments" (`cp *` must not reach `cp x .git/hooks/pre-commit`).
        wide = not reading.protected
        grant = grants.covering_call(
            cwd=call.cwd,
            thread=call.session,
            command=call.command,
            options=call.options,
            words=grant_words(reading.line) if wide else None,
        )
        if grant is not None or not wide:
            return grant
        return _parts_granted(grants, call, grant_parts(reading.line, call.project))
    edits = paths if call.effect is Effect.EDIT else ()
    return grants.covering_call(
        cwd=call.cwd, thread=call.session, tool=call.tool, tool_input=call.input, edits=edits
    )


def _parts_granted(
    grants: StandingGrants, call: Call, parts: tuple[tuple[str, ...], ...] | None
) -> Grant | None:
    """The grant of a list's or pipeline's last part when a `command` grant covers each part
    that is not read-only (:func:`wisp.policy.widths.grant_parts`), else None."""
    from wisp.stores.grants import shlex_join

    grant = None
    for words in parts or ():
        grant = grants.covering_call(
            cwd=call.cwd,
            thread=call.session,
            command=shlex_join(words),
            options=call.options,
            words=words,
        )
        if grant is None:
            return None
    return grant


# --- the record ---------------------------------------------------------------------------


def call_fields(call: Call) -> dict[str, Any]:
    """What every `call.decided` record carries of the call."""
    shell = call.command is not None
    return {
        "kind": "command" if shell else "tool",
        "harness": call.harness or None,
        "session": call.session,
        "tool": call.tool,
        "effect": call.effect.value,
        "command": call.command,
        "input": None if shell else dict(call.input),
        "cwd": call.cwd,
        "project": call.project,
    }


def decision_fields(decision: Decision) -> dict[str, Any]:
    """What decided: the rule (name, where, whose) or the grant (ID, scope)."""
    fields: dict[str, Any] = {}
    if decision.rule is not None:
        rule = decision.rule
        fields.update(rule=rule.name, ruleWhere=rule.where, ruleOrigin=rule.origin.value)
    if decision.grant is not None:
        fields.update(grant=decision.grant.name, scope=decision.grant.scope.value)
    return fields


def record_call(
    home: Path,
    call: Call,
    decision: Decision,
    *,
    entry_point: EntryPoint,
    verdict: Verdict | None = None,
    decider: Decider | None = None,
    extra: Mapping[str, Any] | None = None,
) -> bool:
    """The one `call.decided` record of *call*: *decision* as decided here, or (a call put
    to the person) its final *verdict* and *decider* (`person`, `timeout`, `stopped`), the
    decision that asked named in `asked`, and *extra* (`request`, `user`, `via`, `scope`)."""
    asked = decider is not None and decision.verdict is Verdict.ASK
    fields: dict[str, Any] = {
        "verdict": (verdict or decision.verdict).value,
        "decider": (decider or decision.decider).value,
        **decision_fields(decision),
        **({"asked": decision.decider.value} if asked else {}),
        "reason": decision.reason or None,
        **call_fields(call),
        **(extra or {}),
    }
    return audit(home, AuditEvent.CALL_DECIDED, fields, entry_point=entry_point)
