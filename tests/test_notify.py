"""Notifications: limits, route choice per face and environment, exact bytes, hostile text."""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import audit_records, in_terminal, run_wisp, wisp_spawn
from hypothesis import given
from hypothesis import strategies as st

from pending.testing import FakeClock
from wisp._text import visible
from wisp.routes.notify import (
    MESSAGE_MAX,
    SUBTITLE_MAX,
    TITLE_MAX,
    Notifier,
    RateLimit,
    clean,
    osc9,
    osc99,
    terminal_safe,
)

# Every route, in the order they are tried (push last, after the routes here).
ORDER = ("host", "terminal", "tmux", "app", "osascript", "desktop", "push")
HOSTILE = "a\x1bb\x07c\x9cd;e\x00f\x7fg\u009bh" + "x" * 10_000


class Pty:
    """A real pseudo-terminal: the notifier writes to its slave; we read the master."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)

    def read(self) -> bytes:
        os.set_blocking(self.master, False)
        try:
            return os.read(self.master, 65536)
        except BlockingIOError:
            return b""

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def pty() -> Iterator[Pty]:
    p = Pty()
    yield p
    p.close()


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[Path, Path]:
    """A bin directory with `notify-send` and `osascript` that record their argv, and the log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "argv.jsonl"
    bin_dir.mkdir()
    for name in ("notify-send", "osascript"):
        script = bin_dir / name
        script.write_text(
            f"#!{sys.executable}\nimport json, sys\n"
            f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        )
        script.chmod(0o755)
    return bin_dir, log


def notifier(home: Path, **kw: Any) -> Notifier:
    kw.setdefault("environ", {})
    kw.setdefault("limit", RateLimit(FakeClock()))
    kw.setdefault("tty_path", "/nonexistent/tty")
    kw.setdefault("platform", "linux")
    return Notifier(home, **kw)


