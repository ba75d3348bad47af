"""IDs and file names: validated before any path is built."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import ids

from pending import InvalidId, Kind, is_valid_id, new_id, validate_id
from pending._ids import NameVerdict, Slot, name_id, parse_name, request_name


class TestValidateId:
    @given(ids)
    def test_hex_ids_of_8_to_32_are_valid(self, request_id: str) -> None:
        """Every 8-32 character lowercase hex string is an ID."""
        assert validate_id(request_id) == request_id

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "a1b2c3d",
            "A1B2C3D4",
            "a1b2c3d4" * 5,
            "../../etc",
            "a1b2c3d4/..",
            "a1b2c3d4\n",
            "a1b2c3d4 ",
            "g1b2c3d4",
            "a1b2-c3d4",
            "٣٣٣٣٣٣٣٣",
        ],
    )
    def test_malformed_ids_are_refused(self, text: str) -> None:
        """Short, long, uppercase, path-like, whitespace, non-ASCII digits: refused."""
        with pytest.raises(InvalidId) as info:
            validate_id(text)
        assert "8 to 32 lowercase hex" in str(info.value)

    @given(st.text(max_size=40))
    def test_no_path_is_built_from_an_invalid_id(self, text: str) -> None:
        """Building a file name from any invalid text raises before a name exists."""
        if is_valid_id(text):
            assert request_name(text, Kind.COMMAND).startswith(text)
        else:
            with pytest.raises(InvalidId):
                request_name(text, Kind.COMMAND)

    def test_new_ids_are_valid_and_distinct(self) -> None:
        """Fresh IDs validate and do not repeat."""
        made = {new_id() for _ in range(1000)}
        assert len(made) == 1000 and all(is_valid_id(i) for i in made)


class TestParseName:
    @pytest.mark.parametrize(
        ("name", "slot", "kind"),
        [
            ("a1b2c3d4.request.json", Slot.REQUEST, Kind.COMMAND),
            ("a1b2c3d4.fact.json", Slot.REQUEST, Kind.FACT),
            ("a1b2c3d4.question.json", Slot.REQUEST, Kind.QUESTION),
            ("a1b2c3d4.answer.json", Slot.ANSWER, None),
            ("a1b2c3d4.settled.json", Slot.SETTLED, None),
        ],
    )
    def test_known_names(self, name: str, slot: Slot, kind: Kind | None) -> None:
        """Each of the five file names parses to its slot and kind."""
        verdict, parsed = parse_name(name)
        assert verdict is NameVerdict.PARSED and parsed is not None
        assert (parsed.id, parsed.slot, parsed.kind) == ("a1b2c3d4", slot, kind)

    @pytest.mark.parametrize(
        "name", ["a1b2c3d4.poll.json", "a1b2c3d4.request.json.bak", ".tmp", ".servers"]
    )
    def test_unknown_suffixes_and_dotfiles_are_ignored(self, name: str) -> None:
        """A newer build's kinds, and our own staging directories, are invisible."""
        assert parse_name(name) == (NameVerdict.IGNORED, None)

    @pytest.mark.parametrize(
        "name", ["NOT-AN-ID.request.json", "README", "a1b2.request.json", "a1b2c3d4"]
    )
    def test_names_that_do_not_parse_are_bad(self, name: str) -> None:
        """Names without a valid ID are reported, never acted on."""
        assert parse_name(name) == (NameVerdict.BAD, None)


class TestNameId:
    @pytest.mark.parametrize(
        "name",
        [
            "a1b2c3d4.request.json",
            "a1b2c3d4.fact.json",
            "a1b2c3d4.question.json",
            "a1b2c3d4.tool.json",
            "a1b2c3d4.answer.json",
            "a1b2c3d4.settled.json",
            "a1b2c3d4.poll.json",
            "a1b2c3d4.request.json.bak",
            ".tmp",
            ".a1b2c3d4.request.json",
            "NOT-AN-ID.request.json",
            "README",
            "a1b2.request.json",
            "a1b2c3d4",
            "a1b2c3d4.",
        ],
    )
    def test_the_verdict_and_id_of_parse_name(self, name: str) -> None:
        """A scan's lighter parse says what parse_name says: the same verdict, and the ID of
        each name it parses."""
        verdict, parsed = parse_name(name)
        assert name_id(name) == (verdict, None if parsed is None else parsed.id)
