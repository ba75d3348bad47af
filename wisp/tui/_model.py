"""What the TUI knows, read from relay lines (pure: no I/O, no textual).

A relay may be on another machine (``ssh HOST wisp relay``), so its lines are read by the
protocol's strict decoder (:func:`wisp.relay.protocol.decode_relay`): a line that does not
fit is skipped with the decoder's reason, and every text that came from a request is shown
through :func:`wisp._text.visible` by the functions here, never raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from pending import KINDS, Decision, DecodeError, Kind, Outcome, State, format_time, from_json
from wisp import AnswerFate, current_user
from wisp._render import age as render_age
from wisp._text import one_line, visible
from wisp.kinds import view
from wisp.kinds.fact import also_kept
from wisp.relay.hosts import LOCAL
from wisp.relay.protocol import (
    ANSWERABLE,
    Answered,
    ApprovalLine,
    Decided,
    Ended,
    ErrorLine,
    HistoryReply,
    Notify,
    Ready,
    RelayLine,
    Server,
    UnknownType,
    Winner,
    Withdrawn,
    decode_relay,
)


@attrs.frozen(kw_only=True)
class Waiting:
    """A request the person may answer, as *host*'s relay sent it; ``state`` is the TUI's
    view of it (as sent, or `stale` once its asker is gone)."""

    host: str
    line: ApprovalLine
    state: State
    why: str | None = None  # why it can no longer be answered (a stale row says it)
    ended_at: datetime | None = None  # when it turned stale here: it leaves the list later

    @property
    def id(self) -> str:
        return self.line.id

    @property
    def kind(self) -> Kind:
        return self.line.kind

    @property
    def fields(self) -> Mapping[str, Any]:
        return self.line.fields

    @property
    def asker(self) -> Server:
        return self.line.server

    @property
    def filed_at(self) -> datetime | None:
        return self.line.filed_at

    @property
    def expires_at(self) -> datetime | None:
        return self.line.expires_at

    @property
    def options(self) -> tuple[str, ...]:
        return self.line.options

    @property
    def free_text(self) -> bool:
        return self.line.free_text

    @property
    def key(self) -> str:
        return row_key(self.host, self.id)

    @property
    def asker_key(self) -> str:
        """One asker across hosts: its host and server id."""
        return f"{self.host}/{self.asker.id}"

    @property
    def answerable(self) -> bool:
        return self.state in ANSWERABLE


Message = Waiting | Withdrawn | Answered | ErrorLine | Notify | Decided | Ready | HistoryReply


def row_key(host: str, request_id: str) -> str:
    return f"{host}/{request_id}"


def read_relay_line(host: str, data: bytes) -> Message | None:
    """One line from *host*'s relay; None for a type this TUI does not know (a newer relay's
    additions are ignored); :class:`wisp.relay.protocol.LineError` for one it cannot use."""
    try:
        line: RelayLine = decode_relay(data)
    except UnknownType as exc:
        if exc.type is not None:
            return None
        raise
    if isinstance(line, ApprovalLine):
        return Waiting(host=host, line=line, state=line.state)
    return line


def answerer(user: str | None, host: str) -> str:
    """Who answered, as the CLI says it: "you" for this person's own answers on this
    machine (a far host's login name may differ, so there it is the name as written)."""
    if user is not None and host == LOCAL and user == current_user():
        return "you"
    return one_line(user or "?", 32)


def describe(winner: Winner, kind: Kind | None, host: str) -> str:
    """Who holds a slot, for people: `denied by bob via cli at …`, a question's with its
    answer (`answered "staging" by you via cli`): its kind's words, never the bare decision."""
    said = answer_word(kind, winner.decision) if kind is not None else visible(winner.decision)
    if winner.text is not None:
        said += f' "{one_line(winner.text, 40)}"'
    when = f" at {format_time(winner.answered_at)}" if winner.answered_at else ""
    return f"{said} by {answerer(winner.user, host)} via {visible(winner.via or '?')}{when}"


# --- showing -----------------------------------------------------------------------------


def binding(item: Waiting) -> Any:
    """The request's binding record, read from the line's fields as the channel reads it
    (None if the fields do not make one: the line's body is shown instead)."""
    given = {key: value for key, value in item.fields.items() if value is not None}
    try:
        return from_json(given, KINDS[item.kind].binding_type)
    except (DecodeError, KeyError):
        return None


def asked(item: Waiting) -> str:
    """What is asked, whole, with every hidden character made visible (never cut): as its
    kind's view says it."""
    found = binding(item)
    if found is None:
        return visible(item.line.body or item.line.title)
    return visible(view(item.kind).asked(found))


def asked_within(item: Waiting, limit: int) -> str:
    """What is asked, visible, in at most *limit* characters for the table, cut where its
    kind's view cuts it (a tool call's path in its middle, so the file's name stays)."""
    found = binding(item)
    if found is None:
        return one_line(asked(item), limit)
    return view(item.kind).asked_within(found, limit)


def who(item: Waiting, *, short: bool = False) -> str:
    """Who asks: the asking program and its pid (`short`: without the word, for the table)."""
    asker = item.asker
    name = one_line(asker.client or asker.entry_point or "?", 20)
    if asker.pid is None:
        return name
    return f"{name} {asker.pid}" if short else f"{name} pid {asker.pid}"


def searched(item: Waiting) -> str:
    """What `/` filters a row by, case folded: what is asked (whole), who asks, its kind, ID
    and host."""
    return " ".join((asked(item), who(item), item.kind.value, item.id, item.host)).casefold()


def age(moment: datetime | None, now: datetime) -> str:
    """How long ago, as every listing says it (`4s`, `3m`, `2h`, `5d`); `?` when unknown."""
    return "?" if moment is None else render_age(moment, now)


# The units an age is shown in (`age`): below each bound, its text changes once a unit.
_AGE_UNITS_S = ((60, 1), (3600, 60), (86400, 3600), (float("inf"), 86400))


def age_changes_in(moment: datetime | None, now: datetime) -> float | None:
    """Seconds until :func:`age`'s text for *moment* changes (None: never, it is `?`)."""
    if moment is None:
        return None
    elapsed = max(0.0, (now - moment).total_seconds())
    unit = next(unit for bound, unit in _AGE_UNITS_S if elapsed < bound)
    return unit - elapsed % unit


def countdown_changes_in(moment: datetime | None, now: datetime) -> float | None:
    """Seconds until an `expires in Ns` for *moment* changes (None: past or no deadline)."""
    if moment is None:
        return None
    left = (moment - now).total_seconds()
    return None if left <= 0 else (left % 1.0) or 1.0


def detail(item: Waiting, now: datetime) -> list[tuple[str, str]]:
    """The whole request, label and text, every text visible and nothing cut."""
    found = binding(item)
    shown = view(item.kind).details(found) if found is not None else [("asks", asked(item))]
    rows = [(label, visible(text)) for label, text in shown]
    asker = item.asker
    by = who(item)
    if asker.thread:
        by += f", thread {visible(asker.thread)}"
    if asker.alive is False:
        by += " (stopped)"
    for n, (fact_id, said) in enumerate(item.line.differs):
        rows.append(("differs" if n == 0 else "", visible(f"you keep {said} ({fact_id})")))
    rows.append(("asked by", by))
    rows.append(("host", visible(item.host)))
    when = age(item.filed_at, now) + " ago"
    if item.state is State.STALE:
        # Its deadline no longer matters: nobody waits for the answer.
        when += f"; {item.why}" if item.why else "; stale, it takes no answer"
    elif item.expires_at is not None:
        left = int((item.expires_at - now).total_seconds())
        when += f", expires in {left}s" if left > 0 else ", past its deadline"
    else:
        when += ", no deadline"
    rows.append(("filed", when))
    rows.append(("state", item.state.value))
    rows.append(("id", item.id))
    return rows


def answer_word(kind: Kind, decision: str) -> str:
    """How an answer reads to the person: `approved once`, `denied`, `kept`, … (its kind's
    view says)."""
    return view(kind).answered_word(decision)


def ended_words(entry: Ended) -> str:
    """How a history entry ended, in its kind's words as the status line says an answer:
    `approved always`, `answered`, `kept`; an ending other than by its answer says so too
    (`kept, ended failed`), and one without an answer says only how it ended (`timed-out`).
    The entry's texts come from an audit log, older events' words among them: a kind or a
    decision this build does not know is shown as written, made visible."""
    try:
        kind: Kind | None = Kind(entry.kind)
    except ValueError:
        kind = None
    try:
        ended: Outcome | None = Outcome(entry.outcome)
    except ValueError:
        ended = None
    outcome = ended.value if ended is not None else visible(entry.outcome)
    if entry.decision is None:
        return outcome
    said = answer_word(kind, entry.decision) if kind is not None else entry.decision
    said = visible(said)
    return said if ended is Outcome.ANSWERED else f"{said}, ended {outcome}"


def report(item: Waiting | None, message: Answered, host: str = LOCAL) -> str:
    """The status line after the relay reports on an answer this TUI gave."""
    kind = item.kind if item is not None else message.kind
    if not message.won:
        if message.answer is None:
            return f"{message.id}: too late, someone else answered it first"
        return f"{message.id}: too late, already {describe(message.answer, kind, host)}"
    said = answer_word(kind, message.decision) if kind else message.decision.value
    if message.text is not None and message.decision is Decision.ANSWER:
        said += f' "{one_line(message.text, 40)}"'
        options = item.options if item is not None else ()
        if message.text in options:  # as the CLI says it: which option that was
            said += f" (option {options.index(message.text) + 1})"
    head = f"{said} ({message.id})"
    if message.outcome is not None and message.outcome is not Outcome.ANSWERED:
        why = f": {one_line(message.reason, 80)}" if message.reason else ""
        return f"{head}, but it ended {message.outcome.value}{why}"
    if message.result:
        head += f" as {visible(message.result)}"
    if message.applied:
        head += "; applied here (its asker had stopped)"
    elif message.asker is AnswerFate.GONE:
        head += "; no asker is watching, nothing will act on it"
    elif message.asker is AnswerFate.LATE:
        head += "; the asker has not picked it up yet"
    else:
        head += "; the asker has it"
    if message.decision is Decision.KEEP and message.outcome is Outcome.ANSWERED and item:
        # Kept beside the facts it contradicts: said as the CLI says it after a keep.
        for fact_id, kept in item.line.differs:
            head += f". Note: {also_kept(kept, fact_id)}"
    return head


def decisions_of(kind: Kind) -> tuple[str, ...]:
    return tuple(KINDS[kind].decisions)
