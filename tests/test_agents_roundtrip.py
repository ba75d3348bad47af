"""`wisp agents setup` then `remove` is a round trip (wisp.agents.setup, wisp.agents.jsonsplice):
the person's file comes back byte for byte, their layout is kept, backups stay out of the
harnesses' folders. Real files in a scratch home, the real `wisp` command.

Every run of `wisp agents setup|remove` here goes through :func:`agents` alone, so that the
program it runs can be pointed elsewhere (an install out of the clone's tree) in one place.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wisp.agents import jsonsplice, setup, setuprecord


def agents(*args: str) -> tuple[int, str, str]:
    """`wisp agents ARGS…` run as the person runs it (the `wisp` on PATH: the run's
    out-of-tree install, which setup does not refuse): exit status, stdout, stderr."""
    done = subprocess.run(
        ["wisp", "agents", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out_of_tree_wisp: Path) -> Path:
    """A scratch user home (HOME), with $WISP_HOME under it, no harness on PATH and the
    run's out-of-tree `wisp` first on it."""
    user = tmp_path / "u"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("WISP_HOME", str(user / ".wisp"))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", f"{out_of_tree_wisp.parent}:/usr/bin:/bin")
    return user


def _ok(*args: str) -> str:
    code, out, err = agents(*args)
    assert code == 0, (args, out, err)
    return out


def _wisp_home() -> Path:
    return Path(os.environ["WISP_HOME"])


# --- the splice helper ---------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "hooks", "sandbox", "deny", "é", 'q"'])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=5)


def _lay(value: Any, rnd: random.Random, depth: int = 0) -> str:
    """*value* as JSON text in a layout of chance: each object on one line or many, with its
    own indentation step and spacing."""
    if isinstance(value, dict) and value:
        colon = rnd.choice([":", ": ", " : "])
        if rnd.random() < 0.5:
            comma = rnd.choice([",", ", ", " ,  "])
            inner = comma.join(
                json.dumps(k) + colon + _lay(v, rnd, depth + 1) for k, v in value.items()
            )
            return "{" + rnd.choice(["", " "]) + inner + rnd.choice(["", " "]) + "}"
        unit = rnd.choice(["  ", "    ", "\t", " "])
        pad = unit * (depth + 1)
        inner = (",\n" + pad).join(
            json.dumps(k) + colon + _lay(v, rnd, depth + 1) for k, v in value.items()
        )
        return "{\n" + pad + inner + "\n" + unit * depth + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_lay(v, rnd, depth + 1) for v in value) + "]"
    return json.dumps(value)


def _changed(value: dict[str, Any], rnd: random.Random, fresh: list[Any]) -> dict[str, Any]:
    """*value* with members of chance changed, taken out, added, and objects changed within."""
    out: dict[str, Any] = {}
    for key, v in value.items():
        roll = rnd.random()
        if roll < 0.15:
            continue
        if roll < 0.3 and fresh:
            out[key] = fresh.pop()
        elif isinstance(v, dict) and roll < 0.7:
            out[key] = _changed(v, rnd, fresh)
        else:
            out[key] = v
    for key in rnd.sample(["a", "new", "z", "hooks"], rnd.randrange(3)):
        if key not in out and fresh:
            out[key] = fresh.pop()
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _kept_bytes(old_text: str, old: Any, new_text: str, new: Any) -> None:
    """Every member of the old text whose value is unchanged is in the new text byte for byte;
    and so, recursively, in every object that changed within."""
    before = {m.key: m for m in jsonsplice.root(old_text).members}
    after = {m.key: m for m in jsonsplice.root(new_text).members}
    _kept_members(old_text, before, old, new_text, after, new)


def _kept_members(
    old_text: str,
    before: dict[str, Any],
    old: dict[str, Any],
    new_text: str,
    after: dict[str, Any],
    new: dict[str, Any],
) -> None:
    for key, m in before.items():
        if key not in new:
            continue
        n = after[key]
        if jsonsplice.same(old[key], new[key]):
            assert new_text[n.start : n.value_end] == old_text[m.start : m.value_end]
        elif m.node is not None and n.node is not None:
            _kept_members(
                old_text,
                {x.key: x for x in m.node.members},
                old[key],
                new_text,
                {x.key: x for x in n.node.members},
                new[key],
            )


