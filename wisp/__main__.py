"""The `wisp` program (`wisp`, `python -m wisp`): :func:`run`.

A harness's hook (`wisp hook NAME` for each harness of `wisp._entry.HARNESS_MODULES`, with at
most its `--wait`, and its `--on-timeout` where it takes one) is run here, before the CLI's
framework is loaded: typer and click are ~70 ms of every agent tool call's hook, against a
floor of ~30 ms for the interpreter itself (bench/README.md,
issue 41). So is `wisp mcp` exactly, an MCP client's start (:func:`_mcp`), and `wisp pending
--json` and `wisp approvals pending --json` exactly, what scripts run (:func:`_listing`), and
`wisp approvals approve ID` exactly, a person's answer (:func:`_approve`). Any
other command, and any other spelling of these (`--help`, `--print-settings`, an option twice,
a value the option refuses, another option), is the CLI's (:mod:`wisp.cli`), which parses and
refuses it as it always did.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C functions (`signal` loads enum)
import os
import sys

TYPE_CHECKING = False  # typing's, without importing typing (pending._classes says why)
if TYPE_CHECKING:
    from typing import NoReturn

# A hook blocks the signals it is stopped with from wisp's first instruction, so that none can
# end it by its default action (silently: no deny) while it starts; :func:`wisp.agents.
# hookio.arm` unblocks them once its handlers are in place, and one that came meanwhile is
# taken then and answered with a deny. (Only before this, while the interpreter itself starts,
# does a signal take its default action: the guard the setup installs answers that one.)
_STOP_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
if sys.argv[1:2] == ["hook"]:
    _signal.pthread_sigmask(_signal.SIG_BLOCK, _STOP_SIGNALS)

# The status Python gives a process that ends with SystemExit, and the one it gives when
# standard output or error cannot be flushed at exit (Python's own 120).
_FLUSH_FAILED_STATUS = 120
# Ctrl-C before the command took it over (while the program loads): as a shell reports SIGINT,
# and as typer ends a command it interrupts (wisp.program.writes.ExitCode.INTERRUPTED, not
# loaded here).
_INTERRUPTED_STATUS = 130


def run() -> NoReturn:
    """The `wisp` program: a hook run before the CLI loads (see above), else
    :func:`wisp.cli.main`; then the process ends as the interpreter would end it, without
    freeing what it holds object by object.

    Once the command is done, the interpreter's teardown only frees memory the kernel frees
    at once: ~12 ms of an asker's exit after its answer came (bench/README.md, issue 23).
    What the teardown does that matters is done first, as multiprocessing's children end:
    threads that are not daemons joined (with threading's own exit hooks), the exit handlers
    run (logging's flush, finalizers), standard output and error flushed. wisp writes its
    files unbuffered (os.write), so nothing is left in a buffer. An uncaught exception (a bug)
    takes the interpreter's own path, traceback and all; Ctrl-C that no command took (one in
    its first tenth of a second, as the program loads: an asker had filed nothing yet) ends it
    with 130 and nothing said, as typer ends a command it interrupts — never a traceback.
    """
    try:
        code: object = _command()
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        code = _INTERRUPTED_STATUS
    status = _exit_status(code)
    import atexit

    # threading's exit hook, if threading was loaded: a process that never imported it started
    # no thread to join (a hook a rule decides: importing it costs ~3.6 M instructions).
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: as Python itself says it
            status = status or _FLUSH_FAILED_STATUS
    os._exit(status)


def _command() -> object:
    """The command line's command, run: its exit code (SystemExit, a signal's
    KeyboardInterrupt raised through)."""
    from wisp import _startup

    _startup.pause()  # until the process lives on, if it does (see wisp._startup)
    _closed_streams_to_devnull()
    code: object = _hook(sys.argv[1:])
    if code is None:  # not a hook run here: signals as the CLI (and its hook) sets them
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOP_SIGNALS)
        code = _mcp(sys.argv[1:])
    if code is None:
        code = _listing(sys.argv[1:])
    if code is None:
        code = _approve(sys.argv[1:])
    if code is None:
        from wisp.cli import main

        main()
        code = 0
    return code


def _options(args: list[str], names: tuple[str, ...]) -> dict[str, str] | None:
    """`--NAME VALUE` and `--NAME=VALUE` for *names*, each at most once; None for anything
    else (left to the CLI)."""
    given: dict[str, str] = {}
    rest = iter(args)
    for arg in rest:
        name, equals, value = arg.partition("=")
        if name not in names or name in given:
            return None
        if not equals:
            value = next(rest, None)  # type: ignore[assignment]
            if value is None:
                return None
        given[name] = value
    return given


def _hook(argv: list[str]) -> int | None:
    """A hook's run and its exit status, for the forms the module's docstring names; None,
    having done nothing, for any other command line."""
    if argv[:1] != ["hook"] or len(argv) < 2:
        return None
    given = _options(argv[2:], ("--wait", "--on-timeout"))
    if given is None:
        return None
    # Signals first: from here on, a signal ends in the harness's deny.
    from wisp.agents import hookio

    if hookio.module_of(argv[1]) is None:
        return None
    stop = hookio.arm()
    harness = hookio.harness(argv[1])
    if harness is None or ("--on-timeout" in given and not harness.on_timeout):
        return None
    from wisp._deadlines import DeadlineError, check_deadline

    try:
        wait = float(given.get("--wait", hookio.DEFAULT_WAIT_S))
        if "--wait" in given:
            check_deadline(wait, what="--wait", zero=None)
        policy = hookio.OnTimeout(given.get("--on-timeout", hookio.OnTimeout.ASK))
    except (ValueError, DeadlineError):  # the CLI says what the option takes
        return None
    return hookio.run(stop, harness, hookio.HookOptions(wait_s=wait, on_timeout=policy))


def _mcp(argv: list[str]) -> int | None:
    """`wisp mcp`, exactly (what an MCP client starts): served before the CLI loads, as the
    command serves it; None for any other command line. Its client waits for the answer to
    `initialize` (Claude Code's `-p` sends its first tool call before a slow server is up):
    typer, click and rich were ~50 ms of that start, against a floor of a minimal server on the
    same SDK (bench/README.md, issue 41)."""
    if argv != ["mcp"]:
        return None
    from wisp.mcp import main

    return main()


# The listings served before the CLI loads: each command line, exactly, and the kind it lists
# (None: every kind). `wisp approvals pending` is the command kind's listing.
_LISTINGS: dict[tuple[str, ...], str | None] = {
    ("pending", "--json"): None,
    ("approvals", "pending", "--json"): "command",
}
# The listings for people served before the CLI loads while the channel holds nothing: each
# command line, exactly, and what its empty listing names (as the command names it).
_EMPTY_LISTINGS: dict[tuple[str, ...], str] = {
    ("pending",): "anything",
    ("approvals", "pending"): "command",
}


def _listing(argv: list[str]) -> int | None:
    """`wisp pending --json` and `wisp approvals pending --json`, exactly (what a script runs):
    served before the CLI loads, as the commands serve them
    (:func:`wisp.program.writes.pending_json`: the same output, the same words on stderr, the
    same status); `wisp pending` and `wisp approvals pending`, exactly, while the channel holds
    nothing (:func:`wisp.program.writes.nothing_waits`); None for any other command line, and
    while a shell's completion asks (`_WISP_COMPLETE` set: the CLI's to answer).
    Loading typer, click, rich and the CLI's modules was ~120 M of the ~295 M instructions
    of its start (its count less what each request costs; callgrind, bench/README.md, issue
    41), against ~95 M for the floor's."""
    if os.environ.get("_WISP_COMPLETE"):
        return None
    what = _EMPTY_LISTINGS.get(tuple(argv))
    if what is not None:
        # `wisp pending`, what a person runs most, on a channel that holds nothing: its one
        # line without typer, click and the CLI's modules (about half of its start); anything
        # in the channel (or no channel yet, or one refused) is the CLI's to list or to say.
        from wisp.program.writes import nothing_waits

        return nothing_waits(what)
    if tuple(argv) not in _LISTINGS:
        return None
    # The collector stays paused to the end (wisp._startup: a command that ends): a listing
    # keeps what it makes until it is printed (~150,000 objects at 10,000 requests), and a
    # collection after it walked them all again (~2,000 instructions a request).
    from wisp.program.writes import pending_json

    kind = _LISTINGS[tuple(argv)]
    if kind is None:
        return pending_json(None)
    from pending import Kind

    return pending_json([Kind(kind)])


