"""State derivation: the design's precedence, as a pure function."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import pending
from pending import (
    LIVE_EXPIRY_GRACE_S,
    Answer,
    CommandBinding,
    Delivery,
    Group,
    Kind,
    Outcome,
    Request,
    Server,
    Settled,
    Settlement,
    State,
    answer_problem,
    binding_digest,
    derive_status,
    ending_of,
    make_request,
    settlement_for,
)
from pending._kinds import BINDING_TYPES
from pending._state import needs_liveness
from pending.testing import FakeClock

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
# Records, names and rules: no module of these may reach the filesystem or a watcher.
PURE_MODULES = (
    "_bindings",
    "_clock",
    "_names",
    "_kinds",
    "_errors",
    "_ids",
    "_records",
    "_convert",
    "_json",
)
PURE_MODULES += ("_state", "_sweep")  # the rules
IO_MODULES = frozenset(
    {"pending._dirs", "pending._fsio", "pending._liveness", "pending._channel", "pending._watch"}
)
SERVER = Server(id="5e5e5e5e", pid=4242)
BINDING_ARGS = {
    Kind.COMMAND: {"command": "ls", "cwd": "/"},
    Kind.FACT: {
        "fact_id": "c1",
        "subject": "s",
        "name": "n",
        "value": "v",
        "source": "x",
        "proposed_by": "model",
    },
    Kind.QUESTION: {"question": "which?", "options": ("a", "b"), "free_text": False},
    Kind.TOOL: {"tool": "Write", "input": {"file_path": "/x", "content": ""}, "cwd": "/"},
}


def request(kind: Kind, expires_in_s: float | None = 600) -> Request:
    return make_request(
        kind=kind,
        binding=BINDING_TYPES[kind](**BINDING_ARGS[kind]),
        title="t",
        body="b",
        server=SERVER,
        clock=FakeClock(NOW - timedelta(seconds=10)),
        expires_in_s=expires_in_s,
    )


def resigned(req: Request, binding: CommandBinding) -> Request:
    """*req* as it reads once its file was rewritten with *binding* (and a matching digest)."""
    return req._replace(binding=binding, binding_digest=binding_digest(binding))


def answer(
    req: Request,
    decision: str,
    via: str = "cli",
    text: str | None = None,
    reason: str | None = None,
) -> Answer:
    return Answer(
        id=req.id,
        kind=req.kind,
        decision=decision,
        text=text,
        reason=reason,
        binding_digest=binding_digest(req.binding),
        answered_at=NOW,
        via=via,
        pid=1,
        user="ana",
    )


def settled(req: Request, outcome: Outcome) -> Settled:
    return Settled(id=req.id, kind=req.kind, outcome=outcome, settled_at=NOW, by="asker")


class TestDeriveStatus:
    @pytest.mark.parametrize("kind", list(Kind))
    def test_filed_while_its_server_lives(self, kind: Kind) -> None:
        """A waiting request of any kind, server alive, not expired: filed."""
        req = request(kind)
        status = derive_status(Group(id=req.id, request=req), now=NOW, server_alive=True)
        assert status is not None and status.state is State.FILED

    @pytest.mark.parametrize(
        ("kind", "state"),
        [(Kind.COMMAND, State.STALE), (Kind.QUESTION, State.STALE), (Kind.FACT, State.HANDED_OVER)],
    )
    def test_server_gone(self, kind: Kind, state: State) -> None:
        """Server gone: commands and questions are stale; a fact is handed over."""
        req = request(kind, expires_in_s=None)
        status = derive_status(Group(id=req.id, request=req), now=NOW, server_alive=False)
        assert status is not None and status.state is state
        if state is State.STALE:
            assert status.reason is not None and "4242" in status.reason

    @pytest.mark.parametrize("kind", list(Kind))
    def test_expired_is_stale_for_every_kind(self, kind: Kind) -> None:
        """Past expiresAt is stale, even a fact (0.22.0 filed facts with an expiry): at once
        if its server is gone; while its asker holds its lock, never by the time (its own
        deadline decides); a legacy request whose pid lives, past the grace."""
        req = request(kind, expires_in_s=5)
        group = Group(id=req.id, request=req)
        status = derive_status(group, now=NOW, server_alive=False)
        assert status is not None and status.state is State.STALE
        assert status.reason is not None and "expired" in status.reason
        late = NOW + timedelta(seconds=LIVE_EXPIRY_GRACE_S)
        status = derive_status(group, now=late + timedelta(days=1), server_alive=True)
        assert status is not None and status.state is State.FILED
        legacy = Group(id=req.id, request=req._replace(legacy=True))
        status = derive_status(legacy, now=late, server_alive=True)
        assert status is not None and status.state is State.STALE
        assert status.reason is not None and "expired" in status.reason

    @pytest.mark.parametrize("kind", list(Kind))
    def test_a_live_askers_expired_request_is_its_own_within_the_grace(self, kind: Kind) -> None:
        """Expired, its server alive, within LIVE_EXPIRY_GRACE_S: still filed, for its asker
        to claim `timed-out` on its own clock (a sweeper must not claim it stale first)."""
        req = request(kind, expires_in_s=5)
        assert req.expires_at is not None
        for past in (0.0, 1.0, LIVE_EXPIRY_GRACE_S - 0.001):
            now = req.expires_at + timedelta(seconds=past)
            status = derive_status(Group(id=req.id, request=req), now=now, server_alive=True)
            assert status is not None and status.state is State.FILED, past

    def test_answered_beats_stale(self) -> None:
        """A person's answer in the slot is `answered`, even if the server died or it expired."""
        req = request(Kind.COMMAND, expires_in_s=5)
        status = derive_status(
            Group(id=req.id, request=req, answer=answer(req, "once")), now=NOW, server_alive=None
        )
        assert status is not None and status.state is State.ANSWERED

    @pytest.mark.parametrize("tomb", ["timed-out", "withdrawn", "stale"])
    def test_a_tombstone_reads_as_its_outcome(self, tomb: str) -> None:
        """A tombstone in the slot is settled with its outcome before its file is written."""
        req = request(Kind.COMMAND)
        group = Group(id=req.id, request=req, answer=answer(req, tomb, via="asker"))
        status = derive_status(group, now=NOW, server_alive=None)
        assert status is not None and status.state is State.SETTLED
        assert status.outcome is Outcome(tomb)

    def test_settled_beats_everything(self) -> None:
        """An outcome on disk decides, whatever else is there."""
        req = request(Kind.FACT, expires_in_s=5)
        group = Group(
            id=req.id, request=req, answer=answer(req, "keep"), settled=settled(req, Outcome.FAILED)
        )
        status = derive_status(group, now=NOW, server_alive=False)
        assert status is not None and status.state is State.SETTLED
        assert status.outcome is Outcome.FAILED

    def test_liveness_is_asked_only_when_needed(self) -> None:
        """Answered and settled groups never need the (I/O) liveness check."""
        req = request(Kind.COMMAND)
        assert needs_liveness(Group(id=req.id, request=req))
        assert not needs_liveness(Group(id=req.id, request=req, answer=answer(req, "no")))
        with pytest.raises(ValueError, match="liveness"):
            derive_status(Group(id=req.id, request=req), now=NOW, server_alive=None)

    def test_no_request_no_status(self) -> None:
        """An ended group whose request was swept has no status."""
        assert derive_status(Group(id="a1b2c3d4"), now=NOW, server_alive=None) is None


