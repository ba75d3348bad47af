"""What the benchmarks share: the machine they ran on, timed child processes, percentiles,
a disposable wisp home, and output as human text or JSON lines.

Not a benchmark itself. Each script imports it from its own directory (``python bench/X.py``
puts ``bench/`` first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# The bench home's config.json: no desktop or terminal notifications while a benchmark files
# hundreds of requests (each is still audited as "not shown"; nothing else changes).
BENCH_CONFIG = {"notifications": {"enabled": False}}
FILING_THREADS = 8
PRODUCT = ("pending", "wisp", "pyproject.toml")  # what a change to is a change of what is measured
# A disk is "disturbed" when creating a file takes longer than this: ext4 without a journal
# skips every inode freed in the last 60 s (360 s while its table block is dirty) on each
# allocation (recently_deleted()), and a test run's or a benchmark's clean-up leaves
# thousands. Seen: 11-25 us a file on a quiet disk, up to 1.6 ms right after a clean-up; and
# 55 us at the start of a round-trip run that then ran at half its rate (257.9/s at 6.86 ms
# of CPU a trip, against 486.3/s at 3.64 ms from 10.9 us, the same code an hour apart).
DISTURBED_CREATE_US = 30.0
# How long a full run waits at most for a disturbed disk to settle before it measures: a freed
# inode counts as recent for 60 s, 360 s while its inode table block is dirty (and new files
# in the same group keep dirtying it). A quick run does not wait: it only warns.
DISK_SETTLE_MAX_S = 420.0
DISK_SETTLE_PROBE_EVERY_S = 10.0
CREATE_PROBE_FILES = 20  # few: each one removed is itself skipped by later allocations


def settle_for(args: argparse.Namespace) -> float:
    """How long a run waits at most for a disturbed disk: a full run DISK_SETTLE_MAX_S, a
    quick one not at all."""
    return 0.0 if args.quick else DISK_SETTLE_MAX_S


def parser(doc: str | None, *, quick_help: str) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--json`` and ``--quick``."""
    summary = (doc or "").strip().split("\n\n")[0]
    p = argparse.ArgumentParser(description=summary)
    p.add_argument("--json", action="store_true", help="JSON lines on stdout (one per figure)")
    p.add_argument("--quick", action="store_true", help=quick_help)
    return p


