"""`wisp mcp`: an MCP server (stdio) through which any MCP client's agent reaches the person.

Built on the official MCP SDK (`mcp`, the optional ``mcp`` extra).
Only `wisp mcp` imports this package; the person's everyday commands never do.
"""

from wisp.mcp._run import main

__all__ = ["main"]
