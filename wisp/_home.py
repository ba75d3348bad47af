"""Where the person's things live (`$WISP_HOME`, default `~/.wisp`) and who the person is.

The channel library takes a directory; deciding which one is the application's business.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path

from pending import Channel, Clock

DEFAULT_HOME = "~/.wisp"


def wisp_home(environ: Mapping[str, str] | None = None) -> Path:
    """`$WISP_HOME`, or `~/.wisp`."""
    env = os.environ if environ is None else environ
    return Path(env.get("WISP_HOME") or DEFAULT_HOME).expanduser()


def current_user() -> str:
    """The person's login name (their uid where the name cannot be looked up)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def open_channel(home: Path | str | None = None, *, clock: Clock | None = None) -> Channel:
    """The person's pending channel under *home* (default :func:`wisp_home`), created 0700;
    raises :class:`pending.ChannelUnsafe` or :class:`pending.ChannelUnavailable`."""
    path = Path(home) if home is not None else wisp_home()
    if clock is None:
        return Channel.open(path, user=current_user())
    return Channel.open(path, clock=clock, user=current_user())
