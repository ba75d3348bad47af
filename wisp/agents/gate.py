"""The gate core every harness stands on: a tool call → the policy's decision → a request
→ a decision.

A harness's module reads its own event into a :class:`ToolCall` (the shell tool's command
picked out as :attr:`ToolCall.command`) and answers in its own shape; what lies between is
here, once, for every harness, for :class:`~wisp.agents.session.AgentSession`'s permission
prompt and for `wisp exec` alike:

- :func:`decide_open`: the call (its program files bound) as the policy reads it
  (:meth:`ToolCall.policy_call`: the harness's table says what the tool does, the project is
  the git root of its cwd) decided by :func:`wisp.policy.decide.decide` — the self-guard
  first (a call that names `$WISP_HOME` or wisp's own program is always put to the person,
  never allowed by a rule or a grant), then the rules, the must-ask classes, the grants;
- :func:`decide_call` (a hook's one call), :func:`open_call` (the permission prompt),
  :func:`exec_approval` (`wisp exec`): allowed or denied at once, or the call filed for the
  person — a shell call as a `command` request, any other as a `tool` request, the harness's
  session as the thread, with why it is asked and the answers of the right width;
- :func:`end_call`: after the wait, how the request ended (withdrawn if nobody answered in
  time: an answer that got there first stands); :func:`record_ending`, its one
  `call.decided` record;
- :func:`call_verdict`, :func:`decided_reason`, :func:`unanswered_reason`: the verdict and
  its words (who decided, how and when, or why nobody did).

Silence is never an allow: a call nobody answered is denied when its class says so (a
must-ask class, the self-guard's, or `policy.onSilence: deny`: :mod:`wisp.policy.silence`);
else what its harness does with it (ask in its own dialog, or deny) is its module's choice,
never this core's. Its push to the phone is held back by its class's
`policy.pushAfterSeconds`, and sent only if it still waits then.
"""

from __future__ import annotations

# Paths here are strings, as the call and its reading hold them: os.path on a hook's path.
# ruff: noqa: PTH118
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from pending import (
    MAX_RECORD_BYTES,
    Kind,
    NamedTuple,
    Outcome,
    PendingError,
    RecordTooLarge,
    StrEnum,
    canonical_json,
    format_time,
    resource_shortage,
)
from wisp._deadlines import Cancel
from wisp._entry import EntryPoint
from wisp._errors import WispError
from wisp._home import open_channel
from wisp.agents.guard import Guard, Reached, Touch
from wisp.audit.writer import AuditLogUnsafe
from wisp.kinds.programs import bind_command, changed_since, programs_bound
from wisp.kinds.standing import StandingGrants
from wisp.policy.decide import Call, Decider, Decision, Verdict, decide, project_for, record_call
from wisp.policy.reading import Effect
from wisp.stores.grants import Grant
from wisp.stores.jsonstore import StoreError

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import Any

    # The records, the asking side, the asking gate and the settings are loaded to file a
    # call, not for one a grant covers: that hook loads no attrs (bench/README.md, issue 41).
    from pending import Request
    from wisp._asking import Asker
    from wisp.kinds._asker import Ending
    from wisp.kinds.command_gate import Approval, ApprovalGate, Widths

# What is asked must fit one request record (MAX_RECORD_BYTES) with the rest of the record.
MAX_ASKED_BYTES = MAX_RECORD_BYTES - 8 * 1024
OWN_CHANNEL = (
    "it touches wisp's own channel ($WISP_HOME, {path}): an agent that can write there can "
    "answer for you"
)
OWN_PROGRAM = (
    "it touches wisp's own program ({path}): an agent that can change what your hook runs "
    "can allow every later call itself"
)


