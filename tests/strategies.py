"""Hypothesis strategies for the channel's records."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
from hypothesis import strategies as st

from pending import (
    Answer,
    CommandBinding,
    Delivery,
    FactBinding,
    Group,
    Kind,
    Outcome,
    QuestionBinding,
    Request,
    Server,
    Settled,
    binding_digest,
)
from pending._ids import ID_MAX_CHARS, ID_MIN_CHARS

ids = st.text("0123456789abcdef", min_size=ID_MIN_CHARS, max_size=ID_MAX_CHARS)
# Any text JSON can carry (no lone surrogates), including controls and bidi characters.
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
opt_texts = st.none() | texts
times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts
extras = st.dictionaries(
    st.text("xyzqw", min_size=3, max_size=8).map(lambda k: "x" + k), json_scalars, max_size=3
)

servers = st.builds(
    Server,
    id=ids,
    pid=st.integers(1, 2**22),
    client=opt_texts,
    thread=opt_texts,
    entry_point=opt_texts,
    extra=extras,
)
command_bindings = st.builds(
    CommandBinding, command=texts, cwd=texts, thread=opt_texts, reason=opt_texts, extra=extras
)
fact_bindings = st.builds(
    FactBinding,
    fact_id=texts,
    subject=texts,
    name=texts,
    value=texts,
    source=texts,
    proposed_by=texts,
    extra=extras,
)
question_bindings = st.builds(
    QuestionBinding,
    question=texts,
    options=st.none() | st.lists(texts, max_size=4).map(tuple),
    free_text=st.booleans(),
    extra=extras,
)
BINDINGS = {
    Kind.COMMAND: command_bindings,
    Kind.FACT: fact_bindings,
    Kind.QUESTION: question_bindings,
}


@st.composite
def requests(draw: st.DrawFn, kind: Kind | None = None) -> Request:
    kind = kind or draw(st.sampled_from(Kind))
    binding = draw(BINDINGS[kind])
    return Request(
        id=draw(ids),
        kind=kind,
        filed_at=draw(times),
        expires_at=draw(st.none() | times),
        server=draw(servers),
        title=draw(texts),
        body=draw(texts),
        binding=binding,
        binding_digest=binding_digest(binding),
        extra=draw(extras),
    )


answers = st.builds(
    Answer,
    id=ids,
    kind=st.sampled_from(Kind),
    decision=st.sampled_from(["once", "no", "keep", "drop", "answer", "timed-out"]),
    binding_digest=st.text("0123456789abcdef", min_size=64, max_size=64),
    answered_at=times,
    via=st.sampled_from(["cli", "tui", "relay", "mcp", "asker", "sweep"]),
    pid=st.integers(1, 2**22),
    user=texts,
    text=opt_texts,
    reason=opt_texts,
    extra=extras,
)
settleds = st.builds(
    Settled,
    id=ids,
    kind=st.sampled_from(Kind),
    outcome=st.sampled_from(Outcome),
    settled_at=times,
    by=texts,
    decision=opt_texts,
    result=opt_texts,
    reason=opt_texts,
    delivery=st.none() | st.sampled_from(Delivery),
    extra=extras,
)


@st.composite
def groups(draw: st.DrawFn) -> Group:
    """One ID's files as a reader could find them: any of the three may be missing, and the
    answer and outcome share the request's ID and kind (a slot's contents are otherwise free)."""
    request = draw(st.none() | requests())
    request_id = request.id if request is not None else draw(ids)
    kind = request.kind if request is not None else draw(st.sampled_from(Kind))
    answer = draw(st.none() | answers.map(lambda a: attrs.evolve(a, id=request_id, kind=kind)))
    settled = draw(st.none() | settleds.map(lambda s: attrs.evolve(s, id=request_id, kind=kind)))
    return Group(id=request_id, request=request, answer=answer, settled=settled)
