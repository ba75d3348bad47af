"""Silence and escalation, by class: how long a call put to the person waits before it is
pushed to their phone, and what it becomes when nobody answers it in time.

Both are the person's settings, by the classes the policy read the call into
(:class:`wisp.policy.reading.Class`): `policy.pushAfterSeconds` and `policy.onSilence`
(:mod:`wisp.stores.config`, which refuses any value that would let silence through). A call
of several classes takes the soonest push and the strictest silence of them; a call of a
must-ask class, or one the self-guard put to the person, is denied when nobody answers,
whatever the harness would do. Silence is never an allow: the most it becomes is the
harness's own ask (its dialog puts the call to the person), or its deny.
"""

# Annotations here are not postponed (issue 41: a hook's path loads no typing work it spares).

from collections.abc import Iterable
from typing import Any, NamedTuple

from wisp.policy.decide import Decider, Decision
from wisp.policy.reading import MUST_ASK, Class
from wisp.stores.config import OnSilence, by_class


class Silence(NamedTuple):
    """What becomes of one call put to the person, by its classes."""

    push_after_s: float  # how long it waits before it is pushed (0: at once)
    denied: bool  # an unanswered call is denied, whatever the harness would do
    why: str | None = None  # why it is denied, in words (None: the harness decides)


def classes_of(decision: Decision) -> tuple[str, ...]:
    """The classes of the call *decision* puts to the person, in the policy's order (none
    for the self-guard's, which reads no further)."""
    if decision.reading is None:
        return ()
    return tuple(cls.value for cls in Class if cls in decision.reading.classes)


def silence_for(decision: Decision, push_after: Any, on_silence: Any) -> Silence:
    """The :class:`Silence` of the call *decision* asks about, by the settings'
    *push_after* (`policy.pushAfterSeconds`) and *on_silence* (`policy.onSilence`)."""
    classes = classes_of(decision) or ("default",)
    push_after_s = min(float(by_class(push_after, cls, 0)) for cls in classes)
    return Silence(push_after_s, *_denied(decision, classes, on_silence))


def _denied(decision: Decision, classes: Iterable[str], on_silence: Any) -> tuple[bool, str | None]:
    if decision.decider is Decider.GUARD:
        return True, "a call that touches wisp's own channel or program is always denied then"
    must = [cls for cls in classes if cls in MUST_ASK]
    if must:
        return True, f"a {must[0]} call nobody answered is always denied"
    for cls in classes:
        if by_class(on_silence, cls, OnSilence.HARNESS.value) == OnSilence.DENY:
            return True, f"policy.onSilence says deny for {cls} calls nobody answered"
    return False, None
