"""The pages of `wisp web`, as HTML: made for a phone, every request whole.

Every text that came from a request (a command, a path, a tool's input, a fact, a question,
an option) is made visible first (:func:`wisp._text.visible`: control, bidi and zero-width
characters shown as markers, so what the person approves is what will run) and then escaped
for HTML (:func:`html.escape`), in :func:`text`, the one way such text reaches a page. What a
kind shows comes from its view (:func:`wisp.kinds.view`): this module never switches on kinds.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from pending import (
    EXACT_WIDTH,
    KINDS,
    Answer,
    Decision,
    Kind,
    Outcome,
    Request,
    Scope,
    Status,
    Via,
    format_time,
    offers_of,
    width_json,
    width_words,
)
from wisp import ANSWERABLE, Verdict
from wisp._render import age
from wisp._text import visible
from wisp.kinds import view
from wisp.kinds.command import words
from wisp.relay.hosts import LOCAL  # this machine's label, with --host (as `wisp tui`'s)
from wisp.web._board import DecidedRow

# How each decision's button reads. A decision missing here (a kind added later) reads as
# its own word.
BUTTONS: dict[Decision, str] = {
    Decision.ONCE: "Approve once",
    Decision.SESSION: "This session",
    Decision.PROJECT: "This project",
    Decision.ALWAYS: "Always",
    Decision.NO: "Deny",
    Decision.KEEP: "Keep",
    Decision.DROP: "Drop",
    Decision.ANSWER: "Answer",
    Decision.DECLINE: "Decline",
}
# The decisions shown as the small row of scopes under the main approve button.
SCOPES = (Decision.SESSION, Decision.PROJECT, Decision.ALWAYS)
# The decisions a person asks twice before giving: they outlive this request.
STANDING = (Decision.PROJECT, Decision.ALWAYS)
# The rows shown as a block of their own (label above, text in full width, as typed).
BLOCKS = ("command", "input", "content", "diff")
# A block of text longer than this is shown clipped, with "Show all" (a 30,000-character
# command was one card 45 screens tall): about a phone's screen of text at its width.
LONG_CHARS = 1200
LONG_LINES = 24
# The line under a card's heading: what is asked, cut here when the card shows it whole below.
ASKED_CHARS = 200
# Cards sent at once: the board's first page, and each "Show more" (10,000 waiting were one
# page of 22.6 MB; 50 cards are about 100 KB, a few screens on a phone).
PAGE_CARDS = 50
# Who wrote an answer, as the page says it.
VIA_WORDS = {
    Via.CLI: "from a terminal",
    Via.TUI: "in wisp tui",
    Via.RELAY: "through a relay",
    Via.MCP: "in the agent's client",
    Via.ELICITATION: "in the agent's client",
    Via.WEB: "on a paired device",
}


def text(value: object) -> str:
    """Text from a request as HTML: made visible, then escaped."""
    return html.escape(visible(str(value)), quote=True)


def attr(value: object) -> str:
    """A value of wisp's own (an ID, a token, a URL it made) for an attribute."""
    return html.escape(str(value), quote=True)


def document(title: str, body: str, *, meta: str = "") -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
{meta}<title>{html.escape(title)}</title>
<link rel="stylesheet" href="/static/page.css">
<script src="/static/page.js" defer></script>
</head><body>{body}</body></html>
"""


def shell(focus: str | None) -> str:
    """The page every browser is sent: nothing of the channel. Its script reads the device's
    credential from this origin's storage and asks for the board with it (`/board`, the
    credential in a header), or shows how to pair. *focus*: the request a link names."""
    body = f"""<div id="app" data-focus="{attr(focus or "")}">
<p class="live" role="status">loading…</p>
<noscript><main class="notice"><p>This page needs JavaScript: it keeps this device's
credential where only this page can read it.</p></main></noscript></div>"""
    return document("wisp", body)


def paired(credential: str) -> str:
    """The answer to a pairing: the credential, handed to this origin's page once (its script
    keeps it in this origin's storage, then opens the board)."""
    body = '<main class="notice"><p>Paired. Opening what waits…</p></main>'
    return document(
        "wisp: paired", body, meta=f'<meta name="wisp-credential" content="{attr(credential)}">'
    )


