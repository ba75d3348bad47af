"""A stand-in hook for the e2e tier: it appends the event a harness sends it (stdin, exactly as
received) to a file as one JSON line, then answers in that harness's shape.

    python dumphook.py OUT SHAPE ACTION

SHAPE is claude-code | codex | gemini | copilot (the answer's JSON shape); ACTION is
allow | deny | none (print nothing, exit 0) | exit1 | exit2 | hang (never answer: the
harness's timeout decides). A deny's reason is :data:`REASON`, which a test then looks for in
what the model is sent next.
"""

from __future__ import annotations

import json
import sys
import time

REASON = "e2e dump hook says no"


def answer(shape: str, allow: bool) -> dict[str, object]:
    decision = "allow" if allow else "deny"
    if shape in ("claude-code", "codex"):
        specific: dict[str, object] = {"hookEventName": "PreToolUse",
                                       "permissionDecision": decision}  # fmt: skip
        if not allow:
            specific["permissionDecisionReason"] = REASON
        return {"hookSpecificOutput": specific}
    if shape == "gemini":
        return {"decision": decision, "reason": REASON} if not allow else {"decision": "allow"}
    if shape == "copilot":
        out: dict[str, object] = {"permissionDecision": decision}
        if not allow:
            out["permissionDecisionReason"] = REASON
        return out
    raise SystemExit(f"dumphook: unknown shape {shape!r}")


def main(out: str, shape: str, action: str) -> int:
    raw = sys.stdin.read()
    with open(out, "a") as dump:
        dump.write(json.dumps({"argv": sys.argv[1:], "stdin": raw}) + "\n")
    if action in ("allow", "deny"):
        print(json.dumps(answer(shape, action == "allow")), flush=True)
        return 0
    if action == "none":
        return 0
    if action == "exit1":
        print(REASON, file=sys.stderr)
        return 1
    if action == "exit2":
        print(REASON, file=sys.stderr)
        return 2
    if action == "hang":
        while True:
            time.sleep(3600)
    raise SystemExit(f"dumphook: unknown action {action!r}")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
