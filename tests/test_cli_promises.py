"""What the `wisp` command promises at its edges: JSON no terminal is fooled by, a closed pipe
is no error, a resource limit is said as one, a signal withdraws as Ctrl-C does, and a bad
option is answered in wisp's words. Each in a real process."""

from __future__ import annotations

import json

from helpers import command, run_wisp

from pending import Channel, ServerLock

# A command that hides a C1 control, a right-to-left override, an isolate and a line separator.
TRICKY = "make \x85test\u202e\u2066x\u2028y\x7f"


class TestJsonEscapes:
    def test_no_c1_bidi_or_separator_reaches_stdout_raw(
        self, channel: Channel, server: ServerLock
    ) -> None:
        """`wisp pending --json` writes C1 controls, bidi characters and U+2028 as \\u
        escapes: the bytes on stdout carry none of them, and the JSON still says them."""
        request = command(server, text=TRICKY)
        channel.file(request)
        result = run_wisp("pending", "--json")
        assert result.returncode == 0, result.stderr
        for char in "\x85\u202e\u2066\u2028\x7f":
            assert char not in result.stdout
        assert "\\u0085" in result.stdout and "\\u202e" in result.stdout
        (listed,) = json.loads(result.stdout)
        assert TRICKY in json.dumps(listed, ensure_ascii=False)
