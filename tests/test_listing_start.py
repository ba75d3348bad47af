"""`wisp pending --json` and `wisp approvals pending --json` are served before the CLI loads
(`wisp.__main__`): a script listing what waits pays for no typer, click or rich (issue 41).
Each check runs the program in a fresh interpreter, as a script starts it, and compares it
with the CLI's own command run on the same channel: stdout, stderr and status, byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from helpers import command, fact, question

from pending import Channel, Decision, Kind, Via

# Runs the `wisp` program (wisp.__main__.run) on argv, or with PROBE_CLI the same program with
# nothing served before the CLI (every command line the CLI's, as before), and says on stderr,
# last, which modules it had loaded (run() ends with the exit handlers).
PROBE = """\
import atexit, json, os, sys
atexit.register(
    lambda: sys.stderr.write("\\nPROBED " + json.dumps(sorted(sys.modules)) + "\\n")
)
sys.argv = ["wisp", *sys.argv[1:]]
import wisp.__main__ as program
if os.environ.get("PROBE_CLI"):
    program._listing = lambda argv: None
program.run()
"""

CLI_FRAMEWORK = ("typer", "click", "rich")
LISTINGS = [("pending", "--json"), ("approvals", "pending", "--json")]


class Ran(NamedTuple):
    code: int
    out: str
    err: str
    modules: list[str]


def program(
    *args: str,
    env: dict[str, str],
    cli: bool = False,
    stdout: int | None = subprocess.PIPE,
    limit: Callable[[], None] | None = None,
) -> Ran:
    """`wisp ARGS` run as the program runs it (or through the CLI, *cli*), in *env* alone."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", **env, **({"PROBE_CLI": "1"} if cli else {})},
        timeout=120,
        check=False,
        preexec_fn=limit,  # a resource limit, set in the child alone
    )
    err, _, probed = done.stderr.decode().rpartition("\nPROBED ")
    out = done.stdout.decode() if done.stdout is not None else ""
    return Ran(done.returncode, out, err, json.loads(probed))


def both(*args: str, env: dict[str, str], **kw: Any) -> tuple[Ran, Ran]:
    """The program's run, then the CLI's, on the same channel (each leaves it as it was)."""
    return program(*args, env=env, **kw), program(*args, env=env, cli=True, **kw)


def framework(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in CLI_FRAMEWORK or m.startswith("wisp.cli")]


def same(fast: Ran, cli: Ran) -> None:
    """The same bytes on both streams and the same status; only the CLI loaded its framework."""
    assert fast[:3] == cli[:3]
    assert framework(fast.modules) == []
    assert "wisp.cli" in cli.modules


def home_env(home: Path) -> dict[str, str]:
    return {"WISP_HOME": str(home), "HOME": str(home.parent)}


def twin(home: Path, where: Path, live: list[str], stack: contextlib.ExitStack) -> Path:
    """A copy of *home* at *where*, its *live* servers' locks held again (a copy of a lock
    file is not held): each run gets the same channel, a sweep's work still to do."""
    shutil.copytree(home, where, symlinks=True)
    channel = stack.enter_context(Channel.open(where))
    for server_id in live:
        stack.enter_context(channel.server(server_id))
    return where


@pytest.fixture
def busy(home: Path) -> Iterator[tuple[Path, list[str]]]:
    """*home* holding what a listing meets: commands, a fact and a question of a live asker
    (one command with text no terminal may get raw, one with a shell call's options), a dead
    asker's command (the sweep ends it), and an entry that cannot be read safely; and the live
    asker's server ID."""
    with Channel.open(home) as channel:
        with channel.server() as dead:
            channel.file(command(dead, text="make stale"))
        with channel.server() as lock:
            channel.file(command(lock, text="make deploy"))
            channel.file(command(lock, text="rm -rf \x7f\u202ebuild\u2028 café ☃"))
            channel.file(fact(lock))
            channel.file(question(lock, options=("staging", "production")))
            (home / "pending" / "0123456789abcdef.request.json").write_text("{not json")
            yield home, [lock.id]


