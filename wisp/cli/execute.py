"""`wisp exec -- CMD ARGS…`: ask for exactly this argv, and on approval become it.

For any script or harness without hooks. The argv, shell-quoted, is decided as every harness's
call is (:func:`wisp.agents.gate.exec_approval`: the self-guard, the person's rules, the
must-ask classes, grants, the built-in rules): a rule may run it, or refuse it, without
asking; else the person approves the argv shown (shell-quoted),
and that argv, exactly, replaces this process (`execv`: its signals and exit status are the
command's own). The program is the file argv[0] names when it asks, links resolved (found on
PATH if it names no directory): the request shows it (`with executable: …`) and binds it, a
grant covers only that file, and that file, unchanged, is what runs — not whatever the name
finds on PATH or through a link by then. A program file the agent can write (and the script a
known interpreter is given: `bash x.sh`) is bound to its content as a hook's call is
(:mod:`wisp.kinds.programs`): shown with its digest, a grant covers that content only, and
right before it runs the file is hashed again; changed since it was asked about, nothing runs
(126). Denied, timed out or withdrawn, nothing runs, and it exits as `wisp approvals request`
does. Its own words go to stderr: stdout is the command's.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from pending import PendingError
from wisp import EntryPoint, StoreError
from wisp._text import visible
from wisp.cli._ask import (
    TimeoutOption,
    asking,
    command_prompt,
    timeout_in_effect,
    withdraw_on_signal,
    withdrawn_how,
)
from wisp.cli._common import config_or_fail, fail, tell
from wisp.cli._exit import ExitCode
from wisp.kinds.programs import (
    DIGEST_PREFIX,
    bound,
    changed_since,
    programs_bound,
    scripts_of,
    sealed_fd,
    with_programs,
)

if TYPE_CHECKING:
    from pending import Request

EXEC_EXAMPLES = """Examples:
  wisp exec -- make deploy
  wisp exec --reason "ship 1.4" --timeout 300 -- ./deploy.sh --prod
  wisp exec -- sh -c 'rm -rf build'"""

# As a shell reports a command it could not run: not found, or found but not executable.
NOT_FOUND = 127
NOT_EXECUTABLE = 126
EXECUTABLE = "executable"  # the option that names and binds the file that runs


def _resolved(program: str) -> str | None:
    """The file *program* runs now: a path as given, else found on PATH; links resolved.
    None if there is none."""
    found = program if os.sep in program else shutil.which(program)
    return None if found is None else os.path.realpath(found)


Identity = tuple[int, int, int, int]  # device, inode, size, mtime (ns)


def _identity(st: os.stat_result | None) -> Identity | None:
    """Which file *st* is the status of, and as what; None if none."""
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _status(path: str | None) -> os.stat_result | None:
    if path is None:
        return None
    try:
        return Path(path).stat()
    except OSError:
        return None


def execute(
    argv: Annotated[
        list[str],
        typer.Argument(
            metavar="-- COMMAND [ARGS]...",
            help="The command and its arguments, after --: exactly what runs if approved.",
        ),
    ],
    reason: Annotated[
        str | None, typer.Option("--reason", metavar="TEXT", help="Why it should run (shown).")
    ] = None,
    timeout: TimeoutOption = None,
) -> None:
    """Ask the person to approve exactly this command, then run it in wisp's place.

    Approved, it replaces this process (its exit status is the command's; 127 if it is not
    found, 126 if it cannot be run). Exit 1 denied or withdrawn (Ctrl-C withdraws), 124 timed
    out, 2 error; nothing runs then."""
    config = config_or_fail()
    timeout_s = timeout_in_effect(timeout, config)
    text = shlex.join(argv)
    where = str(Path.cwd().resolve())
    executable = _resolved(argv[0])  # None: not found (it is asked as typed, and fails 127)
    identity = _identity(_status(executable))
    programs = [*([executable] if executable is not None else []), *scripts_of(argv, where)]
    options = with_programs(
        {EXECUTABLE: executable} if executable is not None else None, bound(programs)
    )

    told = command_prompt(
        f"wisp: asking you to approve running (in {visible(where)}):", text, reason, timeout_s
    )
    filed_ids: list[str] = []

    def filed(request: Request) -> None:
        filed_ids.append(request.id)
        told(request)

    from wisp import ApprovalGate, ApprovalOutcome, exec_approval

    with asking(EntryPoint.APPROVALS, config) as asker:
        try:
            approval = exec_approval(
                ApprovalGate(asker, timeout_s=timeout_s),
                text,
                where,
                options=options,
                reason=reason,
                on_filed=filed,
            )
        except (PendingError, StoreError) as exc:
            fail(f"could not ask: {exc}")  # leaving `asking` withdraws what waits and closes
        except KeyboardInterrupt as interrupt:  # Ctrl-C, SIGTERM or SIGHUP
            endings = withdraw_on_signal(asker, filed_ids)
            tell(f"wisp: {withdrawn_how(interrupt, endings)}; nothing was run.")
            raise typer.Exit(int(ExitCode.NO)) from None
    by_rule = approval.request_id is None and approval.grant is None  # a rule decided
    if by_rule:
        tell(
            f"wisp: {approval.reason}; "
            + (f"running {visible(text)}" if approval.approved else "not run.")
        )
    if by_rule and not approval.approved:
        raise typer.Exit(int(ExitCode.NO))
    if not approval.approved:
        words = {ApprovalOutcome.ANSWERED: "denied", ApprovalOutcome.TIMED_OUT: "timed out"}
        word = words.get(approval.outcome, approval.outcome)
        tell(f"wisp: {word}" + (f": {approval.reason}" if approval.reason else "") + "; not run.")
        timed_out = approval.outcome is ApprovalOutcome.TIMED_OUT
        code = ExitCode.TIMED_OUT if timed_out else ExitCode.NO
        raise typer.Exit(int(code))
    if not by_rule:
        tell(f"wisp: approved {approval.scope}; running {visible(text)}")
    _become(argv, executable, identity, programs_bound(options), where)


def _changed(what: str) -> NoReturn:
    tell(
        f"wisp: {what} while you were asked: it is not what you approved, so nothing was "
        "run. Run it again to be asked about it as it is now."
    )
    raise typer.Exit(NOT_EXECUTABLE)


def _become(
    argv: list[str],
    executable: str | None,
    identity: Identity | None,
    sealed: Mapping[str, str],
    where: str,
) -> NoReturn:
    """Replace this process with *argv*, as the approved file *executable* (its *identity*
    when asked; its content, if *sealed*) — checked first, and for a binary run from the very
    descriptor checked, so that a file put in its place after the check does not run."""
    if executable is None:
        _run(argv, lambda: os.execvp(argv[0], argv))  # noqa: S606
    try:
        fd = os.open(executable, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        fd = -1  # gone or unreadable: as before, exec says why
    try:
        if executable in sealed and (fd < 0 or sealed_fd(fd) != sealed[executable]):
            _changed(f"{visible(executable)} changed")
        digested = sealed.get(executable, "").startswith(DIGEST_PREFIX)
        if fd >= 0 and not digested and _identity(os.fstat(fd)) != identity:
            _changed(f"{visible(executable)} was replaced")
        changed = changed_since({p: s for p, s in sealed.items() if p != executable}, where)
        if changed:
            _changed(visible(changed))
        sys.stdout.flush()
        sys.stderr.flush()
        # The approved argv, exactly, takes this process's place (no shell: nothing re-parsed),
        # as the very file that was approved, whatever PATH or a link finds by now. A binary
        # runs from the descriptor just checked (fexecve); a `#!` script cannot (its
        # interpreter opens it by name), so it runs by its path: docs/cli.md says so.
        if fd >= 0 and _binary(fd) and os.execve in os.supports_fd:
            _run(argv, lambda: os.execve(fd, argv, os.environ))  # noqa: S606
        _run(argv, lambda: os.execv(executable, argv))  # noqa: S606
    finally:
        if fd >= 0:
            os.close(fd)


def _binary(fd: int) -> bool:
    """Whether the regular file open as *fd* is no `#!` script."""
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.pread(fd, 2, 0) != b"#!"
    except OSError:
        return False


def _run(argv: list[str], become: Callable[[], object]) -> NoReturn:
    try:
        become()
    except FileNotFoundError:
        tell(f"wisp: {visible(argv[0])}: command not found")
        raise typer.Exit(NOT_FOUND) from None
    except OSError as exc:
        tell(f"wisp: {visible(argv[0])}: cannot run it ({exc.strerror})")
        raise typer.Exit(NOT_EXECUTABLE) from None
    raise AssertionError("an exec returned")  # pragma: no cover
