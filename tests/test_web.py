"""`wisp web` in a real browser: the distribution's headless Chromium, driven by Playwright, at
a phone's viewport (390x844), against a real `wisp web` process, with requests filed by real
asker processes and answers given from real terminals.

Set WISP_WEB_SCREENSHOTS=DIR to keep the phone's screenshots (docs/web.md's come so).
"""

from __future__ import annotations

import html
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
    claude_hook_call,
    command,
    fact,
    in_terminal,
    tool,
    wait_until,
    wisp_command,
)
from pushserver import PushServer
from webproc import CHROMIUM, PHONE, WebServer, chromium_missing, pair, web_server

from pending import Channel, Kind, State, ToolBinding, make_request
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
        outcome = phone.locator(f"#r-{asker.id}.ended .outcome")
        outcome.filter(has_text="Approved once").wait_for(timeout=MS)
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
        assert found.locator("form.answer").count() == 0
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
        # One line per outcome: the ended card's, which replaces what the page said.
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


def _zoned_phone(browser: Any, zone: str) -> Any:
    """A phone in the time zone *zone* (none a test machine's is likely to be in)."""
    context = browser.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, timezone_id=zone
    )
    return context.new_page()


def _in_view(page: Any, selector: str, needle: str) -> dict[str, float]:
    """Where the text *needle* (in the element *selector*) is drawn, and the viewport's width."""
    return dict(
        page.evaluate(
            """([selector, needle]) => {
              const root = document.querySelector(selector);
              const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
              let node;
              while ((node = walker.nextNode())) {
                const at = node.data.indexOf(needle);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + needle.length);
                const box = range.getBoundingClientRect();
                return {left: box.left, right: box.right, width: innerWidth,
                        scroll: root.scrollWidth, client: root.clientWidth};
              }
              return {left: -1, right: -1, width: innerWidth, scroll: 0, client: 0};
            }""",
            [selector, needle],
        )
    )


def _seconds(left: str) -> int:
    """ "expires in 9m 41s" as seconds."""
    minutes, seconds = re.findall(r"\d+", left)
    return int(minutes) * 60 + int(seconds)


