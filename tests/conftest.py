"""Shared fixtures: a fresh WISP_HOME per test, an open channel, a live server lock, and
native watching for the tests that need it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from isolation import native_watching_refusal

from pending import Channel, ServerLock


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("WISP_HOME", str(path))
    return path


@pytest.fixture
def channel(home: Path) -> Iterator[Channel]:
    with Channel.open(home) as ch:
        yield ch


@pytest.fixture
def server(channel: Channel) -> Iterator[ServerLock]:
    with channel.server() as lock:
        yield lock


@pytest.fixture
def native_watching() -> None:
    """For a test that needs native (inotify) watching: skips, saying why, when this user has
    no inotify instance free (the polling fallback has tests of its own)."""
    refusal = native_watching_refusal()
    if refusal is not None:
        pytest.skip(f"missing capability: native watching: {refusal}")
