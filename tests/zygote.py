"""A warm fork server for the tests' `wisp` processes, and the launcher that asks it for one.

Why: a `wisp` command spends most of its CPU before its own work: the interpreter's start-up,
then typer and attrs (~125 of a listing's ~205 ms of CPU, measured with a forked child against
a cold `python -m wisp approvals pending`); a `wisp mcp` process ~1.3 s, nearly all of it the
MCP SDK (`mcp`, whose `__init__` pulls in client, server and HTTP transports, and `mcp_types`'
pydantic models for two protocol versions). The suite starts some 1,300 `wisp` processes, so
that start-up was most of its CPU. The libraries cannot be changed, so the tests import them
once per pytest worker, in a parent (the zygote) that forks a process per command.

Two programs:

- ``python zygote.py --serve SOCKET`` (the zygote, one per worker, started by :func:`command`):
  imports the third-party modules wisp needs (:data:`PRELOAD`) and wisp's own but the TUI's
  (:func:`preloaded`), checking as they import that they read nothing of the environment but
  what the launcher compares (:func:`preload`) — wisp's modules read none, nor the terminal,
  nor start a thread — and listens on a Unix socket. It ends when its stdin (a pipe from the
  worker) closes, killing any child still running.
- the launcher (:mod:`launcher`, what :func:`command` gives a test to start in place of
  ``python -m wisp ARGS``; ~15 ms of CPU, it imports only modules built into the interpreter):
  hands its stdin, stdout and stderr (SCM_RIGHTS), argv, environment, cwd, umask, session and
  controlling terminal to the zygote, which forks a child that takes them on as its own and
  runs wisp's CLI exactly as ``python -m wisp ARGS`` does (:func:`runpy.run_module` with
  ``alter_sys``, standard streams made anew as the interpreter makes them). The launcher
  forwards SIGTERM, SIGINT and SIGHUP to the child and exits with the child's status (a death
  by a signal re-raised on itself, so ``returncode`` is ``-SIG`` as before); if the launcher
  dies, the zygote SIGKILLs its child.

When a fork cannot be the process the test asked for, the launcher becomes that process
itself: it execs ``python -m wisp ARGS`` cold, in place (same pid). That is so when the
launcher differs from the zygote in anything a fork cannot take on (:func:`launcher.differences`):
user, groups or namespaces (a test in a user namespace), resource limits (a test that lowers
them), signals ignored from the start, the environment the interpreter reads as it starts
(``PYTHON*``, the locale's) or that a preloaded module read as it imported
(:data:`launcher.IMPORT_ENV`); or when it runs on a terminal it cannot hand over (it has one
but does not lead its session, or is not in the terminal's foreground: a shell's job, a
relay's background group). A launcher that leads its session in the foreground of its
terminal (``pexpect``'s spawn, a terminal's first process) hands the terminal over: it lets go
of it (``TIOCNOTTY``, its own SIGHUP from that ignored) before the child, in a new session,
takes it (``TIOCSCTTY``), so Ctrl-C typed there, a hang-up, the window size and ``/dev/tty``
are the child's as they would be a cold command's.

What stays the same as a cold start: a real, separate process per command, with its own stdio,
environment, cwd, umask, session and terminal, and Python's start-up signal dispositions; the
pid a command records (which tests signal) is the child's own. What is shared: the modules as
imported once, with the zygote's environment (the variables they read as they import are
compared, above; a fork has its own copy of every module's state), and the interpreter's
start-up settings (its flags and hash seed: a launcher asking for another seed runs cold).
What each command imports is tested cold (tests/test_cli_imports.py). ``random`` is reseeded in a
forked child by CPython; wisp's IDs come from ``os.urandom``.
"""

from __future__ import annotations

import marshal
import os
import signal
import socket
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import suppress
from typing import NoReturn

from launcher import (
    FORWARDED,
    IMPORT_ENV,
    IMPORT_ENV_PREFIXES,
    MESSAGE_MAX,
    NOT_SERVED,
    OWN_TERMINAL,
    START_ENV,
    START_ENV_PREFIXES,
    differences,
    traits,
)

START_BOUND_S = 120.0  # the zygote's time to import the SDK (~1.5 s idle; a loaded machine)
STOP_BOUND_S = 20.0  # the zygote's time to end once told to