class TestThePageKeepsTime:
    def test_the_title_counts_what_waits(self, web: WebServer, phone: Any, home: Path) -> None:
        """The tab's title says how many wait, `(N) wisp`, live: nothing waiting, `wisp`;
        two filed, `(2) wisp`; one answered in a terminal, `(1) wisp`."""
        pair(phone, web.url)
        assert phone.title() == "wisp"
        with Channel.open(home) as channel, channel.server() as lock:
            first, second = command(lock, text="make one"), command(lock, text="make two")
            channel.file(first)
            channel.file(second)
            card(phone, second.id)
            wait_until(lambda: phone.title() == "(2) wisp", what="the title (2) wisp")
            code, output = in_terminal("approvals", "approve", first.id)
            assert code == 0, output
            wait_until(lambda: phone.title() == "(1) wisp", what="the title (1) wisp")
            phone.reload()
            card(phone, second.id)
            assert phone.title() == "(1) wisp"

    def test_the_expiry_counts_down_on_the_page(
        self, web: WebServer, phone: Any, home: Path
    ) -> None:
        """A request that expires in 10 minutes says so to the second, and counts down on
        the page itself (no event from the server); one without a deadline says none."""
        pair(phone, web.url)
        with Channel.open(home) as channel, channel.server() as lock:
            timed = command(lock, text="make timed", expires_in_s=600)
            plain = command(lock, text="make plain")
            channel.file(timed)
            channel.file(plain)
            left = card(phone, timed.id).locator("time.left")
            first = left.inner_text()
            assert re.fullmatch(r"expires in (9m [0-5]\d|10m 00)s", first), first
            wait_until(lambda: left.inner_text() != first, what="the countdown to move")
            later = left.inner_text()
            assert re.fullmatch(r"expires in 9m [0-5]\ds", later), later
            assert _seconds(later) < _seconds(first), (first, later)
            assert card(phone, plain.id).locator("time.left").count() == 0

    def test_times_are_shown_in_the_phones_zone(
        self, web: WebServer, browser: Any, home: Path
    ) -> None:
        """When a request was filed, and when it was answered, are shown in the phone's own
        time zone (here Kathmandu, UTC+05:45), not the server's."""
        from zoneinfo import ZoneInfo

        zone = ZoneInfo("Asia/Kathmandu")
        phone = _zoned_phone(browser, "Asia/Kathmandu")
        try:
            pair(phone, web.url)
            with Channel.open(home) as channel, channel.server() as lock:
                filed = command(lock, text="make zoned")
                channel.file(filed)
                shown = card(phone, filed.id).locator("time.clock").first.inner_text()
                assert shown == f"{filed.filed_at.astimezone(zone):%H:%M:%S}", shown
                code, output = in_terminal("approvals", "approve", filed.id)
                assert code == 0, output
                ended = phone.locator(f"#r-{filed.id}.ended")
                ended.wait_for(timeout=MS)
                answer = channel.status(filed.id).answer
                assert answer is not None
                at = ended.locator("time.clock").inner_text()
                assert at == f"{answer.answered_at.astimezone(zone):%H:%M:%S}", at
                assert "from a terminal" in ended.inner_text()
        finally:
            phone.context.close()

    def test_a_long_lines_change_is_on_the_screen(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """An edit whose change is at the end of a 300-character line: the diff wraps, so
        the changed text is drawn inside the phone's screen (it was off to the right, out of
        sight, while the buttons that approve it were not). The control: the line's start
        is on the screen too."""
        pair(phone, web.url)
        line = "total = " + " + ".join(f"part{n}" for n in range(40))
        with Channel.open(home) as channel, channel.server() as lock:
            edit = make_request(
                kind=Kind.TOOL,
                binding=ToolBinding(
                    tool="Edit",
                    input={
                        "file_path": "/srv/shop/a.py",
                        "old_string": line + " + OLDTAIL",
                        "new_string": line + " + NEWTAIL",
                    },
                    cwd="/srv/shop",
                    thread="c1",
                ),
                title="wisp: allow a tool call?",
                body="Edit /srv/shop/a.py",
                server=lock.record(client="test", thread="c1", entry_point="hook"),
            )
            channel.file(edit)
            card(phone, edit.id).locator("pre.diff .add").wait_for(timeout=MS)
            selector = f"#r-{edit.id} pre.diff"
            start = _in_view(phone, selector, "total = part0")
            assert start["left"] >= 0 and start["right"] <= start["width"], start
            tail = _in_view(phone, selector, "NEWTAIL")
            assert tail["left"] >= 0 and tail["right"] <= tail["width"], tail
            assert tail["scroll"] <= tail["client"], tail
            shot(phone, "long-diff", tmp_path)


class TestTheCardsSayItOnce:
    def test_an_answer_given_here_is_one_line_naming_the_device(
        self, web: WebServer, phone: Any
    ) -> None:
        """Approved on the page: the ended card says it once ("Approved once by USER on the
        paired device pocket, at …"), not once as the page's own note and again as how it
        ended."""
        pair(phone, web.url, "pocket")
        asker = AskingCommand("approvals", "request", "--", "make once")
        card(phone, asker.id).get_by_role("button", name="Approve once").click()
        assert asker.result()[0] == 0
        ended = phone.locator(f"#r-{asker.id}.ended")
        ended.locator(".outcome").filter(has_text="on the paired device pocket").wait_for(
            timeout=MS
        )
        said = ended.inner_text()
        assert said.count("Approved once") == 1, said
        assert ended.locator(".said").count() == 0, said

    def test_an_ended_card_can_be_dismissed(self, web: WebServer, phone: Any, home: Path) -> None:
        """A card answered elsewhere stays to say by whom, until dismissed; then it is gone,
        and the card still waiting stays."""
        pair(phone, web.url)
        with Channel.open(home) as channel, channel.server() as lock:
            done, kept = command(lock, text="make done"), command(lock, text="make kept")
            channel.file(done)
            channel.file(kept)
            card(phone, kept.id)
            code, output = in_terminal("approvals", "approve", done.id)
            assert code == 0, output
            ended = phone.locator(f"#r-{done.id}.ended")
            ended.wait_for(timeout=MS)
            ended.get_by_role("button", name="Dismiss").click()
            ended.wait_for(state="detached", timeout=MS)
            assert phone.locator(f"#r-{kept.id}").count() == 1
            assert phone.locator("#cards .card").count() == 1


class TestLongAndQuotedCommands:
    def test_a_long_command_is_clipped_and_approved_only_once_seen_to_its_end(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """A 30,000-character command is a card of about one screen, with "Show all": its
        approvals are disabled (Deny is not) until the whole text was shown and its end was
        on the screen; then Approve once answers it. The control: a short command's card
        can be approved at once."""
        pair(phone, web.url)
        long_text = "echo " + " ".join(f"w{n:05d}" for n in range(4300)) + " THE-END"
        assert len(long_text) >= 30000
        with Channel.open(home) as channel, channel.server() as lock:
            short, long = command(lock, text="make short"), command(lock, text=long_text)
            channel.file(short)
            channel.file(long)
            found = card(phone, long.id)
            assert card(phone, short.id).get_by_role("button", name="Approve once").is_enabled()
            box = found.bounding_box()
            assert box is not None and box["height"] < 2 * PHONE["height"], box
            approve = found.get_by_role("button", name="Approve once")
            assert approve.is_disabled()
            assert found.locator("summary.deny").is_visible()
            shot(phone, "long-command", tmp_path)
            found.get_by_role("button", name=re.compile("Show all")).click()
            assert approve.is_disabled(), "enabled before the end was on the screen"
            found.locator(".end").scroll_into_view_if_needed()
            wait_until(approve.is_enabled, what="Approve once enabled at the end")
            approve.click()
            wait_until(lambda: channel.status(long.id).state is not State.FILED, what="the answer")
            answer = channel.status(long.id).answer
            assert answer is not None and answer.decision == "once"

    def test_a_quoted_commands_arguments_are_shown_one_per_line(
        self, web: WebServer, phone: Any
    ) -> None:
        """A command asked with its words apart is shown as the line that runs (shell-quoted,
        `'"'"'` and all) and beside it its arguments, one per line, unquoted. The control: a
        command whose quoting changes nothing shows no list."""
        pair(phone, web.url)
        plain = AskingCommand("approvals", "request", "--", "make", "plain")
        quoted = AskingCommand("approvals", "request", "--", "sh", "-c", "echo 'hi there'")
        assert card(phone, plain.id).locator("ol.argv").count() == 0
        found = card(phone, quoted.id)
        assert "'\"'\"'" in found.locator("pre").first.inner_text()
        items = found.locator("ol.argv li").all_inner_texts()
        assert items == ["sh", "-c", "echo 'hi there'"], items
        for asker in (plain, quoted):
            in_terminal("approvals", "deny", asker.id)
            asker.result()


# Headless Chromium has no vibrator: the page's calls to it are recorded where a test reads
# them (the browser's own navigator.vibrate, wrapped before the page's script runs).
VIBRATIONS = """
window.wispVibrations = [];
const real = navigator.vibrate ? navigator.vibrate.bind(navigator) : null;
navigator.vibrate = function (pattern) {
  window.wispVibrations.push(pattern);
  return real ? real(pattern) : false;
};
"""


class TestArrivals:
    def test_a_request_arriving_in_an_open_page_vibrates_and_is_noticed(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """A request filed while the page is open makes the phone vibrate and puts a notice
        at the foot of the screen naming it; tapping the notice brings its card. The control:
        what already waited when the page opened does neither."""
        phone.add_init_script(VIBRATIONS)
        with Channel.open(home) as channel, channel.server() as lock:
            before = command(lock, text="make before")
            channel.file(before)
            pair(phone, web.url)
            card(phone, before.id)
            assert phone.evaluate("window.wispVibrations") == []
            assert phone.locator("#arrived").is_hidden()
            fresh = command(lock, text="make arrived")
            channel.file(fresh)
            card(phone, fresh.id)
            notice = phone.locator("#arrived")
            notice.wait_for(state="visible", timeout=MS)
            assert "make arrived" in notice.inner_text()
            assert len(phone.evaluate("window.wispVibrations")) == 1
            shot(phone, "arrived", tmp_path)
            notice.click()
            notice.wait_for(state="hidden", timeout=MS)


class TestDecidedWithoutAsking:
    def test_a_call_a_rule_allowed_is_listed_live_collapsed(
        self, web: WebServer, phone: Any, home: Path, tmp_path: Path
    ) -> None:
        """A call a real `wisp hook claude-code` allowed by rule while the page is open joins
        the collapsed "Decided without asking" list, live, without a vibration or a notice
        (the control: a request filed meanwhile gets both, and its card); opened, the list
        says the call in words, and it stays open as the next call joins it."""
        phone.add_init_script(VIBRATIONS)
        project = tmp_path / "project"
        (project / ".git").mkdir(parents=True)
        pair(phone, web.url)
        assert phone.locator("#decided").count() == 0
        assert claude_hook_call(project, "git status") == "allow"
        listed = phone.locator("#decided")
        listed.wait_for(timeout=MS)
        assert "Decided without asking (1)" in listed.locator("summary").inner_text()
        assert phone.locator("#decided li").first.is_hidden()  # collapsed
        assert (
            phone.evaluate("window.wispVibrations") == [] and phone.locator("#arrived").is_hidden()
        )
        with Channel.open(home) as channel, channel.server() as lock:
            fresh = command(lock, text="make arrived")
            channel.file(fresh)
            card(phone, fresh.id)
            phone.locator("#arrived").wait_for(state="visible", timeout=MS)
        listed.locator("summary").click()
        first = phone.locator("#decided li").first
        first.wait_for(state="visible", timeout=MS)
        assert "allowed by rule read-only: git status — claude-code" in first.inner_text()
        assert claude_hook_call(project, "ls -la") == "allow"
        phone.locator("#decided li").nth(1).wait_for(timeout=MS)  # the list anew
        assert phone.locator("#decided").get_attribute("open") is not None
        assert "ls -la" in phone.locator("#decided li").first.inner_text()  # newest first
        shot(phone, "decided", tmp_path)


def _first_event(url: str, held: str) -> bytes:
    """The event stream's first event (the board as it is), as the page receives it."""
    request = urllib.request.Request(url, headers={"X-Wisp-Device": held})
    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
        got = b""
        while b"\n\n" not in got:
            chunk = response.read1(65536)
            assert chunk, got[-200:]
            got += chunk
        return got


# The "Show more" button tapped at once if the page still has it, nothing if not: a check
# and a tap in one step of the page's, with no room for the page to take the button between.
TAP_MORE = "() => { const more = document.getElementById('more'); if (more) more.click(); }"


class TestABigBoard:
    WAITING = 260

    def test_a_big_board_loads_in_pages(self, home: Path, phone: Any) -> None:
        """260 waiting: the page is sent the first 50 cards (in `/board` and the event
        stream's first event alike), not all of them: each is under a quarter of the whole
        board's bytes (measured here by fetching every page). The header counts all 260;
        scrolling to the end fetches the next page by itself, "Show more" the ones after,
        until every request is on the page once."""
        from wisp.web._pages import PAGE_CARDS

        home.mkdir(mode=0o700, exist_ok=True)
        with Channel.open(home) as channel, channel.server() as lock:
            ids = []
            for n in range(self.WAITING):
                request = command(lock, text=f"make deploy-{n}")
                channel.file(request)
                ids.append(request.id)
            with web_server(home) as web:
                pair(phone, web.url)
                held = credential(phone)
                first = phone.context.request.get(
                    f"{web.url}/board", headers={"X-Wisp-Device": held}
                )
                assert first.status == 200
                first_bytes = len(first.body())
                event_bytes = len(_first_event(f"{web.url}/events", held))
                whole, after, pages = 0, "", 0
                data = first.json()
                more = data["html"]
                while True:
                    found = re.search(r'data-after="([^"]+)"', more)
                    if found is None:
                        break
                    after = html.unescape(found.group(1))
                    got = phone.context.request.get(
                        f"{web.url}/board?after={urllib.parse.quote(after)}",
                        headers={"X-Wisp-Device": held},
                    )
                    whole += len(got.body())
                    pages += 1
                    more = got.json()["more"]
                whole += first_bytes
                assert pages == -(-self.WAITING // PAGE_CARDS) - 1
                assert first_bytes < whole / 4 and event_bytes < whole / 4, (
                    first_bytes,
                    event_bytes,
                    whole,
                )
                assert phone.locator("#count").inner_text() == f"{self.WAITING} waiting"
                shown = phone.locator("#cards .card")
                assert shown.count() == PAGE_CARDS
                phone.locator("#more").scroll_into_view_if_needed()
                wait_until(lambda: shown.count() >= 2 * PAGE_CARDS, what="the next page")
                button = phone.locator("#more")
                while button.count():
                    before = shown.count()
                    # Tapped in the page, if it is still there: scrolled into view, the page
                    # fetches the next page by itself and may take the button away first (a
                    # locator's click then waited its 30 s for a button that never came back).
                    phone.evaluate(TAP_MORE)
                    wait_until(
                        lambda: shown.count() > before or not button.count(),  # noqa: B023
                        what="the page after",
                    )
                wait_until(lambda: shown.count() == self.WAITING, what="every card")
                on_page = [
                    i.removeprefix("r-") for i in shown.evaluate_all("c => c.map(e => e.id)")
                ]
                assert sorted(on_page) == sorted(ids)
