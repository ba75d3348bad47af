"""The command kind: may this shell command run? (`wisp approvals`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pending import Decision, Kind, Scope
from wisp._entry import EntryPoint
from wisp.kinds._view import Answering, KindView, Rows

if TYPE_CHECKING:  # the records are the channel's; a view only reads them
    from collections.abc import Mapping

    from pending import CommandBinding

SCOPES_LINE = "SCOPE: once (the default), session, project or always"


class CommandView(KindView):
    kind = Kind.COMMAND
    group = "approvals"
    entry_point = EntryPoint.APPROVALS
    noun = "a command to approve"
    short = "cmd"
    title = "wisp: run a command?"
    heading = "Run this command?"
    notice_source = "approval"
    effect = "approve-mcp"
    answering = (
        Answering(
            label="approve",
            command="wisp approvals approve {id}",
            decisions=tuple(Decision(s.value) for s in Scope),
            options=" [--scope SCOPE]",
            widths=True,
        ),
        Answering(
            label="deny",
            command="wisp approvals deny {id}",
            decisions=(Decision.NO,),
            options=" [--reason TEXT]",
        ),
    )
    notes = (SCOPES_LINE,)
    answered_words: ClassVar[dict[Decision, str]] = {
        **{Decision(s.value): f"approved {s.value}" for s in Scope},
        Decision.NO: "denied",
    }

    def asked(self, binding: CommandBinding) -> str:
        return binding.command

    def paragraphs(self, binding: CommandBinding) -> Rows:
        rows = [("in", binding.cwd)]
        import json  # here: a listing with nothing of this kind to show never loads it

        from wisp.kinds.programs import PROGRAMS_OPTION

        for name, value in sorted((binding.options or {}).items()):
            # Each option the call sets, by name: a grant covers the command with exactly these.
            if name != PROGRAMS_OPTION:
                rows.append(("with", f"{name}: {json.dumps(value, ensure_ascii=False)}"))
        # Each program file it runs that the agent can write, and its content: a grant covers
        # that content only.
        rows.extend(program_rows(binding.options))
        if binding.reason:
            rows.append(("reason", binding.reason))
        return rows

    def details(self, binding: CommandBinding) -> Rows:
        return [("command", binding.command), *self.paragraphs(binding)]


VIEW = CommandView()


def program_rows(options: Mapping[str, Any] | None) -> Rows:
    """A `program` row for each program file a command's *options* bind to its content
    (what the person approves: a grant covers that content only)."""
    from wisp.kinds.programs import programs_bound, shown  # here: a listing loads no shlex

    return [("program", shown(p, s)) for p, s in programs_bound(options).items()]


def words(command: str) -> list[str]:
    """A command line's arguments as the shell splits them (quotes removed), operators as
    words of their own: what a face shows beside the exact line (the command kind's own
    reading, :func:`wisp.kinds.programs.words`, loaded only as a face asks)."""
    from wisp.kinds.programs import words as split

    return split(command)
