"""How requests, answers and audit records read: JSON shapes for scripts, words for people.

Faces (the CLI, the relay, the TUI) share these, so a request reads the same everywhere. The
text returned is not yet made visible: faces pass what they print through
:func:`wisp._text.visible` (or :func:`wisp._text.wrap`, which does it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from json.encoder import encode_basestring as _encode
from typing import TYPE_CHECKING, Any

from pending import (
    AlreadyAnswered,
    AlreadySettled,
    Answer,
    Binding,
    CommandBinding,
    FactBinding,
    Kind,
    Outcome,
    PendingError,
    Request,
    Server,
    Settled,
    State,
    Status,
    UnknownRequest,
    format_time,
    parse_time,
    to_json,
)
from wisp._text import one_line
from wisp.audit.history import asked_in
from wisp.kinds import ANSWERABLE, view

if TYPE_CHECKING:
    from wisp._answering import AnswerReport

# What each state means for the person.
STATE_MEANS = {
    State.FILED: "waiting for your answer",
    State.HANDED_OVER: "waiting for your answer; the program that asked has stopped, so the "
    "process you answer in applies it",
    State.ANSWERED: "answered; the asker has not applied it yet",
    State.STALE: "it can no longer be answered",
    State.SETTLED: "ended",
}


# Servers whose JSON was made lately: the requests of one listing mostly share a few.
SERVER_JSON_CACHE_SIZE = 256


def _server_json(server: Server) -> dict[str, Any]:
    """*server*'s JSON (a shared copy: the caller copies it before adding to it). Memoised
    by value, for a server with no unknown keys (a record holding those is not hashable)."""
    if server.extra:
        return to_json(server)
    key = (server.id, server.pid, server.client, server.thread, server.entry_point)
    found = _SERVER_JSON.get(key)
    if found is None:
        if len(_SERVER_JSON) >= SERVER_JSON_CACHE_SIZE:
            _SERVER_JSON.clear()
        found = _SERVER_JSON[key] = to_json(server)
    return found


_SERVER_JSON: dict[tuple[object, ...], dict[str, Any]] = {}


def status_json(status: Status) -> dict[str, Any]:
    """One request as `wisp pending --json` prints it (documented in docs/cli.md)."""
    request = status.request
    server = {**_server_json(request.server), "alive": status.server_alive}
    answer = status.answer
    settled = status.settled
    return {
        "id": status.id,
        "kind": status.kind.value,
        "state": status.state.value,
        "outcome": status.outcome.value if status.outcome else None,
        "reason": status.reason,
        "filedAt": format_time(request.filed_at),
        "expiresAt": format_time(request.expires_at) if request.expires_at else None,
        "title": request.title,
        "body": request.body,
        "binding": to_json(request.binding),
        "server": server,
        "answer": None if answer is None else answer_json(answer),
        "settled": None if settled is None else to_json(settled),
    }


# `status_json_text`: one request's JSON text written out for the common records, the keys and
# separators as `json.dumps` writes them (its defaults: ", " and ": "), every string through
# the encoder's own escaping. A listing of 10,000 requests built 10,000 objects of 13 keys,
# each with two nested ones, only for the encoder to walk them again: ~30 ms of the 70 that
# `wisp pending --json` spent on its text. The texts are f-strings (joined as compiled), not
# %-formats (whose template is parsed on every call: a third of the time of the largest).


def _dumps(value: Any) -> str:
    """*value* as `wisp pending --json` writes it (see :func:`wisp.program.writes.json_line`,
    before its last escaping): json.dumps, non-ASCII raw."""
    return json.dumps(value, ensure_ascii=False)


def _binding_text(binding: Binding) -> str:
    """``_dumps(to_json(binding))``: written out for a command's and a fact's binding."""
    if not binding.extra:
        if type(binding) is CommandBinding:
            command, cwd = _encode(binding.command), _encode(binding.cwd)
            thread = "null" if binding.thread is None else _encode(binding.thread)
            reason = "null" if binding.reason is None else _encode(binding.reason)
            # A shell call's options (a timeout, the sandbox turned off) are part of what the
            # person is shown and of what a grant covers: written only when the call had some.
            options = "" if binding.options is None else f', "options": {_dumps(binding.options)}'
            # What it offers (docs/channel.md, "Widths"): written only when its asker said.
            offers = "" if binding.offers is None else f', "offers": {_dumps(binding.offers)}'
            return (
                f'{{"command": {command}, "cwd": {cwd}, "thread": {thread}, '
                f'"reason": {reason}{options}{offers}}}'
            )
        if type(binding) is FactBinding:
            fact_id, subject = _encode(binding.fact_id), _encode(binding.subject)
            name, value = _encode(binding.name), _encode(binding.value)
            source, proposed_by = _encode(binding.source), _encode(binding.proposed_by)
            return (
                f'{{"factId": {fact_id}, "subject": {subject}, "name": {name}, '
                f'"value": {value}, "source": {source}, "proposedBy": {proposed_by}}}'
            )
    return _dumps(to_json(binding))


def _server_text(server: Server, alive: bool | None) -> str:
    """``_dumps`` of a status's server (its JSON and `alive`), memoised by value as
    :func:`_server_json` is: a listing's requests mostly share a few servers. The last one
    written is also kept by identity (:data:`_LAST_SERVER`)."""
    global _LAST_SERVER
    if server.extra:
        return _dumps({**to_json(server), "alive": alive})
    key = (server.id, server.pid, server.client, server.thread, server.entry_point, alive)
    found = _SERVER_TEXT.get(key)
    if found is None:
        if len(_SERVER_TEXT) >= SERVER_JSON_CACHE_SIZE:
            _SERVER_TEXT.clear()
        found = _SERVER_TEXT[key] = _dumps({**_server_json(server), "alive": alive})
    _LAST_SERVER = (server, alive, found)
    return found


_SERVER_TEXT: dict[tuple[object, ...], str] = {}
# The last server written, its `alive` and its text: the channel reads one record for each
# server of a listing, shared by all its requests, so the next request's server is mostly
# this very object, told by `is` without building and hashing the value's key (~2,000
# instructions a request). Holding the record keeps its identity from being reused; records
# are immutable (named tuples).
_LAST_SERVER: tuple[Server | None, bool | None, str] = (None, None, "")

# Every name a status carries (its kind, state and outcome, str enums: looked up as their str)
# as its JSON text, instead of encoding it again for each request (~700 instructions each).
_NAME_TEXT: dict[str, str] = {
    name: _encode(name) for names in (Kind, State, Outcome) for name in names
}

# A UTC time's JSON text (``_encode(format_time(t))``, `"2026-11-29T19:55:42.123Z"`) from
# tables: the date's text by its day (a listing's requests were mostly filed on a few), then
# two digits each for the hour, minute and second, and the milliseconds with the closing `Z"`.
# `format_time`'s %-format parses its template and formats seven numbers on every call: ~13,000
# instructions a time, ~4,000 from the tables.
# (Built by concatenation: formatting each of the thousand was ~3 M instructions of a start.)
_DIGITS = "0123456789"
_TWO_DIGITS = tuple([tens + ones for tens in _DIGITS for ones in _DIGITS])  # "00" to "99"
_MILLIS_TEXT = tuple([hundreds + rest + 'Z"' for hundreds in _DIGITS for rest in _TWO_DIGITS])
_DAY_TEXT: dict[int, str] = {}
DAY_TEXT_CACHE_SIZE = 366


def _time_text(moment: datetime) -> str:
    """``_encode(format_time(moment))``, the same text (tests/test_render_text.py holds it
    for any time): from the tables above for a UTC time, as records hold them."""
    if moment.tzinfo is not UTC:
        return _encode(format_time(moment))
    day = moment.toordinal()
    date = _DAY_TEXT.get(day)
    if date is None:
        if len(_DAY_TEXT) >= DAY_TEXT_CACHE_SIZE:
            _DAY_TEXT.clear()
        date = _DAY_TEXT[day] = f'"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T'
    return (
        f"{date}{_TWO_DIGITS[moment.hour]}:{_TWO_DIGITS[moment.minute]}:"
        f"{_TWO_DIGITS[moment.second]}.{_MILLIS_TEXT[moment.microsecond // 1000]}"
    )


def status_json_text(status: Status) -> str:
    """``json.dumps(status_json(status), ensure_ascii=False)``, the same text, without
    building the objects for a request whose records hold what this build writes (anything
    else is built and encoded as before). tests/test_render_text.py holds the two equal."""
    request = status.request
    try:
        request_id = _encode(status.id)
        # A StrEnum member is its value as a str: looked up as such (a name not in the table,
        # never one read, is encoded), without the enum's `.value` property.
        kind = _NAME_TEXT.get(status.kind) or _encode(status.kind)
        state = _NAME_TEXT.get(status.state) or _encode(status.state)
        outcome = (
            "null"
            if status.outcome is None
            else _NAME_TEXT.get(status.outcome) or _encode(status.outcome)
        )
        reason = "null" if status.reason is None else _encode(status.reason)
        filed_at = _time_text(request.filed_at)
        expires_at = "null" if request.expires_at is None else _time_text(request.expires_at)
        title, body = _encode(request.title), _encode(request.body)
        binding = _binding_text(request.binding)
        server, alive = request.server, status.server_alive
        last = _LAST_SERVER
        if server is last[0] and alive is last[1]:
            server_text = last[2]
        else:
            server_text = _server_text(server, alive)
        answer = "null" if status.answer is None else _dumps(answer_json(status.answer))
        settled = "null" if status.settled is None else _dumps(to_json(status.settled))
    except (TypeError, AttributeError):  # a field not of its type (never one read): as built
        return _dumps(status_json(status))
    return (
        f'{{"id": {request_id}, "kind": {kind}, "state": {state}, "outcome": {outcome}, '
        f'"reason": {reason}, "filedAt": {filed_at}, "expiresAt": {expires_at}, '
        f'"title": {title}, "body": {body}, "binding": {binding}, "server": {server_text}, '
        f'"answer": {answer}, "settled": {settled}}}'
    )


def answer_json(answer: Answer) -> dict[str, Any]:
    return {
        "decision": answer.decision,
        "text": answer.text,
        "reason": answer.reason,
        "via": answer.via,
        "user": answer.user,
        "pid": answer.pid,
        "answeredAt": format_time(answer.answered_at),
        **({"width": answer.width} if answer.width is not None else {}),
    }


def asked_text(request: Request) -> str:
    """What is asked, whole: the command, the fact, or the question."""
    return view(request.kind).asked(request.binding)


def asked(request: Request, limit: int = 60) -> str:
    """What is asked, in one visible line cut to *limit* (never for what a person approves:
    only for short mentions, such as telling candidates apart)."""
    return one_line(asked_text(request), limit)


def paragraphs(request: Request) -> list[tuple[str, str]]:
    """What a listing shows of a request, as (label, text): what it asks first, then what its
    kind's view adds (where a command would run and why, a question's options)."""
    kind_view = view(request.kind)
    return [
        (request.kind.value, kind_view.asked(request.binding)),
        *kind_view.paragraphs(request.binding),
    ]


def listed(status: Status) -> list[tuple[str, str]]:
    """What a listing shows of a request: its :func:`paragraphs`, then, once it can no longer
    be answered, why (`why: the program that asked (pid 4242) has stopped`)."""
    shown = paragraphs(status.request)
    if status.reason and status.state in (State.STALE, State.SETTLED):
        shown.append(("why", status.reason))
    return shown


def who(request: Request) -> str:
    server = request.server
    return f"{one_line(server.client or server.entry_point or '?', 20)} pid {server.pid}"


def by(user: str, me: str | None) -> str:
    """Who answered, as the person reads it: "you" for their own answers."""
    return "you" if me is not None and user == me else user


def age(moment: datetime, now: datetime) -> str:
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def _relative(moment: datetime, now: datetime) -> str:
    if moment >= now:
        return f"in {age(now, moment)}"
    return f"{age(moment, now)} ago"


def state_text(status: Status) -> str:
    if status.state is State.SETTLED and status.outcome is not None:
        decision = ""
        if status.settled is not None and status.settled.decision:
            decision = f" {status.settled.decision}"
        return f"{status.outcome.value}{decision}"
    if status.state is State.ANSWERED and status.answer is not None:
        return f"answered {status.answer.decision}"
    return status.state.value


def offered_lines(request: Request) -> list[tuple[str, str]]:
    """What a command or tool request offers, as `wisp show` says it: why it is asked every
    time (must-ask), and the answers it takes (docs/channel.md, "Widths")."""
    from pending import KINDS, offered_words, offers_of

    if not KINDS[request.kind].widths:
        return []
    offers = offers_of(request.binding)
    lines = [("must ask", why) for why in offers.must_ask]
    return [*lines, ("answers", offered_words(offers))]


def how_to_answer(status: Status) -> list[str]:
    """The commands that answer this request, with its whole ID and their options."""
    return view(status.kind).answer_lines(status.id)


def details(
    status: Status, now: datetime, *, me: str | None, differs: Sequence[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """Everything about one request, as (label, text) lines for `wisp show` (a blank label
    continues the line above). *differs* lists kept facts (id, "subject name = value") that
    a fact request's value would contradict."""
    request, kind_view = status.request, view(status.kind)
    lines = [("request", f"{status.id}, {kind_view.noun}")]
    lines += kind_view.details(request.binding)
    lines += offered_lines(request)
    for n, (fact_id, said) in enumerate(differs):
        lines.append(("differs" if n == 0 else "", f"you keep {said} ({fact_id})"))
    lines.append(("state", f"{state_text(status)}: {STATE_MEANS[status.state]}"))
    if status.reason:
        lines.append(("why", status.reason))
    lines.append(("filed", f"{format_time(request.filed_at)} ({_relative(request.filed_at, now)})"))
    if request.expires_at is None:
        lines.append(("expires", "never: it waits until it is answered"))
    else:
        expires = request.expires_at
        when = _relative(expires, now)
        if expires > now and status.state in (State.STALE, State.SETTLED):
            when = "it ended first"  # no deadline counts down for what has ended
        lines.append(("expires", f"{format_time(expires)} ({when})"))
    lines.append(("asker", _asker(status)))
    if status.answer is not None:
        lines.append(("answer", _answer_line(status.answer, me)))
    if status.settled is not None:
        lines.append(("outcome", _outcome_line(status.settled)))
    if status.state in ANSWERABLE:
        for n, command in enumerate(how_to_answer(status)):
            lines.append(("answer it" if n == 0 else "", command))
    return lines


