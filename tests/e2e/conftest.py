"""The e2e tier's fixtures: a test's own places, a loopback-only network namespace, and the
fake model server inside it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import netns
import pytest
from fakemodel import Call, FakeModel
from world import World


@pytest.fixture
def world(tmp_path: Path) -> World:
    places = World(tmp_path / "home", tmp_path / "project", tmp_path / "wisp")
    places.home.mkdir()
    places.cwd.mkdir()
    return places


@pytest.fixture
def ns() -> Iterator[netns.LoopbackNamespace]:
    why = netns.refusal()
    if why is not None:
        pytest.skip(f"no loopback-only network namespace: {why}")
    with netns.LoopbackNamespace() as namespace:
        yield namespace


@pytest.fixture
def serve(ns: netns.LoopbackNamespace) -> Iterator[Callable[[list[Call]], FakeModel]]:
    """Start a fake model server inside the namespace, playing a script."""
    started: list[FakeModel] = []

    def start(script: list[Call]) -> FakeModel:
        with ns.entered():
            model = FakeModel(script)
        started.append(model.start())
        return model

    yield start
    for model in started:
        model.stop()
