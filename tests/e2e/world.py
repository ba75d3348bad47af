"""What the e2e tests share: a test's places and `wisp` driven as a person drives it (its
answers from a real pseudo-terminal). Only the `wisp` command is used, never wisp's modules:
this tier tests what is installed."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harnesses
import pexpect
import pytest
import wispinstall

# This clone's wisp installed as a person installs it, out of the tree (conftest.py builds it).
WISP = wispinstall.WISP
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


def next_filed(world: World, seen: set[str]) -> dict[str, Any]:
    """The next request waiting that is not one of *seen*, once there is one (bounded)."""
    found: dict[str, Any] = wait_for(
        lambda: next(
            (r for r in world.requests() if r["state"] == "filed" and r["id"] not in seen),
            None,
        ),
        WAIT_S,
        "the next call to be filed",
    )
    return found


def answer_next(world: World, answered: set[str], *args: str) -> dict[str, Any]:
    """Answer, from a terminal (`wisp approvals|tools approve|deny ID ARGS…`, as its kind
    is), the next request filed that is not one of *answered* (approve, by default)."""
    request = next_filed(world, answered)
    verb, *rest = args or ("approve",)
    group = "tools" if request["kind"] == "tool" else "approvals"
    code, said = world.answer(group, verb, request["id"], *rest)
    assert code == 0, said
    answered.add(request["id"])
    return request


def installed(which: str | harnesses.Pin) -> Path:
    """The binary of *which* (a pin, or a harness's name: its floor), or a skip saying why it
    is not there."""
    found = harnesses.binary(which)
    if isinstance(found, str):
        pytest.skip(found)
    return found


def as_user(
    world: World, which: str | harnesses.Pin, *args: str, wisp: Path = WISP
) -> subprocess.CompletedProcess[str]:
    """`wisp ARGS` as the person runs it (no terminal; *wisp*: the tier's own by default): in
    the world's home and project, the harness (*which*'s version) first on PATH."""
    pin = harnesses.pins()[which] if isinstance(which, str) else which
    where = installed(pin).parent
    env = harnesses.base_env(world.home, world.wisp_home) | {
        "CODEX_HOME": str(world.home / ".codex"),
        "PATH": f"{where}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    return subprocess.run(
        [str(wisp), *args],
        env=env,
        cwd=world.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def set_up(
    world: World, which: str | harnesses.Pin, *options: str
) -> subprocess.CompletedProcess[str]:
    """`wisp agents setup HARNESS [OPTIONS]` as the person runs it (:func:`as_user`: setup
    reads the harness's version; Codex's trust is asked of it). Asserts it succeeded, trust
    and all."""
    name = which if isinstance(which, str) else which.name
    done = as_user(world, which, "agents", "setup", name, *options)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "was not written" not in done.stdout, done.stdout  # Codex's trust
    return done
