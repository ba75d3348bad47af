"""Files as each version wrote them read correctly; every bad one is skipped and reported."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from helpers import FIXTURES, install_fixture

from pending import (
    Channel,
    CommandBinding,
    FactBinding,
    InvalidId,
    Kind,
    Outcome,
    State,
    UnreadableRequest,
)

GOOD = sorted((FIXTURES / "good").iterdir())
BAD_REASONS = {
    "0badf00d.request.json": "not valid JSON",
    "0badf00e.request.json": "not valid JSON",
    "0badf00f.fact.json": "not UTF-8",
    "0badf010.request.json": "over the 65536-byte cap",
    "0badf011.request.json": "NaN is not a JSON number",
    "0badf012.request.json": "duplicate key",
    "0badf013.request.json": "nested",
    "0badf014.request.json": "does not match its name",
    "0badf015.question.json": "kind",
    "0badf016.request.json": "altered after filing",
    "NOT-AN-ID.request.json": "its name is not ID.KIND.json",
    "0badf017.request.json": "expected int",
    "0badf018.request.json": "format 2",
    "0badf019.request.json": "binding",
    "0badf01a.answer.json": "required",
}


@pytest.fixture
def with_good(channel: Channel) -> Channel:
    for path in GOOD:
        install_fixture(channel, path)
    return channel


class TestGoodFixtures:
    def test_0_16_0_command_without_kind(self, with_good: Channel) -> None:
        """0.16.0's request has no kind: it reads as a command (stale: its server is long gone)."""
        status = with_good.status("a1b2c3d4")
        assert status.kind is Kind.COMMAND
        assert isinstance(status.request.binding, CommandBinding)
        assert status.request.binding.command == "make deploy"
        assert status.state is State.STALE

    def test_0_22_0_fact_with_expiry_still_expires(self, with_good: Channel) -> None:
        """A 0.22.0 fact request filed with expiresAt is stale once past it."""
        status = with_good.status("b2c3d4e5")
        assert status.kind is Kind.FACT and isinstance(status.request.binding, FactBinding)
        assert status.state is State.STALE and "expired" in (status.reason or "")

    def test_current_kinds(self, with_good: Channel) -> None:
        """A settled command, a handed-over fact (no expiry), a stale question."""
        assert with_good.status("c3d4e5f6a7").outcome is Outcome.ANSWERED
        assert with_good.status("d4e5f6a7").state is State.HANDED_OVER
        assert with_good.status("e5f6a7b8").state is State.STALE

    def test_a_newer_builds_request_keeps_its_unknown_keys(self, with_good: Channel) -> None:
        """Unknown keys are kept and ignored; an unknown suffix is invisible, not a problem."""
        status = with_good.status("f6a7b8c9")
        assert status.request.extra == {"priority": "high", "labels": ["deploy"]}
        assert status.request.binding.extra == {"sandbox": {"network": False}}
        assert with_good.listing().problems == ()

    def test_the_whole_set_lists(self, with_good: Channel) -> None:
        """Every good request lists, none skipped."""
        listing = with_good.listing()
        assert {s.id for s in listing.statuses} == {
            "a1b2c3d4",
            "b2c3d4e5",
            "c3d4e5f6a7",
            "d4e5f6a7",
            "e5f6a7b8",
            "f6a7b8c9",
        }


class TestBadFixtures:
    def test_every_bad_fixture_is_listed_here(self) -> None:
        """The table below covers the bad fixtures exactly."""
        assert {p.name for p in (FIXTURES / "bad").iterdir()} == set(BAD_REASONS)

    @pytest.mark.parametrize("name", sorted(BAD_REASONS))
    def test_skipped_and_reported(self, channel: Channel, name: str) -> None:
        """Each bad file is reported with its reason, and no status comes of it."""
        install_fixture(channel, FIXTURES / "bad" / name)
        listing = channel.listing()
        assert listing.statuses == ()
        reasons = {p.name: p.reason for p in listing.problems}
        assert name in reasons, reasons
        assert BAD_REASONS[name] in reasons[name]

    def test_bad_and_good_together(self, with_good: Channel) -> None:
        """A channel full of bad files still lists every good request."""
        for path in (FIXTURES / "bad").iterdir():
            install_fixture(with_good, path)
        listing = with_good.listing()
        assert len(listing.statuses) == 6
        assert len(listing.problems) == len(BAD_REASONS)

    def test_symlink(self, channel: Channel, tmp_path: Path) -> None:
        """A request that is a symlink (to a perfectly good file) is refused."""
        target = tmp_path / "elsewhere.json"
        target.write_bytes((FIXTURES / "good" / "d4e5f6a7.fact.json").read_bytes())
        (channel.path / "d4e5f6a7.fact.json").symlink_to(target)
        (channel.path / "NOTANID").symlink_to(target)
        reasons = {p.name: p.reason for p in channel.listing().problems}
        assert reasons == {
            "d4e5f6a7.fact.json": "it is a symbolic link",
            "NOTANID": "it is a symbolic link",
        }

    @pytest.mark.skipif(os.getuid() != 0, reason="chown to another uid needs root")
    def test_owned_by_another_uid(self, channel: Channel) -> None:
        """A request owned by another uid is never read."""
        path = install_fixture(channel, FIXTURES / "good" / "d4e5f6a7.fact.json")
        os.chown(path, 4321, -1)
        reasons = {p.name: p.reason for p in channel.listing().problems}
        assert "owned by uid 4321" in reasons["d4e5f6a7.fact.json"]

    def test_fifo_and_directory(self, channel: Channel) -> None:
        """A FIFO (which could block a reader) and a directory under request names are refused."""
        os.mkfifo(channel.path / "d4e5f6a7.fact.json", 0o600)
        (channel.path / "e5f6a7b8.question.json").mkdir()
        reasons = {p.name: p.reason for p in channel.listing().problems}
        assert reasons["d4e5f6a7.fact.json"] == "it is not a regular file"
        assert stat.S_ISFIFO((channel.path / "d4e5f6a7.fact.json").lstat().st_mode)
        assert "e5f6a7b8.question.json" in reasons

    def test_hard_links(self, channel: Channel, tmp_path: Path) -> None:
        """A file with more links than publication leaves is refused."""
        path = install_fixture(channel, FIXTURES / "good" / "d4e5f6a7.fact.json")
        os.link(path, channel.path / ".tmp" / "one")
        os.link(path, channel.path / ".tmp" / "two")
        reasons = {p.name: p.reason for p in channel.listing().problems}
        assert reasons["d4e5f6a7.fact.json"] == "it has 3 hard links"

    def test_two_requests_with_one_id(self, channel: Channel) -> None:
        """Two request files of different kinds under one ID: both refused."""
        install_fixture(channel, FIXTURES / "good" / "d4e5f6a7.fact.json")
        data = (FIXTURES / "good" / "d4e5f6a7.fact.json").read_bytes()
        (channel.path / "d4e5f6a7.request.json").write_bytes(data)
        listing = channel.listing()
        assert listing.statuses == ()
        assert len(listing.problems) == 2


