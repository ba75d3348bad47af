"""What the e2e tests share: a test's places and `wisp` driven as a person drives it (its
answers from a real pseudo-terminal). Only the `wisp` command is used, never wisp's modules:
this tier tests what is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harnesses
import pexpect
import pytest

WISP = Path(sys.executable).parent / "wisp"
WAIT_S = 60.0


@dataclass
class World:
    """One test's places: the harness's HOME, the project it works in, wisp's home."""

    home: Path
    cwd: Path
    wisp_home: Path

    def wisp(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`wisp ARGS` without a terminal (listing, not answering)."""
        return subprocess.run(
            [str(WISP), *args],
            env={**os.environ, "WISP_HOME": str(self.wisp_home)},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def answer(self, *args: str) -> tuple[int, str]:
        """`wisp ARGS` with a pseudo-terminal as its stdin and stdout, as a person answers."""
        child = pexpect.spawn(
            str(WISP),
            list(args),
            env={**os.environ, "WISP_HOME": str(self.wisp_home)},
            encoding="utf-8",
            timeout=WAIT_S,
            dimensions=(40, 200),
        )
        child.expect(pexpect.EOF)
        child.close()
        return child.exitstatus, (child.before or "").replace("\r\n", "\n")

    def requests(self) -> list[dict[str, Any]]:
        """Every request in the channel, ended ones too (`wisp pending --all --json`)."""
        done = self.wisp("pending", "--all", "--json", "--limit", "0")
        assert done.returncode == 0, done.stderr
        listed: list[dict[str, Any]] = json.loads(done.stdout)
        return listed

    def filed(self, timeout: float = WAIT_S) -> dict[str, Any]:
        """The first request waiting for an answer, once one is (bounded)."""
        return wait_for(
            lambda: next((r for r in self.requests() if r["state"] == "filed"), None),
            timeout,
            "a request to be filed",
        )


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """*condition*'s first truthy value, polled within a bounded deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def installed(name: str) -> Path:
    """Harness *name*'s binary, or a skip saying why it is not there."""
    found = harnesses.binary(name)
    if isinstance(found, str):
        pytest.skip(found)
    return found


def wisp_hooks(world: World, wait: int = 60) -> dict[str, object]:
    """The hooks block `wisp hook claude-code --print-settings` prints (unattended: a
    timeout denies)."""
    printed = world.wisp(
        "hook", "claude-code", "--print-settings", "--wait", str(wait), "--on-timeout", "deny"
    )
    assert printed.returncode == 0, printed.stderr
    hooks: dict[str, object] = json.loads(printed.stdout)["hooks"]
    return hooks
