"""Issue 57's fatigue benchmark: how often wisp asks the person, on recorded agent sessions,
beside the reference policy the issue writes out, on the same calls.

Each session of fixtures/traces/ (public recorded sessions, normalised: README.md there) is
replayed into a scratch project: a temporary directory with `git init`, the session's
directories made, its project root and its home directory rewritten into the scratch
directory (paths elsewhere, `/tmp`, `/etc`, are kept as written), and a private `$WISP_HOME`.
Each tool call Claude Code puts in front of wisp (the hook's settings matcher,
`wisp.agents.claude_code.SETTINGS_MATCHER`) is sent, one at a time, to the REAL hook: `wisp
hook claude-code --wait …` as a new process, the PreToolUse event on its stdin. When it files
a request, a scripted person reads what the request offers (`wisp show ID --json`) and answers
through the real CLI, under a terminal (`wisp approvals approve ID --scope S`, `wisp tools
approve ID --as S`), taking the widest answer offered: the widest width the request offers
(when it offers widths: its binding's `offers`), at its widest scope (`always` > `project` >
`session` > `once`). A call the hook allows is then done in the scratch project as the harness
would do it where that is a file's change (a Write's content, an Edit's replacement), so later
calls see the files; no command is ever run.

Beside it, the reference policy (bench/fatigue_reference.py: the issue's text simulated on its
own, with tree-sitter-bash, independently of wisp's code) decides the same calls, with its own
scripted person (asked once per distinct prefix per project; must-ask every time; read-only
lines and in-project edits not asked).

Printed (`--json`: JSON lines): per policy `asks_per_100` (requests filed per 100 tool calls,
all calls counted, those no gate sees too), `calls`, `sessions`, `must_ask_let_through` (calls
the reference classes must-ask that ran with no request filed: wisp allowed them itself, by a
rule or an earlier grant) and `ratio_to_reference`; then the reference's asks by class.
`--detail` lists each ask of either policy with why, marking the calls the two treat apart.

Run:  python bench/fatigue.py [--json] [--detail] [--session NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fatigue_reference as reference
from _common import BENCH_CONFIG, ROOT, child_env, under_pty, wisp_argv

from pending import Channel, Event, Transition, Watcher

TRACES = ROOT / "fixtures" / "traces"
HOOK_WAIT_S = 30  # the hook's own wait for the person (--wait): far more than the person takes
STEP_TIMEOUT_S = 60.0  # a hook neither filing nor ending by then is a failed run
SCOPES = ("always", "project", "session", "once")  # widest first
WIDTHS = ("project", "file", "command", "exact")  # widest first (the widths work's names)
HOME_PREFIX = re.compile(r"^(/home/[^/]+|/Users/[^/]+|/root)(?=/|$)")
SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".mjs", ".ts", ".rb", ".pl", ".exs", ".bash")
PATH_KEYS = ("file_path", "path", "notebook_path")


# --- the traces -----------------------------------------------------------------------------


@dataclass
class Session:
    name: str
    harness: str
    session_id: str
    root: str  # the recorded project root
    calls: list[dict[str, Any]]


def sessions(only: str | None = None) -> list[Session]:
    found = []
    for path in sorted(TRACES.glob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        meta, calls = lines[0], lines[1:]
        if only and only not in path.stem:
            continue
        found.append(Session(path.stem, meta["harness"], meta["session"], meta["cwd"], calls))
    return found


def gated(tool: str) -> bool:
    """Whether Claude Code puts this tool's calls in front of wisp's hook (its matcher)."""
    from wisp.agents.claude_code import SETTINGS_MATCHER

    return re.fullmatch(SETTINGS_MATCHER, tool) is not None


# --- the scratch project ----------------------------------------------------------------------


class Scratch:
    """A session's scratch project: its recorded root and home rewritten under a temporary
    directory, the session's directories made, a private `$WISP_HOME`."""

    def __init__(self, session: Session, where: Path) -> None:
        self.where = where
        self.project = where / "project"
        self.home = where / "home"  # the recorded user's home (outside the project)
        self.wisp = where / "wisp"
        self.project.mkdir()
        self.home.mkdir()
        self.wisp.mkdir(mode=0o700)
        (self.wisp / "config.json").write_text(json.dumps(BENCH_CONFIG))
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.root = session.root.rstrip("/")
        found = HOME_PREFIX.match(self.root)
        self.user_home = found.group(1) if found else None
        for call in session.calls:
            self.prepare(call)

    def mapped(self, text: str) -> str:
        """*text* with the recorded root, then the recorded home, moved into the scratch."""
        text = text.replace(self.root, str(self.project))
        if self.user_home:
            text = text.replace(self.user_home + "/", str(self.home) + "/")
        return text

    def mine(self, path: str) -> Path | None:
        """*path* (mapped) if it lies in the scratch directory, else None: nothing outside
        the scratch directory is ever made or written."""
        if not path.startswith("/"):
            return None
        full = Path(os.path.normpath(path))
        return full if full.is_relative_to(self.where) else None

    def cwd(self, call: dict[str, Any]) -> Path:
        where = self.mine(self.mapped(call.get("cwd") or self.root))
        return where if where is not None else self.project

    def prepare(self, call: dict[str, Any]) -> None:
        """Make the call's directories, and the files it reads or runs (empty) if none yet."""
        cwd = self.cwd(call)
        cwd.mkdir(parents=True, exist_ok=True)
        tool_input = call["input"]
        for key in PATH_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str):
                full = self.mine(self.mapped(value if value.startswith("/") else str(cwd / value)))
                if full is not None:
                    with suppress(OSError):  # a path recorded as a file here, a directory there
                        full.parent.mkdir(parents=True, exist_ok=True)
                        if call["tool"] == "Read" and not full.exists():
                            full.touch()
        if call["tool"] == "Bash":
            try:
                words = shlex.split(self.mapped(tool_input.get("command", "")))
            except ValueError:
                words = []
            for word in words:  # scripts it runs: a program file wisp hashes must exist
                if word.endswith(SCRIPT_SUFFIXES) or word.startswith("./"):
                    full = self.mine(word if word.startswith("/") else str(cwd / word))
                    if full is not None and not full.exists():
                        with suppress(OSError):
                            full.parent.mkdir(parents=True, exist_ok=True)
                            full.touch()

    def event_input(self, call: dict[str, Any]) -> dict[str, Any]:
        moved: dict[str, Any] = json.loads(self.mapped(json.dumps(call["input"])))
        return moved

    def apply(self, tool: str, tool_input: dict[str, Any], cwd: Path) -> None:
        """Do an allowed Write's or Edit's change to its file, as the harness would."""
        value = tool_input.get("file_path")
        if tool not in ("Write", "Edit") or not isinstance(value, str):
            return
        full = self.mine(value if value.startswith("/") else str(cwd / value))
        if full is None:
            return
        with suppress(OSError):  # as the harness, which would report its failure
            full.parent.mkdir(parents=True, exist_ok=True)
            if tool == "Write":
                full.write_text(tool_input.get("content", ""))
                return
            old = full.read_text() if full.is_file() else ""
            before, after = tool_input.get("old_string", ""), tool_input.get("new_string", "")
            done = old.replace(before, after, 1) if before and before in old else old + after
            full.write_text(done)


