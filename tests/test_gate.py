"""The approval gate as a library: grants, checks on the answer, deadlines."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import audit_records, wait_until

from pending import Channel, Kind, Outcome, Request, Scope, State, binding_digest, to_json
from pending._json import dumps_record
from pending.testing import Fault, Op, io_hook, raise_at
from wisp._asking import Asker, Deadlines
from wisp._deadlines import Cancel
from wisp.kinds.command_gate import Approval, ApprovalGate, ApprovalOutcome
from wisp.kinds.fact_keeper import FactKeeper
from wisp.kinds.question_gate import QuestionAsker, ReplyOutcome
from wisp.stores.facts import FactStore
from wisp.stores.grants import GrantsError, GrantStore, project_of
from wisp.stores.jsonstore import StoreError


@pytest.fixture(params=[False, True], ids=["threaded", "pumped"])
def asker(channel: Channel, request: pytest.FixtureRequest) -> Iterator[Asker]:
    """An asker settling on a thread of its own, and one whose waits read and settle."""
    with Asker(channel, entry_point="approvals", pumped=request.param) as a:
        yield a


def answer_when_filed(
    channel: Channel, decision: str
) -> tuple[threading.Thread, Callable[[Request], None]]:
    """A hook for `on_filed`, and the thread that answers the request once it is filed."""
    filed: list[Request] = []
    ready = threading.Event()

    def run() -> None:
        ready.wait(10)
        channel.answer(filed[0].id, decision, kind=filed[0].kind, via="cli")

    def hook(request: Request) -> None:
        filed.append(request)
        ready.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, hook


def ask(
    gate: ApprovalGate,
    channel: Channel,
    decision: str | None,
    command: str = "make deploy",
    cwd: str = "/srv/shop",
    **kw: object,
) -> Approval:
    thread, hook = answer_when_filed(channel, decision)
    try:
        return gate.request("make deploy", cwd, on_filed=hook, timeout_s=10)
    finally:
        thread.join(10)


class TestGrants:
    def test_once_grants_nothing(self, asker: Asker, channel: Channel) -> None:
        """`once` covers this request only: the same command is asked again."""
        gate = ApprovalGate(asker, timeout_s=10)
        assert ask(gate, channel, "once").scope == "once"
        assert ask(gate, channel, "no").approved is False

    def test_session_covers_the_same_command_from_this_server(
        self, asker: Asker, channel: Channel
    ) -> None:
        """`session` approves the identical command again without asking, for this gate only."""
        gate = ApprovalGate(asker, timeout_s=10)
        ask(gate, channel, "session")
        again = gate.request("make deploy", "/elsewhere", timeout_s=0.5)
        assert (again.approved, again.outcome, again.scope) == (True, "granted", "session")
        assert gate.request("make deploy ", "/srv", timeout_s=0.3).outcome == "timed-out"
        other = ApprovalGate(asker, timeout_s=10)
        assert other.request("make deploy", "/srv", timeout_s=0.3).outcome == "timed-out"
        granted = [r for r in audit_records(asker.home) if r["event"] == "approval.granted"]
        assert [(r["command"], r["scope"]) for r in granted] == [("make deploy", "session")]

    def test_project_covers_the_same_command_under_the_project(
        self, asker: Asker, channel: Channel, tmp_path: Path
    ) -> None:
        """`project` covers the command anywhere under the project's root, not elsewhere."""
        project = tmp_path / "shop"
        (project / ".git").mkdir(parents=True)
        (project / "src").mkdir()
        gate = ApprovalGate(asker, timeout_s=10)
        first = ask(gate, channel, "project", cwd=str(project / "src"))
        assert first.grant is not None and first.grant.project == str(project)
        fresh = ApprovalGate(asker, timeout_s=10)  # a new server: the store still holds it
        assert fresh.request("make deploy", str(project), timeout_s=0.3).outcome == "granted"
        assert fresh.request("make deploy", str(tmp_path), timeout_s=0.3).outcome == "timed-out"

    def test_always_covers_the_command_anywhere_until_revoked(
        self, asker: Asker, channel: Channel
    ) -> None:
        """`always` is stored; revoking it makes the command asked about again."""
        gate = ApprovalGate(asker, timeout_s=10)
        grant = ask(gate, channel, "always").grant
        assert grant is not None
        store = GrantStore(asker.home)
        assert [g.id for g in store.list()] == [grant.id]
        assert ApprovalGate(asker, timeout_s=1).request("make deploy", "/").outcome == "granted"
        assert store.revoke(grant.id) == grant
        assert ApprovalGate(asker, timeout_s=0.3).request("make deploy", "/").outcome == "timed-out"

    def test_a_damaged_store_is_kept_and_grants_nothing(
        self, asker: Asker, channel: Channel
    ) -> None:
        """A corrupt grants.json is never overwritten; nothing is granted from it."""
        path = asker.home / "grants.json"
        path.write_text('{"grants": [oops')
        os.chmod(path, 0o600)
        gate = ApprovalGate(asker, timeout_s=10)
        assert gate.request("make deploy", "/", timeout_s=0.3).outcome == "timed-out"
        with pytest.raises(GrantsError, match="damaged"):
            GrantStore(asker.home).list()
        with pytest.raises(GrantsError):
            GrantStore(asker.home).add(
                scope=Scope.ALWAYS, command="x", cwd="/", request="a", user="u"
            )
        assert path.read_text() == '{"grants": [oops'

    def test_a_gate_sees_every_change_to_the_grants_at_once(self, home: Path) -> None:
        """One store asked again and again (it reads grants.json only when the file has
        changed) sees at once a grant another store added, its revocation, a file damaged
        in place to the same size, a file removed, and one written back."""
        asking = GrantStore(home)
        other = GrantStore(home)
        assert asking.covering("make deploy", "/") is None
        grant = other.add(
            scope=Scope.ALWAYS, command="make deploy", cwd="/", request="r1", user="u"
        )
        assert asking.covering("make deploy", "/") == grant
        assert asking.covering("make deploy", "/") == grant  # unchanged: the same answer
        path = home / "grants.json"
        good = path.read_bytes()
        damaged = good.replace(b'"grants"', b'"grantz"')
        assert len(damaged) == len(good)
        with path.open("r+b") as f:  # edited in place, same size
            f.write(damaged)
        with pytest.raises(GrantsError):
            asking.covering("make deploy", "/")
        with path.open("r+b") as f:
            f.write(good)
        assert asking.covering("make deploy", "/") == grant
        assert other.revoke(grant.id) == grant
        assert asking.covering("make deploy", "/") is None
        again = other.add(
            scope=Scope.ALWAYS, command="make deploy", cwd="/", request="r2", user="u"
        )
        assert asking.covering("make deploy", "/") == again
        path.unlink()
        assert asking.covering("make deploy", "/") is None

    def test_a_gate_refuses_grants_once_their_home_is_unsafe(self, home: Path) -> None:
        """A store that read the grants (and would reuse them, the file unchanged) refuses
        them once the home is writable by others, as a fresh store does, and trusts them
        again once it is put right."""
        asking = GrantStore(home)
        grant = asking.add(
            scope=Scope.ALWAYS, command="make deploy", cwd="/", request="r", user="u"
        )
        assert asking.covering("make deploy", "/") == grant
        home.chmod(0o777)
        try:
            with pytest.raises(StoreError, match="writable"):
                asking.covering("make deploy", "/")
        finally:
            home.chmod(0o700)
        assert asking.covering("make deploy", "/") == grant

    def test_concurrent_grants_are_all_kept(self, home: Path) -> None:
        """Writers racing on the store lose nothing (temp + fsync + rename under a lock)."""
        store = GrantStore(home)
        threads = [
            threading.Thread(
                target=store.add,
                kwargs={
                    "scope": "always",
                    "command": f"cmd {i}",
                    "cwd": "/",
                    "request": "r",
                    "user": "u",
                },
            )
            for i in range(20)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(g.command for g in store.list()) == sorted(f"cmd {i}" for i in range(20))
        assert json.loads((home / "grants.json").read_text())["format"] == 1

    def test_project_of(self, tmp_path: Path) -> None:
        """The project is the nearest ancestor with `.git`, else the directory itself. Each
        case is decided by a `.git` this test made below its own directory (the search stops
        at the nearest), so nothing above it counts: not a `/tmp/.git` (which made this test
        fail on any machine that had one), nor a checkout the suite runs in."""
        (tmp_path / "a" / ".git").mkdir(parents=True)
        (tmp_path / "a" / "b" / "c").mkdir(parents=True)
        assert project_of(str(tmp_path / "a" / "b" / "c")) == str(tmp_path / "a")
        assert project_of(str(tmp_path / "a")) == str(tmp_path / "a")
        # The nearest `.git` may not stand for a project (a file, in a directory anyone may
        # write): the directory itself, whatever holds a `.git` further up.
        shared = tmp_path / "shared"
        (shared / "x" / "y").mkdir(parents=True)
        shared.chmod(0o1777)
        (shared / "x" / ".git").write_text("gitdir: /elsewhere\n")
        assert project_of(str(shared / "x" / "y")) == str((shared / "x" / "y").resolve())


class TestVerdicts:
    def test_an_approvals_outcome_and_scope_are_enums(self, asker: Asker, channel: Channel) -> None:
        """The gate's verdicts carry ApprovalOutcome and Scope, compared as enums, and serialise
        as the same words as ever."""
        gate = ApprovalGate(asker, timeout_s=10)
        approved = ask(gate, channel, "always")
        assert approved.outcome is ApprovalOutcome.ANSWERED and approved.scope is Scope.ALWAYS
        granted = gate.request("make deploy", "/srv/shop", timeout_s=0.3)
        assert granted.outcome is ApprovalOutcome.GRANTED and granted.scope is Scope.ALWAYS
        timed_out = gate.request("make other", "/", timeout_s=0.3)
        assert timed_out.outcome is ApprovalOutcome.TIMED_OUT
        assert json.dumps([granted.outcome, timed_out.outcome]) == '["granted", "timed-out"]'

    def test_a_session_grant_is_a_grant_of_its_scope_with_no_id(
        self, asker: Asker, channel: Channel
    ) -> None:
        """A session grant is no sentinel: it has the session scope and no ID (it is never
        stored); the audit still names it `session`."""
        gate = ApprovalGate(asker, timeout_s=10)
        first = ask(gate, channel, "session")
        assert first.grant is not None and first.grant.scope is Scope.SESSION
        assert (first.grant.id, first.grant.stored, first.grant.name) == (None, False, "session")
        again = gate.request("make deploy", "/elsewhere", timeout_s=0.3)
        assert again.grant == first.grant
        (granted,) = [r for r in audit_records(asker.home) if r["event"] == "approval.granted"]
        assert (granted["grant"], granted["scope"]) == ("session", "session")
        stored = ask(ApprovalGate(asker, timeout_s=10), channel, "project")
        assert stored.grant is not None and stored.grant.stored and stored.grant.id is not None

    def test_a_replys_outcome_is_an_enum(self, asker: Asker, channel: Channel) -> None:
        """Replies carry ReplyOutcome: answered, declined, timed-out, each its old word."""
        questions = QuestionAsker(asker, timeout_s=10)
        for decision, outcome in (("answer", ReplyOutcome.ANSWERED), ("decline", "declined")):

            def answer(request: Request, decision: str = decision) -> None:
                text = "staging" if decision == "answer" else None
                threading.Thread(
                    target=channel.answer,
                    args=(request.id, decision),
                    kwargs={"kind": request.kind, "via": "cli", "text": text},
                ).start()

            reply = questions.ask("Which?", on_filed=answer)
            assert reply.outcome is ReplyOutcome(outcome) and reply.outcome == outcome
        assert questions.ask("Which?", timeout_s=0.3).outcome is ReplyOutcome.TIMED_OUT


class TestChecks:
    def test_an_answer_to_a_changed_request_fails(self, asker: Asker, channel: Channel) -> None:
        """The request file is swapped (another command, a matching digest) after the person
        saw it; their answer, bound to what they saw, is not applied: it ends failed."""
        filed: list[Request] = []
        ready = threading.Event()

        def swap_then_answer() -> None:
            ready.wait(10)
            seen = filed[0]
            swapped = seen._replace(binding=seen.binding._replace(command="rm -rf /"))
            swapped = swapped._replace(binding_digest=binding_digest(swapped.binding))
            staged = channel.path / ".tmp" / "attacker"
            staged.write_bytes(dumps_record(to_json(swapped)))
            os.replace(staged, channel.path / f"{seen.id}.request.json")
            # The person's answer to what they were shown (the original command):
            channel._publish_answer(channel._new_answer(seen, "once", via="cli"))

        thread = threading.Thread(target=swap_then_answer)
        thread.start()
        try:
            approval = ApprovalGate(asker, timeout_s=10).request(
                "make deploy", "/", on_filed=lambda r: (filed.append(r), ready.set())
            )
        finally:
            thread.join(10)
        assert (approval.approved, approval.outcome) == (False, "failed")
        assert approval.reason is not None and "changed" in approval.reason

    def test_a_deadline_racing_an_answer(self, asker: Asker, channel: Channel) -> None:
        """The timeout claims the slot; had the person's answer been first, it would stand."""
        gate = ApprovalGate(asker, timeout_s=0.2)
        approval = gate.request("make deploy", "/")
        assert approval.outcome == "timed-out"
        status = channel.status(approval.request_id)  # type: ignore[arg-type]
        assert status.outcome is Outcome.TIMED_OUT and status.answer.via == "asker"  # type: ignore[union-attr]

    def test_close_withdraws_what_waits(self, channel: Channel) -> None:
        """A stopping server withdraws its waiting commands and questions."""
        asker = Asker(channel, entry_point="approvals")
        gate = QuestionAsker(asker, timeout_s=0)
        filed: list[Request] = []
        thread = threading.Thread(target=lambda: gate.ask("still there?", on_filed=filed.append))
        thread.start()
        wait_until(lambda: filed)
        asker.withdraw()
        thread.join(10)
        asker.close()
        assert channel.status(filed[0].id).outcome is Outcome.WITHDRAWN
        assert channel.status(filed[0].id).state is State.SETTLED

    def test_a_closing_thread_withdraws_its_requests_only(self, channel: Channel) -> None:
        """Withdrawing thread c1 ends c1's question and leaves c2's waiting."""
        with Asker(channel, entry_point="questions") as asker:
            questions = QuestionAsker(asker, timeout_s=0)
            filed: dict[str, Request] = {}
            threads = [
                threading.Thread(
                    target=lambda t=t: questions.ask(
                        f"from {t}?", thread=t, on_filed=lambda r, t=t: filed.__setitem__(t, r)
                    )
                )
                for t in ("c1", "c2")
            ]
            for t in threads:
                t.start()
            wait_until(lambda: len(filed) == 2)
            assert [e.request.id for e in asker.withdraw(thread="c1")] == [filed["c1"].id]
            threads[0].join(10)
            assert channel.status(filed["c1"].id).outcome is Outcome.WITHDRAWN
            assert channel.status(filed["c2"].id).state is State.FILED
        threads[1].join(10)
        assert channel.status(filed["c2"].id).outcome is Outcome.WITHDRAWN  # the server stopped

    def test_a_request_altered_while_waiting_ends_failed(
        self, asker: Asker, channel: Channel
    ) -> None:
        """Someone edits the waiting request's file: the gate does not crash; it ends the
        request failed, saying why, and the command is denied."""

        def tamper(request: Request) -> None:
            # Replaced whole (as an editor saves): the asker settles on the first event, and a
            # truncating write would show it a half-written file rather than an altered one.
            path = channel.path / f"{request.id}.request.json"
            edited = path.with_name("edited.tmp")
            edited.write_text(path.read_text().replace("make deploy", "rm -rf ~"))
            os.replace(edited, path)

        approval = ApprovalGate(asker, timeout_s=5).request("make deploy", "/", on_filed=tamper)
        assert (approval.approved, approval.outcome) == (False, "failed")
        assert approval.reason is not None and "altered" in approval.reason

    def test_a_grant_that_cannot_be_saved_leaves_the_approval(
        self, asker: Asker, channel: Channel
    ) -> None:
        """Approved `always` with grants.json damaged: approved all the same, the reason says
        the grant was not saved, and the damaged file is untouched."""
        (asker.home / "grants.json").write_text("{oops")
        approval = ask(ApprovalGate(asker, timeout_s=10), channel, "always")
        assert (approval.approved, approval.scope, approval.grant) == (True, "always", None)
        assert approval.reason is not None and "not saved" in approval.reason
        assert (asker.home / "grants.json").read_text() == "{oops"


class TestDeadlines:
    def test_one_thread_keeps_every_deadline_in_order(self, asker: Asker, channel: Channel) -> None:
        """Requests filed with a long deadline, then one with a short one: the short one times
        out first (a deadline earlier than the one waited for wakes the thread), the long ones
        are still waiting, and one thread keeps them all."""
        gate = ApprovalGate(asker, timeout_s=30)
        waiting = [gate.file(f"make slow-{n}", "/") for n in range(5)]
        short = gate.file("make quick", "/", timeout_s=0.2)
        ending = asker.wait(short.id, 10)
        assert ending is not None and ending.outcome is Outcome.TIMED_OUT
        assert [channel.status(r.id).state for r in waiting] == [State.FILED] * 5
        keepers = [t for t in threading.enumerate() if t.name == "asker-deadlines"]
        assert len(keepers) == 1

    def test_an_expiry_held_up_holds_up_no_other_deadline(self) -> None:
        """One expiry stuck (a slow disk, the audit log's lock held elsewhere) does not delay
        the next request's deadline: each passes on its own."""
        release = threading.Event()
        expired: list[str] = []
        second = threading.Event()

        def expire(request_id: str) -> None:
            expired.append(request_id)
            if request_id == "first":
                release.wait(30)
            else:
                second.set()

        deadlines = Deadlines(expire)
        try:
            deadlines.add("first", 0.05)
            deadlines.add("second", 0.1)
            assert second.wait(10), "the second deadline waited for the first expiry"
            assert expired == ["first", "second"]
        finally:
            release.set()
            deadlines.stop()

    def test_an_answered_request_does_not_time_out(self, asker: Asker, channel: Channel) -> None:
        """Answered before its deadline: the deadline is forgotten, and nothing claims the slot
        once it passes (the request stays answered `once`, settled by the asker)."""
        gate = ApprovalGate(asker, timeout_s=30)
        thread, hook = answer_when_filed(channel, "once")
        try:
            approval = gate.request("make deploy", "/", on_filed=hook, timeout_s=0.3)
        finally:
            thread.join(10)
        assert approval.outcome == "answered"
        later = gate.file("make later", "/", timeout_s=0.5)  # outlives the first's deadline
        assert asker.wait(later.id, 10) is not None
        status = channel.status(approval.request_id)  # type: ignore[arg-type]
        assert status.outcome is Outcome.ANSWERED and status.answer.decision == "once"  # type: ignore[union-attr]


# Files one request through a fresh interpreter's asker and tells what was loaded when the
# request was published (on_filed) and once file() returned: filing waits for no watchdog.
FILED_BEFORE_WATCHING = """\
import json, sys
from pending import Channel
from wisp import ApprovalGate, Asker
WATCHING = ("watchdog", "pending._watch", "pending._edge")
def loaded():
    return [m for m in WATCHING if m in sys.modules]
seen = {}
with Channel.open(sys.argv[1]) as channel, Asker(channel, entry_point="approvals") as asker:
    seen["asker made"] = loaded()
    gate = ApprovalGate(asker, timeout_s=5)
    request = gate.file(
        "make deploy", "/srv", on_filed=lambda r: seen.setdefault("filed", loaded())
    )
    seen["file returned"] = loaded()
    seen["watching"] = asker.watcher is not None and asker.watcher.status(request.id) is not None
print(json.dumps(seen))
"""


class TestFollowing:
    def test_a_request_is_filed_before_the_watch_loads(self, home: Path) -> None:
        """An asker loads and starts its watcher once its first request is published, not
        before: filing waits for no watchdog (~12-20 ms of a command's start); once file()
        returns, the request is followed (and withdrawn when the asker closes)."""
        done = subprocess.run(
            [sys.executable, "-c", FILED_BEFORE_WATCHING, str(home)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["asker made"] == [] and seen["filed"] == []
        assert seen["file returned"] == ["watchdog", "pending._watch", "pending._edge"]
        assert seen["watching"] is True
        with Channel.open(home) as channel:
            (status,) = channel.listing().statuses
        assert status.state is State.SETTLED and status.outcome is Outcome.WITHDRAWN

    def test_a_transition_that_decides_nothing_is_not_read_again(
        self, asker: Asker, channel: Channel
    ) -> None:
        """The asker's settler (its thread, or a pumped asker's wait) re-reads a request's
        files when the watcher reports an answer or an outcome, not when it reports the
        request filed (the watcher has just read it, and nothing is in its slot); answered,
        it is read and settled as ever."""
        settler_reads: list[str] = []
        settle_if_ended = asker._settle_if_ended

        def spy(request_id: str) -> None:
            settler_reads.append(request_id)
            settle_if_ended(request_id)

        asker._settle_if_ended = spy  # type: ignore[method-assign]
        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("make deploy", "/")
        wait_until(lambda: asker.watcher.status(request.id) is not None, what="filed seen")
        sentinel = gate.file("make sentinel", "/")  # its transition comes after the first's
        channel.answer(sentinel.id, "no", kind=request.kind, via="cli")
        assert asker.wait(sentinel.id, 10) is not None
        assert request.id not in settler_reads
        channel.answer(request.id, "once", kind=request.kind, via="cli")
        ending = asker.wait(request.id, 10)
        assert ending is not None and ending.outcome is Outcome.ANSWERED
        assert request.id in settler_reads

    def test_a_request_ended_is_followed_no_more(self, asker: Asker, channel: Channel) -> None:
        """Once a request has ended here, the asker's watcher forgets it and follows its ID no
        more (its own outcome's event is not read): a long-lived asker (an MCP server's) holds
        what it still waits on, not every request it ever filed. One still waiting is
        followed, and ends, as before."""
        gate = ApprovalGate(asker, timeout_s=30)
        waiting = gate.file("make still", "/")
        approval = ask(gate, channel, "once")
        assert approval.outcome == "answered" and approval.request_id is not None
        ended = approval.request_id
        assert ended not in channel.filed_ids and waiting.id in channel.filed_ids
        assert asker.watcher is not None
        assert asker.watcher.status(ended) is None
        assert ended not in {s.id for s in asker.watcher.statuses()}
        channel.answer(waiting.id, "no", kind=waiting.kind, via="cli")
        ending = asker.wait(waiting.id, 10)
        assert ending is not None and ending.outcome is Outcome.ANSWERED
        assert asker.watcher.statuses() == []

    def test_the_settler_is_woken_only_by_what_may_end_a_request(
        self, asker: Asker, channel: Channel
    ) -> None:
        """Of a request's transitions (filed, answered, settled by the asker itself), only the
        answer may be queued for the settler: the others cannot end a waiting request. (The
        answer may not be either: an asker that reads it first, as it checks once it follows
        the request, settles and stops following before the watcher's event comes; seen in 1
        of 10 soak runs.)"""
        queued: list[tuple[str, str]] = []
        gate = ApprovalGate(asker, timeout_s=30)
        assert ask(gate, channel, "once").outcome == "answered"  # the watch starts with it
        subscription = asker._subscription
        assert subscription is not None
        put = subscription.put

        def spy(item: Any) -> None:
            queued.append((item.event.value, item.id))
            put(item)

        subscription.put = spy  # type: ignore[method-assign]
        approval = ask(gate, channel, "once")
        assert approval.outcome == "answered" and approval.request_id is not None
        request_id = approval.request_id
        wait_until(lambda: channel.status(request_id).state is State.SETTLED, what="settled")
        later = ask(gate, channel, "no")  # its transitions come after the first's settled one
        assert later.outcome == "answered"
        assert [q for q in queued if q[1] == request_id] in ([], [("answered", request_id)])
        assert {event for event, _ in queued} <= {"answered"}


@pytest.fixture
def pumped(channel: Channel) -> Iterator[Asker]:
    with Asker(channel, entry_point="approvals", pumped=True) as a:
        yield a


class TestPumped:
    def test_the_wait_reads_and_settles_with_no_thread_of_its_own(
        self, pumped: Asker, channel: Channel
    ) -> None:
        """A pumped asker's wait reads the answer's event and settles it on the waiting
        thread: besides its deadlines and the watcher's liveness timer, no thread starts
        (no inotify reader, no settler)."""
        before = set(threading.enumerate())
        gate = ApprovalGate(pumped, timeout_s=30)
        approval = ask(gate, channel, "once")
        assert approval.approved and approval.outcome == "answered"
        started = {t.name for t in set(threading.enumerate()) - before if t.is_alive()}
        assert started == {"asker-deadlines", "pending-liveness"}, started
        status = channel.status(approval.request_id)  # type: ignore[arg-type]
        assert status.outcome is Outcome.ANSWERED

    def test_a_deadline_passing_wakes_the_wait(self, pumped: Asker, channel: Channel) -> None:
        """The deadline is kept on the deadlines thread, which records the time-out and
        wakes the wait asleep in poll(2): it returns timed out, not at its own limit."""
        gate = ApprovalGate(pumped, timeout_s=30)
        request = gate.file("make deploy", "/", timeout_s=0.2)
        started = time.monotonic()
        ending = pumped.wait(request.id, 60)
        assert ending is not None and ending.outcome is Outcome.TIMED_OUT
        assert time.monotonic() - started < 30  # woken, long before its limit (wide margin)

    def test_an_ending_that_makes_no_file_event_wakes_the_wait(
        self, pumped: Asker, channel: Channel
    ) -> None:
        """The deadline passes and its `timed-out` cannot be written (a failing disk): the
        deadlines thread ends the request unrecorded, which makes no file event, and only
        its wake ends the wait asleep in poll(2): it returns timed out, saying so."""
        gate = ApprovalGate(pumped, timeout_s=30)
        request = gate.file("make deploy", "/", timeout_s=0.2)
        started = time.monotonic()
        failing = Fault(op=Op.CREATE, suffix=".answer.json", nth=None)
        with io_hook(raise_at(failing, errno.EIO)):
            ending = pumped.wait(request.id, 60)
        assert ending is not None and ending.outcome is Outcome.TIMED_OUT
        assert ending.reason is not None and "could not be recorded" in ending.reason
        assert time.monotonic() - started < 30  # woken, long before its limit (wide margin)

    def test_two_threads_waiting_each_get_their_ending(
        self, pumped: Asker, channel: Channel
    ) -> None:
        """Two threads wait on a pumped asker at once (one pumps, the other sleeps on the
        asker's condition and takes over when the first is done): each gets its own
        request's ending, in whichever order the answers come."""
        gate = ApprovalGate(pumped, timeout_s=30)
        first, second = gate.file("make first", "/"), gate.file("make second", "/")
        endings: dict[str, Outcome] = {}

        def wait(request: Request) -> None:
            ending = pumped.wait(request.id, 60)
            if ending is not None:
                endings[request.id] = ending.outcome

        waiters = [threading.Thread(target=wait, args=(r,)) for r in (first, second)]
        for waiter in waiters:
            waiter.start()
        channel.answer(second.id, "once", kind=second.kind, via="cli")
        waiters[1].join(30)
        assert endings == {second.id: Outcome.ANSWERED}
        channel.answer(first.id, "no", kind=first.kind, via="cli")
        waiters[0].join(30)
        assert endings == {second.id: Outcome.ANSWERED, first.id: Outcome.ANSWERED}

    def test_a_wait_after_its_watcher_stopped_sleeps(self, pumped: Asker) -> None:
        """Its watcher stopped (as close() does, from another thread): a wait then sleeps on
        the asker's condition until its limit, as the threaded asker's does, and never spins
        on a pump that returns at once."""
        request = ApprovalGate(pumped, timeout_s=30).file("make deploy", "/")
        assert pumped.watcher is not None
        pumped.watcher.stop()
        cpu = time.process_time()
        assert pumped.wait(request.id, 1.0) is None
        assert time.process_time() - cpu < 0.5  # a spin would take the whole second

    def test_a_cancel_from_another_thread_wakes_the_wait(
        self, pumped: Asker, channel: Channel
    ) -> None:
        """Cancel() from another thread (the hook's, when its harness goes) ends a wait with
        no time limit at once; the request keeps waiting."""
        gate = ApprovalGate(pumped, timeout_s=30)
        request = gate.file("make deploy", "/")
        cancel = Cancel()
        timer = threading.Timer(0.2, cancel.cancel)
        timer.start()
        try:
            assert pumped.wait(request.id, None, cancel=cancel) is None
        finally:
            timer.join()
        assert channel.status(request.id).state is State.FILED

    def test_an_answer_that_came_is_applied_not_handed_over(self, channel: Channel) -> None:
        """A fact request filed by a pumped asker and answered `keep` while nobody waits:
        handing the asker's facts over (as `wisp facts request` does as it ends) reads the
        events already there first, so the answer is applied here, as the settler thread
        would have applied it, and the request is not handed over."""
        with Asker(channel, entry_point="facts", pumped=True) as asker:
            keeper = FactKeeper(asker)
            asked = keeper.request(
                fact_id="s1",
                subject="release",
                name="codename",
                value="BLUE HERON",
                source="chat",
                proposed_by="model",
            )
            assert asked.request_id is not None
            channel.answer(asked.request_id, "keep", kind=Kind.FACT, via="cli")
            assert asker.hand_over(Kind.FACT) == []
            keeper.close()
        status = channel.status(asked.request_id)
        assert status.state is State.SETTLED and status.outcome is Outcome.ANSWERED
        assert FactStore(channel.home).holding("release", "codename", "BLUE HERON") is not None
