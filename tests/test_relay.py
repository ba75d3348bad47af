"""`wisp relay` as a real child process: hello and effects, requests filed and withdrawn while
it runs, answers won and lost (against the CLI under a pseudo-terminal), bad lines, EOF."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from helpers import Asker as AskerProcess
from helpers import audit_records, command, fact, question, read_line, wait_until, wisp_spawn
from relayproc import RelayProcess, write_config

from pending import Channel, ServerLock, State
from wisp import ApprovalGate, Asker, Notifier, QuestionAsker
from wisp.relay.protocol import MAX_LINE_BYTES

WAIT_S = 3  # answer.waitSeconds in these tests: how long the relay waits for an asker


@pytest.fixture
def home(home: Path) -> Path:
    write_config(home, answer__waitSeconds=WAIT_S)
    return home


@pytest.fixture
def relay(home: Path, channel: Channel) -> Iterator[RelayProcess]:
    with RelayProcess(home) as process:
        yield process


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    """A real asking server in this process: it settles every answer as it comes."""
    quiet = Notifier(channel.home, settings={"notifications.enabled": False})
    with Asker(channel, entry_point="approvals", client="test-asker", notifier=quiet) as asking:
        yield asking


def at_terminal(*args: str) -> pexpect.spawn:
    """`wisp ARGS` with a pseudo-terminal for stdin and stdout, as a person runs it."""
    return pexpect.spawn(*wisp_spawn(*args), encoding="utf-8", timeout=30)


def approvals(lines: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(line["kind"], line["id"]) for line in lines if line["type"] == "approval"]


class TestHello:
    @pytest.mark.parametrize(
        ("effects", "kinds"),
        [
            (["approve-mcp"], {"command"}),
            (["keep-facts"], {"fact"}),
            (["answer-questions"], {"question"}),
            (["approve-mcp", "keep-facts", "answer-questions"], {"command", "fact", "question"}),
            ([], set()),
            (["notify"], set()),
        ],
    )
    def test_each_effect_brings_its_kind(
        self,
        relay: RelayProcess,
        channel: Channel,
        server: ServerLock,
        effects: list[str],
        kinds: set[str],
    ) -> None:
        """A request is sent only to a front end that declared its kind's effect; one that
        declares none of them gets no requests."""
        for build in (command, fact, question):
            channel.file(build(server))
        relay.send({"type": "hello", "effects": effects})
        lines = relay.until(type="ready")
        ready = lines[-1]
        assert {kind for kind, _id in approvals(lines)} == kinds
        assert ready["kinds"] == sorted(kinds) and ready["waiting"] == len(kinds)

    def test_no_hello_means_commands_only(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """A front end that says nothing (0.16.0's) is sent command approvals only, and never
        a `ready` line; requests filed later follow the same rule."""
        first = command(server)
        channel.file(fact(server))
        channel.file(first)
        assert approvals([relay.expect(type="approval")]) == [("command", first.id)]
        later_fact, later = fact(server), command(server)
        channel.file(later_fact)
        channel.file(later)
        # Transitions are relayed in order: the fact's would have come before this one.
        relay.expect(type="approval", id=later.id)
        assert all(line["type"] == "approval" and line["kind"] == "command" for line in relay.seen)

    def test_unknown_effects_are_ignored_and_the_hello_audited(
        self, relay: RelayProcess, home: Path
    ) -> None:
        """Unknown effects are left out (listed back as ignored); the hello is audited as
        host.hello by the application, with the effects taken and those ignored."""
        relay.send_raw(b"")  # nothing: not a line
        ready = relay.hello(["keep-facts", "show-output"], via="tui")
        assert ready["effects"] == ["keep-facts"] and ready["ignored"] == ["show-output"]
        hello = wait_until(
            lambda: [r for r in audit_records(home) if r["event"] == "host.hello"], what="audit"
        )
        assert hello[0]["effects"] == ["keep-facts"]
        assert hello[0]["ignored"] == ["show-output"]
        # The hello's own `via` is a front end's word about itself: not taken (finding 16).
        assert (hello[0]["client"], hello[0]["via"], hello[0]["entryPoint"]) == (
            "test",
            "relay",
            "relay",
        )
        assert ready["via"] == "relay"

    def test_only_the_command_line_makes_a_relay_the_tuis(self, home: Path, asker: Asker) -> None:
        """`wisp relay --via tui` (as `wisp tui` starts it) answers and audits as tui; a
        hello saying `via: tui` to a plain relay does not (above)."""
        with RelayProcess(home, args=("--via", "tui")) as relay:
            assert relay.hello()["via"] == "tui"
            request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
            relay.expect(type="approval", id=request.id)
            relay.send({"type": "answer", "id": request.id, "decision": "once"})
            answered = relay.expect(type="answered", id=request.id)
            assert answered["won"] and answered["answer"]["via"] == "tui"
        entries = [r for r in audit_records(home) if r["event"] == "host.hello"]
        assert (entries[0]["via"], entries[0]["entryPoint"]) == ("tui", "tui")

    def test_a_late_hello_still_counts_if_first(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """A hello after the relay's wait, but still its first line, changes what is sent:
        requests of kinds it left out are withdrawn (`undeclared`), its kinds are sent."""
        cmd, kept = command(server), fact(server)
        channel.file(cmd)
        channel.file(kept)
        relay.expect(type="approval", id=cmd.id)  # served as a front end without hello
        relay.send({"type": "hello", "effects": ["keep-facts"]})
        lines = relay.until(type="ready")
        assert {"type": "withdrawn", "id": cmd.id, "state": "undeclared"}.items() <= next(
            line for line in lines if line["type"] == "withdrawn"
        ).items()
        assert approvals(lines) == [("fact", kept.id)]

    def test_a_second_hello_is_refused(self, relay: RelayProcess) -> None:
        """Hello comes once, first; another is refused and changes nothing."""
        relay.hello(["approve-mcp"])
        relay.send({"type": "hello", "effects": ["keep-facts"]})
        error = relay.expect(type="error")
        assert error["error"] == "hello-not-first" and "first line" in error["message"]


class TestWhileItRuns:
    def test_filed_then_withdrawn_by_its_asker(self, relay: RelayProcess, asker: Asker) -> None:
        """A request filed while the relay runs is sent at once; when its asker withdraws it,
        a withdrawn line follows, so no dialog stays open on it."""
        relay.hello()
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
        line = relay.expect(type="approval", id=request.id)
        assert (line["command"], line["cwd"], line["state"]) == ("make deploy", "/srv", "filed")
        assert line["server"]["client"] == "test-asker" and line["server"]["alive"] is True
        asker.withdraw(request.id)
        gone = relay.expect(type="withdrawn", id=request.id)
        assert gone["state"] == "withdrawn"

    def test_answered_elsewhere(self, relay: RelayProcess, asker: Asker, home: Path) -> None:
        """Answered from a terminal (the CLI under a pty): withdrawn, naming who answered."""
        relay.hello()
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
        relay.expect(type="approval", id=request.id)
        child = at_terminal("approvals", "deny", request.id)
        child.expect(pexpect.EOF)
        gone = relay.expect(type="withdrawn", id=request.id)
        assert gone["answer"]["decision"] == "no" and gone["answer"]["via"] == "cli"
        assert "by" in gone["reason"] and "via cli" in gone["reason"]

    def test_stale_when_its_asker_dies(self, relay: RelayProcess, home: Path) -> None:
        """A command whose asker is killed goes stale: withdrawn with state stale."""
        relay.hello()
        dying = AskerProcess(home, "command", "question")
        ids = dying.filed()
        for request_id in ids:
            relay.expect(type="approval", id=request_id)
        dying.kill()
        for request_id in ids:
            gone = relay.expect(type="withdrawn", id=request_id)
            assert gone["state"] == "stale" and "stale" in gone["reason"]

    def test_a_fact_whose_asker_stops_is_handed_over_in_place(
        self, relay: RelayProcess, channel: Channel
    ) -> None:
        """A fact request outlives its asker: it is sent again as handed-over, still
        answerable, never withdrawn."""
        relay.hello()
        lock = channel.server().acquire()
        request = fact(lock)
        channel.file(request)
        assert relay.expect(type="approval", id=request.id)["state"] == "filed"
        lock.release()
        line = relay.expect(type="approval", id=request.id)
        assert line["state"] == "handed-over" and line["server"]["alive"] is False
        assert not [x for x in relay.seen if x["type"] == "withdrawn"]

    def test_the_home_removed_after_its_channel_directory(
        self, relay: RelayProcess, home: Path
    ) -> None:
        """`$WISP_HOME/pending` removed, the relay told so, then the whole home, while a
        descriptor is still open on it (as an asker's channel holds one): the relay says the
        home went and ends with status 2. The home's own watch says nothing until that
        descriptor is closed; the directory holding the home hears the `rmdir` itself."""
        relay.hello()
        held = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
        try:
            shutil.rmtree(home / "pending")
            assert relay.process.stderr is not None
            while "waiting for it again" not in (line := read_line(relay.process.stderr)):
                assert line, "the relay ended before saying the channel directory went"
            shutil.rmtree(home)
            error = relay.expect(type="error")
            assert error["fatal"] is True and "(WISP_HOME) was removed" in error["message"]
            assert relay.close() == 2
        finally:
            os.close(held)

    def test_a_burst(self, relay: RelayProcess, channel: Channel, server: ServerLock) -> None:
        """Two hundred requests filed at once are each sent, once."""
        relay.hello()
        ids = []
        for _ in range(200):
            request = command(server)
            channel.file(request)
            ids.append(request.id)
        for _ in ids:
            relay.expect(type="approval")
        assert sorted(i for _k, i in approvals(relay.seen)) == sorted(ids)


class TestAnswers:
    def test_won_and_settled(self, relay: RelayProcess, asker: Asker, home: Path) -> None:
        """An answer wins, the asker settles it, and the report says so; it is written with
        via relay and audited by the application under entry point relay."""
        relay.hello()
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
        relay.expect(type="approval", id=request.id)
        relay.send({"type": "answer", "id": request.id, "decision": "approve", "scope": "session"})
        answered = relay.expect(type="answered", id=request.id)
        assert answered["won"] is True and answered["decision"] == "session"
        assert (answered["outcome"], answered["asker"]) == ("answered", "settled")
        assert answered["answer"]["via"] == "relay"
        ending = asker.wait(request.id, 10)
        assert ending is not None and ending.decision == "session"
        records = [r for r in audit_records(home) if r["event"] == "approval.answered"]
        assert [(r["id"], r["via"], r["entryPoint"]) for r in records] == [
            (request.id, "relay", "relay")
        ]
        assert not [x for x in relay.seen if x["type"] == "withdrawn"]

    def test_via_tui(self, home: Path, asker: Asker, channel: Channel) -> None:
        """A relay started `--via tui` (as `wisp tui` starts it) answers as the TUI; one
        whose front end only says so in its hello answers as the relay."""
        for args, hello_via, via in (((), "tui", "relay"), (("--via", "tui"), None, "tui")):
            with RelayProcess(home, args=args) as relay:
                relay.hello(**({"via": hello_via} if hello_via else {}))
                request = QuestionAsker(asker, timeout_s=60).file("Which?", options=("a", "b"))
                relay.expect(type="approval", id=request.id)
                relay.send({"type": "answer", "id": request.id, "decision": "answer", "text": "b"})
                relay.expect(type="answered", id=request.id)
            answer = channel.status(request.id).answer
            assert answer is not None and (answer.via, answer.text) == (via, "b")

    def test_lost_to_the_cli(
        self, relay: RelayProcess, channel: Channel, server: ServerLock, home: Path
    ) -> None:
        """The CLI answered first (under a pty); the relay's answer loses and is told who won,
        with nothing written."""
        relay.hello()
        request = command(server)
        channel.file(request)
        relay.expect(type="approval", id=request.id)
        child = at_terminal("approvals", "approve", request.id, "--scope", "project")
        relay.expect(type="withdrawn", id=request.id)
        relay.send({"type": "answer", "id": request.id, "decision": "once"})
        answered = relay.expect(type="answered", id=request.id)
        assert answered["won"] is False
        assert (answered["answer"]["decision"], answered["answer"]["via"]) == ("project", "cli")
        child.expect(pexpect.EOF)
        child.close()
        status = channel.status(request.id)
        assert status.answer is not None and status.answer.via == "cli"

    def test_a_race_with_the_cli_has_one_winner(
        self, relay: RelayProcess, asker: Asker, channel: Channel, home: Path
    ) -> None:
        """Relay and CLI answer at once: exactly one wins, and the loser is told the winner."""
        relay.hello()
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
        relay.expect(type="approval", id=request.id)
        child = at_terminal("approvals", "deny", request.id)
        relay.send({"type": "answer", "id": request.id, "decision": "once"})
        child.expect(pexpect.EOF)
        cli_said = child.before
        child.close()
        reply = relay.expect(
            lambda line: (
                line.get("id") == request.id and line["type"] in ("answered", "error", "withdrawn")
            )
        )
        winner = channel.status(request.id).answer
        assert winner is not None
        if winner.via == "relay":
            assert reply["type"] == "answered" and reply["won"] is True
            assert child.exitstatus == 1 and "via relay" in cli_said
        else:
            assert winner.via == "cli" and child.exitstatus == 0
            if reply["type"] == "withdrawn":  # the relay saw the CLI's answer first
                reply = relay.expect(lambda line: line.get("id") == request.id)
            assert reply["type"] in ("answered", "error")
            if reply["type"] == "answered":
                assert reply["won"] is False and reply["answer"]["via"] == "cli"
            else:  # the asker settled the CLI's answer before the relay's came
                assert reply["error"] == "already-settled"

    def test_a_fact_answered_as_a_command(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """A fact answered as a command is refused naming the fact's answers; nothing is
        written and the request still waits."""
        relay.hello()
        request = fact(server)
        channel.file(request)
        relay.expect(type="approval", id=request.id)
        relay.send({"type": "answer", "id": request.id, "kind": "command", "decision": "once"})
        error = relay.expect(type="error", id=request.id)
        assert error["error"] == "wrong-kind"
        assert (error["kind"], error["allowed"]) == ("fact", ["keep", "drop"])
        relay.send({"type": "answer", "id": request.id, "decision": "approve"})  # kind as sent
        error = relay.expect(type="error", id=request.id)
        assert error["error"] == "invalid-decision" and error["allowed"] == ["keep", "drop"]
        assert channel.status(request.id).state is State.FILED

    def test_an_undeclared_kind_cannot_be_answered(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """A front end answers only the kinds it declared."""
        relay.hello(["approve-mcp"])
        request = question(server)
        channel.file(request)
        relay.send({"type": "answer", "id": request.id, "kind": "question", "decision": "decline"})
        error = relay.expect(type="error", id=request.id)
        assert error["error"] == "not-declared" and error["allowed"] == ["command"]
        assert channel.status(request.id).answer is None

    def test_a_handed_over_fact_is_kept_here(self, relay: RelayProcess, home: Path) -> None:
        """A fact whose asker stopped is applied by the relay's own process: kept in
        facts.json, delivery applied."""
        relay.hello(["keep-facts"])
        dead = AskerProcess(home, "fact")
        (request_id,) = dead.filed()
        dead.kill()
        relay.expect(type="approval", id=request_id, state="handed-over")
        relay.send({"type": "answer", "id": request_id, "decision": "keep"})
        answered = relay.expect(type="answered", id=request_id)
        assert answered["won"] and answered["applied"] and answered["outcome"] == "answered"
        facts = json.loads((home / "facts.json").read_text())["facts"]
        assert [(f["value"], f["id"], f["via"]) for f in facts] == [
            ("BLUE HERON", answered["result"], "relay")
        ]

    def test_the_relay_goes_on_while_an_answer_waits(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """An answer whose asker lives but never settles waits answer.waitSeconds (reported
        late); meanwhile new requests are still relayed."""
        relay.hello()
        waiting = command(server)
        channel.file(waiting)
        relay.expect(type="approval", id=waiting.id)
        relay.send({"type": "answer", "id": waiting.id, "decision": "once"})
        meanwhile = command(server)
        channel.file(meanwhile)
        relay.expect(type="approval", id=meanwhile.id)
        assert not [x for x in relay.seen if x["type"] == "answered"]
        answered = relay.expect(type="answered", id=waiting.id)
        assert (answered["won"], answered["asker"], answered["outcome"]) == (True, "late", None)


class TestTerminal:
    """Answers only from a front end the person runs in a terminal (finding 1): the relay's
    speed bump, as `wisp approvals approve` has one."""

    @pytest.mark.parametrize(
        ("terminal", "new_session", "why"),
        [
            ("none", True, "no controlling terminal"),  # `setsid wisp relay`
            ("foreground", False, "foreground"),  # `printf … | wisp relay` in your terminal
        ],
    )
    def test_an_agents_relay_takes_no_answer(
        self,
        home: Path,
        asker: Asker,
        channel: Channel,
        terminal: str,
        new_session: bool,
        why: str,
    ) -> None:
        """A relay with no controlling terminal (setsid), or in its terminal's foreground
        with a pipe for input, still lists requests but refuses every answer — `always`
        too — with `not-a-terminal`, saying why and what to do; nothing is written."""
        request = ApprovalGate(asker, timeout_s=60).file("rm -rf /important", "/srv")
        with RelayProcess(home, terminal=terminal, new_session=new_session) as relay:
            ready = relay.hello(["approve-mcp"])
            assert ready["answers"] is False
            assert approvals(relay.seen) == [("command", request.id)]
            relay.send({"type": "answer", "id": request.id, "decision": "always"})
            error = relay.expect(type="error", id=request.id)
            assert error["error"] == "not-a-terminal"
            assert why in error["message"] and "Nothing was written" in error["message"]
            assert "wisp tui" in error["message"]
            assert relay.close() == 0
        assert channel.status(request.id).state is State.FILED
        assert not (home / "grants.json").exists()
        assert not [r for r in audit_records(home) if r["event"] == "approval.answered"]

    def test_a_relay_in_the_background_of_a_terminal_answers(
        self, relay: RelayProcess, asker: Asker
    ) -> None:
        """As `wisp tui` runs it — a process group of its own in the person's terminal
        session — the relay takes answers (and says so in `ready`)."""
        assert relay.hello()["answers"] is True
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
        relay.expect(type="approval", id=request.id)
        relay.send({"type": "answer", "id": request.id, "decision": "once"})
        assert relay.expect(type="answered", id=request.id)["won"] is True

    def test_a_terminal_for_stdin_is_set_raw(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """With a terminal for its stdin and stdout (as `ssh -tt HOST wisp relay` gives it),
        the relay takes answers, sets the terminal raw so JSON lines pass unchanged and are
        never echoed back, ends at Ctrl-D, and leaves the terminal as it found it."""
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")
        child = pexpect.spawn(
            *wisp_spawn("relay"),
            env={**os.environ, "WISP_HOME": str(home)},
            timeout=30,
            echo=False,
        )
        try:
            hello = {"type": "hello", "effects": ["approve-mcp"], "client": "ssh-test"}
            child.send(json.dumps(hello) + "\n")
            seen = []
            while not seen or seen[-1]["type"] != "ready":
                child.expect(b"\n")
                seen.append(json.loads(child.before))
            assert seen[-1]["answers"] is True
            assert "hello" not in [line["type"] for line in seen]  # never echoed
            answer = {"type": "answer", "id": request.id, "decision": "once", "reason": "é ✓"}
            child.send(json.dumps(answer, ensure_ascii=False) + "\n")
            while seen[-1]["type"] != "answered":
                child.expect(b"\n")
                assert not child.before.endswith(b"\r")  # no output processing
                seen.append(json.loads(child.before))
            assert seen[-1]["won"] is True and seen[-1]["id"] == request.id
            assert "answer" not in [line["type"] for line in seen]
            child.send("\x04")  # Ctrl-D: the end of input on a raw terminal
            child.expect(pexpect.EOF)
            child.close()
            assert child.exitstatus == 0
        finally:
            child.close(force=True)
        assert channel.status(request.id).state in (State.ANSWERED, State.SETTLED)

    def test_the_terminal_is_restored(self, home: Path) -> None:
        """A terminal the relay set raw is given back as it was when the relay ends."""
        import termios

        child = pexpect.spawn(
            "/bin/sh",
            ["-c", f"{sys.executable} -m wisp relay; stty -a; sleep 30"],
            env={**os.environ, "WISP_HOME": str(home)},
            timeout=30,
        )
        try:
            child.send(json.dumps({"type": "hello", "effects": []}) + "\n")
            child.expect(b'"type":"ready"')
            raw = termios.tcgetattr(child.child_fd)
            assert not raw[3] & (termios.ECHO | termios.ICANON | termios.ISIG)
            child.send("\x04")
            child.expect(b"speed")  # stty -a, once the relay has ended
            flags = termios.tcgetattr(child.child_fd)
            assert flags[3] & termios.ECHO and flags[3] & termios.ICANON
        finally:
            child.close(force=True)


class TestLines:
    def test_bad_lines_get_errors_and_the_relay_goes_on(self, relay: RelayProcess) -> None:
        """Malformed lines, unknown types and bad fields each get an error line; the relay
        keeps going."""
        relay.hello()
        for raw, code in [
            (b"garbage\n", "bad-json"),
            (b"[1]\n", "not-an-object"),
            (b'{"type":"launch"}\n', "unknown-type"),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"once","kind":"x"}\n', "bad-field"),
            (b'{"type":"answer","id":"../etc/passwd","decision":"once"}\n', "invalid-id"),
            (b'{"type":"answer","id":"a1b2c3d4","decision":"once"}\n', "unknown-request"),
            (b'{"type":"history","limit":1e400}\n', "bad-json"),  # not a finite number
            (b'{"type":"answer","id":"a1b2c3d4","decision":NaN}\n', "bad-json"),
        ]:
            relay.send_raw(raw)
            error = relay.expect(type="error")
            assert error["error"] == code, raw
            assert error["message"]
        # An id far too long is not echoed back (finding 13): not in `id`, not in the text.
        relay.send({"type": "answer", "id": "a" * 2000, "decision": "once"})
        error = relay.expect(type="error")
        assert error["error"] == "invalid-id" and "id" not in error
        assert len(json.dumps(error)) < 600
        relay.send({"type": "history", "limit": 5})
        assert relay.expect(type="history")["entries"] == []

    def test_a_line_over_one_mebibyte(self, relay: RelayProcess) -> None:
        """A line over 1 MiB is skipped unread with an error; the next line is served."""
        relay.hello()
        relay.send_raw(b'{"type":"history","pad":"' + b"x" * (MAX_LINE_BYTES + 512 * 1024))
        relay.send_raw(b'"}\n')
        error = relay.expect(type="error")
        assert error["error"] == "too-long" and "1 MiB" in error["message"]
        relay.send({"type": "history"})
        relay.expect(type="history")

    def test_eof_ends_it_cleanly(self, relay: RelayProcess) -> None:
        """EOF on stdin ends the relay with status 0 and nothing on stderr."""
        relay.hello()
        assert relay.close() == 0
        assert relay.stderr() == ""

    def test_eof_lets_an_answer_in_flight_finish(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """An answer sent just before EOF is given and reported before the relay exits."""
        relay.hello()
        request = command(server)
        channel.file(request)
        relay.expect(type="approval", id=request.id)
        relay.send({"type": "answer", "id": request.id, "decision": "no"})
        assert relay.close() == 0
        answered = relay.expect(type="answered", id=request.id)
        assert answered["won"] is True
        assert channel.status(request.id).answer is not None

    def test_stdout_carries_protocol_lines_only(self, relay: RelayProcess) -> None:
        """Every byte on stdout is a JSON object line."""
        relay.hello()
        relay.send({"type": "history"})
        relay.expect(type="history")
        relay.close()
        assert relay.raw and all(isinstance(json.loads(raw), dict) for raw in relay.raw)

    def test_an_unusable_channel_is_fatal(self, tmp_path: Path) -> None:
        """A channel the relay must not use ends it with a fatal error line and status 2."""
        home = tmp_path / "unsafe"
        (home / "pending").mkdir(parents=True, mode=0o700)
        home.chmod(0o700)
        (home / "pending").chmod(0o777)
        with RelayProcess(home) as relay:
            error = relay.expect(type="error")
            assert error["fatal"] is True and "chmod 700" in error["message"]
            assert relay.close() == 2
            assert "chmod 700" in relay.stderr()


class TestNotify:
    def test_notify_lines_for_new_requests_only(
        self, relay: RelayProcess, channel: Channel, server: ServerLock, home: Path
    ) -> None:
        """With notify declared, each request filed while the relay runs gets a notify line
        (those waiting at start do not), audited as a notification by route host."""
        channel.file(command(server, "echo before"))
        relay.hello(["approve-mcp", "notify"])
        request = command(server, "make deploy")
        channel.file(request)
        relay.expect(type="approval", id=request.id)
        notice = relay.expect(type="notify")
        assert notice["title"] == request.title and notice["body"] == request.body
        assert [x["type"] for x in relay.seen].count("notify") == 1
        records = wait_until(
            lambda: [r for r in audit_records(home) if r["event"] == "notification"],
            what="the notification's audit",
        )
        assert (records[0]["route"], records[0]["id"]) == ("host", request.id)

    def test_without_notify_no_lines(
        self, relay: RelayProcess, channel: Channel, server: ServerLock
    ) -> None:
        """Without notify declared the relay sends no notify line (nor posts one itself)."""
        relay.hello(["approve-mcp"])
        first, second = command(server), command(server)
        channel.file(first)
        channel.file(second)
        relay.expect(type="approval", id=second.id)
        assert "notify" not in [x["type"] for x in relay.seen]


class TestHistory:
    def test_what_ended_is_told(self, relay: RelayProcess, asker: Asker) -> None:
        """A history line lists what ended, newest first, with who answered."""
        relay.hello()
        gate = ApprovalGate(asker, timeout_s=60)
        request = gate.file("make deploy", "/srv")
        relay.expect(type="approval", id=request.id)
        relay.send({"type": "answer", "id": request.id, "decision": "always"})
        relay.expect(type="answered", id=request.id)

        def told() -> list[dict[str, object]]:
            # The asker audits the settling just after writing it: ask until it is logged.
            relay.send({"type": "history", "limit": 10})
            return relay.expect(type="history")["entries"]  # type: ignore[no-any-return]

        entries = wait_until(told, what="the settled request in the history")
        assert entries[0]["id"] == request.id
        assert (entries[0]["outcome"], entries[0]["decision"]) == ("answered", "always")
        assert (entries[0]["asked"], entries[0]["by"]) == ("make deploy", "relay")


class TestEndedRequests:
    """wisp.audit.history.ended_requests: what the relay's history line is read from."""

    def write(self, home: Path, lines: list[bytes]) -> Path:
        logs = home / "logs"
        logs.mkdir(parents=True, mode=0o700, exist_ok=True)
        path = logs / "audit.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        path.chmod(0o600)
        return path

    def test_bad_lines_are_skipped_and_the_latest_ending_stands(self, home: Path) -> None:
        """Garbage, non-records and records without an id are skipped; one entry per request,
        newest first, with who answered."""
        from wisp.audit.history import ended_requests

        def record(**fields: object) -> bytes:
            return json.dumps(fields).encode()

        self.write(
            home,
            [
                b"not json",
                b"[1]",
                b'{"event":"approval.settled","outcome":"stale","id":NaN}',
                record(event="approval.settled", outcome="answered"),
                record(event="approval.answered", id="a1b2c3d4", via="cli"),
                record(
                    ts="t1",
                    event="approval.settled",
                    id="a1b2c3d4",
                    kind="command",
                    outcome="answered",
                    decision="no",
                    command="make deploy",
                ),
                record(
                    ts="t2",
                    event="approval.withdrawn",
                    id="b1b2c3d4",
                    kind="question",
                    outcome="withdrawn",
                    question="Which?",
                ),
                record(
                    ts="t3",
                    event="approval.settled",
                    id="a1b2c3d4",
                    kind="command",
                    outcome="answered",
                    decision="no",
                    command="make deploy",
                ),
            ],
        )
        ended = ended_requests(home, 10)
        assert [(e.id, e.ts, e.outcome, e.by, e.asked) for e in ended] == [
            ("a1b2c3d4", "t3", "answered", "cli", "make deploy"),
            ("b1b2c3d4", "t2", "withdrawn", None, "Which?"),
        ]
        assert len(ended_requests(home, 1)) == 1

    def test_only_the_tail_is_read(self, home: Path) -> None:
        """A log over the tail size is read from its end, the cut first line dropped."""
        from wisp.audit.history import TAIL_BYTES, ended_requests

        old = json.dumps({"event": "approval.settled", "id": "0000000a", "outcome": "stale"})
        filler = json.dumps({"event": "notification", "pad": "x" * 1000})
        new = json.dumps({"event": "approval.settled", "id": "0000000b", "outcome": "stale"})
        count = TAIL_BYTES // len(filler) + 2
        self.write(home, [old.encode(), *[filler.encode()] * count, new.encode()])
        assert [e.id for e in ended_requests(home, 10)] == ["0000000b"]

    def test_a_log_that_is_a_symlink_is_not_read(self, home: Path, tmp_path: Path) -> None:
        """The log is opened without following a symlink: a planted one reads as empty."""
        from wisp.audit.history import ended_requests

        elsewhere = tmp_path / "elsewhere.jsonl"
        elsewhere.write_text(
            json.dumps({"event": "approval.settled", "id": "a1b2c3d4", "outcome": "stale"}) + "\n"
        )
        (home / "logs").mkdir(parents=True, mode=0o700, exist_ok=True)
        (home / "logs" / "audit.jsonl").symlink_to(elsewhere)
        assert ended_requests(home, 10) == []
