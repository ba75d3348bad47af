"""The MCP face without a client: what its results say, wisp's words for arguments that do
not fit a tool's schema; and that the person's everyday commands never load the MCP SDK."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError, create_model

from wisp.mcp import _args as args


def refused(model: type[BaseModel], **values: Any) -> str:
    """What wisp says of *values* that *model* (a tool's arguments) does not take."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(values)
    return args.refused_arguments(caught.value.errors())


class TestViews:
    def test_still_waiting_names_the_answer_and_the_bound(self, tmp_path: Path) -> None:
        """A pending result says how to answer, how to wait again, and when it ends."""
        from pending import CommandBinding, Kind, make_request
        from wisp._home import open_channel
        from wisp.mcp._views import still_waiting

        with open_channel(tmp_path / "home") as channel, channel.server() as lock:
            request = make_request(
                kind=Kind.COMMAND,
                binding=CommandBinding(command="make", cwd="/srv"),
                title="t",
                body="b",
                server=lock.record(client="c"),
                expires_in_s=600,
            )
        text, data = still_waiting(request)
        assert (data["state"], data["approved"], data["id"]) == ("pending", False, request.id)
        assert f"wisp approvals approve {request.id}" in text and "await_request" in text
        assert data["expiresAt"] and data["expiresAt"] in text
        assert request.expires_at is not None and request.expires_at > datetime.now(UTC)


class TestRefusedArguments:
    """The SDK validates a call's arguments against the declared types; wisp says what is
    wrong in its own words, never the validator's."""

    Approval = create_model(
        "Approval",
        command=(args.Command, ...),
        cwd=(args.Cwd, None),
        wait_seconds=(args.WaitSeconds, args.WAIT_DEFAULT_S),
    )
    Question = create_model(
        "Question",
        question=(args.Question, ...),
        options=(args.Options, None),
        free_text=(args.FreeText, None),
    )
    Move = create_model("Move", fact=(args.FactId, ...), scope=(args.Scope, ...))

    @pytest.mark.parametrize(
        ("values", "said"),
        [
            ({"command": "x" * 5000}, "command is 5000 characters long; at most 4096 are taken."),
            ({"command": "ls", "cwd": "/" * 2000}, "cwd is 2000 characters long; at most 1024"),
            ({"command": "ls", "wait_seconds": -1}, "must be a finite number, 0 or more (got -1)"),
            ({"command": "ls", "wait_seconds": float("nan")}, "wait_seconds must be a finite"),
            ({"command": "ls", "wait_seconds": 1e9}, "wait_seconds is 1e+09; at most 3600 is"),
            ({"command": "ls", "wait_seconds": 3600.0001}, "wait_seconds is 3600.0001; at most"),
            ({"command": "ls", "wait_seconds": "soon"}, "must be a number (got 'soon')"),
            ({"command": "ls", "wait_seconds": "0"}, "must be a number (got '0')"),
            ({"command": "ls", "wait_seconds": True}, "must be a number (got True)"),
            ({"command": "ls", "wait_seconds": False}, "must be a number (got False)"),
            ({"command": 5}, "command must be a string (got 5)."),
            ({}, "command is missing: this tool needs it."),
        ],
    )
    def test_an_approval_argument(self, values: dict[str, Any], said: str) -> None:
        """Each limit is refused naming the argument, the limit and what to do."""
        words = refused(self.Approval, **values)
        assert said in words
        assert "Input should" not in words and "validation error" not in words

    def test_lists_and_their_items(self) -> None:
        """Too many options, and one too long, named by its place in the list."""
        many = refused(self.Question, question="q", options=[str(i) for i in range(30)])
        assert many == "30 options; at most 20 are taken. Send fewer."
        long = refused(self.Question, question="q", options=["a", "x" * 300])
        assert long.startswith("options[1] is 300 characters long; at most 200 are taken.")

    @pytest.mark.parametrize("value", ["yes", 1, "off", 0, "true"])
    def test_free_text_is_true_or_false_only(self, value: Any) -> None:
        """free_text takes a JSON boolean: "yes", 1, "off" are refused, never read as one."""
        words = refused(self.Question, question="q", options=["a"], free_text=value)
        assert words.startswith(f"free_text must be true or false (got {value!r})")

    def test_a_scope_that_is_not_one(self) -> None:
        """A scope outside the three names the three."""
        assert refused(self.Move, fact="c1", scope="forever") == (
            "scope must be one of 'thread', 'session' or 'permanent' (got 'forever')."
        )

    def test_a_huge_value_is_not_quoted_back_whole(self) -> None:
        """A refused value is quoted back cut short."""
        words = refused(self.Approval, command="ls", wait_seconds="z" * 10_000)
        assert len(words) < 200


class TestImports:
    def test_everyday_commands_never_load_the_sdk(self, home: Path) -> None:
        """`wisp pending` imports neither mcp nor mcp_types, nor `wisp mcp --help`: only
        running `wisp mcp` does, inside its command."""
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "wisp", "pending", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        loaded = re.findall(r"\|\s+(mcp(?:_types)?(?:\.\S+)?)\s*$", done.stderr, re.MULTILINE)
        assert loaded == []
        # Its help loads the command's module (the lazy root builds it), never its SDK.
        probe = (
            "import sys\n"
            "sys.argv = ['wisp', 'mcp', '--help']\n"
            "from wisp.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
        )
        helped = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
        )
        modules = set(helped.stderr.split())
        assert "wisp.cli.mcp" in modules, helped.stderr
        assert not {m for m in modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))}
