"""Where an action came from (:class:`EntryPoint`): the face or command group that made it.

Its own module, so that what only declares commands (the kinds' views, a command group) does
not load the audit log's writer, and with it the channel's records, to name one.
"""

from __future__ import annotations

from enum import StrEnum


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
