"""The launcher a test starts in place of ``python -m wisp ARGS``: it asks its worker's zygote
(:mod:`zygote`, which explains the whole) to fork the command, or becomes the command itself.

    python -I -S -c 'import sys; sys.path[:0] = [TESTS]; import launcher; launcher.main()' \
        SOCKET ARGS...

It runs for every `wisp` command the tests start (some 1,300 a run), so it imports only
modules built into the interpreter (``_signal`` and ``_socket``, not ``signal`` and ``socket``,
whose enums alone cost ~18 ms a start) and is imported from its cached bytecode by that one
line, not compiled as a script each time: ~15 ms of CPU a start, most of it the interpreter's.

What it hands the zygote, and what makes it run cold instead, is :func:`traits` and
:func:`launch`; the zygote compares the traits with its own (:func:`differences`).
"""

# try/except/pass, not contextlib.suppress: importing contextlib is a millisecond a start.
# ruff: noqa: SIM105

from __future__ import annotations

import _signal
import _socket
import array
import marshal
import os
import sys

FORWARDED = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
MESSAGE_MAX = 1 << 20  # a request: argv, environment and cwd; far beyond any test's
NOT_SERVED = 125  # the launcher's exit status when no zygote answers (none of wisp's)
# The environment the modules the zygote preloads read as they import, which a fork carries
# from the zygote: a launcher whose values differ runs cold. typer.core reads whether to use
# rich; the MCP SDK's imports read the rest (gettext's locale, opentelemetry's and pydantic's
# settings, sysconfig's, and HOME). The zygote checks that the list is whole as it preloads.
IMPORT_ENV = (
    "HOME",
    "LANGUAGE",
    "PYDANTIC_DISABLE_PLUGINS",
    "TYPER_USE_RICH",
    "_PYTHON_PROJECT_BASE",
    "_PYTHON_SYSCONFIGDATA_NAME",
)
IMPORT_ENV_PREFIXES = ("OTEL_",)
# The environment the interpreter itself reads as it starts (flags, hash seed, paths, the
# standard streams' encoding): a launcher whose value differs runs cold.
START_ENV_PREFIXES = ("PYTHON", "LC_")
START_ENV = ("LANG",)
NAMESPACES = ("user", "mnt", "pid", "net", "uts", "ipc", "cgroup")
# Ignored by the interpreter itself at start-up, whatever it inherited (SIGPIPE, SIGXFSZ).
IGNORED_BY_PYTHON = frozenset({_signal.SIGPIPE, _signal.SIGXFSZ})
STATUS_FIELDS = ("Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp")


# --- what a fork must match ----------------------------------------------------------------


