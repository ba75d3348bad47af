"""What the `wisp` command promises at its edges: JSON no terminal is fooled by, a closed pipe
is no error, a resource limit is said as one, a signal withdraws as Ctrl-C does, and a bad
option is answered in wisp's words. Each in a real process."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from helpers import (
    AskingCommand,
    audit_records,
    command,
    run_wisp,
    server_pid,
    wait_until,
    wisp_command,
)

from pending import Channel, Outcome, ServerLock, State

# A command that hides a C1 control, a right-to-left override, an isolate and a line separator.
TRICKY = "make \x85test\u202e\u2066x\u2028y\x7f"


class TestJsonEscapes:
    def test_no_c1_bidi_or_separator_reaches_stdout_raw(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """`wisp pending --json` writes C1 controls, bidi characters and U+2028 as \\u
        escapes: the bytes on stdout carry none of them, and the JSON still says them."""
        request = command(server, text=TRICKY)
        channel.file(request)
        result = run_wisp("pending", "--json")
        assert result.returncode == 0, result.stderr
        for char in "\x85\u202e\u2066\u2028\x7f":
            assert char not in result.stdout
        assert "\\u0085" in result.stdout and "\\u202e" in result.stdout
        (listed,) = json.loads(result.stdout)
        assert TRICKY in json.dumps(listed, ensure_ascii=False)

    def test_del_in_otherwise_ascii_json_is_escaped(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A DEL in JSON that is otherwise all ASCII (the text the quick path passes without
        the pattern's scan) is still written as \\u007f, and text past ASCII that fools no
        terminal (an accent) stays raw."""
        channel.file(command(server, text="make \x7fclean"))
        result = run_wisp("pending", "--json")
        assert result.returncode == 0, result.stderr
        assert "\x7f" not in result.stdout and "\\u007f" in result.stdout
        assert [s["body"] for s in json.loads(result.stdout)] == ["make \x7fclean"]
        channel.file(command(server, text="make café"))
        result = run_wisp("pending", "--json")
        assert "café" in result.stdout and "\x7f" not in result.stdout


