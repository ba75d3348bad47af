"""A fuzzed field anywhere in a request, answer or outcome never gets a traceback out of the
commands a person or a script runs first: `wisp pending`, `wisp doctor`, `wisp pending watch`,
and a new `wisp approvals request`. Each runs as a real process on a channel holding every
good fixture plus one fuzzed file (the edits of tests/test_fuzz_records.py).

Examples: ``WISP_CLI_FUZZ_EXAMPLES`` (default 6: each starts four processes).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

from helpers import read_line, wisp_command
from hypothesis import HealthCheck, given, settings
from strategies import Edit
from test_fuzz_records import GOOD, cases, edited, encode

EXAMPLES = int(os.environ.get("WISP_CLI_FUZZ_EXAMPLES", "6"))
# Exit codes these commands document (docs/cli.md): 0 ok, 1 refused or skipped entries shown,
# 2 error, 124 an asking command's own time-out. A traceback exits 1 too: stderr tells.
DOCUMENTED = {0, 1, 2, 124}


def _channel_with(home: Path, target: Path, edit: Edit) -> None:
    pending = home / "pending"
    pending.mkdir(parents=True, mode=0o700)
    os.chmod(home, 0o700)
    for path in GOOD:
        shutil.copyfile(path, pending / path.name)
        os.chmod(pending / path.name, 0o600)
    tree = json.loads(target.read_bytes())
    (pending / target.name).write_bytes(encode(edited(tree, edit)))


def _wisp(home: Path, *args: str) -> subprocess.Popen[str]:
    """`wisp ARGS` started on *home*, its output captured (read by :func:`_ended`)."""
    env = {**os.environ, "WISP_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.Popen(
        wisp_command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _ended(process: subprocess.Popen[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    out, err = process.communicate(timeout=timeout)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _clean(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert "Traceback" not in result.stderr, f"{what}:\n{result.stderr}"
    assert result.returncode in DOCUMENTED, f"{what} exited {result.returncode}: {result.stderr}"


class TestHostileFilesFromTheCommandLine:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(case=cases())
    def test_no_command_ends_in_a_traceback(self, case: tuple[Path, Edit]) -> None:
        """`wisp pending`, `wisp doctor`, `wisp pending watch` and a new `wisp approvals
        request` each end (or start) with a documented exit code and no traceback."""
        import tempfile

        target, edit = case
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            _channel_with(home, target, edit)
            # All at once (each is its own process on the same junk): one example's wall
            # time is its slowest command's, not the sum.
            started = [
                _wisp(home, "pending", "--json"),
                _wisp(home, "pending", "--all"),
                _wisp(home, "doctor", "--json"),
                _wisp(home, "approvals", "request", "--timeout", "0.5", "--json", "--", "true"),
            ]
            watch = subprocess.Popen(
                wisp_command("pending", "watch", "--json"),
                env={**os.environ, "WISP_HOME": str(home)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
            try:
                listed, listed_all, doctor, asked = (_ended(p) for p in started)
                _clean(listed, "wisp pending --json")
                _clean(listed_all, "wisp pending --all")
                _clean(doctor, "wisp doctor --json")
                _clean(asked, "wisp approvals request")
                assert asked.returncode == 124, asked.stderr  # nobody answered: its time-out
                said = read_line(watch.stderr, timeout=30)
                assert "watching" in said, said  # it starts, junk and all
            finally:
                for process in started:
                    process.kill()
                    process.communicate(timeout=30)
                watch.send_signal(signal.SIGINT)
                _, err = watch.communicate(timeout=30)
            assert b"Traceback" not in err, err.decode()
            assert watch.returncode in DOCUMENTED | {-signal.SIGINT}, err.decode()
