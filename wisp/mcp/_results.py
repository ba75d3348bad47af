"""What every tool call returns: the words for the model, the same for programs, and the
notifications the call posted; a refusal as a tool error in words that say what to do.

Loaded before `wisp mcp` answers `initialize` (its stdio edge answers a tool call that
cannot be parsed with one), so it loads nothing of wisp's application.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mcp_types import CallToolResult, TextContent


class Said(NamedTuple):
    """What a tool says: the words for the model, and the same for programs."""

    text: str
    data: dict[str, Any]
    error: bool = False

    @classmethod
    def of(cls, rendered: tuple[str, dict[str, Any]]) -> Said:
        text, data = rendered
        return cls(text=text, data=data)


def result(said: Said, posted: list[dict[str, Any]], *, text_only: bool = False) -> CallToolResult:
    """Every tool result: the words, the structured content, and the notifications posted;
    *text_only*, the words alone (one text block: all Claude Code's permission prompt
    accepts)."""
    return CallToolResult(
        content=[TextContent(type="text", text=said.text)],
        structured_content=None if text_only else {**said.data, "notifications": posted},
        is_error=said.error,
    )


def refusal(
    message: str, posted: list[dict[str, Any]], *, text_only: bool = False
) -> CallToolResult:
    """A refused call: a tool error whose text starts `error:` and says what to do."""
    said = Said(text=f"error: {message}", data={"error": message}, error=True)
    return result(said, posted, text_only=text_only)
