"""Help as a person reads it: what each argument and option takes, in words (never a Python
type name such as ``<list[str]>``), every choice listed, examples kept as written, command
summaries never cut; a group named alone shows its help and exits 0.

Typer draws help from the parameters' Python types; these classes draw it from the metavars
and help texts the commands give instead.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, MutableMapping
from difflib import get_close_matches
from typing import Any

import typer
from typer._click import Command, Context, HelpFormatter, Parameter, echo
from typer._click.exceptions import NoSuchOption, UsageError
from typer.core import TyperCommand, TyperGroup


def _choices(param: Parameter) -> list[str] | None:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or not descriptor.is_choice or not descriptor.choices:
        return None
    return [str(getattr(choice, "value", choice)) for choice in descriptor.choices]


def _value_name(param: Parameter) -> str:
    """How an argument or an option's value is named in help: its metavar, or its choices."""
    if param.metavar:
        return param.metavar
    choices = _choices(param)
    if choices:
        return "|".join(choices)
    return (param.name or "value").upper()


def _usage_pieces(command: Any, ctx: Context) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if param.param_type_name != "argument":
            continue
        name = _value_name(param)
        if param.metavar is None and param.nargs != 1:
            name += "..."
        pieces.append(name if param.required or name.startswith("[") else f"[{name}]")
    return pieces


Records = list[tuple[str, str]]


def _help_records(command: Any, ctx: Context) -> tuple[Records, Records]:
    arguments: Records = []
    options: Records = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        help_text = inspect.cleandoc(getattr(param, "help", None) or "")
        if param.param_type_name == "argument":
            arguments.append((_value_name(param), help_text))
            continue
        names = ", ".join([*param.opts, *param.secondary_opts])
        if not getattr(param, "is_flag", False):
            names += f" {_value_name(param)}"
        options.append((names, help_text))
    return arguments, options


def _write_sections(command: Any, ctx: Context, formatter: HelpFormatter) -> None:
    arguments, options = _help_records(command, ctx)
    if arguments:
        with formatter.section("Arguments"):
            formatter.write_dl(arguments)
    if options:
        with formatter.section("Options"):
            formatter.write_dl(options)


def _write_epilog(command: Any, formatter: HelpFormatter) -> None:
    """Examples and notes exactly as written: each line kept, never re-flowed."""
    if not command.epilog:
        return
    formatter.write_paragraph()
    for line in command.epilog.strip("\n").splitlines():
        formatter.write(f"{line}\n")


def _hint_dash(ctx: Context, exc: NoSuchOption) -> NoSuchOption:
    """A value that begins with a dash reads as an option; say how to give it."""
    name = exc.option_name
    if name[1:2].isdigit() or name[1:2] == ".":
        exc.message += (
            f". A value that begins with '-' goes after `--`, so that it is not read as an "
            f"option: {ctx.command_path} ... -- {name}"
        )
    return exc


def _hint_extra(command: Any, ctx: Context, exc: UsageError) -> UsageError:
    """An extra argument is mostly an option's value given without its name (`approve ID
    always`): say which options take a value, and how they are named."""
    if not exc.message.startswith("Got unexpected extra argument"):
        return exc
    named = [
        f"{max(param.opts, key=len)} {_value_name(param)}"
        for param in command.get_params(ctx)
        if param.param_type_name == "option"
        and not getattr(param, "is_flag", False)
        and not getattr(param, "hidden", False)
    ]
    if named:
        exc.message += f". An option's value is given after its name: {', '.join(named)}"
    return exc


def _hint_close(group: Any, ctx: Context, args: list[str], exc: UsageError) -> UsageError:
    """A command not found: the closest names, as typer says them for a group whose commands
    are built (the root's are built on demand, so typer sees none of them)."""
    if not args or not exc.message.startswith("No such command") or "Did you mean" in exc.message:
        return exc
    matches = get_close_matches(args[0], group.list_commands(ctx))
    if matches:
        exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
    return exc


def _help_names(command: Any, ctx: Context) -> list[str]:
    """The help option's names in the order the settings give them (`-h, --help`), less any
    a parameter of *command* takes, as click has it. click gathers them in a set, so their
    order followed the interpreter's string hashing: the same help said `--help, -h` in one
    run and `-h, --help` in the next."""
    taken = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    return [name for name in ctx.help_option_names if name not in taken]


class WispCommand(TyperCommand):
    def get_help_option_names(self, ctx: Context) -> list[str]:
        return _help_names(self, ctx)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return _usage_pieces(self, ctx)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        _write_sections(self, ctx, formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        _write_epilog(self, formatter)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            raise _hint_dash(ctx, exc) from None
        except UsageError as exc:
            raise _hint_extra(self, ctx, exc) from None


class WispGroup(TyperGroup):
    def get_help_option_names(self, ctx: Context) -> list[str]:
        return _help_names(self, ctx)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return [*_usage_pieces(self, ctx), self.subcommand_metavar]

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        _write_sections(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        _write_epilog(self, formatter)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Each command with its first line of help, whole (the formatter wraps it)."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            summary = command.short_help or inspect.cleandoc(command.help or "")
            rows.append((name, summary.split("\n\n")[0].replace("\n", " ")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def list_commands(self, ctx: Context) -> list[str]:
        """The commands in the order they were written: their names, none built for it."""
        return list(self.commands)

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            raise _hint_close(self, ctx, args, exc) from None

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            # Named alone, a group shows what it does: that is an answer, not an error.
            echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            raise _hint_dash(ctx, exc) from None


class WispTyper(typer.Typer):
    """A typer app whose commands and groups are :class:`WispCommand` and :class:`WispGroup`."""

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", WispCommand)
        return super().command(*args, **kwargs)


class _Built(MutableMapping[str, Command]):
    """A group's commands by name, each built by typer the first time it is looked up."""

    def __init__(self, makers: dict[str, Callable[[], Command]], built: dict[str, Command]):
        self._makers = makers
        self._built = built
        self._names = dict.fromkeys([*makers, *built])  # the order they were written in

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            self._built[name] = self._makers.pop(name)()  # KeyError: no such command
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._makers.pop(name, None)
        self._built[name] = command
        self._names[name] = None

    def __delitem__(self, name: str) -> None:
        self._makers.pop(name, None)
        self._built.pop(name, None)
        del self._names[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def group_command(app: typer.Typer) -> Command:
    """*app* as a click group, as ``typer.main.get_command`` makes it, but each command built
    only when it is looked up: `wisp approvals pending` builds one command, not eight
    (typer reads each command's signature and makes its parameters: ~3 M instructions each,
    issue 23). Help and completion list every command, and so build them all."""
    infos = app.registered_commands
    if app._add_completion or not (app.registered_callback or app.info.callback or len(infos) > 1):
        return typer.main.get_command(app)  # not a plain group: typer's own way
    app.registered_commands = []
    try:
        group = typer.main.get_group(app)
    finally:
        app.registered_commands = infos
    makers: dict[str, Callable[[], Command]] = {
        info.name or typer.main.get_command_name(info.callback.__name__): functools.partial(
            typer.main.get_command_from_info,
            info,
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
        )
        for info in infos
        if info.callback is not None
    }
    group.commands = _Built(makers, dict(group.commands))
    return group
