"""Ask from one terminal, answer from another: command approvals end to end."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    Asker,
    AskingCommand,
    audit_records,
    fact,
    in_terminal,
    run_wisp,
    server_pid,
    wait_until,
)

from pending import Channel, Kind, Outcome, State
from wisp._asking import Asker as AskingServer
from wisp.kinds.command_gate import ApprovalGate
from wisp.stores.grants import project_of


class TestRoundTrip:
    def test_approve_once(self, home: Path) -> None:
        """An asker waits; a person approves under a pty; the asker prints it and exits 0;
        the audit log holds pending, answered and settled."""
        asking = AskingCommand("approvals", "request", "--", "make", "deploy")
        assert "make deploy" in asking.prompt
        code, output = in_terminal("approvals", "approve", asking.id)
        assert code == 0, output
        assert f"approved once ({asking.id}); the asker has it." in output
        code, out, _ = asking.result()
        assert (code, out.strip()) == (0, "approved once")
        events = [(r["event"], r["pid"]) for r in audit_records(home) if r.get("id") == asking.id]
        # In order within each process; across processes the asker may settle (and audit)
        # before the answering process has written its own line.
        asker = server_pid(home, asking.id)
        by_asker = [e for e, pid in events if pid == asker]
        by_answerer = [e for e, pid in events if pid != asker]
        assert by_asker == ["approval.pending", "notification", "approval.settled"]
        assert by_answerer == ["approval.answered"]
        answered = next(r for r in audit_records(home) if r["event"] == "approval.answered")
        assert (answered["via"], answered["kind"], answered["command"]) == (
            "cli",
            "command",
            "make deploy",
        )
        settled = next(r for r in audit_records(home) if r["event"] == "approval.settled")
        assert (settled["outcome"], settled["decision"], settled["entryPoint"]) == (
            "answered",
            "once",
            "approvals",
        )

    def test_deny_with_reason(self, home: Path) -> None:
        """A denial exits 1 and carries the person's reason to the asker."""
        asking = AskingCommand("approvals", "request", "--json", "--", "rm", "-rf", "build")
        code, output = in_terminal("approvals", "deny", asking.id, "--reason", "not today")
        assert code == 0 and "denied" in output
        code, out, _ = asking.result()
        verdict = json.loads(out)
        assert code == 1
        assert verdict == {
            "id": asking.id,
            "approved": False,
            "outcome": "answered",
            "scope": None,
            "grant": None,
            "reason": "not today",
        }

    def test_json_verdict_when_approved(self, home: Path) -> None:
        """`--json` prints the verdict as one object."""
        asking = AskingCommand("approvals", "request", "--json", "--cwd", "/tmp", "--", "ls")
        in_terminal("approvals", "approve", asking.id, "--scope", "session")
        code, out, _ = asking.result()
        assert code == 0
        assert json.loads(out) == {
            "id": asking.id,
            "approved": True,
            "outcome": "answered",
            "scope": "session",
            "grant": None,
            "reason": None,
        }

    @pytest.mark.usefixtures("native_watching")  # woken by an event: needs inotify
    def test_the_answer_wakes_the_asker_by_event(self, channel: Channel) -> None:
        """From the answer's publication to the gate's return (woken, checked, settled) is
        far under the 200 ms a polling loop would cost: the median of five round trips is
        under 100 ms (bench/latency.py measures the wake-up itself properly)."""
        with AskingServer(channel, entry_point="approvals") as asker:
            gate = ApprovalGate(asker, timeout_s=30)
            times = [answer_round_trip(gate, channel) for _ in range(5)]
        assert statistics.median(times) < 0.1, times


def answer_round_trip(gate: ApprovalGate, channel: Channel) -> float:
    """Seconds from publishing an answer to the waiting gate returning its approval."""
    filed = threading.Event()
    ids: list[str] = []
    got: list[tuple[float, bool]] = []

    def ask() -> None:
        approval = gate.request(
            "make test", "/srv", on_filed=lambda r: (ids.append(r.id), filed.set())
        )
        got.append((time.monotonic(), approval.approved))

    thread = threading.Thread(target=ask)
    thread.start()
    assert filed.wait(10)
    time.sleep(0.05)  # let the asker settle into its wait: an idle asker is the case measured
    t0 = time.monotonic()
    channel.answer(ids[0], "once", kind=Kind.COMMAND, via="cli")
    thread.join(10)
    woke, approved = got[0]
    assert approved
    return woke - t0


