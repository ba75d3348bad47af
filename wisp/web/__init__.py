"""`wisp web`: what waits, on a page made for a phone, answered by paired devices only.

A face like the relay: it parses, calls the application (:class:`wisp.Answerer`, and a
:class:`wisp._live.LiveInbox` followed by :class:`wisp.web._board.Board`) and renders; it
never touches the channel or the audit log itself. Served by Starlette on uvicorn (the `web`
extra, which only `wisp web` imports). docs/web.md is its manual (`wisp docs web`).
"""

from __future__ import annotations

import ipaddress

from wisp import WispError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


class WebError(WispError):
    """`wisp web` cannot start (exit 2); the message says why and what to do."""


def parse_listen(text: str) -> tuple[str, int]:
    """`ADDR:PORT` (`[ADDR]:PORT` for IPv6) as (host, port); ValueError says what it takes."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"--listen takes ADDR:PORT (127.0.0.1:{DEFAULT_PORT}), not {text[:60]!r}")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(
            f"--listen takes an IP address and a port (100.64.0.7:{DEFAULT_PORT}), "
            f"not {text[:60]!r}"
        ) from None
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    return ipaddress.ip_address(host).is_loopback


def base_url(host: str, port: int, *, tls: bool) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}"