class ToolCall(NamedTuple):
    """A tool call an agent is about to make, as its harness's module read it. (A named
    tuple, as the rest of the granted hook's path: no attrs to load, issue 41.)"""

    session: str  # the harness's session: the requests' thread, and a session grant's
    cwd: str  # absolute
    tool: str  # the harness's own name for the tool
    input: Mapping[str, Any]
    command: str | None = None  # a shell call's command: asked as a command request
    description: str | None = None  # what the agent says a shell command is for
    # A shell call's other fields (a timeout, a sandbox switched off, …): shown to the person
    # and part of what a grant covers. None when it has none.
    options: Mapping[str, Any] | None = None
    # What the person must see first (a call that asks to run outside the sandbox).
    warnings: tuple[str, ...] = ()
    tool_use_id: str | None = None
    # What the tool does, as its harness's table says (:func:`wisp.agents.hookio.with_effect`),
    # and the paths its input names. None: a shell call's is a shell line, any other tool's
    # is what nobody knows (asked, never allowed by a built-in rule).
    effect: Effect | None = None
    paths: tuple[str, ...] = ()

    def policy_call(self, harness: str) -> Call:
        """This call as the policy reads it (:class:`wisp.policy.decide.Call`): its
        harness's name, what the tool does, and the session's project (the git root of its
        cwd)."""
        effect = self.effect or (Effect.SHELL if self.command is not None else Effect.OTHER)
        return Call(
            harness=harness,
            session=self.session,
            cwd=self.cwd,
            project=project_for(self.cwd),
            tool=self.tool,
            effect=effect,
            paths=self.paths,
            command=self.command,
            input=self.input,
            options=self.options,
        )


# --- wisp's own channel ----------------------------------------------------------------


def touches_wisp(call: ToolCall, home: Path) -> Touch | None:
    """What of wisp's own directory or program *call* can reach (or runs `wisp` to answer or
    grant: the directory), or None (:mod:`wisp.agents.guard`): a tripwire for the person's
    attention, behind the harness's sandbox, which is the wall."""
    return Guard(home).reaches(call.cwd, call.input, call.command)


def bound_call(call: ToolCall) -> ToolCall:
    """*call* with the program files its shell command runs that the agent can write bound
    to their content, in its options (:mod:`wisp.kinds.programs`): shown to the person, and
    part of what a grant covers."""
    if call.command is None:
        return call
    return call._replace(options=bind_command(call.command, call.cwd, call.options))


def guard_reason(touch: Touch) -> str:
    """Why a guarded call is put to the person, whatever grant there is."""
    template = OWN_CHANNEL if touch.reached is Reached.CHANNEL else OWN_PROGRAM
    return template.format(path=touch.path)


def too_large(call: ToolCall) -> bool:
    """Whether *call* is larger than a request can show the person whole."""
    return len(canonical_json(call.input)) > MAX_ASKED_BYTES


def refuse_too_large(call: ToolCall) -> None:
    """Raise :class:`TooLarge` for a call larger than a request can show whole, at once: no
    grant covers it (every grant is of a call once shown whole, and matches it exactly), so
    nothing reads it further — the guard's and the program binding's reading of a shell line
    take time that grows with it (a 1 MB command took 5 s of CPU, issue 59)."""
    if too_large(call):
        raise TooLarge(call)


def _holds_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, Mapping):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(v) for v in value)
    return False


def refuse_nul(call: ToolCall) -> None:
    """Raise :class:`NulInCall` for a call whose working directory, command or input holds
    a NUL byte, before anything reads a path of it (Python's own error for such a path is a
    ValueError with no class of its own)."""
    if _holds_nul(call.cwd) or _holds_nul(call.command) or _holds_nul(call.input):
        raise NulInCall()


class NulInCall(WispError):
    """A call names a path with a NUL byte in it, which no file can have: nothing was filed."""

    def __init__(self) -> None:
        super().__init__(
            "the call names a path with a NUL byte in it (its working directory or an "
            "argument), which no file can have: nothing was filed"
        )


