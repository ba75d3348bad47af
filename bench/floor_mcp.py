"""The floor under `wisp mcp` (`bench/ratios.py`): a minimal one-tool MCP server on the same
SDK (mcp 2.x's `MCPServer`), served over stdio as `wisp mcp` is."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("floor")


@server.tool()
def echo(text: str) -> str:
    """Say *text* back."""
    return text


if __name__ == "__main__":
    server.run("stdio")
