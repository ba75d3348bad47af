"""The dialogs: one per kind, each showing the whole request and taking its answers by key.

A dialog dismisses with a :class:`Choice` (the answer to send) or None (closed unanswered:
the request keeps waiting). The request is shown whole — wrapped, never cut — in a scrolling
area as tall as the screen allows; when it does not all fit, the approving keys (`y s p a` for
a command, `k` for a fact) are refused until the person has scrolled to its end, so nothing
is approved unseen (a long command's tail, its directory, who asks, its ID).

Ctrl-C refuses, whatever the kind: `no` for a command, `drop` for a fact, `decline` for a
question — never an approval. Text from the request reaches the
screen only as :class:`rich.text.Text` made by :mod:`wisp.tui._model` (visible, no markup).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

import attrs
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pending import (
    EXACT_WIDTH,
    KINDS,
    Decision,
    Kind,
    Scope,
    State,
    Width,
    width_json,
    width_words,
)
from wisp._text import visible
from wisp.kinds import view
from wisp.tui._model import Waiting, detail

AnswerWidth = tuple[Width, tuple[str, ...] | None, str | None]


def _width_short(width: AnswerWidth) -> str:
    """A width in the few words the keys line has room for."""
    name, prefix, path = width
    if name is Width.COMMAND:
        return visible(" ".join(prefix or ())) + " *"
    if name is Width.FILE:
        return f"edits to {visible(PurePath(path or '').name)}"
    if name is Width.PROJECT:
        return "edits in this project"
    return "this call"


def hand_on(event: events.Key, box: Input, on_escape: Callable[[], object] | None = None) -> None:
    """A key that reached another widget after *box* took the focus (read in one burst with
    the key that opened the box: `/deploy⏎`, `nuse make⏎`) is the box's: handed on, in
    order (a character typed into it, Enter submitting it, Esc as *on_escape*)."""
    if box.screen.focused is not box:
        return
    event.stop()
    event.prevent_default()
    if event.key == "enter":
        box.call_later(box.action_submit)
    elif event.key == "escape" and on_escape is not None:
        box.call_later(on_escape)
    elif event.is_printable:
        box.post_message(events.Key(event.key, event.character))


class RequestScroll(VerticalScroll):
    """The dialog's request, scrolled by ↓ PgDn End; keys that follow `n` in one burst go
    to the reason box."""

    def on_key(self, event: events.Key) -> None:
        screen = self.screen
        if (
            event.key == "n"
            and isinstance(screen, CommandDialog)
            and not screen.query_one("#reason", Input).display
        ):
            # Taken here, as the request takes the key (a binding would act only once the
            # key had bubbled up to the app, after the reason's letters read with it).
            event.stop()
            screen.action_answer(Decision.NO.value)
            return
        for box in screen.query("#reason").results(Input):
            hand_on(event, box, getattr(screen, "action_later", None))


KEYS_END = "   Esc: later"
SHORT_ROOM = 3  # fewer lines than this left for a question: its keys lose their margin
# Narrower than this, a dialog says "▼ more below" and the like in their short words, one
# line at 40 columns (the long ones took three of a 40x15 screen's eight lines for the request).
NARROW_MORE = 70
DIALOG_MAX_WIDTH = 100  # the dialog's max-width (its CSS)
DIALOG_EDGE = 4  # its border (2) and padding (2), beside the text
DIALOG_FRAME_LINES = 3  # its border (2) and the keys' margin (1)
MIN_REQUEST_LINES = 3  # the request keeps at least these, however short the screen
REASON_LINES = 3  # the reason box, with its border


@attrs.frozen(kw_only=True)
class Choice:
    """An answer the person gave in a dialog."""

    decision: Decision
    text: str | None = None
    reason: str | None = None  # told to the asker with a `no`
    # How wide an approval reaches (an answer's `width`, docs/channel.md "Widths"); None: the
    # exact call.
    width: Mapping[str, Any] | None = None


def _details(item: Waiting) -> Text:
    """The whole request, one labelled field a line, wrapped by the terminal, never cut."""
    out = Text()
    for label, value in detail(item, datetime.now(UTC)):
        out.append(f"{label:>9}  ", style="bold")
        out.append(value)
        out.append("\n")
    out.rstrip()
    return out


class Dialog(ModalScreen[Choice | None]):
    """What every dialog shares: a heading, the request, the keys, and Esc for later."""

    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > Vertical {
        width: 100%; max-width: 100; height: auto; max-height: 100%;
        border: round $accent; padding: 0 1; background: $surface;
    }
    Dialog .heading { text-style: bold; }
    Dialog .keys { color: $text-muted; margin-top: 1; }
    Dialog #more { color: $warning; text-style: bold; }
    Dialog #note { color: $warning; }
    Dialog VerticalScroll { height: auto; }
    Dialog.fact > Vertical { border: round $success; }
    """
    # Screen lines the dialog keeps for itself around the request: the border (2), the
    # heading, the "more" line, the note, an answer box (3), the keys and their margin (2).
    # (The command and fact dialogs count what they show instead: `_fit`.)
    CHROME_LINES = 10
    # Keys that approve (say yes): refused until the whole request has been on screen.
    APPROVING: frozenset[Decision] = frozenset()
    APPROVE = ""  # what the approving keys do, in the dialog's own words (none: a question)
    APPROVE_KEYS = ""  # the approving keys, for the short words of a narrow screen
    KEYS = ""

    @property
    def narrow(self) -> bool:
        return self.app.size.width < NARROW_MORE

    @property
    def more(self) -> str:
        if not self.APPROVING:  # a question: nothing to approve, its answers never wait
            if self.narrow:
                return "▼ more below: ↓ PgDn End to read it"
            return "▼ more below — scroll (↓ PgDn End, or the wheel) to read the rest"
        if self.narrow:
            return f"▼ more below: ↓ End, then {self.APPROVE_KEYS}"
        return (
            f"▼ more below — scroll to the end (↓ PgDn End) before {self.APPROVE}: "
            "the whole request must be seen"
        )

    @property
    def not_yet(self) -> str:
        """An approving key refused: the end has not been seen."""
        if self.narrow:
            return f"▼ not yet: ↓ End, then {self.APPROVE_KEYS}"
        return (
            "▼ not yet: scroll to the end (↓ PgDn End) first — the whole request "
            f"must be seen before {self.APPROVE}"
        )

    @property
    def held_words(self) -> str:
        """An approving key held while the view scrolls to the end."""
        if self.narrow:
            return "▼ scrolling: taken at the end"
        return "▼ scrolling to the end: your answer is taken once it is there"

    def __init__(self, item: Waiting, *, series: str | None = None) -> None:
        super().__init__()
        self.item = item
        self.series = series  # "2 of 5 from …" when answering all from one asker

    def compose(self) -> ComposeResult:
        heading = view(self.item.kind).heading + (f"  ({self.series})" if self.series else "")
        with Vertical():
            yield Static(Text(heading), classes="heading")
            with RequestScroll(id="scroll"):
                yield Static(_details(self.item), id="request")
            yield Static("", id="more", markup=False)
            note = Static(Text(self.note()), id="note")
            note.display = bool(self.note())
            yield note
            yield from self.compose_answer()
            yield Static(Text(self.keys_text() + KEYS_END), classes="keys")

    def keys_text(self) -> str:
        """The keys line (a command's says the width its approving keys give)."""
        return self.KEYS

    def note(self) -> str:
        return ""

    def redraw_request(self) -> None:
        """Draw the request again, as the clock has moved: its "filed … ago, expires in Ns"
        line (called at the app's display deadlines; nothing here keeps time itself)."""
        if self.is_mounted:
            self.query_one("#request", Static).update(_details(self.item))

    def compose_answer(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.seen_end = False  # the end of the request has been on screen
        self.held: Choice | None = None  # an approval typed while scrolling to the end
        scroll = self.query_one("#scroll", VerticalScroll)
        self._fit()
        self.watch(scroll, "scroll_y", lambda _y: self._mark(), init=False)
        self.call_after_refresh(self._mark)

    def on_resize(self, _event: events.Resize) -> None:
        self._fit()
        self.call_after_refresh(self._mark)

    def _fit(self) -> None:
        """The request takes every line the screen has beyond the dialog's own: its frame,
        and the lines of what it shows at this width — the heading, the "more" line, the
        note and the reason box when shown, the keys (at 40x15 a one-line command fits
        whole, and is approved without scrolling)."""
        width = min(self.app.size.width, DIALOG_MAX_WIDTH) - DIALOG_EDGE
        heading = self.query_one(".heading", Static)
        shown = [str(heading.render()), self.more, self.keys_text() + KEYS_END]
        note = self.query_one("#note", Static)
        if note.display:
            shown.append(self.note())
        own = DIALOG_FRAME_LINES + sum(self._lines(text, width) for text in shown)
        if any(box.display for box in self.query("#reason").results(Input)):
            own += REASON_LINES
        scroll = self.query_one("#scroll", VerticalScroll)
        scroll.styles.max_height = max(MIN_REQUEST_LINES, self.app.size.height - own)

    def _lines(self, text: str, width: int) -> int:
        """How many lines *text* takes, wrapped as the screen wraps it, at *width*."""
        return len(Text(text).wrap(self.app.console, max(width, 1)))

    def _at_end(self) -> bool:
        scroll = self.query_one("#scroll", VerticalScroll)
        return scroll.max_scroll_y == 0 or scroll.scroll_y >= scroll.max_scroll_y

    def _mark(self) -> None:
        """Remember once the end has been seen; say "more below" until then."""
        if not self.is_mounted:
            return
        if self._at_end():
            self.seen_end = True
            if self.held is not None:  # typed while the scroll was on its way here
                held, self.held = self.held, None
                self.dismiss(held)
                return
        if self.held is not None:
            return  # it keeps saying the answer is held, until the end is reached
        more = self.query_one("#more", Static)
        more.update("" if self.seen_end else self.more)
        more.display = not self.seen_end

    def _scrolling_to_end(self) -> bool:
        scroll = self.query_one("#scroll", VerticalScroll)
        return scroll.scroll_target_y >= scroll.max_scroll_y > scroll.scroll_y

    def answer(
        self,
        decision: Decision,
        text: str | None = None,
        reason: str | None = None,
        width: Mapping[str, Any] | None = None,
    ) -> None:
        choice = Choice(decision=decision, text=text, reason=reason, width=width)
        if decision in self.APPROVING:
            self._mark()
            if not self.seen_end:
                # A scroll asked for just before (End and y typed at once, as a terminal
                # sends them in one read) only starts after the next refresh: judge then.
                self.call_after_refresh(self._approve_unseen, choice)
                return
        self.dismiss(choice)

    def _approve_unseen(self, choice: Choice) -> None:
        """An approval typed before the end was seen: taken if the end is on screen now,
        held until it is while the view scrolls there, else refused saying why."""
        if not self.is_mounted or self.app.screen is not self:
            return  # closed meanwhile (answered elsewhere, or Esc)
        self._mark()
        more = self.query_one("#more", Static)
        if self.seen_end:
            self.dismiss(choice)
        elif self._scrolling_to_end():
            # Taken once the scroll gets there, never dropped unsaid.
            self.held = choice
            more.update(self.held_words)
            more.display = True
        else:
            more.update(self.not_yet)
            more.display = True
            self.query_one("#scroll", VerticalScroll).focus()

    def action_later(self) -> None:
        self.dismiss(None)


class CommandDialog(Dialog):
    """A command (or a tool call): `y s p a` approve; `n` opens a box for an optional reason,
    told to the agent (why, or what to do instead), and Enter there denies; Ctrl-C denies at
    once, with no reason. Where the request offers wider answers (docs/channel.md, "Widths"),
    `w` steps through them ("this call", `npm test *`, edits to the file, edits in the
    project) and `s p a` give the one shown; a must-ask call takes `y` and `n` only, and says
    why."""

    KEYS = "[y]es once  [s]ession  [p]roject  [a]lways  [n]o"
    MUST_ASK_KEYS = "[y]es once  [n]o"
    BINDINGS = [  # noqa: RUF012 - textual's declared form
        Binding("y", "answer('once')", "yes once"),
        Binding("s", "answer('session')", "session"),
        Binding("p", "answer('project')", "project"),
        Binding("a", "answer('always')", "always"),
        Binding("w", "widen", "width"),
        Binding("n", "answer('no')", "no"),
        Binding("ctrl+c", "deny_now", "no", priority=True),
        Binding("escape", "later", "later"),
    ]
    APPROVING = frozenset({Decision.ONCE, Decision.SESSION, Decision.PROJECT, Decision.ALWAYS})
    APPROVE = "answering yes (y s p a)"
    APPROVE_KEYS = "y s p a"
    REASON_TITLE = "deny: why, or what to do instead (optional) · Enter: deny · Esc: back"

    def __init__(self, item: Waiting, *, series: str | None = None) -> None:
        super().__init__(item, series=series)
        self.offers = item.line.offered
        wider = [o.target for o in self.offers.widths if o.width is not Width.EXACT]
        self.widths: list[AnswerWidth] = [EXACT_WIDTH, *wider]
        self.width_at = 0
        self.refused = ""  # why the last approving key was not taken

    def keys_text(self) -> str:
        if self.offers.must_ask:
            return self.MUST_ASK_KEYS
        if len(self.widths) == 1:
            return self.KEYS
        return f"{self.KEYS}  [w]idth: {_width_short(self.widths[self.width_at])}"

    def note(self) -> str:
        said = [f"asked every time: {why}" for why in self.offers.must_ask]
        return "\n".join([*said, *([self.refused] if self.refused else [])])

    def _renote(self) -> None:
        note = self.query_one("#note", Static)
        note.update(Text(self.note()))
        note.display = bool(self.note())
        self.query_one(".keys", Static).update(Text(self.keys_text() + KEYS_END))
        self._fit()

    def action_widen(self) -> None:
        """The next width offered (after the widest: the exact call again)."""
        if len(self.widths) > 1:
            self.width_at = (self.width_at + 1) % len(self.widths)
            self.refused = ""
            self._renote()

    def compose_answer(self) -> ComposeResult:
        box = Input(placeholder="told to the agent", id="reason", select_on_focus=False)
        box.border_title = self.REASON_TITLE
        box.display = False
        yield box

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#scroll", VerticalScroll).focus()  # ↓ PgDn End scroll the request

    def action_answer(self, decision: str) -> None:
        chosen = Decision(decision)  # a binding's word, as textual passes it
        if chosen == Decision.NO:
            box = self.query_one("#reason", Input)
            box.display = True
            self._fit()  # the box takes its lines from the request's
            self.set_focus(box)  # now: a reason typed in one burst with `n` is all the box's
            return
        target = EXACT_WIDTH if chosen == Decision.ONCE else self.widths[self.width_at]
        offer = self.offers.find(target)
        if offer is None or Scope(chosen.value) not in offer.scopes:
            self.refused = f"{chosen.value} is not offered for {width_words(target)}"
            self._renote()
            return
        self.answer(chosen, width=width_json(target))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.answer(Decision.NO, reason=event.value.strip() or None)

    def action_deny_now(self) -> None:
        self.answer(Decision.NO)

    def action_later(self) -> None:
        box = self.query_one("#reason", Input)
        if box.display:  # Esc in the reason box: back to the request, nothing sent
            box.display = False
            self._fit()
            self.set_focus(self.query_one("#scroll", VerticalScroll))
            return
        super().action_later()


class FactDialog(Dialog):
    KEYS = "[k]eep  [d]rop"
    BINDINGS = [  # noqa: RUF012 - textual's declared form
        Binding("k", "answer('keep')", "keep"),
        Binding("d", "answer('drop')", "drop"),
        # Ctrl-C drops, as it refuses a command: the refusing answer, never the keeping one.
        Binding("ctrl+c", "answer('drop')", "drop", priority=True),
        Binding("escape", "later", "later"),
    ]

    APPROVING = frozenset({Decision.KEEP})
    APPROVE = "keeping it (k)"
    APPROVE_KEYS = "k"

    def note(self) -> str:
        if self.item.state is State.HANDED_OVER:
            return "its asker has stopped: your answer is applied here"
        return ""

    def on_mount(self) -> None:
        super().on_mount()
        self.add_class("fact")
        self.query_one("#scroll", VerticalScroll).focus()

    def action_answer(self, decision: str) -> None:
        self.answer(Decision(decision))  # a binding's word, as textual passes it


class QuestionDialog(Dialog):
    """A question: its options to pick (1-9, or arrows and Enter), and/or a text box."""

    BINDINGS = [  # noqa: RUF012 - textual's declared form
        Binding("ctrl+c", "decline", "decline", priority=True),
        Binding("escape", "later", "later"),
    ]

    @property
    def KEYS(self) -> str:  # type: ignore[override]
        keys = []
        if self.item.options:
            keys.append("1-9, ↑↓ Enter: pick")
        if self.item.free_text:
            keys.append("type, Enter: answer")
        keys.append("Ctrl-C: decline")
        return "  ".join(keys)

    def compose_answer(self) -> ComposeResult:
        if self.item.options:
            yield OptionList(
                *(
                    Option(Text(f"{n}. {visible(option)}"), id=str(n - 1))
                    for n, option in enumerate(self.item.options, 1)
                ),
                id="options",
            )
        if self.item.free_text:
            yield Input(placeholder="your answer", id="text", select_on_focus=False)

    def _fit(self) -> None:
        """The request takes what the options, the text box and the keys leave: the keys
        stay on screen however short it is (at 40x15 they were cut off below the box)."""
        answer_lines = (len(self.item.options) + 2 if self.item.options else 0) + (
            3 if self.item.free_text else 0
        )
        inside = max(self.app.size.width - 4, 10)  # the border and padding
        more_lines = self._lines(self.more, inside)
        keys_lines = -(-len(self.KEYS + KEYS_END) // inside)
        room = (
            self.app.size.height
            - (self.CHROME_LINES - 3)
            - answer_lines
            - (more_lines - 1)
            - (keys_lines - 1)
        )
        keys = self.query_one(".keys", Static)
        # Short of lines, the keys lose their margin rather than go below the screen.
        keys.styles.margin = (0 if room < SHORT_ROOM else 1, 0, 0, 0)
        room += 1 if room < SHORT_ROOM else 0
        self.query_one("#scroll", VerticalScroll).styles.max_height = max(1, room)

    def on_mount(self) -> None:
        super().on_mount()
        if self.item.free_text:
            self.query_one("#text", Input).focus()
        elif self.item.options:
            self.query_one("#options", OptionList).focus()

    def on_key(self, event: events.Key) -> None:
        options = self.item.options
        key = event.key
        if isinstance(self.focused, OptionList) and key.isdigit() and 1 <= int(key) <= len(options):
            event.stop()
            self.answer(Decision.ANSWER, options[int(key) - 1])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.answer(Decision.ANSWER, self.item.options[event.option_index])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        if not text.strip():
            self.query_one("#text", Input).border_subtitle = "type an answer, or Ctrl-C to decline"
            return
        self.answer(Decision.ANSWER, text)

    def action_decline(self) -> None:
        self.answer(Decision.DECLINE)


# A dialog answers by a kind's decisions, whatever the kind: a kind that takes a command's
# decisions (a tool call) is answered as a command is; its heading is its view's.
_BY_DECISIONS: dict[tuple[Decision, ...], type[Dialog]] = {
    (
        Decision.ONCE,
        Decision.SESSION,
        Decision.PROJECT,
        Decision.ALWAYS,
        Decision.NO,
    ): CommandDialog,
    (Decision.KEEP, Decision.DROP): FactDialog,
    (Decision.ANSWER, Decision.DECLINE): QuestionDialog,
}


def dialog_for(kind: Kind) -> type[Dialog] | None:
    """The dialog that answers *kind* by its decisions; None for decisions no dialog takes
    (the request is then answered from a terminal, as its view says)."""
    return _BY_DECISIONS.get(tuple(KINDS[kind].decisions))