# What `wisp` imports: third-party, the CLI's (typer, attrs, cattrs, rich's console and text)
# and `wisp mcp`'s (the SDK, wisp.mcp's own imports of it); then every module of `pending` and
# `wisp` (:func:`preloaded`) but the TUI's (textual is imported only by `wisp tui`, which few
# tests start).
PRELOAD = (
    "anyio",
    "anyio.to_thread",
    "attrs",
    "cattrs",
    "mcp",
    "mcp.server.context",
    "mcp.server.mcpserver",
    "mcp.server.mcpserver.exceptions",
    "mcp.server.mcpserver.resources",
    "mcp.server.session",
    "mcp.server.stdio",
    "mcp.server.subscriptions",
    "mcp.shared.exceptions",
    "mcp_types",
    "pydantic",
    "pydantic_core",
    "rich.console",
    "rich.text",
    "typer",
    "typer.main",
)
OWN_PACKAGES = ("pending", "wisp")
NOT_PRELOADED = ("wisp.tui",)


def preloaded() -> list[str]:
    """PRELOAD, then the modules of OWN_PACKAGES but NOT_PRELOADED, packages before their
    modules (found on disk, so that no package left out is imported to be looked into)."""
    import importlib.util
    import pkgutil

    names = list(PRELOAD)
    packages = list(OWN_PACKAGES)
    while packages:
        package = packages.pop(0)
        names.append(package)
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations is not None, package
        for found in pkgutil.iter_modules(spec.submodule_search_locations, package + "."):
            if found.name in NOT_PRELOADED or found.name.endswith(".__main__"):
                continue  # a __main__ runs its program as it imports
            (packages if found.ispkg else names).append(found.name)
    return names


class WatchedEnvironment(MutableMapping[str, str]):
    """``os.environ`` as the preloaded modules see it while they import: every variable they
    read is noted (:attr:`read`; ``"*"`` for a walk over all of them), so that the zygote can
    check it reads none but those the launcher compares (:data:`launcher.IMPORT_ENV`). It
    stays a live view of the real environment for any module that kept it."""

    def __init__(self, real: MutableMapping[str, str]) -> None:
        self.real = real
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.read.add(name)
        return self.real[name]

    def __setitem__(self, name: str, value: str) -> None:
        self.real[name] = value

    def __delitem__(self, name: str) -> None:
        del self.real[name]

    def __iter__(self) -> Iterator[str]:
        self.read.add("*")
        return iter(self.real)

    def __len__(self) -> int:
        return len(self.real)

    def copy(self) -> dict[str, str]:
        self.read.add("*")
        return dict(self.real)


def preload() -> None:
    """Import :func:`preloaded`, checking that they read no environment variable as they
    import but those whose values the launcher compares (the interpreter's, IMPORT_ENV), nor
    start a thread."""
    import importlib
    import threading

    watched = WatchedEnvironment(os.environ)
    os.environ = watched  # type: ignore[assignment]  # noqa: B003 (os.getenv reads it too)
    try:
        for name in preloaded():
            importlib.import_module(name)
    finally:
        os.environ = watched.real  # type: ignore[assignment]  # noqa: B003
    compared = START_ENV_PREFIXES + IMPORT_ENV_PREFIXES
    unexpected = sorted(
        name
        for name in watched.read
        if not (name in IMPORT_ENV or name in START_ENV or name.startswith(compared))
    )
    assert not unexpected, (
        f"a preloaded module read {unexpected} of the environment as it imported: a fork "
        "would carry the zygote's value; compare it in launcher.IMPORT_ENV"
    )
    assert threading.active_count() == 1, "the zygote must start no thread (it forks)"


# --- the zygote -----------------------------------------------------------------------------


