"""Settings, from `$WISP_HOME/config.json` (nested by the dots in their names), with types."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from pending import DecodeError, Unreadable, loads_strict, read_private_file
from wisp._deadlines import DeadlineError, check_deadline, deadline_range
from wisp._errors import WispError
from wisp.stores.jsonstore import StoreError, locked_home, write_atomically

CONFIG_FILE = "config.json"


class ConfigError(WispError):
    """The config file cannot be used; the message names the file, the key and the fix."""


class ConfigUnusable(ConfigError):
    """config.json (or the home it is in) cannot be read or written at all, whatever the
    value: an error (exit 2), where a value it does not take is a refusal (exit 1)."""


class Setting(NamedTuple):
    key: str
    default: Any
    check: Callable[[Any], bool]
    kind: str  # described for people
    doc: str
    # A number of seconds something waits: out of range, it is a usage error (exit 2) wherever
    # it enters, as every bad deadline is.
    deadline: bool = False
    # A secret (push URLs carry tokens): only its redacted form is ever shown or echoed.
    secret: bool = False
    # Whether changing it from the first value to the second loosens what protects the
    # person from an agent (they are told of fewer requests, or request text goes somewhere
    # new): such a change is taken only from a terminal, as an answer is. None: never.
    loosens: Callable[[Any, Any], bool] | None = None

    def shown(self, value: Any) -> Any:
        """*value* as it may be shown: a secret's redacted; a whole number of seconds as a
        whole number (`3`, as docs/cli.md's table writes it, not Python's `3.0`)."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not self.secret:
            return value
        from wisp.stores.pushurls import shown  # loaded only where a push setting is shown

        return shown(value)


class PushContent(StrEnum):
    """`notifications.pushContent`: what a push carries to the push service."""

    FULL = "full"  # the request's title, text and working directory, and how to answer it
    NONE = "none"  # only that a request waits on HOST, and the link: nothing of the request


class PushWhen(StrEnum):
    """`notifications.pushWhen`: when the push route posts."""

    ALWAYS = "always"  # also when a route on this machine posted (the person may be away)
    UNSEEN = "unseen"  # only when no route on this machine posted it


def _nonneg_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _positive_int(value: Any) -> bool:
    return _nonneg_int(value) and value > 0


def _bool(value: Any) -> bool:
    return isinstance(value, bool)


def _push_urls(value: Any) -> bool:
    from wisp.stores.pushurls import valid_push_setting  # loaded only where set

    return valid_push_setting(value)


def _web_url(value: Any) -> bool:
    """`web.url`: an http(s) URL with a host, no credentials, query or fragment (it is
    shown in notifications and pages' links are built on it), or "" for none."""
    if value == "":
        return True
    if not isinstance(value, str) or len(value) > 200 or not value.isprintable():
        return False
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  # raises ValueError for a port that is no number
    except ValueError:
        return False
    return (
        parts.scheme in ("http", "https")
        and bool(parts.hostname)
        and parts.username is None
        and not parts.query
        and not parts.fragment
        and " " not in value
    )


def _push_when(value: Any) -> bool:
    return isinstance(value, str) and value in tuple(PushWhen)


def _push_content(value: Any) -> bool:
    return isinstance(value, str) and value in tuple(PushContent)


def _seconds(*, whole: bool, zero: str | None) -> Callable[[Any], bool]:
    """A deadline's check: a finite number of seconds in range (see wisp._deadlines)."""

    def check(value: Any) -> bool:
        if whole and not _nonneg_int(value):
            return False
        try:
            check_deadline(value, what="", zero=zero)
        except DeadlineError:
            return False
        return True

    return check


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            key="approval.timeoutSeconds",
            default=600,
            check=_seconds(whole=True, zero="waits forever"),
            kind=f"whole {deadline_range(zero='waits forever')}",
            doc="How long a command approval or a question waits for you; 0 waits forever.",
            deadline=True,
        ),
        Setting(
            key="answer.waitSeconds",
            default=3.0,
            check=_seconds(whole=False, zero="does not wait"),
            kind=deadline_range(zero="does not wait"),
            doc="After you answer, how long the command waits to report the asker's outcome.",
            deadline=True,
        ),
        Setting(
            key="watch.livenessSeconds",
            default=1.0,
            check=_seconds(whole=False, zero=None),
            kind=deadline_range(zero=None),
            doc="How often a watcher re-checks that askers with waiting requests still live.",
            deadline=True,
        ),
        Setting(
            key="notifications.enabled",
            default=True,
            check=_bool,
            kind="true or false",
            doc="Whether wisp posts notifications at all.",
            loosens=lambda old, new: bool(old) and not new,  # turned off
        ),
        Setting(
            key="notifications.perMinute",
            default=5,
            check=_positive_int,
            kind="a whole number, 1 or more",
            doc="At most this many notifications in any minute, across a process.",
            loosens=lambda old, new: new < old,  # fewer requests announced
        ),
        Setting(
            key="notifications.viaTerminalApp",
            default=True,
            check=_bool,
            kind="true or false",
            doc="On macOS, post as the terminal app (by bundle id) before osascript.",
        ),
        Setting(
            key="notifications.push",
            default=[],
            check=_push_urls,
            kind="one or more Apprise URLs (ntfy://TOPIC, tgram://TOKEN/CHAT, …): text, "
            "or a JSON list; [] for none",
            doc="Where the push route sends, for when you are away from this machine "
            "(secrets: shown as scheme://host only).",
            secret=True,
            # Any change: where request text is sent, or whether it reaches you away.
            loosens=lambda old, new: True,
        ),
        Setting(
            key="notifications.pushWhen",
            default=PushWhen.ALWAYS.value,
            check=_push_when,
            kind="always or unseen",
            doc="always: push even when a route here posted too; unseen: only when none did.",
            loosens=lambda old, new: new != old and new == PushWhen.UNSEEN.value,
        ),
        Setting(
            key="notifications.pushContent",
            default=PushContent.FULL.value,
            check=_push_content,
            kind="full or none",
            doc="full: a push carries the request's text (the command, the tool's input, the "
            "folder); none: only that a request waits on this machine, and its link — the "
            "page (`web.url`), over your own network, shows what.",
            # Sending the request's text to a third party again is the person's to choose.
            loosens=lambda old, new: new != old and new == PushContent.FULL.value,
        ),
        Setting(
            key="notifications.tmuxSeconds",
            default=0.0,
            check=_seconds(whole=False, zero="until a key is pressed"),
            kind=deadline_range(zero="until a key is pressed"),
            doc="How long the tmux route's message stays on a client's status line; 0 keeps "
            "it until you press a key there.",
            deadline=True,
        ),
        Setting(
            key="web.url",
            default="",
            check=_web_url,
            kind="an http:// or https:// URL where `wisp web` is reached from your phone, "
            'or "" for none',
            doc="Where your phone reaches `wisp web`: a push notification links to the "
            "request's page there, and `wisp doctor` checks it answers.",
            # Where a notification's link sends the person: a change is theirs to make.
            loosens=lambda old, new: new != old and new != "",
        ),
    )
}