class TestAnswerProblem:
    def test_a_matching_answer_may_be_applied(self) -> None:
        """Same kind, a valid decision, the digest of the current binding: no problem."""
        req = request(Kind.COMMAND)
        assert answer_problem(req, answer(req, "session")) is None

    def test_an_altered_binding_is_detected(self) -> None:
        """An answer bound to what the person saw is refused if the binding changed since."""
        req = request(Kind.COMMAND)
        ans = answer(req, "always")
        altered = resigned(req, CommandBinding(command="rm -rf /", cwd="/"))
        problem = answer_problem(altered, ans)
        assert problem is not None and "changed" in problem

    def test_wrong_kind_and_invalid_decisions(self) -> None:
        """A command answer to a fact, a fact decision to a command, an option not offered."""
        fact = request(Kind.FACT)
        assert "command answer" in (
            answer_problem(fact, answer(fact, "keep")._replace(kind=Kind.COMMAND)) or ""
        )
        cmd = request(Kind.COMMAND)
        assert "not an answer" in (answer_problem(cmd, answer(cmd, "keep")) or "")
        q = request(Kind.QUESTION)
        assert "not one of" in (answer_problem(q, answer(q, "answer", text="c")) or "")
        assert answer_problem(q, answer(q, "answer", text="b")) is None


