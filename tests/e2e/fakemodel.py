"""A fake model server on 127.0.0.1 for the e2e tier: it speaks, streaming, the four APIs the
agent harnesses use, and plays a script of tool calls.

    Anthropic Messages        POST …/v1/messages                     (Claude Code)
    OpenAI Responses          POST …/responses                       (Codex)
    OpenAI Chat Completions   POST …/chat/completions                (Copilot CLI, OpenCode)
    Gemini                    POST …/models/M:streamGenerateContent  (Gemini CLI)

The script is a list of tool calls (:class:`Call`: the harness's own tool name and its
arguments). A request that offers tools is answered with the script's next call, counted by how
many tool results the conversation already carries: none yet → the first call; one → the
second; all of them → a final text, :data:`DONE_TEXT`. A request without tools (a title, a
summary, a quota check) gets a short text. Every request is recorded (:attr:`FakeModel.requests`)
so a test can assert what the model was told after a call: wisp's deny reason, say.

    python tests/e2e/fakemodel.py '[["Bash", {"command": "touch marker"}]]'

runs one in the foreground and prints its URL (to try a harness by hand).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DONE_TEXT = "All done."
SIDE_TEXT = "Ok."


@dataclass(frozen=True)
class Call:
    """One scripted tool call: the harness's tool name and its arguments."""

    name: str
    args: dict[str, Any]


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        """The whole body as JSON text (to search it for a string)."""
        return json.dumps(self.body)

    def results(self) -> str:
        """The tool results the body carries, in any of the four APIs' shapes, as JSON text
        (what the harness told the model of its calls: short enough for a failure message)."""
        body = self.body if isinstance(self.body, dict) else {}
        found: list[Any] = [
            block.get("content")
            for message in body.get("messages", [])
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        found += [
            m.get("content")
            for m in body.get("messages", [])
            if isinstance(m, dict) and m.get("role") == "tool"
        ]
        items = body.get("input")
        found += [
            item.get("output")
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        found += [
            part["functionResponse"]
            for content in body.get("contents", [])
            for part in content.get("parts", [])
            if isinstance(part, dict) and "functionResponse" in part
        ]
        return json.dumps(found)


# How many tool results a conversation carries, in each API's shape.
def _anthropic_results(body: dict[str, Any]) -> int:
    return sum(
        1
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )


def _responses_results(body: dict[str, Any]) -> int:
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(
        1 for item in items if isinstance(item, dict) and item.get("type") == "function_call_output"
    )


def _chat_results(body: dict[str, Any]) -> int:
    return sum(1 for message in body.get("messages", []) if message.get("role") == "tool")


def _gemini_results(body: dict[str, Any]) -> int:
    return sum(
        1
        for content in body.get("contents", [])
        for part in content.get("parts", [])
        if "functionResponse" in part
    )


class FakeModel:
    """The server: start it with :meth:`start` (or as a context manager); :attr:`url` is its
    base URL; :attr:`requests` what it received, in order."""

    def __init__(self, script: list[Call]) -> None:
        self.script = list(script)
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, entry: Recorded) -> None:
        with self._lock:
            self.requests.append(entry)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def turn(self, offers_tools: bool, results: int) -> Call | None:
        """The scripted reply: the next call, or None for text."""
        if offers_tools and results < len(self.script):
            return self.script[results]
        return None

    def after_tools(self) -> list[Recorded]:
        """The requests that carried at least one tool result (the model's next turns)."""
        counters = (_anthropic_results, _responses_results, _chat_results, _gemini_results)
        return [
            r
            for r in self.requests
            if isinstance(r.body, dict) and any(count(r.body) for count in counters)
        ]


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        if name is not None:
            out.append(f"event: {name}\n")
        out.append(f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n")
    return "".join(out).encode()


def _anthropic(model: FakeModel, body: dict[str, Any]) -> tuple[str, bytes]:
    call = model.turn(bool(body.get("tools")), _anthropic_results(body))
    n = model.next_id()
    usage = {"input_tokens": 10, "output_tokens": 5}
    if call is None:
        block: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": DONE_TEXT}
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": call.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.args)}
        stop = "tool_use"
    if not body.get("stream"):
        content = dict(block, text=DONE_TEXT) if call is None else dict(block, input=call.args)
        message = {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [content],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return "application/json", json.dumps(message).encode()
    start = {
        "id": f"msg_{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return "text/event-stream", _sse(
        [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
    )  # fmt: skip


def _responses(model: FakeModel, body: dict[str, Any]) -> tuple[str, bytes]:
    call = model.turn(bool(body.get("tools")), _responses_results(body))
    n = model.next_id()
    if call is None:
        item: dict[str, Any] = {
            "type": "message",
            "id": f"msg_{n:04d}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": DONE_TEXT, "annotations": []}],
        }
    else:
        item = {
            "type": "function_call",
            "id": f"fc_{n:04d}",
            "call_id": f"call_{n:04d}",
            "name": call.name,
            "arguments": json.dumps(call.args),
            "status": "completed",
        }
    response = {"id": f"resp_{n:04d}", "object": "response", "status": "in_progress",
                "model": body.get("model", "fake"), "output": []}  # fmt: skip
    done = dict(response, status="completed", output=[item],
                usage={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                       "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens_details": {"reasoning_tokens": 0}})  # fmt: skip
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": response}),
        ("response.output_item.added",
         {"type": "response.output_item.added", "output_index": 0, "item": item}),
    ]  # fmt: skip
    if call is None:
        events.append(
            ("response.output_text.delta",
             {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
              "item_id": item["id"], "delta": DONE_TEXT})
        )  # fmt: skip
    events += [
        ("response.output_item.done",
         {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]  # fmt: skip
    return "text/event-stream", _sse(events)


def _chat(model: FakeModel, body: dict[str, Any]) -> tuple[str, bytes]:
    call = model.turn(bool(body.get("tools")), _chat_results(body))
    n = model.next_id()
    base = {"id": f"chatcmpl-{n:04d}", "object": "chat.completion.chunk", "created": 0,
            "model": body.get("model", "fake")}  # fmt: skip
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if call is None:
        delta: dict[str, Any] = {"role": "assistant", "content": DONE_TEXT}
        finish = "stop"
    else:
        delta = {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": f"call_{n:04d}", "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.args)}}]}  # fmt: skip
        finish = "tool_calls"
    if not body.get("stream"):
        message = {k: v for k, v in delta.items() if k != "tool_calls"}
        if call is not None:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"}
                                     for c in delta["tool_calls"]]  # fmt: skip
        reply = dict(base, object="chat.completion", usage=usage, choices=[
            {"index": 0, "message": message, "finish_reason": finish}])  # fmt: skip
        return "application/json", json.dumps(reply).encode()
    return "text/event-stream", _sse(
        [
            (None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}])),
            (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
                        usage=usage)),
            (None, "[DONE]"),
        ]
    )  # fmt: skip


