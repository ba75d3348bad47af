"""The tmux route under a real tmux server of the test's own (`tmux -L NAME`), with a client
attached through a pseudo-terminal: what the client draws, what passes through to the
terminal it is attached through, and what is audited."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from helpers import audit_records, wait_until

from pending.testing import FakeClock
from wisp.routes.notify import Notifier, RateLimit

TMUX = shutil.which("tmux")
SCREEN_WAIT_S = 20.0
WIDTH = 220  # wide enough for a whole notification on the status line

pytestmark = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed (apt-get install -y tmux): no real tmux"
)


class TmuxServer:
    """A tmux server on a socket of its own, one session whose pane waits (`cat`), and
    (once attached) one client on a pseudo-terminal we read: the "outer terminal"."""

    def __init__(self, home: Path) -> None:
        assert TMUX is not None
        self.name = f"wisp-test-{os.getpid()}-{secrets.token_hex(4)}"
        self.base = [TMUX, "-L", self.name, "-f", "/dev/null"]
        # No session bus, no outer tmux: as on a dev box reached over ssh.
        drop = ("TMUX", "TMUX_PANE", "DBUS_SESSION_BUS_ADDRESS", "TERM_PROGRAM")
        self.env = {k: v for k, v in os.environ.items() if k not in drop}
        self.env.update(TERM="xterm-256color", LANG="C.UTF-8")
        self.home = home
        self.tmux("new-session", "-d", "-s", "main", "-x", str(WIDTH), "-y", "10", "cat")
        self.tmux("set-option", "-wg", "remain-on-exit", "on")  # the pane outlives wisp
        self.socket = Path(self.tmux("display-message", "-p", "#{socket_path}"))
        self.client: pexpect.spawn | None = None

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [*self.base, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=True,
        )
        return done.stdout.strip()

    def attach(self) -> pexpect.spawn:
        """Attach a client through a pty, and wait until the server lists it."""
        self.client = pexpect.spawn(
            self.base[0],
            [*self.base[1:], "-u", "attach-session", "-t", "main"],
            env=self.env,
            dimensions=(12, WIDTH),
            timeout=SCREEN_WAIT_S,
        )
        wait_until(lambda: self.tmux("list-clients"), SCREEN_WAIT_S, "the client to attach")
        return self.client

    @property
    def pane(self) -> str:
        return self.tmux("display-message", "-p", "-t", "main", "#{pane_id}")

    def environ(self) -> dict[str, str]:
        """What a process in the session's pane finds: $TMUX (socket, server pid,
        session) and $TMUX_PANE."""
        pid = self.tmux("display-message", "-p", "#{pid}")
        return {**self.env, "TMUX": f"{self.socket},{pid},0", "TMUX_PANE": self.pane}

    def run_in_pane(self, *argv: str) -> None:
        """Run *argv* in the session's pane (in place of `cat`), with our WISP_HOME."""
        self.tmux("respawn-pane", "-k", "-t", self.pane, "-e", f"WISP_HOME={self.home}", *argv)

    def close(self) -> None:
        if self.client is not None:
            self.client.close(force=True)
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=30)
        self.socket.unlink(missing_ok=True)  # tmux leaves it behind


@pytest.fixture
def server(home: Path) -> Iterator[TmuxServer]:
    tmux = TmuxServer(home)
    try:
        yield tmux
    finally:
        tmux.close()


def notes(home: Path) -> list[dict[str, Any]]:
    return [r for r in audit_records(home) if r["event"] == "notification"]


def in_process(home: Path, server: TmuxServer, **kw: Any) -> Notifier:
    """A notifier in this process that believes it runs in the session's pane."""
    return Notifier(
        home,
        environ=server.environ(),
        limit=RateLimit(FakeClock()),
        tty_path="/nonexistent/tty",
        platform="linux",
        **kw,
    )


