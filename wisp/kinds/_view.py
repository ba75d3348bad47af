"""What every face asks of a kind: :class:`KindView`, one per kind, in its own module.

A face never switches on a kind. It asks the kind's view for every per-kind word (its noun,
its title, its short name), every hint (the commands that answer it), every row it shows (what
is asked, the listing's paragraphs, `wisp show`'s details) and how an answer reads. The
channel's facts of a kind (suffix, binding record, decisions, whether it dies with its
server) stay in :data:`pending.KINDS`; everything a person reads is here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from pending import Decision, Kind, State
from wisp._entry import EntryPoint
from wisp._text import one_line

# The states a request may still be answered in, whatever its kind: filed, or handed over (its
# asker gone, a grant or a person still able to settle it). Every other state has ended it.
# Every face asks this, never names the states itself.
ANSWERABLE = (State.FILED, State.HANDED_OVER)
# The states in which a request still waits, for the person or (answered) for its asker to
# apply the answer: the answerable ones, and answered. Every other state has ended it.
WAITING = (State.FILED, State.ANSWERED, State.HANDED_OVER)

# (label, text) rows, as listings and `wisp show` print them; a blank label continues the row
# above. The text is not yet made visible: faces pass it through `wisp._text.visible`.
Rows = list[tuple[str, str]]


class Answering(NamedTuple):
    """One command that answers a kind from a terminal: `wisp GROUP VERB ID [ARGS]`. (A row
    of a kind's table, made with keywords; not an attrs record: every command group declares
    its commands with these, and attrs' import is ~7.5 ms of a cold command, issue 23.)"""

    label: str  # the verb, as the asker's printout labels the line ("approve", "deny")
    command: str  # the command with `{id}` for the request's ID, and its required arguments
    decisions: tuple[Decision, ...]  # the decisions this command can give
    options: str = ""  # its options, as a full hint shows them (" [--scope SCOPE]")
    # It may approve wider than the exact call (`--width`: docs/cli.md, "Widths").
    widths: bool = False

    @property
    def invocation(self) -> str:
        """The command without its ID and arguments: `wisp approvals approve`."""
        return self.command.split(" {id}")[0]

    def line(self, request_id: str, *, options: bool = False) -> str:
        """The command for *request_id* (with its options, for a full hint)."""
        return self.command.format(id=request_id) + (self.options if options else "")


class KindView(ABC):
    """How one kind reads and is answered, for every face (see the module's docstring)."""

    kind: ClassVar[Kind]
    group: ClassVar[str]  # the CLI group that answers it: `wisp GROUP pending|show|…`
    entry_point: ClassVar[EntryPoint]  # where its answers from that group are audited
    noun: ClassVar[str]  # a few words for what it asks ("a command to approve")
    short: ClassVar[str]  # its name in a narrow table ("cmd")
    title: ClassVar[str]  # the title wisp files it with, which its notification shows
    heading: ClassVar[str]  # what a dialog that answers it asks ("Run this command?")
    notice_source: ClassVar[str]  # the `source` its notification is audited with
    effect: ClassVar[str]  # the relay effect a front end declares to carry it
    answering: ClassVar[tuple[Answering, ...]]  # the commands that answer it
    notes: ClassVar[tuple[str, ...]] = ()  # what a full hint adds below them
    answered_words: ClassVar[dict[Decision, str]] = {}  # how an answer reads ("kept")

    # --- how it is answered ------------------------------------------------------------

    def answer_commands(self, request_id: str) -> list[str]:
        """The commands that answer a request of this kind, bare."""
        return [a.line(request_id) for a in self.answering]

    def answer_lines(self, request_id: str) -> list[str]:
        """The commands that answer it with their options, then the notes (`wisp show`)."""
        return [a.line(request_id, options=True) for a in self.answering] + list(self.notes)

    def prompt_lines(self, request_id: str, *, more: Sequence[tuple[str, str]] = ()) -> list[str]:
        """The asker's "how to answer" lines: each command with its options after its label
        (`approve: wisp approvals approve ID [--scope SCOPE]`), then *more* (label, text) lines,
        the labels padded alike where they fit."""
        width = max(len(a.label) for a in self.answering) + 2
        labelled = [(a.label, a.line(request_id, options=True)) for a in self.answering]
        return [f"{label}:".ljust(width - 1) + f" {text}" for label, text in [*labelled, *more]]

    def how_to_answer(self, request_id: str) -> str:
        """The answering commands in a sentence: "`A` or `B`" (for a refusal)."""
        return " or ".join(f"`{c}`" for c in self.answer_commands(request_id))

    def answer_hint(self, request_id: str) -> str:
        """The answering commands in one line: "A (or: B)" (for an MCP caller)."""
        first, *rest = self.answer_commands(request_id)
        return first + "".join(f" (or: {c})" for c in rest)

    def body(self, asked: str, request_id: str) -> str:
        """A request's body as wisp files it: what is asked, and the command that answers."""
        return f"{asked} — {self.answer_commands(request_id)[0]}"

    def answered_word(self, decision: str) -> str:
        """How an answer reads to the person: `approved once`, `denied`, `kept`, …"""
        word: str = self.answered_words.get(decision, decision)  # type: ignore[call-overload]
        return word

    # --- what it shows -----------------------------------------------------------------

    @abstractmethod
    def asked(self, binding: Any) -> str:
        """What is asked, whole: the command, the fact, the question."""

    def asked_within(self, binding: Any, limit: int) -> str:
        """What is asked in one visible line of at most *limit* characters, for a row of a
        table: cut at its end, with an ellipsis (a kind whose end says most cuts elsewhere)."""
        return one_line(self.asked(binding), limit)

    def paragraphs(self, binding: Any) -> Rows:
        """What a listing shows below what is asked (where it runs, why, the options)."""
        return []

    @abstractmethod
    def details(self, binding: Any) -> Rows:
        """What `wisp show` and the TUI's detail pane show of the binding, whole."""

    def asker_parts(self, binding: Any) -> list[str]:
        """Who proposed it, where the binding says more than the asking program."""
        return []


def numbered(options: Sequence[str]) -> str:
    """Options numbered as an answer by number takes them: `1) a  2) b`."""
    return "  ".join(f"{n}) {option}" for n, option in enumerate(options, 1))
