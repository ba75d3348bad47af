"""A throwaway fourth kind, `toy`, added as docs/architecture.md says a kind is added: a row
in pending.KINDS, a binding record, and one view for wisp/kinds/. No face knows of it.

`python tests/toykind.py ARGS` is `wisp ARGS` in a process that has the toy kind, so a test
can drive the real CLI (in a real terminal) on a kind no face was written for.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from types import MappingProxyType
from typing import Any, NamedTuple

from pending import Decision, Kind
from pending.testing import throwaway_kind
from wisp.audit.writer import EntryPoint
from wisp.kinds import Answering, KindView, Rows, register, unregister


class ToyBinding(NamedTuple):
    """What a toy request is bound to: a wish, and where it is to come true."""

    wish: str
    where: str
    extra: Mapping[str, Any] = MappingProxyType({})


class ToyView(KindView):
    kind: Any = None  # set when the kind exists
    group = "toys"
    entry_point = EntryPoint.APPROVALS
    noun = "a wish to grant"
    short = "toy"
    title = "wisp: grant a wish?"
    heading = "Grant this wish?"
    notice_source = "approval"
    effect = "grant-wishes"
    answering = (
        Answering(label="grant", command="wisp toys grant {id}", decisions=(Decision.ONCE,)),
        Answering(label="refuse", command="wisp toys refuse {id}", decisions=(Decision.NO,)),
    )
    answered_words = {Decision.ONCE: "granted", Decision.NO: "refused"}  # noqa: RUF012

    def asked(self, binding: ToyBinding) -> str:
        return f"wish for {binding.wish}"

    def paragraphs(self, binding: ToyBinding) -> Rows:
        return [("at", binding.where)]

    def details(self, binding: ToyBinding) -> Rows:
        return [("wish", binding.wish), ("at", binding.where)]


@contextmanager
def toy_kind() -> Iterator[Kind]:
    """The toy kind, known to the channel and to every face, for the length of the block."""
    with ExitStack() as stack:
        kind = stack.enter_context(
            throwaway_kind(
                "toy",
                suffix=".toy.json",
                binding_type=ToyBinding,
                decisions=(Decision.ONCE, Decision.NO),
            )
        )
        view = ToyView()
        view.kind = kind
        register(view)
        stack.callback(unregister, kind)
        yield kind


if __name__ == "__main__":
    from wisp.cli import app

    with toy_kind():
        sys.argv[0] = "wisp"
        app(prog_name="wisp")
