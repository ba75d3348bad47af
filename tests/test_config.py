"""Settings from config.json: defaults, nested keys, types checked, clear errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import run_wisp

from wisp.stores.config import SETTINGS, ConfigError, load_config


def write(home: Path, tree: object) -> None:
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.json").write_text(json.dumps(tree))
    os.chmod(home / "config.json", 0o600)


class TestConfig:
    def test_defaults_without_a_file(self, home: Path) -> None:
        """No file: every setting has its default."""
        config = load_config(home)
        assert config["approval.timeoutSeconds"] == 600
        assert all(config[key] == s.default for key, s in SETTINGS.items())

    def test_nested_keys(self, home: Path) -> None:
        """`approval.timeoutSeconds` is `{"approval": {"timeoutSeconds": …}}`."""
        write(home, {"approval": {"timeoutSeconds": 0}, "unknown": {"kept": True}})
        assert load_config(home)["approval.timeoutSeconds"] == 0

    @pytest.mark.parametrize("value", [-1, "600", 1.5, True, None])
    def test_wrong_types_are_refused(self, home: Path, value: object) -> None:
        """A value of the wrong type names the file, the key, and the default."""
        if value is None:
            write(home, {"approval": {"timeoutSeconds": None}})
            assert load_config(home)["approval.timeoutSeconds"] == 600
            return
        write(home, {"approval": {"timeoutSeconds": value}})
        with pytest.raises(ConfigError, match=r"approval.timeoutSeconds .* whole seconds"):
            load_config(home)

    def test_broken_json_is_a_clear_error(self, home: Path) -> None:
        """An unparsable file is refused with how to fix it; a command exits 2."""
        home.mkdir(mode=0o700)
        (home / "config.json").write_text("{nope")
        with pytest.raises(ConfigError, match="Fix or remove it"):
            load_config(home)
        out = run_wisp("approvals", "request", "--", "ls")
        assert out.returncode == 2 and "config.json" in out.stderr

    def test_the_timeout_setting_is_used(self, home: Path) -> None:
        """`wisp approvals request` waits approval.timeoutSeconds when not told otherwise."""
        write(home, {"approval": {"timeoutSeconds": 1}})
        out = run_wisp("approvals", "request", "--", "ls")
        assert out.returncode == 124 and "waiting up to 1 s" in out.stderr

    def test_push_settings(self, home: Path) -> None:
        """`notifications.push` takes Apprise URLs (text, or a list) and defaults to none;
        `notifications.pushWhen` takes `always` (the default) or `unseen`."""
        assert load_config(home)["notifications.push"] == []
        assert load_config(home)["notifications.pushWhen"] == "always"
        write(home, {"notifications": {"push": ["ntfy://a", "json://h:1/x"], "pushWhen": "unseen"}})
        config = load_config(home)
        assert (config["notifications.push"], config["notifications.pushWhen"]) == (
            ["ntfy://a", "json://h:1/x"],
            "unseen",
        )
        for bad in ({"push": "no scheme"}, {"push": [1]}, {"pushWhen": "sometimes"}):
            write(home, {"notifications": bad})
            with pytest.raises(ConfigError, match=r"notifications\.push"):
                load_config(home)
