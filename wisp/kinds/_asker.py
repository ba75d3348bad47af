"""What a kind's gate stands on: the asking server it is handed, typed by a protocol.

A gate (:class:`~wisp.kinds.command_gate.ApprovalGate`,
:class:`~wisp.kinds.question_gate.QuestionAsker`, :class:`~wisp.kinds.fact_keeper.FactKeeper`)
files through an asker and reads how its requests ended; it never imports the asking core
(`wisp._asking`), which stands above the kinds. This module holds what the two share: the
:class:`AskingServer` protocol a gate is typed by, an :class:`Ending` (how a request ended for
its asker), and an :class:`Applier` (a kind whose answers its own code applies).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, Protocol

from pending import (
    Answer,
    Binding,
    Channel,
    ChannelUnwritable,
    Clock,
    Kind,
    Outcome,
    Request,
    Settled,
    Status,
    answer_problem,
)
from wisp._entry import EntryPoint


class Ending(NamedTuple):
    """How a request ended for the asker."""

    request: Request
    outcome: Outcome
    answer: Answer | None = None  # the answer in the slot (a person's, or a tombstone)
    reason: str | None = None
    # Set when the channel could not record how it ended (a full disk, a read-only mount):
    # the ending holds for this process all the same (a command is not approved), and a
    # caller that must say so raises it.
    error: ChannelUnwritable | None = None

    @property
    def decision(self) -> str | None:
        if self.answer is None or self.answer.is_tombstone:
            return None
        return self.answer.decision


class Applier(Protocol):
    """What settling one kind's answers takes beyond the one rule, for the asker to call
    (registered with :meth:`wisp.Asker.apply_with`): a fact's keep written to the person's store.

    A kind with an applier is never waited for: its requests are filed with no deadline,
    :meth:`wisp.Asker.wait` and :meth:`wisp.Asker.waiting` do not know them, and the asker's
    one settler hands each answer to the applier when it comes (`delivery: watched`)."""

    def apply(self, request: Request, status: Status) -> Settled:
        """Apply the answer in *status* and settle *request* (first outcome wins), auditing
        what it did; the outcome already written if there is one. Raises
        :class:`wisp.StoreError`, :class:`pending.PendingError` or ``OSError`` to leave it
        answered: it is tried again on its next event, or handed over when the asker stops."""
        ...


def ending_of(request: Request, settled: Settled, answer: Answer | None) -> Ending:
    """How *request* ended, by its outcome record. An outcome `answered` stands only with a
    person's answer in the slot that fits the request as this asker filed it: otherwise
    (an outcome written by someone else for something else) it ends `failed`."""
    if settled.outcome is Outcome.ANSWERED:
        problem = (
            "no person's answer holds its slot"
            if answer is None or answer.is_tombstone
            else answer_problem(request, answer)
        )
        if problem is not None:
            return Ending(
                request=request,
                outcome=Outcome.FAILED,
                answer=answer,
                reason=f"its outcome says answered, but {problem}",
            )
    return Ending(request=request, outcome=settled.outcome, answer=answer, reason=settled.reason)


class AskingServer(Protocol):
    """What a gate uses of its asker (:class:`wisp.Asker` is one): where it files, for whom,
    and how its requests end."""

    channel: Channel
    home: Path
    clock: Clock
    entry_point: EntryPoint

    def file(
        self,
        kind: Kind,
        binding: Binding,
        *,
        title: str,
        body: Callable[[str], str],
        timeout_s: float,
        thread: str | None = None,
        on_filed: Callable[[Request], None] | None = None,
        push_after_s: float = 0.0,
    ) -> Request:
        """File a request and return at once (its answer is settled when it comes; its push
        to the phone held back *push_after_s*)."""
        ...

    def wait(self, request_id: str, wait_s: float | None = None) -> Ending | None:
        """How the request ended; None if it still waits after *wait_s*."""
        ...

    def apply_with(self, kind: Kind, applier: Applier) -> None:
        """Settle this asker's requests of *kind* by *applier* from now on."""
        ...

    def hand_over(self, kind: Kind | None = None) -> list[Request]:
        """Stop following the waiting requests that outlive their server (of *kind*)."""
        ...
