"""`wisp web` in a real process, and a real browser (the distribution's Chromium, driven by
Playwright) at a phone's viewport, for the web face's tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers import WAIT_S, in_terminal, read_line

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 390, "height": 844}
URL_LINE = re.compile(r"serving (https?://\S+?)/ ")


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (the test extra brings it)"
    return None


class WebServer:
    """`wisp web --listen 127.0.0.1:0` for *home*, its URL read from its first line."""

    def __init__(self, home: Path, *args: str) -> None:
        self.home = home
        # Its stderr goes to a file, not a pipe: nothing reads it while it runs, and a pipe
        # would block the server once 64 KiB of warnings filled it.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "wisp", "web", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={**os.environ, "WISP_HOME": str(home)},
        )
        assert self.process.stdout is not None
        line = read_line(self.process.stdout)
        found = URL_LINE.search(line)
        if found is None:
            self.stop()
            raise AssertionError(f"wisp web did not start: {line!r}")
        self.url = found.group(1)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("wisp web did not stop on SIGINT") from None
        finally:
            if self.process.returncode is not None:
                # What it warned or logged (a traceback from a request's handler, say), shown
                # with a failing test's captured output: a flaky page is diagnosed from it.
                self.stderr.seek(0)
                said = self.stderr.read().decode(errors="replace")
                if said:
                    sys.stderr.write(f"--- wisp web's stderr ---\n{said}")
            self.stderr.close()
            if self.process.stdout is not None:
                self.process.stdout.close()


@contextmanager
def web_server(home: Path, *args: str) -> Iterator[WebServer]:
    server = WebServer(home, *args)
    try:
        yield server
    finally:
        server.stop()


def pairing_link(url: str) -> str:
    """A pairing link, as `wisp web pair` prints it in a terminal."""
    code, output = in_terminal("web", "pair", "--url", url, "--json")
    assert code == 0, output
    return str(json.loads(output.strip().splitlines()[-1])["link"])


def pair(page: Any, url: str, name: str = "phone") -> None:
    """Open a printed pairing link in *page*, name the device, and land on the board."""
    page.goto(pairing_link(url))
    page.fill("input[name=name]", name)
    page.click("button[type=submit]")
    page.wait_for_selector("#live.ok", timeout=WAIT_S * 1000)
