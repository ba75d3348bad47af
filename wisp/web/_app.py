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
from collections.abc import AsyncIterator
from datetime import datetime
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
    SYSTEM_CLOCK,
    AlreadySettled,
    Decision,
    FactBinding,
    Kind,
    Outcome,
    PendingError,
    StaleRequest,
    Status,
    Via,
    is_valid_id,
    parse_time,
)
from wisp import Answerer, EntryPoint
from wisp._answering import AnswerFate, AnswerReport
from wisp._home import open_channel
from wisp._render import refusal
from wisp.kinds import view
from wisp.stores.devices import Device, DeviceStore, PairingRefused
from wisp.stores.facts import FactStore
from wisp.stores.jsonstore import StoreError
from wisp.web import _assets, _pages
from wisp.web._board import ANSWERABLE, Board, Changed, Gone, Reset

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
    head = said[:1].upper() + said[1:]
    outcome = report.outcome
    if report.settled is not None and outcome is not None and outcome is not Outcome.ANSWERED:
        why = f": {report.settled.reason}" if report.settled.reason else ""
        return f"{head}, but it ended {outcome.value}{why}."
    if report.asker is AnswerFate.GONE:
        return f"{head}. No asker is watching: nothing will act on it."
    if report.asker is AnswerFate.LATE:
        return f"{head}. The asker has not picked it up yet."
    return f"{head}. The asker has it."


class WebFace:
    """One `wisp web` server's state: its home, its board, its devices."""

    def __init__(self, home: Path, board: Board) -> None:
        self.home = home
        self.board = board
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
            page, left = self.board.page(place, _pages.PAGE_CARDS)
            html = await run_in_threadpool(self._cards, page, csrf)
            return JSONResponse({"html": html, "more": _more(page, left)}, headers=HEADERS)
        focus: Status | None = None
        request_id = request.query_params.get("focus") or None
        if request_id is not None:
            focus = await run_in_threadpool(self._look_up, request_id)
            if focus is None:
                html = f"<main>{_pages.missing(request_id[:40])}</main>"
                return JSONResponse({"html": html, "title": "wisp"}, 404, headers=HEADERS)
        page, left = self.board.page(None, _pages.PAGE_CARDS)
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
            total=n,
            more=_more(page, left),
        )
        return JSONResponse({"html": html, "title": _pages.title_text(n), "n": n}, headers=HEADERS)

    def _cards(self, statuses: list[Status], csrf: str) -> str:
        """Waiting requests' cards, in order."""
        differs = self._differs(statuses)
        now = _now()
        return "".join(
            _pages.card(s, csrf=csrf, now=now, differs=differs.get(s.id, ())) for s in statuses
        )

    def _look_up(self, request_id: str) -> Status | None:
        if not is_valid_id(request_id):
            return None
        known = self.board.known(request_id)
        if known is not None:
            return known
        try:
            with open_channel(self.home) as channel:
                return channel.status(request_id)
        except PendingError:
            return None

    def _differs(self, statuses: list[Status]) -> dict[str, list[tuple[str, str]]]:
        """The kept facts each fact request would contradict, by request ID."""
        out: dict[str, list[tuple[str, str]]] = {}
        for status in statuses:
            binding = status.request.binding
            if isinstance(binding, FactBinding):
                try:
                    found = FactStore(self.home).contradicting(
                        binding.subject, binding.name, binding.value
                    )
                except StoreError:
                    found = []
                out[status.id] = [(fact.id, fact.said) for fact in found]
        return out

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
        except ValueError:
            return refused("Refused: no answer this page gives. Nothing was written.", 400)
        shown = await run_in_threadpool(self._look_up, request_id)
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
        try:
            report = await run_in_threadpool(
                self._give, credential, request_id, decision, kind, text, reason, shown
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
            self.answered_by[request_id] = device.name
            while len(self.answered_by) > ANSWERED_BY_KEPT:
                self.answered_by.popitem(last=False)
            won = False
            try:
                report = answerer.answer(
                    request_id, decision, kind=kind, text=text, reason=reason, shown=shown.request
                )
                won = report.won
            finally:
                if not won:
                    if before is None:
                        self.answered_by.pop(request_id, None)
                    else:
                        self.answered_by[request_id] = before
            return report

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
            finally:
                self.board.unsubscribe(subscriber)

        headers = {**HEADERS, "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    def _counted(self) -> dict[str, Any]:
        n = len(self.board.waiting())
        return {"n": n, "count": _pages.count_text(n)}

    def _board_event(self, csrf: str) -> str:
        """The board's first page anew (the page fetches the rest as it is scrolled to)."""
        page, left = self.board.page(None, _pages.PAGE_CARDS)
        n = len(page) + left
        data = {"html": self._cards(page, csrf), "more": _more(page, left)}
        return _sse("board", {**data, "n": n, "count": _pages.count_text(n)})

    def _change_event(self, event: Changed, csrf: str) -> str:
        status = event.status
        waiting = {s.id: s for s in self.board.waiting()}
        if event.id in waiting:
            current = waiting[event.id]
            differs = self._differs([current]).get(event.id, [])
            fragment = _pages.card(current, csrf=csrf, now=_now(), differs=differs)
            return _sse("card", {"id": event.id, "html": fragment, **self._counted()})
        fragment = _pages.ended_card(status, event.id, device=self.answered_by.get(event.id))
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
    return SYSTEM_CLOCK.now()
