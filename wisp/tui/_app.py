"""`wisp tui`: every waiting request, live, answered in a dialog — a front end over relays.

The TUI never touches the channel. It starts `wisp relay` as a child (and `ssh HOST wisp
relay` per `--host`), says hello with the effects it carries, and speaks the relay's JSON
lines (docs/relay.md): requests arrive as `approval` lines, leave as `withdrawn` lines, and
answers go back as `answer` lines that the relay gives through the application's Answerer with
`via: "tui"`. So an answer here is checked, audited, waited for and applied exactly as one
given from the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import textwrap
from collections import deque
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

import attrs
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static

from pending import Kind, State, parse_time
from wisp import Verdict, terminal_notice
from wisp._text import cut_path, one_line, visible
from wisp.kinds import view, views
from wisp.relay.hosts import LOCAL, check_hosts, host_argv
from wisp.relay.protocol import (
    Answered,
    AnswerLine,
    Decided,
    Ended,
    ErrorLine,
    Hello,
    HistoryReply,
    HistoryRequest,
    LineError,
    Notify,
    Ready,
    TooLong,
    Withdrawal,
    Withdrawn,
)
from wisp.tui._dialogs import Choice, Dialog, dialog_for, hand_on
from wisp.tui._driver import hang_up_safe
from wisp.tui._link import Link, describe_exit, hello_line, local_argv, local_link
from wisp.tui._model import (
    Message,
    Waiting,
    age,
    age_changes_in,
    asked_within,
    countdown_changes_in,
    describe,
    detail,
    ended_words,
    read_relay_line,
    report,
    searched,
    who,
)

# Below this width the table drops the columns a narrow terminal cannot hold.
NARROW_COLUMNS = 60
HOST_COLUMN = 10  # the HOST column's width, with --host
# A stale row (its asker gone: it takes no answer) stays this long, dimmed and saying why,
# so the person sees what became of it; then it leaves the list.
STALE_SHOWN_S = 10.0
# The display clock never wakes sooner than this after its last tick (a floor for rounding).
CLOCK_FLOOR_S = 0.05
ENDING_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
SUMMARY_PADDING = 2  # the summary line's columns of padding, one each side
ASKER_LABEL = 28  # characters of the asker filter's words in the summary line
MESSAGES_KEPT = 200
POSTED_KEPT = 50
HISTORY_LIMIT = 100
# The history's columns: (key, label, most characters shown). ASKED takes the room the
# others leave (None); a cell longer than its column is cut with `…`, never by the table.
HISTORY_COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("when", "WHEN", 8),
    ("host", "HOST", 12),
    ("kind", "KIND", 8),
    ("ended", "ENDED", 20),
    ("asked", "ASKED", None),
    ("by", "BY", 10),
)
# Below NARROW_COLUMNS the history keeps KIND (short), ENDED, ASKED and BY, so what ended,
# what it was and who answered still fit 40 columns; ENDED is cut to fewer characters there.
HISTORY_NARROW = ("kind", "ended", "asked", "by")
HISTORY_ENDED_NARROW = 13  # "approved once" whole; "approved sess…"
HISTORY_ASKED_MIN = 8  # characters of ASKED kept however narrow the screen
HISTORY_EDGE = 4  # ASKED's own padding (2) and a scrollbar's columns (2)
HISTORY_TITLE = "What ended lately (newest first) — Esc: back"
HISTORY_TITLE_NARROW = "What ended lately — Esc: back"  # where the title would be cut
# The detail pane: lines it shows (its border aside; the CSS's max-height is one more), and
# lines one long value may take there before it is cut — always with a marker saying so and
# that Enter shows the request whole, in its dialog.
DETAIL_MAX_LINES = 10
DETAIL_VALUE_LINES = 2
DETAIL_LABEL = 11  # "  command  ": the label column and its gap
# On a short screen the detail pane gives way so the table keeps TABLE_MIN_LINES (its header
# and rows): the lines besides are the summary, the footer, the status line (3 at most) and
# the pane's border.
TABLE_MIN_LINES = 4
OTHER_LINES = 6
DETAIL_MIN_LINES = 2
FILTER_SHOWN = 20  # the text filter's characters the summary line shows
CUT_MARK = " … +{n} more characters: Enter shows the whole request"
# The calls decided without asking (by a rule or a grant), shown quietly under the rows:
# the newest this many lines (one on a screen shorter than DECIDED_ROOMY_LINES), never
# focusable, never a dialog; `d` hides or shows them. The newest DECIDED_KEPT are kept.
DECIDED_SHOWN = 3
DECIDED_ROOMY_LINES = 24
DECIDED_KEPT = 100


class Relay(StrEnum):
    """Where one relay stands, as the summary line says it."""

    STARTING = "starting"
    READY = "ready"
    DOWN = "down"


# Per-kind words of the table (the kinds package will own them).


class Cell:
    """A table cell: a :class:`Text` that does not measure itself. The table's columns have
    fixed widths, so DataTable's measuring of every new cell (5 a row, each building console
    options) is work thrown away — it was most of the time a 1,000-request start took."""

    __slots__ = ("text",)

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield self.text

    def __str__(self) -> str:
        return self.text.plain


class RequestTable(DataTable[Any]):
    """The requests, a row each; Enter opens the selected one's dialog.

    The keys the footer must never lose are bound here, first: the footer lists the focused
    widget's keys before the screen's, and a narrow terminal cuts its tail, so `q quit` and
    `? help` (and `r restart`, while a relay is down) lead at 40 columns too."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "quit"),
        Binding("question_mark", "app.help", "help", key_display="?"),
        Binding("f1", "app.help", "help", show=False),
        Binding("r", "app.restart_down", "restart"),  # shown only while a relay is down
        Binding("enter", "select_cursor", "answer", show=True),
        Binding("home", "first_row", "first", show=False),
        Binding("end", "last_row", "last", show=False),
        # As k9s and lazygit (and vi, and less) move: j k, g G.
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
        Binding("g", "first_row", "first", show=False),
        Binding("G", "last_row", "last", show=False),
    ]

    def on_key(self, event: events.Key) -> None:
        """`/` opens the text filter here, as the rows take the key (a binding would act
        only once the key had bubbled up to the app, after the keys read with it); those
        keys, reaching the rows after it, are the filter's."""
        if event.key == "slash":
            event.stop()
            app = self.app
            assert isinstance(app, WispTui)
            app.action_text_filter()
            return
        box = self.screen.query_one("#filter", FilterBox)
        hand_on(event, box, box.action_clear_filter)

    def action_first_row(self) -> None:
        """Home selects the first row (not only scrolls to it): Enter then opens that one."""
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


