"""What the TUI reads from a relay's lines, and how it words them (pure: no terminal)."""

from __future__ import annotations

import ast
import json
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import BUILDERS
from hypothesis import given
from hypothesis import strategies as st

from pending import Decision, Kind, Outcome, ServerLock, State, Status
from wisp import AnswerFate
from wisp.relay._lines import approval_line
from wisp.relay.protocol import (
    Answered,
    Ended,
    ErrorLine,
    HistoryReply,
    LineError,
    Notify,
    Ready,
    Winner,
    Withdrawn,
    encode,
)
from wisp.tui._model import Waiting, asked, detail, ended_words, read_relay_line, report

HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"}


def line(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


def approval(**fields: Any) -> bytes:
    base: dict[str, Any] = {
        "type": "approval",
        "kind": "command",
        "id": "a1b2c3d4",
        "state": "filed",
        "title": "t",
        "body": "b",
        "filedAt": "2026-11-30T03:00:00.000Z",
        "expiresAt": None,
        "command": "make deploy",
        "cwd": "/srv",
        "server": {"id": "s1", "pid": 7, "client": "c", "alive": True},
    }
    base.update(fields)
    return json.dumps(base).encode()


class TestReadRelayLine:
    def test_approval(self) -> None:
        """An approval line becomes a Waiting keyed by host and id."""
        item = read_relay_line("alpha", approval())
        assert isinstance(item, Waiting)
        assert (item.key, item.kind, item.asker.pid, item.answerable) == (
            "alpha/a1b2c3d4",
            Kind.COMMAND,
            7,
            True,
        )

    def test_what_the_relay_writes_reads_back(self, server: ServerLock) -> None:
        """The relay's own approval_line is read by the TUI, for every kind."""
        for kind, build in BUILDERS.items():
            request = build(server)
            status = Status(id=request.id, kind=kind, state=State.FILED, request=request)
            item = read_relay_line("local", encode(approval_line(status))[:-1])
            assert isinstance(item, Waiting)
            assert (item.kind, item.id, item.asker.id) == (kind, request.id, server.id)

    @pytest.mark.parametrize(
        ("data", "kind"),
        [
            (line(type="withdrawn", id="a1b2c3d4", state="stale", reason="gone"), Withdrawn),
            (
                line(
                    type="answered",
                    id="a1b2c3d4",
                    won=False,
                    decision="once",
                    answer={"decision": "no", "via": "cli", "user": "bob"},
                ),
                Answered,
            ),
            (line(type="error", error="busy", message="m", id="zz"), ErrorLine),
            (line(type="notify", title="t", subtitle="s", body="b"), Notify),
            (line(type="ready", effects=["notify"], waiting=3), Ready),
            (line(type="history", entries=[{"ts": "x", "outcome": "stale"}]), HistoryReply),
        ],
    )
    def test_each_type(self, data: bytes, kind: type) -> None:
        """Every line type the relay sends is read as its message."""
        assert isinstance(read_relay_line("local", data), kind)

    def test_a_newer_relays_types_are_ignored(self) -> None:
        """An unknown type is None: skipped quietly, as additive protocol changes need."""
        assert read_relay_line("local", line(type="progress", n=1)) is None

    @pytest.mark.parametrize(
        "data",
        [
            b"nope",
            b"[]",
            line(kind="command"),
            approval(id="../../etc"),
            approval(kind="spell"),
            approval(command=7),
            approval(command=None),
            approval(kind="question", question="q", options="a"),
            approval(kind="question", question="q", options=[1]),
            approval(server=[]),
            approval(filedAt="yesterday"),
            approval(filedAt="2026-11-30T03:00:00"),
            line(type="answered", id="a1b2c3d4", won="yes"),
            line(type="withdrawn", id="a1b2c3d4", answer=[]),
            line(type="history", entries={}),
            line(type="ready", waiting=True),
            line(type="error", error="no-such-code", message="m"),
            line(type="answered", id="a1b2c3d4", won=True, decision="once", asker="lost"),
        ],
    )
    def test_bad_lines(self, data: bytes) -> None:
        """A line that does not fit is refused with a reason, never half-used."""
        with pytest.raises(LineError):
            read_relay_line("local", data)

    def test_an_error_keeps_the_id_it_echoed(self) -> None:
        """An error's id is kept as the relay echoed it (a row is found only by a real one)."""
        error = read_relay_line("local", line(type="error", error="busy", message="m", id="zz"))
        assert isinstance(error, ErrorLine) and error.id == "zz"


class TestShowing:
    @given(st.text())
    def test_nothing_hidden_reaches_the_screen(self, text: str) -> None:
        """Whatever a request's command holds, what is asked and its detail show no control,
        bidi or zero-width character."""
        item = read_relay_line("local", approval(command=text, cwd=text, reason=text))
        assert isinstance(item, Waiting)
        shown = [asked(item)] + [value for _label, value in detail(item, datetime.now(UTC))]
        for value in shown:
            assert all(unicodedata.category(c) not in HIDDEN for c in value)

    def test_the_whole_command_is_shown(self) -> None:
        """The detail never cuts a command, however long."""
        long = "x" * 5000 + " && rm -rf ~"
        item = read_relay_line("local", approval(command=long))
        assert isinstance(item, Waiting)
        assert ("command", long) in detail(item, datetime.now(UTC))

    def test_reports(self) -> None:
        """An answer's report says what happened, a lost one who won."""
        item = read_relay_line("local", approval())
        assert isinstance(item, Waiting)
        won = Answered(
            id="a1b2c3d4",
            kind=Kind.COMMAND,
            won=True,
            decision=Decision.SESSION,
            text=None,
            answer=None,
            outcome=Outcome.ANSWERED,
            result=None,
            reason=None,
            asker=AnswerFate.SETTLED,
            applied=False,
        )
        assert report(item, won) == "approved session (a1b2c3d4); the asker has it"
        lost = Answered(
            id="a1b2c3d4",
            kind=Kind.COMMAND,
            won=False,
            decision=Decision.ONCE,
            text=None,
            answer=Winner(decision="no", via="cli", user="bob\x1b[2J", answered_at=None),
            outcome=None,
            result=None,
            reason=None,
            asker=None,
            applied=False,
        )
        assert report(item, lost) == "a1b2c3d4: too late, already denied by bob⟨ESC⟩[2J via cli"

    @pytest.mark.parametrize(
        ("kind", "outcome", "decision", "words"),
        [
            ("command", "answered", "always", "approved always"),
            ("command", "answered", "no", "denied"),
            ("fact", "answered", "keep", "kept"),
            ("fact", "failed", "keep", "kept, ended failed"),
            ("question", "answered", "answer", "answered"),
            ("question", "answered", "decline", "declined"),
            ("question", "timed-out", None, "timed-out"),
            ("gadget\x1b[2J", "answered", "zap\x07", "zap⟨U+0007⟩"),
            ("command", "vanished\x1b", None, "vanished⟨ESC⟩"),
        ],
    )
    def test_a_history_entry_in_its_kinds_words(
        self, kind: str, outcome: str, decision: str | None, words: str
    ) -> None:
        """A history entry's ending reads as the status line words an answer (never
        `answered answer`); a kind, outcome or decision this build does not know is shown
        as the log wrote it, made visible."""
        entry = Ended(
            ts="", id="a1b2c3d4", kind=kind, outcome=outcome, decision=decision, asked="", by=None
        )
        assert ended_words(entry) == words


TUI = Path(__file__).resolve().parent.parent / "wisp" / "tui"


def _imports(path: Path) -> set[str]:
    """The modules *path* imports (from-imports by their module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


class TestTheTuiStandsOnTheRelay:
    @pytest.mark.parametrize("path", sorted(TUI.glob("*.py")), ids=lambda p: p.name)
    def test_only_the_relays_public_protocol(self, path: Path) -> None:
        """The TUI imports no private module of the relay, and reads and writes no JSON of
        its own: every line goes through wisp.relay.protocol (and it names its relays as
        wisp.relay.hosts does, the other public module)."""
        imported = _imports(path)
        public = {"wisp.relay.protocol", "wisp.relay.hosts"}
        private = {m for m in imported if m.startswith("wisp.relay.") and m not in public}
        assert not private, private
        assert "json" not in imported
        assert "wisp.relay" not in imported  # the command's module: the TUI never runs it
