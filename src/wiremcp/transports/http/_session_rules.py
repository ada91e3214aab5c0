"""What every store of legacy (2025-11-25) sessions checks the same way: its options, and the header rules.

Both stores (`_sessions.Sessions` in this process, `_shared_sessions.SharedSessions`
in Redis) hold a `SessionRules`, and neither derives from the other. Rules kept here:

* the options are checked once, when the app is built (`SessionOptions`): a
  non-positive idle timeout, a negative cap or buffer is a ValueError;
* ``MCP-Protocol-Version``, when sent with a session's message, must be the
  session's negotiated version, else 400 with -32020 (with the request's id
  when the message is a request); on ``initialize`` without a session, a
  modern version is 400/-32020 (the header and the body speak different eras);
* a GET must accept ``text/event-stream`` (406 otherwise);
* a response no request of the server waits for is 400;
* an error leaves through the funnel (`reply_failed`, `http_error`), never as a
  hand-written JSON-RPC error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol import LEGACY_VERSIONS
from ...protocol.errors import HEADER_MISMATCH, HeaderMismatch
from ...server.transport import DEFAULT_MAX_SESSION_SUBSCRIPTIONS, DEFAULT_MAX_SUBSCRIPTION_URI, reply_failed
from ._asgi import Send, http_error, json_reply
from ._security import _q_is_zero

if TYPE_CHECKING:
    from ...jsonrpc import ErrorResponse, Request, Response
    from ...server import Server
    from ._session_base import SessionBase

__all__ = [
    "SessionOptions",
    "SessionRules",
    "SESSION_HEADER",
    "LAST_EVENT_ID_HEADER",
    "LEGACY_HEADER_VALUES",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BUFFER",
    "DEFAULT_RETRY_MS",
    "DEFAULT_MAX_SESSIONS_PER_CLIENT",
    "DEFAULT_PRESSURE_IDLE_TIMEOUT",
    "ENTRY_COST",
]

log = logging.getLogger("wiremcp.transport")

#: Seconds a session may sit unused (nothing in flight, no stream open) before it ends.
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60.0
#: Live legacy sessions one app holds; ``initialize`` past it gets 503. Bounds memory
#: (with ``replay_buffer``) against clients that never DELETE their sessions.
DEFAULT_MAX_SESSIONS = 10_000
#: Live legacy sessions one client address may hold; one more gets 429. Keeps one client
#: from taking every session (``None``: no per-client cap, e.g. behind a proxy that hides addresses).
DEFAULT_MAX_SESSIONS_PER_CLIENT = 1000
#: Seconds a session may sit unused while the server is under pressure.
DEFAULT_PRESSURE_IDLE_TIMEOUT = 60.0
#: Bytes of written events one session keeps for replay after a reconnection.
DEFAULT_REPLAY_BUFFER = 256 * 1024
#: Milliseconds a client waits before reconnecting after the server closed a stream's
#: connection (the SSE ``retry`` field), when the handler names none.
DEFAULT_RETRY_MS = 1000
#: What one kept message costs beyond its length: the ``bytes`` header (33), its list slot,
#: its replay entry (a 3-tuple and an int) and the allocator's rounding. Limits count this
#: too, so that a flood of tiny messages is bounded by what it really holds.
ENTRY_COST = 128

SESSION_HEADER = b"mcp-session-id"
LAST_EVENT_ID_HEADER = b"last-event-id"
_VERSION_HEADER = b"mcp-protocol-version"
#: ``MCP-Protocol-Version`` values of the legacy era, as they arrive in headers.
LEGACY_HEADER_VALUES = frozenset(v.encode("ascii") for v in LEGACY_VERSIONS)


@dataclass(frozen=True)
class SessionOptions:
    """The limits of one app's legacy sessions (`MCPApp`'s keyword arguments of the same names)."""

    idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    replay_buffer: int = DEFAULT_REPLAY_BUFFER
    keepalive_interval: float | None = None
    max_stream_backlog: int = 16 * 1024 * 1024
    retry_ms: int = DEFAULT_RETRY_MS
    max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT
    pressure_idle_timeout: float = DEFAULT_PRESSURE_IDLE_TIMEOUT
    max_session_subscriptions: int = DEFAULT_MAX_SESSION_SUBSCRIPTIONS
    max_subscription_uri: int = DEFAULT_MAX_SUBSCRIPTION_URI

    def __post_init__(self) -> None:
        if self.idle_timeout <= 0:
            raise ValueError("session_idle_timeout must be positive")
        if self.pressure_idle_timeout <= 0:
            raise ValueError("pressure_idle_timeout must be positive")
        if self.max_sessions_per_client is not None and self.max_sessions_per_client < 1:
            raise ValueError("max_sessions_per_client must be at least 1 (or None for no per-client cap)")
        if self.max_session_subscriptions < 0 or self.max_subscription_uri < 0:
            raise ValueError("max_session_subscriptions and max_subscription_uri must not be negative")
        if self.max_sessions < 0:
            raise ValueError("max_sessions must not be negative")
        if self.replay_buffer < 0:
            raise ValueError("replay_buffer must not be negative")


class SessionRules:
    """The header rules of a session's messages, for one server (see the module docs)."""

    __slots__ = ("server", "options")

    def __init__(self, server: Server, options: SessionOptions) -> None:
        self.server = server
        self.options = options

    def version_problem(self, session: SessionBase, headers: dict[bytes, bytes]) -> HeaderMismatch | None:
        raw = headers.get(_VERSION_HEADER)
        if raw is None:
            return None
        sent = raw.strip(b" \t").decode("latin-1")
        if sent == session.version:
            return None
        return HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version header value {sent!r} is not this session's "
            f"negotiated protocol version {session.version!r}"
        )

    @staticmethod
    async def refuse_version(problem: HeaderMismatch, send: Send, id: Any = None, *, with_id: bool = False) -> None:
        if with_id:
            await json_reply(send, 400, reply_failed(id, problem)[0])
        else:
            await json_reply(send, 400, http_error(problem.message, HEADER_MISMATCH))

    async def wrong_version(
        self, session: SessionBase, headers: dict[bytes, bytes], send: Send, id: Any = None, *, with_id: bool = False
    ) -> bool:
        """Whether ``MCP-Protocol-Version`` is not the session's version; if so, the message is refused (400)."""
        problem = self.version_problem(session, headers)
        if problem is None:
            return False
        await self.refuse_version(problem, send, id, with_id=with_id)
        return True

    async def modern_initialize(self, req: Request, headers: dict[bytes, bytes], send: Send) -> bool:
        """Whether ``initialize`` came with a modern ``MCP-Protocol-Version``; if so, it is refused (400)."""
        raw = headers.get(_VERSION_HEADER)
        if raw is None:
            return False
        sent = raw.strip(b" \t").decode("latin-1")
        if sent not in self.server.supported_versions:
            return False
        problem = HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version header value {sent!r} is a modern version, but "
            "initialize without params._meta opens a legacy (2025-11-25) session"
        )
        await self.refuse_version(problem, send, req.id, with_id=True)
        return True

    async def refused_get(self, session: SessionBase, headers: dict[bytes, bytes], send: Send) -> bool:
        """Whether a GET is refused: a wrong ``MCP-Protocol-Version`` (400), or no SSE in ``Accept`` (406)."""
        if await self.wrong_version(session, headers, send):
            return True
        if not accepts_sse(headers.get(b"accept")):
            await json_reply(send, 406, http_error("Not Acceptable: a GET must accept text/event-stream"))
            return True
        return False

    @staticmethod
    async def unawaited(session: SessionBase, msg: Response | ErrorResponse, send: Send) -> None:
        """A response no request of the server waits for: 400."""
        log.warning("session %s: a response for id %r, which no request of the server waits for", session.id[:8], msg.id)
        await json_reply(
            send, 400, http_error(f"Bad Request: no request with id {msg.id!r} from the server is waiting for an answer")
        )


def accepts_sse(value: bytes | None) -> bool:
    """Whether an ``Accept`` header admits ``text/event-stream`` (a GET needs it)."""
    if value is None:
        return False
    for item in value.lower().split(b","):
        media, _, params = item.partition(b";")
        if media.strip() in (b"text/event-stream", b"text/*", b"*/*") and not _q_is_zero(params):
            return True
    return False
