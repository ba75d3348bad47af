"""`wisp doctor`, `wisp notify` and `wisp config`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pending import PendingError
from wisp._config import SETTINGS, ConfigError, load_config, parse_value, set_setting
from wisp._doctor import diagnose
from wisp._home import open_channel, wisp_home
from wisp._notify import ROUTES, Notifier
from wisp._text import visible
from wisp.cli._common import command_group, fail, out, print_json, say
from wisp.cli._exit import ExitCode

config_app = command_group(
    "Settings in $WISP_HOME/config.json: list them, get one, set one (types checked).",
    invoke_without_command=True,
)


def notify(
    title: Annotated[str, typer.Argument(metavar="TITLE")],
    message: Annotated[str, typer.Argument(metavar="MESSAGE")],
    subtitle: Annotated[str, typer.Option("--subtitle", help="A line under the title.")] = "",
    route: Annotated[
        str | None,
        typer.Option("--route", help=f"Try this route alone, to probe it: {', '.join(ROUTES)}."),
    ] = None,
) -> None:
    """Post a notification through the first route that works here (or --route alone).
    Exit 0 posted, 1 not shown (the reason is printed)."""
    if route is not None and route not in ROUTES:
        fail(f"--route takes one of {', '.join(ROUTES)}, not {route!r}.")
    home = wisp_home()
    try:
        settings = load_config(home).values
    except ConfigError as exc:
        fail(str(exc))
    result = Notifier(home, settings=settings, entry_point="notify").post(
        title, message, subtitle=subtitle, source="user", route=route
    )
    say(str(result))
    for skipped in result.skipped:
        say(f"  skipped {skipped}")
    if not result.posted:
        raise typer.Exit(int(ExitCode.NO))


@config_app.callback()
def config_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="All settings as JSON.")] = False,
) -> None:
    """With no command: every setting, its value and what it does."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        config = load_config(wisp_home())
    except ConfigError as exc:
        fail(str(exc))
    if as_json:
        print_json({key: config[key] for key in SETTINGS})
        return
    for key, setting in SETTINGS.items():
        mark = "" if key in config.values else "  (default)"
        say(f"{key} = {json.dumps(config[key])}{mark}\n    {setting.doc} Takes {setting.kind}.")


@config_app.command("get")
def config_get(key: Annotated[str, typer.Argument(metavar="KEY")]) -> None:
    """Print one setting's value (JSON)."""
    if key not in SETTINGS:
        fail(f"no setting {key!r}: `wisp config` lists them.", ExitCode.NO)
    try:
        value = load_config(wisp_home())[key]
    except ConfigError as exc:
        fail(str(exc))
    print_json(value)


@config_app.command("set")
def config_set(
    key: Annotated[str, typer.Argument(metavar="KEY")],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="JSON (true, 5, 1.5) or text.")],
) -> None:
    """Set one setting; its type is checked before anything is written."""
    if key not in SETTINGS:
        fail(f"no setting {key!r}: `wisp config` lists them. Nothing was written.", ExitCode.NO)
    try:
        stored = set_setting(wisp_home(), key, parse_value(value))
    except ConfigError as exc:
        fail(str(exc), ExitCode.NO)
    out.print(f"{key} = {json.dumps(stored)}", highlight=False)


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="The findings as JSON.")] = False,
) -> None:
    """Check the channel (directory, watching, askers, what waits, skipped entries) and say
    which notification route would be taken here, and why the others would be skipped."""
    home = wisp_home()
    try:
        channel = open_channel(home)
    except PendingError as exc:
        if as_json:
            print_json({"channel": str(home / "pending"), "ok": False, "error": str(exc)})
        fail(str(exc))
    with channel:
        findings = diagnose(channel)
    notification = findings["notification"]
    routes = notification.pop("routes")
    route = notification["route"]
    watching = findings["watching"]
    path = findings["channel"]
    problems = findings["problems"]
    if as_json:
        print_json(findings)
    else:
        say(f"channel   {path} (mode {findings['mode']}, owner uid {findings['owner']}): ok")
        limits = ", ".join(f"{k} {v}" for k, v in watching["limits"].items())
        say(
            f"watching  {watching['backend']}"
            + (f" ({watching['note']})" if watching["note"] else "")
            + (f"; inotify {limits}" if limits else "")
        )
        say(f"servers   {findings['liveServers']} alive with waiting requests")
        say(
            "requests  "
            + (", ".join(f"{n} {state}" for state, n in findings["states"].items() if n) or "none")
        )
        say(f"notify    would post via {route}" if route else "notify    no route would post")
        for r, why in routes:
            if why is not None:
                say(f"          {r}: skipped, {why}")
        for problem in problems:
            say(f"skipped   {visible(problem['name'])}: {problem['reason']}")
        if problems:
            say(
                "          Skipped entries are never acted on. Remove them if you did not put "
                "them there."
            )
    if problems:
        raise typer.Exit(int(ExitCode.NO))
