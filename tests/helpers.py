"""Builders and waiting helpers shared by the tests (no sleeping as synchronisation)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pending import (
    Channel,
    CommandBinding,
    FactBinding,
    Kind,
    QuestionBinding,
    Request,
    ServerLock,
    make_request,
)
from pending.testing import FakeClock

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def command(lock: ServerLock, text: str = "make deploy", **kw: Any) -> Request:
    return make_request(
        kind=Kind.COMMAND,
        binding=CommandBinding(command=text, cwd="/srv/shop", thread="c1"),
        title="wisp: run a command?",
        body=text,
        server=lock.record(client="test", thread="c1", entry_point="approvals"),
        **kw,
    )


def fact(lock: ServerLock, value: str = "BLUE HERON", **kw: Any) -> Request:
    return make_request(
        kind=Kind.FACT,
        binding=FactBinding(
            fact_id="c3",
            subject="release",
            name="codename",
            value=value,
            source="chat",
            proposed_by="model",
        ),
        title="wisp: keep as a permanent fact?",
        body=f"release codename = {value}",
        server=lock.record(client="test", thread="c1", entry_point="facts"),
        **kw,
    )


def question(lock: ServerLock, options: tuple[str, ...] | None = None, **kw: Any) -> Request:
    return make_request(
        kind=Kind.QUESTION,
        binding=QuestionBinding(
            question="Which environment?", options=options, free_text=options is None
        ),
        title="wisp: a question for you",
        body="Which environment?",
        server=lock.record(client="test", thread="c1", entry_point="questions"),
        **kw,
    )


BUILDERS: dict[Kind, Callable[..., Request]] = {
    Kind.COMMAND: command,
    Kind.FACT: fact,
    Kind.QUESTION: question,
}


def wait_until(condition: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll *condition* until truthy, within a bounded deadline (tests only)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.005)


def install_fixture(channel: Channel, source: Path) -> Path:
    """Copy a fixture file into the channel as a writer would leave it (ours, 0600)."""
    target = channel.path / source.name
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)
    return target


def fake_clock_channel(home: Path) -> tuple[Channel, FakeClock]:
    clock = FakeClock()
    return Channel.open(home, clock=clock), clock


def run_wisp(
    *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    """Run the `wisp` command in a real process (as installed, via this interpreter)."""
    return subprocess.run(
        [sys.executable, "-m", "wisp", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        **kw,
    )


def race_worker(home: str, index: int, ids: list[str], barrier: Any, results: Any) -> None:
    """One of the racing answerers (run in its own process): answer every ID, in step."""
    from pending import DECISIONS, AlreadyAnswered

    decision = DECISIONS[Kind.COMMAND][index % len(DECISIONS[Kind.COMMAND])]
    with Channel.open(home) as channel:
        for request_id in ids:
            barrier.wait()
            try:
                result = channel.answer(request_id, decision, kind=Kind.COMMAND, via=f"w{index}")
                results.put(
                    (request_id, index, result.won, result.answer.decision, result.answer.pid)
                )
            except AlreadyAnswered as exc:
                results.put((request_id, index, False, exc.answer.decision, exc.answer.pid))


def partial_read_watcher(home: str, ids: list[str], stop: Any, results: Any) -> None:
    """Read the answer files as fast as possible while they are published; count bad reads."""
    from pending import DecodeError, loads_strict
    from pending._fsio import Unreadable, read_bytes

    reads = bad = 0
    with Channel.open(home) as channel:
        while not stop.is_set():
            for request_id in ids:
                try:
                    data = read_bytes(channel.dir_fd, f"{request_id}.answer.json")
                    if data is None:
                        continue
                    loads_strict(data)
                    reads += 1
                except (Unreadable, DecodeError):
                    bad += 1
    results.put((reads, bad))