def unpaired(*, revoked: bool = False) -> str:
    """How to pair (a fragment of the page). *revoked*: the browser holds a credential no
    paired device has (revoked, so far as wisp can tell)."""
    head, why, again = (
        ("This device was revoked", "This device was revoked", " again")
        if revoked
        else ("Not paired", "This browser is not paired with wisp", "")
    )
    return f"""<main class="notice">
<h1>{head}</h1>
<p>{why}, so nothing is shown here and nothing can be answered.</p>
<p>To pair it{again}, on your computer, in a terminal, run</p>
<pre class="cmd">wisp web pair</pre>
<p>and open the link it shows (or scan its QR code) on this device.</p>
</main>"""


def pairing(code: str, *, name: str, error: str | None = None) -> str:
    said = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    body = f"""<main class="notice">
<h1>Pair this device</h1>
<p>This lets this browser see what waits for you and answer it, until you revoke it
(<code>wisp web revoke NAME</code>).</p>
{said}
<form method="post" action="/pair" class="pair">
<input type="hidden" name="code" value="{attr(code)}">
<label for="name">Name this device</label>
<input id="name" name="name" value="{attr(name)}" maxlength="32" autocomplete="off"
 autocapitalize="none" spellcheck="false" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{{0,31}}" required>
<button type="submit" class="primary">Pair</button>
</form>
</main>"""
    return document("wisp: pair this device", body)


def board(
    statuses: Sequence[Status],
    *,
    focus: Status | None,
    device: str,
    csrf: str,
    now: datetime,
    differs: dict[str, list[tuple[str, str]]],
    answered_by: Mapping[str, str] | None = None,
    hosts: Mapping[str, str] | None = None,
    down: Sequence[tuple[str, str]] = (),
    total: int | None = None,
    more: str = "",
    decided: Sequence[DecidedRow] = (),
) -> str:
    """The board (a fragment of the page): the request asked for first (its whole card, or
    how it ended), then what waits. *differs*: a fact request's contradicted kept facts, by
    request ID. A focus that still waits but is not on the board yet (filed since the board
    last heard: a push's link opened at once) is shown whole, not as ended. *answered_by*:
    the paired device that answered a request here, by request ID. *hosts*: with `--host`,
    the host each request waits on, by request ID; *down*: the hosts that are down, and
    why. *statuses* may be the first page of what waits: *total* counts them all, *more*
    (:func:`more_button`) fetches the rest; *decided*: the calls lately decided without
    asking, newest first (:func:`decided_list`)."""
    cards = []
    if focus is not None and all(s.id != focus.id for s in statuses):
        if focus.state in ANSWERABLE:
            statuses = [focus, *statuses]
        else:
            cards.append(ended_card(focus, device=(answered_by or {}).get(focus.id)))
    for status in statuses:
        card_html = card(
            status,
            csrf=csrf,
            now=now,
            differs=differs.get(status.id, ()),
            host=(hosts or {}).get(status.id),
        )
        if focus is not None and status.id == focus.id:
            cards.insert(0, card_html)
        else:
            cards.append(card_html)
    return f"""<header class="bar"><h1>wisp</h1>
<span id="count" class="count">{count_text(len(statuses) if total is None else total)}</span>
<span class="device">{text(device)}</span></header>
<div id="live" class="live" role="status" aria-live="polite">connecting…</div>
<div id="arrived" class="arrived" role="alert" hidden></div>
<main id="cards" data-focus="{attr(focus.id if focus else "")}">
{hosts_down(down)}{"".join(cards)}
</main>
<div id="more-box">{more}</div>
<p id="empty" class="empty"{" hidden" if statuses else ""}>Nothing waits for you.</p>
<div id="decided-box">{decided_list(decided)}</div>"""


def decided_list(calls: Sequence[DecidedRow]) -> str:
    """The calls lately decided without asking — by a rule or a grant — newest first, in a
    list that stays collapsed until opened: each its time, its host (with `--host`), and the
    call in the words `wisp pending watch` uses (`allowed by rule read-only: git status —
    claude-code, ~/src/app`); a denied one marked so. Nothing while none has been."""
    if not calls:
        return ""
    items = []
    for call in calls:
        when = clock(call.ts) if call.ts is not None else ""
        verdict = "deny" if call.verdict is Verdict.DENY else "allow"
        host = f'<span class="host">{text(call.host)}</span>: ' if call.host else ""
        items.append(f'<li class="{verdict}">{when} {host}{text(call.said)}</li>')
    return (
        '<details id="decided" class="decided"><summary>Decided without asking '
        f'<span class="n">({len(calls)})</span></summary><ol>{"".join(items)}</ol></details>'
    )


