"""The `tool` kind: its row, its binding on disk, how each tool reads, and its grants."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import in_terminal, run_wisp

from pending import (
    KINDS,
    Channel,
    Decision,
    Kind,
    Outcome,
    ToolBinding,
    from_json,
    loads_strict,
    to_json,
)
from wisp import ApprovalGate, Asker, GrantStore
from wisp.audit.writer import EntryPoint
from wisp.kinds import view
from wisp.kinds.tool import LISTING_LINES, edit_diff

TOOL = view(Kind.TOOL)


def binding(tool: str, cwd: str = "/srv/project", **tool_input: Any) -> ToolBinding:
    return ToolBinding(tool=tool, input=tool_input, cwd=cwd, thread="session-1")


@pytest.fixture
def gate(home: Path) -> Iterator[ApprovalGate]:
    with Channel.open(home) as channel:
        asker = Asker(channel, entry_point=EntryPoint.HOOK, client="tool-test")
        try:
            yield ApprovalGate(asker, timeout_s=600)
        finally:
            asker.close()


class TestToolRow:
    def test_its_row_in_the_kinds_table(self) -> None:
        """`tool` has its own suffix (a build without it never sees one), the command
        decisions, and dies with its server."""
        spec = KINDS[Kind.TOOL]
        assert spec.suffix == ".tool.json" and spec.binding_type is ToolBinding
        assert spec.decisions == KINDS[Kind.COMMAND].decisions
        assert spec.dies_with_server and TOOL.group == "tools"

    def test_any_json_object_input_survives_the_disk(self, gate: ApprovalGate) -> None:
        """A tool's input, nested and with any text, is written and read back as given, and
        the converter and the plain path read it alike."""
        tool_input = {"b": [1, {"c": None, "d": "\u202eevil\x1b[2J"}], "a": True, "n": 2.5}
        request = gate.file_tool("mcp__x__y", tool_input, "/srv", thread="s")
        raw = (gate.asker.channel.path / f"{request.id}.tool.json").read_bytes()
        data = loads_strict(raw)
        assert data["binding"]["input"] == tool_input
        read = gate.asker.channel.status(request.id).request.binding
        assert isinstance(read, ToolBinding) and read.input == tool_input
        assert from_json(to_json(read), ToolBinding) == read

    @pytest.mark.parametrize("value", [[1, 2], "text", 3, None])
    def test_input_that_is_not_an_object_is_refused(self, value: Any) -> None:
        """An `input` that is not a JSON object makes the record unreadable, never a crash."""
        from pending import DecodeError

        with pytest.raises(DecodeError):
            from_json({"tool": "Edit", "input": value, "cwd": "/"}, ToolBinding)


class TestToolView:
    def test_an_edit_reads_as_a_diff_of_its_file(self, tmp_path: Path) -> None:
        """An Edit is a unified diff of the file it changes, with its context lines."""
        target = tmp_path / "a.py"
        target.write_text("x = 1\ny = 2\nz = 3\n")
        diff = edit_diff(
            "Edit", {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 3"}
        )
        assert diff == [
            f"--- {target}",
            f"+++ {target}",
            "@@ -1,3 +1,3 @@",
            " x = 1",
            "-y = 2",
            "+y = 3",
            " z = 3",
        ]

    def test_a_relative_path_takes_gits_a_and_b(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """git's `a/` and `b/` go before a relative path (an absolute one is named as it is,
        above: never `--- a/home/…`)."""
        monkeypatch.chdir(tmp_path)
        (tmp_path / "a.py").write_text("x = 1\n")
        diff = edit_diff("Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"})
        assert diff is not None and diff[:2] == ["--- a/a.py", "+++ b/a.py"]

    def test_a_multiedit_applies_its_edits_in_order(self, tmp_path: Path) -> None:
        """A MultiEdit's edits are made one after another, replace_all honoured."""
        target = tmp_path / "a.txt"
        target.write_text("a a\nb\n")
        edits = [
            {"old_string": "a", "new_string": "c", "replace_all": True},
            {"old_string": "b", "new_string": "d"},
        ]
        diff = edit_diff("MultiEdit", {"file_path": str(target), "edits": edits})
        assert diff is not None and diff[-4:] == ["-a a", "-b", "+c c", "+d"]

    def test_an_edit_of_a_file_not_there_shows_its_own_text(self, tmp_path: Path) -> None:
        """Where the file cannot be read (absent, or a FIFO that a read would block on), the
        edit's old text against its new."""
        import os

        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        for path in (tmp_path / "absent", fifo):
            diff = edit_diff("Edit", {"file_path": str(path), "old_string": "a", "new_string": "b"})
            assert diff is not None and diff[-2:] == ["-a", "+b"]

    def test_a_write_shows_its_path_and_content_whole_on_request(self) -> None:
        """A Write lists its first lines and says how many are left; `details` has all."""
        content = "\n".join(f"line {n}" for n in range(40))
        write = binding("Write", file_path="/srv/project/out.txt", content=content)
        assert TOOL.asked(write) == "Write /srv/project/out.txt"
        listed = TOOL.paragraphs(write)
        assert [text for _, text in listed[:LISTING_LINES]] == content.splitlines()[:LISTING_LINES]
        assert f"{40 - LISTING_LINES} more lines" in listed[LISTING_LINES][1]
        shown = TOOL.details(write)
        assert ("path", "/srv/project/out.txt") in shown
        assert [t for _, t in shown if t.startswith("line ")] == content.splitlines()

    def test_a_webfetch_shows_its_url_and_others_their_arguments(self) -> None:
        """A WebFetch reads as its URL; any other tool as its arguments pretty-printed."""
        fetch = binding("WebFetch", url="https://example.com/api", prompt="endpoints")
        assert TOOL.asked(fetch) == "WebFetch https://example.com/api"
        assert ("url", "https://example.com/api") in TOOL.details(fetch)
        issue = binding("mcp__github__create_issue", title="Bug", repo="r")
        assert TOOL.details(issue)[-4:] == [
            ("input", "{"),
            ("", '  "repo": "r",'),
            ("", '  "title": "Bug"'),
            ("", "}"),
        ]

    def test_wisp_show_makes_every_text_visible(self, gate: ApprovalGate) -> None:
        """`wisp show` of a tool request shows control and bidi characters as markers."""
        request = gate.file_tool(
            "Write", {"file_path": "/srv/x", "content": "ok\x1b[2J\u202egnp.exe"}, "/srv"
        )
        shown = run_wisp("show", request.id, env={"COLUMNS": "200"})
        assert shown.returncode == 0, shown.stderr
        assert "ok⟨ESC⟩[2J⟨U+202E⟩gnp.exe" in shown.stdout
        assert "\x1b[2J" not in shown.stdout


