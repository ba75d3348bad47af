"""What ended lately, read back from the audit log (for the TUI's history view, over the relay).

The log is read as defensively as a request: opened relative to the private home with
``O_NOFOLLOW``, a regular file of ours, only its last :data:`TAIL_BYTES` read, each line
decoded strictly and skipped if it is not an audit record of the shape written here.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any, NamedTuple

from pending import PendingError, loads_strict, open_private_dir
from wisp.audit.writer import AUDIT_FILE, LOGS_DIR

TAIL_BYTES = 1 << 20  # the most of the log read for a history: the last MiB holds thousands
ASKED_MAX = 200  # characters of what was asked kept per entry

_ENDED = ("approval.settled", "approval.withdrawn")
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class EndedRequest(NamedTuple):
    """One request's ending, as its audit record tells it."""

    ts: str
    id: str
    kind: str
    outcome: str
    decision: str | None
    asked: str
    by: str | None  # who answered (`via` of its answer), when the log shows it
    # A tool call's tool and input, for a face to say it as its kind says a call (the audit
    # wing knows no kind): `asked` holds them as compact JSON.
    call: tuple[str, dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ts": self.ts,
            "id": self.id,
            "kind": self.kind,
            "outcome": self.outcome,
            "decision": self.decision,
            "asked": self.asked,
            "by": self.by,
        }


def _tail(home: Path) -> bytes:
    """The last TAIL_BYTES of the audit log (from a line start); empty if there is none."""
    try:
        home_fd = open_private_dir(str(home))
    except (OSError, PendingError):
        return b""
    try:
        try:
            logs_fd = open_private_dir(str(home / LOGS_DIR), parent_fd=home_fd, name=LOGS_DIR)
        except (OSError, PendingError):
            return b""
        try:
            fd = os.open(AUDIT_FILE, _READ_FLAGS, dir_fd=logs_fd)
        except OSError:
            return b""
        finally:
            os.close(logs_fd)
    finally:
        os.close(home_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return b""
        start = max(0, st.st_size - TAIL_BYTES)
        data = os.pread(fd, TAIL_BYTES, start)
    finally:
        os.close(fd)
    if start > 0:  # the first line was cut by where the tail began
        data = data.partition(b"\n")[2]
    return data


def asked_in(record: dict[str, Any]) -> str:
    """What an audit record's request asked, whole (not yet made visible): the command, the
    question, the fact, or a tool call (its tool, then its input as compact JSON, keys
    sorted); empty for a record that names none."""
    if isinstance(record.get("command"), str):
        return str(record["command"])
    if isinstance(record.get("question"), str):
        return str(record["question"])
    if all(isinstance(record.get(k), str) for k in ("subject", "name", "value")):
        return f"{record['subject']} {record['name']} = {record['value']}"
    if isinstance(record.get("tool"), str):
        tool_input = record.get("input")
        shown = json.dumps(tool_input, sort_keys=True, ensure_ascii=False) if tool_input else ""
        return f"{record['tool']} {shown}".rstrip()
    return ""


def _asked(record: dict[str, Any]) -> str:
    return asked_in(record)[:ASKED_MAX]


def _call(record: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    tool, tool_input = record.get("tool"), record.get("input")
    if isinstance(tool, str) and isinstance(tool_input, dict):
        return tool, tool_input
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def ended_requests(home: Path, limit: int) -> list[EndedRequest]:
    """Up to *limit* requests that ended, newest first (one entry per request)."""
    answered_via: dict[str, str] = {}
    ended: dict[str, EndedRequest] = {}
    for raw in _tail(home).splitlines():
        with contextlib.suppress(ValueError):  # DecodeError: a line that is not a record
            record = loads_strict(raw)
            if not isinstance(record, dict):
                continue
            event, request_id = record.get("event"), _str(record.get("id"))
            if request_id is None:
                continue
            if event == "approval.answered" and isinstance(record.get("via"), str):
                answered_via[request_id] = record["via"]
            elif event in _ENDED and isinstance(record.get("outcome"), str):
                ended.pop(request_id, None)  # the latest record of an ending stands
                ended[request_id] = EndedRequest(
                    ts=_str(record.get("ts")) or "",
                    id=request_id,
                    kind=_str(record.get("kind")) or "?",
                    outcome=record["outcome"],
                    decision=_str(record.get("decision")),
                    asked=_asked(record),
                    by=None,
                    call=_call(record),
                )
    newest = list(ended.values())[::-1][:limit]
    return [e._replace(by=answered_via.get(e.id)) for e in newest]
