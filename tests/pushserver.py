"""A push target for the tests: a real HTTP server on 127.0.0.1 that records every POST (what
Apprise's `json://` URLs send), with when it arrived (`time.monotonic()`, this process's)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class PushServer:
    """A real HTTP server on 127.0.0.1 that takes every POST and records it."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.arrived = threading.Condition()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with server.arrived:
                    server.received.append(
                        {"path": self.path, "body": json.loads(data), "at": time.monotonic()}
                    )
                    server.arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.received) >= count, timeout), (
                f"{len(self.received)} of {count} pushes arrived"
            )
            return list(self.received)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
