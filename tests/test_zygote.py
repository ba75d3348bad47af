"""The warm path the tests start `wisp` by (:mod:`zygote`): a warm command or MCP server is a
process of its own whose streams, terminal, status, signals and end are what a cold
`python -m wisp` would have; what a fork cannot be runs cold, in place."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zygote
from helpers import AskingCommand, pty_run, read_line, running, server_pid, wait_until
from mcp_harness import BOUND_S, RawWire, recorder, server_env, wisp_mcp_command

from pending import Channel, Outcome, State

FILE = '{"command":"make deploy","wait_seconds":0}'


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return recorder(tmp_path)[0]


def filed(raw: RawWire, home: Path) -> tuple[str, int]:
    """File a command through *raw*: its request id and the pid of the server that filed it."""
    result = raw.call("request_approval", FILE)["result"]
    request_id = result["structuredContent"]["id"]
    return request_id, server_pid(home, request_id)


class TestWarmServer:
    def test_the_server_is_a_process_of_its_own(self, home: Path, bin_dir: Path) -> None:
        """The pid the request records is the server's, not the launcher's; a SIGKILL to it
        is the launcher's status (-9), as a cold server's would be."""
        raw = RawWire(home, bin_dir)
        request_id, pid = filed(raw, home)
        assert pid != raw.process.pid, zygote.why_cold()
        os.kill(pid, signal.SIGKILL)
        assert raw.process.wait(timeout=BOUND_S) == -signal.SIGKILL
        with Channel.open(home) as channel:
            assert channel.status(request_id).state is State.STALE

    @pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
    def test_a_signal_to_the_launcher_reaches_the_server(
        self, home: Path, bin_dir: Path, how: signal.Signals
    ) -> None:
        """SIGTERM or SIGINT to what the test started stops the server as it would stop a cold
        one: its command withdrawn, exit 0."""
        raw = RawWire(home, bin_dir)
        request_id, _ = filed(raw, home)
        raw.process.send_signal(how)
        assert raw.process.wait(timeout=BOUND_S) == 0, raw.process.stderr
        with Channel.open(home) as channel:
            ended = channel.status(request_id)
            assert ended.settled is not None and ended.settled.outcome is Outcome.WITHDRAWN

    def test_a_killed_launcher_takes_its_server(self, home: Path, bin_dir: Path) -> None:
        """The launcher SIGKILLed (no chance to forward): the zygote kills its server."""
        raw = RawWire(home, bin_dir)
        _, pid = filed(raw, home)
        raw.process.kill()
        raw.process.wait(timeout=BOUND_S)
        wait_until(lambda: not running(pid), what="the server to die with its launcher")

    def test_exit_status_and_output_are_the_commands(self, home: Path, bin_dir: Path) -> None:
        """`wisp mcp --help` exits 0 with its usage on stdout; a word wisp does not know exits
        2 saying so on stderr: the CLI runs as `python -m wisp` runs it."""
        env = server_env(home, bin_dir)
        helped = subprocess.run(
            [*wisp_mcp_command(), "--help"], capture_output=True, env=env, timeout=BOUND_S
        )
        assert helped.returncode == 0 and helped.stdout.startswith(b"Usage: wisp mcp")
        command = wisp_mcp_command()[:-1]
        wrong = subprocess.run([*command, "nosuch"], capture_output=True, env=env, timeout=BOUND_S)
        assert wrong.returncode == 2 and b"No such command 'nosuch'" in wrong.stderr


def proc_stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command's name: state, ppid, pgrp, session, tty_nr,
    tpgid (the terminal's foreground group), ..."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()


def asked_in_terminal(cold: bool = False, **spawn: Any) -> tuple[Any, str, int]:
    """`wisp approvals request -- make deploy` on a pseudo-terminal (warm unless *cold*): the
    pexpect child, the request's ID and the pid its record names, once its prompt is out."""
    import pexpect

    argv = [sys.executable, "-m", "wisp"] if cold else zygote.command()
    child = pexpect.spawn(
        argv[0],
        [*argv[1:], "approvals", "request", "--", "make", "deploy"],
        encoding="utf-8",
        timeout=BOUND_S,
        **spawn,
    )
    child.expect(r"wisp approvals approve ([0-9a-f]+)")
    request_id = child.match.group(1)
    return child, request_id, server_pid(Path(os.environ["WISP_HOME"]), request_id)


def filed_id(asking: subprocess.Popen[Any]) -> str:
    """The ID a `wisp approvals request` names on its stderr once it has filed (bounded)."""
    assert asking.stderr is not None
    said = read_line(asking.stderr)
    while "wisp approvals approve" not in said:
        said = read_line(asking.stderr)
    return said.split("wisp approvals approve ")[1].split()[0]


