"""The port every store of legacy (2025-11-25) sessions fills, and the choice of a store for an app.

`MCPApp` speaks to its legacy sessions only through `SessionStore`; two
adapters fill it and neither derives from the other:

* `_sessions.Sessions`: the sessions live in this process (memory);
* `_shared_sessions.SharedSessions`: every worker shares them through Redis
  (``WIREMCP_REDIS_URL``; what is kept in Redis, and its Lua scripts, is
  `wiremcp.backends.redis.sessions`).

Rules kept by every adapter (the wire rules: `_sessions`'s module docs):

* `find` gives the session a ``Mcp-Session-Id`` names, if it lives and
  belongs to the principal of the request's token, else None (404); a store
  that cannot be reached gives a session whose every method answers 503;
* each entry point writes exactly one HTTP response to ``send``;
* ``len(store)`` is the number of sessions this process holds;
  `close_all` ends them (the app shuts down).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ._session_rules import SessionOptions
from ._sessions import Sessions

if TYPE_CHECKING:
    from ...jsonrpc import ErrorResponse, Notification, Request, Response
    from ...server import Server
    from ._asgi import Receive, Send

__all__ = ["SessionStore", "session_store"]


class SessionStore(Protocol):
    """What a store of legacy sessions does for `MCPApp`."""

    def __len__(self) -> int: ...

    async def find(self, raw_id: bytes, request_id: Any = None) -> Any:
        """The session this ``Mcp-Session-Id`` names, or None (404); ``request_id``: the id of the
        request this message is, which `request` gets next (a shared store claims it here)."""

    async def initialize(self, req: Request, headers: dict[bytes, bytes], send: Send, client: str = "") -> None:
        """``initialize`` without a session: a new session, its id in ``Mcp-Session-Id``."""

    async def request(self, session: Any, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        """A request of the session: one JSON body, or an SSE stream up to its response."""

    async def notification(self, session: Any, note: Notification, headers: dict[bytes, bytes], send: Send) -> None:
        """A notification of the session: 202."""

    async def response(self, session: Any, msg: Response | ErrorResponse, headers: dict[bytes, bytes], send: Send) -> None:
        """An answer to one of the server's requests: 202, or 400 when nothing waits for it."""

    async def get(self, session: Any, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        """The standalone stream, or the stream ``Last-Event-ID`` names."""

    async def delete(self, session: Any, headers: dict[bytes, bytes], send: Send) -> None:
        """End the session: 204."""

    def close_all(self) -> None:
        """End every session this process holds."""


def session_store(server: Server, **options: Any) -> SessionStore:
    """The legacy sessions of an app: in this process, or shared by every worker when the server's backend is."""
    checked = SessionOptions(**options)
    if server.backend.shared:
        from ._shared_sessions import SharedSessions

        return SharedSessions(server, checked)
    return Sessions(server, checked)
