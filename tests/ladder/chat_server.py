"""A real chat-completions HTTP server on loopback with scripted replies, for the LLM rewriter's tests.

    with ChatServer([Reply("..."), Status(429), Reply("...")]) as srv:
        LLMRewriter("m", base_url=srv.url, api_key="k")

Each POST /v1/chat/completions takes the next script item (or asks `script(request_json)` when the script is
a function); every request body and its headers are kept in `srv.requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str
    finish_reason: str = "stop"
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 900, "completion_tokens": 300, "total_tokens": 1200}
    )
    delay_s: float = 0.0


@dataclass
class Status:
    code: int
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "10"})
    body: str = '{"error": {"message": "scripted failure", "type": "server_error"}}'


Item = Reply | Status


class ChatServer:
    def __init__(self, script: list[Item] | Callable[[dict[str, Any]], Item]):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _next(self, body: dict[str, Any]) -> Item:
        with self.lock:
            self.requests.append(body)
            if callable(self.script):
                return self.script(body)
            if not self.script:
                return Status(503, {"x-should-retry": "false"}, '{"error": {"message": "script exhausted"}}')
            return self.script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: str, headers: dict[str, str]) -> None:
                data = body.encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path != "/v1/chat/completions":
                    self._send(404, '{"error": {"message": "not found"}}', {})
                    return
                body = json.loads(raw)
                with srv.lock:
                    srv.headers.append({k.lower(): v for k, v in self.headers.items()})
                item = srv._next(body)
                if isinstance(item, Status):
                    self._send(item.code, item.body, item.headers)
                    return
                time.sleep(item.delay_s)
                n = len(srv.requests)
                resp = {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": item.content},
                            "finish_reason": item.finish_reason,
                        }
                    ],
                    "usage": item.usage,
                }
                self._send(200, json.dumps(resp), {})

        return Handler

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
