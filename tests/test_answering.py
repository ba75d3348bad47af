"""The application layer's answering path, from Python alone: no CLI anywhere in these tests."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import audit_records, command, fact, in_terminal, question, run_wisp, wait_until

from pending import (
    Channel,
    Decision,
    InvalidId,
    Kind,
    Outcome,
    ServerLock,
    StaleRequest,
    State,
    UnknownRequest,
    Via,
    WrongKind,
)
from wisp import (
    Answerer,
    AnswerFate,
    ApprovalGate,
    Asker,
    Cancel,
    EntryPoint,
    FactStore,
    Inbox,
    QuestionAsker,
)
from wisp import (
    wait_until as app_wait_until,
)
from wisp.routes.notify import Notifier

# Fields that differ between any two runs of the same transition; the rest must agree.
_VOLATILE = {"ts", "pid", "id", "server", "factId", "value", "fact", "permanent", "result"}


def _quiet(home: Path) -> Notifier:
    return Notifier(home, settings={"notifications.enabled": False}, entry_point="test")


def _shape(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _VOLATILE}


class TestAnswerer:
    def test_answer_wakes_the_asker_and_reports_its_outcome(self, channel: Channel) -> None:
        """An answer given from Python reaches a waiting asker, which settles it; the report
        says the slot was won and what the asker made of it."""
        with Asker(channel, entry_point="test", notifier=_quiet(channel.home)) as asker:
            gate = ApprovalGate(asker, timeout_s=30)
            request = gate.file("make deploy", "/srv/shop")
            answerer = Answerer(channel, via=Via.TUI, entry_point=EntryPoint.TUI, wait_s=10)
            report = answerer.answer(request.id, Decision.ONCE, kind=Kind.COMMAND)
            assert report.won and report.asker is AnswerFate.SETTLED
            assert report.settled is not None and report.outcome is Outcome.ANSWERED
            assert report.answer.via == "tui" and not report.applied
            ending = asker.wait(request.id, 10)
            assert ending is not None and gate.verdict(ending).approved

    def test_a_handed_over_fact_is_applied_by_the_answerer(self, channel: Channel) -> None:
        """No asker lives: the answerer keeps the fact itself (delivery: applied), once."""
        with channel.server() as lock:
            request = fact(lock)
            channel.file(request)
        answerer = Answerer(channel, via=Via.RELAY, entry_point=EntryPoint.RELAY, wait_s=5)
        report = answerer.answer(request.id, Decision.KEEP, kind=Kind.FACT)
        assert report.won and report.applied and report.asker is AnswerFate.SETTLED
        assert report.settled is not None and report.settled.delivery == "applied"
        kept = FactStore(channel.home).list()
        assert [(f.value, f.request, f.id) for f in kept] == [
            ("BLUE HERON", request.id, report.settled.result)
        ]

    def test_a_command_whose_asker_died_after_the_answer_is_gone(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """The asker's lock is free when the answer lands: nobody will act on it, and the
        report says so rather than waiting out the whole wait."""
        request = command(server)
        channel.file(request)
        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.APPROVALS, wait_s=30)
        done: list[Any] = []
        worker = threading.Thread(
            target=lambda: done.append(answerer.answer(request.id, Decision.NO)), daemon=True
        )
        worker.start()
        wait_until(lambda: channel.status(request.id).answer is not None, what="the answer")
        server.release()
        worker.join(20)
        assert done and done[0].asker is AnswerFate.GONE and done[0].settled is None

    def test_losing_the_race_is_a_report_not_an_error(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """A second answerer loses: won is False and the winner's decision and face are
        given; nothing of the loser's is written."""
        request = question(server, options=("staging", "production"))
        channel.file(request)
        first = Answerer(channel, via=Via.TUI, entry_point=EntryPoint.TUI, wait_s=0)
        second = Answerer(channel, via=Via.RELAY, entry_point=EntryPoint.RELAY, wait_s=0)
        assert first.answer(request.id, Decision.ANSWER, text="staging").won
        lost = second.answer(request.id, Decision.DECLINE)
        assert not lost.won and lost.answer.decision == "answer" and lost.answer.via == "tui"
        assert channel.status(request.id).answer == lost.answer

    def test_refusals_raise_and_write_nothing(self, channel: Channel, server: ServerLock) -> None:
        """A fact answered as a command is refused with the channel's error and leaves no file
        behind; a second answer after a drop loses to it."""
        request = fact(server)
        channel.file(request)
        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.FACTS, wait_s=0)
        with pytest.raises(WrongKind):
            answerer.answer(request.id, Decision.ONCE, kind=Kind.COMMAND)
        assert channel.status(request.id).answer is None
        assert answerer.answer(request.id, Decision.DROP).won
        again = answerer.answer(request.id, Decision.KEEP)
        assert not again.won and again.answer.decision == "drop"

    def test_a_stale_request_is_refused(self, channel: Channel) -> None:
        """A command whose asker is gone is stale: the answerer refuses it."""
        with channel.server() as lock:
            request = command(lock)
            channel.file(request)
        with pytest.raises(StaleRequest):
            Answerer(channel, via=Via.CLI, entry_point=EntryPoint.APPROVALS).answer(
                request.id, Decision.ONCE
            )

    def test_python_and_cli_answers_audit_the_same_records(
        self, home: Path, channel: Channel
    ) -> None:
        """A fact kept through Answerer from Python and one kept with `wisp facts keep` from a
        terminal leave the same audit records, field for field (times, ids and pids aside)."""
        trails = []
        for value, answer_with in (("ONE", "python"), ("TWO", "cli")):
            filed = run_wisp("facts", "request", "release", "codename", value).stdout.strip()
            before = len(audit_records(home))
            if answer_with == "python":
                Answerer(channel, via=Via.CLI, entry_point=EntryPoint.FACTS).answer(
                    filed, Decision.KEEP, kind=Kind.FACT
                )
            else:
                code, output = in_terminal("facts", "keep", filed)
                assert code == 0, output
            trails.append([_shape(r) for r in audit_records(home)[before:]])
        python_trail, cli_trail = trails
        assert [r["event"] for r in python_trail] == [
            "approval.answered",
            "fact.scope.changed",
            "approval.settled",
        ]
        assert python_trail == cli_trail

    def test_answering_without_waiting_reads_the_request_once(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Answered as a known kind, without waiting: the request is read once (by the
        channel's own check, which hands it back for the audit and the report), and every
        refusal is the one a read first would have given."""
        reads: list[str] = []
        read_group = channel.read_group

        def spy(request_id: str, names: Any = None, kinds: Any = None) -> Any:
            if names is None:  # a whole group (the outcome slot alone is read after)
                reads.append(request_id)
            return read_group(request_id, names, kinds)

        channel.read_group = spy  # type: ignore[method-assign]
        answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.APPROVALS, wait_s=0)
        request = command(server)
        channel.file(request)
        report = answerer.answer(request.id, Decision.ONCE, kind=Kind.COMMAND)
        assert report.won and report.request == request and reads == [request.id]
        answered = [r for r in audit_records(channel.home) if r["event"] == "approval.answered"]
        assert [(r["id"], r["command"]) for r in answered] == [(request.id, "make deploy")]
        again = answerer.answer(request.id, Decision.NO, kind=Kind.COMMAND)
        assert not again.won and again.answer.decision == "once" and again.request == request
        with pytest.raises(WrongKind):
            answerer.answer(request.id, Decision.KEEP, kind=Kind.FACT)
        with pytest.raises(UnknownRequest):
            answerer.answer("0123456789abcdef", Decision.ONCE, kind=Kind.COMMAND)
        with pytest.raises(InvalidId):
            answerer.answer("../x", Decision.ONCE, kind=Kind.COMMAND)


class TestAsker:
    def test_file_returns_at_once_and_wait_can_be_repeated(self, channel: Channel) -> None:
        """A question filed returns at once; a bounded wait ends empty; a later wait gets the
        answer given in between (settled by the asker while nobody waited)."""
        with Asker(channel, entry_point="test", notifier=_quiet(channel.home)) as asker:
            questions = QuestionAsker(asker, timeout_s=60)
            request = questions.file("Which environment?", options=("staging", "prod"))
            assert asker.wait(request.id, 0.05) is None
            Answerer(channel, via=Via.CLI, entry_point=EntryPoint.QUESTIONS, wait_s=0).answer(
                request.id, Decision.ANSWER, text="prod"
            )
            wait_until(lambda: channel.status(request.id).settled is not None, what="settled")
            ending = asker.wait(request.id, 5)
            assert ending is not None
            assert questions.reply(ending).text == "prod"

    def test_a_cancelled_wait_returns_at_once_and_leaves_the_request(
        self, channel: Channel
    ) -> None:
        """Cancelling a wait from another thread ends it at once; the request still waits."""
        with Asker(channel, entry_point="test", notifier=_quiet(channel.home)) as asker:
            request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/")
            cancel = Cancel()
            timer = threading.Timer(0.1, cancel.cancel)
            timer.start()
            assert asker.wait(request.id, 30, cancel=cancel) is None
            assert channel.status(request.id).state == "filed"

    def test_the_deadline_times_out_without_a_waiter(self, channel: Channel) -> None:
        """Nobody is in wait(): the request's own timer still claims timed-out at its
        deadline, and a later wait reports it."""
        with Asker(channel, entry_point="test", notifier=_quiet(channel.home)) as asker:
            request = ApprovalGate(asker, timeout_s=0.2).file("make deploy", "/")
            wait_until(lambda: channel.status(request.id).settled is not None, what="timeout")
            ending = asker.wait(request.id, 5)
            assert ending is not None and ending.outcome is Outcome.TIMED_OUT

    def test_waiting_on_a_request_it_did_not_file_is_refused(self, channel: Channel) -> None:
        """wait() names an ID this asker never filed: UnknownRequest, not a hang."""
        from pending import UnknownRequest

        with (
            Asker(channel, entry_point="test", notifier=_quiet(channel.home)) as asker,
            pytest.raises(UnknownRequest),
        ):
            asker.wait("0123456789abcdef", 1)


class TestInbox:
    def test_snapshot_then_transitions(self, channel: Channel, server: ServerLock) -> None:
        """The inbox shows what waits, then each change as it happens."""
        first = command(server)
        channel.file(first)
        with Inbox(channel, entry_point=EntryPoint.TUI) as inbox:
            subscription, snapshot = inbox.subscribe()
            assert [s.id for s in snapshot] == [first.id]
            second = fact(server)
            channel.file(second)
            item = subscription.get(timeout=10)
            assert item is not None and getattr(item, "id", None) == second.id


class TestWaitUntil:
    def test_rechecks_after_each_wake_until_a_result(self) -> None:
        """The shared wait helper re-runs its check after every wake and returns its
        first result; with nothing, it gives up at the timeout."""
        values = iter([None, None, "done"])
        wakes: list[float | None] = []
        got = app_wait_until(
            lambda: next(values), wakes.append, timeout_s=None, monotonic=lambda: 0.0
        )
        assert got == "done" and wakes == [None, None]
        clock = iter([0.0, 0.0, 2.0])
        assert (
            app_wait_until(
                lambda: None, lambda s: None, timeout_s=1.0, monotonic=lambda: next(clock)
            )
            is None
        )


# One answer given in a process of its own with few descriptors to spare: `spare` more than it
# holds once its channel is open and its request filed. It prints what became of the answer.
_SPARE_DESCRIPTORS = """\
import json, os, resource, sys
sys.path.insert(0, sys.argv[3])
from helpers import command
from pending import Channel, Decision, Kind, Via
from wisp import Answerer, EntryPoint

home, spare = sys.argv[1], int(sys.argv[2])
channel = Channel.open(home)
lock = channel.server().__enter__()  # held to the process's end: its request is alive
request = command(lock)
channel.file(request)
answerer = Answerer(channel, via=Via.CLI, entry_point=EntryPoint.APPROVALS, wait_s=1.0)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1 + spare, hard))
try:
    report = answerer.answer(request.id, Decision.ONCE, kind=Kind.COMMAND)
    said = f"report {report.asker}"