def _gemini(model: FakeModel, body: dict[str, Any], stream: bool) -> tuple[str, bytes]:
    offers = any(t.get("functionDeclarations") for t in body.get("tools", []) or [])
    call = model.turn(offers, _gemini_results(body))
    part = {"text": DONE_TEXT} if call is None else {
        "functionCall": {"name": call.name, "args": call.args}}  # fmt: skip
    reply = {
        "candidates": [{"content": {"role": "model", "parts": [part]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                          "totalTokenCount": 15},
        "modelVersion": "fake",
    }  # fmt: skip
    if not stream:
        return "application/json", json.dumps(reply).encode()
    return "text/event-stream", _sse([(None, reply)])


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the record is the log

        def _send(self, status: int, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            if kind == "text/event-stream":
                self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        def do_GET(self) -> None:
            model.record(Recorded("GET", self.path, None, dict(self.headers)))
            path = self.path.split("?")[0]
            if path.endswith("/models"):
                models = [{"id": "fake-model", "object": "model", "created": 0,
                           "owned_by": "wisp-e2e"}]  # fmt: skip
                self._send(200, "application/json",
                           json.dumps({"object": "list", "data": models}).encode())  # fmt: skip
                return
            self._send(404, "application/json", b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode(errors="replace")
            model.record(Recorded("POST", self.path, body, dict(self.headers)))
            path = self.path.split("?")[0]
            if not isinstance(body, dict):
                self._send(400, "application/json", b'{"error": {"message": "not JSON"}}')
                return
            if path.endswith("/messages/count_tokens"):
                self._send(200, "application/json", b'{"input_tokens": 10}')
                return
            if path.endswith(":countTokens"):
                self._send(200, "application/json", b'{"totalTokens": 10}')
                return
            if path.endswith("/messages"):
                self._send(200, *_anthropic(model, body))
            elif path.endswith("/responses"):
                self._send(200, *_responses(model, body))
            elif path.endswith("/chat/completions"):
                self._send(200, *_chat(model, body))
            elif path.endswith(":streamGenerateContent"):
                self._send(200, *_gemini(model, body, stream=True))
            elif path.endswith(":generateContent"):
                self._send(200, *_gemini(model, body, stream=False))
            else:
                self._send(404, "application/json", b'{"error": {"message": "not found"}}')

    return Handler


def main(argv: list[str]) -> None:
    script = [Call(name, args) for name, args in json.loads(argv[0] if argv else "[]")]
    with FakeModel(script) as model:
        print(model.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            for r in model.requests:
                print(r.method, r.path, r.text()[:2000])


if __name__ == "__main__":
    main(sys.argv[1:])
