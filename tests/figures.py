"""Counts the reliability suites report (trials, kills, faults), for docs/reliability.md.

Set ``WISP_FIGURES`` to a file and each suite appends one JSON line per test of what it did;
unset, nothing is written.
"""

from __future__ import annotations

import json
import os
from typing import Any


def note(suite: str, **counts: Any) -> None:
    """Append *counts* for *suite* to ``$WISP_FIGURES`` (if set)."""
    path = os.environ.get("WISP_FIGURES")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"suite": suite, **counts}) + "\n")


# One knob for heavier runs: WISP_FAULT_TRIALS=10 runs ten times the examples, kills and
# trials of every reliability suite (each suite's own variable, if set, wins).
TRIALS = int(os.environ.get("WISP_FAULT_TRIALS", "1"))


def scaled(variable: str, default: int) -> int:
    """*variable* from the environment if set, else *default* times WISP_FAULT_TRIALS."""
    return int(os.environ.get(variable, str(default * TRIALS)))
