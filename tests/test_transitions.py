"""Every transition of every kind, and every refusal, on a real directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from helpers import BUILDERS, command, fact, question

import pending._channel as pending_channel
from pending import (
    AlreadyAnswered,
    AlreadySettled,
    Channel,
    CommandBinding,
    Delivery,
    IdCollision,
    InvalidDecision,
    InvalidId,
    Kind,
    Outcome,
    Request,
    RequestChanged,
    ServerLock,
    StaleRequest,
    State,
    UnknownRequest,
    UnreadableRequest,
    WrongKind,
    make_request,
)
from pending.testing import FakeClock, IoStep, Op, Phase, io_hook

DECIDE = {
    Kind.COMMAND: ("once", None),
    Kind.FACT: ("keep", None),
    Kind.QUESTION: ("answer", "yes"),
    Kind.TOOL: ("once", None),
}


class TestFile:
    @pytest.mark.parametrize("kind", list(Kind))
    def test_filed_request_reads_back(
        self, channel: Channel, server: ServerLock, kind: Kind
    ) -> None:
        """A filed request is on disk under its kind's name and reads back equal, state filed."""
        req = BUILDERS[kind](server)
        channel.file(req)
        suffix = {
            Kind.COMMAND: "request",
            Kind.FACT: "fact",
            Kind.QUESTION: "question",
            Kind.TOOL: "tool",
        }[kind]
        assert (channel.path / f"{req.id}.{suffix}.json").is_file()
        status = channel.status(req.id)
        assert status.request == req and status.state is State.FILED
        assert not list((channel.path / ".tmp").iterdir())

    def test_an_id_is_filed_once_across_kinds(self, channel: Channel, server: ServerLock) -> None:
        """Filing an ID that names a request of any kind is refused; nothing is replaced."""
        req = command(server)
        channel.file(req)
        with pytest.raises(IdCollision):
            channel.file(fact(server, request_id=req.id))
        with pytest.raises(IdCollision):
            channel.file(req)  # the same kind: its link is refused, and its staged copy removed
        assert channel.status(req.id).request == req
        assert not list((channel.path / ".tmp").iterdir())