class FilterBox(Input):
    """The text filter, opened by `/`: rows are filtered as it is typed; Enter keeps the
    filter and goes back to the rows, Esc clears it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear_filter", "clear", show=False),
    ]

    async def _on_key(self, event: events.Key) -> None:
        """Enter keeps the filter at once, not when its binding is reached after the keys
        read with it; those keys, queued here, then go to the rows they were meant for."""
        if self.screen.focused is not self and self.display is False:
            event.stop()
            event.prevent_default()
            rows = self.screen.query_one("#requests", DataTable)
            rows.post_message(events.Key(event.key, event.character))
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            app = self.app
            assert isinstance(app, WispTui)
            app.set_text_filter(self.value, keep_open=False)
            return
        await super()._on_key(event)

    def action_clear_filter(self) -> None:
        app = self.app
        assert isinstance(app, WispTui)
        app.set_text_filter("", keep_open=False)


class RequestsScreen(Screen[None]):
    """The main view: a summary line, the table, the detail pane, the last message, the keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "app.kind_filter", "kind"),
        Binding("w", "app.asker_filter", "asker"),
        # Not in the footer (the help lists it): at 80 columns the footer holds the rest whole,
        # `r restart` included while a relay is down, never cut mid-word.
        Binding("A", "app.answer_all", "all from asker", show=False),
        Binding("h", "app.history", "history"),
        Binding("i", "app.toggle_detail", "detail"),
        # Not in the footer (the help lists it): the footer at 80 columns stays whole.
        Binding("d", "app.toggle_decided", "decided", show=False),
        Binding("r", "app.restart", "restart", show=False),  # none is down: it says so
        Binding("ctrl+c", "app.quit", "quit", show=False),
    ]
    DEFAULT_CSS = """
    #summary { height: 1; background: $boost; padding: 0 1; }
    #requests { height: 1fr; }
    #detail { height: auto; max-height: 11; border-top: solid $accent; padding: 0 1; }
    #detail.hidden { display: none; }
    #decided { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    #decided.hidden { display: none; }
    #status { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    #filter { display: none; height: 1; border: none; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="summary", markup=False)
        yield RequestTable(id="requests", cursor_type="row", zebra_stripes=True)
        yield FilterBox(
            placeholder="filter: type text · Enter: keep · Esc: clear",
            id="filter",
            select_on_focus=False,  # text typed with `/` in one burst is kept, not selected
        )
        yield Static("", id="detail", markup=False)
        yield Static("", id="decided", markup=False, classes="hidden")
        yield Static("", id="status", markup=False)
        yield Footer()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            app = self.app
            assert isinstance(app, WispTui)
            app.set_text_filter(event.value, keep_open=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            app = self.app
            assert isinstance(app, WispTui)
            app.set_text_filter(event.value, keep_open=False)

    def on_mount(self) -> None:
        self.query_one("#requests", DataTable).focus()
        app = self.app
        assert isinstance(app, WispTui)
        app.begin()


class HistoryScreen(ModalScreen[None]):
    """What ended lately, from each relay's audit log (newest first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "back"),
        Binding("h", "dismiss", "back"),
        Binding("q", "dismiss", "back"),
    ]
    DEFAULT_CSS = """
    HistoryScreen { background: $background; }
    #history-title { height: 1; background: $boost; padding: 0 1; }
    #history { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, Ended]] = []  # (ts, host, entry)

    def compose(self) -> ComposeResult:
        yield Static(Text(HISTORY_TITLE), id="history-title")
        table: DataTable[Any] = DataTable(id="history", cursor_type="row")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#history", DataTable).focus()
        self._draw(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: the columns follow the new width (ASKED widens with it).
        if self.is_mounted:
            self._draw(event.size.width)

    def add(self, host: str, history: HistoryReply) -> None:
        """A relay's history (it may come before the screen is up: then it is drawn then)."""
        for entry in history.entries:
            self.rows.append((entry.ts, host, entry))
        self.rows.sort(key=lambda row: row[0], reverse=True)
        if self.is_mounted:
            self._draw(self.app.size.width)

    def _draw(self, width: int) -> None:
        title = HISTORY_TITLE if len(HISTORY_TITLE) <= width - 2 else HISTORY_TITLE_NARROW
        self.query_one("#history-title", Static).update(Text(title))
        table = self.query_one("#history", DataTable)
        table.clear(columns=True)
        keys, rows = history_rows(self.rows, width)
        labels = {key: label for key, label, _most in HISTORY_COLUMNS}
        for key, chars in keys.items():
            table.add_column(labels[key], key=key, width=chars)
        for row in rows:
            table.add_row(*(Text(row[key]) for key in keys))


