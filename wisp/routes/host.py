"""The host route: a front end that declared ``notify`` in its hello (`wisp relay`) is sent a
``notify`` line, and shows the notice as it will."""

from __future__ import annotations

from wisp.routes.route import Face, Here, Notice, Posted

NAME = "host"


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    if here.face is not Face.JSON:
        return "no front end declared notify (only under `wisp relay`)"
    return None if here.host is not None else "the front end did not declare notify"


def post(here: Here, notice: Notice) -> Posted:
    assert here.host is not None
    here.host(
        {
            "type": "notify",
            "title": notice.title,
            "subtitle": notice.subtitle,
            "body": notice.body,
            "sound": notice.sound,
        }
    )
    return Posted()