# --- the machine -------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _filesystem(path: Path) -> str | None:
    """The type of the filesystem holding *path* (ext4, tmpfs, ...): fsync costs differ."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return None
    best, fstype = "", None
    resolved = str(path.resolve())
    for fields in mounts:
        point = fields[1]
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, fstype = point, fields[2]
    return fstype


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _commits() -> dict[str, str | None]:
    """The commit measured (``+dirty`` if tracked files have uncommitted changes), and the
    last commit that changed the product code (pending/, wisp/, pyproject.toml): runs on two
    bench commits over the same product code measure the same thing."""
    try:
        dirty = "+dirty" if _git("status", "--porcelain", "--untracked-files=no") else ""
        code_dirty = (
            "+dirty"
            if _git("status", "--porcelain", "--untracked-files=no", "--", *PRODUCT)
            else ""
        )
        return {
            "commit": _git("rev-parse", "--short", "HEAD") + dirty,
            "code_commit": _git("log", "-1", "--format=%h", "--", *PRODUCT) + code_dirty,
        }
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "code_commit": None}


def compile_bytecode() -> str:
    """Write wisp's .pyc files, as installing it does, and say whether they are there.

    `pip install` compiles what it installs; an editable install (the README's) leaves it to
    the first import, and an environment with PYTHONDONTWRITEBYTECODE set (this project's
    sandbox has it) never writes them: every wisp process would then compile wisp's sources
    again (~30 ms) while the dependencies it is compared with load from bytecode. So a
    benchmark compiles them first, and says so in its machine line. Always afresh: compileall
    takes a .pyc as current when its source's mtime matches, but the import also checks the
    size, so a file checked out twice in one second kept a .pyc the import refuses, and every
    process compiled it again (+35-60 M instructions a run, seen after a rebase).
    """
    import compileall

    ok = all(
        compileall.compile_dir(str(ROOT / package), quiet=1, force=True)
        for package in ("pending", "wisp")
    )
    return "cached" if ok else "not cached"


def _create_us(work_dir: Path) -> float:
    """The median time to create an empty file beside *work_dir* (in a directory made and
    removed for it), in microseconds: what every publication pays once per file."""
    with tempfile.TemporaryDirectory(prefix="create-probe-", dir=work_dir) as probe:
        times = []
        for i in range(CREATE_PROBE_FILES):
            t0 = time.perf_counter()
            os.close(os.open(os.path.join(probe, str(i)), os.O_CREAT | os.O_WRONLY, 0o600))
            times.append(time.perf_counter() - t0)
    return round(sorted(times)[len(times) // 2] * 1e6, 1)


def settle_disk(
    probe_dir: Path, *, max_s: float, note: Callable[[str], None] | None = None
) -> tuple[float, float]:
    """Wait, at most *max_s*, until creating a file in *probe_dir* takes under
    DISTURBED_CREATE_US (a benchmark's bounded wait, probing every few seconds: no figure is
    taken on a disk still paying for the last run's clean-up). Returns the last probe's
    figure and the seconds waited."""
    started = time.monotonic()
    create_us = _create_us(probe_dir)
    told = False
    while create_us > DISTURBED_CREATE_US and time.monotonic() - started < max_s:
        if note is not None and not told:
            note(
                f"[the disk is disturbed (a file created in {create_us} us): waiting for it "
                f"to settle, up to {max_s:g} s]"
            )
            told = True
        time.sleep(DISK_SETTLE_PROBE_EVERY_S)
        create_us = _create_us(probe_dir)
    return create_us, round(time.monotonic() - started, 1)


def machine(
    work_dir: Path | None = None,
    *,
    settle_s: float = 0.0,
    note: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """What a figure means nothing without: cores, CPU, Python, kernel, load, filesystem,
    and how long creating a file takes there now (with *settle_s*, after waiting up to that
    long for the disk to settle: :func:`settle_disk`)."""
    bytecode = compile_bytecode()
    where = work_dir or Path(tempfile.gettempdir())
    # Beside a bench home (its parent is the bench's own temporary directory), not in it.
    probe_dir = where.parent if work_dir is not None and where.name == "home" else where
    create_us, waited_s = settle_disk(probe_dir, max_s=settle_s, note=note)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "arch": platform.machine(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "kernel": f"{platform.system()} {platform.release()}",
        "load_1m": round(load[0], 2),
        "filesystem": _filesystem(where),
        "create_us": create_us,
        "settled_s": waited_s,
        **_commits(),
        "bytecode": bytecode,
        "date": time.strftime("%Y-%m-%d"),
    }


def _settled(m: Mapping[str, Any]) -> str:
    waited = m.get("settled_s") or 0
    return f", after {waited:g} s waiting for it to settle" if waited >= 1 else ""


def machine_line(m: Mapping[str, Any]) -> str:
    return (
        f"machine: {m['cpus']} cpus ({m['cpu_model']}, {m['arch']}), "
        f"{m['implementation']} {m['python']}, {m['kernel']}, load {m['load_1m']}, "
        f"bench dir on {m['filesystem']} (a file created in {m['create_us']} us"
        f"{_settled(m)}), "
        f"commit {m['commit']} (code {m['code_commit']}), "
        f"wisp's bytecode {m['bytecode']}, {m['date']}"
    )


# --- the command under test --------------------------------------------------------------


def wisp_argv() -> list[str]:
    """How a person runs `wisp`: the console script installed beside this interpreter."""
    script = Path(sys.executable).parent / "wisp"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "wisp"]


@contextmanager
def bench_home(work_dir: Path | None = None) -> Iterator[Path]:
    """A disposable `$WISP_HOME` (0700) with notifications off; removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="wisp-bench-", dir=work_dir) as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        (home / "config.json").write_text(json.dumps(BENCH_CONFIG))
        yield home


# Holds a server lock until its stdin closes, so requests naming it read as alive (`filed`).
_HOLDER = """\
import sys
from pending import Channel
with Channel.open(sys.argv[1]) as channel, channel.server() as lock:
    print(lock.id, flush=True)
    sys.stdin.read()
"""


class LockHolder:
    """A process holding an asking server's lock on *home*'s channel until :meth:`close`:
    requests naming :attr:`server` read as waiting (`filed`), and no sweep touches them."""

    def __init__(self, home: Path) -> None:
        from pending import Server

        self.process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        server_id = self.process.stdout.readline().strip()
        if not server_id:
            raise SystemExit("the lock holder did not start")
        self.server = Server(
            id=server_id, pid=self.process.pid, client="bench", entry_point="approvals"
        )

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def file_requests(home: Path, make: Callable[[int], Any], first: int, end: int) -> None:
    """File the requests ``make(i)`` for *first* <= i < *end* with ``Channel.file``, as an
    asker does (fsync and all), from FILING_THREADS threads: fsync releases the GIL, so their
    waits overlap (on a busy disk, one thread alone takes 2 ms a request)."""
    from pending import Channel

    with Channel.open(home) as channel:

        def file_slice(start: int) -> None:
            for i in range(start, end, FILING_THREADS):
                channel.file(make(i))

        with ThreadPoolExecutor(FILING_THREADS) as pool:
            for done in [pool.submit(file_slice, first + t) for t in range(FILING_THREADS)]:
                done.result()


def file_commands(home: Path, server: Any, first: int, end: int) -> None:
    """File command requests number *first* to *end* - 1 for *server* (a list of servers:
    request *i* for the *i*-th of them, round the list)."""
    from pending import CommandBinding, Kind, make_request

    servers = server if isinstance(server, list) else [server]

    file_requests(
        home,
        lambda i: make_request(
            kind=Kind.COMMAND,
            binding=CommandBinding(command=f"make deploy-{i}", cwd="/srv/shop"),
            title="wisp: run a command?",
            body=f"make deploy-{i}",
            server=servers[i % len(servers)],
        ),
        first,
        end,
    )


def child_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WISP_")}
    env["WISP_HOME"] = str(home)
    env.update(extra)
    return env


class Run:
    """One finished child process: wall time, CPU time (user + system), peak RSS, exit code.

    The peak RSS is ru_maxrss, which Linux carries across exec(2): it is never less than the
    size of the process that started the child, so it means something only for a small parent.
    """

    def __init__(self, wall_s: float, cpu_s: float, maxrss_kb: int, code: int) -> None:
        self.wall_s = wall_s
        self.cpu_s = cpu_s
        self.maxrss_kb = maxrss_kb
        self.code = code


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start *argv*, *stdin* (if given) written to it and closed, else /dev/null."""
    proc = subprocess.Popen(
        list(argv),
        env=dict(env) if env is not None else None,
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
    )
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    return proc


def run_timed(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    check: bool = True,
    stdin: bytes | None = None,
) -> Run:
    """Run *argv* to its end (*stdin*, if given, written to it and closed); its own rusage
    comes from wait4(2), so nothing else is counted."""
    t0 = time.perf_counter()
    proc = start(argv, env=env, stdin=stdin, stdout=stdout, stderr=stderr)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode)


class ExitClock:
    """Takes the moment *process* exits (perf_counter), from a thread waiting for it: for a
    span that ends at another process's exit while this one does something else."""

    def __init__(self, process: subprocess.Popen[Any]) -> None:
        self.process = process
        self.exited_at: float | None = None
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _wait(self) -> None:
        self.process.wait()
        self.exited_at = time.perf_counter()

    def join(self, timeout: float) -> float:
        """The exit's moment, once it has come (SystemExit if not within *timeout*)."""
        self._waiter.join(timeout=timeout)
        if self.exited_at is None:
            self.process.kill()
            raise SystemExit(f"{self.process.args!r} did not exit within {timeout:g} s")
        return self.exited_at


def await_filed(subscription: Any, process: subprocess.Popen[Any], timeout_s: float) -> Any:
    """The request *process* files, as a `pending.Watcher` subscription hears it filed (the
    next `FILED` transition: one filing process at a time); SystemExit if none within
    *timeout_s* (the process is killed)."""
    from pending import Event, Transition

    deadline = time.monotonic() + timeout_s
    while True:
        item = subscription.get(timeout=max(0.0, deadline - time.monotonic()))
        if item is None:
            process.kill()
            raise SystemExit(f"{process.args!r}: no request filed within {timeout_s:g} s")
        if isinstance(item, Transition) and item.event is Event.FILED and item.status:
            return item.status.request


def under_pty(
    argv: Sequence[str], env: Mapping[str, str], timeout_s: float
) -> tuple[float, int | None, str]:
    """Run *argv* under a fresh pseudo-terminal (answers are taken only from a terminal) to
    its end: (the moment its end of the terminal closed, perf_counter; its exit status; what
    it said, newlines plain)."""
    import pexpect

    child = pexpect.spawn(
        argv[0],
        list(argv[1:]),
        env=dict(env),
        encoding="utf-8",
        timeout=timeout_s,
        dimensions=(40, 200),
    )
    child.delayafterclose = 0.0  # pexpect's default pause on close is not the program's
    child.expect(pexpect.EOF)  # its end of the terminal closed: it has exited
    done = time.perf_counter()
    child.close()
    return done, child.exitstatus, (child.before or "").replace("\r\n", "\n")


# --- statistics --------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile *q* (0-100) of *values*."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def spread(seconds: Sequence[float]) -> dict[str, float]:
    """n, median, p90, p99 and max of *seconds*, in milliseconds."""
    return {
        "n": len(seconds),
        "p50_ms": ms(percentile(seconds, 50)),
        "p90_ms": ms(percentile(seconds, 90)),
        "p99_ms": ms(percentile(seconds, 99)),
        "max_ms": ms(max(seconds)),
    }


# --- output ------------------------------------------------------------------------------


def judge(fields: dict[str, Any], ratio: float, target: float) -> None:
    """Mark a figure with its ratio target and whether *ratio* met it."""
    fields["target_ratio"] = target
    fields["met"] = ratio <= target


def ratio_note(fields: Mapping[str, Any], target: float) -> str:
    """How a figure with a ratio target reads: its target and whether it was met, if it has
    one (a `met` field); nothing for a reference figure."""
    if "met" not in fields:
        return ""
    return f"  (target <= {target}x: {'met' if fields['met'] else 'NOT met'})"


class Report:
    """Collects a benchmark's figures; prints them as JSON lines or as text for people."""

    def __init__(self, bench: str, as_json: bool) -> None:
        self.bench = bench
        self.as_json = as_json

    def line(self, figure: str, fields: Mapping[str, Any], text: str | Callable[[], str]) -> None:
        """One figure: a JSON line ``{"bench", "figure", ...fields}`` or its human *text*."""
        if self.as_json:
            print(json.dumps({"bench": self.bench, "figure": figure, **fields}), flush=True)
        else:
            print(text() if callable(text) else text, flush=True)

    def machine(self, m: Mapping[str, Any]) -> None:
        self.line("machine", dict(m), machine_line(m))
        if m["create_us"] > DISTURBED_CREATE_US:
            self.note(
                f"WARNING: creating a file takes {m['create_us']} us in the bench directory "
                f"now (over {DISTURBED_CREATE_US:g} us): the disk is disturbed, likely by "
                "files removed in the last minutes (ext4 without a journal skips recently "
                "freed inodes); figures that file requests read slow. Wait a few minutes "
                "and rerun (a full run waits for it first)."
            )

    def note(self, text: str) -> None:
        """Progress for people, on stderr (never mixed into JSON lines)."""
        print(text, file=sys.stderr, flush=True)
