"""The question kind's gate: ask the person, and read their reply.

:class:`QuestionAsker` files a question through the asker it is handed and turns how it
ended into a :class:`Reply`. The view a question is shown with is the kind's module
(`question.py`); this one is loaded only by what asks.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import attrs

from pending import Decision, Kind, Outcome, QuestionBinding, Request
from wisp.kinds import view
from wisp.kinds._asker import AskingServer, Ending

_QUESTIONS = view(Kind.QUESTION)


class ReplyOutcome(StrEnum):
    """How a question ended for its asker."""

    ANSWERED = Outcome.ANSWERED.value
    DECLINED = "declined"  # answered, with `decline`
    TIMED_OUT = Outcome.TIMED_OUT.value
    WITHDRAWN = Outcome.WITHDRAWN.value
    FAILED = Outcome.FAILED.value
    STALE = Outcome.STALE.value


@attrs.frozen(kw_only=True)
class Reply:
    """A question's reply: the person's text, or how it ended without one."""

    outcome: ReplyOutcome
    text: str | None = None
    request_id: str | None = None
    reason: str | None = None


class QuestionAsker:
    """Asks the person a question through the asker it is handed, and reads the reply."""

    def __init__(self, asker: AskingServer, *, timeout_s: float) -> None:
        self.asker = asker
        self.timeout_s = timeout_s

    def file(
        self,
        question: str,
        *,
        options: tuple[str, ...] | None = None,
        free_text: bool | None = None,
        thread: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
    ) -> Request:
        """Ask and return at once; :meth:`wisp.Asker.wait` for the ending, then :meth:`reply`."""
        free = (not options) if free_text is None else free_text
        return self.asker.file(
            Kind.QUESTION,
            QuestionBinding(question=question, options=options or None, free_text=free),
            title=_QUESTIONS.title,
            body=lambda rid: _QUESTIONS.body(question, rid),
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            thread=thread,
            on_filed=on_filed,
        )

    def ask(
        self,
        question: str,
        *,
        options: tuple[str, ...] | None = None,
        free_text: bool | None = None,
        thread: str | None = None,
        timeout_s: float | None = None,
        on_filed: Callable[[Request], None] | None = None,
    ) -> Reply:
        """Ask the person and wait for the reply. Raises :class:`pending.ChannelUnwritable`
        as :meth:`wisp.ApprovalGate.request` does."""
        request = self.file(
            question,
            options=options,
            free_text=free_text,
            thread=thread,
            timeout_s=timeout_s,
            on_filed=on_filed,
        )
        ending = self.asker.wait(request.id)
        assert ending is not None  # no wait limit: only an ending returns
        if ending.error is not None and ending.outcome is not Outcome.TIMED_OUT:
            raise ending.error  # no reply, and the channel cannot be used: say so
        return self.reply(ending)

    @staticmethod
    def reply(ending: Ending) -> Reply:
        """The reply an ended question gives."""
        if ending.outcome is Outcome.ANSWERED:
            if ending.decision == Decision.DECLINE:
                return Reply(outcome=ReplyOutcome.DECLINED, request_id=ending.request.id)
            text = ending.answer.text if ending.answer else None
            return Reply(outcome=ReplyOutcome.ANSWERED, text=text, request_id=ending.request.id)
        return Reply(
            outcome=ReplyOutcome(ending.outcome),
            request_id=ending.request.id,
            reason=ending.reason,
        )
