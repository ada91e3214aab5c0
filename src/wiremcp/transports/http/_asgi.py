"""Small ASGI pieces shared by the endpoint (`_app`) and its legacy sessions (`_sessions`).

Rules kept here:

* every reply message is built afresh (middleware may edit it in place);
* a JSON reply carries ``Content-Length``; an SSE reply carries
  ``Cache-Control: no-cache`` and ``X-Accel-Buffering: no`` (so that proxies
  do not hold events back);
* the status of a JSON-RPC error is looked up by its code in one table,
  `STATUS_BY_CODE` (2026-07-28 streamable-http.mdx, "Protocol Version Header"
  and "Server Validation"; basic/index.mdx, "_meta"); codes not listed are
  answered with 200; -32000 (`ServerBusy`, a cap is reached) is 503, or
  429 for `CallerBusy` (the caller holds its share; `CALLER_BUSY`);
* a 429 or 503 carries ``Retry-After`` (RFC 9110, 10.2.3): a cap is reached,
  and the client may try again later; a cap is never a 500. It is
  `RETRY_AFTER`, or the error's own ``data.retryAfterMs`` in seconds rounded
  up when it says when (a rate limit, ``wiremcp.server.middleware``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, MutableMapping

import orjson

from ...jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, encode_error
from ...protocol.errors import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION
from ...server.transport import CALLER_BUSY, SERVER_BUSY

__all__ = [
    "Scope",
    "Message",
    "Receive",
    "Send",
    "STATUS_BY_CODE",
    "RETRY_AFTER",
    "JSON_CONTENT_TYPE",
    "KEEPALIVE",
    "KEEPALIVE_COMMENT",
    "fire",
    "sse_start",
    "http_error",
    "json_reply",
    "text_reply",
    "empty_reply",
    "lifespan",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: HTTP status for a JSON-RPC error code; codes not listed are answered with 200.
STATUS_BY_CODE: dict[int, int] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,  # basic/index.mdx, "_meta": a malformed request is 400
    HEADER_MISMATCH: 400,  # streamable-http.mdx, "Server Validation"
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,  # basic/index.mdx, "_meta"
    UNSUPPORTED_PROTOCOL_VERSION: 400,  # streamable-http.mdx, "Protocol Version Header"
    METHOD_NOT_FOUND: 404,  # streamable-http.mdx, "Protocol Version Header"
    INTERNAL_ERROR: 500,
    SERVER_BUSY: 503,  # a cap of the server is reached (ServerBusy): try again later
    CALLER_BUSY: 429,  # -32000 on the wire: the caller holds its share of a cap (CallerBusy)
}

#: Seconds a refused client is told to wait (``Retry-After``) when a cap is reached (429, 503).
RETRY_AFTER = 1
_RETRY_AFTER = (b"retry-after", str(RETRY_AFTER).encode())

_JSON = b"application/json"
KEEPALIVE_COMMENT = b": keep-alive\n\n"
#: What a waiter is woken with when a keep-alive interval passed in silence.
KEEPALIVE = object()


def fire(waiter: asyncio.Future[Any]) -> None:
    """The keep-alive timer's callback: wake ``waiter`` with `KEEPALIVE`."""
    if not waiter.done():
        waiter.set_result(KEEPALIVE)


def sse_start() -> Message:
    return {
        "type": "http.response.start",
        "status": 200,
        "headers": [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ],
    }


def http_error(message: str, code: int = INVALID_REQUEST) -> bytes:
    """A JSON-RPC error body with no id, for refusals that answer no particular request."""
    return encode_error(None, {"code": code, "message": message})  # MCP: no id member


#: The Content-Type field of every JSON reply, built once.
JSON_CONTENT_TYPE = (b"content-type", _JSON)


async def json_reply(send: Send, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """A JSON body; a 429 or 503 (a cap is reached) also says ``Retry-After``."""
    headers = [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(body))]
    if extra:
        headers.extend(extra)
    if status == 503 or status == 429:
        headers.append(_retry_after(body))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _retry_after(body: bytes) -> tuple[bytes, bytes]:
    """``Retry-After``: the error's ``data.retryAfterMs`` (a rate limit's wait) in seconds rounded up, else `RETRY_AFTER`."""
    try:
        wait = orjson.loads(body)["error"]["data"]["retryAfterMs"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return _RETRY_AFTER
    return (b"retry-after", b"%d" % max(1, -(-wait // 1000))) if type(wait) is int and wait >= 0 else _RETRY_AFTER


async def text_reply(send: Send, status: int, body: bytes) -> None:
    """A ``text/plain`` reply (404 for a path that is not the endpoint)."""
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def empty_reply(send: Send, status: int) -> None:
    """A reply without a body: 202 Accepted, 204 No Content."""
    headers = [] if status == 204 else [(b"content-length", b"0")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def lifespan(receive: Receive, send: Send, on_shutdown: Callable[[], None] | None = None) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif msg["type"] == "lifespan.shutdown":
            if on_shutdown is not None:
                on_shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return