def more_button(after: str | None, left: int) -> str:
    """The button that fetches the next page of the board (*after*: the last card's place,
    :func:`place`), or nothing when none is left. Scrolled to, it fetches by itself."""
    if after is None or left <= 0:
        return ""
    return (
        f'<button type="button" id="more" class="more secondary" data-after="{attr(after)}">'
        f"Show {min(left, PAGE_CARDS)} more ({left:,} not shown)</button>"
    )


def place(status: Status) -> str:
    """A card's place on the board (when filed, and its ID), as the page asks for the cards
    after it."""
    return f"{format_time(status.request.filed_at)} {status.id}"


def count_text(n: int) -> str:
    return "nothing waits" if n == 0 else f"{n} waiting"


def title_text(n: int) -> str:
    """The tab's title: how many wait, first, where a phone's tab list shows it."""
    return f"({n}) wisp" if n else "wisp"


def clock(moment: datetime) -> str:
    """A time of day as HTML: in UTC, saying so, until the page's script shows it in the
    device's own zone (from its `datetime`)."""
    utc = moment.astimezone(UTC)
    return f'<time class="clock" datetime="{format_time(moment)}">{utc:%H:%M:%S} UTC</time>'


def _rows(rows: Sequence[tuple[str, str]], extra: str = "") -> str:
    """A view's (label, text) rows; a blank label continues the row above. A `diff` is
    coloured by line (its lines wrap: the changed end of a long line is never off-screen);
    every text is shown whole. *extra*: rows of wisp's own, as HTML, after them."""
    groups: list[tuple[str, list[str]]] = []
    for label, value in rows:
        if label or not groups:
            groups.append((label, [value]))
        else:
            groups[-1][1].append(value)
    out = []
    for label, lines in groups:
        if label == "diff":
            shown = "".join(
                f'<span class="{_diff_class(line)}">{text(line)}</span>' for line in lines
            )
            block = f'<pre class="diff">{shown}</pre>'
        elif len(lines) > 1 or label in BLOCKS:
            block = _block("\n".join(lines))
            if label == "command":
                block += _arguments(lines[0])
        else:
            out.append(f'<div class="row"><dt>{text(label)}</dt><dd>{text(lines[0])}</dd></div>')
            continue
        out.append(f'<div class="row wide"><dt>{text(label)}</dt><dd>{block}</dd></div>')
    return f'<dl class="rows">{"".join(out)}{extra}</dl>'


def _block(value: str) -> str:
    """A text in full width. A long one is shown clipped, with "Show all": the page enables
    the answers that act on it only once its end was on the screen (:func:`card`)."""
    if len(value) <= LONG_CHARS and value.count("\n") < LONG_LINES:
        return f"<pre>{text(value)}</pre>"
    return f"""<div class="long"><pre>{text(value)}<span class="end"></span></pre>
<button type="button" class="show-all">Show all ({len(value):,} characters)</button></div>"""


def _arguments(command: str) -> str:
    """A command's arguments one per line, as the shell splits it, when its quoting changes
    the split (a quoted argument, an escaped space): what `'"'"'` stands for, readable."""
    split = words(command)
    if split == command.split():
        return ""
    items = "".join(f"<li>{text(word)}</li>" for word in split)
    return f'<p class="argv-label">its arguments, one per line:</p><ol class="argv">{items}</ol>'


def _diff_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def _asker(request: Request) -> str:
    server = request.server
    parts = [server.client or "a program", f"pid {server.pid}"]
    if server.thread:
        parts.append(f"thread {server.thread}")
    return ", ".join(parts)


def hosts_down(down: Sequence[tuple[str, str]]) -> str:
    """The `--host`s whose relay is down, each with why (first on the board: what waits
    there is not shown while it is down)."""
    if not down:
        return ""
    lines = "".join(
        f"<li><b>{text(host)} down</b>: {text(why)}; its requests are not shown here. "
        "Answer them from a terminal there, or restart <code>wisp web</code>.</li>"
        for host, why in down
    )
    return f'<ul class="hosts-down" id="hosts-down" role="status">{lines}</ul>'


