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
