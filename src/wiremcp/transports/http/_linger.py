"""Refusing a request whose body is not read: the reply first, then a lingering close.

RFC 9112, section 9.6: a server that closes a connection before it has read
the whole request SHOULD keep reading for a while, since a close with unread
data in the receive buffer resets the connection, and a reset makes the
client's TCP stack discard the reply it had not read yet: a client still
sending a body that is too large would see "connection reset" instead of its
413. Rules kept here:

* `refuse` answers 413 (``Connection: close``) at once; when the body was
  not read to its end, it then keeps the response open and reads and discards what the client still sends, until
  the body ends, the client leaves, `LINGER_TIME` seconds pass or
  `LINGER_BYTES` more bytes have come, whichever is first; then the response
  ends and the ASGI server closes the connection;
* the discarded bytes are never kept: each part is dropped as it arrives
  (the ASGI server's flow control holds at most its own buffer);
* any other refusal is answered as it is (the ASGI server drains an unread
  body of a keep-alive connection itself).
"""

from __future__ import annotations

import asyncio
import logging

from typing import Protocol

from ._asgi import JSON_CONTENT_TYPE, Receive, Send, json_reply

__all__ = ["refuse", "LINGER_TIME", "LINGER_BYTES"]

#: Seconds a refused body is read and discarded after the 413 before the connection is closed.
LINGER_TIME = 10.0
#: Bytes read and discarded after the 413 at most (a 50 MB body refused at 16 MiB leaves 34 MB).
LINGER_BYTES = 64 * 1024 * 1024

log = logging.getLogger("wiremcp.http")


class Refusal(Protocol):
    """What `refuse` reads of an HTTP-level refusal (``_body._Refused``)."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    more_body: bool


async def refuse(send: Send, receive: Receive, refused: Refusal, body: bytes) -> None:
    """Answer ``refused`` with the JSON ``body``; a 413 whose body is still coming then lingers (module docs)."""
    status = refused.status
    if status != 413 or not refused.more_body:
        await json_reply(send, status, body, refused.headers)
        return
    start = [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(body)), *refused.headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body, "more_body": True})
    discarded = await _discard(receive)
    log.debug("lingered after a 413: %d more bytes of the body read and dropped", discarded)
    await send({"type": "http.response.body", "body": b""})


async def _discard(receive: Receive) -> int:
    """Read and drop the body until it ends, the client leaves, or a budget is spent; the bytes read."""
    read = 0
    try:
        async with asyncio.timeout(LINGER_TIME):
            while read <= LINGER_BYTES:
                msg = await receive()
                if msg["type"] != "http.request":
                    break
                read += len(msg.get("body", b""))
                if not msg.get("more_body"):
                    break
    except TimeoutError:
        pass
    return read
