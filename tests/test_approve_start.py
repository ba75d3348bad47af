"""`wisp approvals approve ID` is run before the CLI loads (`wisp.__main__`): the person's
answer, and the agent waiting on it, paid for typer and the CLI's modules first (issue 41).
Each check runs the program in a fresh interpreter under a real pseudo-terminal, as a person
runs it, and compares it with the CLI's own command on the same channel."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import START_PROBE, command, fact, probe_env, pty_run

from pending import Channel, Kind, ServerLock, Via
from wisp import ApprovalGate, Asker

CLI_FRAMEWORK = ("typer", "click", "rich")


def in_a_terminal(home: Path, *args: str, cli: bool = False) -> tuple[int, str, list[str]]:
    """(status, all it printed with its lines joined, the modules loaded) of `wisp ARGS`
    under a pty 200 columns wide; *cli*: through the CLI's main, as before."""
    status, output = pty_run(
        sys.executable,
        ["-c", START_PROBE, "wisp", *args],
        env=probe_env(home, cli=cli),
        dimensions=(50, 200),
    )
    said, _, probed = output.rpartition("\nPROBED ")
    return status, " ".join(said.split()), json.loads(probed.splitlines()[0])


def streams_apart(home: Path, *args: str, cli: bool = False) -> tuple[int, bytes, bytes]:
    """(status, stdout, stderr without the probe's line) of `wisp ARGS`, its standard input a
    terminal and its standard output and error two pipes, each as written, byte for byte."""
    env = probe_env(home, cli=cli)
    parent, child = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", START_PROBE, "wisp", *args],
            stdin=child,
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
    finally:
        os.close(child)
        os.close(parent)
    return done.returncode, done.stdout, done.stderr.rpartition(b"\nPROBED ")[0]


def refused(case: str, home: Path, channel: Channel, server: ServerLock) -> str:
    """Set up *case*, one of the refusals of an approval, in *home*; what to type for it."""
    if case == "too short":
        return "abc"
    if case == "answered":
        request = command(server)
        channel.file(request)
        channel.answer(request.id, "no", kind=Kind.COMMAND, via=Via.CLI)
        return request.id
    if case == "a fact":
        request = fact(server)
        channel.file(request)
        return request.id
    if case == "ambiguous":  # a prefix two IDs share, typed in capitals
        channel.file(command(server)._replace(id="abcdef0123456789"))
        channel.file(command(server, text="make clean")._replace(id="abcdef9876543210"))
        return "ABCDEF"
    if case == "broken config":
        (home / "config.json").write_text("{not json")
    return "deadbeef"  # unknown


def framework(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in CLI_FRAMEWORK or m.startswith("wisp.cli")]


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    """A live asking server in this process: it settles each answer as it is written."""
    with Asker(channel, entry_point="approvals", client="agent") as live:
        yield live


class TestApproveBeforeTheCli:
    def test_an_approval_loads_no_cli_framework(self, home: Path, asker: Asker) -> None:
        """`wisp approvals approve ID` approves once and hears the asker take it, with none of
        typer, click, rich or the CLI ever imported; the asker's verdict is the approval."""
        gate = ApprovalGate(asker, timeout_s=60)
        request = gate.file("make deploy", "/srv/shop")
        code, said, modules = in_a_terminal(home, "approvals", "approve", request.id[:6])
        assert code == 0, said
        assert f"approved once ({request.id}); the asker has it." in said
        assert framework(modules) == []
        ending = asker.wait(request.id, 10)
        assert ending is not None and gate.verdict(ending).approved

    def test_an_approval_says_what_the_cli_says(self, home: Path, asker: Asker) -> None:
        """The same words and status as the CLI's `approve`, one request each."""
        gate = ApprovalGate(asker, timeout_s=60)
        first, second = gate.file("make deploy", "/srv/a"), gate.file("make deploy", "/srv/b")
        fast = in_a_terminal(home, "approvals", "approve", first.id)
        cli = in_a_terminal(home, "approvals", "approve", second.id, cli=True)
        assert fast[:2] == (cli[0], cli[1].replace(second.id, first.id))
        assert framework(fast[2]) == [] and "wisp.cli" in cli[2]

    @pytest.mark.parametrize(
        "case", ["unknown", "too short", "answered", "a fact", "ambiguous", "broken config"]
    )
    def test_a_refusal_says_what_the_cli_says(
        self, home: Path, channel: Channel, server: ServerLock, case: str
    ) -> None:
        """Each refusal (an ID nothing answers to, one too short, a request answered already,
        a fact's request, a prefix two IDs share, a broken config.json): the same words, the
        same status, and nothing written by either."""
        typed = refused(case, home, channel, server)
        before = sorted(p.name for p in (home / "pending").iterdir())
        fast = in_a_terminal(home, "approvals", "approve", typed)
        cli = in_a_terminal(home, "approvals", "approve", typed, cli=True)
        assert fast[:2] == cli[:2]
        assert fast[0] in (1, 2) and fast[1].startswith("wisp: ")
        assert framework(fast[2]) == []
        assert sorted(p.name for p in (home / "pending").iterdir()) == before

    @pytest.mark.parametrize("case", ["unknown", "ambiguous", "answered"])
    def test_each_stream_holds_what_the_clis_holds(
        self, home: Path, channel: Channel, server: ServerLock, case: str
    ) -> None:
        """Standard output and standard error apart, byte for byte (a message moved to the
        other stream, or a line broken elsewhere, would read the same through one terminal)."""
        typed = refused(case, home, channel, server)
        fast = streams_apart(home, "approvals", "approve", typed)
        cli = streams_apart(home, "approvals", "approve", typed, cli=True)
        assert fast == cli
        assert fast[0] == 1 and fast[2].startswith(b"wisp: ")

    def test_no_terminal_is_refused_as_the_cli_refuses_it(self, home: Path) -> None:
        """Standard input not a terminal: refused (exit 2) in the CLI's words, nothing read."""

        def run(cli: bool) -> tuple[int, str, str]:
            done = subprocess.run(
                [sys.executable, "-c", START_PROBE, "wisp", "approvals", "approve", "deadbeef"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=probe_env(home, cli=cli),
                timeout=60,
                check=False,
            )
            return (
                done.returncode,
                done.stdout.decode(),
                done.stderr.decode().rpartition("\nPROBED ")[0],
            )

        fast, cli = run(False), run(True)
        assert fast == cli
        assert fast[0] == 2 and "takes answers only from a terminal" in fast[2]

    @pytest.mark.parametrize(
        "args",
        [
            ("approvals", "approve", "--scope", "once", "deadbeef"),
            ("approvals", "approve", "deadbeef", "--json"),
            ("approvals", "approve", "deadbeef."),
            ("approvals", "approve"),
            ("approvals", "approve", "--help"),
        ],
    )
    def test_any_other_command_line_is_the_clis(self, home: Path, args: tuple[str, ...]) -> None:
        """A scope, `--json`, an ID typed with its dot, no ID, help: the CLI's, as always."""
        code, said, modules = in_a_terminal(home, *args)
        assert "wisp.cli" in modules, said
        assert re.search(r"\S", said)
        assert (code, said) == in_a_terminal(home, *args, cli=True)[:2]