class TooLarge(Exception):
    """A call larger than a request can show the person whole (its input, or the request
    it makes with its title and body): nothing was filed."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(
            f"this {call.tool} call is larger than a request can show you whole (a request "
            f"holds {MAX_RECORD_BYTES:,} bytes with its title and body); nothing was filed"
        )


# --- asking ----------------------------------------------------------------------------


def decide_open(
    grants: StandingGrants | None,
    call: ToolCall,
    home: Path,
    harness: str,
    *,
    entry_point: EntryPoint = EntryPoint.HOOK,
) -> tuple[ToolCall, Call, Touch | None, Decision]:
    """*call* (its programs bound) decided by the policy (:func:`wisp.policy.decide.decide`,
    the self-guard's finding handed in): allowed or denied there and then (audited), or to
    be asked. Raises :class:`TooLarge` for a call too large to file, before anything reads
    it (:func:`refuse_too_large`)."""
    refuse_too_large(call)
    refuse_nul(call)
    call = bound_call(call)
    touch = touches_wisp(call, home)
    asked = call.policy_call(harness)
    guard = guard_reason(touch) if touch is not None else None
    decision = decide(asked, home=home, grants=grants, guard=guard, entry_point=entry_point)
    return call, asked, touch, decision


def open_call(
    gate: ApprovalGate, call: ToolCall, home: Path, harness: str
) -> tuple[Decision, Request | None, Call]:
    """The policy's decision on *call* (audited when it allows or denies), and, when it
    asks, the request filed for the person (returning at once); with the call as the policy
    read it, for the record of how it ends (:func:`record_ending`). Raises
    :class:`TooLarge` for a call too large to file."""
    call, asked, touch, decision = decide_open(
        gate, call, home, harness, entry_point=gate.entry_point
    )
    if decision.verdict is not Verdict.ASK:
        return decision, None, asked
    push_after_s = push_after_for(home, decision)
    return decision, file_call(gate, call, touch, decision, asked, push_after_s=push_after_s), asked


def push_after_for(home: Path, decision: Decision) -> float:
    """How long the call *decision* asks about waits before it is pushed to the phone: its
    class's `policy.pushAfterSeconds` (a config.json that cannot be read: at once, as
    every command that reads it says what is wrong)."""
    from wisp.policy.silence import silence_for
    from wisp.stores.config import ConfigError, load_config

    try:
        config = load_config(home)
    except ConfigError:
        return 0.0
    return silence_for(
        decision, config["policy.pushAfterSeconds"], config["policy.onSilence"]
    ).push_after_s


def decision_reason(decision: Decision) -> str:
    """Why a call the policy allowed or denied at once was, in words: a grant's (whose,
    which, when given), or the rule's."""
    if decision.grant is not None:
        return granted_reason(decision.grant)
    return f"wisp: {decision.reason}"


def widths_of(asked: Call, decision: Decision, grants: StandingGrants | None = None) -> Widths:
    """The answers of the right width a person is offered beside the exact call: for a
    shell line, "this command with any arguments" for each of its commands' prefixes that
    no grant of *grants* covers yet (so that a list's second command is offered once its
    first is granted, not the first again)."""
    from wisp.kinds.command_gate import Widths

    reading = decision.reading
    edits: tuple[str, ...] = ()
    if asked.effect is Effect.EDIT:
        edits = tuple(os.path.normpath(os.path.join(asked.cwd, p)) for p in asked.paths)
    if reading is None:  # the self-guard's: asked once, nothing wider offered
        return Widths(must_ask=(decision.reason,), project=asked.project)
    return Widths(
        must_ask=reading.must_ask
        or ((decision.reason,) if decision.decider is Decider.MUST_ASK else ()),
        prefixes=tuple(p for p in reading.prefixes if not _covered(grants, asked, p)),
        edit_paths=edits,
        project=asked.project,
    )


