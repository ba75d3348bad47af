"""`wisp show ID` (and `wisp approvals|facts|questions show ID`): everything about one request,
nothing cut."""

# No `from __future__ import annotations`: typer reads show()'s annotations at run time, and
# they name this module's closure (the kinds a group's `show` completes).

from collections.abc import Callable
from typing import Annotated

import typer

from pending import Kind, PendingError
from wisp.cli._answer import id_argument
from wisp.cli._common import emit, me, open_channel, print_json, refuse, width

SHOW_HELP = """Everything about one request, nothing cut.

The whole command or question and its options, where a command would run and why, who asks
(client, pid, thread, running or stopped), when it was filed and when it expires, its state,
and the answer and outcome if any; control and bidi characters made visible."""

SHOW_EXAMPLES = """Examples:
  wisp show 3f9c0a1b2c3d4e5f
  wisp show 3f9c              (a unique prefix, any case)
  wisp show 3f9c --json"""

JsonFlag = Annotated[
    bool, typer.Option("--json", help="The request as one JSON object (as `wisp pending --json`).")
]


def show_request(typed_id: str, as_json: bool) -> None:
    # Imported here: every group declares its `show` command, but only showing looks a
    # request up, renders it (the records and the kinds' rows) or reads the facts store.
    from wisp import contradicted
    from wisp._render import details, refusal, status_json
    from wisp.cli._layout import labelled
    from wisp.program.lookup import LookupRefused, find_request

    with open_channel() as channel:
        try:
            status = find_request(channel, typed_id)
        except LookupRefused as exc:
            refuse(str(exc))
        except PendingError as exc:
            refuse(refusal(exc, me=me()))
        now = channel.clock.now()
        home = channel.home
    if as_json:
        print_json(status_json(status))
        return
    differs = [(fact.id, fact.said) for fact in contradicted(status.request, home)]
    fields = details(status, now, me=me(), differs=differs)
    emit(labelled(fields, width()))


def show_command(*kinds: Kind) -> Callable[..., None]:
    """`wisp show`, or a group's own `show` (completing that group's waiting IDs)."""

    def show(
        request_id: Annotated[str, id_argument(*kinds)],
        as_json: JsonFlag = False,
    ) -> None:
        show_request(request_id, as_json)

    show.__doc__ = SHOW_HELP
    return show