def history_rows(
    entries: Sequence[tuple[str, str, Ended]], width: int
) -> tuple[dict[str, int], list[dict[str, str]]]:
    """The history's columns for *width* (key: characters) and its rows, each cell cut to
    its column with `…`: below NARROW_COLUMNS only KIND (short), ENDED, ASKED and BY; ASKED
    takes the room the others (and their padding, 2 each) leave, so BY stays on screen."""
    narrow = width < NARROW_COLUMNS
    rows = [
        {
            "when": _clock(ts),
            "host": visible(where),
            "kind": _kind_word(entry.kind, short=narrow),
            "ended": ended_words(entry),
            "asked": visible(entry.asked),
            "by": visible(entry.by or ""),
        }
        for ts, where, entry in entries
    ]
    shown = [c for c in HISTORY_COLUMNS if not narrow or c[0] in HISTORY_NARROW]
    widths: dict[str, int] = {}
    for key, label, most in shown:
        if most is not None:
            if narrow and key == "ended":
                most = HISTORY_ENDED_NARROW
            widths[key] = min(most, max([len(label), *(len(row[key]) for row in rows)]))
    others = sum(w + 2 for w in widths.values())
    asked = max(HISTORY_ASKED_MIN, width - others - HISTORY_EDGE)
    keys = {key: widths.get(key, asked) for key, _label, _most in shown}
    cut = [{key: one_line(row[key], keys[key]) for key in keys} for row in rows]
    for row, (_ts, _where, entry) in zip(cut, entries, strict=True):
        if "asked" in keys:  # a path's end tells one file from another: cut its middle
            row["asked"] = _asked_cell(entry, keys["asked"])
    return keys, cut


def _asked_cell(entry: Ended, limit: int) -> str:
    """An ended request's ASKED cell: a tool call on a file (`Edit /srv/app/main.py`) cut
    in its path's middle, so that the file's name stays; anything else cut at its end."""
    tool, _, target = entry.asked.partition(" ")
    try:
        kind = Kind(entry.kind)
    except ValueError:
        kind = None
    head = f"{visible(tool)} "
    if kind is Kind.TOOL and target.startswith("/") and limit > len(head) + 3:
        return head + cut_path(target, limit - len(head))
    return one_line(visible(entry.asked), limit)


def _kind_word(kind: str, *, short: bool) -> str:
    """A history entry's kind as the table says it (`cmd` when narrow); a kind this build
    does not know (an older log's) as written, made visible."""
    try:
        known = Kind(kind)
    except ValueError:
        return visible(kind)
    return view(known).short if short else known.value


# The keys' table fits 80 columns (78 within the help's padding); each paragraph below it
# is one line, wrapped by the screen at whatever width it has.
# The keys of the main view, as the help screen lists them: (keys, what they do).
HELP_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓ j k", "move the selection (PgUp PgDn: a page)"),
    ("Home End g G", "the first, the last row"),
    ("Enter", "answer the selected request, in its dialog"),
    ("/", "filter by text (Enter keeps it, Esc clears it)"),
    ("f", "show one kind: all → command → fact → question → tool → all"),
    ("w", "show only the selected request's asker (again: everyone's)"),
    ("A", "answer all from the selected request's asker, in turn"),
    ("h", "history: what ended lately"),
    # One row for both: the help is whole in 24 lines (a 25th brings a scrollbar, which
    # narrows the table's lines until they wrap).
    ("i d", "hide or show the detail pane (i), calls decided unasked (d)"),
    ("r", "restart a relay that has ended (shown while one is down)"),
    ("? F1", "this help"),
    ("q Ctrl-C Ctrl-Q", "quit"),
)
HELP_HEAD = "The keys of wisp tui (docs/tui.md says more)"
HELP_DIALOGS = (
    "In a dialog: a command's y s p a (yes: once, session, project, always), w (the next "
    "width offered, which s p a give: this command with any arguments, edits to this file, "
    "edits in this project) and n (no, with a reason if you like, then Enter); a fact's k "
    "(keep) and d (drop); a question's 1-9 or a typed answer; Esc: later; Ctrl-C refuses at "
    "once. Approving keys wait until the whole request has been scrolled through."
)
HELP_BACK = "Esc, ?, F1 or q: back"
HELP_KEY_COLUMN = 17  # the keys' column, where the table is wide enough to hold both
HELP_TABLE_MIN = 70  # narrower than this, each key's words go on the lines below it


def help_text(width: int) -> Text:
    """The help screen's text for *width* columns: the keys' table in two columns when it
    fits, else each key on its own line and its words indented below (never wrapped into
    the next column); the paragraphs wrap to the width."""
    lines = [HELP_HEAD, ""]
    for keys, does in HELP_KEYS:
        if width >= HELP_TABLE_MIN:
            lines.append(f"  {keys:<{HELP_KEY_COLUMN}}{does}")
        else:
            lines.append(keys)
            lines.extend("    " + part for part in textwrap.wrap(does, max(width - 4, 10)))
    lines += ["", HELP_DIALOGS, "", HELP_BACK]
    return Text("\n".join(lines))