def _asker(status: Status) -> str:
    server = status.request.server
    parts = [server.client or "an unnamed client", f"pid {server.pid}"]
    if server.thread:
        parts.append(f"thread {server.thread}")
    if server.entry_point:
        parts.append(f"through {server.entry_point}")
    alive = {True: "running", False: "stopped", None: "not checked (answered or ended)"}
    return f"{', '.join(parts)}: {alive[status.server_alive]}"


def _answer_line(answer: Answer, me: str | None) -> str:
    if answer.is_tombstone:
        said = f"{answer.decision} (claimed by the {answer.via})"
    else:
        said = f"{answer.decision} by {by(answer.user, me)} via {answer.via} (pid {answer.pid})"
    said += f" at {format_time(answer.answered_at)}"
    if answer.text is not None:
        said += f"; text: {answer.text}"
    if answer.reason:
        said += f"; reason: {answer.reason}"
    return said


# Who wrote an outcome (`by`), as a person reads it.
SETTLED_BY = {
    "asker": "the asker",
    "sweep": "a sweep",
    "cli": "the wisp command you answered with",
    "tui": "the TUI",
    "relay": "the relay",
    "mcp": "the MCP server",
    "web": "wisp web",
}


def _outcome_line(settled: Settled) -> str:
    said = settled.outcome.value + (f" {settled.decision}" if settled.decision else "")
    said += f" at {format_time(settled.settled_at)}, settled by "
    said += SETTLED_BY.get(settled.by, settled.by)
    if settled.delivery:
        said += f" (delivery {settled.delivery})"
    if settled.result:
        said += f"; result {settled.result}"
    if settled.reason:
        said += f"; {settled.reason}"
    return said


