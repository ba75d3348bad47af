"""`wisp tui` driven headless with textual's pilot, over real `wisp relay` children: every
dialog, every key, a request answered elsewhere, an answer lost to another terminal, filters,
history, hosts, a narrow screen, notifications."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Asker as AskerProcess
from helpers import (
    claude_hook_call,
    command,
    fact,
    in_terminal,
    question,
    remove_tree,
    tool,
    wisp_command,
)
from relayproc import with_terminal, write_config
from textual.widgets import DataTable

from pending import Channel, ServerLock, State
from wisp import ApprovalGate, Asker, Notifier, QuestionAsker
from wisp._errors import install_hint
from wisp.tui import notify_sequence
from wisp.tui._app import HELP_KEYS, STALE_SHOWN_S, WispTui, default_relays, help_text
from wisp.tui._dialogs import CommandDialog, FactDialog, QuestionDialog

WAIT_S = 10.0  # every condition below is waited for at most this long
Body = Callable[[WispTui, Any], Awaitable[None]]
HELP_WIDTH = 78  # the help's columns in an 80-column terminal (its padding aside)
RELAY = ("relay", "--via", "tui")  # as `wisp tui` runs it
RELAY_ARGS = [sys.executable, "-m", "wisp", *RELAY]


@pytest.fixture
def home(home: Path) -> Path:
    write_config(home, answer__waitSeconds=3)
    return home


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    quiet = Notifier(channel.home, settings={"notifications.enabled": False})
    with Asker(channel, entry_point="approvals", client="agent", notifier=quiet) as asking:
        yield asking


def local(home: Path) -> list[tuple[str, list[str]]]:
    """This machine's relay as `wisp tui` starts it (`--via tui`), with a real controlling
    terminal as the person's would be (as tests/ctty.py gives it; started warm): without one
    it takes no answers."""
    return [("local", wisp_command(*RELAY, own_terminal=True))]


def cold_local(home: Path) -> list[tuple[str, list[str]]]:
    """:func:`local` started cold, under tests/ctty.py itself: its process tree is the test's
    to walk (:func:`relay_pid`)."""
    return [("local", with_terminal(RELAY_ARGS))]


def relay_pid(app: WispTui, host: str = "local") -> int:
    """The relay process itself (under tests/ctty.py's session, :func:`cold_local`): the last
    descendant."""
    link = next(link for link in app.links if link.host == host)
    assert link.popen is not None
    pid = link.popen.pid
    while True:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if not children:
            return pid
        pid = int(children[-1])


def tui(
    home: Path,
    body: Body,
    *,
    size: tuple[int, int] = (80, 24),
    relays: list[tuple[str, list[str]]] | None = None,
    notify: str | None = None,
) -> WispTui:
    """Run the TUI headless over real relays, wait until each is ready, run *body*."""
    app = WispTui(
        relays or local(home),
        env={**os.environ, "WISP_HOME": str(home)},
        notify_sequence=notify,
    )

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await asyncio.wait_for(
                asyncio.gather(*(app.ready[link.host].wait() for link in app.links)), WAIT_S
            )
            await body(app, pilot)

    asyncio.run(main())
    return app


async def until(
    pilot: Any, condition: Callable[[], Any], what: str = "condition", within: float = WAIT_S
) -> Any:
    """Let the app run until *condition* holds, within a bounded deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = condition()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}; messages: {pilot.app.messages}")
        await pilot.pause(0.02)


def said(app: WispTui, text: str) -> bool:
    return any(text in message for message in app.messages)


async def select(app: WispTui, pilot: Any, request_id: str) -> None:
    """Move the cursor to a request's row."""
    await until(pilot, lambda: f"local/{request_id}" in app._table().rows, f"row {request_id}")
    app._table().move_cursor(row=app._table().get_row_index(f"local/{request_id}"))
    await pilot.pause()


async def open_long(app: WispTui, pilot: Any, request_id: str, dialog_type: type) -> Any:
    """Open a request's dialog, once it overflows the screen: (the dialog, its scroll)."""
    await select(app, pilot, request_id)
    await pilot.press("enter")
    dialog = await until(pilot, lambda: isinstance(app.screen, dialog_type) and app.screen)
    scroll = dialog.query_one("#scroll")
    await until(pilot, lambda: scroll.max_scroll_y > 0, "an overflowing request")
    return dialog, scroll


async def approve_then_history(app: WispTui, pilot: Any, request_id: str, key: str) -> Any:
    """Approve a request with *key* in its dialog, then open the history: its screen."""
    await select(app, pilot, request_id)
    await pilot.press("enter", key)
    await until(pilot, lambda: said(app, "the asker has it"))
    await pilot.press("h")
    screen = app.history_screen
    assert screen is not None
    return screen


async def drawn(pilot: Any, dialog: Any, words: str) -> str:
    """The dialog's "more" line once it says *words*: it is drawn after the dialog's first
    refresh (and a refused approval's, after the next), so it is waited for, never read at
    once (under load it was read still empty)."""
    more = dialog.query_one("#more")
    said = await until(pilot, lambda: words in (text := str(more.render())) and text, words)
    return str(said)