class TestSplice:
    @given(OBJECTS, st.randoms(use_true_random=False), st.lists(VALUES, max_size=8))
    def test_the_result_holds_the_new_data_and_keeps_every_other_byte(
        self, old: dict[str, Any], rnd: random.Random, fresh: list[Any]
    ) -> None:
        """For any object in any layout and any change to it: the spliced text parses to
        exactly the new data; every member whose value did not change, at any depth, is there
        byte for byte; what lies around the object stays."""
        text = " \n" + _lay(old, rnd) + "\n"
        new = _changed(old, rnd, fresh)
        out = jsonsplice.splice(text, new)
        assert _canonical(json.loads(out)) == _canonical(new)
        _kept_bytes(text, old, out, new)
        assert out.startswith(" \n") and out.endswith("\n")

    @given(OBJECTS, st.randoms(use_true_random=False))
    def test_no_change_is_the_same_text(self, old: dict[str, Any], rnd: random.Random) -> None:
        """The same data: the text comes back as it was, byte for byte."""
        text = _lay(old, rnd)
        assert jsonsplice.splice(text, json.loads(text)) == text

    def test_a_new_member_follows_the_objects_own_layout(self) -> None:
        """Control first: the unchanged members stay on their lines. A member added to a
        four-space object is indented four spaces; a one-line object stays one line."""
        text = '{\n    "model": "opus",\n    "permissions": {"deny": ["X"]}\n}\n'
        new = {"model": "opus", "permissions": {"deny": ["X", "Y"]}, "sandbox": {"on": True}}
        out = jsonsplice.splice(text, new)
        assert out == (
            '{\n    "model": "opus",\n    "permissions": {"deny": ["X", "Y"]},\n'
            '    "sandbox": {\n        "on": true\n    }\n}\n'
        )

    def test_a_duplicated_key_keeps_its_first_and_edits_its_last(self) -> None:
        """JSON reads a duplicated key's last value: that one is edited; the first stays as it
        was (an unchanged file is never tidied)."""
        text = '{"a": 1, "b": 2, "a": 3}'
        assert jsonsplice.splice(text, {"a": 4, "b": 2}) == '{"a": 1, "b": 2, "a": 4}'
        assert jsonsplice.splice(text, {"b": 2}) == '{"b": 2}'

    def test_true_is_not_one(self) -> None:
        """`1` set to `true` is a change, though Python's `1 == True`."""
        assert jsonsplice.splice('{"a": 1}', {"a": True}) == '{"a": true}'


# --- setup then remove ---------------------------------------------------------------------

# The person's own files, each in a layout of their own (four spaces, one-line objects, a
# comment in TOML), none ending as setup would lay it out.
CLAUDE_MINE = (
    '{\n    "model": "opus", "env": {"A": "1"},\n    "permissions": {"deny": ["Read(./.env)"]},'
    '\n    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
    '"command": "/usr/bin/audit"}]}]}\n}'
)
GEMINI_MINE = '{"theme": "Dracula",\n "hooks": {}}\n'
CURSOR_MINE = '{ "version": 1, "hooks": { "beforeShellExecution": [ { "command": "./a.sh" } ] } }\n'
CODEX_MINE = '# mine\nmodel = "o3"   # the model\n\n[tui]\ntheme = "dark"\n'
FILES = {
    "claude-code": (".claude/settings.json", CLAUDE_MINE),
    "gemini": (".gemini/settings.json", GEMINI_MINE),
    "cursor": (".cursor/hooks.json", CURSOR_MINE),
    "codex": (".codex/config.toml", CODEX_MINE),
}
MADE = {  # the harnesses whose file setup makes whole, and the folder it made for it
    "copilot": (".copilot/hooks/wisp.json", ".copilot"),
    "opencode": (".config/opencode/plugin/wisp.js", ".config"),
    "gemini": (".gemini/settings.json", ".gemini"),
    "cursor": (".cursor/hooks.json", ".cursor"),
    "claude-code": (".claude/settings.json", ".claude"),
}