class Config:
    """The settings in effect: a key's value from the file, else its default."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def __getitem__(self, key: str) -> Any:
        return self.values.get(key, SETTINGS[key].default)


def load_config(home: Path) -> Config:
    """The settings in effect: the file's, checked, over the defaults."""
    path = home / CONFIG_FILE
    try:
        fd = os.open(str(home), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return Config({})
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = read_private_file(fd, CONFIG_FILE)
    except Unreadable as exc:
        raise ConfigError(f"cannot use {path}: {exc}. Fix or remove it.") from None
    finally:
        os.close(fd)
    if data is None:
        return Config({})
    try:
        tree = loads_strict(data)
    except DecodeError as exc:
        raise ConfigError(f"{path} is not valid: {exc}. Fix or remove it.") from None
    if not isinstance(tree, dict):
        raise ConfigError(f"{path} must hold a JSON object. Fix or remove it.")
    values: dict[str, Any] = {}
    for key, setting in SETTINGS.items():
        node: Any = tree
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            continue
        if not setting.check(node):
            raise ConfigError(
                f"{path}: {key} is {_shown_bad(setting, node)}, but it takes {setting.kind}. "
                f"Fix it, or remove it for the default ({setting.default!r})."
            )
        values[key] = node
    return Config(values)


def _shown_bad(setting: Setting, value: Any) -> str:
    """A value that failed its check, as an error may show it: a secret's not at all (a
    token pasted wrong is still a token)."""
    return "(a secret, not shown)" if setting.secret else repr(value)


def parse_value(text: str) -> Any:
    """A value from the command line: JSON if it reads as JSON (true, 5, 1.5), else text."""
    try:
        return loads_strict(text.encode())
    except DecodeError:
        return text


def loosens(home: Path, key: str, value: Any) -> bool:
    """Whether setting *key* to *value* (a value it takes) loosens what protects the person
    (see :attr:`Setting.loosens`), against its value now. Raises ConfigError if config.json
    cannot be read."""
    setting = SETTINGS[key]
    if setting.loosens is None or not setting.check(value):
        return False
    return setting.loosens(load_config(home)[key], value)


def set_setting(home: Path, key: str, value: Any) -> Any:
    """Check *value* for *key* and write it into config.json, keeping everything else."""
    setting = SETTINGS.get(key)
    if setting is None:
        raise ConfigError(f"no setting {key!r}: see `wisp config` for the list.")
    if not setting.check(value):
        raise ConfigError(
            f"{key} takes {setting.kind}, not {_shown_bad(setting, value)}. Nothing was written."
        )
    path = home / CONFIG_FILE
    try:
        with locked_home(home, CONFIG_FILE) as home_fd:
            try:
                data = read_private_file(home_fd, CONFIG_FILE)
                tree = loads_strict(data) if data is not None else {}
            except (Unreadable, DecodeError) as exc:
                raise ConfigUnusable(f"{path} cannot be read ({exc}); fix or remove it.") from None
            if not isinstance(tree, dict):
                raise ConfigUnusable(f"{path} must hold a JSON object; fix or remove it.")
            node = tree
            *parents, last = key.split(".")
            for part in parents:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node[last] = value
            body = json.dumps(tree, indent=2, ensure_ascii=False) + "\n"
            write_atomically(home_fd, CONFIG_FILE, body.encode(), shown=path)
    except StoreError as exc:
        raise ConfigUnusable(str(exc)) from None
    return value