def serve(path: str) -> NoReturn:
    """Preload, listen at *path*, fork a process per launcher; until stdin closes."""
    import selectors

    dispositions = {n: signal.getsignal(n) for n in signal.valid_signals()}
    mine = traits()
    preload()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    chooser = selectors.DefaultSelector()
    chooser.register(listener, selectors.EVENT_READ, "accept")
    chooser.register(0, selectors.EVENT_READ, "lifeline")
    asked: dict[socket.socket, tuple[dict[str, object], list[int]]] = {}  # told "fork"
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, launcher link)
    orphaned: set[socket.socket] = set()  # links whose launcher went before its child
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in chooser.select():
            what = key.data
            link = key.fileobj  # type: ignore[assignment]
            if what == "lifeline":
                if not os.read(0, 4096):
                    for pid, _link in children.values():
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    # Nothing is left to write: an interpreter's teardown of all it preloaded
                    # took ~1-2 s of CPU, which the worker, then pytest, waited for at the end.
                    os._exit(0)
            elif what == "accept":
                link, _ = listener.accept()
                chooser.register(link, selectors.EVENT_READ, "request")
            elif what == "request":  # the launcher's request: fork, or tell it to run cold
                chooser.unregister(link)
                try:
                    data, fds, _flags, _addr = socket.recv_fds(link, MESSAGE_MAX, 4)
                    request = marshal.loads(data)
                except (OSError, EOFError, ValueError):
                    request, fds = None, []
                wanted = 4 if isinstance(request, dict) and request.get("terminal") else 3
                why = "" if request is not None and len(fds) == wanted else "a bad request"
                why = why or differences(mine, request.get("traits"))  # type: ignore[union-attr]
                with suppress(OSError):
                    link.send(marshal.dumps(why or "fork"))
                if why:
                    with suppress(OSError), open(path + COLD_LOG, "a") as log:
                        log.write(f"{why}\n")  # for a test that expected a fork: why not
                    for fd in fds:
                        os.close(fd)
                    link.close()
                    continue
                asked[link] = (request, fds)  # type: ignore[assignment]
                chooser.register(link, selectors.EVENT_READ, "go")
            elif what == "go":  # the launcher has let go of its terminal, if it had one
                chooser.unregister(link)
                request, fds = asked.pop(link)
                try:
                    go = marshal.loads(link.recv(MESSAGE_MAX)) == "go"
                except (OSError, EOFError, ValueError):
                    go = False
                if not go:
                    for fd in fds:
                        os.close(fd)
                    link.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    child(request, fds, dispositions)  # never returns
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, link)
                link.send(marshal.dumps(pid))
                chooser.register(pidfd, selectors.EVENT_READ, "exited")
                chooser.register(link, selectors.EVENT_READ, ("launcher", pidfd))
            elif what == "exited":
                pidfd = key.fd
                pid, link = children.pop(pidfd)
                chooser.unregister(pidfd)
                if link in orphaned:
                    orphaned.remove(link)
                else:
                    chooser.unregister(link)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                with suppress(OSError):  # the launcher went first
                    link.send(marshal.dumps(status))
                link.close()
            else:  # ("launcher", pidfd): the launcher said something or went; it only goes
                pid, link = children[what[1]]
                chooser.unregister(link)
                orphaned.add(link)
                os.kill(pid, signal.SIGKILL)  # then reaped as "exited"


def child(request: dict[str, object], fds: list[int], dispositions: dict[int, object]) -> None:
    """In the forked child: take on the launcher's stdio, terminal, environment, cwd and
    session, then be ``python -m wisp ARGS``; exits with its status, never returns."""
    try:
        if request.get("own_terminal"):
            os.setsid()  # a session of its own, its terminal made below
        elif request["setsid"]:
            os.setsid()
            if request["terminal"]:  # the launcher let go of it: the new session's now
                import fcntl
                import termios

                fcntl.ioctl(fds[3], termios.TIOCSCTTY, 0)
        else:
            with suppress(OSError):  # another session's group: stay in the zygote's
                os.setpgid(0, request["pgid"])  # type: ignore[arg-type]
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        if request.get("own_terminal"):
            own_terminal()  # returns in the command's process only
        standard_streams()
        for number, handler in dispositions.items():
            if handler is not None and signal.getsignal(number) != handler:
                signal.signal(number, handler)  # type: ignore[arg-type]
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.environb.clear()
        os.environb.update(request["env"])  # type: ignore[call-overload]
        cwd = str(request["cwd"])
        os.chdir(cwd)
        os.umask(request["umask"])  # type: ignore[arg-type]
        sys.argv = ["-m", *request["args"]]  # type: ignore[misc]
        sys.path[0] = cwd  # as `python -m` has it
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(NOT_SERVED)
    os._exit(run_as_main("wisp"))


def own_terminal() -> None:
    """As tests/ctty.py runs a command: this process (leading a new session) takes a fresh
    pseudo-terminal as its controlling terminal and runs the command in a process group of
    its own, in that terminal's background, as `wisp tui` starts its relay. It holds the
    terminal, passes SIGTERM, SIGINT and SIGHUP on to the command and exits with its status
    (a death by a signal as a shell reports it, 128+N, as ctty.py does). Returns only in the
    command's process."""
    import fcntl
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)  # not the terminal's foreground group: that stays the leader's
        os.close(master)
        os.close(slave)
        return

    def forward(number: int, _frame: object) -> None:
        with suppress(ProcessLookupError):
            os.kill(pid, number)

    for number in FORWARDED:
        signal.signal(number, forward)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    _, status = os.waitpid(pid, 0)  # retried after a forwarded signal's handler (PEP 475)
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


