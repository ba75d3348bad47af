"""`wisp doctor`, `wisp notify` and `wisp config`."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

import typer

from pending import PendingError
from wisp import (
    ROUTES,
    SETTINGS,
    ConfigError,
    ConfigUnusable,
    EntryPoint,
    Notifier,
    PushWhen,
    Route,
    diagnose,
    load_config,
    loosens,
    open_channel,
    parse_value,
    send_test,
    set_setting,
    wisp_home,
)
from wisp._text import visible, wrap
from wisp.cli._common import (
    choice_of,
    choices,
    command_group,
    emit,
    fail,
    out,
    print_json,
    require_terminal,
    say,
    width,
)
from wisp.cli._exit import ExitCode
from wisp.cli._layout import labelled

config_app = command_group(
    "Settings in $WISP_HOME/config.json: `wisp config` lists them; `get KEY` prints one; "
    "`set KEY VALUE` sets one (values checked).",
    invoke_without_command=True,
    epilog="""Examples:
  wisp config                                   every setting, its value, what it takes
  wisp config --json
  wisp config set approval.timeoutSeconds 300""",
)

DOCTOR_EXAMPLES = """Examples:
  wisp doctor
  wisp doctor --send-test       also post a test notification, and say what became of it
  wisp doctor --json | jq '.checks[] | select(.ok | not)'"""

RouteChoice = StrEnum("RouteChoice", {r.upper(): r for r in ROUTES})  # type: ignore[misc]

NOTIFY_EXAMPLES = """Examples:
  wisp notify "probe"                       (the message alone: titled "wisp")
  wisp notify "Build" "finished in 4 min"
  wisp notify --route terminal "probe"      (try the terminal route alone)
  wisp notify --route push "probe"          (try the push URLs alone, waiting up to 5 s)"""


def notify(
    words: Annotated[
        list[str],
        typer.Argument(
            metavar="[TITLE] MESSAGE",
            help='The message, after a title if you give two (one alone is titled "wisp").',
        ),
    ],
    subtitle: Annotated[
        str, typer.Option("--subtitle", metavar="TEXT", help="A line under the title.")
    ] = "",
    route: Annotated[
        RouteChoice | None,
        typer.Option(
            "--route",
            parser=choice_of(Route),
            metavar=choices(Route),
            help="Try this route alone, to probe it (app is tried even with "
            "notifications.viaTerminalApp off).",
        ),
    ] = None,
) -> None:
    """Post a notification through the first route that works here, then push (or --route
    alone); a push is waited for (at most 5 s) and its outcome printed.

    Exit 0 posted, 1 not shown (the reason is printed), 2 usage error."""
    if len(words) > 2:
        fail(
            f"wisp notify takes a message, or a title and a message; not {len(words)} "
            'arguments. Quote a message that has spaces: wisp notify "Build" "all green".'
        )
    title, message = ("wisp", words[0]) if len(words) == 1 else (words[0], words[1])
    home = wisp_home()
    try:
        settings = load_config(home).values
    except ConfigError as exc:
        fail(str(exc))
    notifier = Notifier(
        home, settings=settings, entry_point=EntryPoint.NOTIFY, background_push=False
    )
    notifier.check_log()  # an audit log that is no file of yours: exit 2, nothing posted
    result = notifier.post(
        title, message, subtitle=subtitle, source="user", route=route.value if route else None
    )
    say(str(result))
    for skipped in result.skipped:
        if skipped != result.reason:  # the one route asked for, said once (its failure)
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
        print_json({key: s.shown(config[key]) for key, s in SETTINGS.items()})
        return
    columns = width()
    for key, setting in SETTINGS.items():
        mark = "" if key in config.values else "  (default)"
        value = json.dumps(setting.shown(config[key]), ensure_ascii=False)
        # Wrapped to the width as every listing is, the rest indented under its name.
        emit(_indented(f"{key} = {value}{mark}", columns, first=0))
        emit(_indented(f"{setting.doc} Takes {setting.kind}.", columns, first=CONFIG_INDENT))


# How far a setting's description (and a value's continuation lines) stand in from its name.
CONFIG_INDENT = 4


def _indented(text: str, columns: int, *, first: int) -> list[str]:
    """*text* wrapped whole in *columns*, its first line *first* cells in, the rest
    :data:`CONFIG_INDENT` in."""
    pad = " " * CONFIG_INDENT
    lines = wrap(text, columns - first, then=columns - CONFIG_INDENT)
    return [" " * first + lines[0], *(pad + line for line in lines[1:])]


def _complete_key(incomplete: str) -> list[tuple[str, str]]:
    return [(key, s.doc) for key, s in SETTINGS.items() if key.startswith(incomplete)]


@config_app.command("get", epilog="Example:\n  wisp config get approval.timeoutSeconds")
def config_get(
    key: Annotated[
        str,
        typer.Argument(metavar="KEY", help="A setting's name.", autocompletion=_complete_key),
    ],
) -> None:
    """Print one setting's value (JSON; push URLs as scheme://host only)."""
    if key not in SETTINGS:
        fail(f"no setting {key!r}: `wisp config` lists them.", ExitCode.NO)
    try:
        value = load_config(wisp_home())[key]
    except ConfigError as exc:
        fail(str(exc))
    print_json(SETTINGS[key].shown(value))