class TestRefusals:
    def test_not_a_terminal(self, home: Path, channel: Channel) -> None:
        """Without a terminal on stdin, an answer is refused with exit 2 and nothing written."""
        asking = AskingCommand("approvals", "request", "--timeout", "30", "--", "ls")
        try:
            out = run_wisp("approvals", "approve", asking.id, stdin=subprocess.DEVNULL)
            assert out.returncode == 2
            assert "only from a terminal" in out.stderr and "Nothing was written" in out.stderr
            assert channel.status(asking.id).state is State.FILED
        finally:
            asking.process.send_signal(signal.SIGINT)
            asking.result()

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (("approvals", "approve", "a1b2c3d4"), "no request a1b2c3d4"),
            (("approvals", "approve", "../etc/passwd"), "is not a request ID"),
            (("approvals", "deny", "A1B2C3D4"), "no request a1b2c3d4"),  # any case
            (("questions", "answer", "a1b2c3d4", "yes"), "no request a1b2c3d4"),
            (("approvals", "approve", "a1b2c3d4", "--scope", "forever"), "is not one of 'once'"),
        ],
    )
    def test_unknown_and_malformed(self, home: Path, args: tuple[str, ...], message: str) -> None:
        """Unknown and malformed IDs are refused, exit 1 (a bad option: 2), nothing written."""
        code, output = in_terminal(*args)
        assert code == (2 if "--scope" in args else 1)
        assert message in output and "Traceback" not in output
        assert not (home / "pending").exists() or not [
            p for p in (home / "pending").iterdir() if p.name.endswith(".answer.json")
        ]

    def test_already_answered(self, home: Path, channel: Channel) -> None:
        """A second answer is refused with who answered, how and when."""
        with channel.server() as lock:
            from helpers import command

            req = command(lock)
            channel.file(req)
            channel.answer(req.id, "no", kind=Kind.COMMAND, via="tui")
            code, output = in_terminal("approvals", "approve", req.id)
        assert code == 1
        assert "already answered 'no'" in output and "via tui" in output

    def test_text_from_a_hostile_file_is_made_visible(self, home: Path, channel: Channel) -> None:
        """An answer file whose `user` carries an escape sequence and a bidi override: the
        refusal shows them as markers; nothing raw reaches the terminal."""
        from helpers import command

        with channel.server() as lock:
            req = command(lock)
            channel.file(req)
            hostile = channel._new_answer(req, "no", via="cli")._replace(
                user="eve\x1b]0;owned\x07\u202eli"
            )
            channel._publish_answer(hostile)
            code, output = in_terminal("approvals", "approve", req.id)
        assert code == 1
        assert "\x1b]0" not in output and "\u202e" not in output
        assert "eve⟨ESC⟩]0" in output and "⟨U+202E⟩" in output

    def test_settled_after_a_timeout(self, home: Path) -> None:
        """A short timeout ends timed-out, exit 124; answering then is refused as ended."""
        asking = AskingCommand("approvals", "request", "--timeout", "0.5", "--", "ls")
        code, out, _ = asking.result()
        assert (code, out.strip()) == (124, "timed out")
        code, output = in_terminal("approvals", "approve", asking.id)
        assert code == 1 and "already ended: timed-out" in output
        assert [r["outcome"] for r in audit_records(home) if r["event"] == "approval.settled"] == [
            "timed-out"
        ]

    def test_wrong_kind_names_the_right_command(self, home: Path, channel: Channel) -> None:
        """A fact approved as a command is refused, naming `wisp facts keep`."""
        with channel.server() as lock:
            req = fact(lock)
            channel.file(req)
            code, output = in_terminal("approvals", "approve", req.id)
            assert code == 1
            assert f"`wisp facts keep {req.id}`" in output
            code, output = in_terminal("questions", "decline", req.id)
            assert code == 1 and "is a fact request" in output

    def test_a_killed_asker(self, home: Path) -> None:
        """SIGKILL: `wisp pending` sweeps it first, so it is not among what waits; `--all`
        shows it settled stale; answering is refused, and a sweep has settled it stale."""
        child = Asker(home, "command")
        (request_id,) = child.filed()
        child.kill()
        assert json.loads(run_wisp("pending", "--json").stdout) == []
        rows = json.loads(run_wisp("pending", "--all", "--json").stdout)
        assert [(r["id"], r["outcome"]) for r in rows] == [(request_id, "stale")], rows
        code, output = in_terminal("approvals", "approve", request_id)
        assert code == 1 and "stale" in output
        run_wisp("pending", "sweep")
        with Channel.open(home) as channel:
            settled = channel.status(request_id).settled
            assert settled is not None and settled.outcome is Outcome.STALE


