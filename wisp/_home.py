"""Where the person's things live (`$WISP_HOME`, default `~/.wisp`) and who the person is.

The channel library takes a directory; deciding which one is the application's business.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
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


def open_channel(
    home: Path | str | None = None, *, clock: Clock | None = None, keep_requests: bool = True
) -> Channel:
    """The person's pending channel under *home* (default :func:`wisp_home`), created 0700;
    raises :class:`pending.ChannelUnsafe` or :class:`pending.ChannelUnavailable`.
    *keep_requests*: as :meth:`pending.Channel.open` (False: a process that reads each file
    once)."""
    # Imported here: `wisp_home()` is asked by commands that may never open the channel (an
    # empty listing, bench/README.md, issue 23), and the channel loads its records.
    from pending import Channel

    path = Path(home) if home is not None else wisp_home()
    if home is None:
        refuse_anothers_home(path)
    if clock is None:
        return Channel.open(path, user=current_user(), keep_requests=keep_requests)
    return Channel.open(path, clock=clock, user=current_user(), keep_requests=keep_requests)


def refuse_anothers_home(path: Path) -> None:
    """:func:`_refuse_anothers_home` for *path* when it is the default `~/.wisp` (no
    `$WISP_HOME`: one the person set is theirs to choose). Every way into the person's home
    asks this before it may make it: the channel, and the stores (config, grants, facts)."""
    if os.environ.get("WISP_HOME") or path != Path(DEFAULT_HOME).expanduser():
        return
    _refuse_anothers_home(path)


def _refuse_anothers_home(path: Path) -> None:
    """Refuse to make the default `~/.wisp` in a home directory another user owns: root
    with `$HOME` left at a user's home (`sudo` without `-H`) would leave a root-owned
    `.wisp` there that the user's own wisp then refuses. One already there is checked as
    any channel directory is (owner, mode)."""
    parent = path.parent
    try:
        owner = parent.stat().st_uid
    except OSError:
        return  # nothing to tell about: opening the channel says what it meets
    uid = os.getuid()
    if owner == uid or path.exists():
        return
    from pending import ChannelUnsafe

    raise ChannelUnsafe(
        str(path),
        f"it would be made in {parent}, the home of uid {owner}, not yours (uid {uid}): "
        "$HOME names another user's home (as `sudo` without `-H` leaves it), and a .wisp "
        "made there would be yours, not theirs",
        f"run wisp as that user (`sudo -u '#{owner}' wisp …`), or with your own home "
        "(`sudo -H wisp …`), or set WISP_HOME to a directory of your own",
    )


def names_home(texts: list[str], cwd: str, home: Path) -> bool:
    """Whether a command or a tool call (its *texts*: the command, or every text of its
    input; run in *cwd*) names wisp's own directory *home*: run from inside it, a path under
    it, or a text naming it (`$WISP_HOME`, `~/.wisp`, its path). A standing grant never
    covers such a call: the gate asks each time (wisp.agents.gate says it in the request)."""
    real = Path(os.path.realpath(home))
    if Path(os.path.realpath(cwd)).is_relative_to(real):
        return True
    forms = {str(home), str(real), "$WISP_HOME", "${WISP_HOME}"}
    user_home = str(Path("~").expanduser())
    for form in tuple(forms):
        if form.startswith(user_home + os.sep):
            forms.update(("~" + form[len(user_home) :], "$HOME" + form[len(user_home) :]))
    forms = {f.rstrip(os.sep) for f in forms if f}
    for text in texts:
        if any(form in text for form in forms):
            return True
        if text.startswith(os.sep) and Path(os.path.realpath(text)).is_relative_to(real):
            return True
    return False