def traits() -> dict[str, object]:
    """What this process has that a process forked from the zygote cannot take on: its user,
    groups, capabilities and namespaces, its cgroup, resource limits, scheduling, the signals
    it inherited ignored, and the environment the interpreter and the preloaded modules read
    as they start. The launcher sends its own; the zygote compares them with its own."""
    import resource

    status = {}
    with open("/proc/self/status") as lines:
        for line in lines:
            name, _, value = line.partition(":")
            if name in STATUS_FIELDS or name[:3] == "Cap":
                status[name] = value.strip()
    namespaces = {}
    for name in NAMESPACES:
        try:
            namespaces[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            pass
    with open("/proc/self/cgroup") as cgroup:
        group = cgroup.read()
    limits = {
        name: resource.getrlimit(getattr(resource, name))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }
    ignored = sorted(
        int(number)
        for number in _signal.valid_signals()
        if number not in IGNORED_BY_PYTHON and _signal.getsignal(number) == _signal.SIG_IGN
    )
    environment = {
        name: value
        for name, value in os.environ.items()
        if name.startswith(START_ENV_PREFIXES + IMPORT_ENV_PREFIXES)
        or name in START_ENV
        or name in IMPORT_ENV
    }
    return {
        "status": status,
        "namespaces": namespaces,
        "cgroup": group,
        "limits": limits,
        "priority": os.getpriority(os.PRIO_PROCESS, 0),
        "affinity": sorted(os.sched_getaffinity(0)),
        "ignored": ignored,
        "environment": environment,
    }


def differences(mine: dict[str, object], theirs: object) -> str:
    """Why a fork of the zygote (*mine*) cannot be the launcher's process (*theirs*), or ""."""
    if not isinstance(theirs, dict):
        return "the launcher sent no traits"
    for name, value in mine.items():
        other = theirs.get(name)
        if other != value:
            if isinstance(value, dict) and isinstance(other, dict):  # say which, for the log
                both = sorted(value.keys() | other.keys())
                keys = [k for k in both if value.get(k) != other.get(k)]
                return f"its {name} differ from the zygote's ({', '.join(map(str, keys))})"
            return f"its {name} differ from the zygote's"
    return ""


# --- the launcher -------------------------------------------------------------------------


def terminal() -> tuple[int | None, str]:
    """The launcher's controlling terminal (an fd on it, or None) and, if a child cannot take
    it over, why: only a session's leader in its terminal's foreground can let go of it."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:  # ENXIO: no controlling terminal
        return None, ""
    if os.getsid(0) != os.getpid():
        return fd, "it runs on a terminal whose session it does not lead"
    try:
        foreground = os.tcgetpgrp(fd)
    except OSError:
        foreground = -1
    if foreground != os.getpgrp():
        return fd, "it is not in its terminal's foreground"
    return fd, ""


def let_go(tty: int) -> None:
    """Give up the controlling terminal *tty* (this process leads its session), so the child
    can take it. The kernel sends the terminal's foreground group — this process — SIGHUP and
    SIGCONT: ignored, and not left pending (a blocked signal is kept even when ignored)."""
    import fcntl
    import termios

    _signal.signal(_signal.SIGHUP, _signal.SIG_IGN)
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [_signal.SIGHUP])
    fcntl.ioctl(tty, termios.TIOCNOTTY)
    _signal.pthread_sigmask(_signal.SIG_BLOCK, [_signal.SIGHUP])
    os.close(tty)


def cold(args: list[str], own_terminal: bool = False) -> None:
    """Become ``python -m wisp ARGS`` itself, in place (same pid), or with *own_terminal*
    ``python tests/ctty.py -- python -m wisp ARGS``; never returns."""
    _signal.pthread_sigmask(_signal.SIG_SETMASK, [])
    argv = [sys.executable, "-m", "wisp", *args]
    if own_terminal:
        argv = [sys.executable, os.path.join(os.path.dirname(__file__), "ctty.py"), "--", *argv]
    os.execv(sys.executable, argv)


def ask(path: str, request: dict[str, object], fds: list[int]) -> tuple[_socket.socket, str]:
    """Send *request* with *fds* to the zygote at *path*: the link, and its verdict ("fork",
    or why not)."""
    link = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    link.connect(path)
    rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
    link.sendmsg([marshal.dumps(request)], rights)
    return link, marshal.loads(link.recv(MESSAGE_MAX))


OWN_TERMINAL = "--own-terminal"  # before ARGS: as `tests/ctty.py -- python -m wisp ARGS` runs


def launch(path: str, args: list[str]) -> None:
    """Be ``python -m wisp ARGS`` through the zygote at *path*; never returns. With
    ``--own-terminal`` first, be ``python tests/ctty.py -- python -m wisp ARGS`` (a fresh
    terminal, the command in its background) instead."""
    _signal.pthread_sigmask(_signal.SIG_BLOCK, FORWARDED)  # held until the child's pid is known
    own = args[:1] == [OWN_TERMINAL]
    if own:
        args = args[1:]
        tty, unmovable = None, ""  # ctty.py's session leaves the launcher's terminal behind
    else:
        tty, unmovable = terminal()
    if unmovable:
        cold(args)
    umask = os.umask(0)
    os.umask(umask)
    request = {
        "args": args,
        "env": dict(os.environb),
        "cwd": os.getcwd(),
        "umask": umask,
        "setsid": os.getsid(0) == os.getpid(),
        "pgid": os.getpgrp(),
        "terminal": tty is not None,
        "own_terminal": own,
        "traits": traits(),
    }
    try:
        link, verdict = ask(path, request, [0, 1, 2] if tty is None else [0, 1, 2, tty])
        if verdict != "fork":
            link.close()
            cold(args, own)
        if tty is not None:
            let_go(tty)
        link.send(marshal.dumps("go"))
        pid = marshal.loads(link.recv(MESSAGE_MAX))
    except (OSError, EOFError, ValueError) as exc:
        os.write(2, f"zygote launcher: no process from {path}: {exc}\n".encode())
        os._exit(NOT_SERVED)
    # The child has the streams now: hold none of them open behind its back.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)

    def forward(number: int, _frame: object) -> None:
        try:
            os.kill(pid, number)
        except ProcessLookupError:  # already gone: its status is on the way
            pass

    for number in FORWARDED:
        _signal.signal(number, forward)
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, FORWARDED)
    try:
        status = marshal.loads(link.recv(MESSAGE_MAX))
    except (OSError, EOFError, ValueError) as exc:
        os.write(2, f"zygote launcher: the zygote went before {pid} ended: {exc}\n".encode())
        os._exit(NOT_SERVED)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            _signal.signal(-code, _signal.SIG_DFL)
        except OSError:  # SIGKILL's cannot be set (nor needs to be)
            pass
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
        code = 128 - code  # only if the signal did not end us (it is ignored, say)
    os._exit(code)


def main() -> None:
    launch(sys.argv[1], sys.argv[2:])
