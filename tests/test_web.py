"""`wisp web` in a real browser: the distribution's headless Chromium, driven by Playwright, at
a phone's viewport (390x844), against a real `wisp web` process, with requests filed by real
asker processes and answers given from real terminals.

Set WISP_WEB_SCREENSHOTS=DIR to keep the phone's screenshots (docs/web.md's come so).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers import (
    WAIT_S,
    AskingCommand,
    audit_records,
    command,
    fact,
    in_terminal,
    tool,
    wait_until,
    wisp_command,
)
from pushserver import PushServer
from webproc import CHROMIUM, PHONE, WebServer, chromium_missing, pair, web_server

from pending import Channel, State
from wisp.stores.facts import FactStore

MISSING = chromium_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
MS = WAIT_S * 1000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def web(home: Path) -> Iterator[WebServer]:
    home.mkdir(mode=0o700, exist_ok=True)
    with web_server(home) as server:
        yield server


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """A fresh browser context the size of a phone: no cookie, until it pairs."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        yield context.new_page()
    finally:
        context.close()


def shot(page: Any, name: str, tmp_path: Path) -> None:
    """A screenshot of the phone's screen: always taken (a page that cannot be drawn fails
    here), kept in WISP_WEB_SCREENSHOTS if set."""
    kept = os.environ.get("WISP_WEB_SCREENSHOTS")
    target = Path(kept) if kept else tmp_path
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"web-{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 1000


def card(page: Any, request_id: str) -> Any:
    found = page.locator(f"#r-{request_id}")
    found.wait_for(timeout=MS)
    return found


def credential(page: Any) -> str:
    """The device's credential, where the paired page keeps it (its origin's storage)."""
    return str(page.evaluate("localStorage.getItem('wisp-device') || ''"))


def post(page: Any, url: str, form: dict[str, str], *, as_device: str = "") -> int:
    """A POST from *page*'s browser context (its cookies, if any), as a script would forge;
    with the credential *as_device* in its header if given."""
    headers = {"X-Wisp-Device": as_device} if as_device else {}
    response = page.context.request.post(url, form=form, headers=headers, fail_on_status_code=False)
    return int(response.status)


def still_waiting(home: Path, asker: AskingCommand) -> None:
    """The request is as it was filed: nothing answered it. (Then denied, to end its asker.)"""
    with Channel.open(home) as channel:
        assert channel.status(asker.id).state is State.FILED
    in_terminal("approvals", "deny", asker.id)
    asker.result()