def _covered(grants: StandingGrants | None, asked: Call, prefix: tuple[str, ...]) -> bool:
    """Whether a grant of *grants* already covers the command *prefix* begins."""
    if grants is None:
        return False
    from wisp.stores.grants import shlex_join

    found = grants.covering_call(
        cwd=asked.cwd,
        thread=asked.session,
        command=shlex_join(prefix),
        options=asked.options,
        words=prefix,
    )
    return found is not None


def file_call(
    gate: ApprovalGate,
    call: ToolCall,
    touch: Touch | None,
    decision: Decision | None = None,
    asked: Call | None = None,
    *,
    push_after_s: float = 0.0,
) -> Request:
    """File *call* for the person, returning at once: a shell call as a command request
    (its description as the reason), any other as a `tool` request, the call's session as
    the thread; one the self-guard stopped (*touch*) says what of wisp's it touches, one the
    policy asks (*decision*) why, with the answers of the right width it offers. Its push to
    the phone is held back *push_after_s* (its class's `policy.pushAfterSeconds`)."""
    if too_large(call):
        raise TooLarge(call)
    guard = guard_reason(touch) if touch is not None else None
    why = decision.reason if decision is not None and touch is None else None
    said = (*call.warnings, guard, why)
    widths = (
        widths_of(asked, decision, gate) if asked is not None and decision is not None else None
    )
    try:
        if call.command is not None:
            changed = gate.program_changes(call.command, call.cwd, call.session, call.options)
            parts = (*said, changed, call.description)
            reason = "; ".join(part for part in parts if part) or None
            return gate.file(
                call.command,
                call.cwd,
                reason=reason,
                thread=call.session,
                options=call.options,
                widths=widths,
                push_after_s=push_after_s,
            )
        reason = "; ".join(part for part in said if part) or None
        return gate.file_tool(
            call.tool,
            call.input,
            call.cwd,
            thread=call.session,
            reason=reason,
            widths=widths,
            push_after_s=push_after_s,
        )
    except RecordTooLarge:  # its title and body with it: over the cap, refused unpublished
        raise TooLarge(call) from None


def record_ending(
    home: Path,
    asked: Call,
    decision: Decision,
    ending: Ending | None,
    *,
    entry_point: EntryPoint,
    approved: bool | None = None,
    silence: Verdict = Verdict.DENY,
    stopped: bool = False,
) -> None:
    """The one `call.decided` record of a call put to the person, once its request ended:
    the person's answer (*approved*, who, via which face), a time-out (what the harness does
    with *silence*), or a stop (denied)."""
    request = ending.request.id if ending is not None else None
    extra: dict[str, Any] = {"request": request}
    if answered(ending) and approved is not None:
        assert ending is not None and ending.answer is not None
        answer = ending.answer
        extra.update(user=answer.user, via=answer.via, answer=answer.decision)
        verdict, decider = (Verdict.ALLOW if approved else Verdict.DENY), Decider.PERSON
    elif stopped:
        verdict, decider = Verdict.DENY, Decider.STOPPED
    else:
        verdict, decider = silence, Decider.TIMEOUT
        if ending is not None:
            extra["outcome"] = ending.outcome.value
    record_call(
        home,
        asked,
        decision,
        entry_point=entry_point,
        verdict=verdict,
        decider=decider,
        extra=extra,
    )


