"""An asker in a process of its own that files one command or tool request offering the
widths it is given, tells how to answer it on stderr (as `wisp approvals request` does), and
prints the gate's verdict as JSON once it ends: what a hook deciding a call will do.

    python tests/widths_asker.py command CWD WIDTHS_JSON -- npm test
    python tests/widths_asker.py tool CWD WIDTHS_JSON -- Edit INPUT_JSON
"""

from __future__ import annotations

import json
import sys

from pending import Channel
from wisp._asking import Asker
from wisp._home import wisp_home
from wisp.kinds.command_gate import ApprovalGate, Widths

TIMEOUT_S = 60.0


def main(argv: list[str]) -> int:
    kind, cwd, raw, dashes, *rest = argv
    assert dashes == "--"
    given = json.loads(raw)
    widths = Widths(
        must_ask=tuple(given.get("mustAsk", ())),
        prefixes=tuple(tuple(p) for p in given.get("prefixes", ())),
        edit_paths=tuple(given.get("editPaths", ())),
        project=given.get("project"),
    )
    with Channel.open(wisp_home()) as channel, Asker(channel, entry_point="approvals") as asker:
        gate = ApprovalGate(asker, timeout_s=TIMEOUT_S)
        if kind == "command":
            request = gate.file(" ".join(rest), cwd, widths=widths)
        else:
            tool, tool_input = rest
            request = gate.file_tool(tool, json.loads(tool_input), cwd, widths=widths)
        print(f"wisp approvals approve {request.id}", file=sys.stderr, flush=True)
        ending = asker.wait(request.id)
        assert ending is not None
        approval = gate.verdict(ending) if kind == "command" else gate.tool_verdict(ending)
    grant = approval.grant
    print(
        json.dumps(
            {
                "approved": approval.approved,
                "scope": approval.scope,
                "grant": None if grant is None else grant.id,
                "width": None if grant is None else grant.width.value,
                "reason": approval.reason,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