def standard_streams() -> None:
    """sys.stdin, stdout and stderr made anew on fds 0, 1 and 2 as the interpreter makes them as it
    starts (CPython's ``create_stdio``): the zygote's were made for its own pipes, and whether
    a stream is line-buffered depends on whether it is a terminal. Encoding, errors and
    buffering are the zygote's, which the launcher's environment matched."""
    import io

    unbuffered = sys.__stdout__.write_through  # type: ignore[union-attr]
    made = []
    for fd, name, old in (
        (0, "<stdin>", sys.__stdin__),
        (1, "<stdout>", sys.__stdout__),
        (2, "<stderr>", sys.__stderr__),
    ):
        writing = fd > 0
        buffering = 0 if unbuffered and writing else -1
        stream = open(fd, "wb" if writing else "rb", buffering, closefd=False)  # noqa: SIM115
        raw = stream.raw if buffering else stream  # type: ignore[union-attr]
        raw.name = name
        text = io.TextIOWrapper(
            stream,  # type: ignore[arg-type]
            encoding=old.encoding,  # type: ignore[union-attr]
            errors=old.errors,  # type: ignore[union-attr]
            newline="\n",
            line_buffering=not unbuffered and (raw.isatty() or fd == 2),
            write_through=unbuffered,
        )
        text.mode = "w" if writing else "r"  # type: ignore[misc]
        made.append(text)
    sys.stdin = sys.__stdin__ = made[0]  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = made[1]  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = made[2]  # type: ignore[misc]


def run_as_main(module: str) -> int:
    """``python -m MODULE`` to its end, as the interpreter ends it; the exit status."""
    import runpy
    import threading

    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exit_status(exc.code)
    except KeyboardInterrupt:
        code = -signal.SIGINT
    except BaseException:
        sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
        code = 1
    # What the interpreter does before it exits: join threads, run atexit, flush.
    threading._shutdown()  # type: ignore[attr-defined]
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    if code == -signal.SIGINT:  # an uncaught Ctrl-C: the interpreter dies of SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    return code


def exit_status(code: object) -> int:
    """SystemExit's code as the interpreter turns it into a status. (`wisp.__main__` has the
    same function; it is not imported from there: a zygote that has imported `wisp.__main__`
    makes runpy warn on every forked command's stderr, "found in sys.modules".)"""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


# --- the tests' side --------------------------------------------------------------------------


class Zygote:
    """The worker's zygote: started on first use, ended when the worker exits."""

    def __init__(self) -> None:
        import subprocess
        import tempfile

        self.directory = tempfile.mkdtemp(prefix="wisp-zygote-")
        self.path = os.path.join(self.directory, "socket")
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve", self.path],
            env=ENVIRONMENT,  # the worker's as it started, not a test's patched one
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        from helpers import read_line

        said = read_line(self.process.stdout, START_BOUND_S)
        assert said == "ready\n", f"the zygote did not start: {said!r}"

    def command(self, *args: str, own_terminal: bool = False) -> list[str]:
        flags = [OWN_TERMINAL] if own_terminal else []
        return [sys.executable, "-I", "-S", "-c", LAUNCH, self.path, *flags, *args]

    def stop(self) -> None:
        import shutil
        import subprocess

        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=STOP_BOUND_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


_ZYGOTE: list[Zygote] = []
COLD_LOG = ".cold.log"  # beside the socket: each launcher told to run cold, and why


def why_cold() -> str:
    """Why this worker's zygote told launchers to run cold, so far (for an assertion's
    message where a fork was expected)."""
    if not _ZYGOTE:
        return "no zygote started"
    try:
        with open(_ZYGOTE[0].path + COLD_LOG) as log:
            return "zygote said cold: " + log.read().strip().replace("\n", "; ")
    except FileNotFoundError:
        return "the zygote told no launcher to run cold"


ENVIRONMENT = dict(os.environ)
# The launcher's whole program: its module comes from cached bytecode, not compiled each start.
LAUNCH = (
    f"import sys; sys.path[:0] = [{os.path.dirname(os.path.abspath(__file__))!r}]; "
    "import launcher; launcher.main()"
)  # imported as the tests are collected, before any patches them


def command(*args: str, own_terminal: bool = False) -> list[str]:
    """The argv that runs ``python -m wisp ARGS`` warm (this worker's zygote, started once);
    with *own_terminal*, as ``python tests/ctty.py -- python -m wisp ARGS`` runs it."""
    if not _ZYGOTE:
        import atexit

        _ZYGOTE.append(Zygote())
        atexit.register(_ZYGOTE[0].stop)
    return _ZYGOTE[0].command(*args, own_terminal=own_terminal)


if __name__ == "__main__":
    serve(sys.argv[2])  # zygote.py --serve SOCKET
