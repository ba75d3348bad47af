"""A route is one module and one line: the proof is a throwaway route (tests/toyroute.py),
put in the table wisp.routes.ROUTES and nowhere else. The notifier tries it in order, skips
it with its reason, posts through it and audits it; the doctor and `wisp notify --route`
name it — in this process and in the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import audit_records, run_wisp
from toyroute import TO, toy_route

from pending.testing import FakeClock
from wisp._doctor import reach
from wisp.routes.notify import Notifier, RateLimit

TESTS = Path(__file__).resolve().parent
TOY = TESTS / "toyroute.py"
# The routes of this build, in order (as tests/test_notify.py's ORDER), and with the toy.
ORDER = ["host", "terminal", "tmux", "app", "osascript", "desktop"]
WITH_TOY = ["host", "toy", *ORDER[1:]]


def notifier(home: Path, **kw: Any) -> Notifier:
    """A notifier for which every route of this build is skipped (no terminal, no bus)."""
    kw.setdefault("environ", {})
    return Notifier(
        home, limit=RateLimit(FakeClock()), tty_path="/nonexistent/tty", platform="linux", **kw
    )


def toy_wisp(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`wisp ARGS` in a real process whose table has the toy route."""
    return subprocess.run(
        [sys.executable, "-P", str(TOY), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


class TestThrowawayRoute:
    def test_tried_in_order_and_skipped_with_its_reason(self, home: Path) -> None:
        """Without the table's line there is no toy route (the control); with it, the toy is
        tried after the host route and, unable to post here, skipped with its reason."""
        assert notifier(home).order() == ORDER
        with toy_route():
            assert notifier(home).order() == WITH_TOY
            result = notifier(home).post("t", "m")
        assert not result.posted
        assert [s.split(":")[0] for s in result.skipped] == [*WITH_TOY, "push"]
        assert result.skipped[1] == "toy: TOY_ROUTE_TO is unset (the file the toy route posts to)"
        assert notifier(home).order() == ORDER  # gone with the block

    def test_posts_and_is_audited(self, home: Path, tmp_path: Path) -> None:
        """Where it can post, the toy takes the notice ahead of the routes after it; the
        notifier audits it as any route's, and push policy follows as ever."""
        out = tmp_path / "toy.jsonl"
        with toy_route():
            result = notifier(home, environ={TO: str(out)}).post("T", "body", subtitle="s")
        assert result.posted and result.route == "toy"
        assert result.detail == f"written to {out}"
        assert result.skipped == (
            "host: no front end declared notify (only under `wisp relay`)",
            "push: no push URL set (notifications.push)",
        )
        assert [json.loads(line) for line in out.read_text().splitlines()] == [
            {"title": "T", "subtitle": "s", "body": "body"}
        ]
        record = audit_records(home)[-1]
        assert (record["event"], record["route"], record["outcome"]) == (
            "notification",
            "toy",
            "posted",
        )

    def test_named_alone_and_by_the_doctor(self, home: Path, tmp_path: Path) -> None:
        """`route="toy"` tries it alone; the doctor's findings list it in order, as the
        route a notification would take."""
        out = tmp_path / "toy.jsonl"
        with toy_route():
            alone = notifier(home, environ={TO: str(out)}).post("t", "m", route="toy")
            found = reach(notifier(home, environ={TO: str(out)}))
        assert alone.posted and alone.route == "toy" and alone.skipped == ()
        assert found["route"] == "toy"
        assert [r for r, _ in found["routes"]] == [*WITH_TOY, "push"]


class TestThrowawayRouteInTheCli:
    def test_wisp_notify_route_toy(self, home: Path, tmp_path: Path) -> None:
        """`wisp notify --route toy` is a usage error where the table has no toy (the
        control), and posts through it where it has."""
        refused = run_wisp("notify", "--route", "toy", "probe")
        assert refused.returncode == 2, refused.stderr
        out = tmp_path / "toy.jsonl"
        done = toy_wisp("notify", "--route", "toy", "probe", env={TO: str(out)})
        assert done.returncode == 0, done.stderr
        assert "posted via toy" in done.stdout + done.stderr
        assert json.loads(out.read_text())["body"] == "probe"
        assert audit_records(home)[-1]["route"] == "toy"

    def test_wisp_doctor_names_it(self, home: Path) -> None:
        """`wisp doctor` lists the toy route among the notify lines, skipped with its reason."""
        shown = toy_wisp("doctor", env={TO: ""})
        assert "toy: skipped, TOY_ROUTE_TO is unset" in shown.stdout, shown.stdout
        plain = run_wisp("doctor")
        assert "toy:" not in plain.stdout and "host: skipped" in plain.stdout
