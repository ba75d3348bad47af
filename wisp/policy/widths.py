"""What a grant wider than the exact call is matched against, read from a parsed shell line.

A `command` grant ("this command with any arguments", `npm test *`) covers a line only when
the line is ONE simple command with nothing around it: no list (`;`, `&&`, `||`), no pipe, no
redirection (but joining the output streams, `2>&1`, or output thrown away, `>/dev/null`),
no substitution, no background job, no variable set for it (`X=1 npm test`), not run
through another (`env`, `timeout`, `bash -c`, `xargs`), and read fully by the parser.
:func:`grant_words` gives that command's words, which the decider hands to the grant store
(``GrantStore.covering(…, words=…)``, ``StandingGrants.grant_for``); a list or pipeline runs
when each of its parts is read-only or so covered on its own (:func:`grant_parts`).
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
    if not command.words or not all(_joins_streams(r) or _to_null(r) for r in command.redirects):
        return None
    first_unknown = min(command.expanded, default=len(command.words))
    return command.words[:first_unknown] or None


def grant_parts(line: Line | None, project: str | None) -> tuple[tuple[str, ...], ...] | None:
    """For a line of several simple commands (a list, a pipeline), the words of each one a
    `command` grant must cover for the line to run without asking: every part that is not
    read-only in the project (:func:`~wisp.policy.reading.reads_only`, its directory in or
    under *project*). Each such part must stand as :func:`grant_words` asks of a whole line
    (no variable set for it, not run through another, no file written, no substitution, no
    background), and the line must be read fully; else None: only an exact grant covers it.

    The grants cover each command on its own (`npm test *` covers the `npm test -u` of
    `npm test -u 2>&1 | tail -5`): no grant spans `;`, `&&` or `|`, and a part no grant
    covers (`rm -rf x` in `npm test; rm -rf x`) has the line asked. The caller checks first
    that the line holds no must-ask class."""
    from wisp.policy.reading import inside, not_read_here, reads_only

    if line is None or line.unread is not None or len(line.commands) < 2 or project is None:
        return None
    parts: list[tuple[str, ...]] = []
    for command in line.commands:
        if command.substituted or command.background:
            return None
        if command.cwd is None or not inside(command.cwd, project):
            return None
        if reads_only(command) and not_read_here(command, project) is None:
            continue  # (a read outside, or git whose config runs a program: a part to cover)
        if command.assigns or command.through or command.command_at or not command.words:
            return None
        if not all(_joins_streams(r) or _to_null(r) for r in command.redirects):
            return None
        first_unknown = min(command.expanded, default=len(command.words))
        if first_unknown == 0:
            return None
        parts.append(command.words[:first_unknown])
    return tuple(parts) or None


def _to_null(redirect: Redirect) -> bool:
    """A redirection to /dev/null: it writes nothing anyone reads."""
    return redirect.target == "/dev/null"