class TestRoundTrip:
    @pytest.mark.parametrize("harness", sorted(FILES))
    def test_the_persons_file_comes_back_byte_for_byte(self, home: Path, harness: str) -> None:
        """Control first: setup changes the person's file. Then remove, with nobody else
        having written it meanwhile, puts it back byte for byte: the sandbox switches setup
        turned on, its `sandbox_mode`, its deny rules, its hooks, all gone."""
        name, mine = FILES[harness]
        path = home / name
        path.parent.mkdir(parents=True)
        path.write_text(mine)
        _ok("setup", harness)
        assert path.read_text() != mine
        _ok("remove", harness)
        assert path.read_text() == mine

    @pytest.mark.parametrize("harness", sorted(MADE))
    def test_a_file_setup_made_goes_with_its_folders(self, home: Path, harness: str) -> None:
        """No file and no folder before setup: it makes both; remove deletes the file and the
        folders it made (no `{}` left in ~/.gemini/settings.json, no hooks.json stub)."""
        name, folder = MADE[harness]
        _ok("setup", harness)
        assert (home / name).is_file()
        _ok("remove", harness)
        assert not (home / folder).exists()
        assert sorted(p.name for p in home.iterdir()) == [".wisp"]

    def test_a_folder_holding_something_else_stays(self, home: Path) -> None:
        """A folder setup made that holds someone else's file by the time of remove stays,
        with that file; wisp's own file goes."""
        _ok("setup", "copilot")
        theirs = home / ".copilot" / "hooks" / "audit.json"
        theirs.write_text("{}")
        _ok("remove", "copilot")
        assert not (home / ".copilot" / "hooks" / "wisp.json").exists()
        assert theirs.read_text() == "{}"

    def test_the_persons_sandbox_switches_stay_and_their_edits_too(self, home: Path) -> None:
        """The person had the sandbox on (and `failIfUnavailable`) and changed the file after
        setup: remove takes out what setup added (its other switches, its deny rules, its
        hooks), and leaves their switches and their edit."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        mine = {"model": "opus", "sandbox": {"enabled": True, "failIfUnavailable": True}}
        path.write_text(json.dumps(mine))
        _ok("setup", "claude-code")
        set_up = json.loads(path.read_text())
        assert set_up["sandbox"]["allowUnsandboxedCommands"] is False  # control: setup's
        path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
        _ok("remove", "claude-code")
        assert json.loads(path.read_text()) == {
            "model": "sonnet",
            "sandbox": {"enabled": True, "failIfUnavailable": True},
        }

    def test_a_switch_setup_turned_on_is_turned_off_again(self, home: Path) -> None:
        """`sandbox.enabled: false` was the person's: setup turns it on; remove, the file
        changed meanwhile, turns it off again (and keeps their change)."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        path.write_text('{"model": "opus", "sandbox": {"enabled": false}}')
        _ok("setup", "claude-code")
        assert json.loads(path.read_text())["sandbox"]["enabled"] is True
        path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
        _ok("remove", "claude-code")
        assert path.read_text() == '{"model": "sonnet", "sandbox": {"enabled": false}}'

    def test_codex_sandbox_mode_goes_and_the_persons_edit_stays(self, home: Path) -> None:
        """Codex: setup's `sandbox_mode` goes again on remove, though the person added a
        setting meanwhile; a `sandbox_mode` of theirs stays (control)."""
        path = home / ".codex" / "config.toml"
        path.parent.mkdir()
        path.write_text(CODEX_MINE)
        _ok("setup", "codex")
        assert tomllib.loads(path.read_text())["sandbox_mode"] == "workspace-write"
        path.write_text('approval_policy = "never"\n' + path.read_text())
        _ok("remove", "codex")
        assert path.read_text() == 'approval_policy = "never"\n' + CODEX_MINE
        path.write_text('sandbox_mode = "read-only"\n')
        _ok("setup", "codex")
        _ok("remove", "codex")
        assert path.read_text() == 'sandbox_mode = "read-only"\n'

    def test_an_empty_hooks_object_of_the_persons_stays(self, home: Path) -> None:
        """The person's own `"hooks": {}` stays when remove takes wisp's hook out of it (the
        file changed meanwhile); a `hooks` setup added goes (control: Cursor's file, made by
        setup, changed meanwhile, loses it)."""
        path = home / ".gemini" / "settings.json"
        path.parent.mkdir()
        path.write_text(GEMINI_MINE)
        _ok("setup", "gemini")
        path.write_text(path.read_text().replace("Dracula", "Light"))
        _ok("remove", "gemini")
        assert path.read_text() == GEMINI_MINE.replace("Dracula", "Light")
        cursor = home / ".cursor" / "hooks.json"
        cursor.parent.mkdir()
        cursor.write_text('{"theme": 1}')
        _ok("setup", "cursor")
        cursor.write_text(cursor.read_text().replace('"theme": 1', '"theme": 2'))
        _ok("remove", "cursor")
        assert json.loads(cursor.read_text()) == {"theme": 2}

    def test_two_setups_are_undone_as_one(self) -> None:
        """The changes of a second setup on top of the first (a key set again, an item added
        to a table the first made) undo to the person's settings before the first; their own
        setting added meanwhile stays."""
        mine: dict[str, Any] = {"sandbox": {"enabled": False}, "deny": ["X"]}
        first = {"sandbox": {"enabled": True, "fs": {"w": ["~/.wisp"]}}, "deny": ["X", "A"]}
        second = {
            "sandbox": {"enabled": "on", "fs": {"w": ["~/.wisp", "~/.w2"]}},
            "deny": ["X", "A", "B"],
        }
        changes = setuprecord.composed(
            setuprecord.changes_between(mine, first),
            setuprecord.changes_between(first, second),
        )
        data = json.loads(json.dumps(second))
        data["theirs"] = 1
        setuprecord.undo(data, changes)
        assert data == {**mine, "theirs": 1}

    def test_the_record_is_private(self, home: Path) -> None:
        """The record lies in $WISP_HOME/agents/records, 0600, in folders 0700."""
        _ok("setup", "gemini")
        record = setuprecord.record_path(_wisp_home(), home / ".gemini" / "settings.json")
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        for folder in (record.parent, record.parent.parent):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        _ok("remove", "gemini")
        assert not record.exists()


