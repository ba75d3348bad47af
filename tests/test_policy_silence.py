"""`policy.pushAfterSeconds` and `policy.onSilence` (issue 57), as `wisp config set` takes them:
checked strictly — silence is never an allow, a must-ask class takes `deny` alone — and
refused with what is wrong; the class names they take are the policy's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import in_terminal, run_wisp

from wisp.policy.reading import MUST_ASK, Class
from wisp.stores.config import CALL_CLASSES, MUST_ASK_CLASSES


class TestSilenceSettings:
    def test_the_classes_are_the_policys(self) -> None:
        """The classes the settings take are :class:`wisp.policy.reading.Class`, in its
        order, and the must-ask ones its :data:`MUST_ASK`."""
        assert tuple(c.value for c in Class) == CALL_CLASSES
        assert {c.value for c in MUST_ASK} == MUST_ASK_CLASSES

    @pytest.mark.parametrize(
        ("key", "value", "said"),
        [
            ("policy.onSilence", "allow", "silence is never an allow"),
            ("policy.onSilence", '{"default": "allow"}', "silence is never an allow"),
            (
                "policy.onSilence",
                '{"network": "harness"}',
                "network is a must-ask class, and a call of it nobody answered is always denied",
            ),
            ("policy.onSilence", '{"nowhere": "deny"}', "'nowhere' is no class"),
            ("policy.pushAfterSeconds", '{"other": -1}', "other is -1, which is no number"),
        ],
    )
    def test_a_value_that_lets_silence_through_is_refused_saying_why(
        self, home: Path, key: str, value: str, said: str
    ) -> None:
        """A value that would let a call nobody answered through (an allow; a must-ask class
        left to the harness), or that names no class, is refused from a terminal too: the
        message says what it takes and what is wrong, nothing is written, no traceback."""
        code, output = in_terminal("config", "set", key, value)
        assert code in (1, 2), output
        flat = " ".join(output.split())
        assert said in flat and "Nothing was written" in flat, output
        assert "Traceback" not in output
        assert not (home / "config.json").exists()

    def test_a_value_that_only_tightens_is_taken_from_a_script(self, home: Path) -> None:
        """The control: `deny` for a class, a must-ask class's `deny`, and an earlier push
        are taken without a terminal, and read back as set."""
        for key, value in (
            ("policy.onSilence", '{"default": "harness", "other": "deny", "network": "deny"}'),
            ("policy.pushAfterSeconds", "0"),
        ):
            out = run_wisp("config", "set", key, value, input="\n")
            assert out.returncode == 0, out.stderr
            assert json.loads(run_wisp("config", "get", key).stdout) == json.loads(value)

    @pytest.mark.parametrize(
        ("key", "before", "after"),
        [
            ("policy.onSilence", '{"other": "deny"}', '{"other": "harness"}'),
            ("policy.pushAfterSeconds", "0", '{"default": 0, "network": 60}'),
        ],
    )
    def test_loosening_needs_a_terminal(
        self, home: Path, key: str, before: str, after: str
    ) -> None:
        """A class moved from `deny` to the harness, or a later push, loosens what protects
        the person: refused without a terminal (exit 2, nothing written), taken from one."""
        assert run_wisp("config", "set", key, before, input="\n").returncode == 0
        out = run_wisp("config", "set", key, after, input="\n")
        assert out.returncode == 2 and "only from a terminal" in out.stderr, out.stderr
        assert json.loads(run_wisp("config", "get", key).stdout) == json.loads(before)
        code, output = in_terminal("config", "set", key, after)
        assert code == 0, output
