"""The warm path the MCP tests start servers by (:mod:`zygote`): a warm server is a process of
its own whose status, signals and end are what a cold `python -m wisp mcp` would have."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import running, wait_until
from mcp_harness import BOUND_S, RawWire, recorder, server_env, server_pid, wisp_mcp_command

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
        assert pid != raw.process.pid
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
