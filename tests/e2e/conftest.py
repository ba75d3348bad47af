"""The e2e tier's fixtures: wisp installed out of the tree, a test's own places (outside
/tmp), a loopback-only network namespace, and the fake model server inside it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import netns
import pytest
import wispinstall
from fakemodel import Call, FakeModel
from harnesses import CACHE
from world import World

_MADE = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The tier's temporary directories (every test's HOME, project and $WISP_HOME) under the
    cache, not under /tmp: /tmp is a writable root of Codex's `workspace-write` sandbox (a
    $WISP_HOME there is the agent's to write: `wisp agents status` calls it unprotected), and
    with $CODEX_HOME under /tmp Codex 0.171.0's sandbox does not start at all ("bwrap: execvp
    codex-linux-sandbox: No such file or directory"), so a sandbox test there proves nothing.
    Runs before tests/conftest.py's (which then leaves an explicit basetemp alone); removed
    when the run passed, kept (and named) when it failed. An explicit --basetemp is kept."""
    if hasattr(config, "workerinput") or config.option.basetemp is not None:
        return
    runs = CACHE / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    config.option.basetemp = tempfile.mkdtemp(prefix="wisp-e2e-", dir=runs)
    config.stash[_MADE] = config.option.basetemp


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    made = session.config.stash.get(_MADE, None)
    if made is None:
        return
    if exitstatus == 0:
        shutil.rmtree(made, ignore_errors=True)
    else:
        print(f"\nthe e2e tests' temporary directories are kept in {made}")


@pytest.fixture(scope="session", autouse=True)
def wisp_installed() -> Path:
    """This clone's wisp, installed out of the tree as a person installs it (wispinstall)."""
    return wispinstall.ensure()


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
