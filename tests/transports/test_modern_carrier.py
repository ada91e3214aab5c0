"""Modern (2026-07-28) SSE responses on the one carrier loop (transports/http/_carrier.py), message by message.

A modern request's stream is `_carrier.carry` fed by `_exchange.ModernFeed`; these
tests drive `MCPApp` in-process and read the ASGI messages it writes: no event ids
and no priming event, keep-alives before the first event, the reply as the last
event once streaming, one JSON body (with its code's status) when nothing was
emitted first. The same behaviours over real HTTP are in test_http.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from wiremcp import Context, Server
from wiremcp.transports.http import MCPApp
from wiremcp.transports.http import _app, _carrier, _exchange

server = Server("modern-carrier")


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress ``count`` times after an await each, then answer."""
    for i in range(count):
        await asyncio.sleep(0)
        ctx.report_progress(i + 1, count)
    return "done"


@server.tool()
async def quiet(seconds: float) -> str:
    """Say nothing for ``seconds``, then answer."""
    await asyncio.sleep(seconds)
    return "quiet"


def post(app: MCPApp, name: str, arguments: dict[str, Any], *, token: str | None = None) -> list[dict[str, Any]]:
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    if token is not None:
        meta["progressToken"] = token
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments, "_meta": meta}}
    )
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", name.encode()),
        (b"content-length", b"%d" % len(body)),
    ]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "", "headers": headers,
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }
    sent: list[dict[str, Any]] = []
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def start(sent: list[dict[str, Any]]) -> dict[str, Any]:
    [head] = [m for m in sent if m["type"] == "http.response.start"]
    return head


def stream_text(sent: list[dict[str, Any]]) -> bytes:
    bodies = [m for m in sent if m["type"] == "http.response.body"]
    assert all(m.get("more_body") for m in bodies[:-1]) and not bodies[-1].get("more_body", False)
    return b"".join(m["body"] for m in bodies)


def test_a_call_that_emits_first_streams_without_event_ids_and_ends_with_its_reply():
    sent = post(MCPApp(server), "steps", {"count": 3}, token="t")
    assert dict(start(sent)["headers"])[b"content-type"] == b"text/event-stream"
    text = stream_text(sent)
    assert b"\nid:" not in text and not text.startswith(b"id:") and b"retry:" not in text  # no priming, no ids
    events = [orjson.loads(block[6:]) for block in text.strip().split(b"\n\n")]
    assert [e.get("method") for e in events[:-1]] == ["notifications/progress"] * 3
    assert [e["params"]["progress"] for e in events[:-1]] == [1, 2, 3]
    assert events[-1]["id"] == 7 and events[-1]["result"]["content"][0]["text"] == "done"


def test_a_call_silent_past_the_keepalive_gets_a_comment_before_its_reply():
    sent = post(MCPApp(server, keepalive_interval=0.05), "quiet", {"seconds": 0.3})
    assert dict(start(sent)["headers"])[b"content-type"] == b"text/event-stream"
    text = stream_text(sent)
    assert text.startswith(b": keep-alive") and b"id:" not in text
    assert orjson.loads(text.strip().rsplit(b"\n\n", 1)[-1][6:])["result"]["content"][0]["text"] == "quiet"


def test_a_call_answered_after_an_await_with_nothing_emitted_is_one_json_body():
    sent = post(MCPApp(server), "quiet", {"seconds": 0.01})
    head = start(sent)
    assert head["status"] == 200 and dict(head["headers"])[b"content-type"] == b"application/json"
    [body] = [m for m in sent if m["type"] == "http.response.body"]
    assert orjson.loads(body["body"])["result"]["content"][0]["text"] == "quiet"


def test_the_modern_stream_is_carried_by_the_one_carrier_loop(monkeypatch):
    """A modern call still running is no loop of its own: `MCPApp` hands its `ModernFeed` to `_carrier.carry`."""
    fed: list[Any] = []
    carry = _carrier.carry

    async def watching(feed: Any, *args: Any, **kwargs: Any) -> None:
        fed.append(feed)
        await carry(feed, *args, **kwargs)

    monkeypatch.setattr(_app, "carry", watching)
    sent = post(MCPApp(server), "steps", {"count": 1}, token="t")
    assert [type(f) for f in fed] == [_exchange.ModernFeed] and fed[0].prime() == b""
    assert b"notifications/progress" in stream_text(sent)
