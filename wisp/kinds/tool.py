"""The tool kind: may the agent make this tool call? (`wisp tools`).

A tool call other than a shell command: an `Edit` or `MultiEdit` (shown as a unified diff of
the file it changes), a `Write` (its path and content), a `WebFetch` (its URL), or any other
tool, an MCP server's included (its arguments, pretty-printed). A listing cuts a long diff or
content to its first lines; `wisp show ID` shows all of it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pending import Decision, Kind, Scope
from wisp._entry import EntryPoint
from wisp._text import cut_path, visible
from wisp.kinds._view import Answering, KindView, Rows

if TYPE_CHECKING:  # the records are the channel's; a view only reads them
    from pending import ToolBinding

# How many lines of a diff, a written file or arguments a listing shows (`wisp show` shows all).
LISTING_LINES = 12
# The file an edit changes is read for the diff's context only up to this size; a larger one
# (or one that cannot be read) is shown as the edit's own text, old against new.
DIFF_FILE_MAX_BYTES = 512 * 1024
DIFF_CONTEXT_LINES = 3
EDIT_TOOLS = frozenset({"Edit", "MultiEdit"})
PATH_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "Read"})
# Fewer characters than this left for a path beside its tool, and the row is cut at its end.
PATH_SHOWN_MIN = 8
TOOL_SCOPES_LINE = "SCOPE (--as): once (the default), session, project or always"


def _read_small_text(path: str) -> str | None:
    """The text of the regular file at *path*, if it is small and UTF-8; else None. Never
    blocks (a FIFO named by a hostile request is not read) and never follows a final link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > DIFF_FILE_MAX_BYTES:
            return None
        data = os.read(fd, DIFF_FILE_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _edits(tool: str, tool_input: Mapping[str, Any]) -> list[tuple[str, str, bool]] | None:
    """An Edit's or MultiEdit's (old, new, replace_all) edits, or None if they are not there."""
    raw: Any = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(raw, list):
        return None
    edits = []
    for edit in raw:
        if not isinstance(edit, dict):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        edits.append((old, new, edit.get("replace_all") is True))
    return edits


def edit_diff(tool: str, tool_input: Mapping[str, Any]) -> list[str] | None:
    """An Edit's or MultiEdit's unified diff of the file it changes, as lines: the file as
    it is now against the file with the edits made. Where the file cannot be read or the
    edit does not apply to it, the edits' own text, old against new. None if *tool_input*
    is not an edit's."""
    path = tool_input.get("file_path")
    edits = _edits(tool, tool_input)
    if not isinstance(path, str) or edits is None:
        return None
    before = _read_small_text(path)
    after = before
    for old, new, replace_all in edits:
        if after is None or not old or old not in after:
            after = None
            break
        after = after.replace(old, new) if replace_all else after.replace(old, new, 1)
    if before is not None and after is not None:
        # git's a/ and b/ stand before a path relative to the repository; an absolute path
        # (as agents send) is named as it is, as `diff -u` names it, never `a/home/…`.
        old_name, new_name = (path, path) if path.startswith("/") else (f"a/{path}", f"b/{path}")
        return _unified(before, after, old_name, new_name)
    lines = []
    for old, new, _ in edits:  # the file is not readable as it is: the edits alone
        lines += _unified(old, new, f"{path} (old text)", f"{path} (new text)")
    return lines


def _unified(before: str, after: str, old_name: str, new_name: str) -> list[str]:
    import difflib  # only for a tool call that edits a file (~1 ms, every command loads this)

    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            old_name,
            new_name,
            n=DIFF_CONTEXT_LINES,
        )
    ]