# --- the hook and the person ------------------------------------------------------------------


@dataclass
class Outcome:
    """What happened to one call at the gate."""

    decision: str  # "allow", "deny", "ask" (the harness's own), or "not gated"
    asked: bool = False
    request_kind: str | None = None
    answer: str | None = None  # the answer the person gave, as typed
    reason: str = ""


def widest(request: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """(width, scope, the offer) the person takes: the widest offered, not must-ask."""
    offers = (request.get("binding") or {}).get("offers")
    if not offers:
        return "exact", SCOPES[0], None
    # The last offer of a name is its widest (docs/channel.md, "Widths": for a command, the
    # last prefix); the widths are tried widest first.
    by_width = {o["name"]: o for o in offers.get("widths", [])}
    for name in WIDTHS:
        offer = by_width.get(name)
        if offer:
            scope = next(s for s in SCOPES if s in offer["scopes"])
            return name, scope, offer
    return "exact", "once", None


def answer_argv(kind: str, request_id: str, width: str, scope: str, offer: Any) -> list[str]:
    """The person's answer on the real CLI (docs/cli.md): a width wider than the exact call
    with `--width NAME` and the offer's `--prefix WORDS` or `--path PATH`."""
    argv = (
        [*wisp_argv(), "tools", "approve", request_id, "--as", scope]
        if kind == "tool"
        else [*wisp_argv(), "approvals", "approve", request_id, "--scope", scope]
    )
    if width != "exact":
        argv += ["--width", width]
        if offer and offer.get("prefix"):
            argv += ["--prefix", shlex.join(offer["prefix"])]
        if offer and offer.get("path"):
            argv += ["--path", offer["path"]]
    return argv


class Gate:
    """One session's replay through `wisp hook claude-code`, with its person."""

    def __init__(self, scratch: Scratch, session: Session) -> None:
        self.scratch = scratch
        self.session = session
        self.env = child_env(scratch.wisp)
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.spent: dict[str, float] = defaultdict(float)  # seconds: hook, show, approve, exit
        self.channel = Channel.open(scratch.wisp)
        self.watcher = Watcher(self.channel)
        self.watcher.start()
        subscription, _ = self.watcher.subscribe()
        threading.Thread(target=self._forward, args=(subscription,), daemon=True).start()

    def _forward(self, subscription: Any) -> None:
        """Each request filed, heard by the watcher (inotify), onto the events queue."""
        from pending import SubscriptionClosed

        try:
            for item in subscription:
                if isinstance(item, Transition) and item.event is Event.FILED and item.status:
                    self.events.put(("filed", item.status.request))
        except SubscriptionClosed:
            return

    def close(self) -> None:
        self.watcher.stop()
        self.channel.close()

    def call(self, n: int, call: dict[str, Any]) -> Outcome:
        tool = call["tool"]
        if not gated(tool):
            return Outcome("not gated")
        cwd = self.scratch.cwd(call)
        tool_input = self.scratch.event_input(call)
        event = {
            "session_id": self.session.session_id,
            "transcript_path": str(self.scratch.where / "transcript.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_bench_{n:04d}",
        }
        process = subprocess.Popen(
            [*wisp_argv(), "hook", "claude-code", "--wait", str(HOOK_WAIT_S)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=cwd,
        )
        said: dict[str, Any] = {}
        started = time.monotonic()

        def run() -> None:
            out, err = process.communicate(json.dumps(event).encode(), timeout=STEP_TIMEOUT_S)
            said.update(out=out.decode(), err=err.decode(), code=process.returncode)
            self.events.put(("exit", None))

        threading.Thread(target=run, daemon=True).start()
        outcome = Outcome("allow")
        kind, request = self.events.get(timeout=STEP_TIMEOUT_S)
        self.spent["hook"] += time.monotonic() - started
        if kind == "filed":
            outcome.asked = True
            outcome.request_kind = str(request.kind)
            outcome.answer = self.answer(request.id, outcome.request_kind)
            answered = time.monotonic()
            kind, _ = self.events.get(timeout=STEP_TIMEOUT_S)
            self.spent["exit"] += time.monotonic() - answered
        if kind != "exit":
            raise SystemExit(f"{self.session.name} call {n}: a second request filed")
        decision = "deny" if said["code"] == 2 else "none"
        if said["out"].strip():
            output = json.loads(said["out"]).get("hookSpecificOutput", {})
            decision = output.get("permissionDecision", decision)
            outcome.reason = output.get("permissionDecisionReason", "") or said["err"].strip()
        outcome.decision = decision
        if decision == "allow":
            self.scratch.apply(tool, tool_input, cwd)
        return outcome

    def answer(self, request_id: str, kind: str) -> str:
        started = time.monotonic()
        shown = subprocess.run(
            [*wisp_argv(), "show", request_id, "--json"],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=STEP_TIMEOUT_S,
            check=True,
        )
        width, scope, offer = widest(json.loads(shown.stdout))
        argv = answer_argv(kind, request_id, width, scope, offer)
        shown_at = time.monotonic()
        self.spent["show"] += shown_at - started
        _, status, said = under_pty(argv, self.env, STEP_TIMEOUT_S)
        self.spent["approve"] += time.monotonic() - shown_at
        if status != 0:
            raise SystemExit(f"{' '.join(argv[-5:])} exited {status}: {said.strip()}")
        return " ".join(argv[len(wisp_argv()) :])


# --- the run --------------------------------------------------------------------------------


@dataclass
class Tally:
    calls: int = 0
    asks: int = 0
    let_through: int = 0
    sessions: int = 0
    by_class: Counter[str] = field(default_factory=Counter)
    # per harness: its calls and this policy's asks
    harness_calls: Counter[str] = field(default_factory=Counter)
    harness_asks: Counter[str] = field(default_factory=Counter)


@dataclass
class Row:
    session: str
    n: int
    call: dict[str, Any]
    verdict: reference.Verdict
    ref_asked: bool
    wisp: Outcome


def replay(session: Session, spent: dict[str, float]) -> Iterator[Row]:
    person = reference.Person()
    with tempfile.TemporaryDirectory(prefix="wisp-fatigue-") as tmp:
        scratch = Scratch(session, Path(tmp))
        gate = Gate(scratch, session)
        try:
            for n, call in enumerate(session.calls):
                verdict = reference.decide(
                    call["tool"],
                    call["input"],
                    call.get("cwd") or session.root,
                    session.root,
                    gated(call["tool"]),
                )
                ref_asked = person.asks(verdict, session.root)
                yield Row(session.name, n, call, verdict, ref_asked, gate.call(n, call))
        finally:
            gate.close()
            for phase, seconds in gate.spent.items():
                spent[phase] += seconds


def what(call: dict[str, Any]) -> str:
    tool_input = call["input"]
    text = tool_input.get("command") or tool_input.get("file_path") or tool_input.get("url")
    text = str(text if text is not None else json.dumps(tool_input))
    text = text.replace("\n", "⏎")
    return f"{call['tool']}: {text[:100]}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="JSON lines on stdout")
    p.add_argument("--detail", action="store_true", help="list each ask of either policy, why")
    p.add_argument("--session", help="replay only the sessions whose name holds this")
    args = p.parse_args(argv)
    chosen = sessions(args.session)
    if not chosen:
        raise SystemExit("no session matches")
    wisp, ref = Tally(), Tally()
    wisp_by_ref_class: Counter[str] = Counter()
    unasked: Counter[str] = Counter()  # the hook's decisions on gated calls it did not ask
    spent: dict[str, float] = defaultdict(float)
    harnesses: Counter[str] = Counter()
    started = time.monotonic()
    for session in chosen:
        harnesses[session.harness] += 1
        wisp.sessions += 1
        ref.sessions += 1
        for row in replay(session, spent):
            wisp.calls += 1
            wisp.harness_calls[session.harness] += 1
            ref.harness_calls[session.harness] += 1
            ref.calls += 1
            v = row.verdict
            if row.ref_asked:
                ref.asks += 1
                ref.harness_asks[session.harness] += 1
                ref.by_class[f"{v.decision}: {v.why.split(':')[0]}"] += 1
            if row.wisp.asked:
                wisp.asks += 1
                wisp.harness_asks[session.harness] += 1
                wisp_by_ref_class[f"{v.decision}: {v.why.split(':')[0]}"] += 1
            elif row.wisp.decision != "not gated":
                unasked[row.wisp.decision] += 1
            if not row.wisp.asked and v.decision == "must-ask" and row.wisp.decision == "allow":
                wisp.let_through += 1
            if args.detail and (row.wisp.asked or row.ref_asked):
                mark = "  " if row.wisp.asked == row.ref_asked else "≠ "
                who = "+".join(
                    x for x, y in (("wisp", row.wisp.asked), ("reference", row.ref_asked)) if y
                )
                print(
                    f"{mark}{row.session}#{row.n} asked by {who}: {what(row.call)}\n"
                    f"      reference: {v.decision} ({v.why})"
                    + (f"; wisp answered: {row.wisp.answer}" if row.wisp.answer else ""),
                    file=sys.stderr if args.json else sys.stdout,
                )
    took = time.monotonic() - started
    base = 100 * ref.asks / ref.calls
    for name, tally in (("wisp", wisp), ("reference", ref)):
        per_100 = 100 * tally.asks / tally.calls
        line: dict[str, Any] = {
            "bench": "fatigue",
            "policy": name,
            "asks_per_100": round(per_100, 1),
            "asks": tally.asks,
            "calls": tally.calls,
            "sessions": tally.sessions,
            "harnesses": dict(harnesses),
            "by_harness": {
                h: {
                    "calls": n,
                    "asks": tally.harness_asks[h],
                    "asks_per_100": round(100 * tally.harness_asks[h] / n, 1),
                }
                for h, n in tally.harness_calls.items()
            },
            "must_ask_let_through": tally.let_through,
            "ratio_to_reference": round(per_100 / base, 2) if base else None,
        }
        if name == "wisp":
            line["asks_by_reference_class"] = dict(wisp_by_ref_class.most_common())
            line["gated_not_asked"] = dict(unasked)
            line["seconds_by_phase"] = {k: round(v, 1) for k, v in spent.items()}
        else:
            line["asks_by_class"] = dict(tally.by_class.most_common())
        line["seconds"] = round(took, 1)
        if args.json:
            print(json.dumps(line, ensure_ascii=False))
        else:
            print(
                f"{name:9}  {per_100:5.1f} asks per 100 calls ({tally.asks} of {tally.calls}, "
                f"{tally.sessions} sessions), must-ask let through: {tally.let_through}, "
                f"{line['ratio_to_reference']}x the reference"
            )
    if not args.json:
        print(f"reference's asks by class: {dict(ref.by_class.most_common())}")
        print(f"wisp's asks by the reference's class: {dict(wisp_by_ref_class.most_common())}")
        print(f"{took:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
