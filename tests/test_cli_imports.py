"""What an everyday command loads: a listing no watchdog, asyncio or faces; no command a face.

Each command runs in a fresh interpreter, as a person starts it, and reports the modules it
ended with. Loading one of these costs every run of the command (watchdog and its observer
~8 ms, asyncio ~10 ms, the MCP SDK or textual far more), so this is the check that keeps the
person's commands fast from the keystroke (issue 11; bench/cold.py measures it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ANSWER_LINE, command, pty_run

from pending import Channel, ServerLock

# Runs `wisp ARGS` in-process, then prints the loaded modules, the commands typer built and
# how many objects are frozen out of the collector's reach (the command's exit is caught).
PROBE = """\
import gc, json, sys
import typer.main
built = []
make = typer.main.get_command_from_info
def counted(command_info, **settings):
    built.append(command_info.name)
    return make(command_info, **settings)
typer.main.get_command_from_info = counted
sys.argv = ["wisp", *sys.argv[1:]]
from wisp.cli import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
frozen = gc.get_freeze_count()
print("\\nPROBED " + json.dumps({"modules": sorted(sys.modules), "built": built, "frozen": frozen}))
"""

FACES = ("textual", "mcp", "wisp.tui", "wisp.mcp", "wisp.relay", "wisp.web", "starlette", "uvicorn")
WATCHING = ("watchdog", "asyncio", "pending._edge", "pending._watch", "pending._onewatch")
# A listing reads and shows requests: it neither asks, nor notifies, nor watches.
LISTING_NEVER = (*FACES, *WATCHING, "wisp._asking", "wisp.routes.notify")
# What a command that makes no random name needs none of: `secrets` loads hmac and OpenSSL
# (~17 M instructions of every start, issue 23); the stores import it where they name a file.
RANDOM_NAMES = ("secrets", "hmac")
# What listing approvals needs none of: the grants store and the ID lookup (revoke, answers,
# show), the facts store (a kept fact), the settings (a listing reads none). Each is loaded by
# the command that uses it (issue 23: ~25 M instructions of `wisp approvals pending`).
LISTING_DEFERS = (
    "wisp.stores.grants",
    "wisp.program.lookup",
    "wisp.stores.facts",
    "wisp.stores.config",
)
# What the listing of an empty channel needs none of: it reads three directories and says one
# line. attrs' import alone is ~7.5 ms of a cold start, the records and the answering side
# ~20 ms more (bench/README.md, issue 23).
EMPTY_LISTING_NEVER = (
    *LISTING_NEVER,
    *LISTING_DEFERS,
    "attr",
    "attrs",
    "cattrs",
    "rich",
    "pending._records",
    "pending._channel",
    "pending._kinds",
    "wisp._answering",
    "wisp.audit.writer",
    "wisp._render",
    # The floor (a one-command typer app) loads none of it, ~1 % of this start (issue 41's
    # hold: cold `wisp approvals pending` <= 1.05x the floor). (json too, which this probe
    # itself loads to report: bench/README.md says what it cost.)
    "shlex",
)


def probed(home: Path, *args: str) -> dict[str, Any]:
    """What `wisp ARGS` loaded (`modules`), which commands typer built for it (`built`), and
    how many objects it froze (`frozen`)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**_env(), "WISP_HOME": str(home)},
        check=False,
    )
    marker = done.stdout.rindex("\nPROBED ")
    found: dict[str, Any] = json.loads(done.stdout[marker + len("\nPROBED ") :])
    return found


def loaded(home: Path, *args: str) -> set[str]:
    return set(probed(home, *args)["modules"])


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("WISP_")}


