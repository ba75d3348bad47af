"""Help a person can read, at any width, and shell completion that knows the waiting IDs."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
import typer
from cliterm import WIDTHS, run
from helpers import command, run_wisp
from typer.testing import CliRunner

from pending import Channel, Kind, ServerLock
from wisp.cli import app

# What typer shows of Python types when left to itself: none of it may appear.
PYTHON_TYPES = re.compile(r"<[a-z]+[^>]*>|\{[A-Z_]+\}|list\[|\bNoneType\b|<float>|<str>")


def command_paths() -> Iterator[list[str]]:
    """Every command and group of `wisp`, as the words that name it."""
    root = typer.main.get_command(app)

    def walk(group: object, path: list[str]) -> Iterator[list[str]]:
        yield path
        for name, sub in getattr(group, "commands", {}).items():
            yield from walk(sub, [*path, name])

    yield from walk(root, [])


PATHS = list(command_paths())


class TestHelp:
    @pytest.mark.parametrize("cols", WIDTHS)
    def test_no_python_types_and_nothing_cut(self, cols: int) -> None:
        """Every command's help, at each width: no Python type names, no summary cut
        short with an ellipsis, and examples."""
        runner = CliRunner()
        for path in PATHS:
            result = runner.invoke(app, [*path, "--help"], terminal_width=cols, prog_name="wisp")
            assert result.exit_code == 0, (path, result.output)
            assert not PYTHON_TYPES.search(result.output), (path, result.output)
            assert re.search(r"^Examples?:$", result.output, re.M), (path, result.output)
            assert "..." not in result.output.replace("COMMAND...", "").replace("[ARGS]...", ""), (
                path,
                result.output,
            )

    @pytest.mark.parametrize(
        ("path", "shown"),
        [
            (["approvals", "approve"], "--scope once|session|project|always"),
            (["notify"], "--route host|terminal|tmux|app|osascript|desktop|push"),
            (["pending"], "--kind, -k command|fact|question"),
            (["log"], "--kind, -k command|fact|question"),
            (["completion"], "bash|zsh|fish"),
        ],
    )
    def test_choices_are_listed(self, path: list[str], shown: str) -> None:
        """Options and arguments with a fixed set of values list them."""
        result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200, prog_name="wisp")
        assert shown in result.output

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_in_a_terminal_with_examples(self, cols: int) -> None:
        """`wisp approvals approve --help` in a real terminal: usage in words, the choices,
        and examples kept as written."""
        code, output = run("approvals", "approve", "--help", cols=cols)
        assert code == 0
        assert "Usage: wisp approvals approve [OPTIONS] [ID]" in output
        assert "Examples:" in output and "  wisp approvals approve 3f9c0a1b2c3d4e5f" in output
        assert not PYTHON_TYPES.search(output)

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_bare_wisp_shows_help_and_exits_0(self, cols: int) -> None:
        """`wisp` alone (and a group alone) shows its help and exits 0."""
        code, output = run(cols=cols)
        assert code == 0 and "Usage: wisp [OPTIONS] COMMAND" in output
        assert "approvals" in output and "Examples:" in output
        code, output = run("facts", cols=cols)
        assert code == 0 and "forget" in output


def bash(cols: int, home: Path) -> pexpect.spawn:  # type: ignore[type-arg]
    """An interactive bash in a pty, `wisp` on its PATH, completion not yet loaded."""
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "WISP_HOME": str(home),
        "PS1": "$ ",
        "TERM": "dumb",
        "INPUTRC": "/dev/null",
    }
    shell = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-i"],
        env=env,
        encoding="utf-8",
        dimensions=(50, cols),
        timeout=30,
    )
    shell.expect_exact("$ ")
    return shell


def discard_line(shell: pexpect.spawn) -> None:  # type: ignore[type-arg]
    """Clear what was typed (Ctrl-U) and enter the empty line: the prompt again."""
    shell.sendcontrol("u")
    shell.sendline("")
    shell.expect_exact("$ ")


class TestHelpOption:
    @pytest.mark.parametrize("path", [["approvals", "pending"], ["pending"], []])
    def test_named_in_one_order_whatever_the_hashing(self, home: Path, path: list[str]) -> None:
        """The help option reads `-h, --help` in every run: click keeps its names in a set,
        whose order follows the interpreter's string hashing (PYTHONHASHSEED), so the same
        help said `--help, -h` in some runs."""
        for seed in range(6):
            shown = run_wisp(*path, "--help", env={"PYTHONHASHSEED": str(seed)}).stdout
            assert "-h, --help" in shown and "--help, -h" not in shown, (seed, shown)


class TestCompletion:
    @pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
    def test_scripts_are_produced(self, shell: str) -> None:
        """`wisp completion SHELL` prints typer's script for it, talking to `wisp`."""
        out = run_wisp("completion", shell)
        assert out.returncode == 0 and "_WISP_COMPLETE=complete_" + shell in out.stdout

    def test_one_way_to_complete(self) -> None:
        """The root help offers `wisp completion`, and not typer's `--install-completion`
        and `--show-completion` beside it; given, they are usage errors (exit 2)."""
        shown = run_wisp("--help", env={"COLUMNS": "200"}).stdout
        assert "completion" in shown
        assert "--install-completion" not in shown and "--show-completion" not in shown
        for option in ("--install-completion", "--show-completion"):
            out = run_wisp(option)
            assert out.returncode == 2 and "No such option" in out.stderr, out.stderr

    def test_an_unknown_shell_is_a_usage_error(self) -> None:
        out = run_wisp("completion", "tcsh")
        assert out.returncode == 2 and "'tcsh' is not one of" in out.stderr

    @pytest.mark.parametrize("cols", WIDTHS)
    def test_bash_completes_a_waiting_id(
        self, channel: Channel, server: ServerLock, home: Path, cols: int
    ) -> None:
        """In a bash session: Tab after `wisp approvals approve ` completes the one waiting
        command's ID, and after `wisp show` and a prefix, that request's."""
        waiting = command(server)
        channel.file(waiting)
        shell = bash(cols, home)
        try:
            shell.sendline('eval "$(wisp completion bash)"')
            shell.expect_exact("$ ")
            shell.send("wisp approvals approve \t")
            shell.expect_exact(waiting.id)
            discard_line(shell)
            shell.send(f"wisp show {waiting.id[:3]}\t")
            shell.expect_exact(waiting.id)
            discard_line(shell)
        finally:
            shell.close(force=True)

    def test_bash_lists_several_and_only_waiting_ones(
        self, channel: Channel, server: ServerLock, home: Path
    ) -> None:
        """Two waiting commands: Tab Tab lists both; an answered one is not offered."""
        # IDs with no common prefix: with one, the first Tab would complete it and the
        # second start afresh (random IDs shared a first character one run in sixteen).
        first, second, answered = (
            command(server, request_id=request_id)
            for request_id in ("1a2b3c4d5e6f7081", "9f8e7d6c5b4a3021", "c0c0c0c0c0c0c0c0")
        )
        for request in (first, second, answered):
            channel.file(request)
        channel.answer(answered.id, "no", kind=Kind.COMMAND, via="cli")
        shell = bash(200, home)
        try:
            shell.sendline('eval "$(wisp completion bash)"')
            shell.expect_exact("$ ")
            shell.send("wisp approvals deny \t\t")
            shell.expect_exact("$ wisp approvals deny ")  # the listing, then the line again
            listed = shell.before or ""
            assert first.id in listed and second.id in listed and answered.id not in listed
            discard_line(shell)
        finally:
            shell.close(force=True)


