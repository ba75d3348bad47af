"""Where an action came from (:class:`EntryPoint`): the face or command group that made it;
and the harnesses whose hooks enter wisp (:data:`HARNESS_MODULES`), one table.

Its own module, so that what only declares commands (the kinds' views, a command group) does
not load the audit log's writer, and with it the channel's records, to name one.
"""

from __future__ import annotations

from pending import StrEnum


class EntryPoint(StrEnum):
    """Where an action came from: the face or command group that made it."""

    APPROVALS = "approvals"
    FACTS = "facts"
    QUESTIONS = "questions"
    PENDING = "pending"
    NOTIFY = "notify"
    MCP = "mcp"
    TUI = "tui"
    RELAY = "relay"
    WEB = "web"  # `wisp web`: the page a paired phone answers on
    HOOK = "hook"  # an agent harness's hook (`wisp hook claude-code`)


# Every harness wisp knows, in the order it lists them: one module each, which declares its
# HARNESS (a :class:`Harness`); the module's last name is the harness's (`_` for `-`). The
# hook command, the program's fast path, setup and status, and the policy's rules (a rule's
# `harness`) all read this, at the time they run (`wisp.agents.hookio.register` adds one, as
# a test adds a throwaway harness): here, below every wing, so that all read one table.
HARNESS_MODULES: tuple[str, ...] = (
    "wisp.agents.claude_code",
    "wisp.agents.codex",
    "wisp.agents.gemini",
    "wisp.agents.copilot",
    "wisp.agents.opencode",
    "wisp.agents.cursor",
    "wisp.agents.qwen",
    "wisp.agents.kilo",
    "wisp.agents.crush",
    "wisp.agents.cline",
    "wisp.agents.pi",
    "wisp.agents.droid",
)


def harness_names() -> tuple[str, ...]:
    """Every harness's name (`wisp hook NAME`), in order, no module imported."""
    return tuple(m.rpartition(".")[2].replace("_", "-") for m in HARNESS_MODULES)
