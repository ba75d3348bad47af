"""What every `wisp` command shares: where output goes, and how it fails."""

from __future__ import annotations

import gc
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from wisp._text import visible
from wisp.cli._exit import ExitCode
from wisp.cli._help import WispGroup, WispTyper

# The channel, the settings and the home are imported by the helpers that use them: a command
# that reads neither (`wisp --version`, `--help`) loads no records, kinds table or stores.
if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from pending import Channel
    from wisp.stores.config import Config

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


def _text(text: str, style: str = "") -> Text:
    from rich.text import Text

    return Text(text, style=style)


def colour_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether any styling may be written: not when NO_COLOR is set to anything non-empty
    (no-color.org), which rich honours for colours only, not for bold."""
    env = os.environ if environ is None else environ
    return not env.get("NO_COLOR")


class _Console:
    """A rich Console made on first use: a command that prints JSON, or nothing, never loads
    rich (a good part of a cold start)."""

    def __init__(self, **settings: Any) -> None:
        self._settings = settings
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            class PipeConsole(Console):
                def on_broken_pipe(self) -> None:
                    # rich would exit 1 itself; the command's root says a closed pipe, once.
                    self.quiet = True
                    raise BrokenPipeError

            style: dict[str, Any] = (
                {} if colour_allowed() else {"color_system": None, "no_color": True}
            )
            self._console = PipeConsole(**self._settings, **style)
        return getattr(self._console, name)


# No emoji codes: wisp writes none (a request's own text is printed as Text, never read for
# codes), and without them a command's first print loads no 200 KB table of codes (~3 ms).
out: Console = _Console(highlight=False, soft_wrap=False, emoji=False)  # type: ignore[assignment]
err: Console = _Console(  # type: ignore[assignment]
    stderr=True, highlight=False, soft_wrap=True, emoji=False
)


@contextmanager
def no_collections() -> Iterator[None]:
    """No garbage collection while what lives to the command's end is made (then as it was).

    A listing keeps every object it makes until it is printed, so a collection finds nothing
    to free; but each one walks them all again, and with 10,000 requests (some 150,000
    objects) the collections made the listing grow faster than the channel: ~12.6x the work
    for 10x the requests, and ~40 ms at 10,000. (Mercurial's `util.nogc` does the same for
    its large builds.) The same holds for the modules and commands a command loads and
    builds. The command ends soon after; anything cyclic it leaves goes at exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def command_group(help: str, **settings: Any) -> typer.Typer:
    """A `wisp` command group, set up as every group is: help in words (see
    :mod:`wisp.cli._help`), plain text (no rich markup in request-derived text), plain
    tracebacks for bugs. Only the root offers shell completion."""
    settings.setdefault("add_completion", False)
    settings.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
    return WispTyper(
        help=help,
        cls=WispGroup,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        **settings,
    )


def width() -> int:
    """The columns output is laid out in: $COLUMNS if set, else the terminal's, else 80."""
    return max(out.width, 1)


def emit(lines: Iterable[str], *, style: str | None = None) -> None:
    """Lines already laid out (and made visible) to stdout, as they are."""
    for line in lines:
        out.print(_text(line, style=style or ""), soft_wrap=True)


def me() -> str:
    """The person running this command (answers they gave read "by you")."""
    from wisp._home import current_user

    return current_user()


def safe(text: str) -> str:
    """Text for a terminal: every control, bidi or zero-width character made visible, line by
    line. Messages carry text read from files (who answered, a reason); rich passes ESC, C1
    and bidi characters through, so nothing reaches the terminal unsanitised."""
    return "\n".join(visible(line) for line in text.split("\n"))


def say(text: str) -> None:
    """A message for people on stdout: never hard-wrapped (the terminal wraps it). Plain text
    needs no rich (as rich would print it with soft wrap: the text and a newline)."""
    sys.stdout.write(safe(text) + "\n")
    sys.stdout.flush()


def tell(text: str) -> None:
    """A message for people on stderr (progress, warnings, how to answer)."""
    sys.stderr.write(safe(text) + "\n")
    sys.stderr.flush()


def fail(message: str, code: ExitCode = ExitCode.ERROR) -> NoReturn:
    """Say what happened and what to do (the message's job), on stderr; exit with *code*."""
    tell(f"wisp: {message}")
    raise typer.Exit(int(code))