def argv_log(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class TestLimits:
    def test_cleaning_and_bounds(self) -> None:
        """Controls become spaces; title cut at 64, message at 256, with an ellipsis."""
        assert clean("a\nb\tc\x1bd", 64) == "a b c d"
        assert clean("t" * 70, 64) == "t" * 63 + "…"
        assert len(clean("m" * 300, 256)) == 256

    def test_invisible_characters_are_shown_not_obeyed(self) -> None:
        """A bidi override or a zero-width space in a banner shows as a marker, as in the
        terminal: `exe.txt` reversed by U+202E cannot pass for a text file."""
        assert clean("run \u202etxt.exe", 64) == "run ⟨U+202E⟩txt.exe"
        assert clean("rm\u200b -rf", 64) == "rm⟨U+200B⟩ -rf"

    @given(st.text(), st.integers(2, 300))
    def test_printable_text_is_cleaned_as_any_text(self, text: str, limit: int) -> None:
        """Printable text skips the per-character pass: what it gives is what the full
        cleaning (controls to spaces, then visible markers, then the cut) gives, for any
        text at all."""
        spaced = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
        full = visible(spaced)
        assert clean(text, limit) == (full if len(full) <= limit else full[: limit - 1] + "…")

    def test_empty_message_refused(self, home: Path) -> None:
        """An empty (or blank) message is not shown, with that reason."""
        result = notifier(home).post("title", "  \n ")
        assert (result.posted, str(result)) == (
            False,
            "notification not shown: the message is empty",
        )

    def test_off_switch(self, home: Path, pty: Pty) -> None:
        """notifications.enabled false refuses every one, before any route."""
        n = notifier(
            home,
            environ={"TERM_PROGRAM": "ghostty"},
            tty_path=pty.path,
            settings={"notifications.enabled": False},
        )
        result = n.post("t", "m")
        assert not result.posted and "notifications are off" in (result.reason or "")
        assert pty.read() == b""

    def test_rate_limit_with_an_injected_clock(self, home: Path, pty: Pty) -> None:
        """At most perMinute in any minute; a minute later there is room again."""
        clock = FakeClock()
        n = notifier(
            home,
            environ={"TERM_PROGRAM": "ghostty"},
            tty_path=pty.path,
            limit=RateLimit(clock),
            settings={"notifications.perMinute": 3},
        )
        assert [n.post("t", f"m{i}").posted for i in range(4)] == [True, True, True, False]
        assert "per-minute limit" in (n.post("t", "m").reason or "")
        clock.advance(59)
        assert not n.post("t", "m").posted
        clock.advance(1.5)
        assert n.post("t", "m").posted


class TestRouteChoice:
    @pytest.mark.parametrize(
        ("env", "route"),
        [
            ({"TERM_PROGRAM": "ghostty"}, "terminal"),
            ({"TERM_PROGRAM": "WezTerm"}, "terminal"),
            ({"TERM": "xterm-kitty"}, "terminal"),
            ({"TERM_PROGRAM": "ghostty", "TMUX": "/nonexistent/tmux.sock,1,0"}, None),
            ({"TERM_PROGRAM": "Apple_Terminal"}, None),
            ({"TERM": "xterm-256color"}, None),
        ],
    )
    def test_terminal_names(
        self, home: Path, pty: Pty, env: dict[str, str], route: str | None
    ) -> None:
        """TERM_PROGRAM (else TERM) picks the terminal route; inside tmux (here one whose
        server is not there) and others fall through."""
        result = notifier(home, environ=env, tty_path=pty.path).post("t", "m")
        assert result.route == route
        assert (pty.read() != b"") == (route == "terminal")

    def test_no_tty(self, home: Path) -> None:
        """/dev/tty that does not open: the terminal route is skipped, saying so."""
        result = notifier(home, environ={"TERM_PROGRAM": "ghostty"}).post("t", "m")
        assert not result.posted
        assert any(s.startswith("terminal: no terminal") for s in result.skipped)

    @pytest.mark.parametrize("face", ["json", "mcp"])
    def test_never_the_terminal_under_a_front_end_or_mcp(
        self, home: Path, pty: Pty, face: str
    ) -> None:
        """Under a JSON front end or MCP the terminal belongs to someone else."""
        result = notifier(
            home, face=face, environ={"TERM_PROGRAM": "ghostty"}, tty_path=pty.path
        ).post("t", "m")
        assert result.route is None and pty.read() == b""
        assert any("owns the terminal" in s for s in result.skipped)

    def test_host_with_and_without_notify(self, home: Path, pty: Pty) -> None:
        """A front end that declared notify gets a notify line; one that did not, nothing."""
        lines: list[dict[str, Any]] = []
        got = notifier(home, face="json", host=lines.append).post("Title", "Body", subtitle="Sub")
        assert got.route == "host"
        assert lines == [
            {"type": "notify", "title": "Title", "subtitle": "Sub", "body": "Body", "sound": False}
        ]
        got = notifier(home, face="json").post("t", "m")
        assert got.route is None
        assert "host: the front end did not declare notify" in got.skipped

    def test_macos_app_then_osascript(self, home: Path, recorder: tuple[Path, Path]) -> None:
        """macOS: the app route by bundle id first; with viaTerminalApp off, osascript."""
        bin_dir, log = recorder
        env = {"__CFBundleIdentifier": "com.mitchellh.ghostty"}
        osa = str(bin_dir / "osascript")
        got = notifier(home, platform="darwin", environ=env, osascript=osa).post("t", "m")
        assert got.route == "app"
        assert argv_log(log)[-1][-1] == "com.mitchellh.ghostty"
        off = notifier(
            home,
            platform="darwin",
            environ=env,
            osascript=osa,
            settings={"notifications.viaTerminalApp": False},
        ).post("t", "m")
        assert off.route == "osascript"
        assert "app: notifications.viaTerminalApp is off" in off.skipped

    def test_iterm2_tries_the_app_route_first(
        self, home: Path, pty: Pty, recorder: tuple[Path, Path]
    ) -> None:
        """In iTerm2 the app route goes before the terminal's OSC 9."""
        bin_dir, _ = recorder
        env = {"TERM_PROGRAM": "iTerm.app", "__CFBundleIdentifier": "com.googlecode.iterm2"}
        got = notifier(
            home,
            platform="darwin",
            environ=env,
            tty_path=pty.path,
            osascript=str(bin_dir / "osascript"),
        ).post("t", "m")
        assert got.route == "app" and pty.read() == b""

    def test_linux_desktop_needs_a_bus(self, home: Path, recorder: tuple[Path, Path]) -> None:
        """Linux: notify-send where a session bus exists; without one, skipped."""
        bin_dir, log = recorder
        env = {"PATH": str(bin_dir), "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/bus"}
        assert notifier(home, environ=env).post("t", "m", subtitle="s").route == "desktop"
        assert argv_log(log) == [["--app-name=wisp", "--", "t — s", "m"]]
        no_bus = notifier(home, environ={"PATH": str(bin_dir)}).post("t", "m")
        assert no_bus.route is None
        assert "desktop: no session bus (DBUS_SESSION_BUS_ADDRESS unset)" in no_bus.skipped

    def test_tmux_comes_after_the_terminal_and_before_the_desktop(self, home: Path) -> None:
        """The routes here in order, then push; in iTerm2 the app route first."""
        assert notifier(home).order() == list(ORDER[:-1])
        assert [r for r, _ in notifier(home).describe()] == list(ORDER)
        iterm = notifier(home, environ={"TERM_PROGRAM": "iTerm.app"}).order()
        assert iterm[:4] == ["host", "app", "terminal", "tmux"]

    def test_the_doctor_checks_the_terminal_and_the_bus(
        self, home: Path, pty: Pty, recorder: tuple[Path, Path], tmp_path: Path
    ) -> None:
        """What posting would find, found without posting: a /dev/tty that does not open,
        and a session bus whose socket is gone, are named; a real pty is usable."""
        bin_dir, log = recorder
        gone = f"unix:path={tmp_path / 'bus'}"
        env = {"TERM_PROGRAM": "ghostty", "PATH": str(bin_dir), "DBUS_SESSION_BUS_ADDRESS": gone}
        found = dict(notifier(home, environ=env).describe())
        assert (found["terminal"] or "").startswith("no terminal (/nonexistent/tty does not open")
        assert found["desktop"] == f"no session bus ({tmp_path / 'bus'} is not there)"
        assert dict(notifier(home, environ=env, tty_path=pty.path).describe())["terminal"] is None
        assert dict(notifier(home, environ=env).describe(deep=False))["desktop"] is None
        assert pty.read() == b"" and argv_log(log) == []

    def test_a_route_forced_alone(self, home: Path, pty: Pty) -> None:
        """--route tries that route alone and reports why it could not post."""
        n = notifier(home, environ={"TERM_PROGRAM": "ghostty"}, tty_path=pty.path)
        got = n.post("t", "m", route="osascript")
        assert not got.posted and got.reason == "osascript: not macOS"
        assert n.post("t", "m", route="terminal").route == "terminal"


class TestBytes:
    def test_osc9_exact(self, home: Path, pty: Pty) -> None:
        """OSC 9: ESC ] 9 ; title — subtitle: body BEL, written to the terminal."""
        notifier(home, environ={"TERM_PROGRAM": "ghostty"}, tty_path=pty.path).post(
            "wisp", "make deploy", subtitle="claude-code"
        )
        assert pty.read() == "\x1b]9;wisp — claude-code: make deploy\x07".encode()

    def test_osc99_exact(self) -> None:
        """OSC 99: a title chunk and a body chunk, each ended by ESC \\."""
        assert osc99("T", "", "B", "abcd") == (
            b"\x1b]99;i=abcd:d=0:p=title;T\x1b\\\x1b]99;i=abcd:p=body;B\x1b\\"
        )

    def test_osc99_on_kitty(self, home: Path, pty: Pty) -> None:
        """kitty gets OSC 99 chunks on its terminal."""
        notifier(home, environ={"TERM": "xterm-kitty"}, tty_path=pty.path).post("T", "B")
        data = pty.read()
        assert data.startswith(b"\x1b]99;i=") and b":p=body;B\x1b\\" in data

    def test_hostile_text_cannot_escape_the_sequence(self, home: Path, pty: Pty) -> None:
        """ESC, BEL, C1 (\\x9c, \\x9b), NUL, DEL and `;` in the text never reach the terminal
        as themselves; 10 kB is cut to the bounds."""
        notifier(home, environ={"TERM_PROGRAM": "ghostty"}, tty_path=pty.path).post(
            HOSTILE[:80], HOSTILE, subtitle=HOSTILE
        )
        data = pty.read()
        assert data.startswith(b"\x1b]9;") and data.endswith(b"\x07")
        inner = data[4:-1].decode()
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in inner)
        assert ";" not in inner
        assert len(inner) < 64 + 3 + 64 + 2 + 256 + 1
        assert terminal_safe("a;b\x9cc\x1b") == "a,b c "
        assert osc9("t", "", "x;y") == b"\x1b]9;t: x,y\x07"

    def test_hostile_text_to_a_front_end(self, home: Path) -> None:
        """The host route's line carries cleaned, bounded text: no control characters."""
        lines: list[dict[str, Any]] = []
        notifier(home, face="json", host=lines.append).post(HOSTILE, HOSTILE, subtitle=HOSTILE)
        (line,) = lines
        for key in ("title", "subtitle", "body"):
            assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in line[key])
        assert (len(line["title"]), len(line["subtitle"]), len(line["body"])) == (64, 64, 256)

    def test_hostile_text_as_arguments_only(
        self, home: Path, recorder: tuple[Path, Path], tmp_path: Path
    ) -> None:
        """Text reaches osascript and notify-send as argv, never parsed by a shell or as
        script: a command substitution in it runs nothing."""
        bin_dir, log = recorder
        canary = tmp_path / "pwned"
        evil = f'$(touch {canary}) `touch {canary}` " & do shell script "touch {canary}"'
        env = {
            "PATH": str(bin_dir),
            "DBUS_SESSION_BUS_ADDRESS": "x",
            "__CFBundleIdentifier": "com.apple.Terminal",
        }
        notifier(home, environ=env).post(evil, evil)
        notifier(home, environ=env, platform="darwin", osascript=str(bin_dir / "osascript")).post(
            evil, evil, subtitle=evil
        )
        desktop, app = argv_log(log)
        # Each cut to its bound as the notifier cuts it: how long `evil` is depends on where
        # the test's temporary directory is (a parallel worker's is longer).
        body = clean(evil, MESSAGE_MAX)
        assert desktop[-2:] == [clean(evil, TITLE_MAX), body]
        assert app[0] == "-e" and "on run argv" in app[1]
        assert app[2:5] == [clean(evil, TITLE_MAX), body, clean(evil, SUBTITLE_MAX)]
        assert not canary.exists()