class TestToolGrants:
    def test_a_grant_matches_the_exact_tool_and_canonical_input(self, home: Path) -> None:
        """An always grant covers the same tool with the same input (in any key order), and
        nothing else: another tool, other input, or a command of the same text."""
        store = GrantStore(home)
        grant = store.add_tool(
            scope="always",
            tool="Edit",
            tool_input={"a": 1, "b": [2]},
            cwd="/x",
            request="r",
            user="u",
        )
        assert store.covering_tool("Edit", {"b": [2], "a": 1}, "/y") == grant
        assert store.covering_tool("Write", {"a": 1, "b": [2]}, "/y") is None
        assert store.covering_tool("Edit", {"a": 1, "b": [3]}, "/y") is None
        assert store.covering(grant.command, "/y") is None
        assert not (home / "grants.json").exists()  # a command-only build never reads it
        assert json.loads((home / "tool-grants.json").read_text())["grants"][0]["input"] == {
            "a": 1,
            "b": [2],
        }

    def test_a_project_grant_stays_in_its_project(self, home: Path, tmp_path: Path) -> None:
        """A project grant covers the call under its project only."""
        inside, outside = tmp_path / "p" / "sub", tmp_path / "q"
        inside.mkdir(parents=True)
        outside.mkdir()
        (tmp_path / "p" / ".git").mkdir()
        store = GrantStore(home)
        store.add_tool(
            scope="project", tool="Bash2", tool_input={}, cwd=str(inside), request="r", user="u"
        )
        assert store.covering_tool("Bash2", {}, str(tmp_path / "p")) is not None
        assert store.covering_tool("Bash2", {}, str(outside)) is None

    def test_listed_and_revoked_with_the_command_grants(self, home: Path) -> None:
        """`wisp approvals grants` lists a tool grant; `wisp approvals revoke` removes it."""
        grant = GrantStore(home).add_tool(
            scope="always",
            tool="WebFetch",
            tool_input={"url": "https://e.x"},
            cwd="/",
            request="r",
            user="u",
        )
        listed = json.loads(run_wisp("approvals", "grants", "--json").stdout)
        assert [(g["id"], g["kind"], g["tool"], g["input"]) for g in listed] == [
            (grant.id, "tool", "WebFetch", {"url": "https://e.x"})
        ]
        assert run_wisp("approvals", "revoke", grant.id).returncode == 0
        assert GrantStore(home).covering_tool("WebFetch", {"url": "https://e.x"}, "/") is None

    def test_session_grants_are_the_threads_and_end_with_it(self, home: Path) -> None:
        """A kept session grant covers its thread only, and is gone once the thread ends."""
        store = GrantStore(home)
        store.keep_session(thread="s1", tool="Edit", tool_input={"a": 1}, request="r", user="u")
        store.keep_session(thread="s1", command="make", request="r", user="u")
        assert store.covering_tool("Edit", {"a": 1}, "/", thread="s1") is not None
        assert store.covering_tool("Edit", {"a": 1}, "/", thread="s2") is None
        assert store.covering_in_thread("make", "/", "s1") is not None
        assert store.end_session("s1") == 2
        assert store.covering_in_thread("make", "/", "s1") is None


class TestToolAnswered:
    def test_approved_always_from_a_terminal_makes_its_grant(self, gate: ApprovalGate) -> None:
        """`wisp tools approve ID --as always` in a terminal approves the tool call; the
        gate's verdict keeps the grant, which then covers the call at once."""
        tool_input = {"url": "https://example.com"}
        request = gate.file_tool("WebFetch", tool_input, "/srv", thread="s")
        code, output = in_terminal("tools", "approve", request.id, "--as", "always")
        assert code == 0, output
        ending = gate.asker.wait(request.id, 30)
        assert ending is not None and ending.outcome is Outcome.ANSWERED
        assert ending.decision == Decision.ALWAYS
        verdict = gate.tool_verdict(ending)
        assert verdict.approved and verdict.grant is not None
        granted = gate.granted_tool("WebFetch", tool_input, "/elsewhere")
        assert granted is not None and granted.grant == verdict.grant

    def test_a_tool_request_is_refused_by_the_command_verbs(self, gate: ApprovalGate) -> None:
        """`wisp approvals deny ID` on a tool request is refused, naming `wisp tools`."""
        request = gate.file_tool("Write", {"file_path": "/x", "content": ""}, "/srv")
        code, output = in_terminal("approvals", "deny", request.id)
        assert code == 1
        assert f"wisp tools approve {request.id}" in output.replace("\n", " ")