class TestPairing:
    def test_a_printed_link_pairs_the_phone_once(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """The link `wisp web pair` prints pairs the browser that opens it (its credential
        kept in the page's origin's storage, no cookie set); the device is listed, and the
        link pairs no other."""
        from webproc import pairing_link

        link = pairing_link(web.url)
        phone.goto(link)
        shot(phone, "pair", tmp_path)
        phone.fill("input[name=name]", "my-phone")
        phone.click("button[type=submit]")
        phone.wait_for_selector("#live.ok", timeout=MS)
        assert "Nothing waits for you." in phone.inner_text("body")
        assert phone.context.cookies() == []
        kept = credential(phone)
        assert len(kept) >= 43
        _code, listed = in_terminal("web", "devices", "--json")
        assert [d["name"] for d in json.loads(listed.strip())] == ["my-phone"]
        stranger = phone.context.browser.new_context(viewport=PHONE).new_page()
        stranger.goto(link)
        stranger.fill("input[name=name]", "other")
        stranger.click("button[type=submit]")
        assert "unknown, used, or more than" in stranger.inner_text("body")
        assert credential(stranger) == ""
        stored = (home / "web-devices.json").read_text()
        assert kept not in stored
        assert (home / "web-devices.json").stat().st_mode & 0o777 == 0o600
        assert any(
            r["event"] == "web.paired" and r["device"] == "my-phone" for r in audit_records(home)
        )


class TestAnswering:
    def test_a_request_appears_live_and_approving_it_ends_the_asker_with_0(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """A request filed by a real asker appears without a reload, whole; Approve once
        ends the asker with exit 0, and the answer is audited via web with the device."""
        pair(phone, web.url, "pocket")
        asker = AskingCommand(
            "approvals", "request", "--reason", "ship 1.4", "--", "make deploy\u202e"
        )
        found = card(phone, asker.id)
        text = found.inner_text()
        assert "make deploy" in text and "ship 1.4" in text and "\u202e" not in text
        assert "<U+202E>" in text or "U+202E" in text
        shot(phone, "request", tmp_path)
        found.get_by_role("button", name="Approve once").click()
        code, _out, err = asker.result()
        assert code == 0, err
        found.locator(".said").filter(has_text="Approved once").wait_for(timeout=MS)
        phone.goto(f"{web.url}/r/{asker.id}")
        ended = phone.locator(f"#r-{asker.id}.ended").inner_text()
        assert "on the paired device pocket" in ended, ended
        (answered,) = [r for r in audit_records(home) if r["event"] == "approval.answered"]
        assert (answered["via"], answered["device"], answered["entryPoint"]) == (
            "web",
            "pocket",
            "web",
        )

    def test_deny_with_a_reason_reaches_the_asker(self, web: WebServer, phone: Any) -> None:
        """Deny, with a reason typed on the phone: the asker exits 1 and is told why."""
        pair(phone, web.url)
        asker = AskingCommand("approvals", "request", "--", "rm -rf build")
        found = card(phone, asker.id)
        found.locator("summary.deny").click()
        found.locator("textarea[name=reason]").fill("not on a Friday")
        found.get_by_role("button", name="Deny", exact=True).click()
        code, out, err = asker.result()
        assert code == 1
        assert "not on a Friday" in out + err

    def test_a_question_is_answered_by_its_option(
        self, web: WebServer, phone: Any, tmp_path: Path
    ) -> None:
        """A question's options are buttons; tapping one answers with it."""
        pair(phone, web.url)
        asker = AskingCommand(
            "questions",
            "ask",
            "Which environment?",
            "--option",
            "staging",
            "--option",
            "production",
        )
        found = card(phone, asker.id)
        shot(phone, "question", tmp_path)
        found.get_by_role("button", name="production").click()
        code, out, err = asker.result()
        assert (code, out.strip()) == (0, "production"), err

    def test_an_answer_from_a_terminal_shows_on_the_page_and_by_whom(
        self, web: WebServer, phone: Any, tmp_path: Path
    ) -> None:
        """Answered in a terminal meanwhile: the card turns into who answered, live."""
        pair(phone, web.url)
        asker = AskingCommand("approvals", "request", "--", "make test")
        found = card(phone, asker.id)
        code, output = in_terminal("approvals", "approve", asker.id)
        assert code == 0, output
        ended = phone.locator(f"#r-{asker.id}.ended")
        ended.wait_for(timeout=MS)
        assert "from a terminal" in ended.inner_text()
        assert found.locator("button").count() == 0
        shot(phone, "answered-elsewhere", tmp_path)
        assert asker.result()[0] == 0

    def test_a_tool_edit_shows_as_a_diff_and_a_fact_its_contradiction(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """An edit is shown as a diff, a fact with the kept fact it contradicts; a request's
        own page shows it first."""
        pair(phone, web.url)
        with Channel.open(home) as channel, channel.server() as lock:
            FactStore(home).keep(fact(lock, value="RED FOX").binding, request="c0ffee00", via="cli")
            edit, asked = tool(lock), fact(lock, value="BLUE HERON")
            filed = command(lock, text="git push --force")
            for request in (edit, asked, filed):
                channel.file(request)
            # A page that is not the request's (an error, "missing", unpaired) fails here,
            # not as a card that never comes.
            response = phone.goto(f"{web.url}/r/{edit.id}")
            assert response is not None and response.status == 200, phone.content()
            first = phone.locator("#cards .card").first
            first.wait_for(timeout=MS)
            assert first.get_attribute("id") == f"r-{edit.id}"
            assert first.locator("pre.diff .add").count() >= 1
            contradiction = card(phone, asked.id).inner_text()
            assert "RED FOX" in contradiction
            card(phone, filed.id)
            shot(phone, "board", tmp_path)
            assert channel.status(edit.id).state is State.FILED


class TestTheFocusedRequest:
    def test_one_filed_since_the_board_heard_is_shown_whole_not_ended(self, home: Path) -> None:
        """A push's link opened at once can name a request the board has not heard of yet:
        the page shows it whole, with its answers, counted as waiting, not "It ended
        (filed)" (seen: a soak run's phone found no diff on an edit's own page)."""
        from datetime import UTC, datetime

        from wisp.web._pages import board

        with Channel.open(home) as channel, channel.server() as lock:
            edit = tool(lock)
            channel.file(edit)
            focus = channel.status(edit.id)
        page = board([], focus=focus, device="phone", csrf="c", now=datetime.now(UTC), differs={})
        assert f'id="r-{edit.id}"' in page and "card ended" not in page
        assert 'class="diff"' in page and "/answer" in page
        assert "1 waiting" in page and "It ended" not in page


class TestRefusals:
    def test_an_unpaired_browser_sees_nothing_and_cannot_answer(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """Without a paired device: no request's text on any page, no board, no events, no
        answer."""
        asker = AskingCommand("approvals", "request", "--", "secret-deploy")
        for path in ("/", f"/r/{asker.id}"):
            phone.goto(web.url + path)
            phone.get_by_role("heading", name="Not paired").wait_for(timeout=MS)
            assert "secret-deploy" not in phone.content()
        shot(phone, "unpaired", tmp_path)
        for path in ("/board", "/events"):
            response = phone.context.request.get(web.url + path, fail_on_status_code=False)
            assert response.status == 403 and "secret-deploy" not in response.text()
        status = post(phone, f"{web.url}/r/{asker.id}/answer", {"decision": "once"})
        assert status == 403
        still_waiting(home, asker)

    def test_a_revoked_device_sees_nothing_and_cannot_answer(
        self, web: WebServer, phone: Any, home: Path
    ) -> None:
        """`wisp web revoke NAME` ends the device at once: its next page and answer are
        refused, though it still holds its credential, and the page says so."""
        pair(phone, web.url, "old-phone")
        asker = AskingCommand("approvals", "request", "--", "make release")
        found = card(phone, asker.id)
        form = {
            "csrf": found.locator("input[name=csrf]").first.input_value(),
            "digest": found.locator("input[name=digest]").first.input_value(),
            "kind": "command",
            "decision": "once",
        }
        held = credential(phone)
        answer_url = f"{web.url}/r/{asker.id}/answer"
        assert post(phone, answer_url, {**form, "decision": "nonsense"}, as_device=held) == 400
        code, output = in_terminal("web", "revoke", "old-phone")
        assert code == 0, output
        phone.goto(web.url)
        phone.get_by_role("heading", name="This device was revoked").wait_for(timeout=MS)
        said = phone.inner_text("main")
        assert "wisp web pair" in said, said
        assert "make release" not in phone.content()
        assert post(phone, answer_url, form, as_device=held) == 403
        still_waiting(home, asker)

    def test_a_forged_post_without_the_csrf_token_is_refused(
        self, web: WebServer, phone: Any, home: Path
    ) -> None:
        """A POST with the device's credential but no (or a wrong) CSRF token answers
        nothing; without the credential, nothing either."""
        pair(phone, web.url)
        asker = AskingCommand("approvals", "request", "--", "make deploy")
        found = card(phone, asker.id)
        form = {
            "digest": found.locator("input[name=digest]").first.input_value(),
            "kind": "command",
            "decision": "once",
        }
        answer_url = f"{web.url}/r/{asker.id}/answer"
        held = credential(phone)
        token = found.locator("input[name=csrf]").first.input_value()
        assert post(phone, answer_url, form, as_device=held) == 403
        assert post(phone, answer_url, {**form, "csrf": "0" * 64}, as_device=held) == 403
        assert post(phone, answer_url, {**form, "csrf": token}) == 403
        assert not [r for r in audit_records(home) if r["event"] == "approval.answered"]
        still_waiting(home, asker)


class TestRefusalsRead:
    def test_a_refusal_is_said_in_plain_text_not_html_entities(
        self, web: WebServer, phone: Any
    ) -> None:
        """An answer to a request a terminal denied meanwhile is refused (409) in words the
        page shows as they are (it sets them as text): `'no'`, never `&#x27;no&#x27;`."""
        pair(phone, web.url)
        asker = AskingCommand("approvals", "request", "--", "make deploy")
        found = card(phone, asker.id)
        form = {
            "csrf": found.locator("input[name=csrf]").first.input_value(),
            "digest": found.locator("input[name=digest]").first.input_value(),
            "kind": "command",
        }
        code, output = in_terminal("approvals", "deny", asker.id)
        assert code == 0, output
        phone.locator(f"#r-{asker.id}.ended").wait_for(timeout=MS)
        assert asker.result()[0] == 1
        response = phone.context.request.post(
            f"{web.url}/r/{asker.id}/answer",
            form={**form, "decision": "once"},
            headers={"Accept": "application/json", "X-Wisp-Device": credential(phone)},
            fail_on_status_code=False,
        )
        message = response.json()["message"]
        assert response.status == 409 and "already answered 'no'" in message, message
        assert "&#" not in message and "&amp;" not in message


class _Other(http.server.BaseHTTPRequestHandler):
    """Another server on the same host (a dev server, an agent's preview, another user's):
    it keeps every request's path and headers the browser sends it."""

    seen: ClassVar[list[tuple[str, dict[str, str]]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, dict(self.headers.items())))
        body = b"<!doctype html><title>a preview</title><p>hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _replayed(url: str, headers: dict[str, str], data: bytes | None = None) -> tuple[int, str]:
    """*url* asked with *headers* (as another server could, having been sent them): its
    status and the first of its body (an event stream is read no further)."""
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:
            return response.status, response.read1(65536).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


class TestAnotherOrigin:
    def test_a_server_on_another_port_can_neither_list_nor_answer(
        self, web: WebServer, phone: Any, home: Path
    ) -> None:
        """The paired phone opens a page of another server on the same host (another port:
        the same site, and cookies go to every port). Handed every header the browser sent
        it (its cookies included), and every value in them tried as the device's credential
        and as the source of a CSRF token, that server lists nothing (the page, the board,
        the event stream) and answers nothing, even given the request's digest. The control:
        the page itself shows the request and answers it."""
        from wisp.web._app import csrf_token

        pair(phone, web.url, "pocket")
        asker = AskingCommand("approvals", "request", "--", "make release")
        card(phone, asker.id)
        _Other.seen = []
        other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Other)
        thread = threading.Thread(target=other.serve_forever, daemon=True)
        thread.start()
        try:
            phone.goto(f"http://127.0.0.1:{other.server_address[1]}/preview")
        finally:
            other.shutdown()
            other.server_close()
        (sent,) = [headers for path, headers in _Other.seen if path == "/preview"]
        sent = {k: v for k, v in sent.items() if k.lower() not in ("host", "connection")}
        values = [v.strip().partition("=")[2] for v in sent.get("Cookie", "").split(";")]
        values = [v for v in values if v] or [""]
        with Channel.open(home) as channel:
            digest = channel.status(asker.id).request.binding_digest
        for value in values:
            stolen = {**sent, "X-Wisp-Device": value, "Accept": "application/json"}
            for path in ("/", f"/r/{asker.id}", "/board", f"/board?focus={asker.id}", "/events"):
                status, body = _replayed(web.url + path, stolen)
                assert "make release" not in body, (path, status, body)
            form = {"csrf": csrf_token(value), "digest": digest, "kind": "command"}
            data = urllib.parse.urlencode({**form, "decision": "once"}).encode()
            status, body = _replayed(f"{web.url}/r/{asker.id}/answer", stolen, data)
            assert status == 403, body
        with Channel.open(home) as channel:
            assert channel.status(asker.id).state is State.FILED
        phone.goto(f"{web.url}/r/{asker.id}")
        card(phone, asker.id).get_by_role("button", name="Approve once").click()
        code, _out, err = asker.result()
        assert code == 0, err


class TestFromTheNotification:
    def test_a_pushs_link_opens_its_requests_page_on_the_paired_phone(
        self, web: WebServer, phone: Any, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With web.url set, the push a filed request sends (to a real HTTP push target)
        names the request's page; opened on the paired phone, it shows that request, whole,
        ready to answer."""
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        target = PushServer()
        try:
            for key, value in (
                ("notifications.push", json.dumps([f"json://127.0.0.1:{target.port}/"])),
                ("web.url", web.url),
            ):
                code, said = in_terminal("config", "set", key, value)
                assert code == 0, said
            pair(phone, web.url, "pocket")
            asker = AskingCommand("approvals", "request", "--", "make", "ship")
            (pushed,) = target.wait_for(1)
            message = pushed["body"]["message"]
            link = re.search(r"https?://\S+/r/[0-9a-f]+", message)
            assert link is not None and link.group(0).endswith(f"/r/{asker.id}"), message
            phone.goto(link.group(0))
            page = card(phone, asker.id)
            assert "make ship" in page.inner_text()
            page.get_by_role("button", name="Approve once").click()
            code, _out, err = asker.result()
            assert code == 0, err
        finally:
            target.close()


class TestPairingCannotBeLocked:
    def test_wrong_codes_from_anyone_never_refuse_the_persons_link(
        self, web: WebServer, phone: Any
    ) -> None:
        """Each wrong code is refused (400) and pairs nothing, however many come (anyone
        who reaches `/pair` can send them); then the person's own fresh link still pairs
        their phone (it was 429 after ten wrong codes a minute from anywhere)."""
        statuses = []
        for n in range(30):
            request = urllib.request.Request(
                f"{web.url}/pair", data=f"code=guess{n}&name=x".encode(), method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=WAIT_S) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
        assert statuses == [400] * 30
        pair(phone, web.url, "mine")
        assert "Nothing waits for you." in phone.inner_text("body")


class TestEveryMachine:
    """`wisp web --host`: other machines' channels on the one page, each through its relay
    behind ssh (tests/fakessh.py stands in for ssh and sshd, as in the TUI's tests)."""

    @pytest.fixture
    def machines(self, home: Path, tmp_path: Path) -> Iterator[tuple[Channel, Any, WebServer]]:
        """`wisp web --host far --host gone`, each host's relay `ssh -tt HOST wisp relay
        --via web` with its channel in TMP/HOST: far's a channel (and a live asker's lock
        in it), gone's a file, so gone's relay cannot start."""
        home.mkdir(mode=0o700)
        (tmp_path / "gone").write_text("a file, where gone's WISP_HOME should be\n")
        fake_ssh = str(Path(__file__).with_name("fakessh.py"))
        far_relay = [sys.executable, "-m", "wisp", "relay", "--via", "web"]
        template = shlex.join(
            [
                sys.executable,
                fake_ssh,
                "{host}",
                "env",
                f"WISP_HOME={tmp_path}/{{host}}",
                *far_relay,
            ]
        )
        hosts = ("--host", "far", "--host", "gone", "--relay-command", template)
        with (
            Channel.open(tmp_path / "far") as far,
            far.server() as far_lock,
            web_server(home, *hosts) as web,
        ):
            yield far, far_lock, web

    def test_one_page_shows_and_answers_two_machines_and_a_host_down(
        self, machines: tuple[Channel, Any, WebServer], phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """This machine's request and far's are on the one page, each naming its host, and
        far's link opens it first; each answer lands in its own host's channel only (far's
        through its relay, audited there via web), and the other is untouched until
        answered itself. `gone`'s relay cannot open its channel: the page says gone is
        down, and why."""
        far, far_lock, web = machines
        there = command(far_lock, "make deploy-far")
        far.file(there)
        pair(phone, web.url, "pocket")
        here = AskingCommand("approvals", "request", "--", "make deploy-here")
        far_card, here_card = card(phone, there.id), card(phone, here.id)
        assert "make deploy-far" in far_card.inner_text()
        assert re.search(r"host\s+far", far_card.inner_text()), far_card.inner_text()
        assert re.search(r"host\s+local", here_card.inner_text()), here_card.inner_text()
        down = phone.locator("#hosts-down")
        down.wait_for(timeout=MS)
        assert "gone down" in down.inner_text() and "not a directory" in down.inner_text()
        shot(phone, "hosts", tmp_path)
        # A push's link from far (its web.url this page) opens far's request first.
        phone.goto(f"{web.url}/r/{there.id}")
        first = phone.locator("#cards .card").first
        first.wait_for(timeout=MS)
        assert first.get_attribute("id") == f"r-{there.id}"
        assert far_card.locator("a").first.get_attribute("href") == f"/r/{there.id}?host=far"

        far_card.get_by_role("button", name="Approve once").click()
        far_card.locator(".said").filter(has_text="Approved once on far").wait_for(timeout=MS)
        ended = phone.locator(f"#r-{there.id}.ended")
        ended.wait_for(timeout=MS)
        assert "On far: approved once from this page." in ended.inner_text()
        answer = wait_until(lambda: far.status(there.id).answer, what="far's answer")
        assert (answer.decision, answer.via) == ("once", "web")
        with Channel.open(home) as local:
            assert local.status(here.id).state is State.FILED  # the control: untouched
        records = audit_records(tmp_path / "far")
        (answered,) = [r for r in records if r["event"] == "approval.answered"]
        assert answered["via"] == "web"

        here_card.get_by_role("button", name="Approve once").click()
        code, _out, err = here.result()
        assert code == 0, err
        assert far.status(there.id).answer == answer

    def test_far_answers_pass_the_same_checks_as_local_ones(
        self, machines: tuple[Channel, Any, WebServer], phone: Any
    ) -> None:
        """A far request's answer needs what a local one does: without the credential, or
        the CSRF token, or once the device is revoked, it is refused (403) and nothing
        reaches far; with them all (the control, on another far request) it is answered."""
        far, far_lock, web = machines
        shown, control = command(far_lock, "make release"), command(far_lock, "make test")
        for request in (shown, control):
            far.file(request)
        pair(phone, web.url, "old-phone")
        forms = {}
        for request in (shown, control):
            found = card(phone, request.id)
            forms[request.id] = {
                "csrf": found.locator("input[name=csrf]").first.input_value(),
                "digest": found.locator("input[name=digest]").first.input_value(),
                "host": found.locator("input[name=host]").first.input_value(),
                "kind": "command",
                "decision": "once",
            }
        assert forms[shown.id]["host"] == "far"
        held = credential(phone)
        url = f"{web.url}/r/{{}}/answer"
        form = forms[shown.id]
        assert post(phone, url.format(shown.id), form) == 403
        assert post(phone, url.format(shown.id), {**form, "csrf": "0" * 64}, as_device=held) == 403
        assert (
            post(phone, url.format(shown.id), {**form, "host": "elsewhere"}, as_device=held) == 404
        )
        assert post(phone, url.format(control.id), forms[control.id], as_device=held) == 200
        assert far.status(control.id).answer is not None
        code, output = in_terminal("web", "revoke", "old-phone")
        assert code == 0, output
        assert post(phone, url.format(shown.id), form, as_device=held) == 403
        assert far.status(shown.id).state is State.FILED

    def test_a_host_whose_relay_ends_is_shown_down_live(
        self, machines: tuple[Channel, Any, WebServer], phone: Any
    ) -> None:
        """far's ssh killed under an open page (as a dropped connection ends it): the page
        says far is down, live, and far's request leaves it (its answer refused: 502, far
        down, nothing sent); this machine's stays."""
        far, far_lock, web = machines
        there = command(far_lock, "make deploy-far")
        far.file(there)
        pair(phone, web.url)
        here = AskingCommand("approvals", "request", "--", "make deploy-here")
        found = card(phone, there.id)
        form = {
            name: found.locator(f"input[name={name}]").first.input_value()
            for name in ("csrf", "digest", "host", "kind")
        }
        card(phone, here.id)
        assert "far down" not in phone.inner_text("body")  # the control: far is up
        (ssh,) = [p for p in _children(web.process.pid) if " far " in _cmdline(p)]
        os.kill(ssh, signal.SIGKILL)
        phone.locator("#hosts-down").filter(has_text="far down").wait_for(timeout=MS)
        assert "killed by signal 9" in phone.inner_text("#hosts-down")
        phone.locator(f"#r-{there.id}").wait_for(state="detached", timeout=MS)
        assert phone.locator(f"#r-{here.id}").count() == 1
        url = f"{web.url}/r/{there.id}/answer"
        refused = phone.context.request.post(
            url,
            form={**form, "decision": "once"},
            headers={"X-Wisp-Device": credential(phone), "Accept": "application/json"},
            fail_on_status_code=False,
        )
        assert refused.status == 502 and "far is down" in refused.json()["message"]
        assert far.status(there.id).state is State.FILED
        in_terminal("approvals", "deny", here.id)
        here.result()

    def test_closing_its_terminal_ends_every_hosts_relay(
        self, machines: tuple[Channel, Any, WebServer]
    ) -> None:
        """SIGHUP (the terminal `wisp web` runs in closed): it stops (exit 0), and far's
        ssh and the relay behind it end with it, none left running under nobody."""
        _far, _lock, web = machines
        wait_until(lambda: _children(web.process.pid), what="far's ssh")
        (ssh,) = [p for p in _children(web.process.pid) if " far " in _cmdline(p)]
        far_relay = wait_until(lambda: _children(ssh), what="far's relay")
        web.process.send_signal(signal.SIGHUP)
        assert web.process.wait(timeout=WAIT_S) == 0
        left = wait_until(
            lambda: not any(Path(f"/proc/{p}").exists() for p in (ssh, *far_relay)),
            what="far's ssh and relay ended",
        )
        assert left

    def test_local_as_a_host_is_refused(self, home: Path) -> None:
        """`--host local` names this machine's own channel, always shown: refused before
        anything runs (exit 2), saying what to do."""
        done = subprocess.run(
            wisp_command("web", "--listen", "127.0.0.1:0", "--host", "local"),
            capture_output=True,
            text=True,
            env={**os.environ, "WISP_HOME": str(home)},
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        assert "always shows: leave it out" in done.stderr and "Traceback" not in done.stderr


def _children(pid: int) -> list[int]:
    """The processes whose parent is *pid*."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
