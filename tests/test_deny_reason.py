"""Denying with a reason from every face that denies: `wisp approvals deny --reason`, `wisp
tools deny --reason`, the TUI's `n` (a box for an optional reason), the relay's answer line;
and the agent receives it. Real processes, a real terminal, real relays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import in_terminal, run_wisp
from relayproc import write_config
from test_hook import Hook, answered_reason, event, pre_tool_use, waiting
from test_tui import WispTui, said, select, tui, until

from pending import Channel, Kind
from wisp import ApprovalGate, Asker, Notifier
from wisp.agents.gate import decided_reason
from wisp.tui._dialogs import CommandDialog


@pytest.fixture
def home(home: Path) -> Path:
    write_config(home, answer__waitSeconds=3)
    return home


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    quiet = Notifier(channel.home, settings={"notifications.enabled": False})
    with Asker(channel, entry_point="approvals", client="agent", notifier=quiet) as asking:
        yield asking


class TestToolsDenyTakesAReason:
    def test_the_agent_gets_the_reason(self, home: Path, tmp_path: Path) -> None:
        """A Write waits as a tool request; `wisp tools deny ID --reason R` in a terminal
        makes Claude Code's hook print a deny whose reason ends with R."""
        project = tmp_path / "project"
        project.mkdir()
        hook = Hook(event("pre-tool-use-write", project))
        request_id = waiting(home, Kind.TOOL)
        code, out = in_terminal("tools", "deny", request_id, "--reason", "write a patch instead")
        assert code == 0, out
        code, said_out, err = hook.result()
        assert code == 0, err
        reason = answered_reason(home, request_id, "denied", ": write a patch instead")
        assert said_out == pre_tool_use("deny", reason)

    def test_its_help_offers_reason_and_no_lone_decision(self, home: Path) -> None:
        """`wisp tools deny -h` offers `--reason TEXT` and no `--as` (it gives one decision:
        no); `wisp tools approve -h` keeps `--as` and takes no reason."""
        deny = run_wisp("tools", "deny", "-h")
        assert deny.returncode == 0, deny.stderr
        assert "--reason TEXT" in deny.stdout and "--as" not in deny.stdout
        assert "One of: no." not in deny.stdout
        approve = run_wisp("tools", "approve", "-h")
        assert "--as DECISION" in approve.stdout and "--reason" not in approve.stdout


class TestTheTuiAsksForAReason:
    def test_n_takes_a_reason_that_reaches_the_agent(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """In a command's dialog `n` opens the reason box; what is typed there and Enter
        deny it with that reason (through the relay), and the agent's verdict carries it."""
        gate = ApprovalGate(asker, timeout_s=60)
        request = gate.file("rm -rf build", "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter")
            assert isinstance(app.screen, CommandDialog)
            await pilot.press("n")
            await pilot.press(*"use make clean")
            await pilot.press("enter")
            await until(pilot, lambda: said(app, f"denied ({request.id})"))

        tui(home, body)
        answer = channel.status(request.id).answer
        assert answer is not None and (answer.decision, answer.via) == ("no", "tui")
        assert answer.reason == "use make clean"
        ending = asker.wait(request.id, 30)
        assert ending is not None
        verdict = gate.verdict(ending)
        assert decided_reason(verdict, ending).endswith(": use make clean")

    def test_esc_in_the_box_goes_back_and_sends_nothing(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """Esc in the reason box closes it, the dialog stays open and nothing is sent; y
        then approves (the typed letters were the box's, not keys)."""
        request = ApprovalGate(asker, timeout_s=60).file("make deploy", "/srv")

        async def body(app: WispTui, pilot: Any) -> None:
            await select(app, pilot, request.id)
            await pilot.press("enter", "n", "y", "s", "escape")
            await pilot.pause()
            assert isinstance(app.screen, CommandDialog)
            assert channel.status(request.id).answer is None
            await pilot.press("y")
            await until(pilot, lambda: said(app, f"approved once ({request.id})"))

        tui(home, body)
        answer = channel.status(request.id).answer
        assert answer is not None and answer.decision == "once"
