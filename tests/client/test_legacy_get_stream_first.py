"""2025-11-25 over HTTP: the client's GET stream is open before its next request reaches the server.

2025-11-25 basic/transports.mdx, "Listening for Messages from the Server":
the server MAY send requests on the GET stream, which are not about any
request in progress. A server built on the TypeScript SDK sends a request it
makes without naming the client request it belongs to (``server.request``,
as the conformance suite's ``elicitation-sep1034-client-defaults`` mock
does from a tool) on the GET stream, and drops it when no GET stream is open
yet. Under load the client's GET reached that mock after its ``tools/call``:
the elicitation was dropped and the call never ended (issue 23). The client
now waits until its GET stream is open (its response head in) before it
sends anything after the handshake.

The server here is real HTTP on loopback (aiohttp.web), which takes a second
to answer the GET (as the loaded mock did) and sends ``elicitation/create``
on the GET stream when ``tools/call`` arrives, or answers that no stream was
open.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from _helpers import run
from wiremcp.client import Client

aiohttp = pytest.importorskip("aiohttp")
from aiohttp import web  # noqa: E402

pytestmark = pytest.mark.slow

SESSION = "s-1"


class LegacyServer:
    def __init__(self) -> None:
        self.stream: web.StreamResponse | None = None
        self.answer: asyncio.Future[Any] | None = None
        self.order: list[str] = []

    async def get(self, request: web.Request) -> web.StreamResponse:
        self.order.append("GET")
        await asyncio.sleep(1.0)  # slow to answer the GET, as a loaded server is
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Mcp-Session-Id": SESSION})
        await stream.prepare(request)
        self.stream = stream
        self.order.append("GET open")
        while not request.transport or not request.transport.is_closing():
            await asyncio.sleep(0.05)
        return stream

    async def post(self, request: web.Request) -> web.Response:
        msg = orjson.loads(await request.read())
        headers = {"Mcp-Session-Id": SESSION, "Content-Type": "application/json"}
        method = msg.get("method")
        self.order.append(method or "response")
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}
            return web.Response(body=orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), headers=headers)
        if "id" not in msg or "method" not in msg:  # a notification, or the client's answer
            if "result" in msg and self.answer is not None:
                self.answer.set_result(msg["result"])
            return web.Response(status=202, headers={"Mcp-Session-Id": SESSION})
        if method == "tools/call":
            if self.stream is None:  # what the TypeScript SDK does: no GET stream, the request is dropped
                text, error = "no GET stream was open: the elicitation was lost", True
            else:
                self.answer = asyncio.get_running_loop().create_future()
                ask = {"jsonrpc": "2.0", "id": 100, "method": "elicitation/create",
                       "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}
                await self.stream.write(b"event: message\ndata: " + orjson.dumps(ask) + b"\n\n")
                answer = await asyncio.wait_for(self.answer, 20)
                text, error = f"answered {answer['action']}", False
            result = {"content": [{"type": "text", "text": text}], "isError": error}
            return web.Response(body=orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), headers=headers)
        return web.Response(body=orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), headers=headers)

    async def delete(self, request: web.Request) -> web.Response:
        return web.Response(status=200)


def test_a_server_request_on_the_get_stream_right_after_the_handshake_is_answered() -> None:
    server = LegacyServer()

    async def main() -> str:
        app = web.Application()
        app.router.add_get("/mcp", server.get)
        app.router.add_post("/mcp", server.post)
        app.router.add_delete("/mcp", server.delete)
        runner = web.AppRunner(app, shutdown_timeout=1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            async def elicit(params: dict[str, Any]) -> dict[str, Any]:
                return {"action": "accept", "content": {}}

            async with Client.http(f"http://127.0.0.1:{port}/mcp", era="legacy", elicitation=elicit, timeout=20) as c:
                result = await c.call_tool("ask")
                return f"{result.text} (isError={result.is_error})"
        finally:
            await runner.cleanup()

    assert run(main()) == "answered accept (isError=False)"
    assert server.order.index("GET open") < server.order.index("tools/call"), server.order
