"""`wisp mcp`: serve MCP over stdio, for an MCP client to start.

The MCP SDK is an optional extra; it is imported only when this command runs, never by the
person's everyday commands.
"""

from __future__ import annotations

import typer

MCP_EXAMPLES = """Example:
  claude mcp add wisp -- wisp mcp   (an MCP client starts it: wisp docs mcp)"""


def mcp() -> None:
    """Serve MCP over stdio: tools through which an agent asks you (approvals, questions,
    facts to keep, notifications). Started by an MCP client, e.g.
    `claude mcp add wisp -- wisp mcp`. Stops at EOF, SIGTERM or SIGINT, withdrawing its
    commands and questions and handing its fact requests over."""
    from wisp.mcp import main  # lazily: only this command needs the MCP SDK

    raise typer.Exit(main())
