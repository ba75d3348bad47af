"""The gate core every harness stands on: a tool call → a request → a decision.

A harness's module reads its own event into a :class:`ToolCall` (the shell tool's command
picked out as :attr:`ToolCall.command`) and answers in its own shape; what lies between is
here, once, for every harness and for :class:`~wisp.agents.session.AgentSession`'s permission
prompt alike:

- :func:`open_call`: the self-guard (a call that names `$WISP_HOME` or wisp's own program
  is always put to the person, never allowed by a grant), then a standing grant's allow at
  once, else the call filed for the person — a shell call as a `command` request, any other
  as a `tool` request, the harness's session as the thread;
- :func:`end_call`: after the wait, how the request ended (withdrawn if nobody answered in
  time: an answer that got there first stands);
- :func:`call_verdict`, :func:`decided_reason`, :func:`unanswered_reason`: the verdict and
  its words (who decided, how and when, or why nobody did).

Silence is never an allow: what a harness does with an unanswered call (ask in its own
dialog, or deny) is its module's choice, never this core's.
"""

# Annotations here are not postponed (no `from __future__ import annotations`): a named
# tuple's postponed field types are each compiled by typing at import (together ~2 M
# instructions of a hook whose call a grant covers: bench/README.md, issue 41).

import sys
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pending import (
    MAX_RECORD_BYTES,
    Kind,
    Outcome,
    PendingError,
    RecordTooLarge,
    canonical_json,
    format_time,
    resource_shortage,
)
from wisp._deadlines import Cancel
from wisp._entry import EntryPoint
from wisp._home import open_channel
from wisp.agents.guard import Guard, Reached, Touch
from wisp.audit.writer import AuditLogUnsafe
from wisp.kinds.programs import bind_command, changed_since, programs_bound
from wisp.kinds.standing import StandingGrants
from wisp.stores.grants import Grant
from wisp.stores.jsonstore import StoreError

if TYPE_CHECKING:
    # The records, the asking side, the asking gate and the settings are loaded to file a
    # call, not for one a grant covers: that hook loads no attrs (bench/README.md, issue 41).
    from pending import Request
    from wisp._asking import Asker
    from wisp.kinds._asker import Ending
    from wisp.kinds.command_gate import Approval, ApprovalGate

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


