"""`wisp tui` in a real terminal: tmux runs it in a pseudo-terminal of 80x24, keys are typed
with send-keys, and the screen is read back with capture-pane."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import Asker as AskerProcess
from helpers import kept_fact, running

from wisp.audit.writer import AUDIT_FILE, LOGS_DIR

TMUX = shutil.which("tmux")
SCREEN_WAIT_S = 20.0

pytestmark = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed (apt-get install -y tmux): no real terminal"
)


class Terminal:
    """One tmux server of our own (its own socket), running one command in an 80x24 pane."""

    def __init__(
        self, socket: Path, argv: list[str], env: dict[str, str], cwd: Path | None = None
    ) -> None:
        """*argv* run in the pane, with *env* added, in *cwd* (default: this process's)."""
        assert TMUX is not None
        self.base = [TMUX, "-S", str(socket)]
        settings = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        where = ["-c", str(cwd)] if cwd is not None else []
        subprocess.run(
            [*self.base, "new-session", "-d", "-x", "80", "-y", "24", *where, *settings, *argv],
            check=True,
            timeout=30,
        )

    def screen(self) -> str:
        done = subprocess.run(
            [*self.base, "capture-pane", "-p"], capture_output=True, text=True, timeout=30
        )
        return done.stdout if done.returncode == 0 else ""

    def wait_for(self, *texts: str) -> str:
        """The screen once it shows every one of *texts* (bounded; the screen is re-read,
        never slept on). All at once: a screen captured mid-repaint may show one line new
        and another not yet."""
        deadline = time.monotonic() + SCREEN_WAIT_S
        while True:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {texts!r}:\n{screen}")
            time.sleep(0.05)

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", *keys], check=True, timeout=30)

    def alive(self) -> bool:
        done = subprocess.run([*self.base, "has-session"], capture_output=True, timeout=30)
        return done.returncode == 0

    def pid(self) -> int:
        """The process the pane runs (the TUI)."""
        done = subprocess.run(
            [*self.base, "display-message", "-p", "#{pane_pid}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return int(done.stdout)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=30)


def descendants(pid: int) -> set[int]:
    """Every process under *pid*, read from /proc."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = {int(c) for c in (task / "children").read_text().split()}
            except OSError:
                continue
            todo.extend(children - found)
            found |= children
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
    except OSError:
        return "?"


class TestRealTerminal:
    def test_closing_the_terminal_ends_every_relay(self, home: Path) -> None:
        """The terminal closes under a TUI with a `--host` (tmux's server killed: SIGHUP):
        the local relay, the ssh stand-in and the far relay behind it all end with the
        TUI, none left running under nobody."""
        fake_ssh = str(Path(__file__).with_name("fakessh.py"))
        far = f"{sys.executable} {fake_ssh} {{host}} {sys.executable} -m wisp relay --via tui"
        term = Terminal(
            home.parent / "tmux.sock",
            [sys.executable, "-m", "wisp", "tui", "--host", "alpha", "--relay-command", far],
            {"WISP_HOME": str(home), "TERM": "xterm-256color"},
        )
        try:
            term.wait_for("showing all · local alpha")
            tui = term.pid()
            children = descendants(tui)
            assert len(children) >= 3, children  # a relay, the ssh stand-in, a far relay
        finally:
            term.close()
        deadline = time.monotonic() + SCREEN_WAIT_S
        while any(running(p) for p in (tui, *children)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = {p: _cmdline(p) for p in (tui, *children) if running(p)}
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"still running after the terminal closed: {left} (the TUI: {tui})"

    def test_keep_a_fact(self, home: Path) -> None:
        """A fact request whose asker has stopped is shown, opened with Enter, kept with k:
        facts.json holds it, the screen says so, and q leaves the terminal as it was."""
        dead = AskerProcess(home, "fact")
        (request_id,) = dead.filed()
        dead.kill()
        term = Terminal(
            home.parent / "tmux.sock",
            [sys.executable, "-m", "wisp", "tui"],
            {"WISP_HOME": str(home), "TERM": "xterm-256color"},
        )
        try:
            term.wait_for(
                "release codename = BLUE HERON",
                "1 waiting (0 command, 1 fact, 0 question, 0 tool)",
                "handed-over",
            )
            term.keys("Enter")
            term.wait_for("Keep as a permanent fact?", "[k]eep  [d]rop", "BLUE HERON")
            term.keys("k")
            term.wait_for(f"kept ({request_id}) as p")
            facts = json.loads((home / "facts.json").read_text())["facts"]
            assert [(f["value"], f["request"], f["via"]) for f in facts] == [
                ("BLUE HERON", request_id, "tui")
            ]
            term.keys("q")
            deadline = time.monotonic() + SCREEN_WAIT_S
            while term.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not term.alive(), "the TUI did not quit on q"
        finally:
            term.close()

    def test_filter_move_and_a_contradicted_fact(self, home: Path) -> None:
        """In a real terminal: `/heron` and Enter leave the one fact row, G and k move
        without typing into the filter, and its dialog names the kept RED KITE it would
        contradict (`differs`)."""

        kept = kept_fact(home)
        dead = AskerProcess(home, "fact", "command")
        dead.filed()
        term = Terminal(
            home.parent / "tmux.sock",
            [sys.executable, "-m", "wisp", "tui"],
            {"WISP_HOME": str(home), "TERM": "xterm-256color"},
        )
        try:
            term.wait_for("release codename = BLUE HERON", "2 waiting")
            term.keys("/", "h", "e", "r", "o", "n")
            term.wait_for('matching "heron"')
            term.keys("Enter", "G", "k", "g")
            screen = term.wait_for('matching "heron"', "BLUE HERON")
            assert "make deploy" not in screen, screen
            term.keys("Enter")
            term.wait_for("Keep as a permanent fact?", "differs", f"RED KITE ({kept.id})")
        finally:
            dead.kill()
            term.close()

    def test_a_reason_typed_in_one_burst_with_n(self, home: Path) -> None:
        """`n`, a reason and Enter reach the TUI in one read (as typed fast, or pasted):
        every letter is the reason's, none a key of the dialog, and Enter denies with it."""
        from pending import Channel

        asking = AskerProcess(home, "command")
        (request_id,) = asking.filed()
        term = Terminal(
            home.parent / "tmux.sock",
            [sys.executable, "-m", "wisp", "tui"],
            {"WISP_HOME": str(home), "TERM": "xterm-256color"},
        )
        try:
            term.wait_for("make deploy", "1 waiting")
            term.keys("Enter")
            term.wait_for("Run this command?", "[n]o")
            term.keys("n", "a", "s", "k", " ", "n", "o", "w", "Enter")
            term.wait_for(f"denied ({request_id})")
            with Channel.open(home) as channel:
                answer = channel.status(request_id).answer
            assert answer is not None and (answer.decision, answer.reason) == ("no", "ask now")
        finally:
            asking.kill()
            term.close()


class TestWithoutATerminal:
    REFUSAL_WAIT_S = 30.0  # a refusal is at once; this only bounds a hang

    def refused(self, home: Path, stdin: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "wisp", "tui"],
            stdin=stdin,
            capture_output=True,
            env={**os.environ, "WISP_HOME": str(home), "TERM": "xterm-256color"},
            timeout=self.REFUSAL_WAIT_S,
        )

    def test_it_refuses_at_once_saying_what_to_do(self, home: Path) -> None:
        """In a terminal `wisp tui` starts (the control); with no terminal (standard input
        from /dev/null, its output into pipes) it refuses at once, exit 2, saying it needs a
        terminal and what to run instead: no escape sequence written, no relay started (the
        audit log is as the control left it)."""
        term = Terminal(
            home.parent / "tmux.sock",
            [sys.executable, "-m", "wisp", "tui"],
            {"WISP_HOME": str(home), "TERM": "xterm-256color"},
        )
        try:
            term.wait_for("0 waiting", "q quit")
        finally:
            term.close()
        log = home / LOGS_DIR / AUDIT_FILE
        before = log.read_bytes()
        done = self.refused(home, subprocess.DEVNULL)
        said = " ".join(done.stderr.decode().split())
        assert done.returncode == 2, said
        assert "needs a terminal, but its standard input and standard error are not" in said
        assert "`ssh -t HOST wisp tui`" in said and "`wisp pending`" in said
        assert b"\x1b" not in done.stdout + done.stderr and "Traceback" not in said
        assert log.read_bytes() == before

    def test_a_terminal_on_input_alone_is_not_enough(self, home: Path) -> None:
        """Standard input a terminal (a pty) but standard error a pipe, where textual would
        draw: refused too, naming standard error."""
        main, side = os.openpty()
        try:
            done = self.refused(home, side)
        finally:
            os.close(main)
            os.close(side)
        said = " ".join(done.stderr.decode().split())
        assert done.returncode == 2, said
        assert "but its standard error is not one" in said