class TestTheListingBeforeTheCli:
    def test_it_loads_no_cli_framework(self, busy: tuple[Path, list[str]]) -> None:
        """`wisp pending --json` with requests waiting lists them without typer, click, rich
        or any of the CLI's modules ever imported."""
        home, _ = busy
        ran = program("pending", "--json", env=home_env(home))
        assert ran.code == 0, ran.err
        assert len(json.loads(ran.out)) == 4
        assert framework(ran.modules) == []

    @pytest.mark.parametrize("args", LISTINGS, ids=" ".join)
    def test_a_busy_channel_is_listed_as_the_cli_lists_it(
        self, busy: tuple[Path, list[str]], tmp_path: Path, args: tuple[str, ...]
    ) -> None:
        """Each listing, on a channel with a dead asker's request to sweep, an entry to skip,
        every kind and text to escape: the same array, the same words on stderr, status 0."""
        home, live = busy
        with contextlib.ExitStack() as stack:
            fast = program(*args, env=home_env(twin(home, tmp_path / "a" / "home", live, stack)))
            cli = program(
                *args, env=home_env(twin(home, tmp_path / "b" / "home", live, stack)), cli=True
            )
        same(fast, cli)
        assert fast.code == 0 and "skipped 1 entry" in fast.err
        assert "\u202e" not in fast.out and "\\u202e" in fast.out
        kinds = {r["kind"] for r in json.loads(fast.out)}
        assert kinds == ({"command"} if args[0] == "approvals" else {"command", "fact", "question"})

    @pytest.mark.parametrize("args", LISTINGS, ids=" ".join)
    def test_an_empty_channel(self, home: Path, args: tuple[str, ...]) -> None:
        """A channel that holds nothing: `[]`, nothing on stderr, status 0."""
        Channel.open(home).close()
        fast, cli = both(*args, env=home_env(home))
        same(fast, cli)
        assert (fast.code, fast.out, fast.err) == (0, "[]\n", "")

    def test_a_home_not_made_yet(self, tmp_path: Path) -> None:
        """`$WISP_HOME` not there yet: made, and an empty listing, as the CLI does it."""
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        fast = program("pending", "--json", env=home_env(tmp_path / "a" / "home"))
        cli = program("pending", "--json", env=home_env(tmp_path / "b" / "home"), cli=True)
        same(fast, cli)
        assert fast.out == "[]\n" and (tmp_path / "a" / "home" / "pending").is_dir()

    def test_no_wisp_home_set(self, tmp_path: Path) -> None:
        """`$WISP_HOME` unset: `~/.wisp` of `$HOME`, as the CLI lists it."""
        homes = [tmp_path / "a", tmp_path / "b"]
        for home in homes:
            home.mkdir()
        fast = program("pending", "--json", env={"HOME": str(homes[0])})
        cli = program("pending", "--json", env={"HOME": str(homes[1])}, cli=True)
        same(fast, cli)
        assert fast.out == "[]\n" and (homes[0] / ".wisp" / "pending").is_dir()

    @pytest.mark.skipif(os.getuid() != 0, reason="needs root: a home another user owns")
    def test_another_users_home(self, tmp_path: Path) -> None:
        """`$WISP_HOME` unset and `$HOME` another user's (`sudo` without `-H`): refused in the
        CLI's words, exit 2, nothing made there."""
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, 4242, 4242)
        fast, cli = both("pending", "--json", env={"HOME": str(theirs)})
        same(fast, cli)
        assert fast.code == 2 and "another user's home" in fast.err
        assert not (theirs / ".wisp").exists()

    @pytest.mark.parametrize("bad", ["a file", "open to all", "a symlinked channel"])
    def test_a_bad_home(self, tmp_path: Path, bad: str) -> None:
        """A home that is a file, one others may write to, a channel directory that is a
        symlink: refused in the same words, exit 2, nothing on stdout."""
        home = tmp_path / "home"
        if bad == "a file":
            home.write_text("")
        else:
            home.mkdir(mode=0o700)
        if bad == "open to all":
            home.chmod(0o777)
        if bad == "a symlinked channel":
            (tmp_path / "elsewhere").mkdir(mode=0o700)
            (home / "pending").symlink_to(tmp_path / "elsewhere")
        fast, cli = both("pending", "--json", env=home_env(home))
        same(fast, cli)
        assert (fast.code, fast.out) == (2, "") and fast.err.startswith("wisp: ")

    @pytest.mark.skipif(os.getuid() != 0, reason="needs root: chattr +i")
    def test_a_channel_it_cannot_write(self, home: Path) -> None:
        """A dead asker's request in a channel made immutable: the sweep cannot end it, says
        so on stderr, and lists it stale, with why; status 0."""
        with Channel.open(home) as channel, channel.server() as dead:
            channel.file(command(dead, text="make stale"))
        pending = home / "pending"
        done = subprocess.run(["chattr", "+i", str(pending), str(pending / ".tmp")], check=False)
        if done.returncode != 0:
            pytest.skip("chattr +i does not work here")
        try:
            fast, cli = both("pending", "--json", env=home_env(home))
        finally:
            subprocess.run(["chattr", "-i", str(pending), str(pending / ".tmp")], check=True)
        same(fast, cli)
        assert fast.code == 0 and "not tidied" in fast.err
        assert [r["state"] for r in json.loads(fast.out)] == ["stale"]

    def test_an_audit_log_that_is_no_file(self, home: Path, tmp_path: Path) -> None:
        """A FIFO at the audit log's name and a fact kept whose asker has stopped (the
        listing's sweep would apply it, and audit that): not applied, said in the same words
        (each naming its own copy of the channel), status 0."""
        with Channel.open(home) as channel, channel.server() as gone:
            request = fact(gone)
            channel.file(request)
            channel.answer(request.id, Decision.KEEP, kind=Kind.FACT, via=Via.CLI)
        runs = []
        with contextlib.ExitStack() as stack:
            for name, cli in (("a", False), ("b", True)):
                copy = twin(home, tmp_path / name / "home", [], stack)
                (copy / "logs").mkdir(mode=0o700, exist_ok=True)
                os.mkfifo(copy / "logs" / "audit.jsonl", 0o600)
                ran = program("pending", "--json", env=home_env(copy), cli=cli)
                runs.append(ran._replace(err=ran.err.replace(str(copy), "HOME")))
        same(*runs)
        assert runs[0].code == 0 and "HOME/logs/audit.jsonl is a FIFO" in runs[0].err

    def test_too_few_open_files(self, busy: tuple[Path, list[str]]) -> None:
        """Under `ulimit -n` 5 to 12: the same words and status at each limit (exit 2 naming
        the limit where it stops the listing)."""
        home, _ = busy
        said_limit = False
        for files in range(5, 13):

            def limit(files: int = files) -> None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

            fast, cli = both("pending", "--json", env=home_env(home), limit=limit)
            assert fast[:3] == cli[:3], files
            said_limit = said_limit or "ulimit -n" in fast.err
        assert said_limit

    def test_a_reader_gone(self, busy: tuple[Path, list[str]]) -> None:
        """Written into a pipe nobody reads any more: status 0, no more said than the CLI says."""
        home, _ = busy
        runs = []
        for cli in (False, True):
            read_end, write_end = os.pipe()
            os.close(read_end)
            try:
                runs.append(
                    program("pending", "--json", env=home_env(home), cli=cli, stdout=write_end)
                )
            finally:
                os.close(write_end)
        same(*runs)
        assert runs[0].code == 0 and "Traceback" not in runs[0].err