def pretty(tool_input: Mapping[str, Any]) -> list[str]:
    """Arguments pretty-printed, as lines (the canonical key order: sorted)."""
    import json  # here: a listing with nothing of this kind to show never loads it

    return json.dumps(tool_input, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _rows(label: str, lines: Sequence[str], limit: int | None = None) -> Rows:
    """*lines* as rows under *label*, cut to *limit* lines with a note of what is left out."""
    shown = list(lines if limit is None else lines[:limit])
    rows = [(label if n == 0 else "", line) for n, line in enumerate(shown or [""])]
    if limit is not None and len(lines) > limit:
        rows.append(("", f"… {len(lines) - limit} more lines: `wisp show` shows them all"))
    return rows


def _text_field(tool_input: Mapping[str, Any], key: str) -> str | None:
    value = tool_input.get(key)
    return value if isinstance(value, str) else None


def target_of(tool: str, tool_input: Mapping[str, Any]) -> str | None:
    """What a call is on, where its tool names one: a file's path, a URL."""
    if tool in PATH_TOOLS:
        return _text_field(tool_input, "file_path") or _text_field(tool_input, "notebook_path")
    if tool == "WebFetch":
        return _text_field(tool_input, "url")
    return None


def call_line(tool: str, tool_input: Mapping[str, Any]) -> str:
    """A tool call in one line, whole: its tool and what it is on (`Edit /srv/app/main.py`,
    `WebFetch https://…`), or, for a tool that names nothing, its input as compact JSON,
    keys sorted (not yet made visible)."""
    target = target_of(tool, tool_input)
    if target is None:
        import json  # here: a listing with nothing of this kind to show never loads it

        target = json.dumps(tool_input, sort_keys=True, ensure_ascii=False)
    return f"{tool} {target}"


class ToolView(KindView):
    kind = Kind.TOOL
    group = "tools"
    entry_point = EntryPoint.APPROVALS
    noun = "a tool call to approve"
    short = "tool"
    title = "wisp: allow a tool call?"
    heading = "Allow this tool call?"
    notice_source = "approval"
    effect = "approve-tools"
    answering = (
        Answering(
            label="approve",
            command="wisp tools approve {id}",
            decisions=tuple(Decision(s.value) for s in Scope),
            options=" [--as SCOPE]",
            widths=True,
        ),
        Answering(
            label="deny",
            command="wisp tools deny {id}",
            decisions=(Decision.NO,),
            options=" [--reason TEXT]",
        ),
    )
    notes = (TOOL_SCOPES_LINE,)
    answered_words: ClassVar[dict[Decision, str]] = {
        **{Decision(s.value): f"approved {s.value}" for s in Scope},
        Decision.NO: "denied",
    }

    def asked(self, binding: ToolBinding) -> str:
        return call_line(binding.tool, binding.input)

    def asked_within(self, binding: ToolBinding, limit: int) -> str:
        """The tool and the file it is on, the path cut in its middle so the file's name
        stays (`Edit /home/you/…/app/main.py`, never `Edit /home/you/src/app/mai…`); any
        other call as every kind's, cut at its end."""
        path = self._target(binding) if binding.tool in PATH_TOOLS else None
        head = visible(binding.tool) + " "
        if path is None or limit - len(head) < PATH_SHOWN_MIN:
            return super().asked_within(binding, limit)
        return head + cut_path(path, limit - len(head))

    @staticmethod
    def _target(binding: ToolBinding) -> str | None:
        return target_of(binding.tool, binding.input)

    def _shown(self, binding: ToolBinding, limit: int | None) -> Rows:
        """What the call does, for a person to judge: a diff, a file's content, a URL's
        prompt, or the arguments."""
        tool_input = binding.input
        if binding.tool in EDIT_TOOLS and (diff := edit_diff(binding.tool, tool_input)):
            return _rows("diff", diff, limit)
        content = _text_field(tool_input, "content")
        if binding.tool == "Write" and content is not None:
            return _rows("content", content.splitlines(), limit)
        if binding.tool == "WebFetch" and self._target(binding) is not None:
            prompt = _text_field(tool_input, "prompt")
            return [("prompt", prompt)] if prompt else []
        return _rows("input", pretty(tool_input), limit)

    def paragraphs(self, binding: ToolBinding) -> Rows:
        rows = [*self._shown(binding, LISTING_LINES), ("in", binding.cwd)]
        return [*rows, ("reason", binding.reason)] if binding.reason else rows

    def details(self, binding: ToolBinding) -> Rows:
        rows: Rows = [("tool", binding.tool)]
        target = self._target(binding)
        if target is not None:
            rows.append(("url" if binding.tool == "WebFetch" else "path", target))
        rows.append(("in", binding.cwd))
        if binding.reason:
            rows.append(("reason", binding.reason))
        return [*rows, *self._shown(binding, None)]


VIEW = ToolView()
