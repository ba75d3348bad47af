"""The push route, sent through Apprise to a real HTTP server on 127.0.0.1 (Apprise's
`json://` and `ntfy://` URLs pointed at it): what arrives, what is audited, what is never
shown, and that a server that never answers delays nothing. No test reaches any address
outside this machine."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import audit_records, in_terminal, run_wisp, wait_until, wisp_command
from pushserver import PushServer
from test_cli_imports import found, loaded

from pending.testing import FakeClock
from wisp.routes.notify import Notifier, RateLimit
from wisp.routes.push import PUSH_TIMEOUT_S
from wisp.stores.pushurls import redact, shown

SECRET = "s3cret-topic-4f9a"  # what must never be shown: a topic, a token
HOSTILE = "a\x1bb\x07c\x9cd;e\x00f\x7fg\u009bh" + "x" * 10_000


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is sent through a proxy: 127.0.0.1 is reached directly."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("TMUX", raising=False)  # no route here but what a test sets up


@pytest.fixture
def push_server() -> Iterator[PushServer]:
    server = PushServer()
    yield server
    server.close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that takes connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


def set_push(*urls: str) -> None:
    # A change to where pushes go is taken only from a terminal.
    code, output = in_terminal("config", "set", "notifications.push", json.dumps(list(urls)))
    assert code == 0, output


def notes(home: Path) -> list[dict[str, Any]]:
    return [r for r in audit_records(home) if r["event"] == "notification"]


def log_text(home: Path) -> str:
    return (home / "logs" / "audit.jsonl").read_text()


def notifier(home: Path, urls: list[str], **kw: Any) -> Notifier:
    settings = {"notifications.push": urls, **kw.pop("settings", {})}
    kw.setdefault("environ", {})
    kw.setdefault("tty_path", "/nonexistent/tty")
    # A push waited for here is given a minute, not PUSH_TIMEOUT_S: the local server answers
    # at once, but Apprise loads its plugin and requests on the first send, which took over
    # 5 s on this 2-core machine at load 12 (the product's limit is tested on its own below).
    kw.setdefault("push_timeout_s", 60.0)
    return Notifier(home, settings=settings, limit=RateLimit(FakeClock()), platform="linux", **kw)


class TestRedaction:
    @pytest.mark.parametrize(
        ("url", "shown"),
        [
            (f"ntfy://127.0.0.1:8080/{SECRET}", "ntfy://127.0.0.1:8080"),
            (f"ntfy://{SECRET}", "ntfy://…"),
            (f"ntfys://ntfy.example.org/{SECRET}?token=tk_{SECRET}", "ntfys://ntfy.example.org"),
            (f"tgram://123456789:{SECRET}/987", "tgram://…"),
            (f"pover://user@{SECRET}", "pover://…"),
            (f"mailto://me:{SECRET}@mail.example.com", "mailto://mail.example.com"),
            (f"json://[::1]:9/{SECRET}", "json://[::1]:9"),
            (f"JSON://localhost/{SECRET}", "json://localhost"),
            (SECRET, "…"),
        ],
    )
    def test_scheme_and_network_host_only(self, url: str, shown: str) -> None:
        """Only the scheme and a host that is a network address (with its port) are shown:
        a host that is really a topic or a token, users, passwords, paths and queries
        never are."""
        assert redact(url) == shown
        assert SECRET not in redact(url)

    def test_a_setting_is_shown_url_by_url(self) -> None:
        """Text with several URLs (white space or commas) and lists are both redacted."""
        assert shown(f"ntfy://{SECRET}, json://10.0.0.5:80/{SECRET}") == [
            "ntfy://…",
            "json://10.0.0.5:80",
        ]
        assert shown([f"ntfy://a.example/{SECRET}"]) == ["ntfy://a.example"]


class TestSetting:
    def test_set_and_shown_never_reveal_the_secret(self, home: Path) -> None:
        """`wisp config set`, `wisp config`, `--json` and `get` show scheme and host only;
        config.json (0600) holds the URL."""
        url = f"ntfy://127.0.0.1:9/{SECRET}"
        code, output = in_terminal("config", "set", "notifications.push", url)
        assert code == 0
        assert output.strip() == 'notifications.push = ["ntfy://127.0.0.1:9"]'
        for args in (("config",), ("config", "--json"), ("config", "get", "notifications.push")):
            done = run_wisp(*args)
            assert done.returncode == 0 and "ntfy://127.0.0.1:9" in done.stdout
            assert SECRET not in done.stdout + done.stderr
        assert json.loads(run_wisp("config", "get", "notifications.push").stdout) == [
            "ntfy://127.0.0.1:9"
        ]
        config = home / "config.json"
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        assert json.loads(config.read_text())["notifications"]["push"] == url

    @pytest.mark.parametrize("value", [f"no-scheme-{SECRET}", f'["ntfy://a", 5, "{SECRET}"]'])
    def test_a_bad_value_is_refused_without_being_echoed(self, home: Path, value: str) -> None:
        """A value that is not Apprise URLs is refused (exit 1, nothing written), and not
        repeated: a token pasted wrong is still a token."""
        out = run_wisp("config", "set", "notifications.push", value)
        assert out.returncode == 1
        assert "Nothing was written" in out.stderr and SECRET not in out.stderr + out.stdout
        assert not (home / "config.json").exists()

    def test_a_bad_value_in_the_file_is_not_echoed(self, home: Path) -> None:
        """config.json holding a push value that cannot be used: the doctor names the key
        and the fix, and not the value."""
        home.mkdir(mode=0o700)
        (home / "config.json").write_text(json.dumps({"notifications": {"push": [SECRET]}}))
        os.chmod(home / "config.json", 0o600)
        out = run_wisp("doctor")
        assert out.returncode == 1 and "notifications.push" in out.stdout
        assert SECRET not in out.stdout + out.stderr

    def test_push_when_takes_always_or_unseen(self, home: Path) -> None:
        """`notifications.pushWhen` is `always` (the default) or `unseen`."""
        assert run_wisp("config", "get", "notifications.pushWhen").stdout.strip() == '"always"'
        assert in_terminal("config", "set", "notifications.pushWhen", "unseen")[0] == 0
        assert run_wisp("config", "set", "notifications.pushWhen", "sometimes").returncode == 1
        assert run_wisp("config", "get", "notifications.pushWhen").stdout.strip() == '"unseen"'


class TestPushRoute:
    def test_the_probe_reaches_json_and_ntfy(self, home: Path, push_server: PushServer) -> None:
        """`wisp notify --route push "probe"` sends to every URL (Apprise's generic JSON and
        a self-hosted ntfy), waits for them, says where it posted; the audit names the
        targets by scheme and host, and the topic appears nowhere."""
        port = push_server.port
        set_push(f"json://127.0.0.1:{port}/hook/{SECRET}", f"ntfy://127.0.0.1:{port}/{SECRET}")
        out = run_wisp("notify", "--route", "push", "probe")
        assert out.returncode == 0, out.stdout + out.stderr
        targets = f"json://127.0.0.1:{port}, ntfy://127.0.0.1:{port}"
        assert out.stdout.strip() == f"notification posted via push (posted to {targets})"
        bodies = {r["path"]: r["body"] for r in push_server.wait_for(2)}
        host = socket.gethostname()
        assert bodies[f"/hook/{SECRET}"]["title"] == "wisp"
        assert bodies[f"/hook/{SECRET}"]["message"] == f"probe\nFrom {host}."
        assert bodies["/"] == {"topic": SECRET, "title": "wisp", "message": f"probe\nFrom {host}."}
        (note,) = notes(home)
        assert (note["route"], note["outcome"]) == ("push", "posted")
        assert note["targets"] == [
            {"target": f"json://127.0.0.1:{port}", "outcome": "posted"},
            {"target": f"ntfy://127.0.0.1:{port}", "outcome": "posted"},
        ]
        assert SECRET not in log_text(home) + out.stdout + out.stderr

    def test_filing_pushes_the_host_and_the_answer_command(
        self, home: Path, push_server: PushServer
    ) -> None:
        """Filing a fact with a local ntfy URL set delivers one message holding the host
        name and the commands that answer it; the audit names `push` and the scheme, never
        the topic."""
        set_push(f"ntfy://127.0.0.1:{push_server.port}/{SECRET}")
        out = run_wisp("facts", "request", "release", "codename", "BLUE HERON")
        assert out.returncode == 0
        request_id = out.stdout.strip()
        (message,) = push_server.wait_for(1)
        text = message["body"]["message"]
        assert message["body"]["title"] == "wisp: keep as a permanent fact?"
        assert f"release codename = BLUE HERON — wisp facts keep {request_id}" in text
        assert text.endswith(
            f"Answer on {socket.gethostname()}: wisp facts keep {request_id} "
            f"or wisp facts drop {request_id}"
        )
        local, push = wait_until(lambda: notes(home)[1:] and notes(home), 30, "the push's record")
        sending = f"sending to ntfy://127.0.0.1:{push_server.port} in the background"
        assert (local["route"], local["detail"]) == ("push", sending)
        assert (push["route"], push["outcome"], push["id"]) == ("push", "posted", request_id)
        assert push["targets"] == [
            {"target": f"ntfy://127.0.0.1:{push_server.port}", "outcome": "posted"}
        ]
        assert SECRET not in log_text(home) + out.stderr
        assert len(push_server.received) == 1

    def test_a_content_free_push_carries_nothing_of_the_request(
        self, home: Path, push_server: PushServer
    ) -> None:
        """`notifications.pushContent none`: a request's push says only that a request
        waits on this host, and its link — never the command, the tool's input or the
        folder. The control: the same request with `full` carries the command."""
        set_push(f"json://127.0.0.1:{push_server.port}/hook")
        assert run_wisp("config", "set", "web.url", "https://phone.example").returncode != 0
        code, said = in_terminal("config", "set", "web.url", "https://phone.example")
        assert code == 0, said
        for content, count in (("full", 1), ("none", 2)):
            if content == "none":
                done = run_wisp("config", "set", "notifications.pushContent", "none")
                assert done.returncode == 0, done.stderr
            asked = subprocess.Popen(
                wisp_command("approvals", "request", "--timeout", "30", "--", "make", "SECRET-1"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=home,
            )
            try:
                message = push_server.wait_for(count)[-1]["body"]
            finally:
                asked.kill()
                asked.wait(30)
            text = json.dumps(message)
            if content == "full":
                assert "SECRET-1" in text and str(home) in text, text
                continue
            assert "SECRET-1" not in text and str(home) not in text, text
            assert f"A request waits on {socket.gethostname()}" in message["message"], text
            assert "https://phone.example/r/" in message["message"], text

    def test_a_server_that_never_answers_delays_nothing(self, home: Path, silent_port: int) -> None:
        """A push server that takes the connection and never answers: the request is filed
        and its ID printed at once, before the push gives up, and the command ends; the
        push is audited failed about 5 s after the filing."""
        set_push(f"ntfy://127.0.0.1:{silent_port}/{SECRET}")
        child = subprocess.Popen(
            wisp_command("facts", "request", "a", "b", "c"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        try:
            assert child.stdout is not None
            request_id = child.stdout.readline().decode().strip()
            assert (home / "pending" / f"{request_id}.fact.json").exists()
            (sending,) = notes(home)  # no push outcome yet: only the notice that it is sent
            assert (sending["route"], sending["detail"]) == (
                "push",
                f"sending to ntfy://127.0.0.1:{silent_port} in the background",
            )
            assert child.wait(timeout=60) == 0
        finally:
            child.kill()
            child.wait()
        local, push = wait_until(lambda: notes(home)[1:] and notes(home), 60, "the push's record")
        assert (push["route"], push["outcome"]) == ("push", "failed")
        ((target,),) = [push["targets"]]
        assert (target["target"], target["outcome"]) == (
            f"ntfy://127.0.0.1:{silent_port}",
            "failed",
        )
        # Given up on at PUSH_TIMEOUT_S, or a little sooner by Apprise's own read timeout.
        assert target["reason"] in (
            f"did not answer within {PUSH_TIMEOUT_S:g} s",
            "not delivered (the service refused it or could not be reached)",
        )
        waited = (
            datetime.fromisoformat(push["ts"]) - datetime.fromisoformat(local["ts"])
        ).total_seconds()
        assert PUSH_TIMEOUT_S - 1.5 <= waited < PUSH_TIMEOUT_S + 10

    def test_posting_returns_at_once(self, home: Path, silent_port: int) -> None:
        """In a process that files and waits (an asker), posting with a silent push
        server returns at once; the outcome is audited later, from the push's thread."""
        n = notifier(home, [f"json://127.0.0.1:{silent_port}/{SECRET}"])
        started = time.monotonic()
        result = n.post("t", "m")
        assert time.monotonic() - started < 1.0
        assert (result.posted, result.route) == (True, "push")
        assert str(result) == (
            f"notification posted via push (sending to json://127.0.0.1:{silent_port} "
            "in the background)"
        )
        (outcome,) = wait_until(lambda: [r for r in notes(home) if "targets" in r], 60)
        assert outcome["outcome"] == "failed"

    def test_always_and_unseen(self, home: Path, push_server: PushServer) -> None:
        """pushWhen `always` pushes although a route here posted; `unseen` then does not,
        saying why, and pushes when no route here did."""
        master, slave = os.openpty()
        try:
            here = {"environ": {"TERM_PROGRAM": "ghostty"}, "tty_path": os.ttyname(slave)}
            url = f"json://127.0.0.1:{push_server.port}"
            always = notifier(home, [url], background_push=False, **here).post("t", "one")
            assert always.route == "terminal" and always.push == f"posted to {url}"
            unseen = notifier(
                home,
                [url],
                background_push=False,
                settings={"notifications.pushWhen": "unseen"},
                **here,
            ).post("t", "two")
            assert unseen.route == "terminal" and unseen.push is None
            assert "push: notifications.pushWhen is unseen, and terminal posted it" in (
                unseen.skipped
            )
            away = notifier(
                home, [url], background_push=False, settings={"notifications.pushWhen": "unseen"}
            ).post("t", "three")
            assert away.route == "push"
        finally:
            os.close(master)
            os.close(slave)
        messages = [r["body"]["message"].split("\n")[0] for r in push_server.wait_for(2)]
        assert messages == ["one", "three"]

    def test_the_rate_limit_and_bounds_cover_push(
        self, home: Path, push_server: PushServer
    ) -> None:
        """The per-minute limit counts a push as any notification, and what is pushed is
        cleaned and cut as every route's text is."""
        n = notifier(
            home,
            [f"json://127.0.0.1:{push_server.port}"],
            background_push=False,
            settings={"notifications.perMinute": 1},
        )
        assert n.post(HOSTILE[:80], HOSTILE, subtitle=HOSTILE).posted
        assert "per-minute limit" in (n.post("t", "again").reason or "")
        ((body, *more),) = [[r["body"] for r in push_server.wait_for(1)]]
        assert more == []
        subtitle, message, answer = body["message"].split("\n")
        for text in (body["title"], subtitle, message, answer):
            assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)
        assert (len(body["title"]), len(subtitle), len(message)) == (64, 64, 256)

    def test_secrets_reach_no_log_and_no_stderr(self, home: Path) -> None:
        """A push that fails (nothing listens): Apprise's log, which names the URL, reaches
        neither stderr nor the host application's logging (a handler on the root logger);
        the failure says what failed, without the secret."""
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()  # nothing listens there now
        set_push(f"ntfy://127.0.0.1:{port}/{SECRET}")
        out = run_wisp("notify", "--route", "push", "probe")
        assert out.returncode == 1
        assert f"ntfy://127.0.0.1:{port}: not delivered" in out.stdout
        assert out.stdout.count("not delivered") == 1, out.stdout  # said once, not twice
        assert SECRET not in out.stdout + out.stderr + log_text(home)
        records: list[logging.LogRecord] = []
        host_handler = logging.Handler(logging.DEBUG)
        host_handler.emit = records.append  # type: ignore[method-assign]
        root = logging.getLogger()
        level, root.level = root.level, logging.DEBUG
        root.addHandler(host_handler)
        try:
            n = notifier(home, [f"ntfy://127.0.0.1:{port}/{SECRET}"], background_push=False)
            assert not n.post("t", "m").posted
        finally:
            root.removeHandler(host_handler)
            root.setLevel(level)
        assert not [r for r in records if SECRET in r.getMessage()]

    def test_a_url_apprise_does_not_take(self, home: Path) -> None:
        """A URL of a form no Apprise service takes is set (its form is Apprise's to
        judge) and fails when sent, saying so."""
        set_push(f"nosuchservice://{SECRET}")
        out = run_wisp("notify", "--route", "push", "probe")
        assert out.returncode == 1 and "Apprise does not take this URL" in out.stdout
        assert SECRET not in out.stdout + out.stderr


