"""What each harness's settings must hold for its sandbox to keep the agent out of
$WISP_HOME (wisp.agents.sandbox), and what in a person's settings undoes it."""

from __future__ import annotations

from pathlib import Path

from wisp.agents.sandbox import (
    claude_code_block,
    claude_code_problems,
    claude_path,
    codex_problems,
)

USER_HOME = Path("/home/ann")
HOME = USER_HOME / ".wisp"


def _found(program: str) -> str:
    return f"/usr/bin/{program}"


class TestClaudeCode:
    def test_the_block_wisp_writes_holds(self) -> None:
        """The settings `wisp agents setup claude-code` writes leave nothing to fix."""
        block = claude_code_block(HOME, USER_HOME)
        assert block["sandbox"]["filesystem"]["denyWrite"] == [
            "~/.wisp",
            "~/.claude/settings.json",
            "./.claude/settings.json",
            "./.claude/settings.local.json",
        ]
        assert block["permissions"]["deny"][:2] == ["Edit(~/.wisp/**)", "Write(~/.wisp/**)"]
        assert "Write(./.claude/settings.local.json)" in block["permissions"]["deny"]
        # Never the whole folder: Claude Code 2.1.197's sandbox cannot start.
        assert not [r for r in block["permissions"]["deny"] if r.endswith(".claude/**)")]
        assert "./.claude" not in block["sandbox"]["filesystem"]["denyWrite"]
        assert claude_code_problems(block, HOME, USER_HOME, which=_found) == []

    def test_a_home_outside_the_users_is_spelled_absolutely(self) -> None:
        """A home outside ~ is written `//abs`: one slash would be relative to the file."""
        assert claude_path(Path("/srv/wisp"), USER_HOME) == "//srv/wisp"
        block = claude_code_block(Path("/srv/wisp"), USER_HOME)
        assert block["permissions"]["deny"][0] == "Edit(//srv/wisp/**)"

    def test_each_way_out_is_named(self) -> None:
        """excludedCommands, unsandboxed commands allowed, no failIfUnavailable, no deny
        rules, a one-slash rule and a missing bubblewrap are each reported."""
        settings = {
            "sandbox": {
                "enabled": True,
                "allowUnsandboxedCommands": True,
                "excludedCommands": ["git"],
                "filesystem": {"denyWrite": ["~/.wisp"]},
            },
            "permissions": {"deny": ["Edit(/home/ann/.wisp/**)"]},
        }
        problems = " | ".join(claude_code_problems(settings, HOME, USER_HOME, which=lambda p: None))
        for said in (
            "failIfUnavailable",
            "allowUnsandboxedCommands",
            "excludedCommands",
            "permissions.deny",
            "one slash",
            "bwrap and socat",
        ):
            assert said in problems, (said, problems)

    def test_no_sandbox_at_all(self) -> None:
        """Settings with no sandbox say it is off and that nothing denies the home."""
        problems = claude_code_problems({}, HOME, USER_HOME, which=_found)
        assert problems[0].startswith("the sandbox is off")
        assert any("denyWrite" in p for p in problems)


class TestCodex:
    def test_workspace_write_away_from_the_home_holds(self) -> None:
        """workspace-write, with neither a writable root nor the working directory holding
        the home, protects it."""
        config = {"sandbox_mode": "workspace-write"}
        assert codex_problems(config, HOME, [USER_HOME / "src" / "shop"]) == []

    def test_what_leaves_the_home_writable(self) -> None:
        """Full access, a writable root holding the home, or a session run from a directory
        holding it leave the home within the agent's reach."""
        assert codex_problems({"sandbox_mode": "danger-full-access"}, HOME)
        roots = {
            "sandbox_mode": "workspace-write",
            "sandbox_workspace_write": {"writable_roots": ["/home/ann"]},
        }
        assert "writable root" in codex_problems(roots, HOME)[0]
        here = codex_problems({"sandbox_mode": "workspace-write"}, HOME, [USER_HOME])
        assert "working directory" in here[0]
        assert codex_problems({"sandbox_mode": "read-only"}, HOME, [USER_HOME]) == []