def _approve(argv: list[str]) -> int | None:
    """`wisp approvals approve ID`, exactly, the ID (or its prefix) letters and digits only:
    served before the CLI loads, as the command serves it (:func:`wisp.program.writes.approve_once`:
    the same words, refusals and status); None for any other command line (a scope, `--json`,
    no ID, anything the CLI parses or refuses), and while a shell's completion asks. The
    person answering waits on it, and so does the agent that asked."""
    if (
        len(argv) != 3
        or argv[:2] != ["approvals", "approve"]
        or not (argv[2].isascii() and argv[2].isalnum())
        or os.environ.get("_WISP_COMPLETE")
    ):
        return None
    from wisp.program.writes import approve_once

    return approve_once(argv[2])


def _closed_streams_to_devnull() -> None:
    """A standard stream the process was started without (`wisp … >&-`, a daemon's closed
    descriptors) reads and writes as /dev/null: what would go there is dropped, as print()
    drops it, and the status still says how the command ended. The descriptor is taken too,
    so that no file wisp opens is given it and then written to as the stream."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        stream = open(fd, "r" if fd == 0 else "w", closefd=False)  # noqa: SIM115 (the process's)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _exit_status(code: object) -> int:
    """SystemExit's code as the interpreter turns it into a status (a text: said, then 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    run()