PEOPLES_LISTINGS = [("pending",), ("approvals", "pending")]


class TestTheEmptyListingBeforeTheCli:
    """`wisp pending` and `wisp approvals pending`, the listings for people, are served before
    the CLI loads while the channel holds nothing, and are the CLI's otherwise."""

    @pytest.mark.parametrize("args", PEOPLES_LISTINGS, ids=" ".join)
    def test_a_channel_that_holds_nothing(self, home: Path, args: tuple[str, ...]) -> None:
        """Its one line, as the CLI says it, status 0, and no typer, click or rich loaded."""
        Channel.open(home).close()
        fast, cli = both(*args, env=home_env(home))
        same(fast, cli)
        what = "command" if args[0] == "approvals" else "anything"
        assert (fast.code, fast.out, fast.err) == (0, f"Nothing waits for you ({what}).\n", "")

    @pytest.mark.parametrize("args", PEOPLES_LISTINGS, ids=" ".join)
    def test_a_channel_that_holds_anything_is_the_clis(
        self, busy: tuple[Path, list[str]], args: tuple[str, ...]
    ) -> None:
        """Requests waiting, or only a lock or a temp file left: the CLI lists (and sweeps)."""
        home, _ = busy
        fast, cli = both(*args, env=home_env(home))
        # Both listed by the CLI (their AGE cells may differ by the second between them).
        assert fast.code == cli.code == 0 and "make deploy" in fast.out and "make deploy" in cli.out
        assert "wisp.cli" in fast.modules
        with Channel.open(tmp := home.parent / "locked") as channel, channel.server():
            ran = program(*args, env=home_env(tmp))
        assert ran.code == 0 and "wisp.cli" in ran.modules

    def test_a_home_not_made_yet_is_the_clis(self, tmp_path: Path) -> None:
        """`$WISP_HOME` not there yet: the CLI makes it and says nothing waits."""
        ran = program("pending", env=home_env(tmp_path / "home"))
        assert (ran.code, ran.out) == (0, "Nothing waits for you (anything).\n")
        assert "wisp.cli" in ran.modules and (tmp_path / "home" / "pending").is_dir()

    def test_a_home_open_to_all_is_refused_as_the_cli_refuses_it(self, tmp_path: Path) -> None:
        """A home others may write to holds nothing, yet is no channel to trust: refused in
        the CLI's words, exit 2."""
        home = tmp_path / "home"
        home.mkdir(mode=0o700)
        Channel.open(home).close()
        home.chmod(0o777)
        fast, cli = both("pending", env=home_env(home))
        assert fast[:3] == cli[:3] and fast.code == 2 and fast.out == ""


