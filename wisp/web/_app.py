"""The web application: Starlette routes over the application layer.

Who may see and answer is a paired device (:mod:`wisp.stores.devices`), known by its
credential, which its page keeps in its origin's storage (scheme, host and port: no other
origin reads it) and sends in a header (:data:`CREDENTIAL_HEADER`) with each of its requests;
it is looked up anew on every request, and again as an answer is written. No cookie: a cookie
goes to every port of the host, so to any server there. Every page is the same shell, holding
nothing of the channel; its script asks for the board (`/board`) and reads the event stream
(`/events`) with the header. Every answer form also carries a CSRF token (an HMAC of the
credential). Answers go through :class:`wisp.Answerer` (via `web`, the device's name audited
with each); what waits comes from the :class:`~wisp.web._board.Board`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from pending import (
    AlreadySettled,
    Decision,
    Kind,
    Outcome,
    PendingError,
    StaleRequest,
    Status,
    Via,
    answer_width,
    is_valid_id,
    parse_time,
    width_json,
)
from wisp import (
    ANSWERABLE,
    Answerer,
    AnswerFate,
    AnswerReport,
    Device,
    DeviceStore,
    EntryPoint,
    PairingRefused,
    StoreError,
    contradicted,
    look_up,
    open_channel,
)
from wisp._render import refusal
from wisp._text import visible
from wisp.kinds import view
from wisp.relay.protocol import Answered, AnswerLine, ErrorCode, ErrorLine
from wisp.web import _assets, _pages
from wisp.web._board import Board, CallDecided, Changed, Gone, Reset, place_of
from wisp.web._hosts import LOCAL, HostState, RemoteHost, Reply

# The header every request of a paired device's page carries its credential in. The page
# keeps the credential in its origin's storage (scheme, host and port), which no other origin
# reads; a cookie would go to every port of the host, and so to any server there.
CREDENTIAL_HEADER = "x-wisp-device"
OLD_COOKIE = "wisp_device"  # where builds before issue 58 kept it: cleared wherever seen
FORM_MAX_BYTES = 64 * 1024
ANSWERED_BY_KEPT = 256  # requests answered here whose device a card names (4x the board's ended)
KEEPALIVE_S = 15.0  # an event stream says something this often (and checks its device)
_CSRF_LABEL = b"wisp web: answer form v1"
REVOKED_LIVE = "this device was revoked; pair again with `wisp web pair`"
REVOKED_MEANWHILE = (
    "Refused: this device was revoked while the answer was on its way. Nothing was written; "
    "pair again with `wisp web pair` in a terminal."
)
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def csrf_token(credential: str) -> str:
    """The token every answer form of this device carries."""
    return hmac.new(credential.encode(), _CSRF_LABEL, hashlib.sha256).hexdigest()


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _said(report: AnswerReport, answered_by: dict[str, str]) -> str:
    """What came of an answer given here, in a line (*answered_by*: the device that gave
    each answer given here, by request ID)."""
    kind_view = view(report.request.kind)
    if not report.won:
        device = answered_by.get(report.request.id)
        return "Too late: " + _pages.answer_words(report.answer, report.request.kind, device=device)
    said = kind_view.answered_word(report.answer.decision)
    settled = report.settled
    return _fate(
        said[:1].upper() + said[1:],
        report.outcome if settled is not None else None,
        settled.reason if settled is not None else None,
        report.asker,
    )


def _fate(head: str, outcome: Outcome | None, why: str | None, asker: AnswerFate | None) -> str:
    """An answer that won, *head*, and what came of it: its outcome once settled (*why*:
    the reason it says), else what its asker did."""
    if outcome is not None and outcome is not Outcome.ANSWERED:
        return f"{head}, but it ended {outcome.value}{f': {why}' if why else ''}."
    if asker is AnswerFate.GONE:
        return f"{head}. No asker is watching: nothing will act on it."
    if asker is AnswerFate.LATE:
        return f"{head}. The asker has not picked it up yet."
    return f"{head}. The asker has it."


def _said_there(report: Answered, host: str) -> str:
    """What came of an answer given through *host*'s relay, in a line (its texts are that
    relay's: made visible, and escaped where shown, never compared)."""
    if not report.won:
        winner = report.answer
        who = "another answer"
        if winner is not None:
            who = winner.decision + "".join(
                f" {word} {value}"
                for word, value in (("by", winner.user), ("via", winner.via))
                if value
            )
        return visible(f"Too late on {host}: {who} got there first.")
    said = view(report.kind).answered_word(report.decision) if report.kind else "answered"
    head = f"{said[:1].upper()}{said[1:]} on {host}"
    return visible(_fate(head, report.outcome, report.reason, report.asker))