def card(
    status: Status,
    *,
    csrf: str,
    now: datetime,
    differs: Sequence[tuple[str, str]] = (),
    host: str | None = None,
) -> str:
    """One waiting request, whole, with the buttons that answer it. *host*: with `--host`,
    the host it waits on (`local`, or the host whose relay its answer goes through)."""
    request = status.request
    kind_view = view(status.kind)
    rows = list(kind_view.details(request.binding))
    for n, (fact_id, said) in enumerate(differs):
        rows.append(("contradicts" if n == 0 else "", f"you keep {said} ({fact_id})"))
    rows.append(("asked by", _asker(request)))
    when = (
        f'{clock(request.filed_at)}, <time class="ago" datetime="{format_time(request.filed_at)}">'
    )
    when += f"{age(request.filed_at, now)} ago</time>"
    if request.expires_at is not None:
        left = int((request.expires_at - now).total_seconds())
        said = f"expires in {age(now, request.expires_at)}" if left > 0 else "past its time"
        when += f', <time class="left" datetime="{format_time(request.expires_at)}">{said}</time>'
    filed = f'<div class="row"><dt>filed</dt><dd>{when}</dd></div>'
    if host is not None:
        rows.append(("host", host))
    warn = " warn" if differs else ""
    asked = kind_view.asked(request.binding)
    if len(asked) > ASKED_CHARS and any(value == asked for _label, value in rows):
        asked = kind_view.asked_within(request.binding, ASKED_CHARS)  # whole below
    shown = _rows(rows, filed)
    unseen = ""
    if 'class="long"' in shown:
        # As the TUI asks to scroll to the end: the answers that act on it wait until the
        # whole text was on the screen (the page's script enables them then).
        unseen = (
            '<p class="unseen">Tap <b>Show all</b> and read it to its end to answer it '
            "(<b>Deny</b> needs no reading).</p>"
        )
    return f"""<article class="card{warn}" id="r-{attr(status.id)}" data-id="{attr(status.id)}">
<h2>{text(kind_view.heading)}</h2>
<p class="asked">{text(asked)}</p>
{shown}
{unseen}
{_answers(status, csrf, host)}
<p class="said" role="status"></p>
<p class="id"><a href="{attr(link(status.id, host))}">{attr(status.id)}</a></p>
</article>"""


def link(request_id: str, host: str | None) -> str:
    """A request's page: `/r/ID`, with `?host=HOST` for another host's."""
    there = f"?host={host}" if host is not None and host != LOCAL else ""
    return f"/r/{request_id}{there}"


def _form(status: Status, csrf: str, inner: str, css: str = "", host: str | None = None) -> str:
    there = (
        f'<input type="hidden" name="host" value="{attr(host)}">\n'
        if host is not None and host != LOCAL
        else ""
    )
    return f"""<form method="post" action="/r/{attr(status.id)}/answer" class="answer{css}">
{there}<input type="hidden" name="csrf" value="{attr(csrf)}">
<input type="hidden" name="digest" value="{attr(status.request.binding_digest)}">
<input type="hidden" name="kind" value="{attr(status.kind.value)}">
{inner}</form>"""


def _button(decision: Decision, css: str, *, label: str | None = None) -> str:
    confirm = ' data-confirm="1"' if decision in STANDING else ""
    shown = label or BUTTONS.get(decision, decision.value)
    return (
        f'<button type="submit" name="decision" value="{attr(decision.value)}" '
        f'class="{css}"{confirm}>{html.escape(shown)}</button>'
    )


def _answers(status: Status, csrf: str, host: str | None = None) -> str:
    """The forms that answer a request: from its kind's decisions (the channel's table)."""
    spec = KINDS[status.kind]

    def form(status: Status, csrf: str, inner: str, css: str = "") -> str:
        return _form(status, csrf, inner, css, host)

    binding = status.request.binding
    forms = []
    plain = [d for d in spec.decisions if d not in SCOPES and d is not Decision.NO]
    for decision in plain:
        if decision is spec.text_decision:
            options = getattr(binding, "options", None) or ()
            for option in options:
                forms.append(
                    form(
                        status,
                        csrf,
                        f'<input type="hidden" name="text" value="{attr(option)}">'
                        f'<button type="submit" name="decision" value="{attr(decision.value)}" '
                        f'class="option">{text(option)}</button>',
                    )
                )
            if getattr(binding, "free_text", True) or not options:
                forms.append(
                    form(
                        status,
                        csrf,
                        '<textarea name="text" rows="2" maxlength="4000" required '
                        'placeholder="Your answer"></textarea>' + _button(decision, "primary"),
                        " stacked",
                    )
                )
        else:
            css = "primary" if decision is plain[0] else "secondary"
            forms.append(form(status, csrf, _button(decision, css)))
    scopes = [d for d in spec.decisions if d in SCOPES]
    offers = offers_of(binding) if spec.widths else None
    if offers is not None:  # the exact call's scopes, as the request offers them
        exact = offers.find(EXACT_WIDTH)
        scopes = [d for d in scopes if exact is not None and Scope(d.value) in exact.scopes]
        for why in offers.must_ask:
            forms.append(f'<p class="must-ask">Asked every time: {text(why)}</p>')
    if scopes:
        forms.append(
            form(
                status,
                csrf,
                '<span class="scope-label">or approve for</span>'
                + "".join(_button(d, "scope") for d in scopes),
                " scopes",
            )
        )
    for offer in offers.widths if offers is not None else ():
        shown = width_json(offer.target)
        if shown is None:
            continue  # the exact call: its scopes are the row above
        forms.append(
            form(
                status,
                csrf,
                f'<input type="hidden" name="width" value="{attr(json.dumps(shown))}">'
                f'<span class="scope-label">or approve {text(width_words(offer.target))} '
                "for</span>"
                + "".join(_button(Decision(scope.value), "scope") for scope in offer.scopes),
                " scopes",
            )
        )
    if Decision.NO in spec.decisions:
        forms.append(
            form(
                status,
                csrf,
                '<details><summary class="deny">Deny…</summary>'
                '<textarea name="reason" rows="2" maxlength="2000" '
                'placeholder="Why (the agent is told)"></textarea>'
                + _button(Decision.NO, "danger", label="Deny")
                + "</details>",
                " stacked denial",
            )
        )
    return f'<div class="answers">{"".join(forms)}</div>'