WISP_COMMAND = "/bin/sh /x/wisp/agents/hookguard.sh 2 '{}' -- /x/bin/wisp hook claude-code"
WISP_RULES = ["Edit(~/.wisp/**)", "Write(~/.wisp/**)"]
CLAUDE_BLOCK = {  # wisp's block for Claude Code, as setup merges it (its shape, fixed here)
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": WISP_COMMAND}]}
        ],
        "SessionEnd": [{"hooks": [{"type": "command", "command": WISP_COMMAND}]}],
    },
    "sandbox": {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {"denyWrite": ["~/.wisp", "./.claude"]},
    },
    "permissions": {"deny": WISP_RULES},
}
SWITCH = st.booleans() | st.text(max_size=2)
PERSONS = st.fixed_dictionaries(
    {},
    optional={
        "model": st.text(max_size=3),
        "sandbox": st.fixed_dictionaries(
            {},
            optional={
                "enabled": SWITCH,
                "failIfUnavailable": SWITCH,
                "allowUnsandboxedCommands": SWITCH,
                "excludedCommands": st.lists(st.text(max_size=2), max_size=2),
                "filesystem": st.fixed_dictionaries(
                    {},
                    optional={
                        "denyWrite": st.lists(
                            st.sampled_from(["~/.wisp", "/x", "./.claude"]), unique=True
                        )
                    },
                ),
            },
        ),
        "permissions": st.fixed_dictionaries(
            {},
            optional={
                "deny": st.lists(st.sampled_from([*WISP_RULES, "X", "Y"]), unique=True),
                "allow": st.lists(st.sampled_from(["Bash(ls:*)"]), max_size=1),
            },
        ),
        "hooks": st.fixed_dictionaries(
            {},
            optional={
                event: st.lists(
                    st.just({"hooks": [{"type": "command", "command": "/usr/bin/audit"}]}),
                    min_size=1,
                    max_size=2,
                )
                for event in ("PreToolUse", "Stop")
            },
        ),
    },
)


class TestTakeOut:
    @given(PERSONS, st.booleans())
    def test_what_setup_added_comes_out_and_nothing_else(
        self, mine: dict[str, Any], theirs: bool
    ) -> None:
        """For any settings of the person's (their own sandbox switches, deny rules, hooks,
        some the same as wisp's): wisp's block merged in, then taken out by what setup
        recorded, gives their settings back, and a setting they added meanwhile stays."""
        t = setup.target("claude-code")
        merged = setup.merged(mine, t, CLAUDE_BLOCK)
        changes = setuprecord.changes_between(mine, merged, skip=("hooks",))
        if "hooks" not in mine:
            changes.insert(
                0, setuprecord.Change(kind=setuprecord.ChangeKind.SET, at=("hooks",), value={})
            )
        if theirs:
            merged["theirs"] = 1
        out = setup.unmerged(merged, t, CLAUDE_BLOCK, tuple(changes))
        assert _canonical(out) == _canonical({**mine, **({"theirs": 1} if theirs else {})})


