"""How a front end names the relays it speaks to (public, pure): this machine's label, a
host as ssh takes it, and the command that starts a host's relay, split as a shell would.

`wisp tui` and `wisp web --host` both reach other machines' channels through `ssh HOST wisp
relay`; this is their one reading of a `--host` and a `--relay-command`, beside the wire
they then speak (:mod:`wisp.relay.protocol`). Nothing here starts a process.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from wisp import WispError

LOCAL = "local"  # the host label of the relay (the channel) on this machine

# A host name as ssh takes it: user@host, a name, an address; never an option.
_HOST_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@%:\[\]-]{0,252}")

__all__ = ["LOCAL", "LinkError", "check_host", "check_hosts", "host_argv"]


class LinkError(WispError):
    """A relay cannot be started as asked; the message says why and what to do."""


def check_host(host: str) -> str:
    if not _HOST_RE.fullmatch(host):
        raise LinkError(
            f"{host!r} is not a host name ssh takes (letters, digits, and . _ @ % : - [ ], "
            "not starting with -)."
        )
    return host


def check_hosts(hosts: Sequence[str]) -> list[str]:
    """The --host values, each a host name, none `local` (this machine's own relay, always
    shown) and none twice: each host is one relay and one label, so an answer goes where
    its row says."""
    seen: list[str] = []
    for host in hosts:
        check_host(host)
        if host == LOCAL:
            raise LinkError(
                f"--host {LOCAL} names this machine's relay, which `wisp tui` always runs: "
                "leave it out, or give another machine by its ssh name."
            )
        if host in seen:
            raise LinkError(f"--host {host} is given twice: give each host once.")
        seen.append(host)
    return seen


def host_argv(template: str, host: str) -> list[str]:
    """*host*'s relay: *template* split as a shell would split it (but run without one),
    `{host}` in any word replaced by the host."""
    check_host(host)
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise LinkError(f"--relay-command cannot be split into words: {exc}.") from None
    if not words:
        raise LinkError("--relay-command is empty: give the command that starts a relay.")
    return [word.replace("{host}", host) for word in words]