class TooLarge(Exception):
    """A call larger than a request can show the person whole (its input, or the request
    it makes with its title and body): nothing was filed."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(
            f"this {call.tool} call is larger than a request can show you whole (a request "
            f"holds {MAX_RECORD_BYTES:,} bytes with its title and body); nothing was filed"
        )


# --- asking ----------------------------------------------------------------------------


def open_call(gate: "ApprovalGate", call: ToolCall, home: Path) -> "Approval | Request":
    """A standing grant's approval at once (audited), or the request filed for the person
    (returning at once). A call that names wisp's own directory or program is never
    granted: it is filed, and its request says why. Raises :class:`TooLarge` for a call too
    large to file, before anything reads it (:func:`refuse_too_large`)."""
    refuse_too_large(call)
    call = bound_call(call)
    touch = touches_wisp(call, home)
    if touch is None:
        granted = granted_call(gate, call)
        if granted is not None:
            return granted
    return file_call(gate, call, touch)


def granted_call(gate: "ApprovalGate", call: ToolCall) -> "Approval | None":
    """The approval a standing grant (or a session approval kept for the call's session)
    gives *call* at once, or None: the person is asked."""
    from wisp.kinds.command_gate import approval_by

    return approval_by(call_grant(gate, call))


def call_grant(grants: StandingGrants, call: ToolCall) -> Grant | None:
    """The standing grant (or session approval kept for the call's session) that lets *call*
    run at once (its allow audited), or None: the person is asked."""
    if call.command is not None:
        return grants.grant_in_thread(call.command, call.cwd, call.session, options=call.options)
    return grants.grant_for_tool(call.tool, call.input, call.cwd, thread=call.session)


def file_call(gate: "ApprovalGate", call: ToolCall, touch: Touch | None) -> "Request":
    """File *call* for the person, returning at once: a shell call as a command request
    (its description as the reason), any other as a `tool` request, the call's session as
    the thread; one the self-guard stopped (*touch*) says what of wisp's it touches."""
    if too_large(call):
        raise TooLarge(call)
    guard = guard_reason(touch) if touch is not None else None
    said = (*call.warnings, guard)
    try:
        if call.command is not None:
            changed = gate.program_changes(call.command, call.cwd, call.session, call.options)
            parts = (*said, changed, call.description)
            reason = "; ".join(part for part in parts if part) or None
            return gate.file(
                call.command, call.cwd, reason=reason, thread=call.session, options=call.options
            )
        reason = "; ".join(part for part in said if part) or None
        return gate.file_tool(call.tool, call.input, call.cwd, thread=call.session, reason=reason)
    except RecordTooLarge:  # its title and body with it: over the cap, refused unpublished
        raise TooLarge(call) from None


def end_call(asker: "Asker", request: "Request", ending: "Ending | None") -> "Ending | None":
    """How *request* ended, after its wait: with no *ending* (nobody answered in time, or
    the wait was cancelled) it is withdrawn, and an answer that got there first stands."""
    if ending is not None:
        return ending
    endings = asker.withdraw(request.id)
    return endings[0] if endings else asker.wait(request.id, 0)


def answered(ending: "Ending | None") -> bool:
    """Whether the person's answer ended the request (not a time-out, withdrawal, …)."""
    return ending is not None and ending.outcome is Outcome.ANSWERED


def call_verdict(gate: "ApprovalGate", ending: "Ending") -> "Approval":
    """The approval an ended command or tool request gives; a `session` approval is kept
    for the request's thread."""
    request = ending.request
    verdict = gate.verdict(ending) if request.kind is Kind.COMMAND else gate.tool_verdict(ending)
    return gate.remember_for_thread(verdict, ending)


# --- in words --------------------------------------------------------------------------


def _who(ending: "Ending") -> str:
    answer = ending.answer
    assert answer is not None
    return f"by {answer.user} via {answer.via} at {format_time(answer.answered_at)}"


def decided_reason(approval: "Approval", ending: "Ending | None" = None) -> str:
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


def unanswered_reason(request_id: str, ending: "Ending | None", wait_s: float) -> str:
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
) -> Decided:
    """File *call* (unless a grant covers it or it is too large), wait for the person at
    most *wait_s* (*cancel* ends the wait at once), withdraw it if nobody answered, and say
    how it was decided. The request's own deadline is *expiry_after_s* after the wait, so
    the hook, not the deadline, ends an unanswered request. Raises what the channel raises."""
    # A call a standing grant covers is allowed from the grant store alone: no settings, no
    # channel, no asker (its lock file) and no asking side loaded (issue 41).
    try:
        refuse_too_large(call)
    except TooLarge as exc:
        return Decided(ended=Ended.TOO_LARGE, reason=str(exc))
    call = bound_call(call)
    touch = touches_wisp(call, home)
    if touch is None:
        grant = call_grant(StandingGrants(home, EntryPoint.HOOK), call)
        if grant is not None:
            return Decided(ended=Ended.ALLOWED, reason=_unprefixed(granted_reason(grant)))
    from wisp._asking import Asker
    from wisp.kinds.command_gate import ApprovalGate
    from wisp.stores.config import load_config

    config = load_config(home)
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
                opened = file_call(gate, call, touch)
            except TooLarge as exc:
                return Decided(ended=Ended.TOO_LARGE, reason=str(exc))
            ending = end_call(asker, opened, asker.wait(opened.id, wait_s, cancel=cancel))
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
        finally:
            asker.close()


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
    if isinstance(error, ValueError) and "null byte" in str(error):
        return (
            "the call names a path with a NUL byte in it (its working directory or an "
            "argument), which no file can have: nothing was filed"
        )
    if isinstance(error, OSError | PendingError | StoreError | ConfigError):
        return f"the channel cannot be used ({error}); check it with `wisp doctor`"
    return f"could not decide ({type(error).__name__}: {error})"