# A far relay's refusals said as the page's statuses: the request moved on (409), else the
# answer itself was refused (400); a relay that takes no answers is the host's fault (502).
_THERE_CONFLICT = frozenset(
    {ErrorCode.ALREADY_SETTLED, ErrorCode.STALE, ErrorCode.REQUEST_CHANGED, ErrorCode.BUSY}
)


class WebFace:
    """One `wisp web` server's state: its home, its board, its devices."""

    def __init__(self, home: Path, board: Board, hosts: Sequence[RemoteHost] = ()) -> None:
        self.home = home
        self.board = board
        # The --host relays, by host: their requests shown beside this machine's, each
        # answered through its own host's relay.
        self.hosts = {remote.host: remote for remote in hosts}
        self.devices = DeviceStore(home)
        # Who answered each request answered here, for its card ("on pocket"); the newest
        # ANSWERED_BY_KEPT only (the audit log keeps them all).
        self.answered_by: OrderedDict[str, str] = OrderedDict()

    # --- who asks ------------------------------------------------------------------------

    def device(self, request: Request) -> tuple[Device, str] | None:
        credential = request.headers.get(CREDENTIAL_HEADER)
        device = self.devices.find(credential)
        return None if device is None or credential is None else (device, credential)

    def _unpaired(self, request: Request) -> Response:
        """Nothing of the channel: how to pair; and whether the credential the page sent is
        one no paired device has (revoked, so far as this server can tell)."""
        revoked = bool(request.headers.get(CREDENTIAL_HEADER))
        html = _pages.unpaired(revoked=revoked)
        title = "wisp: this device was revoked" if revoked else "wisp: not paired"
        return JSONResponse({"html": html, "title": title}, 403, headers=HEADERS)

    # --- pages ---------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return PlainTextResponse("wisp web\n", headers=HEADERS)

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        content = {
            "page.css": (_assets.CSS, "text/css"),
            "page.js": (_assets.JS, "text/javascript"),
        }
        if name not in content:
            return PlainTextResponse("not found\n", 404, headers=HEADERS)
        body, media = content[name]
        return Response(body, media_type=media, headers=HEADERS)

    async def page(self, request: Request) -> Response:
        """The same page for every browser, holding nothing of the channel: its script asks
        for the board with the device's credential (:meth:`board_part`)."""
        response = _html(_pages.shell(request.path_params.get("request_id")))
        if OLD_COOKIE in request.cookies:
            response.delete_cookie(OLD_COOKIE, path="/")
        return response

    async def board_part(self, request: Request) -> Response:
        """The board, for a paired device's page: `{"html", "title", "n"}`, its first page
        (403: how to pair). With `after=PLACE` (a card's place, from its page's "Show more"):
        `{"html", "more"}`, the cards after it and the button for the next ones."""
        found = await run_in_threadpool(self.device, request)
        if found is None:
            return self._unpaired(request)
        device, credential = found
        csrf = csrf_token(credential)
        after = request.query_params.get("after")
        if after is not None:
            place = _place(after)
            if place is None:
                message = "Refused: no place on the board. Reload the page."
                return JSONResponse({"message": message}, 400, headers=HEADERS)
            page, hosts, left = self._page(place)
            html = await run_in_threadpool(self._cards, page, csrf, hosts)
            return JSONResponse({"html": html, "more": _more(page, left)}, headers=HEADERS)
        focus: Status | None = None
        request_id = request.query_params.get("focus") or None
        if request_id is not None:
            focus = await run_in_threadpool(self._look_up, request_id)
            if focus is None:
                focus = self._there(request_id)
            if focus is None:
                html = f"<main>{_pages.missing(request_id[:40])}</main>"
                return JSONResponse({"html": html, "title": "wisp"}, 404, headers=HEADERS)
        page, hosts, left = self._page(None)
        shown = page if focus is None else [focus, *page]  # one the board has not heard of
        differs = await run_in_threadpool(self._differs, shown)
        unheard = (
            focus is not None and focus.state in ANSWERABLE and self.board.known(focus.id) is None
        )
        n = len(page) + left + int(unheard)
        html = _pages.board(
            page,
            focus=focus,
            device=device.name,
            csrf=csrf,
            now=_now(),
            differs=differs,
            answered_by=self.answered_by,
            hosts=hosts,
            down=self._down(),
            total=n,
            more=_more(page, left),
            decided=self.board.decided(),
        )
        return JSONResponse({"html": html, "title": _pages.title_text(n), "n": n}, headers=HEADERS)

    def _page(self, after: tuple[datetime, str] | None) -> tuple[list[Status], dict[str, str], int]:
        """The next page of what waits here and on every --host after *after* (a card's
        place; None: from the oldest), the host of each (:meth:`_everything`), and how many
        wait after them."""
        waiting, hosts = self._everything()
        if after is not None:
            waiting = [s for s in waiting if place_of(s) > after]
        size = _pages.PAGE_CARDS
        return waiting[:size], hosts, max(0, len(waiting) - size)

    def _cards(self, statuses: list[Status], csrf: str, hosts: dict[str, str]) -> str:
        """Waiting requests' cards, in order, each naming its host (with --host)."""
        differs = self._differs(statuses)
        now = _now()
        return "".join(
            _pages.card(s, csrf=csrf, now=now, differs=differs.get(s.id, ()), host=hosts.get(s.id))
            for s in statuses
        )

    def _everything(self) -> tuple[list[Status], dict[str, str]]:
        """What waits on this machine and on every --host, oldest first, with the host each
        waits on by request ID (empty without --host: the page names no host). An ID shown
        already is never taken from another host: a far relay cannot hide a request here."""
        local = self.board.waiting()
        if not self.hosts:
            return local, {}
        hosts = {status.id: LOCAL for status in local}
        shown = list(local)
        for name, remote in self.hosts.items():
            for status in remote.waiting():
                if status.id not in hosts:
                    hosts[status.id] = name
                    shown.append(status)
        shown.sort(key=lambda status: status.request.filed_at)
        return shown, hosts

    def _there(self, request_id: str) -> Status | None:
        """A request waiting on a --host (a push's link from that machine opens it here)."""
        for remote in self.hosts.values():
            found = remote.known(request_id)
            if found is not None:
                return found
        return None

    def _down(self) -> list[tuple[str, str]]:
        return [
            (name, remote.why)
            for name, remote in self.hosts.items()
            if remote.state is HostState.DOWN
        ]

    def _look_up(self, request_id: str) -> Status | None:
        if not is_valid_id(request_id):
            return None
        known = self.board.known(request_id)
        if known is not None:
            return known
        try:
            return look_up(request_id, self.home)
        except PendingError:  # the channel or its files cannot be read: not found here
            return None

    def _differs(self, statuses: list[Status]) -> dict[str, list[tuple[str, str]]]:
        """The kept facts each fact request would contradict, by request ID."""
        return {
            status.id: [(fact.id, fact.said) for fact in contradicted(status.request, self.home)]
            for status in statuses
        }

    # --- pairing -------------------------------------------------------------------------

    async def pair_form(self, request: Request) -> Response:
        """The pairing link: a form that names the device. Opening it changes nothing (a
        chat app's preview of the link uses no code up)."""
        code = request.path_params["code"]
        agent = request.headers.get("user-agent", "")
        name = next((n for n in ("iPhone", "iPad", "Android") if n in agent), "phone")
        return _html(_pages.pairing(code, name=name.lower()))

    async def pair(self, request: Request) -> Response:
        # No limit on attempts: a code is 256 random bits, out of reach of any guessing, and
        # a limit others could exhaust would refuse the person's own link.
        form = await _form(request)
        code, name = form.get("code", ""), form.get("name", "").strip()
        try:
            _device, credential = await run_in_threadpool(self.devices.pair, code, name)
        except PairingRefused as exc:
            return _html(_pages.pairing(code, name=name, error=str(exc)), 400)
        except StoreError as exc:
            return _html(_pages.pairing(code, name=name, error=str(exc)), 500)
        # The credential goes to this origin's page once, in this answer (not a cookie: that
        # would go to every port of the host); its script keeps it in this origin's storage.
        response = _html(_pages.paired(credential))
        if OLD_COOKIE in request.cookies:
            response.delete_cookie(OLD_COOKIE, path="/")
        return response

    # --- answering -----------------------------------------------------------------------

    async def answer(self, request: Request) -> Response:
        wants_json = "application/json" in request.headers.get("accept", "")
        request_id = request.path_params["request_id"]

        def refused(message: str, status: int) -> Response:
            if wants_json:
                return JSONResponse(
                    {"won": False, "message": message}, status_code=status, headers=HEADERS
                )
            shown = _pages.attr(message)
            return _html(
                _pages.document("wisp", f'<main class="notice"><p>{shown}</p></main>'), status
            )

        found = await run_in_threadpool(self.device, request)
        if found is None:
            return refused("This browser is not paired: nothing was answered.", 403)
        _device, credential = found
        if not _same_origin(request):
            return refused("Refused: the form came from another site. Nothing was written.", 403)
        form = await _form(request)
        if not hmac.compare_digest(form.get("csrf", ""), csrf_token(credential)):
            return refused(
                "Refused: the form carries no valid token (reload the page and answer "
                "again). Nothing was written.",
                403,
            )
        try:
            decision = Decision(form.get("decision", ""))
            kind = Kind(form.get("kind", ""))
            width = _width(form.get("width"))
        except ValueError:
            return refused("Refused: no answer this page gives. Nothing was written.", 400)
        host = form.get("host") or None
        remote = None if host is None else self.hosts.get(host)
        if host is not None and remote is None:
            return refused(
                f"Refused: this page answers for no host {host[:60]}. Nothing was written.", 404
            )
        if remote is None:
            shown = await run_in_threadpool(self._look_up, request_id)
        else:
            shown = remote.known(request_id)
            if shown is None and remote.state is HostState.DOWN:
                return refused(
                    visible(
                        f"{remote.host} is down ({remote.why}): nothing was sent. Answer it "
                        "from a terminal there, or start `wisp web` again."
                    ),
                    502,
                )
        if shown is None:
            return refused(f"Request {request_id[:40]} is not waiting here.", 404)
        if form.get("digest") != shown.request.binding_digest:
            return refused(
                "Refused: the request changed since this page showed it; reload to see it "
                "as it is now. Nothing was written.",
                409,
            )
        text = form.get("text") if decision is _text_decision(kind) else None
        reason = form.get("reason") or None if decision is Decision.NO else None
        if remote is not None:
            line = AnswerLine(
                id=request_id, decision=decision, kind=kind, text=text, reason=reason, width=width
            )
            reply = await run_in_threadpool(self._give_there, credential, remote, line)
            if reply is None:
                return refused(REVOKED_MEANWHILE, 403)
            if reply.answered is None:
                return refused(*_refused_there(reply, remote.host))
            message = _said_there(reply.answered, remote.host)
            if wants_json:
                won = reply.answered.won
                return JSONResponse({"won": won, "message": message}, headers=HEADERS)
            return RedirectResponse(
                _pages.link(request_id, remote.host), status_code=303, headers=HEADERS
            )
        try:
            report = await run_in_threadpool(
                self._give, credential, request_id, decision, kind, text, reason, shown, width
            )
        except (AlreadySettled, StaleRequest) as exc:
            return refused(refusal(exc, me=None), 409)
        except PendingError as exc:
            return refused(refusal(exc, me=None), 400)
        except StoreError as exc:
            return refused(f"{exc} Nothing was answered.", 500)
        if report is None:
            return refused(REVOKED_MEANWHILE, 403)
        message = _said(report, self.answered_by)
        if wants_json:
            return JSONResponse({"won": report.won, "message": message}, headers=HEADERS)
        return RedirectResponse(f"/r/{request_id}", status_code=303, headers=HEADERS)

    def _give(
        self,
        credential: str,
        request_id: str,
        decision: Decision,
        kind: Kind,
        text: str | None,
        reason: str | None,
        shown: Status,
        width: Mapping[str, Any] | None = None,
    ) -> AnswerReport | None:
        """The answer, given while the device is held paired (None: it was revoked since
        its request's headers came). The devices' lock is held until the answer is
        written, so a revoke that has returned is final: no answer of the device lands
        after it."""
        with self.devices.holding(credential) as device, open_channel(self.home) as channel:
            if device is None:
                return None
            answerer = Answerer(
                channel, via=Via.WEB, entry_point=EntryPoint.WEB, device=device.name
            )
            # Named before the answer is written: the board hears of it at once, and its ended
            # card names the device (named after, it said "on a paired device" when the
            # board was quicker); put back as it was if this answer did not win.
            before = self.answered_by.get(request_id)
            self._answered_here(request_id, device.name)
            won = False
            try:
                report = answerer.answer(
                    request_id,
                    decision,
                    kind=kind,
                    text=text,
                    reason=reason,
                    shown=shown.request,
                    width=width,
                )
                won = report.won
            finally:
                if not won:
                    if before is None:
                        self.answered_by.pop(request_id, None)
                    else:
                        self.answered_by[request_id] = before
            return report

    def _give_there(self, credential: str, remote: RemoteHost, line: AnswerLine) -> Reply | None:
        """The answer handed to *remote*'s relay while the device is held paired (None: it
        was revoked since its request's headers came), then the relay's reply. The lock is
        held until the line is handed over: a revoke that has returned is final here too."""
        with self.devices.holding(credential) as device:
            if device is None:
                return None
            name = device.name
            sent = remote.send(line)
        if sent is None:
            if remote.state is HostState.DOWN:
                return Reply(down=remote.why)
            busy = "an answer to this request is already on its way from this page: wait for it."
            return Reply(error=ErrorLine(error=ErrorCode.BUSY, message=busy, id=line.id))
        reply = remote.reply(line.id, sent)
        if reply.answered is not None and reply.answered.won:
            self._answered_here(line.id, name)
        return reply

    def _answered_here(self, request_id: str, device: str) -> None:
        self.answered_by[request_id] = device
        while len(self.answered_by) > ANSWERED_BY_KEPT:
            self.answered_by.popitem(last=False)

    # --- the live stream -----------------------------------------------------------------

    async def events(self, request: Request) -> Response:
        found = await run_in_threadpool(self.device, request)
        if found is None:
            return self._unpaired(request)
        _device, credential = found
        subscriber = self.board.subscribe(asyncio.get_running_loop())
        csrf = csrf_token(credential)

        async def stream() -> AsyncIterator[str]:
            try:
                yield self._board_event(csrf)  # what changed between the page and now
                while True:
                    try:
                        event = await asyncio.wait_for(subscriber.queue.get(), KEEPALIVE_S)
                    except TimeoutError:
                        event = None
                    if await run_in_threadpool(self.devices.find, credential) is None:
                        yield _sse("closed", {"message": REVOKED_LIVE, "reload": True})
                        return
                    if event is None:
                        yield ": still here\n\n"
                    elif isinstance(event, Gone):
                        yield _sse("closed", {"message": "WISP_HOME was removed: restart wisp web"})
                        return
                    elif isinstance(event, Reset):
                        yield self._board_event(csrf)
                    elif isinstance(event, Changed):
                        yield await run_in_threadpool(self._change_event, event, csrf)
                    elif isinstance(event, CallDecided):
                        yield _sse("decided", {"html": _pages.decided_list(self.board.decided())})
            finally:
                self.board.unsubscribe(subscriber)

        headers = {**HEADERS, "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    def _counted(self) -> dict[str, Any]:
        n = len(self._everything()[0])
        return {"n": n, "count": _pages.count_text(n)}

    def _board_event(self, csrf: str) -> str:
        """The board's first page anew (the page fetches the rest as it is scrolled to), and
        the hosts that are down."""
        page, hosts, left = self._page(None)
        n = len(page) + left
        html = _pages.hosts_down(self._down()) + self._cards(page, csrf, hosts)
        data = {"html": html, "more": _more(page, left)}
        return _sse("board", {**data, "n": n, "count": _pages.count_text(n)})

    def _change_event(self, event: Changed, csrf: str) -> str:
        waiting, hosts = self._everything()
        found = {s.id: s for s in waiting}
        label = hosts.get(event.id)
        if label is not None and label != (event.host or LOCAL):
            return ": another host's request of that ID is shown\n\n"
        if event.id in found:
            current = found[event.id]
            differs = self._differs([current]).get(event.id, [])
            fragment = _pages.card(current, csrf=csrf, now=_now(), differs=differs, host=label)
            return _sse("card", {"id": event.id, "html": fragment, **self._counted()})
        status, said = event.status, None
        remote = self.hosts.get(event.host) if event.host is not None else None
        ended = remote.ended(event.id) if remote is not None else None
        if ended is not None:
            status = ended[0]
            said = f"On {event.host}: {ended[1]}."
        device = self.answered_by.get(event.id)
        fragment = _pages.ended_card(status, event.id, device=device, said=said)
        return _sse("ended", {"id": event.id, "html": fragment, **self._counted()})

    # --- the application -----------------------------------------------------------------

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/", self.page),
                Route("/r/{request_id}", self.page),
                Route("/r/{request_id}/answer", self.answer, methods=["POST"]),
                Route("/board", self.board_part),
                Route("/events", self.events),
                Route("/pair/{code}", self.pair_form),
                Route("/pair", self.pair, methods=["POST"]),
                Route("/healthz", self.health),
                Route("/static/{name}", self.asset),
            ]
        )


