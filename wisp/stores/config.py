"""Settings, from `$WISP_HOME/config.json` (nested by the dots in their names), with types."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from pending import DecodeError, Unreadable, loads_strict, read_private_file
from wisp._deadlines import MAX_DEADLINE_S, DeadlineError, check_deadline, deadline_range
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
    # What is wrong with a value its check refuses, in words, where its kind alone would not
    # say it (a class that is no class, a must-ask class told to let silence through).
    problem: Callable[[Any], str | None] | None = None

    def refusal(self, value: Any) -> str | None:
        """Why *value* is refused, in words (None: it is taken): its kind, and what is wrong
        with it where :attr:`problem` says more."""
        if self.check(value):
            return None
        why = self.problem(value) if self.problem is not None else None
        return f"it takes {self.kind}" + (f"; {why}" if why else "")

    def shown(self, value: Any) -> Any:
        """*value* as it may be shown: a secret's redacted; a whole number of seconds as a
        whole number (`3`, as docs/cli.md's table writes it, not Python's `3.0`)."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, dict):  # a setting by class: each value as it may be shown
            return {key: self.shown(item) for key, item in value.items()}
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


# --- silence and escalation, by class (issue 57) ---------------------------------------------
#
# The classes the policy reads a call into (:class:`wisp.policy.reading.Class`, which the
# settings wing sits below: tests/test_policy_silence.py holds the two lists equal), and the
# must-ask ones among them (:data:`wisp.policy.reading.MUST_ASK`).
CALL_CLASSES = (
    "read-only",
    "edit-in-project",
    "write-outside-project",
    "network",
    "recursive-delete",
    "pipe-to-shell",
    "privilege",
    "unread",
    "other",
)
MUST_ASK_CLASSES = frozenset(
    {"write-outside-project", "network", "recursive-delete", "pipe-to-shell", "privilege"}
)
DEFAULT_CLASS = "default"  # a by-class setting's value for every class it does not name
BY_CLASS_KEYS = (DEFAULT_CLASS, *CALL_CLASSES)


class OnSilence(StrEnum):
    """`policy.onSilence`: what a call nobody answered in wisp in time becomes. Never an
    allow: there is no such value."""

    DENY = "deny"  # denied
    HARNESS = "harness"  # what the harness does: its own dialog asks (`--on-timeout ask`), or
    # it is denied (`--on-timeout deny`, a harness with no dialog, a mode that asks nobody)


def by_class(value: Any, cls: str, default: Any) -> Any:
    """A by-class setting's value for *cls*: the class's own, else its `default`, else
    *default* (a plain value, not an object, is every class's)."""
    if not isinstance(value, dict):
        return value
    return value.get(cls, value.get(DEFAULT_CLASS, default))


def _class_key_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    unknown = [key for key in value if key not in BY_CLASS_KEYS]
    if unknown:
        return f"{unknown[0]!r} is no class ({DEFAULT_CLASS!r} stands for the ones not named)"
    return None


def _push_after_problem(value: Any) -> str | None:
    """What is wrong with a `policy.pushAfterSeconds` value (None: nothing)."""
    unknown = _class_key_problem(value)
    if unknown is not None:
        return unknown
    items = value.items() if isinstance(value, dict) else [("the value", value)]
    for cls, seconds in items:
        try:
            check_deadline(seconds, what="", zero="pushed at once")
        except DeadlineError:
            said = json.dumps(seconds, ensure_ascii=False)
            return f"{cls} is {said}, which is no number of seconds in that range"
    return None


def _on_silence_problem(value: Any) -> str | None:
    """What is wrong with a `policy.onSilence` value (None: nothing). Silence is never an
    allow, and a must-ask class's call nobody answered is always denied."""
    unknown = _class_key_problem(value)
    if unknown is not None:
        return unknown
    if not isinstance(value, dict | str):
        return "give deny or harness, or an object of them by class"
    items = value.items() if isinstance(value, dict) else [("the value", value)]
    for cls, said in items:
        if said == "allow":
            return (
                f"{cls} is allow, but silence is never an allow: a call nobody answered "
                "is denied (deny) or left to the harness, which asks you in its own dialog "
                "or denies it (harness)"
            )
        if said not in tuple(OnSilence):
            shown = json.dumps(said, ensure_ascii=False)
            return f"{cls} is {shown}, which is neither deny nor harness"
        if cls in MUST_ASK_CLASSES and said != OnSilence.DENY:
            return f"{cls} is a must-ask class, and a call of it nobody answered is always denied"
    return None


def _pushed_later(old: Any, new: Any) -> bool:
    """Whether some class's call is pushed later under *new* than under *old*."""
    return any(by_class(new, cls, 0) > by_class(old, cls, 0) for cls in CALL_CLASSES)


def _let_through_more(old: Any, new: Any) -> bool:
    """Whether some class's call nobody answered is denied under *old* and left to the
    harness under *new*."""
    return any(
        by_class(old, cls, OnSilence.HARNESS) == OnSilence.DENY
        and by_class(new, cls, OnSilence.HARNESS) != OnSilence.DENY
        for cls in CALL_CLASSES
        if cls not in MUST_ASK_CLASSES
    )


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
        Setting(
            key="policy.pushAfterSeconds",
            default={DEFAULT_CLASS: 0},
            check=lambda value: _push_after_problem(value) is None,
            kind=f"seconds from 0 (pushed at once) to {MAX_DEADLINE_S}, or an object of them "
            f"by class ({', '.join(BY_CLASS_KEYS)})",
            doc="How long a call put to you waits before it is pushed to your phone, by its "
            "class: the terminal, tmux and desktop are told at once, and have the first "
            "look; a call answered by then is never pushed.",
            deadline=True,
            problem=_push_after_problem,
            loosens=_pushed_later,  # pushed later: a request may go unseen away from here
        ),
        Setting(
            key="policy.onSilence",
            default={DEFAULT_CLASS: OnSilence.HARNESS.value},
            check=lambda value: _on_silence_problem(value) is None,
            kind="deny or harness, or an object of them by class "
            f"({', '.join(BY_CLASS_KEYS)}); a must-ask class takes deny alone",
            doc="What a call nobody answered in wisp in time becomes, by its class: deny, or "
            "harness (the harness's own dialog asks you, or it denies: its --on-timeout). "
            "Never an allow; a must-ask call is always denied.",
            problem=_on_silence_problem,
            loosens=_let_through_more,
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
        refusal = setting.refusal(node)
        if refusal is not None:
            raise ConfigError(
                f"{path}: {key} is {_shown_bad(setting, node)}, but {refusal}. "
                f"Fix it, or remove it for the default ({_shown_default(setting)})."
            )
        values[key] = node
    return Config(values)


def _shown_default(setting: Setting) -> str:
    """A setting's default as an error names it: JSON, as config.json holds it."""
    return json.dumps(setting.default, ensure_ascii=False)


def _shown_bad(setting: Setting, value: Any) -> str:
    """A value that failed its check, as an error may show it: a secret's not at all (a
    token pasted wrong is still a token)."""
    if setting.secret:
        return "(a secret, not shown)"
    if isinstance(value, dict | bool):  # as config.json and the command line spell it
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


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
        why = setting.problem(value) if setting.problem is not None else None
        raise ConfigError(
            f"{key} takes {setting.kind}, not {_shown_bad(setting, value)}"
            + (f": {why}" if why else "")
            + ". Nothing was written."
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
