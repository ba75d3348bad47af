"""`wisp relay` as a real child process, driven through its pipes (for the relay's and the
TUI's tests). Every wait is bounded; nothing sleeps as synchronisation."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import wisp_command

ALL_EFFECTS = ["approve-mcp", "keep-facts", "answer-questions"]
LINE_WAIT_S = 15.0
CTTY = str(Path(__file__).with_name("ctty.py"))


def with_terminal(argv: list[str], terminal: str = "background") -> list[str]:
    """*argv* run with a real controlling terminal (tests/ctty.py): `background` as `wisp
    tui` runs its relay (answers taken), `foreground` as an agent's shell tool would run it
    in the person's terminal (refused); `none` as it is (the test process may have none)."""
    if terminal == "none":
        return argv
    flags = ["--foreground"] if terminal == "foreground" else []
    return [sys.executable, CTTY, *flags, "--", *argv]


def write_config(home: Path, **settings: Any) -> None:
    """$WISP_HOME/config.json with *settings* given as dotted keys (answer__waitSeconds)."""
    tree: dict[str, Any] = {}
    for key, value in settings.items():
        *parents, last = key.split("__")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(tree))


class RelayProcess:
    """One `wisp relay`: lines written to its stdin, its stdout read by a thread into a queue."""

    def __init__(
        self,
        home: Path,
        *,
        env: dict[str, str] | None = None,
        terminal: str = "background",
        args: tuple[str, ...] = (),
        new_session: bool = False,
        wisp: tuple[str, ...] = ("-m", "wisp"),
    ) -> None:
        """*terminal*: see :func:`with_terminal`; *new_session*: started with setsid, so it
        has no controlling terminal at all (with ``terminal="none"``); *wisp*: how this
        interpreter runs `wisp` (a script that adds a kind first, say)."""
        self.home = home
        if wisp == ("-m", "wisp") and terminal != "foreground":  # started warm (helpers)
            argv = wisp_command("relay", *args, own_terminal=terminal == "background")
        else:
            argv = with_terminal([sys.executable, *wisp, "relay", *args], terminal)
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "WISP_HOME": str(home), **(env or {})},
            start_new_session=new_session,
        )
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []  # every line read, in order
        self.raw: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while True:
            try:
                raw = self.process.stdout.readline()
            except (ValueError, OSError):  # the test closed the pipe while this thread read it
                break
            if not raw:
                break
            self.raw.append(raw)
            self._lines.put(json.loads(raw))  # a line that is not JSON fails the test loudly
        self._lines.put(None)

    def send(self, line: dict[str, Any]) -> None:
        self.send_raw(json.dumps(line).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def hello(self, effects: list[str] | None = None, **fields: Any) -> dict[str, Any]:
        """Say hello; returns the `ready` line (everything waiting was sent before it)."""
        self.send(
            {
                "type": "hello",
                "effects": ALL_EFFECTS if effects is None else effects,
                "client": "test",
                "version": "1",
                **fields,
            }
        )
        return self.expect(type="ready")

    def next(self, timeout: float = LINE_WAIT_S) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no line from the relay within {timeout}s; seen {self.seen!r}; "
                f"stderr so far unknown"
            ) from None
        if line is None:
            self._lines.put(None)
            raise AssertionError(f"the relay closed stdout; seen {self.seen!r}")
        self.seen.append(line)
        return line

    def expect(
        self,
        match: Callable[[dict[str, Any]], bool] | None = None,
        *,
        timeout: float = LINE_WAIT_S,
        **fields: Any,
    ) -> dict[str, Any]:
        """The next line with all of *fields* (and *match*), skipping others (kept in seen)."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            line = self.next(timeout=max(0.0, deadline - time.monotonic()))
            if all(line.get(k) == v for k, v in fields.items()) and (match is None or match(line)):
                return line

    def until(self, **fields: Any) -> list[dict[str, Any]]:
        """Every line up to and including the next one with *fields*."""
        start = len(self.seen)
        self.expect(**fields)
        return self.seen[start:]

    def close(self, timeout: float = 30.0) -> int:
        """EOF on its stdin; its exit status once it has ended (bounded)."""
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.wait(timeout=timeout)

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def __enter__(self) -> RelayProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()