class TestWarmCommand:
    def test_a_command_is_a_process_of_its_own(self, home: Path) -> None:
        """A warm `wisp approvals request` on pipes records its own pid, not the launcher's;
        SIGINT to the launcher reaches it, and it withdraws and exits 1 as a cold one does."""
        asking = AskingCommand("approvals", "request", "--", "make", "deploy")
        pid = server_pid(home, asking.id)
        assert pid != asking.process.pid and running(pid), zygote.why_cold()
        asking.process.send_signal(signal.SIGINT)
        code, out, _ = asking.result()
        assert code == 1 and out.startswith("withdrawn")
        with Channel.open(home) as channel:
            ended = channel.status(asking.id).settled
            assert ended is not None and ended.outcome is Outcome.WITHDRAWN

    @pytest.mark.parametrize("cold", [False, True], ids=["warm", "cold"])
    def test_the_terminal_is_handed_over(self, home: Path, cold: bool) -> None:
        """Spawned on a pty, a warm command leads a session of its own with the pty as its
        controlling terminal, in its foreground, as a cold one does; Ctrl-C typed there
        reaches it (the kernel's signal, not the launcher's), and both end alike."""
        import pexpect

        child, request_id, pid = asked_in_terminal(cold=cold)
        try:
            assert (pid == child.pid) is cold, zygote.why_cold()
            _state, _ppid, pgrp, session, tty_nr, tpgid = proc_stat(pid)[:6]
            assert (int(pgrp), int(session), int(tpgid)) == (pid, pid, pid)
            terminal = os.readlink(f"/proc/{pid}/fd/0")  # the pty's slave side, /dev/pts/N
            assert int(tty_nr) == os.stat(terminal).st_rdev
            if not cold:  # the launcher let go of it
                assert proc_stat(child.pid)[4] == "0"
            child.sendintr()
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 1, child.before
        assert "withdrawn" in (child.before or "")
        with Channel.open(home) as channel:
            ended = channel.status(request_id).settled
            assert ended is not None and ended.outcome is Outcome.WITHDRAWN

    def test_a_hang_up_reaches_the_command(self, home: Path) -> None:
        """The terminal closed under a warm command: the hang-up is the command's, which
        withdraws its request, as a cold command's would (its terminal is its own)."""
        child, request_id, pid = asked_in_terminal()
        # The pty's master side closed, and only that: the kernel hangs up. (pexpect's
        # close(force=False) then signals the command itself if it has not ended within
        # 0.1 s, and raises if it outlives that: seen failing a loaded fresh clone's run.)
        child.ptyproc.fileobj.close()
        wait_until(lambda: not running(pid), what="the command to end on the hang-up")
        child.ptyproc.closed = True  # ended by the hang-up: nothing left for pexpect to close
        with Channel.open(home) as channel:
            ended = channel.status(request_id).settled
            assert ended is not None and ended.outcome is Outcome.WITHDRAWN

    @pytest.mark.parametrize(
        "differs",
        ["hash seed", "file limit", "ignored SIGINT", "background of a terminal"],
    )
    def test_what_a_fork_cannot_be_runs_cold_in_place(self, home: Path, differs: str) -> None:
        """A launcher that differs from the zygote in what a fork cannot take on — the
        interpreter's start-up environment, a resource limit, a signal ignored from the start,
        a terminal whose session it does not lead — becomes `python -m wisp` itself: the
        request names the launcher's own pid."""
        env = dict(os.environ)
        before: Any = None
        argv = zygote.command("approvals", "request", "--", "make", "deploy")
        if differs == "hash seed":
            env["PYTHONHASHSEED"] = "7"
        elif differs == "file limit":
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            low = min(soft, 200)
            if low == soft:
                low -= 1

            def before() -> None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
        elif differs == "ignored SIGINT":

            def before() -> None:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        else:
            argv = [sys.executable, str(Path(__file__).parent / "ctty.py"), "--", *argv]
        asking = subprocess.Popen(
            argv, env=env, preexec_fn=before, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            pid = server_pid(home, filed_id(asking))
            if differs == "background of a terminal":  # ctty.py's command is its child
                assert proc_stat(pid)[1] != str(asking.pid)
                assert proc_stat(int(proc_stat(pid)[1]))[1] == str(asking.pid)
            else:
                assert pid == asking.pid
        finally:
            asking.kill()
            asking.wait(timeout=BOUND_S)

    @pytest.mark.parametrize("cold", [False, True], ids=["warm", "cold"])
    def test_a_terminal_of_its_own_as_ctty_gives_it(self, home: Path, cold: bool) -> None:
        """With a terminal of its own (as `wisp tui` starts its relay; tests/ctty.py when
        cold): the command runs in a process group of its own in the background of a fresh
        controlling terminal whose session its parent leads; SIGINT to what the test started
        reaches it, and both end alike (withdrawn, exit 1)."""
        args = ("approvals", "request", "--", "make", "deploy")
        ctty = [sys.executable, str(Path(__file__).parent / "ctty.py"), "--"]
        cold_argv = [*ctty, sys.executable, "-m", "wisp", *args]
        started = subprocess.Popen(
            cold_argv if cold else zygote.command(*args, own_terminal=True),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        pid = server_pid(home, filed_id(started))
        _state, ppid, pgrp, session, tty_nr, tpgid = proc_stat(pid)[:6]
        assert (int(pgrp), int(session), int(tpgid)) == (pid, int(ppid), int(ppid))
        assert int(tty_nr) != 0 and pid != started.pid
        started.send_signal(signal.SIGINT)
        out, _ = started.communicate(timeout=BOUND_S)
        assert started.returncode == 1 and out.startswith("withdrawn")


def open_ptys() -> int:
    """How many pseudo-terminal masters this process holds open."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") in ("/dev/ptmx", "/dev/pts/ptmx"):
                held += 1
        except OSError:
            continue
    return held


class TestPtyRun:
    def test_a_command_past_its_timeout_gives_its_pty_back(self) -> None:
        """Control: a command that ends gives its pseudo-terminal back. One still running at
        the timeout fails the call (pexpect's TIMEOUT) and is ended, its pty closed at once,
        not held by the failed test's traceback to the run's end (a loaded run's workers ran
        the machine out of ptys so)."""
        import pexpect

        held = open_ptys()
        assert pty_run("/bin/echo", ["hi"])[1] == "hi\n"
        assert open_ptys() == held
        with pytest.raises(pexpect.TIMEOUT) as failed:  # kept, as pytest keeps a failure's
            pty_run("/bin/sleep", ["30"], timeout=0.5)
        assert open_ptys() == held, failed.traceback