class TestAnyOtherSpellingIsTheClis:
    @pytest.mark.parametrize(
        "args",
        [
            ("pending", "--json", "--all"),
            ("pending", "--json", "--json"),
            ("pending", "--kind", "command", "--json"),
            ("pending", "--json", "--help"),
            ("pending", "--jso"),
            ("approvals", "pending", "--json", "--limit", "3"),
            ("facts", "pending", "--json"),
        ],
        ids=" ".join,
    )
    def test_any_other_command_line_is_the_clis(
        self, busy: tuple[Path, list[str]], args: tuple[str, ...]
    ) -> None:
        """Another option, an option twice, help, a misspelling, another kind's listing: the
        CLI parses it, and says and exits as it always did."""
        home, _ = busy
        fast, cli = both(*args, env=home_env(home))
        assert fast[:3] == cli[:3]
        assert "wisp.cli" in fast.modules

    def test_a_shells_completion_is_the_clis(self, home: Path) -> None:
        """With `_WISP_COMPLETE` set, the shell is asking the CLI to complete the words, not
        to list: the CLI answers."""
        env = {**home_env(home), "_WISP_COMPLETE": "bash_complete"}
        env |= {"COMP_WORDS": "wisp pending --json", "COMP_CWORD": "2"}
        fast, cli = both("pending", "--json", env=env)
        assert fast[:3] == cli[:3]
        assert "wisp.cli" in fast.modules
