"""The question kind: a question for the person (`wisp questions`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pending import Decision, Kind
from wisp._entry import EntryPoint
from wisp.kinds._view import Answering, KindView, Rows, numbered

if TYPE_CHECKING:  # the records are the channel's; a view only reads them
    from pending import QuestionBinding


class QuestionView(KindView):
    kind = Kind.QUESTION
    group = "questions"
    entry_point = EntryPoint.QUESTIONS
    noun = "a question for you"
    short = "ask"
    title = "wisp: a question for you"
    heading = "A question for you"
    notice_source = "inquiry"
    effect = "answer-questions"
    answering = (
        Answering(
            label="answer", command="wisp questions answer {id} TEXT", decisions=(Decision.ANSWER,)
        ),
        Answering(
            label="decline", command="wisp questions decline {id}", decisions=(Decision.DECLINE,)
        ),
    )
    answered_words: ClassVar[dict[Decision, str]] = {
        Decision.ANSWER: "answered",
        Decision.DECLINE: "declined",
    }

    def asked(self, binding: QuestionBinding) -> str:
        return binding.question

    def paragraphs(self, binding: QuestionBinding) -> Rows:
        return [("options", numbered(binding.options))] if binding.options else []

    def details(self, binding: QuestionBinding) -> Rows:
        rows = [("question", binding.question)]
        for n, option in enumerate(binding.options or (), 1):
            rows.append(("options" if n == 1 else "", f"{n}) {option}"))
        if binding.options:
            rows.append(("free text", "taken too" if binding.free_text else "not taken"))
        return rows


VIEW = QuestionView()