def exec_approval(
    gate: ApprovalGate,
    command: str,
    cwd: str,
    *,
    options: Mapping[str, Any] | None,
    reason: str | None,
    on_filed: Callable[[Request], None] | None = None,
) -> Approval:
    """`wisp exec`'s call (*command*, a shell-quoted argv, with its bound *options*) decided
    by the policy as every harness's is — the self-guard, rules, grants — and, when it asks,
    put to the person and waited for (no wait limit but the request's own); one
    `call.decided` record either way. A rule's deny is an approval not given, its reason
    the rule's. Raises :class:`pending.ChannelUnwritable` as
    :meth:`~wisp.kinds.command_gate.ApprovalGate.request` does."""
    from wisp.kinds.command_gate import Approval, ApprovalOutcome

    home = gate.home
    touch = Guard(home).reaches(cwd, {"command": command}, command)
    asked = Call(
        harness="",
        session=None,
        cwd=cwd,
        project=project_for(cwd),
        tool="exec",
        effect=Effect.SHELL,
        command=command,
        options=options,
    )
    guard = guard_reason(touch) if touch is not None else None
    decision = decide(asked, home=home, grants=gate, guard=guard, entry_point=gate.entry_point)
    if decision.verdict is not Verdict.ASK:
        grant = decision.grant
        return Approval(
            approved=decision.verdict is Verdict.ALLOW,
            outcome=ApprovalOutcome.GRANTED if grant is not None else ApprovalOutcome.ANSWERED,
            scope=grant.scope if grant is not None else None,
            grant=grant,
            reason=decision_reason(decision).removeprefix("wisp: "),
        )
    changed = gate.program_changes(command, cwd, None, options)
    request = gate.file(
        command,
        cwd,
        reason="; ".join(part for part in (decision.reason, changed, reason) if part) or None,
        on_filed=on_filed,
        options=options,
        widths=widths_of(asked, decision, gate),
        push_after_s=push_after_for(home, decision),
    )
    ending = gate.asker.wait(request.id)
    assert ending is not None  # no wait limit: only an ending returns
    if ending.error is not None and ending.outcome is not Outcome.TIMED_OUT:
        raise ending.error  # not approved, and the channel cannot be used: say so
    approval = gate.verdict(ending)
    record_ending(
        home, asked, decision, ending, entry_point=gate.entry_point, approved=approval.approved
    )
    return approval


def end_call(asker: Asker, request: Request, ending: Ending | None) -> Ending | None:
    """How *request* ended, after its wait: with no *ending* (nobody answered in time, or
    the wait was cancelled) it is withdrawn, and an answer that got there first stands."""
    if ending is not None:
        return ending
    endings = asker.withdraw(request.id)
    return endings[0] if endings else asker.wait(request.id, 0)


def answered(ending: Ending | None) -> bool:
    """Whether the person's answer ended the request (not a time-out, withdrawal, …)."""
    return ending is not None and ending.outcome is Outcome.ANSWERED


def call_verdict(gate: ApprovalGate, ending: Ending) -> Approval:
    """The approval an ended command or tool request gives; a `session` approval is kept
    for the request's thread."""
    request = ending.request
    verdict = gate.verdict(ending) if request.kind is Kind.COMMAND else gate.tool_verdict(ending)
    return gate.remember_for_thread(verdict, ending)


# --- in words --------------------------------------------------------------------------


def _who(ending: Ending) -> str:
    answer = ending.answer
    assert answer is not None
    return f"by {answer.user} via {answer.via} at {format_time(answer.answered_at)}"


def decided_reason(approval: Approval, ending: Ending | None = None) -> str:
    """Why a call is allowed or denied, in words: a grant's (whose, which, when given), or
    the person's answer to *ending* (who, how, when)."""
    request_id = approval.request_id
    if approval.approved and ending is None:  # a grant covered it: nothing was filed
        assert approval.grant is not None
        return granted_reason(approval.grant)
    assert ending is not None
    if approval.approved:
        reason = f"wisp: approved {approval.scope} {_who(ending)} (request {request_id})"
        return reason + (f"; {approval.reason}" if approval.reason else "")
    reason = f"wisp: denied {_who(ending)} (request {request_id})"
    return reason + (f": {approval.reason}" if approval.reason else "")


def granted_reason(grant: Grant) -> str:
    """Why a call a standing grant covers is allowed: whose grant, which, and when given."""
    return (
        f"wisp: allowed by {grant.user}'s {grant.scope} approval "
        f"({grant.id}, given {format_time(grant.granted_at)} for request {grant.request})"
    )


