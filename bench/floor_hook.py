"""The floor under a Claude Code hook (`bench/ratios.py`): read the event JSON on stdin and
print a JSON object, as the smallest possible hook does (Python, the standard library's json,
nothing else)."""

import json
import sys

event = json.load(sys.stdin)
print(
    json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": event["hook_event_name"],
                "permissionDecision": "allow",
                "permissionDecisionReason": "floor",
            }
        }
    )
)
