"""What a grant wider than the exact call is matched against, read from a parsed shell line.

A `command` grant ("this command with any arguments", `npm test *`) covers a line only when
the line is ONE simple command with nothing around it: no list (`;`, `&&`, `||`), no pipe, no
redirection (but joining the output streams, `2>&1`), no substitution, no background job, no
variable set for it (`X=1 npm test`), not run through another (`env`, `timeout`, `bash -c`,
`xargs`), and read fully by the parser. :func:`grant_words` gives that command's words, which
the decider hands to the grant store (``GrantStore.covering(…, words=…)``,
``StandingGrants.grant_for``); None for any other line, which only an exact grant covers.
The store stays below the policy wing: it never parses a line itself.
"""

from __future__ import annotations

from wisp.policy.shell import Line, Redirect

# A redirection that only joins one output stream to another (`2>&1`, `>&2`): it writes no file.
_FD = frozenset("0123456789")


def _joins_streams(redirect: Redirect) -> bool:
    target = redirect.target or ""
    return not redirect.writes and ">" in redirect.op and target != "" and set(target) <= _FD


def grant_words(line: Line | None) -> tuple[str, ...] | None:
    """The words of *line*'s one simple command, when a `command` grant may cover it (see the
    module's docstring); else None. Words the parser could not know (`$VAR`, a glob) may be
    arguments, never among the command's first words a grant names: the words are cut at the
    first such word, so no prefix can match past it."""
    if line is None or line.unread is not None or len(line.commands) != 1:
        return None
    (command,) = line.commands
    if command.substituted or command.background or command.piped_from is not None:
        return None
    if command.assigns or command.through or command.command_at:
        return None  # what runs is not the line's first words alone
    if not command.words or not all(_joins_streams(r) for r in command.redirects):
        return None
    first_unknown = min(command.expanded, default=len(command.words))
    return command.words[:first_unknown] or None