except Exception as exc:
    said = f"raised {type(exc).__name__}"
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
answered = channel.status(request.id).answer is not None
print(json.dumps({"said": said, "answered": answered}))
"""


class TestAWatchThatCannotStart:
    def test_an_answer_given_stands_and_is_not_waited_on(self, tmp_path: Path) -> None:
        """The watch for the asker's outcome starts once the answer is out. With one
        descriptor after another to spare, the answer is either refused with nothing written
        (too few to publish it), or given and reported: a watch that could not start then
        leaves it unwaited for, with a warning, never an error after the answer stood."""
        import json
        import subprocess
        import sys

        tests = str(Path(__file__).parent)
        seen = []
        for spare in range(12):
            home = tmp_path / f"home-{spare}"
            done = subprocess.run(
                [sys.executable, "-c", _SPARE_DESCRIPTORS, str(home), str(spare), tests],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            result = json.loads(done.stdout)
            unwatched = "outcome cannot be followed" in done.stderr
            seen.append((result["said"], result["answered"], unwatched))
            if result["said"].startswith("raised"):
                assert not result["answered"], (spare, result, done.stderr)
            else:
                assert result == {"said": f"report {AnswerFate.LATE}", "answered": True}
                if not unwatched:
                    break  # enough to spare: watched, and waited on (nobody settles it here)
        assert (f"report {AnswerFate.LATE}", True, True) in seen, seen
        assert seen[-1] == (f"report {AnswerFate.LATE}", True, False), seen


class TestWaiting:
    """`wisp.program.waiting.waiting`: the listing the faces show, an empty channel read
    unopened."""

    def test_an_empty_channel_is_not_opened(self, channel: Channel) -> None:
        """Nothing waits, and the channel was not opened (no time read): nothing to sweep."""
        from wisp.program.waiting import waiting

        found = waiting(
            kinds=None, states=None, via=Via.CLI, entry_point=EntryPoint.PENDING, home=channel.home
        )
        assert found == ((), (), None)

    def test_a_request_is_listed_after_the_sweep(self, channel: Channel) -> None:
        """A request filed by a live asker is listed (its kind asked for), with the time the
        listing looked; one whose asker stopped is settled stale by the sweep first."""
        from wisp.program.waiting import waiting

        with channel.server() as server:
            request = command(server)
            channel.file(request)
            found = waiting(
                kinds=[Kind.COMMAND],
                states=[State.FILED],
                via=Via.CLI,
                entry_point=EntryPoint.PENDING,
                home=channel.home,
            )
            assert [s.id for s in found.statuses] == [request.id]
            assert found.now is not None and found.problems == ()
        after = waiting(
            kinds=None,
            states=[State.FILED],
            via=Via.CLI,
            entry_point=EntryPoint.PENDING,
            home=channel.home,
        )
        assert after.statuses == ()
        assert channel.status(request.id).state is State.SETTLED
