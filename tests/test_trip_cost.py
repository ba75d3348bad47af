"""What a round trip's asker and answerer redo for each request, and must not (issue 41):
the audit log's directory opened again by name, the home opened when there is no grants file,
records encoded by json's pure-Python indenting encoder. Each cut keeps what it checks: the
log at its name and the kept directory each time, the home whenever a grants file is there,
the records' bytes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pending._json import dumps_record
from wisp.audit.writer import AuditLogUnsafe, _line, audit, audit_path, check_log
from wisp.stores import grants as grants_module
from wisp.stores.grants import GrantStore


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[object]:
    calls: list[object] = []
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


class TestCheckLogThroughTheKeptDirectory:
    def test_a_process_that_has_audited_opens_nothing_to_check(
        self, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Once this process has written a record (its logs directory kept), check_log opens
        no file or directory: before, it opened the logs directory by name every time."""
        assert audit(home, "test.line", {}, entry_point="test")
        opened = _counting(monkeypatch, os, "open")
        check_log(home)
        check_log(home)
        assert opened == []

    def test_a_fifo_put_at_the_log_is_still_refused(self, home: Path) -> None:
        """The log at its name is looked at each time: a FIFO put there after records were
        written is refused before anything is filed."""
        assert audit(home, "test.line", {}, entry_point="test")
        path = audit_path(home)
        path.unlink()
        os.mkfifo(path, 0o600)
        with pytest.raises(AuditLogUnsafe, match="FIFO"):
            check_log(home)

    def test_a_hard_link_made_to_the_log_is_still_refused(self, home: Path) -> None:
        """A second link to the log, made after it was kept, is refused (records would
        reach the other name)."""
        assert audit(home, "test.line", {}, entry_point="test")
        os.link(audit_path(home), home / "elsewhere")
        with pytest.raises(AuditLogUnsafe, match="hard links"):
            check_log(home)

    def test_the_kept_directory_made_writable_by_others_is_still_refused(self, home: Path) -> None:
        """The kept directory's own mode is checked each time: made writable by others
        after the first record, the next check refuses it, naming it and its fix."""
        assert audit(home, "test.line", {}, entry_point="test")
        (home / "logs").chmod(0o777)
        with pytest.raises(AuditLogUnsafe, match="refusing to use"):
            check_log(home)

    def test_a_removed_and_remade_directory_is_checked_afresh(
        self, home: Path, tmp_path: Path
    ) -> None:
        """The kept directory removed and a symlink put in its place: the check looks at
        what is there now, and refuses it."""
        assert audit(home, "test.line", {}, entry_point="test")
        logs = home / "logs"
        audit_path(home).unlink()
        logs.rmdir()
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        logs.symlink_to(elsewhere)
        with pytest.raises(AuditLogUnsafe, match="refusing to use"):
            check_log(home)


class TestNoGrantsFile:
    def test_a_lookup_with_no_grants_file_does_not_open_the_home(
        self, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With no grants.json there is no command grant to trust: a gate's second lookup
        opens nothing (before, it opened and checked the home every request)."""
        home.mkdir(mode=0o700)
        store = GrantStore(home)
        assert store.covering("ls", str(home)) is None
        opened = _counting(monkeypatch, grants_module, "open_private_dir")
        assert store.covering("ls", str(home)) is None
        assert opened == []

    def test_a_grants_file_made_later_is_read_and_its_home_checked(
        self, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The first grant made after a lookup found none is read at the next lookup, and an
        unchanged file's home is checked at each lookup after that."""
        home.mkdir(mode=0o700)
        store = GrantStore(home)
        assert store.covering("ls", str(home)) is None
        GrantStore(home).add(scope="always", command="ls", cwd=str(home), request="r", user="u")
        assert store.covering("ls", str(home)) is not None
        opened = _counting(monkeypatch, grants_module, "open_private_dir")
        assert store.covering("ls", str(home)) is not None
        assert len(opened) == 1


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


class TestRecordEncoding:
    @given(st.dictionaries(st.text(max_size=8), _JSON, max_size=6))
    def test_the_same_bytes_as_json_indented(self, value: dict[str, Any]) -> None:
        """Any record of JSON values (text beyond ASCII, control characters, infinities
        left to json, empty objects and arrays, nesting) is written exactly as
        json.dumps(indent=2, ensure_ascii=False) writes it, or refused as it refuses it."""
        try:
            expected = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        except ValueError:
            with pytest.raises(ValueError):
                dumps_record(value)
            return
        assert dumps_record(value) == expected.encode()

    def test_what_json_would_refuse_is_refused(self) -> None:
        """A value json cannot write (an object, a key that is not text) raises as json does."""
        with pytest.raises(TypeError):
            dumps_record({"a": object()})
        assert (
            dumps_record({"a": {1: "x"}})
            == (json.dumps({"a": {1: "x"}}, indent=2, ensure_ascii=False) + "\n").encode()
        )


class TestAuditLineEncoding:
    @given(st.dictionaries(st.text(max_size=8), _JSON | st.floats(), max_size=6))
    def test_the_same_line_as_json_compact(self, value: dict[str, Any]) -> None:
        """Every record is written as json.dumps(ensure_ascii=False, separators=(",", ":"))
        wrote it (text beyond ASCII as it is, non-finite floats as json writes them)."""
        assert _line(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def test_a_cycle_is_refused_as_json_refuses_it(self) -> None:
        """A record holding itself raises json's ValueError, not a recursion error."""
        record: dict[str, Any] = {}
        record["self"] = record
        with pytest.raises(ValueError, match="Circular"):
            _line(record)
