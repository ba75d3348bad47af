"""`wisp doctor` tells the truth about reaching the person: it says push was not tried, and
`--send-test` tries it (a real HTTP server on 127.0.0.1 as the target, a closed port for one
that is down) and reports a failing route as failing, exit 1; an asking command whose push
failed says so on stderr. Real processes, real sockets."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_wisp, wisp_command
from test_push import PushServer, set_push
from test_push import no_proxy as no_proxy

SECRET = "t0p-secret-doctor"


@pytest.fixture
def push_server() -> Iterator[PushServer]:
    server = PushServer()
    yield server
    server.close()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 nothing listens on (bound, then closed: refused at once)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()
    yield port


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return run_wisp("doctor", *args, env={"COLUMNS": "200", "TERM": "dumb"})


class TestDoctorSaysWhatItTried:
    def test_without_send_test_push_is_said_untried(
        self, home: Path, push_server: PushServer
    ) -> None:
        """With push the only route, plain `wisp doctor` says it would post via push, that
        push was not tried and how to try it; nothing is sent."""
        set_push(f"json://127.0.0.1:{push_server.port}/{SECRET}")
        done = doctor()
        assert "would post via push" in done.stdout, done.stdout
        assert "push: not tried; `wisp doctor --send-test` tries it" in done.stdout
        assert push_server.received == []

    def test_send_test_to_a_live_server_is_ok(self, home: Path, push_server: PushServer) -> None:
        """`--send-test` posts a test notification; the server gets it; the doctor says
        the push target posted, and exits 0 (JSON: sendTest.ok true)."""
        set_push(f"json://127.0.0.1:{push_server.port}/{SECRET}")
        done = doctor("--send-test")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"push to json://127.0.0.1:{push_server.port}: posted" in done.stdout
        (received,) = push_server.wait_for(1)
        assert "a test notification" in json.dumps(received["body"])
        found = json.loads(doctor("--send-test", "--json").stdout)
        assert found["sendTest"]["ok"] is True and found["ok"] is True

    def test_send_test_to_a_server_that_is_down_fails(self, home: Path, closed_port: int) -> None:
        """The push target is down (a closed port): `--send-test` reports the push as
        failed, NEEDS ATTENTION, and exits 1; the secret is never shown."""
        set_push(f"json://127.0.0.1:{closed_port}/{SECRET}")
        done = doctor("--send-test")
        assert done.returncode == 1, done.stdout + done.stderr
        assert "test      NEEDS ATTENTION" in done.stdout, done.stdout
        assert f"push to json://127.0.0.1:{closed_port}: failed" in done.stdout
        assert SECRET not in done.stdout + done.stderr
        found = json.loads(doctor("--send-test", "--json").stdout)
        assert found["ok"] is False
        assert [t["outcome"] for t in found["sendTest"]["targets"]] == ["failed"]


class TestAFailedPushIsSaid:
    def test_the_asking_command_says_so_on_stderr(self, home: Path, closed_port: int) -> None:
        """A request filed while its push target is down: the asking command's stderr gets
        a line saying the push about that request failed, and how to check it."""
        set_push(f"json://127.0.0.1:{closed_port}/{SECRET}")
        done = subprocess.run(
            wisp_command("facts", "request", "release", "codename", "RED KITE"),
            capture_output=True,
            text=True,
            env={**os.environ, "TERM": "dumb"},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        request_id = done.stdout.strip()
        assert f"wisp: the push about request {request_id} failed" in done.stderr, done.stderr
        assert "`wisp doctor --send-test`" in done.stderr
        assert SECRET not in done.stderr