class TestAnswer:
    @pytest.mark.parametrize(
        ("kind", "decision", "text"),
        [(Kind.COMMAND, d, None) for d in ("once", "session", "project", "always", "no")]
        + [
            (Kind.FACT, "keep", None),
            (Kind.FACT, "drop", None),
            (Kind.QUESTION, "answer", "staging"),
            (Kind.QUESTION, "decline", None),
        ],
    )
    def test_every_decision_of_every_kind(
        self, channel: Channel, server: ServerLock, kind: Kind, decision: str, text: str | None
    ) -> None:
        """Each decision a kind takes is published, bound to the request's digest, and won."""
        req = BUILDERS[kind](server)
        channel.file(req)
        result = channel.answer(req.id, decision, kind=kind, via="cli", text=text)
        assert result.won
        assert result.answer.decision == decision and result.answer.text == text
        assert result.answer.binding_digest == req.binding_digest
        assert result.answer.pid == os.getpid()
        status = channel.status(req.id)
        assert status.state is State.ANSWERED and status.answer == result.answer

    def test_handed_over_fact_can_be_answered(self, channel: Channel) -> None:
        """A fact whose server stopped waits for the person, and takes their answer."""
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
        assert channel.status(req.id).state is State.HANDED_OVER
        assert channel.answer(req.id, "keep", kind=Kind.FACT, via="cli").won

    def test_the_second_answer_loses_and_is_told_the_winner(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Racing past the state check, the later publisher gets the winner's answer back."""
        req = command(server)
        channel.file(req)
        first = channel.answer(req.id, "no", kind=Kind.COMMAND, via="tui")
        second = channel._publish_answer(first.answer._replace(decision="always", via="cli"))
        assert not second.won
        assert second.answer.decision == "no" and second.answer.via == "tui"


class TestRefusals:
    def test_malformed_id(self, channel: Channel) -> None:
        """A malformed ID is refused before any path is built."""
        with pytest.raises(InvalidId):
            channel.answer("../../etc/passwd", "once", kind=Kind.COMMAND, via="cli")

    def test_unknown_id(self, channel: Channel) -> None:
        """An ID with no request is refused, saying how to find the right one."""
        with pytest.raises(UnknownRequest, match="list the waiting requests"):
            channel.answer("a1b2c3d4", "once", kind=Kind.COMMAND, via="cli")

    @pytest.mark.parametrize(
        ("kind", "as_kind"),
        [(Kind.FACT, Kind.COMMAND), (Kind.COMMAND, Kind.FACT), (Kind.QUESTION, Kind.COMMAND)],
    )
    def test_wrong_kind(
        self, channel: Channel, server: ServerLock, kind: Kind, as_kind: Kind
    ) -> None:
        """A request answered as another kind is refused, naming its own decisions; no file."""
        req = BUILDERS[kind](server)
        channel.file(req)
        decision = {Kind.COMMAND: "once", Kind.FACT: "keep", Kind.QUESTION: "decline"}[as_kind]
        with pytest.raises(WrongKind) as info:
            channel.answer(req.id, decision, kind=as_kind, via="cli")
        assert info.value.kind is kind and info.value.asked_as is as_kind
        assert not (channel.path / f"{req.id}.answer.json").exists()

    @pytest.mark.parametrize(
        ("kind", "decision", "text", "match"),
        [
            (Kind.COMMAND, "yes", None, "not an answer"),
            (Kind.FACT, "once", None, "not an answer"),
            (Kind.QUESTION, "answer", None, "needs text"),
            (Kind.COMMAND, "once", "hi", "no text"),
        ],
    )
    def test_invalid_decision(
        self,
        channel: Channel,
        server: ServerLock,
        kind: Kind,
        decision: str,
        text: str | None,
        match: str,
    ) -> None:
        """A decision the kind does not take is refused with the ones it does."""
        req = BUILDERS[kind](server)
        channel.file(req)
        with pytest.raises(InvalidDecision, match=match):
            channel.answer(req.id, decision, kind=kind, via="cli", text=text)

    def test_option_not_offered(self, channel: Channel, server: ServerLock) -> None:
        """A question with fixed options takes only one of them."""
        req = question(server, options=("staging", "production"))
        channel.file(req)
        with pytest.raises(InvalidDecision, match="'staging', 'production'"):
            channel.answer(req.id, "answer", kind=Kind.QUESTION, via="cli", text="prod")

    def test_already_answered(self, channel: Channel, server: ServerLock) -> None:
        """A second answer is refused with who answered, how, and when."""
        req = command(server)
        channel.file(req)
        channel.answer(req.id, "no", kind=Kind.COMMAND, via="tui", reason="not now")
        with pytest.raises(AlreadyAnswered) as info:
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
        text = str(info.value)
        assert "'no'" in text and "via tui" in text and info.value.answer.reason == "not now"

    def test_settled(self, channel: Channel, server: ServerLock) -> None:
        """An ended request is refused with its outcome."""
        req = command(server)
        channel.file(req)
        channel.claim(req, Outcome.TIMED_OUT, via="asker")
        with pytest.raises(AlreadySettled, match="timed-out"):
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
        channel.settle(req, Outcome.TIMED_OUT, by="asker")
        with pytest.raises(AlreadySettled, match="timed-out"):
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")

    def test_settled_after_an_answer_names_who_answered(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """An applied request is refused with its outcome and who answered, how, and when."""
        req = command(server)
        channel.file(req)
        channel.answer(req.id, "once", kind=Kind.COMMAND, via="tui")
        channel.settle(req, Outcome.ANSWERED, by="asker", decision="once")
        with pytest.raises(AlreadySettled) as info:
            channel.answer(req.id, "no", kind=Kind.COMMAND, via="cli")
        assert "answered 'once'" in str(info.value) and "via tui" in str(info.value)

    def test_stale_server_gone(self, channel: Channel) -> None:
        """A command whose server stopped is refused as stale, saying why."""
        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
        with pytest.raises(StaleRequest, match="has stopped"):
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
        assert not (channel.path / f"{req.id}.answer.json").exists()

    def test_stale_expired(self, home: Path) -> None:
        """A request past its expiry whose asker is gone is refused as stale, naming when it
        expired. (While its asker holds its lock it still waits, whatever this clock says:
        tests/test_clock_ahead.py.)"""
        clock = FakeClock()
        with Channel.open(home, clock=clock) as channel:
            with channel.server() as lock:
                req = make_request(
                    kind=Kind.FACT,
                    binding=fact(lock).binding,
                    title="t",
                    body="b",
                    server=lock.record(),
                    clock=clock,
                    expires_in_s=60,
                )
                channel.file(req)
            clock.advance(61)  # its asker has stopped: expired, no grace
            with pytest.raises(StaleRequest, match="expired at"):
                channel.answer(req.id, "keep", kind=Kind.FACT, via="cli")

    def test_changed_since_shown(self, channel: Channel, server: ServerLock) -> None:
        """An answer given to a request as shown is refused if the one on disk differs."""
        req = command(server)
        channel.file(req)
        shown = req._replace(binding=CommandBinding(command="make test", cwd="/srv/shop"))
        with pytest.raises(RequestChanged):
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="tui", shown=shown)

    def test_altered_request_file(self, channel: Channel, server: ServerLock) -> None:
        """A request whose binding was edited after filing is unreadable and never answered."""
        req = command(server, text="make test")
        channel.file(req)
        path = channel.path / f"{req.id}.request.json"
        path.write_text(path.read_text().replace("make test", "rm -rf ~"))
        with pytest.raises(UnreadableRequest, match="altered after filing"):
            channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
        assert any("altered" in p.reason for p in channel.listing().problems)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every record the channel parses from now on, as the bytes it parsed."""
    seen: list[bytes] = []
    loads = pending_channel.loads_strict

    def counted(data: bytes) -> object:
        seen.append(data)
        return loads(data)

    monkeypatch.setattr(pending_channel, "loads_strict", counted)
    return seen


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every name the channel opens to read from now on."""
    names: list[str] = []
    open_checked = pending_channel.open_checked

    def counted(dir_fd: int, name: str, **kwargs: Any) -> Any:
        names.append(name)
        return open_checked(dir_fd, name, **kwargs)

    monkeypatch.setattr(pending_channel, "open_checked", counted)
    return names


def filed_read_at_link(channel: Channel, reader: Channel, request: Request) -> list[object]:
    """File *request* through *channel* while *reader* (the same Channel, or another
    process's) reads it at its link, the staged name still there; what *reader* read."""
    seen: list[object] = []

    def read_at_link(step: IoStep) -> None:
        if step.op is Op.LINK and step.phase is Phase.AFTER:
            seen.append(reader.read(request.id).request)

    with io_hook(read_at_link):
        channel.file(request)
    return seen


class TestRequestCache:
    def test_an_edit_in_place_of_the_same_size_is_still_caught(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A request parsed once is reused while its file is unchanged; an edit that keeps the
        size and puts the mtime back is still read afresh (ctime) and refused as altered."""
        req = command(server, text="make test")
        channel.file(req)
        path = channel.path / f"{req.id}.request.json"
        assert channel.status(req.id).request == req  # parsed, and now cached
        before = path.stat()
        path.write_text(path.read_text().replace("make test", "make tesX"))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size
        with pytest.raises(UnreadableRequest, match="altered"):
            channel.status(req.id)

    def test_what_this_channel_published_is_not_parsed_again(
        self, channel: Channel, server: ServerLock, parsed: list[bytes]
    ) -> None:
        """The request, answer and outcome a Channel object published are kept by the files'
        identity as published: reading them back (its own watcher does, on their events)
        parses nothing, and gives what was written. A file edited since, in place and to the
        same size with its mtime put back, is read afresh."""
        req = command(server, text="make test")
        channel.file(req)
        answer = channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli").answer
        settled = channel.settle(req, Outcome.ANSWERED, by="asker", decision="once").settled
        group = channel.read(req.id)
        assert (group.request, group.answer, group.settled) == (req, answer, settled)
        assert parsed == []
        path = channel.path / f"{req.id}.answer.json"
        before = path.stat()
        path.write_text(path.read_text().replace('"cli"', '"tui"'))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size
        assert channel.read(req.id).answer == answer._replace(via="tui")
        assert len(parsed) == 1

    def test_a_reader_woken_by_the_link_parses_nothing_either(
        self, channel: Channel, server: ServerLock, parsed: list[bytes]
    ) -> None:
        """Its own watcher, woken by the link on another thread, may read a file before
        publish() is done (the staged name not yet removed, the directory not yet synced):
        what it reads then is the record as published, parsed from nothing."""
        req = command(server, text="make test")
        assert filed_read_at_link(channel, channel, req) == [req]
        assert parsed == []
        assert channel.read(req.id).request == req  # and once done, by its final identity
        assert parsed == []

    def test_another_process_file_read_at_its_link_is_parsed_once(
        self, channel: Channel, server: ServerLock, parsed: list[bytes]
    ) -> None:
        """Another Channel (another process's) reading a request at its link, while the staged
        name is still there, parses it once: the staged name's removal changes the ctime, yet
        the next read, once publishing is done, reuses it. That read gives the kept key its
        ctime: an edit in place after it, to the same size and mtime, is read afresh."""
        req = command(server, text="make test")
        other = Channel.open(channel.home)
        try:
            seen = filed_read_at_link(channel, other, req)
            assert seen == [req] and len(parsed) == 1  # read while it had two names
            assert other.read(req.id).request == req
            assert len(parsed) == 1  # its ctime moved since, and nothing was parsed again
            path = channel.path / f"{req.id}.request.json"
            before = path.stat()
            path.write_text(path.read_text().replace("make test", "make tesX"))
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            assert path.stat().st_size == before.st_size
            with pytest.raises(UnreadableRequest, match="altered"):
                other.status(req.id)
        finally:
            other.close()

    def test_a_channel_that_keeps_no_requests_parses_each_read(
        self, channel: Channel, server: ServerLock, parsed: list[bytes]
    ) -> None:
        """A Channel opened with keep_requests=False (a listing that reads each file once and
        is done) keeps no request it reads or publishes: each read parses the file, and gives
        what a keeping channel gives. Its answers and outcomes are kept as ever."""
        req = command(server, text="make test")
        channel.file(req)
        once = Channel.open(channel.home, keep_requests=False)
        try:
            assert once.read(req.id).request == req
            assert once.read(req.id).request == req
            assert len(parsed) == 2
            assert once.listing().statuses == channel.listing().statuses
            assert len(parsed) == 3  # the keeping channel parsed nothing: it filed it
            mine = command(server, text="make mine")
            once.file(mine)
            assert once.read(mine.id).request == mine
            assert len(parsed) == 4
            answer = once.answer(mine.id, "once", kind=Kind.COMMAND, via="cli").answer
            assert once.read(mine.id).answer == answer
            # The request parsed again by the answer and by the read; the answer it
            # published, kept: not parsed.
            assert len(parsed) == 6
        finally:
            once.close()

    def test_a_kept_file_is_asked_for_by_name_not_opened(
        self, channel: Channel, server: ServerLock, opened: list[str]
    ) -> None:
        """Reading a record kept by its file's identity asks for the name's status and opens
        nothing (one system call, not three); one that is not kept is opened and read."""
        req = command(server, text="make test")
        channel.file(req)
        assert channel.read_group(req.id, kinds=(Kind.COMMAND,))[0].request == req
        assert f"{req.id}.request.json" not in opened
        other = Channel.open(channel.home)
        try:
            assert other.read_group(req.id, kinds=(Kind.COMMAND,))[0].request == req
            assert f"{req.id}.request.json" in opened
        finally:
            other.close()

    def test_a_kept_name_that_holds_another_file_is_read_in_full(
        self, channel: Channel, server: ServerLock, parsed: list[bytes]
    ) -> None:
        """A kept name replaced since (the same bytes in another file, then a symbolic link
        to it) is read as it is now: the other file parsed afresh, the link refused."""
        req = command(server, text="make test")
        channel.file(req)
        path = channel.path / f"{req.id}.request.json"
        copy = channel.path.parent / "copy.json"
        copy.write_bytes(path.read_bytes())
        copy.chmod(0o600)
        os.replace(copy, path)
        assert channel.status(req.id).request == req
        assert len(parsed) == 1
        copy.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(copy)
        with pytest.raises(UnreadableRequest, match="symbolic link"):
            channel.status(req.id)

    def test_a_kept_file_made_unreadable_is_opened(
        self, channel: Channel, server: ServerLock, opened: list[str]
    ) -> None:
        """A kept record whose file its owner can no longer read is not taken from its name's
        status: the file is opened, and open decides (refused with EACCES, unless the reader
        may read anything). So is one kept while the file still had two names, whose key
        has no change time to show the change of mode."""
        req = command(server, text="make test")
        name = f"{req.id}.request.json"
        other = Channel.open(channel.home)
        try:
            assert filed_read_at_link(channel, other, req) == [req]  # its ctime to come
            opened.clear()
            (channel.path / name).chmod(0o200)
            for reader in (other, channel):  # open says: a problem (EACCES), or the file
                reader.read_group(req.id, kinds=(Kind.COMMAND,))
            assert opened.count(name) == 2
        finally:
            other.close()

    def test_a_publication_that_lost_is_not_kept(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A record staged for publication and beaten to its name is forgotten: only the
        winner's is kept, and read."""
        req = command(server)
        channel.file(req)
        won = channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli").answer
        lost = won._replace(decision="deny", via="tui")
        assert not channel._publish_answer(lost).won
        assert all(kept[1] is not lost for kept in channel._slots.values())
        assert channel.read(req.id).answer == won

    def test_a_record_that_reading_back_would_change_is_read(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A request whose expiry is finer than the milliseconds records keep is not kept as
        it was made: read back, it is what its file says."""
        req = command(server, expires_in_s=10.0004)
        channel.file(req)
        read = channel.status(req.id).request
        assert read.expires_at is not None and read.expires_at.microsecond % 1000 == 0
        assert read == req._replace(expires_at=read.expires_at)


class TestClaimAndSettle:
    @pytest.mark.parametrize("ending", [Outcome.TIMED_OUT, Outcome.WITHDRAWN, Outcome.STALE])
    def test_tombstones_claim_the_slot(
        self, channel: Channel, server: ServerLock, ending: Outcome
    ) -> None:
        """The asker's and sweeper's endings take the one slot; a later person's answer loses."""
        req = question(server)
        channel.file(req)
        assert channel.claim(req, ending, via="asker").won
        status = channel.status(req.id)
        assert status.state is State.SETTLED and status.outcome is ending
        assert not channel._publish_answer(
            status.answer._replace(decision="decline", via="cli")  # type: ignore[arg-type]
        ).won

    def test_an_answer_first_beats_a_deadline(self, channel: Channel, server: ServerLock) -> None:
        """If the person's answer got the slot first, the timeout's claim loses and says so."""
        req = command(server)
        channel.file(req)
        channel.answer(req.id, "always", kind=Kind.COMMAND, via="cli")
        claimed = channel.claim(req, Outcome.TIMED_OUT, via="asker")
        assert not claimed.won and claimed.answer.decision == "always"

    def test_claim_refuses_non_endings(self, channel: Channel, server: ServerLock) -> None:
        """Only timed-out, withdrawn and stale are tombstones."""
        req = command(server)
        with pytest.raises(ValueError, match="not an ending"):
            channel.claim(req, Outcome.ANSWERED, via="asker")

    @pytest.mark.parametrize("kind", list(Kind))
    def test_settle_first_wins(self, channel: Channel, server: ServerLock, kind: Kind) -> None:
        """The first outcome stands; a second settle is told it."""
        req = BUILDERS[kind](server)
        channel.file(req)
        decision, text = DECIDE[kind]
        channel.answer(req.id, decision, kind=kind, via="cli", text=text)
        first = channel.settle(
            req,
            Outcome.ANSWERED,
            by="asker",
            decision=decision,
            result="p1" if kind is Kind.FACT else None,
            delivery=Delivery.WATCHED,
        )
        second = channel.settle(req, Outcome.FAILED, by="cli", reason="late")
        assert first.won and not second.won and second.settled == first.settled
        status = channel.status(req.id)
        assert status.state is State.SETTLED and status.settled == first.settled


class TestOutcome:
    def test_the_outcome_slot_alone(self, channel: Channel, server: ServerLock) -> None:
        """`outcome(id)` is None until an outcome is written, then that record; it reads the
        outcome slot alone (an answer slot holding junk makes no difference), and an ID
        that is not one is refused before any path is built."""
        req = command(server)
        channel.file(req)
        assert channel.outcome(req.id) is None
        channel.answer(req.id, "once", kind=Kind.COMMAND, via="cli")
        assert channel.outcome(req.id) is None
        settled = channel.settle(req, Outcome.ANSWERED, by="asker", decision="once").settled
        answer = channel.path / f"{req.id}.answer.json"
        answer.unlink()
        answer.mkdir()  # junk in the answer slot: status() reports it, outcome() never reads it
        assert channel.outcome(req.id) == settled
        with pytest.raises(InvalidId):
            channel.outcome("../etc")