class TestDamagedRecord:
    @pytest.mark.parametrize(
        "damage",
        [
            "{not json",
            json.dumps({"version": 1, "path": "/elsewhere/settings.json"}),
            "",
        ],
    )
    def test_remove_never_deletes_the_persons_settings(self, home: Path, damage: str) -> None:
        """A record that does not hold (cut short, another file's, empty): remove takes out
        wisp's hooks and deny rules alone, keeps every setting of the person's, and says the
        record was not used."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"model": "opus", "permissions": {"deny": ["X"]}}))
        _ok("setup", "claude-code")
        path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
        setuprecord.record_path(_wisp_home(), path).write_text(damage)
        out = _ok("remove", "claude-code")
        data = json.loads(path.read_text())
        assert data["model"] == "sonnet" and data["permissions"]["deny"] == ["X"]
        assert "hooks" not in data
        assert "does not hold" in out and "look them over" in out

    def test_a_record_naming_a_folder_elsewhere_is_not_used(
        self, home: Path, tmp_path: Path
    ) -> None:
        """A record whose folders do not hold the config file is not used: remove leaves that
        empty folder alone, says so, and still takes wisp's hook out (control: the file setup
        made goes)."""
        _ok("setup", "gemini")
        path = home / ".gemini" / "settings.json"
        elsewhere = tmp_path / "empty"
        elsewhere.mkdir()
        where = setuprecord.record_path(_wisp_home(), path)
        record = json.loads(where.read_text())
        where.write_text(json.dumps({**record, "made_dirs": [str(elsewhere)]}))
        out = _ok("remove", "gemini")
        assert "does not hold" in out and "folders that do not hold the file" in out
        assert elsewhere.is_dir()
        assert "hooks" not in json.loads(path.read_text())

    def test_a_file_forged_to_look_unchanged_is_still_not_deleted(self, home: Path) -> None:
        """A record claiming setup made a file that the person had: unless the file is still
        exactly what setup wrote, remove deletes nothing (the person changed it)."""
        path = home / ".gemini" / "settings.json"
        path.parent.mkdir()
        path.write_text('{"theme": "Dracula"}')
        _ok("setup", "gemini")
        where = setuprecord.record_path(_wisp_home(), path)
        record = json.loads(where.read_text())
        where.write_text(json.dumps({**record, "existed": False}))
        path.write_text(path.read_text().replace("Dracula", "Light"))
        _ok("remove", "gemini")
        assert json.loads(path.read_text()) == {"theme": "Light"}


class TestLayout:
    def test_setup_changes_only_the_lines_it_must(self, home: Path) -> None:
        """The person's one-line `env` object and their `model` line are not in the diff, and
        stay as they were in the file; the lines setup must change are."""
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        path.write_text(CLAUDE_MINE)
        out = _ok("setup", "claude-code")
        changed = [
            line for line in out.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")
        ]
        assert changed  # control: setup did change lines
        assert not [line for line in changed if '"env"' in line or '"A"' in line]
        assert '    "model": "opus", "env": {"A": "1"},\n' in path.read_text()


class TestBackups:
    def test_backups_stay_out_of_the_harness_folder_a_few_a_file(self, home: Path) -> None:
        """Copilot loads every file in ~/.copilot/hooks: after many setups and removes it only
        ever holds wisp.json; the backups lie under $WISP_HOME/agents/backups, 0600, the newest
        three alone."""
        path = home / ".copilot" / "hooks" / "wisp.json"
        (home / ".copilot" / "hooks").mkdir(parents=True)
        for _ in range(3):
            _ok("setup", "copilot")
            assert [p.name for p in path.parent.iterdir()] == ["wisp.json"]
            _ok("remove", "copilot")
            assert list(path.parent.iterdir()) == []
        path.write_text("{}")  # a file of setup's own shape, the person's: backed up each time
        for _ in range(2):
            _ok("setup", "copilot")
            _ok("remove", "copilot")
        kept = setuprecord.backups_of(_wisp_home(), path)
        assert len(kept) == setuprecord.BACKUPS_PER_FILE
        assert all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in kept)
        assert [p.name for p in path.parent.iterdir()] == ["wisp.json"]


# --- small items ---------------------------------------------------------------------------


class TestSmallItems:
    def test_an_unknown_harness_is_a_usage_error(self, home: Path) -> None:
        """`wisp agents setup nosuch` exits 2 (a usage error, docs/cli.md), naming the
        harnesses it sets up; a known one exits 0 (control)."""
        code, _, err = agents("setup", "nosuch")
        assert code == 2 and "claude-code" in err
        assert agents("setup", "gemini")[0] == 0

    def test_opencode_setup_says_it_is_unprotected(self, home: Path) -> None:
        """Setup for OpenCode says, as for Gemini CLI (control), that nothing keeps its
        commands out of $WISP_HOME."""
        assert "note: unprotected" in _ok("setup", "gemini")
        assert "note: unprotected" in _ok("setup", "opencode")

    def test_the_session_end_guard_answers_in_session_ends_form(self, home: Path) -> None:
        """The guard of each hook setup writes, its wisp killed before answering: for
        PreToolUse (control) a PreToolUse deny, exit 2; for SessionEnd, which has nothing to
        deny, nothing (`{}`), exit 0."""
        _ok("setup", "claude-code")
        hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
        answers = {}
        for event in ("PreToolUse", "SessionEnd"):
            argv = shlex.split(hooks[event][0]["hooks"][0]["command"])
            guard = argv[: argv.index("--") + 1]
            done = subprocess.run(
                [*guard, "/bin/sh", "-c", "kill -KILL $$"],
                input="{}",
                capture_output=True,
                text=True,
                timeout=30,
            )
            answers[event] = (done.returncode, json.loads(done.stdout))
        code, said = answers["PreToolUse"]
        assert code == 2 and said["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert answers["SessionEnd"] == (0, {})

    def test_claude_config_dir_is_the_file_protected(
        self, home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With CLAUDE_CONFIG_DIR set, the settings file setup writes is the one its deny rules
        and denyWrite name (spelled `~/…`), not ~/.claude/settings.json; without it (control),
        ~/.claude/settings.json."""
        _ok("setup", "claude-code")
        plain = json.loads((home / ".claude" / "settings.json").read_text())
        assert "Write(~/.claude/settings.json)" in plain["permissions"]["deny"]
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "cc"))
        _ok("setup", "claude-code")
        data = json.loads((home / "cc" / "settings.json").read_text())
        assert "Write(~/cc/settings.json)" in data["permissions"]["deny"]
        assert "~/cc/settings.json" in data["sandbox"]["filesystem"]["denyWrite"]
        assert not [r for r in data["permissions"]["deny"] if "~/.claude/settings" in r]