class TestPublicReader:
    """What a watcher or a face reads the channel with: read_group, scan, derive, liveness."""

    def test_read_group_returns_the_files_and_the_problems(self, with_good: Channel) -> None:
        """A whole group reads; an unreadable file in it is left out and named."""
        group, problems = with_good.read_group("c3d4e5f6a7")
        assert problems == ()
        assert group.request is not None and group.answer is not None
        assert group.settled is not None and group.settled.outcome is Outcome.ANSWERED
        install_fixture(with_good, FIXTURES / "bad" / "0badf01a.answer.json")
        (with_good.path / "0badf01a.answer.json").rename(with_good.path / "c3d4e5f6a7.answer.json")
        group, problems = with_good.read_group("c3d4e5f6a7")
        assert group.answer is None and group.request is not None
        assert [p.name for p in problems] == ["c3d4e5f6a7.answer.json"]

    def test_read_group_can_skip_the_request(self, with_good: Channel) -> None:
        """`kinds=()` reads only the answer and outcome slots (a holder of the request)."""
        group, _ = with_good.read_group("c3d4e5f6a7", kinds=())
        assert group.request is None and group.answer is not None
        assert with_good.read_group("d4e5f6a7", kinds=(Kind.COMMAND,))[0].request is None

    def test_read_group_refuses_a_malformed_id(self, channel: Channel) -> None:
        """No path is built from an ID that is not one."""
        with pytest.raises(InvalidId):
            channel.read_group("../x")

    def test_scan_and_derive_agree_with_the_listing(self, with_good: Channel) -> None:
        """A scan's groups, derived, are the listing's statuses; the cache spares probes."""
        groups, problems = with_good.scan()
        assert problems == ()
        cache: dict[str, bool] = {}
        derived = {g.id: with_good.derive(g, cache) for g in groups}
        assert {s.id: s for s in with_good.listing().statuses} == derived
        # One probe per server of a waiting request (not per request, none for the settled).
        # (a1b2c3d4 is 0.16.0's, judged as a legacy request: by its lock, else its pid.)
        assert cache == {"legacy:5e5e5e5e:4242": False, "6f6f6f6f": False, "7a7a7a7a": False}
        handed_over = next(g for g in groups if g.id == "d4e5f6a7")
        status = with_good.derive(handed_over, {"7a7a7a7a": True})  # the cache is believed
        assert status is not None and status.state is State.FILED

    def test_liveness_of_a_string_that_is_no_id_is_false(self, channel: Channel) -> None:
        """Nobody can hold a lock named after a non-ID: dead, not an error."""
        assert channel.server_alive("x") is False
        assert channel.server_alive("../../etc/passwd") is False
        with channel.server() as lock:
            assert channel.server_alive(lock.id) is True

    @pytest.mark.parametrize(
        ("field", "value", "why"),
        [
            ("id", "x", "is not an ID"),
            ("id", "5E5E5E5E", "is not an ID"),
            ("pid", 0, "is not a pid"),
            ("pid", -1, "is not a pid"),
            ("pid", "6161", "expected int"),
        ],
    )
    def test_a_malformed_server_is_a_problem_everywhere(
        self, with_good: Channel, field: str, value: object, why: str
    ) -> None:
        """A request whose server ID or pid is malformed is reported and skipped by a
        listing, a status and a sweep alike; every other request still reads."""
        path = with_good.path / "d4e5f6a7.fact.json"
        raw = json.loads(path.read_bytes())
        raw["server"][field] = value
        path.write_text(json.dumps(raw))
        listing = with_good.listing()
        reasons = {p.name: p.reason for p in listing.problems}
        assert why in reasons["d4e5f6a7.fact.json"]
        assert len(listing.statuses) == 5
        with pytest.raises(UnreadableRequest, match=why):
            with_good.status("d4e5f6a7")
        assert "d4e5f6a7.fact.json" in {p.name for p in with_good.sweep().problems}
        assert json.loads(path.read_bytes()) == raw  # left as it is
