"""An answering command given no ID: it names the waiting requests and the command that
answers each (exit 2, nothing answered), or, from a terminal with only one waiting, shows it
and asks first. Real processes, a real pseudo-terminal, a real channel."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pexpect
from helpers import command, fact, in_terminal, question, run_wisp, wisp_spawn

from pending import Channel, ServerLock, State


def at_the_question(
    args: tuple[str, ...], key: Callable[[pexpect.spawn], object]
) -> tuple[int, str]:
    """`wisp ARGS` in a pty, *key* pressed at its `[y/N]`: its status and all it said."""
    child = pexpect.spawn(*wisp_spawn(*args), encoding="utf-8", timeout=60, dimensions=(40, 200))
    try:
        child.expect(r"\[y/N\]")
        key(child)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return child.exitstatus, " ".join(str(child.before).split())


class TestAnsweringWithNoId:
    def test_several_waiting_are_named_with_their_commands(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Two commands wait: `wisp approvals approve` alone exits 2 naming both, each with
        `wisp approvals approve ID` and what it runs; nothing is answered."""
        first, second = command(server, text="make deploy"), command(server, text="ls -la")
        channel.file(first)
        channel.file(second)
        code, out = in_terminal("approvals", "approve")
        assert code == 2, out
        assert "Missing argument" not in out
        assert f"wisp approvals approve {first.id}" in out and "make deploy" in out, out
        assert f"wisp approvals approve {second.id}" in out and "ls -la" in out, out
        assert channel.status(first.id).state is State.FILED
        assert channel.status(second.id).state is State.FILED

    def test_one_waiting_without_a_terminal_is_named_not_answered(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """One fact waits, stdin is no terminal: `wisp facts keep` names it and the command,
        exit 2; it still waits."""
        request = fact(server)
        channel.file(request)
        done = run_wisp("facts", "keep")
        assert done.returncode == 2, done.stderr
        assert f"wisp facts keep {request.id}" in done.stderr, done.stderr
        assert channel.status(request.id).state in (State.FILED, State.HANDED_OVER)

    def test_none_waiting_says_so(self, home: Path) -> None:
        """Nothing waits: exit 2, saying no command request waits."""
        done = run_wisp("approvals", "deny")
        assert done.returncode == 2, done.stderr
        assert "no command request waits" in done.stderr, done.stderr

    def test_the_only_one_is_shown_and_asked_first(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """From a terminal with one command waiting, `wisp approvals deny --reason R` shows
        the command and asks; `y` denies it with the reason."""
        request = command(server, text="make deploy")
        channel.file(request)
        child = pexpect.spawn(
            *wisp_spawn("approvals", "deny", "--reason", "not today"),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 200),
        )
        child.expect("make deploy")
        child.expect(rf"wisp approvals deny {request.id}\? \[y/N\]")
        child.sendline("y")
        child.expect(pexpect.EOF)
        child.close()
        answer = channel.status(request.id).answer
        assert answer is not None and answer.decision == "no" and answer.reason == "not today"

    def test_no_at_the_question_answers_nothing(self, channel: Channel, server: ServerLock) -> None:
        """Answering `n` (or just Enter) to the question: exit 1, the request still waits."""
        request = command(server, text="make deploy")
        channel.file(request)
        child = pexpect.spawn(
            *wisp_spawn("approvals", "approve"), encoding="utf-8", timeout=60, dimensions=(40, 200)
        )
        child.expect(r"\[y/N\]")
        child.sendline("")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 1, child.before
        assert channel.status(request.id).state is State.FILED

    def test_ctrl_c_at_the_question_is_an_interruption(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Ctrl-C at `[y/N]` (`wisp questions decline`, one question waiting): exit 130 and
        docs/cli.md's words, not Click's bare `Aborted!` (exit 1); nothing is written."""
        request = question(server)
        channel.file(request)
        code, said = at_the_question(("questions", "decline"), pexpect.spawn.sendintr)
        assert code == 130, said
        assert (
            "wisp: interrupted before your answer was written; nothing was written and "
            f"{request.id} still waits." in said
        ), said
        assert "Aborted" not in said
        assert channel.status(request.id).state is State.FILED

    def test_end_of_input_at_the_question_answers_nothing(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """Ctrl-D at `[y/N]` is no `y`: exit 1 and the words of a `n`, not `Aborted!`."""
        request = command(server, text="make deploy")
        channel.file(request)
        code, said = at_the_question(("approvals", "approve"), pexpect.spawn.sendeof)
        assert code == 1, said
        assert f"nothing was answered; {request.id} still waits." in said and "Aborted" not in said
        assert channel.status(request.id).state is State.FILED
