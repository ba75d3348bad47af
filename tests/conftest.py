"""Shared fixtures: a fresh WISP_HOME per test, an open channel, a live server lock, and
native watching for the tests that need it."""

from __future__ import annotations

import compileall
import os
import shutil
import signal
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import outoftree
import pytest
from helpers import nameless_here
from hypothesis import HealthCheck, settings
from isolation import native_watching_refusal

import pending
import pending._fsio
import wisp
from pending import Channel, ServerLock

# Every xdist worker collects, and so assertion-rewrites, every test module: ~5 s of CPU a
# process for the suite's ~2,700 asserts (measured: collection 10.4 s, 5.3 s with
# --assert=plain). pytest keeps the rewritten code beside each module (tests/__pycache__,
# checked by the source's hash) unless the interpreter may not write bytecode, as
# PYTHONDONTWRITEBYTECODE says on some machines: then every worker of every run paid it again.
# This lets these pytest processes write it; the `wisp` processes the tests start keep the
# environment's setting (and find wisp's bytecode compiled, below).
sys.dont_write_bytecode = False

# A shell starts a background job (`pytest &`, the soak script's run beside another) with
# SIGINT ignored, and an ignored signal stays ignored across fork and exec: every `wisp` a test
# then pressed Ctrl-C on ignored it (seen: the 22 Ctrl-C and watch tests failed in both runs
# of the soak's load mode). A handled signal is reset to the default at exec, so the pytest
# processes handle it as Python does, and the commands they start can be interrupted.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _hang_up_later(signum: int, frame: object) -> None:
    """A hang-up, kept from ending the suite as the ignoring did (see below)."""


# `nohup` (and any parent that ignores hang-ups) starts the suite with SIGHUP ignored, and so
# every guard shell and `wisp` the tests start: a shell cannot trap a signal ignored on entry,
# so a guard sent SIGHUP never answered (seen: test_hook's start-up SIGHUP, timed out in a
# soak). Worse, it changed mid-run: a TUI test's event loop, closing, leaves SIGHUP at the
# default, so the worker's later children no longer ignored it, and its zygote (started while
# they did) refused every later launcher ("its ignored differ": the warm tests ran cold). A
# handler that does nothing keeps the suite as immune as the ignoring did, and what it starts
# gets the default at exec, before and after any test.
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, _hang_up_later)

