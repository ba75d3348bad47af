"""A warm fork server for the tests' `wisp mcp` processes, and the launcher that asks it for one.

Why: a `wisp mcp` process spends ~1.3 s of CPU before it reads its first line, nearly all of it
importing the MCP SDK (`mcp`, whose `__init__` pulls in client, server and HTTP transports, and
`mcp_types`' pydantic models for two protocol versions); wisp's own modules are a small part.
The MCP tests start a server per test, so that import was most of their CPU. The SDK cannot be
changed, so the tests import it once per pytest worker, in a parent (the zygote) that forks a
server per test.

Two modes of this one file:

- ``python zygote.py --serve SOCKET`` (the zygote, one per worker, started by :func:`command`):
  imports only the third-party modules the server needs (:data:`PRELOAD`) — never a `wisp` or
  `pending` module, which may read the environment or the terminal as they import; they are
  imported fresh in each child — starts no thread, and listens on a Unix socket. It ends when
  its stdin (a pipe from the worker) closes, killing any server still running.
- ``python -I -S zygote.py SOCKET ARGS...`` (the launcher: what a test starts in place of
  ``python -m wisp ARGS``; ~30 ms, it imports only os, signal, socket, marshal): hands its
  stdin, stdout and stderr (SCM_RIGHTS), argv, environment, cwd, umask and session to the
  zygote, which forks a child that takes them on as its own and runs wisp's CLI exactly as
  ``python -m wisp ARGS`` does (:func:`runpy.run_module` with ``alter_sys``). The launcher
  forwards SIGTERM, SIGINT and SIGHUP to the child and exits with the child's status (a death
  by a signal re-raised on itself, so ``returncode`` is ``-SIG`` as before); if the launcher
  dies, the zygote SIGKILLs its child.

What stays the same as a cold start: a real, separate process per server, with its own stdio
pipes, environment, cwd, umask and session (a new session when the launcher leads one, as the
SDK's client starts it), Python's start-up signal dispositions, and wisp imported fresh; the
pid a server records (which tests signal) is the child's own. What is shared: the SDK's
modules as imported once, with the zygote's environment (none reads wisp's variables), and
the interpreter's start-up settings (its flags and hash seed). ``random`` is reseeded in a
forked child by CPython; wisp's IDs come from ``os.urandom``.
"""

from __future__ import annotations

import marshal
import os
import signal
import socket
import sys
from contextlib import suppress

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
MESSAGE_MAX = 1 << 20  # a request: argv, environment and cwd; far beyond any test's
NOT_SERVED = 125  # the launcher's exit status when no zygote answers (none of wisp's)
START_BOUND_S = 120.0  # the zygote's time to import the SDK (~1.5 s idle; a loaded machine)
STOP_BOUND_S = 20.0  # the zygote's time to end once told to

# What `wisp mcp` imports from the SDK (wisp.mcp's own imports of it), and nothing of wisp's.
PRELOAD = (
    "anyio",
    "anyio.to_thread",
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
)


# --- the launcher -------------------------------------------------------------------------


def launch(path: str, args: list[str]) -> None:
    """Be ``python -m wisp ARGS`` through the zygote at *path*; never returns."""
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)  # held until the child's pid is known
    umask = os.umask(0)
    os.umask(umask)
    request = {
        "args": args,
        "env": dict(os.environb),
        "cwd": os.getcwd(),
        "umask": umask,
        "setsid": os.getsid(0) == os.getpid(),
        "pgid": os.getpgrp(),
    }
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(path)
        socket.send_fds(link, [marshal.dumps(request)], [0, 1, 2])
        pid = marshal.loads(link.recv(MESSAGE_MAX))
    except (OSError, EOFError, ValueError) as exc:
        os.write(2, f"zygote launcher: no server from {path}: {exc}\n".encode())
        os._exit(NOT_SERVED)
    # The child has the pipes now: hold none of them open behind its back.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)

    def forward(number: int, _frame: object) -> None:
        with suppress(ProcessLookupError):  # already gone: its status is on the way
            os.kill(pid, number)

    for number in FORWARDED:
        signal.signal(number, forward)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    try:
        status = marshal.loads(link.recv(MESSAGE_MAX))
    except (OSError, EOFError, ValueError) as exc:
        os.write(2, f"zygote launcher: the zygote went before server {pid} ended: {exc}\n".encode())
        os._exit(NOT_SERVED)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with suppress(OSError):  # SIGKILL's cannot be set (nor needs to be)
            signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
        code = 128 - code  # only if the signal did not end us (it is ignored, say)
    os._exit(code)


# --- the zygote -----------------------------------------------------------------------------


def serve(path: str) -> None:
    """Preload the SDK, listen at *path*, fork a server per launcher; until stdin closes."""
    import importlib
    import selectors
    import threading

    dispositions = {n: signal.getsignal(n) for n in signal.valid_signals()}
    for name in PRELOAD:
        importlib.import_module(name)
    leaked = sorted(m for m in sys.modules if m.partition(".")[0] in ("wisp", "pending"))
    assert not leaked, f"the zygote must not import wisp's own modules: {leaked}"
    assert threading.active_count() == 1, "the zygote must start no thread (it forks)"

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    chooser = selectors.DefaultSelector()
    chooser.register(listener, selectors.EVENT_READ, "accept")
    chooser.register(0, selectors.EVENT_READ, "lifeline")
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, launcher link)
    orphaned: set[socket.socket] = set()  # links whose launcher went before its child
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in chooser.select():
            what = key.data
            if what == "lifeline":
                if not os.read(0, 4096):
                    for pid, _link in children.values():
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    return
            elif what == "accept":
                link, _ = listener.accept()
                chooser.register(link, selectors.EVENT_READ, "request")
            elif what == "request":
                link = key.fileobj  # type: ignore[assignment]
                chooser.unregister(link)
                try:
                    data, fds, _flags, _addr = socket.recv_fds(link, MESSAGE_MAX, 3)
                except OSError:
                    data, fds = b"", []
                if not data or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    link.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    child(marshal.loads(data), fds, dispositions)  # never returns
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
    """In the forked child: take on the launcher's stdio, environment, cwd and session, then
    be ``python -m wisp ARGS``; exits with its status, never returns."""
    try:
        if request["setsid"]:
            os.setsid()
        else:
            with suppress(OSError):  # another session's group: stay in the zygote's
                os.setpgid(0, request["pgid"])  # type: ignore[arg-type]
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
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
    """SystemExit's code as the interpreter turns it into a status."""
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
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        from helpers import read_line

        said = read_line(self.process.stdout, START_BOUND_S)
        assert said == "ready\n", f"the zygote did not start: {said!r}"

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-I", "-S", os.path.abspath(__file__), self.path, *args]

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


def command(*args: str) -> list[str]:
    """The argv that runs ``python -m wisp ARGS`` warm (this worker's zygote, started once)."""
    if not _ZYGOTE:
        import atexit

        _ZYGOTE.append(Zygote())
        atexit.register(_ZYGOTE[0].stop)
    return _ZYGOTE[0].command(*args)


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        launch(sys.argv[1], sys.argv[2:])