def refusal(exc: PendingError, *, me: str | None) -> str:
    """A refusal from the channel in the person's words: "by you" for their own answers, and
    the command that lists the waiting requests."""
    if isinstance(exc, AlreadyAnswered):
        answer = exc.answer
        return (
            f"request {answer.id} was already answered {answer.decision!r} by "
            f"{by(answer.user, me)} (via {answer.via}, pid {answer.pid}) at "
            f"{format_time(answer.answered_at)}. The first answer stands; nothing more to do."
        )
    if isinstance(exc, AlreadySettled) and exc.answer is not None and not exc.answer.is_tombstone:
        settled, answer = exc.settled, exc.answer
        result = f"; result {settled.result}" if settled.result else ""
        detail = f" ({settled.reason})" if settled.reason else ""
        return (
            f"request {settled.id} was already answered {answer.decision!r} by "
            f"{by(answer.user, me)} (via {answer.via}) at {format_time(answer.answered_at)}, "
            f"and has ended ({settled.outcome}{result}){detail} at "
            f"{format_time(settled.settled_at)}. It takes no more answers; nothing to do."
        )
    if isinstance(exc, UnknownRequest):
        return (
            f"no request {exc.request_id} in the pending channel. It may have been swept after "
            "it ended, or the ID is mistyped: `wisp pending` lists the waiting requests."
        )
    return str(exc)


