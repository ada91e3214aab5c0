"""When the HTTP client transport sends a request again: the connection was lost before any response.

A keep-alive connection may be closed by the server at the moment the client
reuses it (a server closes idle connections after a few seconds: Node's
default is 5 s; under load its timer can fire before it reads the request
that just arrived). The request then fails with a connection reset although
the server never saw it. RFC 9110 section 9.2.2 and RFC 9112 section 9.3.1:
a client may retry a request automatically when it knows the request is
idempotent, or that the original request was never applied; aiohttp does
the first, once, for idempotent HTTP methods on a reused connection, never
for POST, and every MCP message is a POST.

Rules it keeps:

* only a failure before the response's head is considered (an exception
  from the exchange that returns once the status line and headers are in);
  once any response has arrived, nothing is ever sent again;
* failing to connect is not handled here (`NotSent`: the `Client` sends
  it once more itself);
* a connection *reset* (ECONNRESET, EPIPE: the server's TCP stack answered
  our request with RST) means the server closed the connection with the
  request unread in its buffer, or before it arrived: the server cannot
  have acted on a JSON-RPC message it did not read, so the request is sent
  again whatever it is (`tools/call` too). One request per connection at a
  time (no pipelining) is what makes the unread data ours;
* a connection closed without a response (a clean close, or any other
  error) may come after the server read and acted on the request: the
  request is sent again only when it is idempotent, i.e. an HTTP method
  RFC 9110 calls idempotent (``GET``, ``DELETE``) or a POST whose JSON-RPC
  method only reads or sets state (`IDEMPOTENT`); ``tools/call``,
  ``initialize``, notifications and responses are not sent again;
* at most once (`RESENDS`), with fresh headers from the caller's
  ``attempt`` (a new DPoP proof: a proof is never sent twice), and logged.
"""

from __future__ import annotations

import errno
import logging
from typing import Awaitable, Callable, TypeVar

__all__ = ["IDEMPOTENT", "RESENDS", "resending", "resend_after", "may_resend"]

log = logging.getLogger("wiremcp.client")

T = TypeVar("T")

#: JSON-RPC methods whose repetition has no effect beyond the first (they read, or set a state).
IDEMPOTENT = frozenset({
    "ping",
    "server/discover",
    "tools/list",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
})
#: How many times a request is sent again at most (`resend_after` sends once more).
RESENDS = 1
_IDEMPOTENT_HTTP = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "PUT"})
_RESET = frozenset({errno.ECONNRESET, errno.EPIPE})


def may_resend(exc: BaseException, http_method: str, rpc_method: str | None) -> bool:
    """Whether a request whose exchange raised ``exc`` before any response may be sent again."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorError) or not isinstance(exc, aiohttp.ClientConnectionError):
        return False  # not connected (the Client's own retry), or not a lost connection at all
    if isinstance(exc, OSError) and exc.errno in _RESET:
        return True  # the server never read it
    idempotent = http_method in _IDEMPOTENT_HTTP or (http_method == "POST" and rpc_method in IDEMPOTENT)
    return idempotent and isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError))


async def resending(attempt: Callable[[], Awaitable[T]], http_method: str, rpc_method: str | None, url: str) -> T:
    """``await attempt()``; once more when it failed in a way `may_resend` allows."""
    try:
        return await attempt()
    except Exception as exc:
        return await resend_after(exc, attempt, http_method, rpc_method, url)


async def resend_after(
    exc: Exception, attempt: Callable[[], Awaitable[T]], http_method: str, rpc_method: str | None, url: str
) -> T:
    """The first ``attempt()`` raised ``exc``: ``await attempt()`` once more (`RESENDS`) if `may_resend`
    allows, else ``exc`` again. For a caller that makes its first attempt itself (no wrapper per request)."""
    if not may_resend(exc, http_method, rpc_method):
        raise exc
    log.info("%s %s (%s) lost its connection before any response (%r): sent again",
             http_method, url, rpc_method or "-", exc)
    return await attempt()