class TestAudit:
    def test_posted_and_refused_are_audited(self, home: Path, pty: Pty) -> None:
        """Every request, posted or refused, is a `notification` record with the route taken
        and one `route: reason` per route passed over."""
        n = notifier(home, environ={"TERM_PROGRAM": "ghostty"}, tty_path=pty.path)
        n.post("Title", "Body", source="watch")
        notifier(home).post("Title", "Body", source="model")
        posted, refused = [r for r in audit_records(home) if r["event"] == "notification"]
        assert (
            posted["title"],
            posted["body"],
            posted["source"],
            posted["outcome"],
            posted["route"],
        ) == ("Title", "Body", "watch", "posted", "terminal")
        assert posted["skipped"] == [
            "host: no front end declared notify (only under `wisp relay`)",
            "push: no push URL set (notifications.push)",
        ]
        assert (refused["outcome"], refused.get("route"), refused["source"]) == (
            "not shown",
            None,
            "model",
        )
        assert [s.split(":")[0] for s in refused["skipped"]] == list(ORDER)


class TestFiling:
    def test_every_filed_request_posts_one(self, home: Path) -> None:
        """Filing a fact posts (or tries to post) a notification naming the command that
        answers it; the filing never depends on it."""
        request_id = run_wisp("facts", "request", "release", "codename", "BLUE HERON").stdout
        request_id = request_id.strip()
        notes = [r for r in audit_records(home) if r["event"] == "notification"]
        assert len(notes) == 1
        note = notes[0]
        assert note["body"] == f"release codename = BLUE HERON — wisp facts keep {request_id}"
        assert (note["source"], note["id"], note["kind"]) == ("approval", request_id, "fact")
        assert note["title"] == "wisp: keep as a permanent fact?"
        assert "proposed by wisp facts request" in note["subtitle"]

    def test_a_broken_route_never_fails_the_filing(self, home: Path, tmp_path: Path) -> None:
        """notify-send failing: the request is filed all the same, the failure audited."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        broken = bin_dir / "notify-send"
        broken.write_text("#!/bin/sh\necho 'no bus here' >&2\nexit 3\n")
        broken.chmod(0o755)
        out = run_wisp(
            "facts",
            "request",
            "a",
            "b",
            "c",
            env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "DBUS_SESSION_BUS_ADDRESS": "x"},
        )
        assert out.returncode == 0
        note = next(r for r in audit_records(home) if r["event"] == "notification")
        assert note["outcome"] == "not shown"
        assert "desktop: notify-send exited 3: no bus here" in note["skipped"]

    def test_a_question_is_an_inquiry_posted_to_the_askers_terminal(self, home: Path) -> None:
        """`wisp questions ask` in Ghostty writes OSC 9 to its own terminal (not stdout)."""
        import pexpect

        child = pexpect.spawn(
            *wisp_spawn("questions", "ask", "--timeout", "0.5", "Which env?"),
            env={**os.environ, "TERM_PROGRAM": "ghostty"},
            timeout=30,
        )
        child.expect(pexpect.EOF)
        output = child.before or b""
        assert b"\x1b]9;wisp: a question for you" in output
        assert b"Which env? \xe2\x80\x94 wisp questions answer " in output
        note = next(r for r in audit_records(home) if r["event"] == "notification")
        assert (note["source"], note["route"]) == ("inquiry", "terminal")


class TestCommands:
    def test_wisp_notify_and_doctor(self, home: Path) -> None:
        """`wisp notify` says what happened (exit 1 when not shown); `wisp doctor` names the
        route it would take and why each other is skipped."""
        env = {"TERM_PROGRAM": "", "TERM": "dumb", "TMUX": "", "DBUS_SESSION_BUS_ADDRESS": ""}
        out = run_wisp("notify", "hi", "there", env=env)
        assert out.returncode == 1 and "notification not shown" in out.stdout
        doctor = json.loads(run_wisp("doctor", "--json", env=env).stdout)
        assert doctor["notification"]["route"] is None
        assert len(doctor["notification"]["skipped"]) == 7

    def test_config_get_set_types_checked(self, home: Path) -> None:
        """`wisp config set` checks the type before writing; `get` reads it back."""
        assert run_wisp("config", "set", "notifications.perMinute", "ten").returncode == 1
        assert not (home / "config.json").exists()
        assert in_terminal("config", "set", "notifications.enabled", "false")[0] == 0
        assert run_wisp("config", "get", "notifications.enabled").stdout.strip() == "false"
        assert run_wisp("config", "set", "no.such", "1").returncode == 1
        out = run_wisp("notify", "t", "m")
        assert "notifications are off" in out.stdout
