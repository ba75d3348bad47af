"""Listings of many requests: a screenful for people, everything for scripts, one scan."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pexpect
import pytest
from helpers import command, run_wisp, wisp_spawn

import pending._channel
from pending import Channel, ServerLock, State
from pending.testing import FakeClock
from wisp.cli._listing import ROWS_NOT_TERMINAL, ROWS_RESERVED_LINES

ID_ROW = re.compile(r"^([0-9a-f]{16})\s", re.MULTILINE)
MORE_THAN_A_SCREEN = ROWS_NOT_TERMINAL + 7
TERMINAL_ROWS = 40  # the pseudo-terminal's height


def file_many(channel: Channel, lock: ServerLock, count: int) -> list[str]:
    """*count* waiting command requests, their IDs oldest first (as a listing orders them)."""
    ids = []
    for n in range(count):
        request = command(lock, text=f"make deploy-{n}")
        channel.file(request)
        ids.append(request.id)
    listed = [s.id for s in channel.listing().statuses]
    assert sorted(listed) == sorted(ids)
    return listed


class TestScreenful:
    def test_not_a_terminal_shows_the_newest_and_says_how_many_more(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Piped, `wisp pending` shows the newest 50 rows, oldest first, then a line that
        counts the rest and names --limit and --json; the JSON array holds every request."""
        ids = file_many(channel, server, MORE_THAN_A_SCREEN)
        out = run_wisp("pending")
        assert out.returncode == 0, out.stderr
        assert ID_ROW.findall(out.stdout) == ids[-ROWS_NOT_TERMINAL:]
        left = MORE_THAN_A_SCREEN - ROWS_NOT_TERMINAL
        last = out.stdout.rstrip("\n").splitlines()[-1]
        assert last.startswith(f"… and {left} older requests not shown")
        assert "`wisp pending --limit N`" in last and "--json" in last
        rows = json.loads(run_wisp("pending", "--json").stdout)
        assert [r["id"] for r in rows] == ids

    def test_limit_chooses_how_many(self, channel: Channel, server: ServerLock) -> None:
        """`--limit N` shows the newest N; `--limit 0` shows all, with no closing line."""
        ids = file_many(channel, server, 12)
        three = run_wisp("pending", "--limit", "3")
        assert ID_ROW.findall(three.stdout) == ids[-3:]
        assert "… and 9 older requests not shown" in three.stdout
        whole = run_wisp("pending", "--limit", "0")
        assert ID_ROW.findall(whole.stdout) == ids
        assert "not shown" not in whole.stdout

    def test_kind_listing_names_its_own_command(self, channel: Channel, server: ServerLock) -> None:
        """`wisp approvals pending --limit 2` points at itself, not at `wisp pending`."""
        ids = file_many(channel, server, 5)
        out = run_wisp("approvals", "pending", "--limit", "2")
        assert ID_ROW.findall(out.stdout) == ids[-2:]
        assert "… and 3 older requests not shown" in out.stdout
        assert "`wisp approvals pending --limit N`" in out.stdout

    def test_a_terminal_gets_what_fits_its_height(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """On a 40-line terminal, the listing leaves room for its header, its closing line
        and the prompt: 37 rows."""
        ids = file_many(channel, server, MORE_THAN_A_SCREEN)
        # The environment pytest leaves carries LINES=24 and COLUMNS=80 (which rich honours
        # over the terminal's size), so the child gets an environment without them.
        env = {k: v for k, v in os.environ.items() if k not in ("LINES", "COLUMNS")}
        child = pexpect.spawn(
            *wisp_spawn("pending", "--kind", "command"),
            env=env,
            encoding="utf-8",
            timeout=60,
            dimensions=(TERMINAL_ROWS, 200),
        )
        child.expect(pexpect.EOF)
        child.close()
        output = (child.before or "").replace("\r\n", "\n")
        assert child.exitstatus == 0, output
        fits = TERMINAL_ROWS - ROWS_RESERVED_LINES
        assert ID_ROW.findall(output) == ids[-fits:]
        assert f"… and {MORE_THAN_A_SCREEN - fits} older requests not shown" in output


class TestOneScan:
    def test_listing_shows_stale_then_the_sweep_settles_it(self, home: Path) -> None:
        """listing_and_sweep lists a request whose asker died as stale, and its sweep (from
        the same scan) claims and settles it; a live asker's request is left waiting."""
        with Channel.open(home) as channel, channel.server() as alive:
            with channel.server() as gone:
                dead = command(gone, text="make gone")
                channel.file(dead)
            live = command(alive, text="make live")
            channel.file(live)
            listing, swept = channel.listing_and_sweep()
            states = {s.id: s.state for s in listing.statuses}
            assert states == {dead.id: State.STALE, live.id: State.FILED}
            assert swept.stale == (dead.id,)
            assert channel.status(dead.id).state is State.SETTLED
            assert channel.status(live.id).state is State.FILED

    def test_the_cache_makes_room_for_every_request_scanned(
        self, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With the cache's floor far below the channel's size, a second scan still reuses
        every request parsed by the first (it is sized to what a scan found)."""
        monkeypatch.setattr(pending._channel, "REQUEST_CACHE_SIZE", 3)
        with Channel.open(home) as channel, channel.server() as lock:
            for n in range(10):
                channel.file(command(lock, text=f"make {n}"))
            first = {g.id: g.request for g in channel.scan()[0]}
            second = {g.id: g.request for g in channel.scan()[0]}
            assert len(first) == 10
            assert all(second[key] is first[key] for key in first)

    def test_oldest_first_and_by_id_within_an_instant(self, home: Path) -> None:
        """A listing is ordered by filing time, and requests filed at the same instant by
        their ID (IDs of different lengths among them), whatever order their files are in."""
        clock = FakeClock()
        ids = ["ffff0000", "00000000aa", "0000000a", "a0a0a0a0a0a0", "12345678", "9abcdef0"]
        with Channel.open(home, clock=clock) as channel, channel.server() as lock:
            for n, request_id in enumerate(ids):
                if n % 2:
                    clock.advance(-1.0 if n == 3 else 0.5)
                channel.file(command(lock, text=f"make {n}", request_id=request_id, clock=clock))
            listed = channel.listing().statuses
        expected = sorted(listed, key=lambda s: (s.request.filed_at, s.id))
        assert [s.id for s in listed] == [s.id for s in expected]
        assert len({s.request.filed_at for s in listed}) < len(ids)  # ties were listed
