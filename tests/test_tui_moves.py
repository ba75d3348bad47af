"""`wisp tui` as k9s and lazygit users expect it: j/k and the arrows move, g/G go to the
first and last row, `/` filters by text; the fact dialog names the kept facts a fact would
contradict; the help's key table stays a table when narrow. Driven headless with textual's
pilot over real `wisp relay` children."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import Asker as AskerProcess
from helpers import fact, kept_fact
from relayproc import write_config
from test_tui import WispTui, cells, said, screen_text, select, tui, until

from pending import Channel
from wisp import ApprovalGate, Asker, Notifier
from wisp.tui._app import HELP_KEYS
from wisp.tui._dialogs import FactDialog

COMMANDS = ("make deploy", "ls -la", "rm -rf build")


@pytest.fixture
def home(home: Path) -> Path:
    write_config(home, answer__waitSeconds=3)
    return home


@pytest.fixture
def asker(channel: Channel) -> Any:
    quiet = Notifier(channel.home, settings={"notifications.enabled": False})
    with Asker(channel, entry_point="approvals", client="agent", notifier=quiet) as asking:
        yield asking


def cursor(app: WispTui) -> int:
    return app._table().cursor_row


class TestMoves:
    def test_j_k_arrows_g_and_big_g(self, home: Path, asker: Asker) -> None:
        """j and ↓ move down, k and ↑ up, G to the last row and g to the first."""
        gate = ApprovalGate(asker, timeout_s=60)
        for text in COMMANDS:
            gate.file(text, "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == len(COMMANDS))
            app._table().move_cursor(row=0)
            await pilot.press("j")
            assert cursor(app) == 1
            await pilot.press("down")
            assert cursor(app) == 2
            await pilot.press("k")
            assert cursor(app) == 1
            await pilot.press("up")
            assert cursor(app) == 0
            await pilot.press("G")
            assert cursor(app) == len(COMMANDS) - 1
            await pilot.press("g")
            assert cursor(app) == 0

        tui(home, body)


class TestTextFilter:
    def test_slash_filters_as_typed_enter_keeps_esc_clears(self, home: Path, asker: Asker) -> None:
        """`/` then text shows only the rows whose text holds it (any case), the summary
        says `matching "…"`; Enter keeps the filter and j/k move again; `/` and Esc clear
        it and every row is back."""
        gate = ApprovalGate(asker, timeout_s=60)
        requests = [gate.file(text, "/srv") for text in COMMANDS]

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == len(COMMANDS))
            await pilot.press("slash", *"DEPLOY")
            await until(pilot, lambda: app._table().row_count == 1, "one row matching")
            assert cells(app, requests[0].id)[2].startswith("make deploy")
            summary = "\n".join(screen_text(app))
            assert 'matching "DEPLOY"' in summary, summary
            await pilot.press("enter")
            assert app._table().has_focus
            await pilot.press("j")  # a key of the rows again, not a letter of the filter
            assert app.text_filter == "DEPLOY"
            await pilot.press("slash", "escape")
            await until(pilot, lambda: app._table().row_count == len(COMMANDS), "all rows")
            assert app.text_filter == ""
            assert 'matching "' not in "\n".join(screen_text(app))

        tui(home, body)


class TestFactDialogSaysWhatItContradicts:
    def test_the_kept_fact_it_contradicts_is_named(self, home: Path, channel: Channel) -> None:
        """RED KITE is kept; a request to keep GREEN FINCH for the same subject and name
        opens a dialog that names RED KITE and its ID (`differs`), as `wisp show` does."""
        kept = kept_fact(home)
        with channel.server() as lock:
            request = fact(lock, value="GREEN FINCH")
            channel.file(request)

            async def body(app: WispTui, pilot: Any) -> None:
                await select(app, pilot, request.id)
                await pilot.press("enter")
                await until(pilot, lambda: isinstance(app.screen, FactDialog), "the dialog")
                # The dialog is painted after it is pushed: its text is waited for, not read
                # at once (under load it was read before it was drawn).
                differs = f"you keep release codename = RED KITE ({kept.id})"
                await until(pilot, lambda: differs in "\n".join(screen_text(app)), differs)
                assert "differs" in "\n".join(screen_text(app))

            tui(home, body, size=(100, 30))


class TestKeepingAContradictingFact:
    def test_the_status_line_says_the_clis_note(self, home: Path) -> None:
        """RED KITE is kept, and two requests to keep BLUE HERON wait (their asker has
        stopped). Dropping one says nothing of RED KITE (the control); keeping the other
        ends, as `wisp facts keep` does, with the note that both are kept now and how to
        forget the one that no longer holds."""
        kept = kept_fact(home)
        dead = AskerProcess(home, "fact", "fact")
        dropped, keeping = dead.filed()
        dead.kill()
        note = (
            f"Note: you also keep release codename = RED KITE ({kept.id}), which says "
            f"otherwise. If it no longer holds: wisp facts forget {kept.id}"
        )

        async def body(app: WispTui, pilot: Any) -> None:
            for request_id, key, word in ((dropped, "d", "dropped"), (keeping, "k", "kept")):
                await until(pilot, lambda r=request_id: cells(app, r)[-1] == "handed-over")
                await select(app, pilot, request_id)
                await pilot.press("enter")
                await until(pilot, lambda: isinstance(app.screen, FactDialog), "the dialog")
                await pilot.press(key)
                await until(pilot, lambda r=request_id, w=word: said(app, f"{w} ({r})"))
            assert not any(note in m for m in app.messages if f"({dropped})" in m)
            assert any(note in m for m in app.messages if f"kept ({keeping})" in m), app.messages

        tui(home, body)


class TestHelpWhenNarrow:
    def test_each_key_on_its_own_line_at_40_columns(self, home: Path) -> None:
        """At 40x15 the help's key table is no jumble: each row's keys are a line of their
        own, and what they do is on the lines below, indented."""

        async def body(app: WispTui, pilot: Any) -> None:
            await pilot.press("question_mark")
            await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "help")
            text = str(app.screen.query_one("#help").render())
            lines = [line.strip() for line in text.splitlines()]
            for keys, _does in HELP_KEYS:
                assert keys in lines, (keys, lines)

        tui(home, body, size=(40, 15))


class TestQuestionDialogWhenShort:
    def test_its_keys_stay_on_screen_at_40_by_15(self, home: Path, asker: Asker) -> None:
        """A question with options and free text at 40x15: the options, the text box and
        the whole key hint (Ctrl-C: decline, Esc: later) are on screen."""
        from wisp import QuestionAsker
        from wisp.tui._dialogs import QuestionDialog

        request = QuestionAsker(asker, timeout_s=60).file(
            "Which environment?", options=("staging", "production"), free_text=True
        )

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, QuestionDialog))
            await pilot.pause(0.2)
            text = "\n".join(screen_text(app))
            for words in ("1. staging", "2. production", "your answer", "Ctrl-C: decline"):
                assert words in text, (words, text)
            assert "Esc: later" in text, text

        tui(home, body, size=(40, 15))
