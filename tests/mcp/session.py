"""A real MCP client session (the SDK's Client) driven from synchronous tests: the client lives on an event loop
in its own thread for the whole module, and each call waits for its answer."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from mcp import Client
from mcp.types import CallToolResult

T = TypeVar("T")
CALL_TIMEOUT_S = 120


class Session:
    def __init__(self, server: Any):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready: Future[Client] = Future()
        self._stop: asyncio.Event | None = None
        self._main = asyncio.run_coroutine_threadsafe(self._serve(server), self._loop)
        try:
            self.client = self._ready.result(timeout=60)
        except BaseException:
            self.close()
            raise

    async def _serve(self, server: Any) -> None:
        self._stop = asyncio.Event()
        try:
            async with Client(server) as client:
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as e:
            if not self._ready.done():
                self._ready.set_exception(e)
            raise

    def run(self, fn: Callable[[Client], Awaitable[T]], timeout: float = CALL_TIMEOUT_S) -> T:
        return asyncio.run_coroutine_threadsafe(fn(self.client), self._loop).result(timeout)  # type: ignore[arg-type]

    def call(self, tool: str, args: dict[str, Any] | None = None) -> CallToolResult:
        return self.run(lambda c: c.call_tool(tool, args or {}))

    def ok(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured answer of a call that must succeed."""
        r = self.call(tool, args)
        assert not r.is_error, f"{tool} failed: {r.content[0].text if r.content else r}"
        assert r.structured_content is not None
        return r.structured_content

    def error(self, tool: str, args: dict[str, Any] | None = None) -> str:
        """The reason of a call that must fail: an MCP error result, one line."""
        r = self.call(tool, args)
        assert r.is_error, f"{tool} should have failed: {r.structured_content}"
        text = r.content[0].text  # type: ignore[union-attr]
        assert "\n" not in text, f"not one line: {text!r}"
        return text

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        with contextlib.suppress(BaseException):  # the session's own failure was raised where it happened
            self._main.result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