class HelpScreen(ModalScreen[None]):
    """Every key, on ? or F1."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "back"),
        Binding("question_mark", "dismiss", "back", show=False),
        Binding("f1", "dismiss", "back", show=False),
        Binding("q", "dismiss", "back", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { background: $background; }
    HelpScreen VerticalScroll { height: 1fr; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(help_text(self.app.size.width - 2), id="help")
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#help", Static).update(help_text(event.size.width - 2))


class WispTui(App[None]):
    """The application: its relays, what they sent, and the dialog open on one of them."""

    TITLE = "wisp"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self,
        relays: Sequence[tuple[str, list[str]]] = (),
        *,
        env: Mapping[str, str] | None = None,
        notify_sequence: str | None = None,
        links: Sequence[Link] = (),
    ) -> None:
        """*relays*: (host, argv) per relay to start, or *links* already started (with
        :meth:`Link.spawn` and this app's hello); *notify_sequence*: "osc9" or "osc99" when
        this terminal posts notifications for one (then `notify` is declared), else None."""
        super().__init__()
        self.links = [*links, *(_link(h, a, env) for h, a in relays)]
        self.notify_sequence = notify_sequence
        self.items: dict[str, Waiting] = {}  # row key -> request, every one known
        self.answering: dict[str, Waiting] = {}  # sent an answer, awaiting `answered`
        self.hosts: dict[str, Relay] = {link.host: Relay.STARTING for link in self.links}
        self.kind_filter: Kind | None = None
        self.asker_filter: str | None = None
        self.text_filter = ""  # `/`: only rows whose text holds this (any case)
        self.asker_label = ""  # the filtered asker as the summary says it: `wisp-cli 13723`
        self.dialog: Dialog | None = None
        self.dialog_key: str | None = None
        self.series: deque[str] = deque()  # keys still to ask, answering all from one asker
        self.series_total = 0
        self.messages: deque[str] = deque(maxlen=MESSAGES_KEPT)
        self.posted: deque[bytes] = deque(maxlen=POSTED_KEPT)
        self.history_screen: HistoryScreen | None = None
        # The calls decided without asking, newest last: (host, line); `d` hides them.
        self.decided: deque[tuple[str, Decided]] = deque(maxlen=DECIDED_KEPT)
        self.decided_hidden = False
        self.narrow = False
        self.width = 80  # the terminal's, as last laid out (a resize says the new one)
        self.height = 24
        self.ready: dict[str, asyncio.Event] = {}
        self.started = False  # the main screen is composed
        self._summary_due = False
        self._clock: Timer | None = None  # the next display deadline (see _set_clock)

    # --- start and stop --------------------------------------------------------------

    def get_driver_class(self) -> type[Any]:
        """textual's driver for this platform, its output safe for a terminal that hangs up
        (:mod:`wisp.tui._driver`: else the TUI could hang as it ends on SIGHUP)."""
        return hang_up_safe(super().get_driver_class())

    def get_default_screen(self) -> Screen[Any]:
        return RequestsScreen()

    def begin(self) -> None:
        """The main screen is composed: draw it, and start the relays."""
        self.width, self.height = self.size.width, self.size.height
        self.narrow = self.width < self._narrow_below()
        self._build_table()
        self._show_summary()
        for link in self.links:
            self.ready[link.host] = asyncio.Event()
            self.run_worker(self._run_link(link), group="links", exit_on_error=False)
        loop = asyncio.get_running_loop()
        for signum in ENDING_SIGNALS:
            # A closed terminal (SIGHUP) or a kill (SIGTERM) ends the TUI as q does, so its
            # relays are stopped (on_unmount) instead of left running under nobody.
            loop.add_signal_handler(signum, self.exit)
        self.started = True

    async def on_unmount(self) -> None:
        if self._clock is not None:
            self._clock.stop()
        await asyncio.gather(*(link.stop() for link in self.links), return_exceptions=True)

    def hello(self) -> Hello:
        return hello_line(notify=self.notify_sequence is not None)

    async def _run_link(self, link: Link) -> None:
        if link.popen is None and (link.failed is not None or not link.spawn(self.hello())):
            self._host_down(link.host, link.failed or "it did not start")
            return
        await link.attach()
        async for piece in link.lines():
            if isinstance(piece, TooLong):
                self.say(f"{link.host}: skipped a relay line of {piece.size} bytes (over 1 MiB)")
                continue
            try:
                message = read_relay_line(link.host, piece)
            except LineError as exc:
                self.say(f"{link.host}: skipped a relay line: {exc}")
                continue
            if message is not None:
                try:
                    self._handle(link, message)
                except Exception as exc:  # a bug here must not stop this relay's stream
                    self.log.error(f"handling {message!r}: {exc!r}")
                    self.say(f"{link.host}: could not show a relay line ({exc!r})")
        code, last = await link.ended()
        if any(held is link for held in self.links):  # not already replaced by r
            self._host_down(link.host, describe_exit(code, last))

    def _host_down(self, host: str, why: str) -> None:
        self.hosts[host] = Relay.DOWN
        self.refresh_bindings()
        self.ready.setdefault(host, asyncio.Event()).set()
        self.say(
            f"{host}: relay ended ({one_line(why, 100)}); its requests are not shown "
            "here: r starts it again."
        )
        for key in [k for k, item in self.items.items() if item.host == host]:
            self._forget(key, closing=f"{host}'s relay ended")
        self._show_summary()

    # --- what relays send ------------------------------------------------------------

    def _handle(self, link: Link, message: Message) -> None:
        host = link.host
        if isinstance(message, Waiting):
            self._arrived(message)
        elif isinstance(message, Withdrawn):
            self._gone(host, message)
        elif isinstance(message, Answered):
            self._answered(host, message)
        elif isinstance(message, ErrorLine):
            self._error(host, message)
        elif isinstance(message, Notify):
            self._post(message)
        elif isinstance(message, Decided):
            self.decided.append((host, message))
            self._show_decided()
        elif isinstance(message, Ready):
            self.hosts[host] = Relay.READY
            self.ready[host].set()
            self._show_summary()
        elif isinstance(message, HistoryReply) and self.history_screen is not None:
            self.history_screen.add(host, message)

    def _arrived(self, item: Waiting) -> None:
        key = item.key
        known = key in self.items
        self.items[key] = item
        if key in self.answering:
            return  # our answer is on its way; the relay's report decides
        if known:
            self._update_row(item)
        elif self._passes(item):
            self._table().add_row(*self._cells(item), key=key)
            if self._table().row_count == 1:
                self._show_detail()
        self._show_summary()

    def _gone(self, host: str, gone: Withdrawn) -> None:
        key = f"{host}/{gone.id}"
        item = self.items.get(key)
        if item is None:
            return
        why = one_line(gone.reason, 100)
        if gone.answer is not None and gone.state is Withdrawal.ANSWERED:
            # Worded here, not as the relay said it: "by you", and a question's answer.
            why = describe(gone.answer, item.kind, host)
        if gone.state is Withdrawal.STALE:
            # A dead asker's command or question turns stale in place: shown, not answerable,
            # saying why, until STALE_SHOWN_S later it leaves the list (_tick).
            item = attrs.evolve(item, state=State.STALE, why=why, ended_at=datetime.now(UTC))
            self.items[key] = item
            self._update_row(item)
            self._close_dialog(key, f"{gone.id}: {why}")
            self._show_summary()
            return
        dialog_open = self.dialog_key == key
        self._forget(key, closing=f"{gone.id}: {why}")
        if not dialog_open:
            self.say(f"{gone.id}: {why}")

    def _answered(self, host: str, message: Answered) -> None:
        key = f"{host}/{message.id}"
        item = self.answering.pop(key, None) or self.items.get(key)
        self.say(report(item, message, host))
        self._forget(key, closing=None)

    def _error(self, host: str, error: ErrorLine) -> None:
        text = f"{host}: {one_line(error.message, 160)}"
        if error.id is not None:
            key = f"{host}/{error.id}"
            item = self.answering.pop(key, None)
            if item is not None:  # our answer was refused: it still waits, as it was
                self.items[key] = item
                self._update_row(item)
        if error.fatal:
            self.hosts[host] = Relay.DOWN
            self.refresh_bindings()
            self._show_summary()
        self.say(text)

    def _post(self, notice: Notify) -> None:
        """A notification, between frames: written through the driver, which writes frames
        whole, so the sequence never lands inside one. Sanitised by the notifier's rules."""
        if self.notify_sequence is None:
            return
        data = terminal_notice(self.notify_sequence, notice.title, notice.subtitle, notice.body)
        self.posted.append(data)
        if self._driver is not None:
            self._driver.write(data.decode())

    # --- the table -------------------------------------------------------------------

    def _table(self) -> DataTable[Any]:
        return self.screen_stack[0].query_one("#requests", DataTable)

    def _columns(self) -> list[tuple[str, str, int]]:
        """(key, label, width) per column, fitted to the terminal: ASKED takes what is left
        after the fixed columns, their padding (2 each) and a scrollbar (2)."""
        width = self.width
        if self.narrow:
            fixed = [("kind", "KIND", 4), ("age", "AGE", 3)]
        else:
            fixed = [("kind", "KIND", 8), ("age", "AGE", 3), ("by", "BY", 16)]
            if len(self.links) > 1:
                fixed.append(("host", "HOST", HOST_COLUMN))
            fixed.append(("state", "STATE", 11))
        used = sum(w + 2 for _k, _l, w in fixed) + 2 + 2
        return [*fixed[:2], ("asked", "ASKED", max(8, width - used)), *fixed[2:]]

    def _narrow_below(self) -> int:
        """The width under which the table drops columns: more with a HOST column (and its
        padding) to hold."""
        return NARROW_COLUMNS + (HOST_COLUMN + 2 if len(self.links) > 1 else 0)

    def _cells(self, item: Waiting) -> list[Cell]:
        now = datetime.now(UTC)
        cells = []
        for key, _label, width in self._columns():
            if key == "kind":
                text = view(item.kind).short if self.narrow else item.kind.value
            elif key == "age":
                text = age(item.filed_at, now)
            elif key == "asked":
                text = asked_within(item, width)
            elif key == "by":
                text = one_line(who(item, short=True), width)
            elif key == "host":
                text = one_line(item.host, width)
            else:
                text = self._state_of(item)
            cells.append(Cell(Text(text, style="dim" if not item.answerable else "")))
        return cells

    def _state_of(self, item: Waiting) -> str:
        return "answering…" if item.key in self.answering else item.state.value

    def _build_table(self) -> None:
        table = self._table()
        selected = self.selected()
        table.clear(columns=True)
        for key, label, width in self._columns():
            table.add_column(label, key=key, width=width)
        rows = [item for item in self.items.values() if self._passes(item)]
        for item in rows:
            table.add_row(*self._cells(item), key=item.key)
        if selected is not None and selected.key in table.rows:
            table.move_cursor(row=table.get_row_index(selected.key))
        self._show_detail()

    def _update_row(self, item: Waiting) -> None:
        table = self._table()
        if item.key not in table.rows:
            if self._passes(item):
                table.add_row(*self._cells(item), key=item.key)
            return
        if not self._passes(item):
            table.remove_row(item.key)
            return
        for (column, _label, _width), cell in zip(self._columns(), self._cells(item), strict=True):
            table.update_cell(item.key, column, cell)
        if self.selected() is item:
            self._show_detail()

    def _forget(self, key: str, *, closing: str | None) -> None:
        """A request is no longer answerable here: its row goes, and its dialog with it."""
        self.items.pop(key, None)
        self.answering.pop(key, None)
        with contextlib.suppress(ValueError):
            self.series.remove(key)
        table = self._table()
        if key in table.rows:
            table.remove_row(key)
        if closing is not None:
            self._close_dialog(key, closing)
        self._show_detail()
        self._show_summary()

    def _passes(self, item: Waiting) -> bool:
        if self.kind_filter is not None and item.kind is not self.kind_filter:
            return False
        if self.text_filter and self.text_filter.casefold() not in searched(item):
            return False
        return self.asker_filter is None or item.asker_key == self.asker_filter

    # --- the display clock -------------------------------------------------------------
    #
    # Shown times go wrong as the clock moves: an AGE, the detail pane's "expires in" and
    # the open dialog's, a stale row's time to leave. No timer polls for them; one timer is
    # set for the next moment any shown text changes — a display deadline, as a request's
    # own deadline is — and re-set after each tick, each burst of relay lines and each
    # dialog opened. Nothing is read or waited on; with no row shown, no timer runs.

    def _drawn(self) -> bool:
        """Whether the main screen still holds its widgets (not while the app ends: a
        deferred redraw or a display deadline may come after they are gone)."""
        return bool(self.screen_stack) and bool(self.screen_stack[0].query("#requests"))

    def _set_clock(self, now: datetime | None = None) -> None:
        if not self._drawn():
            return
        now = now or datetime.now(UTC)
        due = self._next_change(now)
        if self._clock is not None:
            self._clock.stop()
        self._clock = None if due is None else self.set_timer(max(CLOCK_FLOOR_S, due), self._tick)

    def _next_change(self, now: datetime) -> float | None:
        """Seconds until the first shown time changes (None: none will)."""
        table = self._table()
        soon: list[float] = []
        for key in table.rows:
            item = self.items.get(str(key.value))
            if item is None:
                continue
            soon.append(age_changes_in(item.filed_at, now) or float("inf"))
            if item.ended_at is not None:
                soon.append(STALE_SHOWN_S - (now - item.ended_at).total_seconds())
        # The selected request's countdown (the detail pane) and the open dialog's own.
        counting = [self.selected(), self.dialog.item if self.dialog is not None else None]
        for shown in counting:
            if shown is not None and shown.state is not State.STALE:
                soon.append(countdown_changes_in(shown.expires_at, now) or float("inf"))
        first = min(soon, default=float("inf"))
        return None if first == float("inf") else first

    def _tick(self) -> None:
        """A display deadline: stale rows whose time is up leave, ages, the detail pane and
        the open dialog's request are redrawn, and the next deadline is set."""
        self._clock = None
        if not self._drawn():
            return
        now = datetime.now(UTC)
        for key, item in list(self.items.items()):
            if item.ended_at is not None and (now - item.ended_at).total_seconds() >= (
                STALE_SHOWN_S - CLOCK_FLOOR_S
            ):
                self._forget(key, closing=None)
        table = self._table()
        for row_key in list(table.rows):
            shown = self.items.get(str(row_key.value))
            if shown is not None:
                text = Text(age(shown.filed_at, now), style="" if shown.answerable else "dim")
                table.update_cell(row_key, "age", Cell(text))
        self._show_detail()
        if self.dialog is not None:
            self.dialog.redraw_request()
        self._set_clock(now)

    def on_resize(self, event: events.Resize) -> None:
        # The event's size, not self.size: the columns are fitted to the new width.
        narrow = event.size.width < self._narrow_below()
        if self.started:
            self.width, self.height = event.size.width, event.size.height
            self.narrow = narrow
            self._build_table()
            self._show_summary()
            self._show_decided()

    def selected(self) -> Waiting | None:
        table = self._table()
        if table.row_count == 0:
            return None
        try:
            row_key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key
        except Exception:  # the cursor sits past the last row while rows go
            return None
        return self.items.get(str(row_key.value))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "requests":
            self._show_detail()
            self._show_summary()  # and the clock, for the selected request's countdown

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "requests":
            event.stop()
            self.action_open()

    # --- the lines around the table --------------------------------------------------

    def say(self, text: str) -> None:
        """The status line (and the log the tests read): always shown through visible()."""
        shown = visible(text)
        self.messages.append(shown)
        if self.screen_stack:
            self.screen_stack[0].query_one("#status", Static).update(Text(shown))

    def _show_detail(self) -> None:
        if not self._drawn():  # a row highlighted as the app ends: nothing to draw on
            return
        pane = self.screen_stack[0].query_one("#detail", Static)
        item = self.selected()
        if item is None:
            pane.update(Text("Nothing waits for you." if not self.items else ""))
            return
        width = max(20, (pane.size.width or self.size.width) - 2)  # its padding
        cap = max(20, (width - DETAIL_LABEL) * DETAIL_VALUE_LINES)
        lines: list[Text] = []
        for label, value in detail(item, datetime.now(UTC)):
            text = Text(value)
            if len(value) > cap:
                kept = max(8, cap - len(CUT_MARK.format(n=f"{len(value):,}")))
                if value.startswith("/") and "\n" not in value:  # a path: its end, the name, stays
                    kept = max(kept, len(value.rsplit("/", 1)[-1]) + 3)  # the name whole: "/…/name"
                    text = Text(cut_path(value, kept))
                    left = len(value) - (kept - 1)  # its ellipsis stands for them
                else:
                    text = Text(value[:kept])
                    left = len(value) - kept
                text.append(CUT_MARK.format(n=f"{left:,}"), style="bold reverse")
            # A value wraps in its own column, under its first line, never under the labels.
            wrapped = list(text.wrap(self.console, max(1, width - DETAIL_LABEL))) or [Text()]
            for n, part in enumerate(wrapped):
                head = Text(f"{label:>9}  ", style="bold") if n == 0 else Text(" " * DETAIL_LABEL)
                lines.append(head + part)
        most = self._detail_lines()
        pane.styles.max_height = most + 1  # and its border
        if len(lines) > most:  # a narrow or short screen: cut the whole, and say so
            lines = [*lines[: most - 1], Text("… cut here: Enter shows it whole", "bold reverse")]
        pane.update(Text("\n").join(lines))

    def decided_lines(self) -> list[Text]:
        """The strip's lines, newest last: when, the host (with --host), then the call and
        what decided it, as `wisp pending watch` says it (made visible, cut to the width).
        A call denied is shown bold, so it is seen among those allowed."""
        most = DECIDED_SHOWN if self.height >= DECIDED_ROOMY_LINES else 1
        hosts = len(self.links) > 1
        lines = []
        for host, line in list(self.decided)[-most:]:
            when = line.ts.astimezone().strftime("%H:%M:%S") if line.ts is not None else "?"
            said = (f"{host}: " if hosts else "") + line.said
            text = one_line(visible(f"{when}  {said}"), max(8, self.width - SUMMARY_PADDING))
            lines.append(Text(text, style="bold" if line.verdict is Verdict.DENY else ""))
        return lines

    def _show_decided(self) -> None:
        if not self._drawn():
            return
        strip = self.screen_stack[0].query_one("#decided", Static)
        shown = not self.decided_hidden and bool(self.decided)
        strip.set_class(not shown, "hidden")
        if shown:
            strip.update(Text("\n").join(self.decided_lines()))

    def action_toggle_decided(self) -> None:
        """`d`: hide or show the calls decided without asking (kept meanwhile)."""
        self.decided_hidden = not self.decided_hidden
        self._show_decided()
        if self.decided_hidden:
            self.say("calls decided without asking: hidden (d shows them again)")
        else:
            self.say(f"calls decided without asking: shown ({len(self.decided)} lately)")

    def _detail_lines(self) -> int:
        """The detail pane's lines: DETAIL_MAX_LINES, fewer on a screen too short to keep
        the table's rows in view beside it (40x15 shows three rows and five detail lines)."""
        spare = self.height - OTHER_LINES - TABLE_MIN_LINES
        return max(DETAIL_MIN_LINES, min(DETAIL_MAX_LINES, spare))

    def _show_summary(self) -> None:
        """Redraw the summary line once the lines at hand are handled: a burst of a thousand
        requests redraws it once, not a thousand times."""
        if not self._summary_due:
            self._summary_due = True
            self.call_later(self._draw_summary)

    def _draw_summary(self) -> None:
        self._summary_due = False
        if not self._drawn():
            return
        self._set_clock()  # the rows changed: so may the next shown time that changes
        counts = {kind: 0 for kind in Kind}
        for item in self.items.values():
            if item.answerable:
                counts[item.kind] += 1
        total = sum(counts.values())
        parts = [f"{total} waiting"]
        by_kind = " (" + ", ".join(f"{n} {k.value}" for k, n in counts.items()) + ")"
        shown = [self.kind_filter.value] if self.kind_filter else []
        if self.asker_filter:
            shown.append("from " + self.asker_label)
        if self.text_filter:
            shown.append(f'matching "{one_line(self.text_filter, FILTER_SHOWN)}"')
        parts.append("showing " + (" ".join(shown) if shown else "all"))
        # A host that is not ready leads the line, so a narrow terminal never cuts it off;
        # with every host ready they close it.
        unready = [f"{visible(h)} {s.value}" for h, s in self.hosts.items() if s is not Relay.READY]
        if unready:
            parts.insert(0, " ".join(unready))
        elif len(self.links) > 1:
            parts.append(" ".join(visible(h) for h in self.hosts))
        line = " · ".join(parts)
        # The count per kind goes first when the line would be cut: never what is shown
        # (a filter) or a host that is down.
        if not self.narrow and len(line) + len(by_kind) <= self.width - SUMMARY_PADDING:
            waiting = parts.index(f"{total} waiting")
            line = " · ".join([*parts[:waiting], parts[waiting] + by_kind, *parts[waiting + 1 :]])
        self.screen_stack[0].query_one("#summary", Static).update(Text(line))

    # --- keys ------------------------------------------------------------------------

    def action_open(self) -> None:
        item = self.selected()
        if item is None:
            self.say("nothing to answer")
            return
        self.series.clear()
        self._ask(item)

    def _ask(self, item: Waiting, series: str | None = None) -> None:
        if not item.answerable or item.key in self.answering:
            state = self._state_of(item)
            self.say(f"{item.id} is {state}: it takes no answer here")
            return
        dialog_type = dialog_for(item.kind)
        if dialog_type is None:
            how = " or ".join(view(item.kind).answer_commands(item.id))
            self.say(f"{item.id} is answered from a terminal here: {how}")
            return
        dialog = dialog_type(item, series=series)
        self.dialog, self.dialog_key = dialog, item.key
        self.push_screen(dialog, callback=lambda choice: self._chosen(item.key, choice))
        self._set_clock()  # its own "expires in" counts down at the display deadlines

    def _chosen(self, key: str, choice: Choice | None) -> None:
        if self.dialog_key != key:
            return  # closed because its request went away; _close_dialog said so
        in_series = self.dialog is not None and self.dialog.series is not None
        self.dialog = self.dialog_key = None
        item = self.items.get(key)
        if choice is None:
            if in_series:  # Esc ends answering all from one asker
                self.say(f"stopped; {len(self.series) + 1} from this asker left waiting")
                self.series.clear()
            return
        if item is None:
            self.say("that request is gone: nothing was sent")
        else:
            self.run_worker(self._send_answer(item, choice), group="answers", exit_on_error=False)
        self._next_in_series()

    async def _send_answer(self, item: Waiting, choice: Choice) -> None:
        link = next(link for link in self.links if link.host == item.host)
        line = AnswerLine(
            id=item.id,
            kind=item.kind,
            decision=choice.decision,
            text=choice.text,
            reason=choice.reason,
            width=choice.width,
        )
        self.answering[item.key] = item
        self._update_row(item)
        if not await link.send(line):
            self.answering.pop(item.key, None)
            self._update_row(item)
            self.say(f"{item.host}: the relay is not taking answers; nothing was sent")

    def _close_dialog(self, key: str, why: str) -> None:
        """Close the dialog open on a request that can no longer be answered, saying why."""
        if self.dialog is None or self.dialog_key != key:
            return
        dialog, self.dialog, self.dialog_key = self.dialog, None, None
        if dialog in self.screen_stack:
            dialog.dismiss(None)  # its callback sees the dialog is no longer ours: no-op
        self.say(why)
        self._next_in_series()

    def _next_in_series(self) -> None:
        while self.series:
            key = self.series.popleft()
            item = self.items.get(key)
            if item is not None and item.answerable and key not in self.answering:
                done = self.series_total - len(self.series)
                self._ask(item, series=f"{done} of {self.series_total} from {who(item)}")
                return

    def action_answer_all(self) -> None:
        """Answer everything waiting from the selected request's asker, a dialog each."""
        item = self.selected()
        if item is None:
            self.say("nothing to answer")
            return
        keys = [
            key
            for key, other in self.items.items()
            if other.asker_key == item.asker_key
            and other.answerable
            and key not in self.answering
            and self._passes(other)
        ]
        if not keys:
            self.say(f"nothing from {who(item)} waits")
            return
        self.series = deque(keys)
        self.series_total = len(keys)
        self._next_in_series()

    def action_kind_filter(self) -> None:
        cycle = (None, *(v.kind for v in views()))  # every kind, then all again
        index = cycle.index(self.kind_filter)
        self.kind_filter = cycle[(index + 1) % len(cycle)]
        self._build_table()
        self._show_summary()

    def action_text_filter(self) -> None:
        """`/`: the filter box, with the text filtered by now; rows follow as it is typed."""
        main = self.screen_stack[0]
        box = main.query_one("#filter", FilterBox)
        box.display = True
        box.value = self.text_filter
        # Focused now, not after the keys already read: `/deploy` typed in one burst (or
        # pasted) is all the filter's, never `d` and the rest as keys of the rows.
        main.set_focus(box)

    def set_text_filter(self, text: str, *, keep_open: bool) -> None:
        """Filter the rows by *text* (empty: no filter); closed, the rows take the keys."""
        self.text_filter = text
        main = self.screen_stack[0]
        box = main.query_one("#filter", FilterBox)
        if not keep_open:
            box.display = False
            main.set_focus(main.query_one("#requests", DataTable))  # now, as the box took it
            if not text:
                box.value = ""
        self._build_table()
        self._show_summary()

    def action_asker_filter(self) -> None:
        if self.asker_filter is not None:
            self.asker_filter = None
        else:
            item = self.selected()
            if item is None:
                self.say("select a request to show only its asker's")
                return
            self.asker_filter = item.asker_key
            on = f" on {item.host}" if len(self.links) > 1 else ""
            self.asker_label = one_line(who(item, short=True) + on, ASKER_LABEL)
        self._build_table()
        self._show_summary()

    def action_restart_down(self) -> None:
        self.action_restart()

    def action_restart(self) -> None:
        """Start again every relay that has ended (the person's r, after it said so)."""
        down = [link for link in self.links if self.hosts.get(link.host) is Relay.DOWN]
        if not down:
            self.say("every relay is running: nothing to restart")
            return
        for link in down:
            fresh = Link(host=link.host, argv=link.argv, env=link.env, cwd=link.cwd)
            self.links[self.links.index(link)] = fresh
            self.hosts[link.host] = Relay.STARTING
            self.ready[link.host] = asyncio.Event()
            self.run_worker(self._run_link(fresh), group="links", exit_on_error=False)
            self.say(f"{link.host}: starting its relay again")
        self.refresh_bindings()
        self._show_summary()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`r restart` is in the footer only while a relay is down (else r is the screen's
        hidden binding, which says that every relay runs)."""
        if action == "restart_down":
            return any(state is Relay.DOWN for state in self.hosts.values())
        return True

    def action_toggle_detail(self) -> None:
        self.screen_stack[0].query_one("#detail", Static).toggle_class("hidden")

    def action_history(self) -> None:
        screen = HistoryScreen()
        self.history_screen = screen

        def closed(_result: None) -> None:
            self.history_screen = None

        self.push_screen(screen, callback=closed)
        for link in self.links:
            if self.hosts.get(link.host) is Relay.READY:
                self.run_worker(
                    link.send(HistoryRequest(limit=HISTORY_LIMIT)),
                    group="history",
                    exit_on_error=False,
                )


def _clock(ts: str) -> str:
    """An audit time as this machine's wall clock (HH:MM:SS), or as it came if unreadable."""
    try:
        return parse_time(ts).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return visible(ts)


def _link(host: str, argv: Sequence[str], env: Mapping[str, str] | None) -> Link:
    """The link for a relay to start: this machine's as :func:`local_link` starts it (never
    in the TUI's directory), another host's with *env*."""
    if host == LOCAL and list(argv) == local_argv():
        return local_link(env)
    return Link(host=host, argv=list(argv), env=env)


def default_relays(hosts: Sequence[str], template: str) -> list[tuple[str, list[str]]]:
    """This machine's relay, and one per host by *template*."""
    checked = check_hosts(hosts)
    return [(LOCAL, local_argv()), *((host, host_argv(template, host)) for host in checked)]
