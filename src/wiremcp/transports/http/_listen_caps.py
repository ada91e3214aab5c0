"""The cap on open ``subscriptions/listen`` streams per client (``MCPApp(max_listens_per_client=)``).

Rules kept here:

* a client (its `_client_key.client_key`: principal, else address) holds at
  most ``limit`` open listens; one more is answered **429** with
  ``Retry-After`` and a -32000 ("server busy") error for the request's id;
* a listen's slot is freed when its request ends, however it ends
  (completed, cancelled, the client gone); a key with no open listen is
  forgotten, so the table holds only clients with a stream open.
"""

from __future__ import annotations

import logging
from ...jsonrpc import Request
from ...server.transport import ServerBusy, reply_failed
from ._asgi import Send, json_reply

__all__ = ["ListenCaps", "DEFAULT_MAX_LISTENS_PER_CLIENT"]

#: Open ``subscriptions/listen`` streams one client may hold; one more is 429
#: (the server-wide cap is the server's ``max_subscriptions``, past which a listen is 503).
DEFAULT_MAX_LISTENS_PER_CLIENT = 256

log = logging.getLogger("wiremcp.transport")


class ListenCaps:
    """Open listens by client key, each at most ``limit``."""

    __slots__ = ("limit", "open_count")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("max_listens_per_client must be at least 1 (or None for no per-client cap)")
        self.limit = limit
        self.open_count: dict[str, int] = {}

    async def take(self, client: str, req: Request, send: Send) -> bool:
        """One of ``client``'s slots, or False when it holds them all (the request is then answered 429)."""
        count = self.open_count.get(client, 0)
        if count >= self.limit:
            log.warning("refused subscriptions/listen from %s: it holds %d open, the limit", client, count)
            busy = ServerBusy(
                f"Server busy: this client holds {count} open subscriptions/listen streams, the most one client "
                "may; close one or try again later"
            )
            await json_reply(send, 429, reply_failed(req.id, busy)[0])
            return False
        self.open_count[client] = count + 1
        return True

    def release(self, client: str) -> None:
        """Free one of ``client``'s slots (its listen ended, however it ended)."""
        left = self.open_count[client] - 1
        if left:
            self.open_count[client] = left
        else:
            del self.open_count[client]