class TestFromAHook:
    def test_a_hooks_push_holds_none_of_its_output_open(
        self, home: Path, silent_port: int, tmp_path: Path
    ) -> None:
        """A hook whose request is pushed to a service that never answers ends with both its
        stdout and its stderr closed at once: the push child (which waits up to
        PUSH_TIMEOUT_S) holds neither, since the harness reads both to their end and Claude
        Code 2.1.332 refused an allow whose stderr stayed open. The control: the push was
        tried (its failure audited) after the hook had ended."""
        set_push(f"json://127.0.0.1:{silent_port}/hook")
        event = {
            "session_id": "s",
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(tmp_path),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": {"command": "make deploy", "description": "x"},
            "tool_use_id": "t1",
        }
        hook = subprocess.Popen(
            wisp_command("hook", "claude-code", "--wait", "1", "--on-timeout", "deny"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert hook.stdin is not None and hook.stdout is not None and hook.stderr is not None
        with hook.stdin:
            hook.stdin.write(json.dumps(event).encode())
        assert hook.wait(timeout=60) == 0  # a few lines of output: never blocked on a pipe
        ended = time.monotonic()
        out, err = hook.stdout.read(), hook.stderr.read()  # each to its end of stream
        assert time.monotonic() - ended < 1, "the hook's output was held open after it ended"
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", err
        wait_until(
            lambda: any(n.get("outcome") == "failed" for n in notes(home)),
            timeout=PUSH_TIMEOUT_S + 60,
            what="the push to be tried and its failure audited",
        )


class TestImports:
    @pytest.mark.parametrize(
        "args",
        [("pending",), ("doctor",), ("config",), ("notify", "--route", "terminal", "x")],
        ids=" ".join,
    )
    def test_no_everyday_command_loads_apprise(self, home: Path, args: tuple[str, ...]) -> None:
        """With push URLs set, listing, the doctor, `wisp config` and a notification by
        another route load no Apprise; a listing loads neither push nor tmux code."""
        set_push(f"ntfy://{SECRET}")
        modules = loaded(home, *args)
        assert found(modules, ("apprise",)) == []
        if args == ("pending",):
            assert found(modules, ("wisp.routes.push", "wisp.routes.tmux")) == []