class TestSettlementFor:
    @pytest.mark.parametrize("tomb", ["timed-out", "withdrawn", "stale"])
    def test_a_tombstone_settles_as_its_outcome(self, tomb: str) -> None:
        """A tombstone settles as the outcome of its name, its reason kept, no decision."""
        req = request(Kind.COMMAND)
        got = settlement_for(req, answer(req, tomb, via="asker", reason="why"))
        assert got == Settlement(outcome=Outcome(tomb), reason="why")

    @pytest.mark.parametrize(
        ("kind", "decision", "text"),
        [
            (Kind.COMMAND, "session", None),
            (Kind.FACT, "drop", None),
            (Kind.QUESTION, "answer", "a"),
        ],
    )
    def test_a_valid_answer_settles_answered(
        self, kind: Kind, decision: str, text: str | None
    ) -> None:
        """A person's valid answer settles `answered` with its decision and the delivery."""
        req = request(kind)
        ans = answer(req, decision, text=text)
        assert settlement_for(req, ans) == Settlement(
            outcome=Outcome.ANSWERED, decision=decision, delivery=Delivery.WATCHED
        )
        applied = settlement_for(req, ans, delivery=Delivery.APPLIED)
        assert applied.delivery is Delivery.APPLIED

    def test_an_answer_that_must_not_be_applied_fails(self) -> None:
        """Bound to a binding that changed, or not a decision of the kind: `failed`, with why."""
        req = request(Kind.COMMAND)
        changed = resigned(req, CommandBinding(command="rm -rf /", cwd="/"))
        got = settlement_for(changed, answer(req, "always"))
        assert (got.outcome, got.decision, got.delivery) == (Outcome.FAILED, "always", None)
        assert got.reason is not None and "changed" in got.reason
        wrong = settlement_for(req, answer(req, "keep"))
        assert wrong.outcome is Outcome.FAILED and "not an answer" in (wrong.reason or "")

    def test_it_agrees_with_the_state_a_tombstone_reads_as(self) -> None:
        """What a tombstone settles as is what its status already says (one rule, not two)."""
        req = request(Kind.QUESTION)
        for tomb in ("timed-out", "withdrawn", "stale"):
            ans = answer(req, tomb, via="sweep", reason="r")
            status = derive_status(
                Group(id=req.id, request=req, answer=ans), now=NOW, server_alive=None
            )
            got = settlement_for(req, ans)
            assert status is not None and (status.outcome, status.reason) == (
                got.outcome,
                got.reason,
            )


class TestEndingOf:
    def test_a_tombstone_is_an_ending_before_its_outcome_is_written(self) -> None:
        """The ending carries the tombstone's outcome, reason, time and writer."""
        req = request(Kind.COMMAND)
        ending = ending_of(answer(req, "withdrawn", via="asker", reason="thread closed"))
        assert ending == Settled(
            id=req.id,
            kind=Kind.COMMAND,
            outcome=Outcome.WITHDRAWN,
            settled_at=NOW,
            by="asker",
            reason="thread closed",
        )

    def test_a_persons_answer_is_not_an_ending(self) -> None:
        """A person's answer ends only once applied: asking for its ending is a ValueError."""
        req = request(Kind.FACT)
        with pytest.raises(ValueError, match="not an ending"):
            ending_of(answer(req, "keep"))


class TestPureModules:
    """The rules are pure, and pending's modules import without a circle."""

    def test_each_module_imports_alone(self) -> None:
        """Each private module, imported first (the package's __init__ bypassed), loads: no
        import circle among them; and the pure ones and the rules pull in no I/O module."""
        package = str(Path(pending.__file__).parent)
        names = sorted(p.stem for p in Path(package).glob("_*.py") if p.stem != "__init__")
        code = f"""
import importlib, json, sys, types
loaded = {{}}
for name in {names!r}:
    for key in [k for k in sys.modules if k == "pending" or k.startswith("pending.")]:
        del sys.modules[key]
    stub = types.ModuleType("pending")
    stub.__path__ = [{package!r}]
    sys.modules["pending"] = stub
    importlib.import_module("pending." + name)
    loaded[name] = sorted(k for k in sys.modules if k.startswith("pending."))
print(json.dumps(loaded))
"""
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        assert out.returncode == 0, out.stderr
        loaded = json.loads(out.stdout)
        assert set(loaded) == set(names) and set(PURE_MODULES) <= set(names)
        for name in PURE_MODULES:
            assert not IO_MODULES & set(loaded[name]), (name, loaded[name])