def screen_text(app: WispTui) -> list[str]:
    """The screen's lines as textual's compositor paints them (what a terminal would show)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def cells(app: WispTui, request_id: str, host: str = "local") -> list[str]:
    return [str(cell) for cell in app._table().get_row(f"{host}/{request_id}")]


class TestMainView:
    def test_empty(self, home: Path, channel: Channel) -> None:
        """With nothing waiting it says so, and keeps working."""

        async def body(app: WispTui, pilot: Any) -> None:
            assert app._table().row_count == 0
            assert "0 waiting" in str(app.screen.query_one("#summary").render())
            assert "Nothing waits" in str(app.screen.query_one("#detail").render())
            await pilot.press("enter", "f", "w", "A", "i")
            assert said(app, "nothing to answer")

        tui(home, body)

    def test_rows_show_kind_age_asked_who_state(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """Each waiting request is a row: kind, age, what is asked, who asks, state; the
        detail pane shows the selected one whole."""
        requests = [command(server, "make deploy"), fact(server), question(server)]
        for request in requests:
            channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == 3)
            kind, age, asked, who, state = cells(app, requests[0].id)
            assert (kind, asked, who, state) == (
                "command",
                "make deploy",
                f"test {os.getpid()}",
                "filed",
            )
            assert re.fullmatch(r"\d+s", age)
            assert cells(app, requests[1].id)[2] == "release codename = BLUE HERON"
            await select(app, pilot, requests[2].id)
            detail = str(app.screen.query_one("#detail").render())
            assert "Which environment?" in detail and requests[2].id in detail

        tui(home, body)

    @pytest.mark.parametrize("width", [80, 40])
    def test_a_tool_rows_path_is_cut_in_its_middle(
        self, home: Path, channel: Channel, server: ServerLock, width: int
    ) -> None:
        """An Edit's row keeps the file's name, the part that tells one file from another:
        a long path is cut in its middle (`Edit /home/newbie/…/app/main.py`), never at its
        end (`Edit /home/newbie/src/app/mai…`); a short one is shown whole."""
        deep = "/home/newbie/src/" + "nested/" * 12 + "app/main.py"
        short, long = tool(server, "/srv/shop/a.py"), tool(server, deep)
        for request in (short, long):
            channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == 2)
            assert cells(app, short.id)[2] == "Edit /srv/shop/a.py"
            asked = cells(app, long.id)[2]
            column = next(w for key, _label, w in app._columns() if key == "asked")
            assert asked.startswith("Edit /h") and asked.endswith("/main.py"), asked
            assert "…" in asked and len(asked) == column, (asked, column)

        tui(home, body, size=(width, 24))

    def test_a_long_path_in_the_detail_pane_keeps_its_name(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """At 40x15 the detail pane cuts an Edit's long path in its middle, so the file's name
        is on screen beside the cut's marker (it showed `/home/ne … +65 more characters` and
        no name); the control: the marker says how much is cut."""
        deep = "/home/newbie/src/" + "nested/" * 40 + "app/server_main.py"
        request = tool(server, deep)
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            pane = app.screen.query_one("#detail")
            shown = await until(
                pilot, lambda: "more" in (text := str(pane.render())) and text, "the cut path"
            )
            assert "server_main.py" in shown, shown

        tui(home, body, size=(40, 15))

    def test_a_long_value_in_the_detail_pane_wraps_in_its_column(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """At 40 columns a command longer than its line goes on below its first line, in the
        values' column (11 columns in), never under the labels; a short one takes one line
        (the control)."""
        words = "make deploy ENV=production REGION=eu-west-1"
        short, long = command(server, "make deploy"), command(server, words)
        for request in (short, long):
            channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            pane = app.screen.query_one("#detail")
            await select(app, pilot, short.id)
            await until(pilot, lambda: "make deploy\n" in str(pane.render()), "one line")
            await select(app, pilot, long.id)
            await until(pilot, lambda: "REGION" in str(pane.render()), "the long one")
            lines = str(pane.render()).splitlines()
            first = next(n for n, line in enumerate(lines) if line.startswith("  command  "))
            rest = lines[first + 1 : lines.index(next(x for x in lines if "in  /" in x))]
            assert rest and all(line.startswith(" " * 11) and line[11] != " " for line in rest)
            shown = " ".join(line[11:].strip() for line in (lines[first], *rest))
            assert shown == words, lines

        tui(home, body, size=(40, 24))

    def test_hostile_text_is_shown_visibly(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """Control and bidi characters are shown as markers, markup as plain text."""
        request = command(server, "ls\x1b[2J\u202e [bold]x[/bold]\rrm -rf ~")
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            dialog = await until(
                pilot, lambda: isinstance(app.screen, CommandDialog) and app.screen
            )
            shown = str(dialog.query_one("#request").render())
            assert "ls⟨ESC⟩[2J⟨U+202E⟩ [bold]x[/bold]⟨CR⟩rm -rf ~" in shown
            assert "\x1b" not in shown and "\u202e" not in shown
            await pilot.press("escape")

        tui(home, body)

    def test_stale_in_place(self, home: Path, channel: Channel) -> None:
        """A command whose asker dies turns stale in its row and takes no answer; a fact
        whose asker dies is handed over and can still be answered."""
        dying = AskerProcess(home, "command", "fact")
        cmd_id, fact_id = dying.filed()

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == 2)
            dying.kill()
            await until(pilot, lambda: cells(app, cmd_id)[-1] == "stale", "stale")
            await until(pilot, lambda: cells(app, fact_id)[-1] == "handed-over", "handed over")
            await select(app, pilot, cmd_id)
            await pilot.press("enter")
            assert not isinstance(app.screen, CommandDialog)
            assert said(app, f"{cmd_id} is stale: it takes no answer here")
            await select(app, pilot, fact_id)
            await pilot.press("enter")
            assert isinstance(app.screen, FactDialog)
            # Its dialog says the answer is applied here (finding 9: the note was never drawn).
            note = str(app.screen.query_one("#note").render())
            assert "its asker has stopped: your answer is applied here" in note

        tui(home, body)

    def test_a_stale_row_says_why_then_leaves(self, home: Path, channel: Channel) -> None:
        """A stale row's detail says why it is stale, never "expires in …"; after
        STALE_SHOWN_S it leaves the list."""
        dying = AskerProcess(home, "command")
        (cmd_id,) = dying.filed()

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, cmd_id)
            dying.kill()
            await until(pilot, lambda: cells(app, cmd_id)[-1] == "stale", "stale")
            pane = app.screen.query_one("#detail")
            await until(pilot, lambda: "stale" in str(pane.render()), "the pane says stale")
            text = str(pane.render())
            assert "expires in" not in text and "stale: the program that asked" in text, text
            await until(
                pilot,
                lambda: f"local/{cmd_id}" not in app._table().rows,
                "the stale row to leave",
                within=STALE_SHOWN_S + WAIT_S,
            )

        tui(home, body)

    def test_times_shown_move_with_the_clock(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """The AGE column and the detail pane's "expires in" are redrawn as the clock
        moves (at each display deadline), not left as first drawn."""
        request = command(server, expires_in_s=600)
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            pane = app.screen.query_one("#detail")
            first_age = cells(app, request.id)[1]
            first = re.search(r"expires in \d+s", str(pane.render()))
            assert first is not None
            await until(
                pilot,
                lambda: cells(app, request.id)[1] != first_age,
                "the age to move",
            )
            await until(
                pilot,
                lambda: first.group() not in str(pane.render()),
                "the countdown to move",
            )
            assert re.search(r"expires in \d+s", str(pane.render()))

        tui(home, body)

    def test_a_resize_fits_the_columns_to_the_new_width(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """After a resize the columns fit the new width, not the one before (finding 4)."""
        request = command(server, "make deploy")
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            table = app._table()
            for width in (70, 120, 64):
                await pilot.resize_terminal(width, 24)
                await until(
                    pilot,
                    lambda w=width: (
                        sum(c.get_render_width(table) for c in table.ordered_columns) == w - 2
                    ),
                    f"columns fitted to {width}",
                )

        tui(home, body, size=(100, 24))

    def test_home_and_end_move_the_selection(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """Home and End select the first and the last row, so Enter then opens that one
        (finding 5)."""
        requests = [command(server, f"echo {n}") for n in range(3)]
        for request in requests:
            channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == 3)
            rows = [str(key.value) for key in app._table().rows]
            await select(app, pilot, requests[1].id)
            await pilot.press("end")
            assert app.selected() is app.items[rows[-1]]
            await pilot.press("home")
            assert app.selected() is app.items[rows[0]]
            await pilot.press("enter")
            dialog = await until(
                pilot, lambda: isinstance(app.screen, CommandDialog) and app.screen
            )
            assert dialog.item.key == rows[0]

        tui(home, body)

    def test_a_burst(self, home: Path, channel: Channel, server: ServerLock) -> None:
        """Three hundred requests arriving at once all show."""

        async def body(app: WispTui, pilot: Any) -> None:
            for _ in range(300):
                channel.file(command(server))
            await until(pilot, lambda: app._table().row_count == 300, "300 rows")
            assert "300 waiting" in str(app.screen.query_one("#summary").render())

        tui(home, body)

    def test_a_short_screen_keeps_the_rows_in_view(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """At 40x15 the detail pane gives way (cut, saying so) so the table still shows its
        rows: at full height it took every line but one, and no request was in view."""
        requests = [fact(server, value=f"BLUE HERON {n}") for n in range(3)]
        for request in requests:
            channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app._table().row_count == 3, "three rows")
            await pilot.pause()
            text = "\n".join(screen_text(app))
            assert text.count("release codename") >= 4, text  # three rows and the pane
            assert "cut here: Enter shows it whole" in text, text

        tui(home, body, size=(40, 15))

    def test_narrow(self, home: Path, channel: Channel, server: ServerLock) -> None:
        """At 40 columns the table keeps kind, age and what is asked; dialogs still open."""
        request = command(server, "make deploy")
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            table = app._table()
            assert [c.label.plain for c in table.ordered_columns] == ["KIND", "AGE", "ASKED"]
            kind, age, asked = cells(app, request.id)
            assert (kind, asked) == ("cmd", "make deploy") and re.fullmatch(r"\d+s", age)
            assert sum(c.get_render_width(table) for c in table.ordered_columns) <= 40
            await pilot.press("enter")
            assert isinstance(app.screen, CommandDialog)
            await pilot.press("escape")
            await pilot.resize_terminal(100, 30)
            await until(pilot, lambda: len(app._table().ordered_columns) == 5, "wide columns")

        tui(home, body, size=(40, 24))


class TestDialogs:
    def test_every_command_key(self, home: Path, asker: Asker, channel: Channel) -> None:
        """y s p a n and Ctrl-C each answer a command as they say, via tui; the asker has it."""
        gate = ApprovalGate(asker, timeout_s=60)
        keys = {"y": "once", "s": "session", "p": "project", "a": "always", "n": "no"}
        keys["ctrl+c"] = "no"
        requests = {key: gate.file(f"echo {n}", "/srv") for n, key in enumerate(keys)}

        async def body(app: WispTui, pilot: Any) -> None:
            for key, request in requests.items():
                await select(app, pilot, request.id)
                await pilot.press("enter")
                assert isinstance(app.screen, CommandDialog)
                await pilot.press(key)
                if key == "n":  # the reason box: left empty, Enter denies
                    await pilot.press("enter")
                await until(pilot, lambda r=request: said(app, f"({r.id}); the asker has it"))
            assert app._table().row_count == 0

        tui(home, body)
        for key, request in requests.items():
            answer = channel.status(request.id).answer
            assert answer is not None and (answer.decision, answer.via) == (keys[key], "tui")

    def test_fact_keys(self, home: Path, channel: Channel) -> None:
        """k keeps (applied here, its asker having stopped: facts.json has it), d drops, and
        Ctrl-C drops as it refuses a command."""
        dead = AskerProcess(home, "fact", "fact", "fact")
        kept, dropped, refused = dead.filed()
        dead.kill()

        async def body(app: WispTui, pilot: Any) -> None:
            for request_id, key, word in (
                (kept, "k", "kept"),
                (dropped, "d", "dropped"),
                (refused, "ctrl+c", "dropped"),
            ):
                await until(pilot, lambda r=request_id: cells(app, r)[-1] == "handed-over")
                await select(app, pilot, request_id)
                await pilot.press("enter")
                assert isinstance(app.screen, FactDialog)
                await pilot.press(key)
                await until(pilot, lambda r=request_id, w=word: said(app, f"{w} ({r})"))
            assert said(app, "applied here")

        tui(home, body)
        facts = json.loads((home / "facts.json").read_text())["facts"]
        assert [(f["request"], f["via"]) for f in facts] == [(kept, "tui")]
        decisions = {i: channel.status(i).settled for i in (kept, dropped, refused)}
        assert [s.decision if s else None for s in decisions.values()] == ["keep", "drop", "drop"]

    def test_question_keys(self, home: Path, asker: Asker, channel: Channel) -> None:
        """A question's options are picked by number; free text is typed; an empty answer is
        not sent; Ctrl-C declines."""
        ask = QuestionAsker(asker, timeout_s=60)
        picked = ask.file("Which environment?", options=("staging", "production"))
        typed = ask.file("Release name?")
        declined = ask.file("Anything else?")

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, picked.id)
            await pilot.press("enter")
            assert isinstance(app.screen, QuestionDialog)
            await pilot.press("2")
            # Which option the number picked, as `wisp questions answer ID 2` says it.
            await until(pilot, lambda: said(app, f'answered "production" (option 2) ({picked.id})'))
            await select(app, pilot, typed.id)
            await pilot.press("enter", "enter")  # empty: nothing is sent
            assert isinstance(app.screen, QuestionDialog)
            await pilot.press(*"blue heron", "enter")
            await until(pilot, lambda: said(app, f'answered "blue heron" ({typed.id})'))
            await select(app, pilot, declined.id)
            await pilot.press("enter", "ctrl+c")
            await until(pilot, lambda: said(app, f"declined ({declined.id})"))

        tui(home, body)
        answers = [channel.status(r.id).answer for r in (picked, typed, declined)]
        assert [(a.decision, a.text) for a in answers if a] == [
            ("answer", "production"),
            ("answer", "blue heron"),
            ("decline", None),
        ]

    def test_the_dialogs_expires_in_moves_with_the_clock(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """An open dialog's own "expires in" counts down at the display deadlines, as the
        detail pane's does, instead of staying as the dialog was opened."""
        request = QuestionAsker(asker, timeout_s=600).file("Which?", options=("a", "b"))

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            dialog = await until(
                pilot, lambda: isinstance(app.screen, QuestionDialog) and app.screen
            )
            shown = dialog.query_one("#request")
            first = re.search(r"expires in \d+s", str(shown.render()))
            assert first is not None
            await until(
                pilot, lambda: first.group() not in str(shown.render()), "the countdown to move"
            )
            assert re.search(r"expires in \d+s", str(shown.render()))
            assert app.screen is dialog  # still open: redrawn in place

        tui(home, body)

    def test_escape_leaves_it_waiting(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """Esc closes a dialog without answering."""
        request = command(server)
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter", "escape")
            assert not isinstance(app.screen, CommandDialog)

        tui(home, body)
        assert channel.status(request.id).state is State.FILED

    def test_answered_elsewhere_closes_the_dialog(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """A request answered from another terminal closes its open dialog, saying who in
        the CLI's words: "denied by you", not the decision and the login name."""
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            assert isinstance(app.screen, CommandDialog)
            code, _out = await asyncio.to_thread(in_terminal, "approvals", "deny", request.id)
            assert code == 0
            await until(pilot, lambda: not isinstance(app.screen, CommandDialog), "closed")
            assert said(app, f"{request.id}: denied by you via cli")
            assert f"local/{request.id}" not in app._table().rows

        tui(home, body)

    def test_a_question_answered_elsewhere_says_the_answer(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """A question answered from another terminal closes with what was answered (never
        "answered answer"), and by you."""
        request = QuestionAsker(asker, timeout_s=60).file("Which?", options=("staging", "prod"))

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            assert isinstance(app.screen, QuestionDialog)
            code, _out = await asyncio.to_thread(
                in_terminal, "questions", "answer", request.id, "staging"
            )
            assert code == 0
            await until(pilot, lambda: not isinstance(app.screen, QuestionDialog), "closed")
            assert said(app, f'{request.id}: answered "staging" by you via cli')
            assert not said(app, "answered answer")

        tui(home, body)

    def test_an_answer_lost_to_another_terminal(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """The person answers here while another terminal has already answered (the relay
        had not yet heard): the TUI is told it was too late, and by whom."""
        request = command(server)
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            relay = relay_pid(app)
            os.kill(relay, signal.SIGSTOP)  # the relay hears nothing until it resumes
            try:
                code, _out = await asyncio.to_thread(
                    in_terminal, "approvals", "approve", request.id, "--scope", "always"
                )
                assert code == 0
                await pilot.press("y")
            finally:
                os.kill(relay, signal.SIGCONT)
            await until(pilot, lambda: said(app, "too late, already approved always by you"))
            assert said(app, "via cli")
            assert f"local/{request.id}" not in app._table().rows

        tui(home, body, relays=cold_local(home))
        answer = channel.status(request.id).answer
        assert answer is not None and (answer.decision, answer.via) == ("always", "cli")


LONG_COMMAND = "echo " + "A" * 2000 + " ; rm -rf ~"


class TestLongRequests:
    """A request longer than the screen (finding 3): nothing is approved unseen, and the
    detail pane never cuts without saying so."""

    @pytest.mark.parametrize("size", [(80, 24), (40, 24)])
    def test_yes_waits_until_the_whole_command_was_seen(
        self, home: Path, asker: Asker, channel: Channel, size: tuple[int, int]
    ) -> None:
        """A 2,000-character command ending in `; rm -rf ~`: the dialog says there is more,
        refuses y (and s, p, a) until the person has scrolled to the end, where the tail, the
        directory, the asker and the ID are; then y approves. n is never held back."""
        request = ApprovalGate(asker, timeout_s=60).file(LONG_COMMAND, "/srv/shop")

        async def body(app: WispTui, pilot: Any) -> None:
            dialog, scroll = await open_long(app, pilot, request.id, CommandDialog)
            await drawn(pilot, dialog, "more below")
            for key in ("y", "s", "p", "a"):
                await pilot.press(key)
                assert app.screen is dialog, key
            await drawn(pilot, dialog, "not yet: ")
            assert channel.status(request.id).state is State.FILED
            shown = str(dialog.query_one("#request").render())
            assert "; rm -rf ~" in shown.replace("\n", "")
            for part in ("/srv/shop", "asked by", request.id):
                assert part in shown
            await pilot.press("end")
            await until(pilot, lambda: scroll.scroll_y >= scroll.max_scroll_y, "the end")
            await pilot.press("y")
            await until(pilot, lambda: said(app, f"approved once ({request.id})"))

        tui(home, body, size=size)
        answer = channel.status(request.id).answer
        assert answer is not None and answer.decision == "once"

    def test_a_one_line_command_at_40_by_15_needs_no_scrolling(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """At 40x15 a long command must still be scrolled through before y is taken (the
        control), and its "more below" takes one line; a one-line `make deploy` fits its
        dialog whole — down to its ID, nothing to scroll — and y approves it at once."""
        gate = ApprovalGate(asker, timeout_s=60)
        long, short = gate.file(LONG_COMMAND, "/srv/shop"), gate.file("make deploy", "/srv/shop")

        async def body(app: WispTui, pilot: Any) -> None:
            dialog, _scroll = await open_long(app, pilot, long.id, CommandDialog)
            more = await drawn(pilot, dialog, "more below")
            assert len(more.splitlines()) == 1 and len(more) <= 36, more
            await pilot.press("y")
            await drawn(pilot, dialog, "not yet")
            assert app.screen is dialog
            await pilot.press("escape")
            await select(app, pilot, short.id)
            await pilot.press("enter")
            dialog = await until(
                pilot, lambda: isinstance(app.screen, CommandDialog) and app.screen
            )
            scroll = dialog.query_one("#scroll")
            await until(pilot, lambda: short.id in "\n".join(screen_text(app)), "its ID")
            assert scroll.max_scroll_y == 0 and not dialog.query_one("#more").display
            await pilot.press("y")
            await until(pilot, lambda: said(app, f"approved once ({short.id})"), "approved")

        tui(home, body, size=(40, 15))
        answer = channel.status(short.id).answer
        assert answer is not None and answer.decision == "once"

    @staticmethod
    def approved_at_the_end(
        home: Path,
        asker: Asker,
        channel: Channel,
        typed: Callable[[Any, Any, Any], Awaitable[None]],
    ) -> None:
        """A long command's dialog, *typed*(pilot, dialog, scroll) into it: it must end
        approved once, at the end of the scroll."""
        request = ApprovalGate(asker, timeout_s=60).file(LONG_COMMAND, "/srv/shop")

        async def body(app: WispTui, pilot: Any) -> None:
            dialog, scroll = await open_long(app, pilot, request.id, CommandDialog)
            await typed(pilot, dialog, scroll)
            await until(pilot, lambda: said(app, f"approved once ({request.id})"), "approved")

        tui(home, body)
        answer = channel.status(request.id).answer
        assert answer is not None and answer.decision == "once"

    def test_yes_typed_while_scrolling_to_the_end_is_taken_there(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """End then y at once, while the view still scrolls: the y is taken once the end is
        on screen (never dropped without a word); a refusal there would say why."""

        async def typed(pilot: Any, dialog: Any, scroll: Any) -> None:
            # A smooth scroll on its way down (as a wheel or a held PgDn makes), and y typed
            # meanwhile: its binding's action, as the key runs it (pilot.press would wait
            # for the animation to end first). Slow enough to see the y held on a busy box.
            scroll.scroll_end(animate=True, duration=3.0)
            await until(pilot, lambda: 0 < scroll.scroll_y < scroll.max_scroll_y, "scrolling")
            dialog.action_answer("once")
            more = dialog.query_one("#more")
            await until(pilot, lambda: "taken once it is there" in str(more.render()), "held")

        self.approved_at_the_end(home, asker, channel, typed)

    def test_end_and_yes_typed_at_once_take_the_yes_at_the_end(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """End and y in one read (as a terminal sends `End y` typed fast), before the scroll
        has even begun: the y is held and taken once the end is on screen, never dropped."""

        async def typed(pilot: Any, dialog: Any, scroll: Any) -> None:
            # Both keys' actions in one go, as textual runs two keys of one read: the
            # scroll End asks for starts only after the next refresh.
            scroll.action_scroll_end()
            dialog.action_answer("once")
            assert scroll.scroll_y == 0

        self.approved_at_the_end(home, asker, channel, typed)

    def test_the_fact_dialog_says_its_own_keys(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """A long fact's dialog says what k does ("before keeping it (k)"), never a
        command's "answering yes" or "approved"."""
        request = fact(server, value="B" * 3000)
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            dialog, _scroll = await open_long(app, pilot, request.id, FactDialog)
            more = await drawn(pilot, dialog, "before keeping it (k)")
            assert "yes" not in more
            await pilot.press("k")
            refused = await drawn(pilot, dialog, "not yet: scroll to the end")
            assert "before keeping it (k)" in refused and "approved" not in refused

        tui(home, body, size=(80, 20))

    def test_a_long_question_never_speaks_of_approving(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """A question that does not fit says there is more to read, never "before approving
        it" (a question has nothing to approve, and its answers are never held back)."""
        request = QuestionAsker(asker, timeout_s=60).file("Which? " + "why " * 400)

        async def body(app: WispTui, pilot: Any) -> None:
            dialog, _scroll = await open_long(app, pilot, request.id, QuestionDialog)
            more = await drawn(pilot, dialog, "more below")
            assert "approv" not in more, more

        tui(home, body, size=(40, 15))

    def test_no_is_never_held_back(self, home: Path, asker: Asker, channel: Channel) -> None:
        """Refusing needs no scrolling: n and Enter answer at once, however long the
        command."""
        request = ApprovalGate(asker, timeout_s=60).file(LONG_COMMAND, "/srv/shop")

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter", "n", "enter")
            await until(pilot, lambda: said(app, f"denied ({request.id})"))

        tui(home, body)

    @pytest.mark.parametrize("size", [(80, 24), (40, 24)])
    def test_the_detail_pane_marks_a_cut(
        self, home: Path, asker: Asker, size: tuple[int, int]
    ) -> None:
        """The detail pane shows a long command's head with a marker saying how much more
        there is and that Enter shows it whole — and still the request's ID."""
        request = ApprovalGate(asker, timeout_s=60).file(LONG_COMMAND, "/srv/shop")

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            pane = app.screen.query_one("#detail")
            marker = "more characters: Enter shows the whole request"
            # Read as words: at 40 columns the marker wraps in the values' column.
            text = await until(
                pilot, lambda: marker in " ".join((shown := str(pane.render())).split()) and shown
            )
            assert "rm -rf" not in text  # cut, and said so
            assert request.id in text or "cut here: Enter shows it whole" in text
            assert len(text.splitlines()) <= 10

        tui(home, body, size=size)


# A relay that sends what an old or hostile one might: a question with neither options nor
# free text (finding 2). It reports each answer it is sent as won.
ODD_RELAY = """
import json, sys
def out(line):
    sys.stdout.write(json.dumps(line) + "\\n"); sys.stdout.flush()
sys.stdin.readline()
out({"type": "approval", "kind": "question", "id": "aaaaaaaaaaaaaaa2", "state": "filed",
     "question": "pick?", "options": None, "freeText": False,
     "server": {"id": "s1", "pid": 1, "client": "odd", "alive": True}})
out({"type": "ready", "effects": [], "waiting": 1})
for line in sys.stdin:
    got = json.loads(line)
    if got.get("type") == "answer":
        out({"type": "answered", "id": got["id"], "won": True, "applied": False,
             "decision": got["decision"], "text": got.get("text"), "asker": "settled"})
"""


class TestOddRelays:
    def test_a_question_with_neither_options_nor_free_text(self, home: Path) -> None:
        """A question line with no options and freeText false (or null) opens a dialog with
        a text box, and the answer goes back; nothing crashes."""
        relays = [("odd", [sys.executable, "-c", ODD_RELAY])]

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: "odd/aaaaaaaaaaaaaaa2" in app._table().rows)
            await pilot.press("enter")
            dialog = await until(
                pilot, lambda: isinstance(app.screen, QuestionDialog) and app.screen
            )
            assert dialog.query("#text") and not dialog.query("#options")
            await pilot.press("x", "enter")
            await until(pilot, lambda: said(app, 'answered "x" (aaaaaaaaaaaaaaa2)'))

        app = tui(home, body, relays=relays)
        assert app.return_code in (0, None)

    def test_a_crash_exits_2_with_a_message(
        self, home: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Should the application stop on an error of its own, `wisp tui` exits 2 with a
        message saying what to do — never 0."""
        from wisp.tui import EXIT_CRASHED, exit_status

        def boom() -> None:
            raise RuntimeError("a bug")

        app = WispTui(local(home), env={**os.environ, "WISP_HOME": str(home)})

        async def main() -> None:
            async with app.run_test(size=(80, 24)) as pilot:
                app.call_later(boom)
                await pilot.pause(0.5)

        with pytest.raises(RuntimeError):
            asyncio.run(main())
        assert exit_status(app) == EXIT_CRASHED
        assert "stopped on an internal error" in capsys.readouterr().err

        async def quit_at_once(app: WispTui, pilot: Any) -> None:
            await pilot.press("q")

        assert exit_status(tui(home, quit_at_once)) == 0


DENY_FORCE_PUSH = """\
[[rule]]
name = "no-force-push"
action = "deny"
command = ["git", "push", "--force", "*"]
match = ["git push --force"]
not_match = ["git push origin main"]
"""


class TestDecided:
    def test_calls_decided_without_asking_are_shown_quietly(
        self, home: Path, channel: Channel, server: ServerLock, tmp_path: Path
    ) -> None:
        """Calls a real `wisp hook claude-code` decided by rule are shown in the strip under
        the rows as they are decided — `allowed by rule read-only: git status — claude-code`,
        and the one a deny rule denied, in bold — while the request waiting keeps its row,
        the selection and the focus, and still opens its dialog (the control); `d` hides the
        strip and shows it again."""
        project = tmp_path / "project"
        (project / ".git").mkdir(parents=True)
        (home / "policy.toml").write_text(DENY_FORCE_PUSH)
        (home / "policy.toml").chmod(0o600)
        waiting = command(server, "make deploy")
        channel.file(waiting)

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, waiting.id)
            strip = app.screen.query_one("#decided")
            assert not strip.display  # nothing decided yet: no strip at all
            said = await asyncio.to_thread(claude_hook_call, project, "git status")
            assert said == "allow"
            denied = await asyncio.to_thread(claude_hook_call, project, "git push --force")
            assert denied == "deny"
            lines = await until(
                pilot, lambda: len(app.decided_lines()) == 2 and app.decided_lines()
            )
            assert "allowed by rule read-only: git status — claude-code" in lines[0].plain
            assert "denied by rule no-force-push: git push --force" in lines[1].plain
            assert str(lines[1].style) == "bold" and str(lines[0].style) == ""
            shown = await until(
                pilot, lambda: any("rule read-only: git status" in x for x in screen_text(app))
            )
            assert shown
            assert app.focused is app._table() and app.selected() is not None
            assert app.selected().id == waiting.id  # type: ignore[union-attr]
            await pilot.press("d")
            await until(pilot, lambda: not strip.display, "the strip hidden")
            assert not any("rule read-only" in line for line in screen_text(app))
            await pilot.press("d")
            await until(pilot, lambda: strip.display, "the strip shown again")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, CommandDialog), "the dialog")

        tui(home, body, size=(100, 30))


class TestKeys:
    def test_filters(self, home: Path, channel: Channel, server: ServerLock) -> None:
        """f cycles the kinds shown; w shows only the selected request's asker, and says so
        by the asker (`showing from test PID`, never a host as "asker local"); again shows
        all."""
        other = channel.server().acquire()
        mine = [command(server), fact(server), question(server)]
        theirs = command(other)
        for request in [*mine, theirs]:
            channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            table = app._table()
            await until(pilot, lambda: table.row_count == 4)
            counts = []
            for _ in range(5):  # command, fact, question, tool, then all again
                await pilot.press("f")
                counts.append(app._table().row_count)
            assert counts == [2, 1, 1, 0, 4]
            await select(app, pilot, theirs.id)
            await pilot.press("w")
            assert app._table().row_count == 1
            summary = app.screen.query_one("#summary")
            await until(pilot, lambda: f"showing from test {os.getpid()}" in str(summary.render()))
            assert "local" not in str(summary.render())
            await pilot.press("w")
            assert app._table().row_count == 4

        tui(home, body)
        other.release()

    def test_answer_all_from_one_asker_asks_each(
        self, home: Path, asker: Asker, channel: Channel, server: ServerLock
    ) -> None:
        """A opens a dialog per request of the selected one's asker, in turn ("1 of 3");
        Esc stops, leaving the rest waiting."""
        gate = ApprovalGate(asker, timeout_s=60)
        ours = [gate.file(f"echo {n}", "/srv") for n in range(3)]
        stranger = command(server)
        channel.file(stranger)

        # The dialogs come in the table's order: by filing time, then ID, and two of ours
        # may share a millisecond. So each is checked to be one of ours not asked yet.
        asked: list[str] = []

        async def body(app: WispTui, pilot: Any) -> None:
            def next_of_ours() -> bool:
                screen = app.screen
                if not isinstance(screen, CommandDialog) or screen.item.id in asked:
                    return False
                assert screen.item.id in {r.id for r in ours}
                asked.append(screen.item.id)
                return True

            await select(app, pilot, ours[1].id)
            await pilot.press("A")
            assert next_of_ours()
            assert isinstance(app.screen, CommandDialog) and app.screen.series == (
                "1 of 3 from agent pid " + str(os.getpid())
            )
            await pilot.press("y")
            await until(pilot, next_of_ours, "the second dialog")
            assert app.screen.series is not None and app.screen.series.startswith("2 of 3")
            await pilot.press("n", "enter")
            await until(pilot, next_of_ours, "the third dialog")
            await pilot.press("escape")
            assert said(app, "stopped")
            await until(pilot, lambda: app._table().row_count == 2)

        tui(home, body)
        decisions = [channel.status(request_id).answer for request_id in asked]
        assert [a.decision if a else None for a in decisions] == ["once", "no", None]
        assert channel.status(stranger.id).answer is None

    def test_history_detail_and_quit(self, home: Path, asker: Asker) -> None:
        """h shows what ended (from the audit log, through the relay); i hides and shows the
        detail pane; q quits and the relay ends."""
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            screen = await approve_then_history(app, pilot, request.id, "a")
            await until(pilot, lambda: screen.rows, "history")
            entry = screen.rows[0][2]
            assert (entry.id, entry.outcome, entry.decision, entry.by) == (
                request.id,
                "answered",
                "always",
                "tui",
            )
            await pilot.press("escape")
            detail = app.screen.query_one("#detail")
            await pilot.press("i")
            assert not detail.display
            await pilot.press("i")
            assert detail.display
            await pilot.press("q")

        app = tui(home, body)
        process = app.links[0].popen
        assert process is not None and process.returncode == 0

    def test_history_words_each_ending_by_its_kind(self, home: Path, asker: Asker) -> None:
        """The history says how each request ended in its kind's words, as the status line
        does: a question answered from the CLI reads `answered`, never `answered answer`; a
        command approved here reads `approved once`."""
        question_ = QuestionAsker(asker, timeout_s=60).file("Which?", options=("staging", "b"))
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            code, _out = await asyncio.to_thread(
                in_terminal, "questions", "answer", question_.id, "staging"
            )
            assert code == 0
            await until(pilot, lambda: f"local/{question_.id}" not in app._table().rows)
            screen = await approve_then_history(app, pilot, request.id, "y")
            table = screen.query_one("#history", DataTable)
            await until(pilot, lambda: table.row_count == 2, "both in the history")
            rows = [[str(c) for c in table.get_row_at(n)] for n in range(2)]
            assert [row[2:4] for row in rows] == [
                ["command", "approved once"],
                ["question", "answered"],
            ]

        tui(home, body)

    def test_a_long_command_in_the_history_leaves_room_for_by(
        self, home: Path, asker: Asker
    ) -> None:
        """At 80 columns a long command's ASKED is cut to the room left, so the BY column
        (where the answer came from) stays on screen."""
        request = ApprovalGate(asker, timeout_s=60).file("echo step && " * 20, "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            screen = await approve_then_history(app, pilot, request.id, "y")
            table = screen.query_one("#history", DataTable)
            await until(pilot, lambda: table.row_count == 1, "the history")
            await pilot.pause()
            lines = screen_text(app)
            assert lines[1].rstrip().endswith("BY"), lines[1]
            assert lines[2].rstrip().endswith("tui"), lines[2]

        tui(home, body)

    def test_ctrl_c_quits_from_the_list(self) -> None:
        """Ctrl-C on the list quits (in a dialog it refuses instead: see TestDialogs)."""
        app = WispTui()

        async def main() -> None:
            async with app.run_test() as pilot:
                await pilot.press("ctrl+c")
                await pilot.pause()
                assert not app.is_running

        asyncio.run(main())
        assert app.return_code == 0

    def test_a_history_that_comes_before_its_screen_is_drawn(self) -> None:
        """A relay's history may arrive before the history screen is up: it is drawn then."""
        from wisp.relay.protocol import Ended, HistoryReply
        from wisp.tui._app import HistoryScreen

        entry = Ended(
            ts="2026-11-30T03:39:16.204Z",
            id="a1b2c3d4",
            kind="fact",
            outcome="answered",
            decision="keep",
            asked="release codename = \x1b[2J BLUE HERON",
            by="tui",
        )
        app = WispTui()

        async def main() -> None:
            async with app.run_test() as pilot:
                screen = HistoryScreen()
                screen.add("local", HistoryReply(entries=(entry,)))
                await app.push_screen(screen)
                await pilot.pause()
                row = [str(c) for c in screen.query_one("#history", DataTable).get_row_at(0)]
                assert row[1:] == [
                    "local",
                    "fact",
                    "kept",
                    "release codename = ⟨ESC⟩[2J BLUE HERON",
                    "tui",
                ]

        asyncio.run(main())


class TestHosts:
    def test_each_host_has_its_relay(
        self, home: Path, channel: Channel, server: ServerLock, tmp_path: Path
    ) -> None:
        """--host runs a relay per host (here a local command stands in for ssh): each
        request shows its host, and an answer goes to that host's channel."""
        alpha = tmp_path / "alpha"
        with Channel.open(alpha) as far, far.server() as far_lock:
            there = command(far_lock, "make deploy-alpha")
            far.file(there)
            here = command(server, "make deploy-here")
            channel.file(here)
            template = shlex.join(
                with_terminal(["env", f"WISP_HOME={tmp_path}/{{host}}", *RELAY_ARGS])
            )
            relays = default_relays(["alpha"], template)

            async def body(app: WispTui, pilot: Any) -> None:
                await until(pilot, lambda: app._table().row_count == 2)
                assert cells(app, there.id, "alpha")[4] == "alpha"
                assert cells(app, here.id)[4] == "local"
                app._table().move_cursor(row=app._table().get_row_index(f"alpha/{there.id}"))
                await pilot.press("enter", "n", "enter")
                await until(pilot, lambda: said(app, f"denied ({there.id})"))

            tui(home, body, relays=relays)
            answer = far.status(there.id).answer
            assert answer is not None and (answer.decision, answer.via) == ("no", "tui")
            assert channel.status(here.id).answer is None

    def test_a_host_through_a_terminal_like_ssh_tt(
        self, home: Path, channel: Channel, tmp_path: Path
    ) -> None:
        """As `ssh -tt HOST wisp relay --via tui` runs it (tests/fakessh.py stands in for
        ssh and sshd: the relay's stdin, stdout and controlling terminal are a pty), the far
        relay sets its terminal raw, its lines arrive whole, it takes the TUI's answer, and
        it ends when the TUI quits."""
        far_home = tmp_path / "far"
        with Channel.open(far_home) as far, far.server() as far_lock:
            there = command(far_lock, "make deploy-far")
            far.file(there)
            fake_ssh = str(Path(__file__).with_name("fakessh.py"))
            template = shlex.join(
                [sys.executable, fake_ssh, "{host}", "env", f"WISP_HOME={far_home}", *RELAY_ARGS]
            )
            relays = [*local(home), *default_relays(["far"], template)[1:]]

            async def body(app: WispTui, pilot: Any) -> None:
                await until(pilot, lambda: f"far/{there.id}" in app._table().rows)
                app._table().move_cursor(row=app._table().get_row_index(f"far/{there.id}"))
                await pilot.press("enter", "y")
                await until(pilot, lambda: said(app, f"approved once ({there.id})"))

            app = tui(home, body, relays=relays)
            answer = far.status(there.id).answer
            assert answer is not None and (answer.decision, answer.via) == ("once", "tui")
            assert not [m for m in app.messages if "skipped a relay line" in m]
            far_link = next(link for link in app.links if link.host == "far")
            assert far_link.popen is not None and far_link.popen.returncode == 0

    def test_a_relay_that_dies_can_be_started_again(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """A relay killed under the TUI: it says so, with what to do (r), and r starts it
        again, which brings its requests back."""
        request = command(server, "make deploy")
        channel.file(request)

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: f"local/{request.id}" in app._table().rows)
            os.kill(relay_pid(app), signal.SIGKILL)
            await until(pilot, lambda: app.hosts["local"] == "down", "the relay down")
            assert said(app, "r starts it again")
            assert f"local/{request.id}" not in app._table().rows
            await pilot.press("r")
            await until(pilot, lambda: app.hosts["local"] == "ready", "the relay again")
            await until(pilot, lambda: f"local/{request.id}" in app._table().rows, "its row")

        tui(home, body, relays=cold_local(home))

    def test_a_filter_stays_in_the_summary_beside_a_failed_host(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """At 80 columns, with a host down and `w` showing one asker, the summary still says
        which asker is shown (the count per kind gives way), and the failed host leads it."""
        request = question(server)
        channel.file(request)
        relays = [*local(home), ("far", [sys.executable, "-c", "raise SystemExit(3)"])]

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("w")
            await pilot.pause()
            summary = screen_text(app)[0].strip()
            assert summary.startswith("far down · 1 waiting"), summary
            assert summary.endswith(f"showing from {app.asker_label}"), summary
            assert app.asker_label.endswith(" on local")

        tui(home, body, relays=relays)

    @pytest.mark.parametrize(
        ("hosts", "says"),
        [
            (["local"], "names this machine's relay"),
            (["alpha", "alpha"], "--host alpha is given twice"),
        ],
    )
    def test_local_or_a_repeated_host_is_refused(
        self, home: Path, hosts: list[str], says: str
    ) -> None:
        """`--host local` (this machine's own label) or a host given twice would make two
        rows of one label, answers going to the first: refused before anything runs."""
        argv = [arg for host in hosts for arg in ("--host", host)]
        done = subprocess.run(
            wisp_command("tui", *argv, "--relay-command", "false {host}"),
            capture_output=True,
            text=True,
            env={**os.environ, "WISP_HOME": str(home)},
            timeout=60,
        )
        assert done.returncode == 2 and says in done.stderr, done.stderr

    def test_a_relay_that_fails(self, home: Path, channel: Channel) -> None:
        """A host whose relay cannot run is shown down, with why; the rest works."""
        relays = [
            *local(home),
            ("beta", [sys.executable, "-c", "import sys; sys.exit('no route to beta')"]),
        ]

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app.hosts["beta"] == "down")
            assert said(app, "beta: relay ended (exited 1: no route to beta)")
            assert "beta down" in str(app.screen.query_one("#summary").render())

        tui(home, body, relays=relays)

    @pytest.mark.parametrize("width", [80, 60, 40])
    def test_a_failed_host_and_r_are_on_a_narrow_screen(self, home: Path, width: int) -> None:
        """At 80, 60 and 40 columns a host that is down leads the summary line, the status
        line says why in full (wrapped), and the footer keeps `q quit`, `? help` and
        `r restart`; r is in the footer only while a relay is down."""
        relays = [
            *local(home),
            ("beta", [sys.executable, "-c", "import sys; sys.exit('no route to beta')"]),
        ]

        async def body(app: WispTui, pilot: Any) -> None:
            await until(pilot, lambda: app.hosts["beta"] == "down")
            await until(pilot, lambda: "r restart" in screen_text(app)[-1], "r in the footer")
            lines = screen_text(app)
            assert lines[0].startswith(" beta down · ")
            assert "q quit" in lines[-1] and "? help" in lines[-1]
            # Whole, to its last words (it was cut at three lines, issue 40), however wrapped.
            assert re.search(r"r\s+starts\s+it\s+again\.", " ".join(lines)), lines

        tui(home, body, relays=relays, size=(width, 24))

    def test_r_is_not_in_the_footer_while_every_relay_runs(self, home: Path) -> None:
        """With every relay up the footer has no `r restart`; r still says why it does
        nothing."""

        async def body(app: WispTui, pilot: Any) -> None:
            await pilot.pause()
            assert "restart" not in screen_text(app)[-1]
            await pilot.press("r")
            assert said(app, "every relay is running")

        tui(home, body)

    def test_a_host_name_is_never_an_option(self) -> None:
        """A host that ssh could read as an option is refused before anything runs."""
        from wisp.relay.hosts import LinkError

        with pytest.raises(LinkError):
            default_relays(["-oProxyCommand=evil"], "ssh -- {host} wisp relay")


class TestChannelRemoved:
    def test_a_request_filed_after_the_channel_was_removed_appears(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """`rm -rf $WISP_HOME/pending` under the TUI: its rows go (or, where the watcher
        caught the removal half done — the asker's lock gone, its request not yet — turn
        stale, which is what that moment showed: either way no longer answerable), and a
        request filed once an asker has made the channel again appears, with no restart."""
        before = command(server, "make before")
        channel.file(before)
        key = f"local/{before.id}"

        async def body(app: WispTui, pilot: Any) -> None:
            def ended() -> bool:
                item = app.items.get(key)
                return key not in app._table().rows or (item is not None and not item.answerable)

            await until(pilot, lambda: key in app._table().rows, "the row")
            shutil.rmtree(home / "pending")
            await until(pilot, ended, "gone, or stale")
            asking = AskerProcess(home, "command")
            try:
                (after,) = await asyncio.to_thread(asking.filed)
                await until(pilot, lambda: f"local/{after}" in app._table().rows, "the new row")
                assert app.hosts["local"] == "ready"
            finally:
                asking.kill()

        tui(home, body)

    def test_the_whole_home_removed_says_so_and_r_brings_it_back(self, home: Path) -> None:
        """`rm -rf $WISP_HOME`: the relay says the home went and ends (never remaking it
        itself); r starts it again, and a request filed then appears."""

        async def body(app: WispTui, pilot: Any) -> None:
            remove_tree(home)  # the relay may audit the channel's removal as it goes
            await until(pilot, lambda: app.hosts["local"] == "down", "the relay down")
            assert said(app, "(WISP_HOME) was removed")
            await until(pilot, lambda: said(app, "r starts it again"), "what to do")
            await pilot.press("r")
            await until(pilot, lambda: app.hosts["local"] == "ready", "the relay again")
            asking = AskerProcess(home, "command")
            try:
                (after,) = await asyncio.to_thread(asking.filed)
                await until(pilot, lambda: f"local/{after}" in app._table().rows, "the new row")
            finally:
                asking.kill()

        tui(home, body)


class TestHelp:
    @pytest.mark.parametrize("key", ["question_mark", "f1"])
    def test_help_on_question_mark_and_f1(self, home: Path, key: str) -> None:
        """? and F1 open a screen of every key; Esc goes back to the list."""

        async def body(app: WispTui, pilot: Any) -> None:
            await pilot.press(key)
            await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "help")
            # Painted after the screen is pushed: waited for (under load it was read blank).
            words = ("Enter", "answer", "history", "quit", "k (keep)")
            await until(pilot, lambda: all(w in "\n".join(screen_text(app)) for w in words))
            await pilot.press("escape")
            await until(pilot, lambda: type(app.screen).__name__ == "RequestsScreen", "back")

        tui(home, body)

    def test_help_fits_80_columns(self, home: Path) -> None:
        """At 80 columns each line of the keys' table is shown whole, never wrapped into
        the next (`i   hide or show the detail` / `pane`), and the dialog's keys read as
        sentences, not lines broken mid-phrase."""

        async def body(app: WispTui, pilot: Any) -> None:
            await pilot.press("question_mark")
            await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "help")
            lines = [line.strip() for line in screen_text(app)]
            table = help_text(HELP_WIDTH).plain.splitlines()[2 : 2 + len(HELP_KEYS)]
            for line in table:
                assert len(line) <= HELP_WIDTH and line.strip() in lines, line
            assert not any(line in {"pane", "(no); a fact's", "refuses."} for line in lines)

        tui(home, body)

    @pytest.mark.parametrize("width", [60, 40])
    def test_the_footer_keeps_quit_when_narrow(self, home: Path, width: int) -> None:
        """At 60 and 40 columns the footer still shows `q quit` and `? help`."""

        async def body(app: WispTui, pilot: Any) -> None:
            # The footer is drawn once the screen has laid out: waited for, not assumed after
            # one pause (a loaded machine drew it later, and the last line was still blank).
            await until(pilot, lambda: screen_text(app)[-1].strip(), "the footer drawn")
            footer = screen_text(app)[-1]
            assert "q quit" in footer and "? help" in footer

        tui(home, body, size=(width, 15))


class TestNotify:
    def test_new_requests_post_a_sequence_between_frames(self, home: Path, asker: Asker) -> None:
        """In a terminal with a notification sequence the TUI declares notify, and each new
        request's notify line is written as OSC 9, sanitised."""
        gate = ApprovalGate(asker, timeout_s=60)

        async def body(app: WispTui, pilot: Any) -> None:
            gate.file("make deploy; rm\x07 -rf", "/srv")
            await until(pilot, lambda: app.posted, "a notification")
            data = app.posted[0]
            assert data.startswith(b"\x1b]9;wisp: run a command?") and data.endswith(b"\x07")
            assert data.count(b"\x07") == 1 and b";" not in data[4:]

        app = tui(home, body, notify="osc9")
        assert app.hello().notify

    def test_the_asker_announces_its_request_beside_the_tui(
        self, home: Path, channel: Channel
    ) -> None:
        """With the TUI's notify declared, a request is announced twice, as docs/faces.md
        says: the asker posts its own through its routes (nothing a relay says silences
        it), and the relay sends the TUI its `host` line, each counted by its own process."""
        # The asker's own routes, in an environment that offers none (no terminal, tmux or
        # session bus: nothing is shown on this machine): it tries, and audits that it did.
        announcing = Notifier(
            home, settings={}, environ={}, tty_path=str(home / "no-tty"), platform="linux"
        )
        with Asker(channel, entry_point="approvals", client="agent", notifier=announcing) as ask:
            gate = ApprovalGate(ask, timeout_s=60)
            filed: list[str] = []

            async def body(app: WispTui, pilot: Any) -> None:
                filed.append(gate.file("make deploy", "/srv").id)
                await until(pilot, lambda: app.posted, "the TUI's notification")

            tui(home, body, notify="osc9")
        records = [
            json.loads(line) for line in (home / "logs" / "audit.jsonl").read_text().splitlines()
        ]
        about = [r for r in records if r["event"] == "notification" and r.get("id") == filed[0]]
        relay = [r for r in about if r["entryPoint"] == "tui"]
        own = [r for r in about if r["entryPoint"] != "tui"]
        assert len(relay) == 1 and relay[0]["route"] == "host", about
        assert len(own) == 1 and own[0]["source"] == "approval", about

    def test_which_terminals_get_notify(self) -> None:
        """notify is declared only where the terminal posts for a sequence, never in tmux."""
        assert notify_sequence({"TERM_PROGRAM": "ghostty"}) == "osc9"
        assert notify_sequence({"TERM": "xterm-kitty"}) == "osc99"
        assert notify_sequence({"TERM_PROGRAM": "ghostty", "TMUX": "/tmp/t"}) is None
        assert notify_sequence({"TERM_PROGRAM": "Apple_Terminal"}) is None

    def test_iterm2_leaves_notifications_to_wisp(self) -> None:
        """In iTerm2 the TUI declares no notify (its OSC 9 can be switched off and lost
        without a word, seed 002): the askers' own notifications announce requests."""
        assert notify_sequence({"TERM_PROGRAM": "iTerm.app"}) is None
        assert notify_sequence({"TERM_PROGRAM": "WezTerm"}) == "osc9"


NO_TEXTUAL = """
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "textual" or name.startswith("textual."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Refuse())
sys.argv = ["wisp", *sys.argv[1:]]
from wisp.cli import main
main()
"""


class TestOptional:
    def test_everyday_commands_never_import_textual(self, home: Path) -> None:
        """Loading the `wisp` command and the relay imports no textual: only `wisp tui` does."""
        code = (
            "import sys, wisp.cli, wisp.relay._relay; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr

    def test_without_textual_tui_says_how_to_get_it(self, home: Path) -> None:
        """Where textual is not installed, `wisp tui` says which extra to install (exit 2),
        and every other command still works."""
        tui_run = subprocess.run(
            [sys.executable, "-c", NO_TEXTUAL, "tui"], capture_output=True, text=True, timeout=60
        )
        assert tui_run.returncode == 2
        assert install_hint("tui") in " ".join(tui_run.stderr.split())
        assert "Traceback" not in tui_run.stderr
        listing = subprocess.run(
            [sys.executable, "-c", NO_TEXTUAL, "pending"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert listing.returncode == 0 and "Nothing waits" in listing.stdout
