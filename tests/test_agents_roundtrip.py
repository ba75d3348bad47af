"""`wisp agents setup` then `remove` is a round trip (wisp.agents.setup, wisp.agents.jsonsplice):
the person's file comes back byte for byte, their layout is kept, backups stay out of the
harnesses' folders. Real files in a scratch home, the real `wisp` command.

Every run of `wisp agents setup|remove` here goes through :func:`agents` alone, so that the
program it runs can be pointed elsewhere (an install out of the clone's tree) in one place.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import run_wisp
from wisp.agents import jsonsplice


def agents(*args: str) -> tuple[int, str, str]:
    """`wisp agents ARGS…` run as the person runs it: exit status, stdout, stderr."""
    done = run_wisp("agents", *args, env=dict(os.environ))
    return done.returncode, done.stdout, done.stderr


# --- the splice helper ---------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "hooks", "sandbox", "deny", "é", 'q"'])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=5)


def _lay(value: Any, rnd: random.Random, depth: int = 0) -> str:
    """*value* as JSON text in a layout of chance: each object on one line or many, with its
    own indentation step and spacing."""
    if isinstance(value, dict) and value:
        colon = rnd.choice([":", ": ", " : "])
        if rnd.random() < 0.5:
            comma = rnd.choice([",", ", ", " ,  "])
            inner = comma.join(
                json.dumps(k) + colon + _lay(v, rnd, depth + 1) for k, v in value.items()
            )
            return "{" + rnd.choice(["", " "]) + inner + rnd.choice(["", " "]) + "}"
        unit = rnd.choice(["  ", "    ", "\t", " "])
        pad = unit * (depth + 1)
        inner = (",\n" + pad).join(
            json.dumps(k) + colon + _lay(v, rnd, depth + 1) for k, v in value.items()
        )
        return "{\n" + pad + inner + "\n" + unit * depth + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_lay(v, rnd, depth + 1) for v in value) + "]"
    return json.dumps(value)


def _changed(value: dict[str, Any], rnd: random.Random, fresh: list[Any]) -> dict[str, Any]:
    """*value* with members of chance changed, taken out, added, and objects changed within."""
    out: dict[str, Any] = {}
    for key, v in value.items():
        roll = rnd.random()
        if roll < 0.15:
            continue
        if roll < 0.3 and fresh:
            out[key] = fresh.pop()
        elif isinstance(v, dict) and roll < 0.7:
            out[key] = _changed(v, rnd, fresh)
        else:
            out[key] = v
    for key in rnd.sample(["a", "new", "z", "hooks"], rnd.randrange(3)):
        if key not in out and fresh:
            out[key] = fresh.pop()
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _kept_bytes(old_text: str, old: Any, new_text: str, new: Any) -> None:
    """Every member of the old text whose value is unchanged is in the new text byte for byte;
    and so, recursively, in every object that changed within."""
    before = {m.key: m for m in jsonsplice.root(old_text).members}
    after = {m.key: m for m in jsonsplice.root(new_text).members}
    _kept_members(old_text, before, old, new_text, after, new)


def _kept_members(
    old_text: str,
    before: dict[str, Any],
    old: dict[str, Any],
    new_text: str,
    after: dict[str, Any],
    new: dict[str, Any],
) -> None:
    for key, m in before.items():
        if key not in new:
            continue
        n = after[key]
        if jsonsplice.same(old[key], new[key]):
            assert new_text[n.start : n.value_end] == old_text[m.start : m.value_end]
        elif m.node is not None and n.node is not None:
            _kept_members(
                old_text,
                {x.key: x for x in m.node.members},
                old[key],
                new_text,
                {x.key: x for x in n.node.members},
                new[key],
            )


class TestSplice:
    @given(OBJECTS, st.randoms(use_true_random=False), st.lists(VALUES, max_size=8))
    def test_the_result_holds_the_new_data_and_keeps_every_other_byte(
        self, old: dict[str, Any], rnd: random.Random, fresh: list[Any]
    ) -> None:
        """For any object in any layout and any change to it: the spliced text parses to
        exactly the new data; every member whose value did not change, at any depth, is there
        byte for byte; what lies around the object stays."""
        text = " \n" + _lay(old, rnd) + "\n"
        new = _changed(old, rnd, fresh)
        out = jsonsplice.splice(text, new)
        assert _canonical(json.loads(out)) == _canonical(new)
        _kept_bytes(text, old, out, new)
        assert out.startswith(" \n") and out.endswith("\n")

    @given(OBJECTS, st.randoms(use_true_random=False))
    def test_no_change_is_the_same_text(self, old: dict[str, Any], rnd: random.Random) -> None:
        """The same data: the text comes back as it was, byte for byte."""
        text = _lay(old, rnd)
        assert jsonsplice.splice(text, json.loads(text)) == text

    def test_a_new_member_follows_the_objects_own_layout(self) -> None:
        """Control first: the unchanged members stay on their lines. A member added to a
        four-space object is indented four spaces; a one-line object stays one line."""
        text = '{\n    "model": "opus",\n    "permissions": {"deny": ["X"]}\n}\n'
        new = {"model": "opus", "permissions": {"deny": ["X", "Y"]}, "sandbox": {"on": True}}
        out = jsonsplice.splice(text, new)
        assert out == (
            '{\n    "model": "opus",\n    "permissions": {"deny": ["X", "Y"]},\n'
            '    "sandbox": {\n        "on": true\n    }\n}\n'
        )

    def test_true_is_not_one(self) -> None:
        """`1` set to `true` is a change, though Python's `1 == True`."""
        assert jsonsplice.splice('{"a": 1}', {"a": True}) == '{"a": true}'
