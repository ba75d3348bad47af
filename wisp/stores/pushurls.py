"""The push setting's URLs (`notifications.push`): read, checked and redacted.

They are secrets (a ntfy topic, a bot token, a webhook key): nothing but :func:`redact`'s
``scheme://host`` is ever shown. Pure text work, apart from the push route that sends
(`wisp.routes.push`), so that the settings can check and show a push value without loading
the route.
"""

from __future__ import annotations

import re
from typing import Any

# An Apprise URL: a scheme, `://`, and something after it, with no white space or controls.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\x00-\x1f\x7f]+")
# Several URLs in one text are separated by white space or commas, as Apprise takes them.
_SEPARATORS = re.compile(r"[\s,]+")
# A network host name's label (a dotted name or an IPv4 address is made of these).
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?")
HIDDEN = "…"  # what a secret part of a URL is shown as


def push_urls(value: Any) -> list[str]:
    """The URLs a `notifications.push` value names: text with one or more (separated by
    white space or commas) or a list of texts; [] for none. Assumes a checked value."""
    texts = [value] if isinstance(value, str) else list(value or [])
    return [url for text in texts for url in _SEPARATORS.split(text) if url]


def valid_push_setting(value: Any) -> bool:
    """Whether *value* can be `notifications.push`: text or a list of texts, each URL of the
    form ``scheme://…`` (Apprise itself judges the rest when it sends)."""
    if isinstance(value, str):
        texts = [value]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        texts = value
    else:
        return False
    return all(_URL.fullmatch(url) for text in texts for url in _SEPARATORS.split(text) if url)


def redact(url: str) -> str:
    """``scheme://host[:port]`` of *url*, and only where the host is a network address: in
    many Apprise URLs the "host" is the secret itself (``ntfy://TOPIC``, ``tgram://TOKEN``),
    and that is shown as ``…``. User, password, path and query are never shown."""
    scheme, sep, rest = url.partition("://")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return HIDDEN
    netloc = re.split(r"[/?#]", rest, maxsplit=1)[0].rpartition("@")[2]
    host, port = netloc, ""
    if netloc.startswith("[") and "]" in netloc:  # [IPv6]:port
        host, _, after = netloc.partition("]")
        host, port = host + "]", after.removeprefix(":")
    elif netloc.count(":") == 1:
        host, port = netloc.split(":")
    shown_port = f":{port}" if port.isdigit() else ""
    if port and not port.isdigit():
        host = ""  # `TOKEN:SECRET` is no host and port (a Telegram bot token reads so)
    return f"{scheme.lower()}://{host if _network_host(host) else HIDDEN}{shown_port}"


def _network_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    if host.startswith("[") and host.endswith("]"):
        return bool(re.fullmatch(r"\[[0-9A-Fa-f:.]+\]", host))  # an IPv6 address
    labels = host.split(".")
    return len(labels) > 1 and all(_LABEL.fullmatch(label) for label in labels)


def shown(value: Any) -> list[str]:
    """A `notifications.push` value as it may be shown: each URL redacted."""
    return [redact(url) for url in push_urls(value)]