def unanswered_reason(request_id: str, ending: Ending | None, wait_s: float) -> str:
    """Why nobody's answer decides the call: none came within *wait_s* (the request timed
    out or was withdrawn), or the request ended otherwise."""
    outcome = ending.outcome.value if ending is not None else Outcome.WITHDRAWN.value
    if ending is not None and ending.outcome not in (Outcome.WITHDRAWN, Outcome.TIMED_OUT):
        return f"request {request_id} ended {outcome}" + (
            f": {ending.reason}" if ending.reason else ""
        )
    return f"nobody answered request {request_id} in wisp within {wait_s:g} s ({outcome})"


# --- one call, decided: what a harness's hook process does -------------------------------


def _warn(message: str) -> None:
    """A watcher's warning, on stderr: a hook's stdout carries its harness's JSON only."""
    sys.stderr.write(f"wisp: {message}\n")


def _unprefixed(reason: str) -> str:
    return reason.removeprefix("wisp: ")


class Ended(StrEnum):
    """How a hook's one call was decided."""

    ALLOWED = "allowed"  # by a grant, or the person
    DENIED = "denied"  # by the person
    UNANSWERED = "unanswered"  # nobody answered in time: withdrawn (or otherwise ended)
    # Nobody answered in time, and its class denies such a call (a must-ask class, the
    # self-guard's, `policy.onSilence: deny`): denied, whatever the harness would do.
    SILENCED = "silenced"
    STOPPED = "stopped"  # its wait was cancelled (a signal, the harness gone): withdrawn
    TOO_LARGE = "too-large"  # not filed: no request can show it whole


class Decided(NamedTuple):
    """A hook's call decided, in words (without the `wisp: ` a harness's answer adds)."""

    ended: Ended
    reason: str
    request_id: str | None = None


def decide_call(
    call: ToolCall,
    *,
    home: Path,
    client: str,
    wait_s: float,
    cancel: Cancel,
    expiry_after_s: float,
    why_stopped: Callable[[], str | None] = lambda: None,
    silence: Verdict = Verdict.DENY,
    on_ask: Callable[[], None] = lambda: None,
) -> Decided:
    """Decide *call* by the policy (:func:`wisp.policy.decide.decide`: the self-guard, rules,
    grants), and if it asks, file it (its push held back by its class's
    `policy.pushAfterSeconds`), wait for the person at most *wait_s* (*cancel* ends the
    wait at once), withdraw it if nobody answered, and say how it was decided; one
    `call.decided` record either way. Unanswered, it is :attr:`Ended.SILENCED` (denied)
    when its class says so (:func:`wisp.policy.silence.silence_for`), else
    :attr:`Ended.UNANSWERED`, which the caller's harness turns into *silence* (its ask or
    its deny, as recorded). *client* is the harness's name: its table says what its
    tools do. The request's own deadline is *expiry_after_s* after the wait, so the hook, not
    the deadline, ends an unanswered request. *on_ask* is called before a call is filed (a
    hook starts following its harness then). Raises what the channel raises."""
    # A call a rule or a standing grant decides is decided from the policy and the grant
    # store alone: no settings, no channel, no asker (its lock file) and no asking side
    # loaded (issue 41).
    try:
        call, asked, touch, decision = decide_open(
            StandingGrants(home, EntryPoint.HOOK), call, home, client
        )
    except TooLarge as exc:
        return Decided(ended=Ended.TOO_LARGE, reason=str(exc))
    if decision.verdict is Verdict.ALLOW:
        return Decided(ended=Ended.ALLOWED, reason=_unprefixed(decision_reason(decision)))
    if decision.verdict is Verdict.DENY:
        return Decided(ended=Ended.DENIED, reason=decision.reason)
    on_ask()
    from wisp._asking import Asker
    from wisp.kinds.command_gate import ApprovalGate
    from wisp.policy.silence import silence_for
    from wisp.stores.config import load_config

    config = load_config(home)
    by_class = silence_for(decision, config["policy.pushAfterSeconds"], config["policy.onSilence"])
    with open_channel(home) as channel:
        asker = Asker(
            channel,
            entry_point=EntryPoint.HOOK,
            client=client,
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=_warn,
            pumped=True,  # one call, waited on at once: the wait reads and settles
        )
        try:
            gate = ApprovalGate(asker, timeout_s=wait_s + expiry_after_s)
            try:
                opened = file_call(
                    gate, call, touch, decision, asked, push_after_s=by_class.push_after_s
                )
            except TooLarge as exc:
                return Decided(ended=Ended.TOO_LARGE, reason=str(exc))
            ending = end_call(asker, opened, asker.wait(opened.id, wait_s, cancel=cancel))
            decided = _ended(gate, call, opened, ending, wait_s, cancel, why_stopped)
            if decided.ended is Ended.UNANSWERED and by_class.denied:
                silence = Verdict.DENY
                decided = decided._replace(
                    ended=Ended.SILENCED, reason=f"{decided.reason}; {by_class.why}"
                )
            approved = decided.ended is Ended.ALLOWED if answered(ending) else None
            record_ending(
                home,
                asked,
                decision,
                ending,
                entry_point=EntryPoint.HOOK,
                approved=approved,
                silence=silence,
                stopped=decided.ended is Ended.STOPPED,
            )
            return decided
        finally:
            asker.close()