# A stand-in for `codex` (its `app-server`'s `hooks/list`), whose hash of a hook differs in
# setup's scratch home from the real one: a Codex setup's first trust does not satisfy.
FAKE_CODEX = """#!{python}
import json, os, sys, tomllib
if sys.argv[1:] == ["--version"]:
    print("codex-cli 0.171.0")
    sys.exit(0)
home = os.environ["CODEX_HOME"]
config = os.path.join(home, "config.toml")
data = tomllib.load(open(config, "rb")) if os.path.exists(config) else {{}}
current = "sha256:" + ("scratch" if "wisp-codex-" in home else "real")
for line in sys.stdin:
    message = json.loads(line)
    if message.get("id") == 1:
        print(json.dumps({{"id": 1, "result": {{}}}}), flush=True)
    if message.get("id") != 2:
        continue
    hooks, state = [], data.get("hooks", {{}}).get("state", {{}})
    for g, group in enumerate(data.get("hooks", {{}}).get("PreToolUse", [])):
        for h, hook in enumerate(group.get("hooks", [])):
            key = f"{{config}}:pre_tool_use:{{g}}:{{h}}"
            have = state.get(key, {{}}).get("trusted_hash")
            status = "trusted" if have == current else "modified" if have else "untrusted"
            hooks.append({{"key": key, "source": "user", "command": hook["command"],
                          "currentHash": current, "trustStatus": status}})
    print(json.dumps({{"id": 2, "result": {{"data": [{{"hooks": hooks}}]}}}}), flush=True)
    break
"""


class TestCodexTrust:
    def test_a_second_run_trusts_a_hook_codex_still_does_not(
        self, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Codex says wisp's hook is not trusted after the first setup: the second run does
        not say "nothing to change" but writes Codex's own hash under Codex's own key, and
        says so; a third run has nothing left to do (control)."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        fake = bin_dir / "codex"
        fake.write_text(FAKE_CODEX.format(python=sys.executable))
        fake.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
        path = home / ".codex" / "config.toml"
        _ok("setup", "codex")
        out = _ok("setup", "codex")
        assert "nothing to change" not in out and "not trust" in out
        state = tomllib.loads(path.read_text())["hooks"]["state"]
        assert state[f"{path}:pre_tool_use:0:0"] == {"trusted_hash": "sha256:real"}
        assert "nothing to change" in _ok("setup", "codex")
