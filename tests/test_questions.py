"""Questions end to end: asked from a script, answered or declined from a terminal."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import AskingCommand, audit_records, in_terminal

from pending import Channel, Decision, Kind


class TestQuestions:
    def test_answered_text_alone_on_stdout(self, home: Path) -> None:
        """The answer's text, and only it, goes to stdout; exit 0."""
        asking = AskingCommand(
            "questions",
            "ask",
            "Which environment?",
            "--option",
            "staging",
            "--option",
            "production",
        )
        assert "options: 1) staging  2) production" in asking.prompt  # numbered: `answer ID 2`
        code, output = in_terminal("questions", "answer", asking.id, "production")
        assert code == 0 and "the asker has it" in output
        code, out, _ = asking.result()
        assert (code, out) == (0, "production\n")
        events = [r["event"] for r in audit_records(home) if r.get("id") == asking.id]
        assert events[:2] == ["approval.pending", "notification"]
        # Across processes the asker may settle before the answerer writes its line.
        assert sorted(events[2:]) == ["approval.answered", "approval.settled"]
        assert audit_records(home)[0]["question"] == "Which environment?"

    def test_the_answer_is_made_visible_on_stdout(self, channel: Channel) -> None:
        """An answer holding ESC, BEL, BS, a C1 control or a right-to-left override reaches
        stdout with each made visible (line breaks kept); `--json` has the text exactly."""
        answer = "ok\x1b[2J\x07\x08\x9b\u202eend\nsecond"
        for json_flag in ([], ["--json"]):
            asking = AskingCommand("questions", "ask", *json_flag, "What now?")
            channel.answer(asking.id, Decision.ANSWER, kind=Kind.QUESTION, via="cli", text=answer)
            code, out, _ = asking.result()
            assert code == 0
            if json_flag:
                assert json.loads(out)["text"] == answer
            else:
                assert out == "ok⟨ESC⟩[2J⟨U+0007⟩⟨U+0008⟩⟨U+009B⟩⟨U+202E⟩end\nsecond\n"

    def test_an_option_not_offered_is_refused(self, home: Path) -> None:
        """With fixed options, other text is refused, listing the options; nothing written."""
        asking = AskingCommand("questions", "ask", "Which?", "--option", "a", "--option", "b")
        code, output = in_terminal("questions", "answer", asking.id, "c")
        assert code == 1 and "'a', 'b'" in output
        code, _ = in_terminal("questions", "answer", asking.id, "b")
        assert code == 0
        assert asking.result()[1] == "b\n"

    def test_free_text(self, home: Path) -> None:
        """Without options any text is an answer."""
        asking = AskingCommand("questions", "ask", "--json", "What is the codename?")
        in_terminal("questions", "answer", asking.id, "BLUE HERON")
        code, out, _ = asking.result()
        assert code == 0
        assert json.loads(out) == {
            "id": asking.id,
            "outcome": "answered",
            "text": "BLUE HERON",
            "reason": None,
        }

    def test_declined(self, home: Path) -> None:
        """A declined question exits 1 and prints nothing on stdout."""
        asking = AskingCommand("questions", "ask", "Deploy now?")
        code, output = in_terminal("questions", "decline", asking.id)
        assert code == 0 and "declined" in output
        code, out, err = asking.result()
        assert (code, out) == (1, "") and "declined" in err

    def test_timed_out(self, home: Path) -> None:
        """No answer by the timeout: exit 124."""
        asking = AskingCommand("questions", "ask", "--timeout", "0.3", "Anyone?")
        code, out, err = asking.result()
        assert (code, out) == (124, "") and "timed out" in err

    def test_a_command_answer_to_a_question_is_refused(self, home: Path) -> None:
        """Approving a question names `wisp questions answer`."""
        asking = AskingCommand("questions", "ask", "--timeout", "20", "Now?")
        code, output = in_terminal("approvals", "approve", asking.id)
        assert code == 1 and f"`wisp questions answer {asking.id} TEXT`" in output
        in_terminal("questions", "decline", asking.id)
        asking.result()