def _ended(
    gate: ApprovalGate,
    call: ToolCall,
    opened: Request,
    ending: Ending | None,
    wait_s: float,
    cancel: Cancel,
    why_stopped: Callable[[], str | None],
) -> Decided:
    """How a filed call ended, in words."""
    if not answered(ending):
        if cancel.cancelled:
            why = why_stopped() or "stopped"
            return Decided(
                ended=Ended.STOPPED,
                reason=f"{why} before anyone answered; request {opened.id} withdrawn",
                request_id=opened.id,
            )
        return Decided(
            ended=Ended.UNANSWERED,
            reason=unanswered_reason(opened.id, ending, wait_s),
            request_id=opened.id,
        )
    assert ending is not None
    verdict = call_verdict(gate, ending)
    changed = changed_since(programs_bound(call.options), call.cwd)
    if verdict.approved and changed:  # the grant made stands for what was shown
        return Decided(
            ended=Ended.DENIED,
            reason=f"{changed} while you were asked (request {opened.id}): not run; "
            "it is asked again when the agent runs it again",
            request_id=opened.id,
        )
    return Decided(
        ended=Ended.ALLOWED if verdict.approved else Ended.DENIED,
        reason=_unprefixed(decided_reason(verdict, ending)),
        request_id=opened.id,
    )


def failure_reason(error: BaseException) -> str:
    """Why a hook could not decide, in words that say what to do (its deny's reason): a
    resource limit reached names the limit and how to raise it; an audit log wisp may not
    append to says what is wrong with it; a NUL byte in a path is no file at all; a channel
    that cannot be used sends the person to `wisp doctor`. Decided by the error's class and
    attributes (a watch a resource limit stopped: `CannotFollow.shortage`), bar Python's
    NUL, which has no class of its own."""
    from wisp._asking import CannotFollow
    from wisp.stores.config import ConfigError

    shortage = resource_shortage(error)
    if shortage is not None:
        return shortage
    if isinstance(error, AuditLogUnsafe) or (
        isinstance(error, CannotFollow) and error.shortage is not None
    ):
        return str(error)  # it says what is wrong and what to do, and it is not the channel
    if isinstance(error, NulInCall):
        return str(error)
    if isinstance(error, OSError | PendingError | StoreError | ConfigError):
        return f"the channel cannot be used ({error}); check it with `wisp doctor`"
    return f"could not decide ({type(error).__name__}: {error})"
