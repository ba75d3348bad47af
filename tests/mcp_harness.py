"""Driving `wisp mcp` over the wire: the SDK's own client against a real server process.

Nothing here waits by sleeping: a test waits for a condition (a notification received, a file
written) within a bounded deadline.

Servers start warm unless a test asks for a cold one (``cold=True``): a `wisp mcp` process
spends ~1.3 s of CPU importing the MCP SDK before it reads a line (measured: `import
wisp.mcp._server, wisp.mcp._run` alone costs 1.2-1.5 s, nearly all of it the SDK's `mcp` and
`mcp_types`), which was most of the MCP tests' CPU. A warm server is forked by this worker's
zygote (:mod:`zygote`), which has the SDK imported already; the test starts a small launcher
in place of `python -m wisp mcp`. Each server is still a real, separate process with its own
stdio pipes, environment, cwd and session, its own pid in what it files
(tests signal that pid), and its exit status seen as the launcher's. Start-up itself is
tested cold: the refusals to start, one whole-protocol session, and the 40 MB line (whose
peak memory must be the server's own); their docstrings say so.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import zygote
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext

# Any single wait in these tests: a bound for a hang, not a measure of speed. A cold `wisp mcp`
# needs ~1.3 s of CPU before it answers `initialize` (the SDK's import, bench/README.md); at a
# load of 30 on 2 cores (a second suite beside this one) a process gets about a fifteenth of
# a core, so that start took ~20 s, and the 20 s this bound was failed the cold servers'
# tests (test_mcp_start.py, test_mcp_wire.py's 40 MB line) on a busy machine only. 60 s is
# three times that; BOUND_S * 3 stays under pytest's 300 s per test.
BOUND_S = 60.0

ElicitFn = Callable[[ClientRequestContext, types.ElicitRequestParams], Awaitable[Any]]


def recorder(tmp_path: Path) -> tuple[Path, Path]:
    """A bin directory whose `notify-send` records its argv (the desktop route's helper)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "notify-send.jsonl"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "notify-send"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(0o755)
    return bin_dir, log


def server_env(home: Path, bin_dir: Path, **extra: str) -> dict[str, str]:
    """The server's environment: its own WISP_HOME; a desktop session whose notify-send
    records (so routes are real); and Ghostty named as the terminal, which MCP must still
    never write to."""
    env = {**os.environ, "WISP_HOME": str(home)}
    env["PATH"] = f"{bin_dir}:{env.get('PATH', os.defpath)}"
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
    env["TERM_PROGRAM"] = "ghostty"
    env.pop("TMUX", None)
    env.update(extra)
    return env


class Inbox:
    """The server notifications a client received, with a way to wait for one."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = anyio.Event()

    async def handler(self, message: Any) -> None:
        self.items.append(message)
        self._changed.set()
        self._changed = anyio.Event()

    def updated(self) -> list[str]:
        return [
            m.params.uri for m in self.items if isinstance(m, types.ResourceUpdatedNotification)
        ]

    async def update_after(self, seen: int) -> None:
        """Wait for a resource update beyond the first *seen*."""
        await self.wait_for(lambda: len(self.updated()) > seen, "a resource update")

    async def wait_for(self, found: Callable[[], Any], what: str) -> Any:
        with anyio.fail_after(BOUND_S):
            while not (value := found()):
                await self._changed.wait()
        return value


class Wire:
    """One client session with a running `wisp mcp`."""

    def __init__(self, client: Client, inbox: Inbox, home: Path) -> None:
        self.client = client
        self.inbox = inbox
        self.home = home

    async def call(self, tool: str, **arguments: Any) -> types.CallToolResult:
        progress = arguments.pop("_progress", None)
        with anyio.fail_after(arguments.pop("_bound", BOUND_S * 3)):
            return await self.client.call_tool(tool, arguments, progress_callback=progress)

    async def data(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must succeed; its structured content."""
        result = await self.call(tool, **arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    async def read(self, uri: str) -> Any:
        with anyio.fail_after(BOUND_S):
            result = await self.client.read_resource(uri)
        content = result.contents[0]
        assert isinstance(content, types.TextResourceContents), content
        assert content.mime_type == "application/json"
        return json.loads(content.text)


ANSWER_ID = re.compile(
    r"wisp (?:approvals approve|tools approve|questions answer) ([0-9a-f]{8,32})"
)


class Call:
    """A tool call in flight: the request it filed (named by its first progress), the
    progress seen, and its result once it returns."""

    def __init__(self) -> None:
        self.id = ""
        self.progress: list[str | None] = []
        self.result: types.CallToolResult | None = None
        self.named = anyio.Event()
        self.done = anyio.Event()
        self.scope = anyio.CancelScope()

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(message)
        found = ANSWER_ID.search(message or "")
        if found and not self.id:
            self.id = found.group(1)
            self.named.set()

    async def returned(self) -> types.CallToolResult:
        with anyio.fail_after(BOUND_S):
            await self.done.wait()
        assert self.result is not None, "the call was cancelled"
        return self.result

    def cancel(self) -> None:
        """The client cancels the call (the SDK sends notifications/cancelled)."""
        self.scope.cancel()


@asynccontextmanager
async def in_flight(wire: Wire, tool: str, **arguments: Any) -> AsyncIterator[Call]:
    """Start a tool call that waits for the person; yields once it names its request."""
    call = Call()

    async def run() -> None:
        try:
            with call.scope:
                call.result = await wire.call(tool, _progress=call.on_progress, **arguments)
        finally:
            call.done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(BOUND_S):
            await call.named.wait()
        yield call
        with anyio.fail_after(BOUND_S * 3):
            await call.done.wait()


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@asynccontextmanager
async def wisp_mcp(
    home: Path,
    bin_dir: Path,
    *,
    elicit: ElicitFn | None = None,
    mode: str = "legacy",
    env: dict[str, str] | None = None,
    cold: bool = False,
) -> AsyncIterator[Wire]:
    """`wisp mcp` as a real subprocess, and the SDK's client talking to it over stdio.
    `mode="legacy"` is the initialize handshake most clients use today; `"auto"` lets the
    SDK settle on the 2026 protocol. Warm unless *cold* (the module's docstring says why)."""
    inbox = Inbox()
    command, *args = wisp_mcp_command(cold=cold)
    params = StdioServerParameters(
        command=command, args=args, env=server_env(home, bin_dir, **(env or {}))
    )
    client = Client(
        params,
        mode=mode,
        message_handler=inbox.handler,
        elicitation_callback=elicit,
        cache=None,
    )
    async with client:
        yield Wire(client, inbox, home)
    # Nothing but protocol on the server's stdout: a stray line reaches the client as an
    # exception in place of a message.
    assert not [m for m in inbox.items if isinstance(m, Exception)], inbox.items


def wisp_mcp_command(*, cold: bool = False) -> list[str]:
    """The argv of `python -m wisp mcp`: run as written if *cold*, else through this
    worker's zygote (a forked server with the SDK imported already)."""
    if cold:
        return [sys.executable, "-m", "wisp", "mcp"]
    return zygote.command("mcp")


def stop(pid: int, how: int = signal.SIGTERM) -> None:
    os.kill(pid, how)


INITIALIZE = (
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
)
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


class RawWire:
    """`wisp mcp` as a real subprocess spoken to in raw JSON-RPC lines, as any client may
    write them (bytes the SDK's own client would never send), after the handshake."""

    def __init__(self, home: Path, bin_dir: Path, *, cold: bool = False) -> None:
        import subprocess

        self.process = subprocess.Popen(
            wisp_mcp_command(cold=cold),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(home, bin_dir),
        )
        self._ids = iter(range(1, 1 << 30))
        self.send(INITIALIZE.encode() + b"\n" + INITIALIZED.encode() + b"\n")
        assert self.reply()["id"] == 0

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def reply(self, timeout: float = BOUND_S) -> dict[str, Any]:
        """The server's next message, within a bounded deadline."""
        from helpers import read_line

        assert self.process.stdout is not None
        return cast_dict(json.loads(read_line(self.process.stdout, timeout)))

    def call(self, tool: str, arguments: str) -> dict[str, Any]:
        """tools/call with *arguments* as raw JSON text; the call's reply."""
        number = next(self._ids)
        self.send(
            f'{{"jsonrpc":"2.0","id":{number},"method":"tools/call","params":{{"name":'
            f'"{tool}","arguments":{arguments}}}}}\n'.encode()
        )
        while (message := self.reply()).get("id") != number:
            pass  # a notification (a resource update, progress): not the reply
        return message

    def close(self) -> tuple[int, bytes]:
        """EOF on stdin: the server stops; its exit status and what it wrote to stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=BOUND_S)
        finally:
            self.process.kill()
            self.process.wait()
        return code, self.process.stderr.read()


def cast_dict(value: Any) -> dict[str, Any]:
    assert isinstance(value, dict), value
    return value
