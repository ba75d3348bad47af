"""`wisp tui`'s history (`h`): what each row says of a tool call, and its columns at every
width — cut with `…`, never by the table, and following a resize. Driven headless with
textual's pilot over a real `wisp relay` child, reading a real audit log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import command, tool
from relayproc import write_config
from test_tui import WispTui, screen_text, tui, until
from textual.widgets import DataTable

from pending import Channel, ServerLock, ToolBinding, make_request
from wisp._entry import EntryPoint
from wisp.audit.writer import AuditEvent, audit, request_fields

DEEP = "/home/newbie/src/app/main.py"


@pytest.fixture
def home(home: Path) -> Path:
    write_config(home, answer__waitSeconds=3)
    return home


def ended(home: Path, request: Any, decision: str, via: str = "tui") -> None:
    """Audit *request* answered with *decision* via *via* and settled, as the application
    records it (the relay's history reads these back)."""
    fields = request_fields(request)
    audit(
        home,
        AuditEvent.APPROVAL_ANSWERED,
        {**fields, "decision": decision, "via": via},
        entry_point=EntryPoint.TUI,
    )
    audit(
        home,
        AuditEvent.APPROVAL_SETTLED,
        {**fields, "outcome": "answered", "decision": decision},
        entry_point=EntryPoint.APPROVALS,
    )


async def history(app: WispTui, pilot: Any, rows: int) -> DataTable[Any]:
    """Open the history and wait for *rows* rows, drawn."""
    await pilot.press("h")
    await until(pilot, lambda: app.history_screen is not None, "the history screen")
    screen = app.history_screen
    assert screen is not None
    table = screen.query_one("#history", DataTable)
    await until(pilot, lambda: table.row_count == rows and screen_text(app)[2].strip(), "rows")
    return table


def row(table: DataTable[Any], n: int) -> dict[str, str]:
    keys = [str(column.key.value) for column in table.ordered_columns]
    return dict(zip(keys, (str(cell) for cell in table.get_row_at(n)), strict=True))


class TestHistoryRows:
    def test_a_tool_call_reads_as_its_row_does(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """An Edit that ended reads `Edit /home/newbie/src/app/main.py` (its tool and the
        file it is on), as its row did while it waited, never `Edit {"file_path": …` (raw
        JSON, which says nothing once cut); a tool that names no file or URL keeps its
        arguments (the control: nothing is lost where there is no key argument)."""
        edit = tool(server, DEEP)
        mcp = make_request(
            kind=edit.kind,
            binding=ToolBinding(tool="mcp__db__query", input={"sql": "select 1"}, cwd="/srv"),
            title="wisp: allow a tool call?",
            body="mcp__db__query",
            server=server.record(client="test", entry_point="hook"),
        )
        ended(home, edit, "once")
        ended(home, mcp, "no")

        async def body(app: WispTui, pilot: Any) -> None:
            table = await history(app, pilot, 2)
            asked = {row(table, n)["asked"] for n in range(2)}
            assert asked == {f"Edit {DEEP}", 'mcp__db__query {"sql": "select 1"}'}, asked

        tui(home, body, size=(100, 24))

    def test_a_cut_row_keeps_the_files_name(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """At 100 columns a long Edit's row is cut in its path's middle, so the file's name
        stays (`Edit /home/ne…/server_main.py`), as its waiting row is; the control: a command's
        row is cut at its end."""
        deep = "/home/newbie/src/" + "deeply/nested/" * 6 + "handlers/server_main.py"
        ended(home, tool(server, deep), "once")
        ended(home, command(server, "make deploy && make clean && make test " * 3), "once")

        async def body(app: WispTui, pilot: Any) -> None:
            table = await history(app, pilot, 2)
            cells = [row(table, n)["asked"] for n in range(2)]
            edit = next(c for c in cells if c.startswith("Edit "))
            other = next(c for c in cells if not c.startswith("Edit "))
            assert edit.endswith("server_main.py") and "…" in edit, edit
            assert other.endswith("…"), other

        tui(home, body, size=(100, 24))


class TestHistoryWidths:
    def test_columns_follow_the_width_and_every_cut_says_so(
        self, home: Path, channel: Channel, server: ServerLock
    ) -> None:
        """At 40 columns the history keeps KIND, ENDED, ASKED and BY on screen (who
        answered is never pushed off the edge), each cut cell ending in `…`
        (`approved ses…`, never `approved onc`); widened to 80, WHEN and HOST come back
        and ASKED takes the new room; narrowed again, it gives it back."""
        long = command(server, "make deploy && " * 6 + "make clean")
        short = command(server, "ls")
        ended(home, short, "once")
        ended(home, long, "session", via="cli")  # the newest: the first row

        async def body(app: WispTui, pilot: Any) -> None:
            table = await history(app, pilot, 2)
            narrow = row(table, 0)
            assert list(narrow) == ["kind", "ended", "asked", "by"], narrow
            assert narrow["ended"] == "approved ses…" and narrow["asked"].endswith("…")
            assert row(table, 1)["ended"] == "approved once"
            lines = screen_text(app)
            assert lines[1].split() == ["KIND", "ENDED", "ASKED", "BY"], lines[1]
            assert lines[2].rstrip().endswith("cli") and lines[3].rstrip().endswith("tui")
            await pilot.resize_terminal(80, 24)
            await until(pilot, lambda: "when" in row(table, 0), "the wide columns")
            wide = row(table, 0)
            assert list(wide) == ["when", "host", "kind", "ended", "asked", "by"], wide
            assert wide["ended"] == "approved session"
            assert len(wide["asked"]) > len(narrow["asked"]) + 10, (wide, narrow)
            await until(pilot, lambda: screen_text(app)[2].rstrip().endswith("cli"), "BY")
            assert all(len(line.rstrip()) <= 80 for line in screen_text(app))
            await pilot.resize_terminal(40, 15)
            await until(pilot, lambda: "when" not in row(table, 0), "narrow again")
            assert row(table, 0) == narrow

        tui(home, body, size=(40, 15))
