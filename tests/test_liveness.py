"""Liveness by a held lock: a killed asker is seen as gone; a reused PID does not fool it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import Asker, command, fact, question

from pending import Channel, ServerLock, State

# Checks this process's own lock (server_alive) in a loop for half a second while another
# thread signals the main thread, whose handler raises; prints how many of those exceptions
# reached the loop and how many Python dropped as unraisable.
SIGNALLED_CHECKS = """\
import signal, sys, threading, time
from pending import Channel
from pending._liveness import server_alive

class Interrupted(Exception):
    pass

def interrupt(signum, frame):
    raise Interrupted

swallowed = []
sys.unraisablehook = lambda unraisable: swallowed.append(unraisable.exc_type)
channel = Channel.open(sys.argv[1])
lock = channel.server().acquire()
stop = threading.Event()

def pester():
    while not stop.is_set():
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)
        stop.wait(0.0002)

signal.signal(signal.SIGUSR1, interrupt)
pesterer = threading.Thread(target=pester, daemon=True)
raised, end = 0, time.monotonic() + 0.5
while True:
    try:
        if not pesterer.is_alive() and not stop.is_set():
            pesterer.start()
        while time.monotonic() < end:
            server_alive(channel.servers_fd, lock.id)
        stop.set()
        pesterer.join()
        break
    except Interrupted:
        raised += 1
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
print(raised, sum(kind is Interrupted for kind in swallowed))
"""


class TestServerLock:
    def test_a_held_lock_is_alive_and_a_released_one_is_gone(self, channel: Channel) -> None:
        """Alive while held; a clean stop removes the lock file and reads as gone."""
        lock = channel.server().acquire()
        assert channel.server_alive(lock.id)
        assert (channel.path / ".servers" / f"{lock.id}.lock").exists()
        lock.release()
        assert not channel.server_alive(lock.id)
        assert not (channel.path / ".servers" / f"{lock.id}.lock").exists()

    def test_a_lock_held_here_is_alive_only_in_its_own_channel(
        self, channel: Channel, tmp_path: Path
    ) -> None:
        """A lock this process holds reads alive without a probe, but only through the
        channel it was taken in: another home's channel has no such lock, so it reads gone."""
        with channel.server() as lock, Channel.open(tmp_path / "other") as other:
            assert channel.server_alive(lock.id)
            assert not other.server_alive(lock.id)
        assert not channel.server_alive(lock.id)

    def test_a_killed_asker_makes_commands_stale_and_facts_handed_over(self, home: Path) -> None:
        """SIGKILL leaves no chance to clean up: the kernel's release of the lock is enough."""
        child = Asker(home, "command", "fact", "question")
        cmd, fct, qst = child.filed()
        sid = child.server_id
        with Channel.open(home) as channel:
            assert channel.server_alive(sid)
            assert {channel.status(i).state for i in (cmd, fct, qst)} == {State.FILED}
            child.kill()  # SIGKILL
            assert not channel.server_alive(sid)
            assert channel.status(cmd).state is State.STALE
            assert channel.status(qst).state is State.STALE
            assert channel.status(fct).state is State.HANDED_OVER
            assert (channel.path / ".servers" / f"{sid}.lock").exists()  # not cleaned: killed

    def test_a_signal_during_the_own_lock_check_is_never_lost(self, home: Path) -> None:
        """A signal's exception (Ctrl-C's KeyboardInterrupt) raised while this process checks
        its own lock reaches the caller, every time: none is raised where Python can only
        print it as "Exception ignored" and drop it (an asker went on waiting after a Ctrl-C
        that came in that instant). Another thread signals the main thread as fast as it
        can while the check runs in a loop, for half a second."""
        done = subprocess.run(
            [sys.executable, "-c", SIGNALLED_CHECKS, str(home)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        raised, swallowed = map(int, done.stdout.split())
        assert raised > 0 and swallowed == 0, (raised, swallowed, done.stderr)

    def test_a_live_pid_does_not_make_a_dead_server_alive(self, channel: Channel) -> None:
        """A request naming a PID that is alive (ours: as if reused) but whose lock is free
        is stale: liveness is the lock, never kill(pid, 0)."""
        lock = channel.server().acquire()
        req = command(lock)
        lock.release()
        reused = req._replace(server=req.server._replace(pid=os.getpid()))
        channel.file(reused)
        status = channel.status(reused.id)
        assert status.state is State.STALE and status.server_alive is False

    def test_a_lock_swept_while_being_taken_is_taken_again(self, channel: Channel) -> None:
        """If a sweeper unlinks the lock file between its creation and the flock, the server
        notices it holds an unlinked inode and takes a fresh one."""
        lock = ServerLock(channel.servers_fd)
        name = f"{lock.id}.lock"
        (channel.path / ".servers" / name).touch()
        stale_fd = os.open(channel.path / ".servers" / name, os.O_RDONLY)
        os.unlink(channel.path / ".servers" / name)  # what a sweeper does to a free lock
        lock.acquire()
        try:
            assert channel.server_alive(lock.id)
        finally:
            os.close(stale_fd)
            lock.release()

    def test_another_process_sees_our_lock(self, channel: Channel) -> None:
        """Liveness is visible across processes: a child asks about our held lock."""
        with channel.server() as lock:
            code = (
                "import sys; from pending import Channel;"
                f"c = Channel.open({str(channel.home)!r});"
                f"print(c.server_alive({lock.id!r}))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            assert out.stdout.strip() == "True"
        assert not channel.server_alive(lock.id)


class TestRequestsOfAStoppedServer:
    def test_clean_stop(self, channel: Channel) -> None:
        """A clean stop: its command is stale at once, its fact handed over, its question stale."""
        with channel.server() as lock:
            made = [command(lock), fact(lock), question(lock)]
            for req in made:
                channel.file(req)
        states = [channel.status(r.id).state for r in made]
        assert states == [State.STALE, State.HANDED_OVER, State.STALE]


_FORKING_ASKER = r"""
import os, sys
from pending import Channel
channel = Channel.open(sys.argv[1])
lock = channel.server().acquire()
child = os.fork()
if child == 0:  # a worker that outlives its parent: blocks until the test closes stdin
    os.write(1, f"child {os.getpid()}\n".encode())  # one write: lines never interleave
    os.read(0, 1)
    os._exit(0)
os.write(1, f"lock {lock.id} {child}\n".encode())
os.read(0, 1)
"""


class TestForkedChildren:
    def test_a_forked_child_does_not_keep_a_killed_asker_alive(self, home: Path) -> None:
        """An asker forks a worker and is then SIGKILLed: its lock is free at once although
        the worker still runs (the child closed its copy of the descriptor)."""
        Channel.open(home).close()
        asker = subprocess.Popen(
            [sys.executable, "-c", _FORKING_ASKER, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert asker.stdout is not None and asker.stdin is not None
        lines = [asker.stdout.readline().split() for _ in range(2)]
        words = dict((line[0], line[1:]) for line in lines)
        lock_id, child_pid = words["lock"][0], int(words["child"][0])
        with Channel.open(home) as channel:
            assert channel.server_alive(lock_id)
            asker.kill()
            asker.wait(10)
            assert os.path.exists(f"/proc/{child_pid}")  # the worker lives on
            assert not channel.server_alive(lock_id)
        asker.stdin.close()  # the worker may go now