def _refused_there(reply: Reply, host: str) -> tuple[str, int]:
    """A far relay's refusal of an answer, or its silence, as the page says it."""
    if reply.error is not None:
        code = reply.error.error
        status = 400
        if code in _THERE_CONFLICT:
            status = 409
        elif code is ErrorCode.NOT_A_TERMINAL:
            status = 502
        return visible(f"{host} refused it: {reply.error.message}"), status
    return (
        f"{host} is down ({visible(reply.down or '')}): whether the answer reached it is "
        "not known. See `wisp approvals` there, or answer from a terminal there.",
        502,
    )


def _width(typed: str | None) -> dict[str, Any] | None:
    """A form's `width` (an offer's, as JSON: docs/channel.md "Widths"), checked; None: the
    exact call. Raises ValueError for anything else."""
    if not typed:
        return None
    try:
        return width_json(answer_width(json.loads(typed)))
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(str(exc)) from None


def _text_decision(kind: Kind) -> Decision | None:
    from pending import KINDS

    return KINDS[kind].text_decision


def _same_origin(request: Request) -> bool:
    """A POST whose Origin (sent by every browser with a form's POST) names another host
    than this one is refused; the CSRF token is the check that holds without it."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.headers.get("host", "")


async def _form(request: Request) -> dict[str, str]:
    """An urlencoded form's fields (the first of each), at most FORM_MAX_BYTES read."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_MAX_BYTES:
            return {}
    fields: dict[str, str] = {}
    for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        fields.setdefault(key, value)
    return fields


def _place(text: str) -> tuple[datetime, str] | None:
    """A card's place as its page sends it (:func:`wisp.web._pages.place`), or None."""
    filed, _, request_id = text.partition(" ")
    if not is_valid_id(request_id):
        return None
    try:
        return parse_time(filed), request_id
    except ValueError:
        return None


def _more(page: list[Status], left: int) -> str:
    return _pages.more_button(_pages.place(page[-1]) if page else None, left)


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _now() -> datetime:
    return datetime.now(UTC)  # what pending's system clock reads: pages say "5 min ago" by it
