"""`wisp pending --json` writes each request's text directly (wisp._render.status_json_text):
it must be the text json.dumps makes of status_json, for any record, character for character."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st
from strategies import groups

from pending import (
    CommandBinding,
    FactBinding,
    Kind,
    Request,
    Server,
    State,
    Status,
    derive_status,
    format_time,
)
from wisp._render import _time_text, status_json, status_json_text

NOW = datetime(2050, 1, 1, tzinfo=UTC)


def dumped(status: Status) -> str:
    return json.dumps(status_json(status), ensure_ascii=False)


@st.composite
def statuses(draw: st.DrawFn) -> Status:
    """Every state a group can derive to, its records with and without unknown keys (the
    common case is without: that is the one written out)."""
    group = draw(groups().filter(lambda g: g.request is not None))
    request = group.request
    assert request is not None
    if draw(st.booleans()):
        request = request._replace(
            extra={},
            server=request.server._replace(extra={}),
            binding=request.binding._replace(extra={}),
        )
        group = group._replace(request=request)
    status = derive_status(group, now=NOW, server_alive=draw(st.booleans()))
    assert status is not None
    return status


@given(statuses())
def test_the_same_text_as_json_dumps(status: Status) -> None:
    assert status_json_text(status) == dumped(status)


def _status(**binding_fields: object) -> Status:
    binding = CommandBinding(command="make deploy", cwd="/srv", **binding_fields)  # type: ignore[arg-type]
    request = Request(
        id="0123456789abcdef",
        kind=Kind.COMMAND,
        filed_at=datetime(2026, 12, 2, 13, 28, 8, 608000, tzinfo=UTC),
        expires_at=None,
        server=Server(id="fedcba9876543210", pid=4242, client="bench", entry_point="approvals"),
        title="wisp: run a command?",
        body="make deploy",
        binding=binding,
        binding_digest="0" * 64,
    )
    return Status(
        id=request.id, kind=request.kind, state=State.FILED, request=request, server_alive=True
    )


def test_what_a_terminal_or_json_must_not_take_raw_is_escaped_as_json_dumps_does() -> None:
    # Quotes, backslashes, C0 controls (JSON escapes them); DEL, C1, bidi and line separators
    # are raw here, as json.dumps leaves them: the CLI's last step escapes those.
    status = _status(thread='"\\\n\t\x00\x7f\x85\u202e\u2028é☃\U0001f600', reason=None)
    assert status_json_text(status) == dumped(status)


def test_a_fact_binding_and_a_server_with_unknown_keys() -> None:
    status = _status()
    fact = FactBinding(
        fact_id="f1", subject="release", name="codename", value='"x"', source="s", proposed_by="p"
    )
    request = status.request._replace(
        kind=Kind.FACT,
        binding=fact,
        server=status.request.server._replace(extra={"xnew": [1, 2.5, None]}),
    )
    for alive in (True, False, None):
        status = status._replace(kind=Kind.FACT, request=request, server_alive=alive)
        assert status_json_text(status) == dumped(status)


def test_a_field_not_of_its_type_is_encoded_as_json_dumps_encodes_it() -> None:
    status = _status()
    odd = status._replace(request=status.request._replace(title=7))  # type: ignore[arg-type]
    assert status_json_text(odd) == dumped(odd)


command_options = st.dictionaries(
    st.text(max_size=8),
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.lists(st.integers()),
    max_size=3,
)


class TestACommandsOptions:
    def test_a_shell_calls_options_are_written(self) -> None:
        """A command filed with a shell call's options (Claude Code's `timeout`, its sandbox
        turned off) lists them in `--json` as `status_json` holds them: they are part of what
        the person is shown and of what a grant covers."""
        status = _status(options={"timeout": 120000, "dangerouslyDisableSandbox": True})
        text = status_json_text(status)
        assert text == dumped(status)
        assert json.loads(text)["binding"]["options"] == {
            "timeout": 120000,
            "dangerouslyDisableSandbox": True,
        }

    @given(command_options, st.none() | st.text(max_size=8))
    def test_any_options_are_written_as_json_dumps_writes_them(
        self, options: dict[str, object], thread: str | None
    ) -> None:
        """Any options object, beside any thread: the same text as json.dumps."""
        status = _status(options=options, thread=thread)
        assert status_json_text(status) == dumped(status)


# Any aware time a record could hold: any year datetime takes, any zone (records write UTC).
any_times = st.datetimes(
    min_value=datetime(1, 1, 2),  # a day apart from the ends: any zone's offset stays in range
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7)), timezone(timedelta(0), "Z")]),
)


class TestATimesText:
    @given(any_times)
    def test_the_same_text_as_format_time(self, moment: datetime) -> None:
        """A time's JSON text, written from tables for a UTC time, is ``format_time``'s,
        encoded: `"YYYY-MM-DDTHH:MM:SS.mmmZ"`, milliseconds cut, for any time and zone."""
        assert _time_text(moment) == json.dumps(format_time(moment))

    def test_many_days_in_one_listing(self) -> None:
        """More days than the table keeps: each time still written right."""
        for day in range(400):
            moment = datetime(2026, 1, 1, 23, 59, 59, 999999, tzinfo=UTC) + timedelta(days=day)
            assert _time_text(moment) == json.dumps(format_time(moment))


class TestTheServerWrittenLast:
    def test_one_server_alive_then_not(self) -> None:
        """The same server record, alive, then stopped, then not checked: each request says
        what its own status holds, not what the one before it said."""
        status = _status()
        for alive in (True, False, None, True):
            step = status._replace(server_alive=alive)
            assert status_json_text(step) == dumped(step)
            assert json.loads(status_json_text(step))["server"]["alive"] is alive

    def test_a_server_equal_but_another_record(self) -> None:
        """Another record of a server with other values, after the last one written: its own
        values."""
        status = _status()
        assert status_json_text(status) == dumped(status)
        other = status._replace(
            request=status.request._replace(server=status.request.server._replace(pid=777))
        )
        assert status_json_text(other) == dumped(other)
        assert json.loads(status_json_text(other))["server"]["pid"] == 777