def _limited(files: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    return limit


class TestResourceLimits:
    def test_too_few_open_files_is_said_as_a_limit(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Under `ulimit -n` 7 to 12, `wisp pending`, `wisp doctor` and `wisp approvals deny`
        end without a traceback and never blame a file ("cannot be read safely", "remove the
        file") nor the asker (its request never swept stale); where the limit stops one, it
        exits 2 naming the limit and `ulimit -n`."""
        request = command(server)
        channel.file(request)
        said_limit = False
        for files in range(7, 13):
            for args in (("pending", "--all"), ("doctor",), ("approvals", "deny", request.id)):
                code, said = _in_terminal_limited(files, *args)
                what = f"wisp {' '.join(args)} at ulimit -n {files}: {said}"
                assert "Traceback" not in said, what
                assert "cannot be read safely" not in said, what
                assert "remove the file" not in said, what
                assert code in (0, 1, 2), what
                if "ulimit -n" in said:
                    assert code == 2, what
                    said_limit = True
        assert said_limit
        # Its asker (this process) lives throughout: no limit may pass for its death.
        status = channel.status(request.id)
        assert status.state is not State.STALE and status.outcome is not Outcome.STALE, status

    def test_an_asker_short_of_files_never_leaves_its_request_waiting(self, home: Path) -> None:
        """Under `ulimit -n` 8 to 16, `wisp approvals request` ends without a traceback:
        refused before filing, or (its watch starting once the request is out) the request
        withdrawn and exit 2 naming the limit, or, with files enough, timed out (124). A
        request it filed is never left waiting for an asker that is gone."""
        said_limit = False
        for files in range(8, 17):
            done = run_wisp(
                "approvals",
                "request",
                "--timeout",
                "1",
                "--",
                f"make {files}",
                preexec_fn=_limited(files),
            )
            said = done.stdout + done.stderr
            what = f"wisp approvals request at ulimit -n {files}: {said}"
            assert "Traceback" not in said, what
            assert done.returncode in (2, 124), what
            if "was filed, but its answer cannot be watched" in said:
                assert done.returncode == 2 and "so it was withdrawn" in said, what
            said_limit = said_limit or "ulimit -n" in said
        assert said_limit
        with Channel.open(home) as channel:
            waiting = [s for s in channel.listing().statuses if s.state is State.FILED]
        assert waiting == []


def _in_terminal_limited(files: int, *args: str) -> tuple[int, str]:
    """`wisp ARGS` in a real terminal (answers are taken only from one), at `ulimit -n`
    *files*: its exit code and what it printed."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "wisp", *args],
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 250),
        preexec_fn=_limited(files),
    )
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, " ".join((child.before or "").split())


class TestClosedPipe:
    @pytest.mark.parametrize("args", [("pending", "--all"), ("log",), ("doctor",), ("--version",)])
    def test_a_reader_gone_ends_it_quietly(
        self, channel: Channel, server: ServerLock, args: tuple[str, ...]
    ) -> None:
        """Written into a pipe nobody reads any more (`wisp pending | head -1`), a command
        exits 0 and says nothing, as other Unix tools do."""
        channel.file(command(server))
        run_wisp("approvals", "request", "--timeout", "0.1", "--", "make test")  # a log to read
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first line is written
        try:
            result = subprocess.run(
                wisp_command(*args),
                stdout=write_end,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
            )
        finally:
            os.close(write_end)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr


class TestTheProcessEnd:
    # `wisp` as its console script runs it, with an exit handler and a thread that is no
    # daemon and is still at work when the command returns: both must have done their work
    # when the process is gone, as the interpreter's own ending would have them.
    PROBE = """\
import atexit, os, sys, threading
from pathlib import Path
where = Path(sys.argv[1])
atexit.register(lambda: (where / "atexit").write_text("ran"))
late = threading.Event()
def work():
    late.wait(0.3)  # still at work once the command has returned
    (where / "thread").write_text("done")
threading.Thread(target=work).start()
sys.argv = ["wisp", *sys.argv[2:]]
from wisp.__main__ import run
run()
"""

    @pytest.mark.parametrize(
        ("args", "status"),
        [(("--version",), 0), (("approvals", "approve", "0123456789abcdef"), 2)],
        ids=["version", "refused"],
    )
    def test_threads_and_exit_handlers_finish_and_the_status_is_the_commands(
        self, tmp_path: Path, args: tuple[str, ...], status: int
    ) -> None:
        """The `wisp` program ends without the interpreter's teardown (wisp.__main__.run), but
        joins the threads that are no daemons, runs the exit handlers and flushes its
        output first; its status is the command's (2: an answer refused off a terminal)."""
        done = subprocess.run(
            [sys.executable, "-c", self.PROBE, str(tmp_path), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == status, done.stderr
        assert (tmp_path / "thread").read_text() == "done"
        assert (tmp_path / "atexit").read_text() == "ran"
        if status == 0:
            assert done.stdout.startswith("wisp "), done.stdout
        else:
            assert "only from a terminal" in done.stderr, done.stderr

    @pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
    def test_a_closed_standard_stream_changes_no_status(self, closed: int) -> None:
        """Started with standard output or error closed (`>&-`, cron, a daemon), `wisp` writes
        what would go there nowhere, with no traceback, and the command's status stands (0 for
        the version; a refusal's 2)."""
        for args, status in ((("--version",), 0), (("approvals", "approve", "zz"), 2)):
            done = subprocess.run(
                [sys.executable, "-m", "wisp", *args],  # cold: as a person's shell starts it
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
                preexec_fn=lambda: os.close(closed),
            )
            assert done.returncode == status, done.stderr
            if closed == 2:
                assert done.stdout.startswith("wisp ") if status == 0 else done.stdout == ""
            else:
                assert ("only from a terminal" in done.stderr) if status else done.stderr == ""
            assert "Traceback" not in done.stderr


class TestSignalsWithdraw:
    def test_only_the_main_thread_takes_an_ending_signal(self, home: Path) -> None:
        """A waiting asker's other threads (its deadlines and its watcher's liveness timer;
        the command's wait reads the events itself) block SIGINT, SIGTERM and SIGHUP, so the
        kernel gives Ctrl-C to the main thread, where Python runs the handler: taken by
        another thread, it would not wake the main one from its wait (the request's whole
        timeout)."""
        asking = AskingCommand("approvals", "request", "--", "make", "deploy")
        try:
            pid = server_pid(home, asking.id)
            ending = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

            def masks() -> dict[int, set[int]]:
                found = {}
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/status") as status:
                        blocked = next(line for line in status if line.startswith("SigBlk:"))
                    bits = int(blocked.split()[1], 16)
                    found[int(tid)] = {s for s in ending if bits & (1 << (s - 1))}
                return found

            # Its watch starts once the request is filed, and the main thread blocks them
            # only for the instant it starts a thread (start_thread): read once it waits,
            # with its two others (deadlines, the watcher's liveness timer) started.
            taken = wait_until(
                lambda: (found := masks())[pid] == set() and len(found) >= 3 and found,
                what="the asker waiting, its threads started",
            )
            assert taken.pop(pid) == set()  # the main thread takes them
            assert all(blocked == ending for blocked in taken.values()), taken
        finally:
            asking.process.kill()
            asking.result()

    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
    @pytest.mark.parametrize(
        "args",
        [
            ("approvals", "request", "--timeout", "60", "--", "make deploy"),
            ("questions", "ask", "--timeout", "60", "Which environment?"),
        ],
    )
    def test_a_signal_withdraws_as_ctrl_c_does(
        self, home: Path, signum: signal.Signals, args: tuple[str, ...]
    ) -> None:
        """SIGTERM or SIGHUP on an asking command (`kill`, `timeout`, a closed terminal)
        withdraws its request, audited as a withdrawal, and exits 1 saying so: never left
        `stale` behind a 143 or a 129."""
        asking = AskingCommand(*args)
        asking.process.send_signal(signum)
        code, out, err = asking.result()
        said = out + err
        assert code == 1, said
        assert f"withdrawn on {signum.name}" in said
        with Channel.open(home) as channel:
            status = channel.status(asking.id)
        assert status.state is State.SETTLED and status.outcome is Outcome.WITHDRAWN
        assert "approval.withdrawn" in [
            r["event"] for r in audit_records(home) if r.get("id") == asking.id
        ]


class TestOptionWords:
    @pytest.mark.parametrize(
        ("args", "says"),
        [
            (("pending", "--limit", "-1"), "it takes a whole number of requests, 0 (all) or more"),
            (("approvals", "pending", "--limit", "many"), "0 (all) or more, not 'many'"),
            (
                ("approvals", "request", "--timeout", "abc", "--", "ls"),
                "it takes seconds from 0 (waits until answered) to 2592000 (30 days), not 'abc'",
            ),
            (("pending", "--kind", "bogus"), "'bogus' is not one of 'command', 'fact', 'question'"),
            (("log", "--kind", "bogus"), "'bogus' is not one of 'command', 'fact', 'question'"),
            (("notify", "--route", "bogus", "hi"), "'bogus' is not one of 'host', 'terminal'"),
        ],
    )
    def test_a_bad_value_is_refused_in_wisps_words(
        self, home: Path, args: tuple[str, ...], says: str
    ) -> None:
        """A value an option does not take is a usage error (exit 2, nothing done) that says
        the range or the choices in wisp's words, never pydantic's."""
        result = run_wisp(*args)
        said = " ".join(result.stderr.split())
        assert result.returncode == 2, said
        assert says in said
        assert "Value error" not in said and "Input should" not in said
        assert not (home / "pending").exists() or not any((home / "pending").glob("*.json"))