class TestTmuxRoute:
    def test_filing_inside_tmux_shows_on_the_attached_client(
        self, home: Path, server: TmuxServer
    ) -> None:
        """A fact filed in a tmux pane, with no session bus: its text is drawn on the
        attached client's screen, and the notification is audited `route: tmux`."""
        client = server.attach()
        server.run_in_pane(
            sys.executable, "-m", "wisp", "facts", "request", "release", "codename", "BLUE HERON"
        )
        note = wait_until(lambda: notes(home), SCREEN_WAIT_S, "the notification")[0]
        client.expect_exact("release codename = BLUE HERON")
        client.expect_exact(f"wisp facts keep {note['id']}")
        assert (note["route"], note["outcome"]) == ("tmux", "posted")
        assert note["detail"] == "shown on 1 tmux client"
        assert "terminal: inside tmux" in " ".join(note["skipped"])

    def test_passthrough_reaches_the_outer_terminal(self, home: Path, server: TmuxServer) -> None:
        """With `allow-passthrough` on and an outer terminal that has a sequence (Ghostty,
        as the server's environment says), the OSC 9 bytes reach the pty the client is
        attached through, and the audit says so."""
        server.tmux("set-option", "-pg", "allow-passthrough", "on")
        server.tmux("set-environment", "-g", "TERM_PROGRAM", "ghostty")
        client = server.attach()
        server.run_in_pane(
            sys.executable, "-m", "wisp", "facts", "request", "release", "codename", "BLUE HERON"
        )
        client.expect_exact(b"\x1b]9;wisp: keep as a permanent fact? \xe2\x80\x94 ")
        client.expect_exact(b"release codename = BLUE HERON \xe2\x80\x94 wisp facts keep ")
        client.expect_exact(b"\x07")
        note = wait_until(lambda: notes(home), SCREEN_WAIT_S, "the notification")[0]
        assert note["detail"] == "shown on 1 tmux client, OSC 9 passed through to Ghostty"

    def test_no_passthrough_unless_the_pane_allows_it(self, home: Path, server: TmuxServer) -> None:
        """`allow-passthrough` off (tmux's default): the status line only; nothing is
        written to the pane's terminal for tmux to swallow."""
        server.tmux("set-environment", "-g", "TERM_PROGRAM", "ghostty")
        client = server.attach()
        server.run_in_pane(sys.executable, "-m", "wisp", "facts", "request", "a", "b", "c")
        client.expect_exact("a b = c")
        note = wait_until(lambda: notes(home), SCREEN_WAIT_S, "the notification")[0]
        assert note["detail"] == "shown on 1 tmux client"

    def test_no_attached_client_falls_through(self, home: Path, server: TmuxServer) -> None:
        """A detached session reaches nobody: the route is skipped, saying so, and the
        doctor's check finds the same."""
        notifier = in_process(home, server)
        result = notifier.post("t", "m")
        assert result.route is None
        nobody = (
            "no client is attached to this tmux session, nor to any other session of its server"
        )
        assert f"tmux: {nobody}" in result.skipped
        assert dict(notifier.describe())["tmux"] == nobody

    def test_format_text_is_shown_not_obeyed(
        self, home: Path, server: TmuxServer, tmp_path: Path
    ) -> None:
        """`#{…}`, `#(…)`, `#[…]` and runs of `#` in a request's text are shown as typed:
        never expanded as tmux formats, run as commands or drawn as styles; control
        characters never reach tmux."""
        canary = tmp_path / "pwned"
        client = server.attach()
        title = "T #{pane_id} ##"
        body = f"#(touch {canary}) x #[fg=red] y\x1b]0;z\x07 ###[w] #"
        result = in_process(home, server).post(title, body)
        assert result.route == "tmux"
        client.expect_exact(f"T #{{pane_id}} ##: #(touch {canary}) x #[fg=red] y ]0,z  ###[w] #")
        assert not canary.exists()

    def test_every_attached_client_is_told(self, home: Path, server: TmuxServer) -> None:
        """Two clients on the session: both are shown the notification."""
        first = server.attach()
        assert server.client is first
        second = pexpect.spawn(
            server.base[0],
            [*server.base[1:], "-u", "attach-session", "-t", "main"],
            env=server.env,
            dimensions=(12, WIDTH),
            timeout=SCREEN_WAIT_S,
        )
        try:
            wait_until(
                lambda: len(server.tmux("list-clients").splitlines()) == 2,
                SCREEN_WAIT_S,
                "two clients",
            )
            result = in_process(home, server).post("wisp", "both of you")
            assert result.detail == "shown on 2 tmux clients"
            first.expect_exact("wisp: both of you")
            second.expect_exact("wisp: both of you")
        finally:
            second.close(force=True)


class TestWhereThePersonIs:
    def test_a_client_on_another_session_is_named(self, home: Path, server: TmuxServer) -> None:
        """This pane's session has no client, but the person's is attached to another
        session of the same server: the route (and so `wisp doctor`) says where it is."""
        server.tmux("new-session", "-d", "-s", "other", "-x", str(WIDTH), "-y", "10", "cat")
        client = pexpect.spawn(
            server.base[0],
            [*server.base[1:], "-u", "attach-session", "-t", "other"],
            env=server.env,
            dimensions=(12, WIDTH),
            timeout=SCREEN_WAIT_S,
        )
        try:
            tty = wait_until(
                lambda: server.tmux("list-clients", "-F", "#{client_name}"),
                SCREEN_WAIT_S,
                "the client to attach",
            )
            why = dict(in_process(home, server).describe())["tmux"]
            assert why == (
                "no client is attached to this tmux session; the server's clients are at "
                f"{tty} on session other"
            )
            done = subprocess.run(
                [sys.executable, "-m", "wisp", "doctor"],
                env={**server.environ(), "WISP_HOME": str(home), "COLUMNS": "200"},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert f"{tty} on session other" in done.stdout, done.stdout
        finally:
            client.close(force=True)


class TestTheMessageStays:
    def test_kept_until_a_key_and_in_the_wisp_option(self, home: Path, server: TmuxServer) -> None:
        """By default the message is shown until a key is pressed on the client (tmux's
        `display-message -d 0`), and kept in the server's `@wisp` option, which a status
        line can show (`#{@wisp}`) after the message is gone."""
        client = server.attach()
        result = in_process(home, server).post("wisp: run a command?", "make deploy")
        assert result.route == "tmux"
        client.expect_exact("wisp: run a command?: make deploy")
        kept = server.tmux("show-options", "-gv", "@wisp")
        assert kept == "wisp: run a command?: make deploy"