def interrupted_as_it_settles(*args: str) -> dict[str, Any]:
    """`wisp approvals request --json ARGS` run in this process, a SIGINT sent to it right
    after its outcome file is linked: its verdict, once it has exited 1."""
    from typer.testing import CliRunner

    from pending.testing import IoStep, Op, Phase, io_hook
    from wisp.cli import app

    def interrupt_once_settled(step: IoStep) -> None:
        if (step.op, step.phase) == (Op.LINK, Phase.AFTER) and step.name.endswith(".settled.json"):
            os.kill(os.getpid(), signal.SIGINT)

    with io_hook(interrupt_once_settled):
        result = CliRunner().invoke(app, ["approvals", "request", "--json", *args])
    assert result.exit_code == 1, result.output
    verdict: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return verdict


class TestWithdraw:
    def test_ctrl_c_withdraws(self, home: Path) -> None:
        """Ctrl-C on the asker withdraws the request before exiting 1."""
        asking = AskingCommand("approvals", "request", "--", "make", "deploy")
        asking.process.send_signal(signal.SIGINT)
        code, out, _ = asking.result()
        assert code == 1 and out.startswith("withdrawn")
        with Channel.open(home) as channel:
            status = channel.status(asking.id)
        assert status.state is State.SETTLED and status.outcome is Outcome.WITHDRAWN
        assert "approval.withdrawn" in [r["event"] for r in audit_records(home)]
        code, output = in_terminal("approvals", "approve", asking.id)
        assert code == 1 and "withdrawn" in output

    def test_a_signal_while_the_answer_settles_says_it_was_answered(
        self, home: Path, channel: Channel
    ) -> None:
        """A Ctrl-C that comes while the asker settles the person's answer waits for the
        settling (never cut short); the command then says the request was answered before it
        was interrupted, with its ID, and approves nothing (exit 1), as when the Ctrl-C comes
        just before the settling."""
        from pending import Via

        def answer_when_filed() -> None:
            filed = wait_until(lambda: channel.listing().statuses, what="a request filed")
            channel.answer(filed[0].id, "once", kind=Kind.COMMAND, via=Via.CLI)

        answering = threading.Thread(target=answer_when_filed)
        answering.start()
        verdict = interrupted_as_it_settles("--", "make", "deploy")
        answering.join()
        (status,) = channel.listing().statuses
        assert status.outcome is Outcome.ANSWERED  # the settling was not cut short
        assert verdict["id"] == status.id and verdict["approved"] is False
        assert verdict["reason"] == "withdrawn with Ctrl-C after it was answered"

    def test_a_signal_as_the_request_times_out_says_it_timed_out(self, channel: Channel) -> None:
        """A Ctrl-C that comes just as the request's deadline settles it `timed-out`: the
        command says the request timed out before it was interrupted, with its ID, and
        approves nothing (exit 1)."""
        verdict = interrupted_as_it_settles("--timeout", "1", "--", "make", "deploy")
        (status,) = channel.listing().statuses
        assert status.outcome is Outcome.TIMED_OUT  # the settling was not cut short
        assert verdict["id"] == status.id and verdict["approved"] is False
        assert verdict["reason"] == "withdrawn with Ctrl-C after it timed out"


class TestAnswerReport:
    def test_the_answerer_reports_the_askers_outcome(self, home: Path, channel: Channel) -> None:
        """After answering, the command waits for the watching asker's outcome and says so."""
        asking = AskingCommand("approvals", "request", "--", "ls")
        wait_until(lambda: channel.status(asking.id).state is State.FILED)
        code, output = in_terminal("approvals", "approve", asking.id, "--scope", "project")
        asking.result()
        said = f"approved project {project_of(str(Path.cwd()))} ({asking.id}); the asker has it."
        assert code == 0 and said in output
