"""Shared fixtures: a fresh WISP_HOME per test, an open channel, a live server lock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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