def found(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


class TestWhatACommandLoads:
    @pytest.mark.parametrize(
        "args",
        [
            ("pending",),
            ("pending", "--json"),
            ("approvals", "pending"),
            ("facts", "pending"),
            ("questions", "pending"),
            ("pending", "sweep"),
        ],
        ids=" ".join,
    )
    def test_a_listing_loads_no_watching_asking_or_face(
        self, home: Path, channel: Channel, server: ServerLock, args: tuple[str, ...]
    ) -> None:
        """Listing a waiting request (and sweeping) loads no watchdog, asyncio, asking side,
        notifier or face."""
        channel.file(command(server))
        assert found(loaded(home, *args), LISTING_NEVER) == []

    @pytest.mark.parametrize(
        "args",
        [("--help",), ("--version",), ("approvals", "--help"), ("doctor",), ("log",)],
        ids=" ".join,
    )
    def test_no_everyday_command_loads_a_face(self, home: Path, args: tuple[str, ...]) -> None:
        """Help, the version, the doctor and the audit log load no TUI, MCP or relay code."""
        assert found(loaded(home, *args), FACES) == []

    @pytest.mark.parametrize(
        "args",
        [
            ("pending", "--kind", "command", "--limit", "5"),
            ("approvals", "approve", "abcd", "--scope", "always"),
            ("log", "--kind", "fact", "--limit", "3"),
            ("notify", "--route", "terminal", "hello"),
        ],
        ids=" ".join,
    )
    def test_values_typed_load_no_pydantic(self, home: Path, args: tuple[str, ...]) -> None:
        """Options and arguments given values are parsed without pydantic (typer 0.29 builds a
        pydantic adapter for each: a third more CPU for every command; pyproject.toml)."""
        assert found(loaded(home, *args), ("pydantic", "pydantic_core")) == []

    @pytest.mark.parametrize(
        "args",
        [
            ("approvals", "pending"),
            ("pending", "--json"),
            ("--version",),
            ("approvals", "approve", "0123456789abcdef"),
        ],
        ids=" ".join,
    )
    def test_no_random_names_before_they_are_needed(
        self, home: Path, channel: Channel, server: ServerLock, args: tuple[str, ...]
    ) -> None:
        """A listing, the version and a refused answer load no `secrets` (nor hmac): only
        writing a store's file or minting an ID needs a random name, and imports it there."""
        channel.file(command(server))
        assert found(loaded(home, *args), RANDOM_NAMES) == []

    @pytest.mark.parametrize(
        "args", [("approvals", "pending"), ("pending", "--json")], ids=" ".join
    )
    def test_a_listing_loads_no_stores_lookup_or_settings(
        self, home: Path, channel: Channel, server: ServerLock, args: tuple[str, ...]
    ) -> None:
        """A listing of a waiting request loads no grants or facts store, no ID lookup and no
        settings: the commands that answer, revoke or show load those themselves."""
        channel.file(command(server))
        assert found(loaded(home, *args), LISTING_DEFERS) == []

    def test_filing_and_answering_load_no_cattrs(self, home: Path) -> None:
        """`wisp approvals request` files and is answered, and `wisp approvals approve`
        answers in a terminal, without cattrs: their records are written and read on the plain
        path (loading cattrs and building the converter cost each ~20 ms, issue 23)."""

        env = {**_env(), "WISP_HOME": str(home)}
        asker = subprocess.Popen(
            [sys.executable, "-c", PROBE, "approvals", "request", "--", "make", "deploy"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert asker.stderr is not None
            prompt = ""
            for line in asker.stderr:  # ends at the asker's exit at the latest
                prompt += line
                if asked := ANSWER_LINE.search(line):
                    break
            else:
                raise AssertionError(f"no request was filed: {prompt!r}")
            _, said = pty_run(
                sys.executable, ["-c", PROBE, "approvals", "approve", asked.group(1)], env=env
            )
            out, err = asker.communicate(timeout=60)
        finally:
            asker.kill()
            asker.wait()
        assert "the asker has it" in said, said
        assert out.startswith("approved once"), prompt + err
        for output in (said, out):
            modules = json.loads(output[output.rindex("\nPROBED ") + len("\nPROBED ") :])
            assert found(set(modules["modules"]), ("cattrs",)) == []

    def test_the_version_loads_no_channel_settings_or_rich(self, home: Path) -> None:
        """`wisp --version` loads typer and nothing of the channel, the settings, the home,
        attrs or rich: one plain line needs none of them (it took ~70% more without)."""
        modules = loaded(home, "--version")
        never = ("pending", "wisp.stores.config", "wisp._home", "rich", "attr", "attrs")
        assert found(modules, never) == []

    def test_a_group_builds_only_the_command_run(self, home: Path) -> None:
        """`wisp approvals pending` builds one of its group's commands (typer makes each
        command's parameters from its signature: ~3 M instructions a command); `--help`
        lists, and so builds, all of them."""
        assert probed(home, "approvals", "pending")["built"] == ["pending"]
        assert "revoke" in probed(home, "approvals", "--help")["built"]

    def test_a_command_loaded_is_frozen(self, home: Path) -> None:
        """What a command loads and builds lives as long as `wisp` does: frozen after it is
        built (no collection walks it again, nor at exit), as main() freezes what came
        before; `wisp --version`, which builds no command, froze only that."""
        before = probed(home, "--version")["frozen"]
        assert probed(home, "approvals", "pending")["frozen"] > before + 500

    @pytest.mark.parametrize(
        "args",
        [
            ("approvals", "pending"),
            ("pending",),
            ("pending", "--json"),
            ("questions", "pending"),
            ("facts", "pending"),
            ("tools", "pending"),
        ],
        ids=" ".join,
    )
    def test_an_empty_listing_loads_no_records(
        self, home: Path, channel: Channel, args: tuple[str, ...]
    ) -> None:
        """Listing an empty channel loads no attrs, no record, no channel and no answering
        side, nor rich: it reads the channel's three directories and says so in one line."""
        assert found(loaded(home, *args), EMPTY_LISTING_NEVER) == []

    def test_a_listing_with_anything_in_the_channel_loads_the_records(
        self, home: Path, channel: Channel
    ) -> None:
        """The check can fail: a writer's temp file left in the channel (which the sweep may
        remove) is enough for the listing to open the channel and load the records."""
        (channel.path / ".tmp" / "0123456789abcdef.request.json.tmp").write_text("")
        assert "pending._records" in loaded(home, "approvals", "pending")

    def test_the_probe_sees_what_a_command_loads(self, home: Path) -> None:
        """The check can fail: `wisp pending watch` does load watchdog (stopped at once by its
        channel being unusable: WISP_HOME is a file)."""
        blocker = home.parent / "not-a-directory"
        blocker.write_text("")
        modules = loaded(blocker, "pending", "watch")
        assert "wisp.cli.pending" in modules
        assert found(modules, ("watchdog",)) != []