def answer_words(answer: Answer, kind: Kind, *, device: str | None = None) -> str:
    """A person's answer as the page says it: "Approved once by alice from a terminal",
    "… on the paired device pocket" when *device* (the one that gave it here) is known; and
    when (in UTC, saying so: :func:`ended_html` shows it in the device's zone)."""
    at = answer.answered_at.astimezone(UTC)
    return f"{_answer_said(answer, kind, device)}, at {at:%H:%M:%S} UTC."


def _answer_said(answer: Answer, kind: Kind, device: str | None) -> str:
    said = view(kind).answered_word(answer.decision)
    where = VIA_WORDS.get(Via(answer.via)) if answer.via in VIA_WORDS else None
    if device is not None and answer.via == Via.WEB:
        where = f"on the paired device {device}"
    line = f"{said[:1].upper()}{said[1:]} by {answer.user} {where or f'via {answer.via}'}"
    if answer.text is not None:
        line += f": “{answer.text}”"
    if answer.reason:
        line += f" (reason: {answer.reason})"
    return line


def ended_html(status: Status | None, *, device: str | None = None) -> str:
    """How a request ended, and by whom (*device*: the paired device that answered it), as
    HTML: its time a `<time>` the page shows in the device's own zone."""
    answer = status.answer if status is not None else None
    if status is not None and answer is not None and not answer.is_tombstone:
        said = text(_answer_said(answer, status.kind, device))
        return f"{said}, at {clock(answer.answered_at)}."
    return text(ended_words(status, device=device))


def ended_words(status: Status | None, *, device: str | None = None) -> str:
    """How a request ended, and by whom (*device*: the paired device that answered it)."""
    if status is None:
        return "This request is no longer in the channel."
    answer = status.answer
    if answer is not None and not answer.is_tombstone:
        return answer_words(answer, status.kind, device=device)
    outcome = status.outcome
    if outcome is Outcome.TIMED_OUT:
        return "It timed out: nobody answered in time."
    if outcome is Outcome.WITHDRAWN:
        return "The asker withdrew it."
    why = f": {status.reason}" if status.reason else ""
    return f"It ended ({status.state.value}){why}."


def ended_card(
    status: Status | None,
    request_id: str | None = None,
    *,
    device: str | None = None,
    said: str | None = None,
) -> str:
    """A request that takes no answer any more: what it asked, and how it ended."""
    rid = status.id if status is not None else request_id or ""
    asked = ""
    heading = "Ended"
    if status is not None:
        kind_view = view(status.kind)
        heading = kind_view.heading
        asked = f'<p class="asked">{text(kind_view.asked(status.request.binding))}</p>'
    return f"""<article class="card ended" id="r-{attr(rid)}" data-id="{attr(rid)}">
<h2>{text(heading)}</h2>
{asked}
<p class="outcome">{text(said) if said else ended_html(status, device=device)}</p>
<p class="id">{attr(rid)}</p>
<button type="button" class="dismiss">Dismiss</button>
</article>"""


def missing(request_id: str) -> str:
    return f"""<article class="card ended" id="r-{attr(request_id)}" data-id="{attr(request_id)}">
<h2>No such request</h2>
<p class="outcome">Request {attr(request_id)} is not waiting here, and is not one that
ended lately.</p></article>"""