class TestUsageHints:
    """A mistyped command or an option's value given without its name says what was meant."""

    @pytest.mark.parametrize(
        ("argv", "meant"),
        [
            (["pendng"], "Did you mean 'pending'?"),
            (["approve", "3f9c"], "Did you mean 'approvals'?"),
            (["approvals", "aprove", "3f9c"], "Did you mean 'approve'?"),
        ],
    )
    def test_a_mistyped_command_is_named(self, home: Path, argv: list[str], meant: str) -> None:
        """A command not found, at the root as in a group: exit 2 with the closest names."""
        out = run_wisp(*argv)
        assert out.returncode == 2
        assert f"No such command '{argv[-2] if len(argv) > 2 else argv[0]}'. {meant}" in out.stderr

    def test_a_value_without_its_option_says_how_to_name_it(self, home: Path) -> None:
        """`approve ID always`: exit 2, naming the options that take a value, nothing written."""
        out = run_wisp("approvals", "approve", "0123456789abcdef", "always")
        assert out.returncode == 2
        assert "unexpected extra argument(s) (always)" in out.stderr
        assert "given after its name: --scope once|session|project|always" in out.stderr
        out = run_wisp("approvals", "deny", "0123456789abcdef", "keep it")
        assert out.returncode == 2 and "--reason TEXT" in out.stderr
        assert not (home / "pending").exists() or not list((home / "pending").iterdir())

    def test_a_command_with_no_options_adds_nothing(self, home: Path) -> None:
        """An extra argument to a command that takes no valued option: click's words alone."""
        out = run_wisp("doctor", "extra")
        assert out.returncode == 2
        assert "unexpected extra argument" in out.stderr and "given after" not in out.stderr