def transition_json(
    event: str, status: Status | None, *, request_id: str, kind: str, ts: datetime
) -> dict[str, Any]:
    """One line of `wisp pending watch --json` (documented in docs/cli.md)."""
    base: dict[str, Any] = {"event": event, "id": request_id, "kind": kind, "ts": format_time(ts)}
    if status is None:
        base["state"] = None
        return base
    return {**base, **status_json(status)}


def transition_line(
    event: str,
    status: Status | None,
    *,
    request_id: str,
    kind: str,
    ts: datetime,
    me: str | None = None,
) -> str:
    """One line of `wisp pending watch` for people (what is asked is whole: the terminal
    wraps it)."""
    clock = ts.astimezone().strftime("%H:%M:%S")
    if status is None:
        return f"{clock}  {event:<11}  {request_id}  {kind}"
    detail = state_text(status) if event == "settled" else ""
    if status.answer is not None and event == "answered":
        answer = status.answer
        detail = f"{answer.decision} by {one_line(by(answer.user, me), 20)} via {answer.via}"
    if status.reason and event in ("stale", "settled"):
        detail += f" ({one_line(status.reason, 60)})"
    line = f"{clock}  {event:<11}  {request_id}  {kind:<8}  {asked_text(status.request)}"
    line += f"  [{who(status.request)}]"
    return f"{line}  {detail}".rstrip()