# Timing is not what a test checks: hypothesis's own clocks — each example's 200 ms deadline
# and the "input generation is slow" health check — failed tests on a loaded machine that pass
# on an idle one (seen: test_sweep's plans, too_slow, in a soak run with four workers). Every
# property test runs without them; a test's own settings that name health checks name
# too_slow as well.
settings.register_profile("wisp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("wisp")

# How many processes `-n auto` (the README's command, through addopts) starts: twice the CPUs
# this process may use that are idle. Much of the suite waits — on `wisp` subprocesses
# starting, on pipes and pseudo-terminals, on fsync — so one worker a CPU leaves an idle
# machine's CPUs idle about a third of the time (measured on 2 cores: 306 s with 2 workers,
# 263 s with 4, the CPU time the same). On a busy machine those waits are short of CPU, not
# idle: two workers for each CPU something else keeps busy only made it busier (a run beside
# a second suite, at a load of 30 on 2 cores, took 16 minutes, and its tests met deadlines
# they meet on an idle machine). So the CPUs counted are those the last minute's load average
# left idle: 4 workers on an idle 2-core machine, 3 at a load of 0.5, 2 at 1, 1 above that.
WORKERS_PER_CPU = 2


def auto_workers(cpus: int, load: float) -> int:
    """The workers for *cpus* CPUs at a one-minute load average of *load*: WORKERS_PER_CPU
    for each CPU the load leaves idle, at least one."""
    idle = max(0.0, cpus - load)
    return max(1, min(WORKERS_PER_CPU * cpus, int(WORKERS_PER_CPU * idle)))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return auto_workers(len(os.sched_getaffinity(0)), os.getloadavg()[0])


# The tests that take 5 s or more (a timeline of the whole suite on the 2-core machine), the
# longest first, run before the rest. xdist hands tests out in collection order, one at a time
# as a worker finishes one (`--dist load --maxschedchunk 1`), so a long test collected late ran
# at the end with the other workers idle (the 17 s burst test, alphabetically near the last,
# made the run's last 13 s). First, they run side by side at the start and the short ones fill
# in behind. A name here that matches nothing only stops ordering that test.
SLOW_FIRST = (
    "tests/test_watch_burst.py::TestBurst::test_five_thousand_filed_and_answered",
    "tests/test_full_disk.py::TestOnASmallDisk::test_a_full_disk",
    "tests/test_fuzz_records.py::TestFuzzedRecords::test_a_hostile_field_anywhere",
    "tests/test_tui.py::TestMainView::test_a_stale_row_says_why_then_leaves",
    "tests/test_cli_promises.py::TestResourceLimits::test_too_few_open_files",
    "tests/test_model.py::TestChannelModel",
    "tests/test_race.py::TestFirstAnswerWins",
    "tests/test_full_disk.py::TestOnASmallDisk::test_an_immutable_directory",
    "tests/test_crash_points.py::TestKilledAtEveryStep",
    "tests/test_tui.py::TestDialogs::test_every_command_key",
    "tests/test_tui.py::TestHosts::test_each_host_has_its_relay",
    "tests/test_hostile_cli.py::TestHostileFilesFromTheCommandLine",
    "tests/test_live_overflow.py::TestOverflowIsCountedExactly",
    "tests/test_mcp.py::TestApprovals::test_pending_then_awaited_with_progress",
    "tests/test_sweep.py::TestPlanSweep::test_the_plans_invariants",
    "tests/test_full_disk.py::TestOnASmallDisk::test_a_read_only_mount",
    "tests/test_tui.py::TestHosts::test_a_host_through_a_terminal_like_ssh_tt",
)


def _slowness(item: pytest.Item) -> int:
    """Where *item* goes: its place in SLOW_FIRST, or after them all."""
    for place, prefix in enumerate(SLOW_FIRST):
        if item.nodeid.startswith(prefix):
            return place
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The :data:`SLOW_FIRST` tests first, longest first; the rest in their order (stable)."""
    items.sort(key=_slowness)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/e2e (the real agent harnesses, tests/e2e/HARNESSES.md) is collected only when
    asked for by its path (`pytest tests/e2e`, as .ci/run does after this suite), never by
    the README's command."""
    e2e = Path(__file__).parent / "e2e"
    if collection_path != e2e:
        return None
    asked = [Path(str(arg).split("::")[0]).resolve() for arg in config.args]
    return None if any(p == e2e or e2e in p.parents for p in asked) else True


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Compile wisp's and pending's bytecode once, before any test starts a `wisp` process.

    An editable install has none, and with PYTHONDONTWRITEBYTECODE set (as on some machines)
    no process writes it: then every `wisp` the suite starts (thousands) compiles every module
    it imports from source again, which is ~40 % of the instructions such a process runs
    (measured with callgrind: 834 M against 481 M for `wisp approvals pending`). An installed
    wheel has its bytecode; this gives the suite's processes the same. The controller does it,
    not each xdist worker; a stale file is never used (Python checks the source's mtime).
    Then the run's own temporary directory (:func:`_own_basetemp`), and the place of its
    out-of-tree install (:func:`out_of_tree_wisp`)."""
    if hasattr(config, "workerinput"):
        config.stash[_OUT_OF_TREE] = outoftree.place(os.environ, config.workerinput["testrunuid"])
        _end_without_teardown()
        return
    # The run's id, which xdist hands each worker (the controller makes one if none was given).
    if getattr(config.option, "testrunuid", None) is None:
        config.option.testrunuid = uuid.uuid4().hex
    config.stash[_OUT_OF_TREE] = outoftree.place(os.environ, config.option.testrunuid)
    for package in (pending, wisp):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    _rewrite_once(config)
    _own_basetemp(config)


def _end_without_teardown() -> None:
    """An xdist worker ends once its exit handlers have run, without the interpreter's
    teardown of everything it imported (textual, the MCP SDK, hypothesis, each test module):
    that took the four workers seconds of CPU at once, and pytest waits for every worker to
    end before it reports (measured: the run's last 11 s, the tests all done). Registered as
    the worker starts, so it runs after every exit handler registered later: the zygote's
    stop, multiprocessing's (which the tests import)."""
    import atexit

    def end() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # what the worker found went to the controller through its channel

    atexit.register(end)


def _rewrite_once(config: pytest.Config) -> None:
    """Rewrite the test modules' assertions once, in the controller, before the workers start.

    pytest caches a test module's rewritten code beside it, but a fresh clone has none: each
    xdist worker then rewrote all of them at once as it collected (~6 s of CPU a process on
    the 2-core machine, four times over: the first run took ~20 s longer than the next).
    Written here, split over this machine's CPUs, each worker reads them. It uses pytest's
    own rewriting, which is private: if that changes, the workers rewrite as before.

    The same for the plugins' packages, which pytest rewrites too (every module of a package
    that installs a pytest plugin: hypothesis, anyio, xdist...): where PYTHONDONTWRITEBYTECODE
    is set, pytest never caches them, and every process rewrote the ~120 it imports, in
    every run (~2 s of CPU a process on the 2-core machine)."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
    except ImportError:
        return
    state = config.stash.get(assertstate_key, None)
    if state is None or config.getoption("assertmode") != "rewrite":
        return

    def cached(source: Path) -> Path:
        return get_cache_dir(source) / (source.name[:-3] + PYC_TAIL)

    stale = [
        source
        for source in [*sorted(Path(__file__).parent.glob("test_*.py")), *_plugin_sources(config)]
        if _read_pyc(source, cached(source)) is None
    ]
    if not stale:
        return
    shares = len(os.sched_getaffinity(0))
    children = []
    for share in range(shares):
        pid = os.fork()  # the controller has started no thread yet
        if pid == 0:
            for source in stale[share::shares]:
                try:
                    cached(source).parent.mkdir(exist_ok=True)
                    source_hash, rewritten = _rewrite_test(source, config)
                    _write_pyc(state, rewritten, source_hash, cached(source))
                except BaseException:  # a worker rewrites it as it imports it, as before
                    continue
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


def _plugin_sources(config: pytest.Config) -> list[Path]:
    """The files of the packages pytest marked for rewriting as it loaded the installed
    plugins (not the tests'), without importing any of them."""
    import importlib.util

    tests = Path(__file__).parent
    sources: list[Path] = []
    for name in sorted(getattr(config.pluginmanager.rewrite_hook, "_must_rewrite", ())):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        origin = Path(spec.origin)
        if origin.parent == tests:
            continue
        if spec.submodule_search_locations:
            sources += sorted(origin.parent.rglob("*.py"))
        else:
            sources.append(origin)
    return sources


def _own_basetemp(config: pytest.Config) -> None:
    """The run's temporary directories in a directory of its own, not in pytest's shared
    `/tmp/pytest-of-USER/pytest-N`: every pytest session of this user (another suite, the
    soak's run beside this one, any project's tests) removes all but the three newest of
    those as it starts, so a session that ran beside a few others lost its tests' homes,
    tmux sockets and relays' directories mid-test (seen: a TUI test whose tmux socket went
    away failed in CI while another suite ran). Set before pytest's own tmp_path factory is
    made (tryfirst, below); removed when the run passed, kept (and named) when it failed.
    An explicit ``--basetemp`` is left alone."""
    if config.option.basetemp is None:
        config.option.basetemp = tempfile.mkdtemp(prefix="wisp-tests-")
        config.stash[_MADE_BASETEMP] = config.option.basetemp


_MADE_BASETEMP = pytest.StashKey[str]()


_OUT_OF_TREE = pytest.StashKey[Path]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller: the workers are done
        outoftree.remove(session.config.stash[_OUT_OF_TREE])
    made = session.config.stash.get(_MADE_BASETEMP, None)
    if made is None:
        return
    if exitstatus == 0:
        shutil.rmtree(made, ignore_errors=True)
    else:
        print(f"\nthe tests' temporary directories are kept in {made}")


@pytest.fixture(scope="session")
def out_of_tree_wisp(request: pytest.FixtureRequest) -> Path:
    """The `wisp` program of this run's out-of-tree install (tests/outoftree.py): installed
    as a person installs it for everyday use, out of any working tree and temporary
    directory, so that `wisp agents setup` run by it installs a hook (run by the clone's
    editable `.venv`, it refuses). Built once per run, shared by its workers."""
    return outoftree.program(request.config.stash[_OUT_OF_TREE])


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("WISP_HOME", str(path))
    return path


@pytest.fixture
def channel(home: Path) -> Iterator[Channel]:
    with Channel.open(home) as ch:
        yield ch


@pytest.fixture(params=["nameless", "named"])
def staging(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Each publication staged as it is where O_TMPFILE works (a nameless file), and as it
    is where it does not (NFS: a named file in .tmp/, removed once linked). Set in this
    process; a test's own child processes are told it (tests/crash_children.py)."""
    if request.param == "named":
        monkeypatch.setattr(pending._fsio, "_NAMELESS", False)
    elif not nameless_here(tmp_path):
        pytest.skip("no O_TMPFILE on this filesystem, or no /proc: staged by name")
    return str(request.param)


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
