"""What an answering command says it recorded: a question's free-text answer, made visible
(an option by its number: test_cli_answer.py) — in a real pseudo-terminal."""

from __future__ import annotations

from cliterm import run

from pending import Channel
from wisp import Asker, QuestionAsker


class TestQuestionAnswerSaysWhatWasRecorded:
    def test_free_text_is_said_made_visible(self, channel: Channel) -> None:
        """Free text is said back as recorded, with a control character made visible."""
        with Asker(channel, entry_point="questions") as live:
            asking = QuestionAsker(live, timeout_s=60)
            request = asking.file("Why?", free_text=True)
            code, output = run("questions", "answer", request.id, "it\x1bis late", cols=200)
        assert code == 0, output
        assert 'answered "it⟨ESC⟩is late"' in output