def open_channel() -> Channel:
    from pending import PendingError
    from wisp._home import open_channel as open_home_channel

    try:
        return open_home_channel()
    except PendingError as exc:
        fail(str(exc))


# What JSON may carry raw but a terminal (or a line-splitting script) must never get raw: DEL
# and the C1 controls, the bidirectional marks, overrides and isolates, and the line and
# paragraph separators. Outside strings JSON is ASCII, so each is inside a string, where a
# \u escape is the same character to every JSON reader.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def json_line(value: Any) -> str:
    """*value* as one line of JSON: any text, raw only where no terminal is fooled (see
    :data:`_UNSAFE_IN_JSON`; C0 controls JSON escapes itself). Every `--json` output is one."""
    return safe_json(json.dumps(value, ensure_ascii=False))


def safe_json(text: str) -> str:
    """JSON *text* (as json.dumps writes it, non-ASCII raw) made safe as :func:`json_line`
    makes it."""
    # Every character the pattern takes but DEL is past ASCII: text that is ASCII without DEL
    # (nearly all of it) needs no scan. Both checks run at memory speed; the pattern's scan
    # of `wisp pending --json` at 10,000 (4.7 MB) took ~25 ms.
    if text.isascii() and "\x7f" not in text:
        return text
    return _UNSAFE_IN_JSON.sub(_escaped, text)


def print_json(value: Any) -> None:
    # Written in two: joined, a large array (4.7 MB at 10,000 requests) was copied once more.
    sys.stdout.write(json_line(value))
    sys.stdout.write("\n")


def print_json_array(items: list[str]) -> None:
    """:func:`print_json` of a list, given its items' JSON texts (each as json.dumps writes
    it, non-ASCII raw): the same line."""
    # The brackets apart: joined to them, the items' text (4.7 MB at 10,000) is copied again.
    sys.stdout.write("[")
    sys.stdout.write(safe_json(", ".join(items)))
    sys.stdout.write("]\n")


def require_text(value: str, what: str, example: str) -> None:
    """A usage error (exit 2, nothing filed) for text a person could not be asked about: empty,
    or only spaces."""
    if not value.strip():
        fail(f"{what} is empty: there would be nothing to show you. Give it, e.g. {example}.")


def refuse(message: str) -> NoReturn:
    """A refusal: nothing was written (exit 1)."""
    fail(message, ExitCode.NO)


def config_or_fail() -> Config:
    from wisp._home import wisp_home
    from wisp.stores.config import ConfigError, load_config

    try:
        return load_config(wisp_home())
    except ConfigError as exc:
        fail(str(exc))


def require_terminal(command: str, what: str = "answers", *, doing: str = "answering") -> None:
    """Answers, and changes that loosen what protects the person, are taken only from a
    terminal: a speed bump for an agent's shell tool (docs/cli.md, "The trust model")."""
    if not sys.stdin.isatty():
        fail(
            f"`{command}` takes {what} only from a terminal, and standard input is not one. "
            f"This keeps an agent's shell tool from {doing} for you: run it yourself, in a "
            "terminal. Nothing was written."
        )


# --- what an option or argument takes ----------------------------------------------------


def typed_as(parse: Callable[[str], T]) -> Callable[[Any], T]:
    """A typer ``parser`` for an option or argument: *parse* turns the text typed into its
    value, raising ValueError whose message says what it takes (wisp's words, with the range
    or the choices). That is a usage error (exit 2, `Invalid value for '--OPTION': …`), and
    nothing else (pydantic's "Input should be…", "Value error, …") is ever said."""

    def parser(value: Any) -> T:
        if not isinstance(value, str):
            return value  # type: ignore[no-any-return]  # a default, already a value
        try:
            return parse(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return parser


def choice_of(enum: type[E]) -> Callable[[Any], E]:
    """:func:`typed_as` for one of *enum*'s values: anything else is refused, naming them."""

    def parse(text: str) -> E:
        try:
            return enum(text)
        except ValueError:
            taken = ", ".join(repr(member.value) for member in enum)
            raise ValueError(f"{text[:40]!r} is not one of {taken}.") from None

    return typed_as(parse)


def choices(enum: type[E]) -> str:
    """The metavar of an option :func:`choice_of` parses: its values, as `a|b|c`, so that
    `--help` lists what it takes."""
    return "|".join(str(member.value) for member in enum)