@config_app.command(
    "set",
    epilog="""Examples:
  wisp config set approval.timeoutSeconds 300
  wisp config set notifications.enabled false
  wisp config set answer.waitSeconds -- -5   (a value that begins with '-' goes after --)
  wisp config set notifications.push 'ntfy://A-TOPIC-ONLY-YOU-KNOW'
  wisp config set notifications.push '["ntfys://ntfy.example.org/wisp", "json://10.0.0.5:8080"]'""",
)
def config_set(
    key: Annotated[
        str,
        typer.Argument(
            metavar="KEY",
            help="A setting's name (`wisp config` lists them).",
            autocompletion=_complete_key,
        ),
    ],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="JSON (true, 5, 1.5) or text.")],
) -> None:
    """Set one setting; its value is checked before anything is written.

    Exit 0 set; 1 unknown key or wrong value (nothing written); 2 a deadline out of range
    (nothing written), as every bad deadline is, or config.json cannot be used."""
    if key not in SETTINGS:
        fail(f"no setting {key!r}: `wisp config` lists them. Nothing was written.", ExitCode.NO)
    setting, parsed = SETTINGS[key], parse_value(value)
    try:
        if loosens(wisp_home(), key, parsed):
            require_terminal(
                "wisp config set",
                f"changes that loosen what protects you (this one, to {key})",
                doing="loosening it",
            )
        stored = set_setting(wisp_home(), key, parsed)
    except ConfigError as exc:
        unusable = setting.deadline or isinstance(exc, ConfigUnusable)
        fail(str(exc), ExitCode.ERROR if unusable else ExitCode.NO)
    shown = json.dumps(setting.shown(stored), ensure_ascii=False)
    out.print(f"{key} = {shown}", highlight=False)


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="The findings as JSON.")] = False,
    test: Annotated[
        bool,
        typer.Option(
            "--send-test",
            help="Also post a test notification as a request's would go (push waited for), "
            "and say what became of it: a route or push target that fails is failing.",
        ),
    ] = False,
) -> None:
    """Check the channel, the stores and settings it reads, and the notification routes.

    The channel's directory, watching, askers and what waits; skipped entries; config.json,
    facts.json and grants.json readable; the audit log writable; free space where the channel
    lives; and which notification route a notification from here would take (checked as
    posting would find it: the terminal, tmux, the session bus, push), with a warning and
    its fix when none would reach you; and each agent harness on PATH, as `wisp agents
    status` says it. Exit 0 healthy, 1 something needs your attention (each says its fix;
    a harness whose wisp hook is skipped, not fail-closed or unprotected), 2 the channel
    cannot be used."""
    home = wisp_home()
    try:
        channel = open_channel(home)
    except PendingError as exc:
        if as_json:
            print_json({"channel": str(home / "pending"), "ok": False, "error": str(exc)})
        fail(str(exc))
    with channel:
        findings = diagnose(channel)
    from wisp.agents.setup import needs_attention

    findings["agents"] = agents_section()
    if any(needs_attention(a) for a in findings["agents"]):
        findings["ok"] = False
    if test:
        findings["sendTest"] = sent = send_test(home)
        findings["ok"] = findings["ok"] and sent["ok"]
    notification = findings["notification"]
    routes = notification.pop("routes")
    watching = findings["watching"]
    path = findings["channel"]
    problems = findings["problems"]
    if as_json:
        print_json(findings)
    else:
        lines = [
            ("channel", f"{path} (mode {findings['mode']}, owner uid {findings['owner']}): ok")
        ]
        limits = ", ".join(f"{k} {v}" for k, v in watching["limits"].items())
        lines.append(
            (
                "watching",
                watching["backend"]
                + (f" ({watching['note']})" if watching["note"] else "")
                + (f"; inotify {limits}" if limits else ""),
            )
        )
        lines.append(("servers", f"{findings['liveServers']} alive with waiting requests"))
        counted = [f"{n} {state}" for state, n in findings["states"].items() if n]
        lines.append(("requests", ", ".join(counted) or "none"))
        for check in findings["checks"]:
            verdict = "ok" if check["ok"] else "NEEDS ATTENTION"
            lines.append((check["check"], f"{check['path']}: {verdict}, {check['detail']}"))
            if check["fix"]:
                lines.append(("", f"fix: {check['fix']}"))
        lines.extend(_reach_lines(notification, routes, tried=test))
        if test:
            lines.extend(_test_lines(findings["sendTest"]))
        lines.extend(_agents_lines(findings["agents"]))
        lines.extend(("skipped", f"{visible(p['name'])}: {p['reason']}") for p in problems)
        if problems:
            lines.append(
                (
                    "",
                    "Skipped entries are never acted on. Remove them if you did not put "
                    "them there.",
                )
            )
        emit(labelled([(label, visible(text)) for label, text in lines], width()))
    if not findings["ok"]:
        raise typer.Exit(int(ExitCode.NO))