def report_json(report: AnswerReport) -> dict[str, Any]:
    """What an answering command's `--json` prints (documented in docs/cli.md)."""
    settled = report.settled
    return {
        "id": report.request.id,
        "kind": report.request.kind.value,
        "won": report.won,
        "answer": answer_json(report.answer),
        "asker": report.asker.value,
        "outcome": settled.outcome.value if settled else None,
        "settled": to_json(settled) if settled else None,
        "applied": report.applied,
        "applyError": report.apply_error,
        "narrowed": report.narrowed,
    }


# --- the audit log ---------------------------------------------------------------------

_LOG_ROUTINE = {"ts", "event", "entryPoint", "pid", "id", "kind", "server"}


def _fields(record: dict[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{k} {record[k]}" for k in keys if record.get(k) not in (None, "", []))


_VERDICT_WORDS = {"allow": "allowed", "deny": "denied", "ask": "left to the harness's dialog"}


def _home_short(path: str) -> str:
    """*path* with the person's home as `~`."""
    from pathlib import Path

    home = str(Path.home())
    if path == home or path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def decided_by(record: dict[str, Any]) -> str:
    """Who or what decided a `call.decided` record's call, in words."""
    decider = record.get("decider")
    if decider == "rule":
        return f"by rule {record.get('rule')}"
    if decider == "grant":
        return f"by grant {record.get('grant')}" + (
            f" ({record['scope']})"
            if record.get("scope") and record.get("grant") != "session"
            else ""
        )
    if decider == "person":
        return f"by {record.get('user')} via {record.get('via')}"
    if decider == "timeout":
        return "(nobody answered in time)"
    if decider == "stopped":
        return "(stopped before anyone answered)"
    return f"({decider})"


def decided_line(record: dict[str, Any]) -> str:
    """A `call.decided` record in one line (not yet made visible): `allowed by rule
    read-only: ls -la — claude-code, ~/src/app`."""
    verdict = _VERDICT_WORDS.get(str(record.get("verdict")), str(record.get("verdict")))
    said = f"{verdict} {decided_by(record)}: {asked_in(record)}"
    where = [str(record["harness"])] if record.get("harness") else ["wisp exec"]
    if isinstance(record.get("cwd"), str):
        where.append(_home_short(record["cwd"]))
    return f"{said} — {', '.join(where)}"


# What of a `call.decided` record `wisp pending watch --json` leaves out: the writer's own.
_DECIDED_ROUTINE = frozenset({"entryPoint", "pid"})


def decided_json(record: dict[str, Any]) -> dict[str, Any]:
    """A call decided without asking, as `wisp pending watch --json` shows it (docs/cli.md):
    the `call.decided` record, less its writer's pid and entry point."""
    return {k: v for k, v in record.items() if k not in _DECIDED_ROUTINE}


def decided_watch_line(record: dict[str, Any]) -> str:
    """A call decided without asking, as `wisp pending watch` shows it: its time, `decided`,
    then :func:`decided_line`."""
    try:
        clock = parse_time(str(record.get("ts"))).astimezone().strftime("%H:%M:%S")
    except ValueError:
        clock = str(record.get("ts"))
    return f"{clock}  {'decided':<11}  {decided_line(record)}"


def log_summary(record: dict[str, Any]) -> str:
    """What one audit record says, in a line (not yet made visible)."""
    event = str(record.get("event"))
    if event == "call.decided":
        return decided_line(record)
    asked_now = asked_in(record)
    if event == "approval.pending":
        said = f"asked: {asked_now}"
        if record.get("expiresAt"):
            said += f" (expires {record['expiresAt']})"
        return said
    if event == "approval.answered":
        said = f"{record.get('decision')} via {record.get('via')}"
        for key, label in (("answerText", "text"), ("answerReason", "reason")):
            if record.get(key):
                said += f", {label} {record[key]}"
        return f"{said}: {asked_now}" if asked_now else said
    if event in ("approval.settled", "approval.withdrawn"):
        shown = [record.get("outcome"), record.get("decision")]
        said = " ".join(str(s) for s in shown if s and s != "answer")
        extra = _fields(record, ("result", "outcomeReason", "delivery"))
        return (
            f"{said}" + (f" ({extra})" if extra else "") + (f": {asked_now}" if asked_now else "")
        )
    if event in ("approval.granted", "approval.revoked"):
        return f"grant {record.get('grant')} ({record.get('scope')}): {asked_now}"
    if event == "fact.scope.changed":
        return (
            f"{record.get('permanent') or record.get('fact')} {record.get('from')} -> "
            f"{record.get('to')} by {record.get('by')}: {asked_now}"
        )
    if event == "notification":
        said = f"{record.get('outcome')}"
        said += f" via {record['route']}" if record.get("route") else ""
        said += f" ({record['reason']})" if record.get("reason") else ""
        return f"{said}: {record.get('title')}: {record.get('body')}"
    if event == "watch.warning":
        return str(record.get("message"))
    rest = {k: v for k, v in record.items() if k not in _LOG_ROUTINE}
    return ", ".join(f"{k} {v}" for k, v in rest.items())


def log_line(record: dict[str, Any], *, legacy: bool) -> str:
    """One audit record for people: local time, event, request, what happened."""
    ts = record.get("ts")
    try:
        shown = parse_time(str(ts)).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        shown = str(ts)
    head = f"{shown}  {record.get('event')}" + (" (legacy)" if legacy else "")
    if isinstance(record.get("id"), str):
        head += f"  {record['id']}"
    if isinstance(record.get("kind"), str):
        head += f"  {record['kind']}"
    summary = log_summary(record)
    return f"{head}  {summary}" if summary else head
