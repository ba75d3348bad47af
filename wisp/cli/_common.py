"""What every `wisp` command shares: where output goes, and how it fails."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from wisp.cli._help import WispGroup, WispTyper

# What a command writes and how it ends (wisp.program.writes, where what the program serves before
# the CLI loads says them too): named here as well, as the commands have always imported them.
from wisp.program.writes import (
    ExitCode,
    channel_or_end,
    config_or_end,
    end,
    json_line,
    no_collections,
    not_a_terminal,
    print_json,
    print_json_array,
    safe,
    safe_json,
    say,
    tell,
)

__all__ = [
    "ExitCode",
    "choice_of",
    "choices",
    "colour_allowed",
    "command_group",
    "config_or_fail",
    "emit",
    "err",
    "fail",
    "json_line",
    "me",
    "no_collections",
    "open_channel",
    "out",
    "print_json",
    "print_json_array",
    "refuse",
    "require_terminal",
    "require_text",
    "safe",
    "safe_json",
    "say",
    "tell",
    "typed_as",
    "width",
]

# The channel, the settings and the home are imported by the helpers that use them: a command
# that reads neither (`wisp --version`, `--help`) loads no records, kinds table or stores.
if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


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
    from wisp import current_user

    return current_user()


# How a command ends with a message, opens the channel, reads the settings: wisp.program.writes's,
# as the commands served before the CLI loads do, under the names the commands use.
fail = end
open_channel = channel_or_end
config_or_fail = config_or_end


def require_text(value: str, what: str, example: str) -> None:
    """A usage error (exit 2, nothing filed) for text a person could not be asked about: empty,
    or only spaces."""
    if not value.strip():
        fail(f"{what} is empty: there would be nothing to show you. Give it, e.g. {example}.")


def refuse(message: str) -> NoReturn:
    """A refusal: nothing was written (exit 1)."""
    fail(message, ExitCode.NO)


def require_terminal(command: str, what: str = "answers", *, doing: str = "answering") -> None:
    """Answers, and changes that loosen what protects the person, are taken only from a
    terminal: a speed bump for an agent's shell tool (docs/cli.md, "The trust model")."""
    if not sys.stdin.isatty():
        fail(not_a_terminal(command, what, doing=doing))


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