def agents_section() -> list[dict[str, Any]]:
    """The doctor's section on agent harnesses: `wisp agents status` of each on PATH."""
    from wisp.agents.setup import status

    return status()


def _agents_lines(found: list[dict[str, Any]]) -> list[tuple[str, str]]:
    from wisp.cli.agents import status_lines

    lines: list[tuple[str, str]] = []
    for entry in found:
        first, *rest = status_lines(entry)
        lines.append(("agent", first))
        lines.extend(("", line.strip()) for line in rest)
    return lines


def _reach_lines(
    notification: dict[str, Any], routes: list[Any], *, tried: bool
) -> list[tuple[str, str]]:
    """The doctor's lines on notifications: the route, push, each skipped route, warning;
    and, when push would be used and nothing was sent, that it was not tried."""
    route, push = notification["route"], notification["push"]
    lines = [("notify", f"would post via {route}" if route else "no route would post")]
    if push["targets"] and push["usable"]:
        targets = ", ".join(push["targets"])
        if route == Route.PUSH:
            lines.append(("", f"push: to {targets}"))
        elif push["when"] == PushWhen.ALWAYS:
            lines.append(("", f"push: also to {targets} (notifications.pushWhen always)"))
        else:
            lines.append(("", f"push: to {targets} only when no route here posts (unseen)"))
        if not tried:
            lines.append(("", "push: not tried; `wisp doctor --send-test` tries it"))
    lines.extend(("", f"{r}: skipped, {why}") for r, why in routes if why is not None)
    if notification["warning"]:
        lines.append(("warning", notification["warning"]))
        lines.append(("", f"fix: {notification['fix']}"))
    return lines


def _test_lines(sent: dict[str, Any]) -> list[tuple[str, str]]:
    """What became of `--send-test`'s notification: where it was shown, each push target."""
    verdict = "ok" if sent["ok"] else "NEEDS ATTENTION"
    if sent["posted"]:
        said = f"posted via {sent['route']}" + (f" ({sent['detail']})" if sent["detail"] else "")
    else:
        said = f"not shown: {sent['reason']}"
    lines = [("test", f"{verdict}, {said}")]
    for target in sent["targets"]:
        why = f": {target['reason']}" if target.get("reason") else ""
        lines.append(("", f"push to {target['target']}: {target['outcome']}{why}"))
    lines.extend(("", f"skipped {s}") for s in sent["skipped"])
    if not sent["ok"]:
        lines.append(("", "fix: correct or remove the failing route or URL (wisp config)"))
    return lines
