"""Legacy sessions: serving 2025-11-25 (and earlier) clients with the same handlers.

A legacy client opens with ``initialize`` (2025-11-25 basic/lifecycle.mdx);
2026-07-28 basic/versioning.mdx lets a dual-era server serve it on the same
endpoint. A `LegacySession` is that session: one stdio connection, or one
``Mcp-Session-Id`` on HTTP. It keeps what the handshake negotiated and
serves every later request of the session with the server's ordinary
handlers, so a tool or prompt is written once for both eras.

What differs from the modern era, and lives here:

* version negotiation: the client's version if we know it (2024-11-05 too,
  whose results are reshaped by `_legacy_2024`), else our newest legacy
  version (lifecycle.mdx, Version Negotiation);
* capabilities and client info come from ``initialize``, not from each
  request's ``_meta``; the log level from ``logging/setLevel``, and until
  then from the server's ``legacy_log_level`` (2025-11-25 logging.mdx leaves
  the default open; ``debug``, the default, sends what the official SDK's
  servers send: everything);
* no result carries ``resultType`` (2026-07-28 only; no legacy schema has
  it): `handle` (its `_serve`) is the one door of a session's results, and strips it there
  (`legacy_result`, a copy: results may be cached and shared);
* ``ping``, ``logging/setLevel``, ``resources/subscribe`` and
  ``resources/unsubscribe`` exist (and answer ``{}``); ``server/discover`` and
  ``subscriptions/listen`` do not;
* a session holds at most ``max_subscriptions`` resource subscriptions
  (one more is -32000, `ServerBusy`: unsubscribe first) of URIs of at most
  ``max_subscription_uri`` characters (a longer one is -32602), so that what a
  session keeps is bounded; subscribing again to a URI costs nothing;
* list-changed and resource-updated notifications go to the session itself;
* input from the client (elicitation, sampling, roots) is a real JSON-RPC
  request to the client, sent by the transport through ``send_request`` and
  awaited, with a timeout (`Context.ask` does this when the request belongs to
  a session).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..jsonrpc import InvalidParams, InvalidRequest, MethodNotFound, Request
from ..protocol import LEGACY_VERSIONS, methods
from ..protocol.meta import LOG_LEVELS, PROGRESS_TOKEN, RequestMeta
from ._authorization import authorize
from ._failures import ClientRequestFailed
from ._legacy_2024 import OLDEST, initialize_result, legacy_result, reshape, reshape_emit
from ._pipeline import closed, observe_answer, opened
from ._reply import ServerBusy
from ._settings import DEFAULT_CLIENT_REQUEST_TIMEOUT, DEFAULT_MAX_SESSION_SUBSCRIPTIONS

if TYPE_CHECKING:
    import asyncio

    from ..protocol.observers import Observer, ObservedSession
    from ._context import Emit
    from ._server import Server

__all__ = [
    "LegacySession",
    "ClientRequestFailed",
    "LEGACY_ONLY_METHODS",
    "DEFAULT_CLIENT_REQUEST_TIMEOUT",
    "DEFAULT_MAX_SESSION_SUBSCRIPTIONS",
    "DEFAULT_MAX_SUBSCRIPTION_URI",
]

#: Methods that exist only inside a legacy session.
LEGACY_ONLY_METHODS = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
#: Modern methods a legacy session does not have.
_MODERN_ONLY = frozenset({methods.DISCOVER, methods.SUBSCRIPTIONS_LISTEN})
#: What a session answers itself, without a handler (observers see these with ``internal`` true).
ANSWERED_HERE = LEGACY_ONLY_METHODS | _MODERN_ONLY
#: Characters of a URI a session may subscribe to.
DEFAULT_MAX_SUBSCRIPTION_URI = 2048

SendRequest = Callable[[str, dict[str, Any]], Awaitable[Any]]
Notify = Callable[[str, dict[str, Any]], None]

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


class LegacySession:
    """One initialized legacy session."""

    def __init__(
        self,
        server: Server,
        send_request: SendRequest,
        notify: Notify,
        *,
        session_id: str | None = None,
        request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT,
        observers: tuple[Observer, ...] = (),
    ) -> None:
        self.server = server
        self.send_request = send_request
        self.notify = notify
        self.id = session_id
        self.request_timeout = request_timeout
        self.version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] | None = None
        #: Until ``logging/setLevel``: the server's ``legacy_log_level`` ("debug" by default: every
        #: message, as the official SDK's servers send them; None sends none).
        self.log_level: str | None = server.legacy_log_level
        self.initialized = False
        self.subscriptions: set[str] = set()
        #: Caps on ``resources/subscribe`` (the transport may set others once the session is open).
        self.max_subscriptions = DEFAULT_MAX_SESSION_SUBSCRIPTIONS
        self.max_subscription_uri = DEFAULT_MAX_SUBSCRIPTION_URI
        self._unsubscribe: Callable[[], None] | None = None
        #: Set by a transport whose streams can be closed and resumed (HTTP, 2025-11-25
        #: resumability): ``close_stream(request_id, retry_ms) -> bool``.
        self.close_stream: Callable[[Any, int | None], bool] | None = None
        #: The server's observers (`Server.freeze`), and what they were told when this session opened.
        self._observers = observers
        self._observed: ObservedSession | None = opened(observers, self) if observers else None

    # -- the handshake ----------------------------------------------------------

    def initialize(self, request: Request) -> dict[str, Any]:
        """Answer ``initialize`` (negotiate the version); InvalidRequest when repeated, InvalidParams when malformed."""
        if self.version is not None:
            raise InvalidRequest("Invalid Request: this session is already initialized", id=request.id)
        params = request.params or {}
        requested = params.get("protocolVersion")
        if type(requested) is not str:
            raise InvalidParams("Invalid params: initialize needs 'protocolVersion', a string")
        caps = params.get("capabilities", {})
        if type(caps) is not dict:
            raise InvalidParams("Invalid params: initialize 'capabilities' must be an object")
        info = params.get("clientInfo")
        if info is not None and type(info) is not dict:
            raise InvalidParams("Invalid params: initialize 'clientInfo' must be an object")
        self.version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
        self.client_capabilities = caps
        self.client_info = info
        self._unsubscribe = self.server.bus.subscribe(self._deliver)
        result: dict[str, Any] = {
            "protocolVersion": self.version,
            "capabilities": self.server.legacy_capabilities(),
            "serverInfo": self.server.server_info,
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        if self.version == OLDEST:
            result = initialize_result(result)
        return result

    def close(self) -> None:
        """The session is over (connection closed, DELETE, expiry)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        observed = self._observed
        if observed is not None:  # once: a session may be closed again
            self._observed = None
            closed(self._observers, self, observed)

    # -- requests inside the session ----------------------------------------------

    def handle(self, request: Request, emit: Emit | None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Serve a 2025-11-25 request of the session; its result (or an awaitable of it)."""
        if self._observers and request.method in ANSWERED_HERE:  # what `_serve` answers itself, observed
            return observe_answer(self._observers, self, request, emit, self._serve)
        return self._serve(request, emit)

    def _serve(self, request: Request, emit: Emit | None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        method = request.method
        if method == "initialize":
            return self.initialize(request)
        if method == "ping":
            return {}
        params = request.params if request.params is not None else {}
        if method == "logging/setLevel":
            level = params.get("level")
            if level not in LOG_LEVELS:
                raise InvalidParams(f"Invalid params: 'level' must be one of {', '.join(LOG_LEVELS)}")
            self.log_level = level
            return {}
        if method in ("resources/subscribe", "resources/unsubscribe"):
            authorize(self.server, method, params)  # the one door (see _authorization)
            uri = params.get("uri")
            if type(uri) is not str:
                raise InvalidParams(f"Invalid params: {method} needs 'uri', a string")
            if method == "resources/subscribe":
                self._subscribe(uri)
            else:
                self.subscriptions.discard(uri)
            return {}
        if method in _MODERN_ONLY:
            raise MethodNotFound(f"Method not found: {method!r} belongs to MCP 2026-07-28, not to a {self.version} session")
        if self.version == OLDEST:  # what a 2024-11-05 client reads differently (_legacy_2024)
            return legacy_result(reshape(method, self.server.handle_in_session(request, params, self.request_meta(params), reshape_emit(emit))))
        return legacy_result(self.server.handle_in_session(request, params, self.request_meta(params), emit))

    def _subscribe(self, uri: str) -> None:
        if uri in self.subscriptions:
            return
        if len(uri) > self.max_subscription_uri:
            raise InvalidParams(
                f"Invalid params: the uri is {len(uri)} characters; this server subscribes to URIs of at most "
                f"{self.max_subscription_uri}"
            )
        if len(self.subscriptions) >= self.max_subscriptions:
            raise ServerBusy(
                f"Server busy: this session holds {len(self.subscriptions)} resource subscriptions, the most it "
                f"may ({self.max_subscriptions}); unsubscribe from one first"
            )
        self.subscriptions.add(uri)

    def request_meta(self, params: dict[str, Any]) -> RequestMeta:
        """Per-request protocol fields, filled from the session instead of ``_meta``."""
        raw = params.get("_meta")
        raw = raw if type(raw) is dict else {}
        token = raw.get(PROGRESS_TOKEN)
        if token is not None and type(token) is not str and type(token) is not int:
            raise InvalidParams("Invalid params: 'progressToken' must be a string or an integer")
        meta = RequestMeta(self.version or LEGACY_VERSIONS[0], self.client_capabilities, self.client_info, self.log_level, token, raw, "legacy")
        meta.session = self
        return meta

    def close_sse_stream(self, request_id: Any, retry_ms: int | None = None) -> bool:
        """Close the connection carrying ``request_id``'s SSE stream, not the stream itself.

        The client reconnects after ``retry_ms`` and resumes the stream with
        ``Last-Event-ID`` (2025-11-25 basic/transports.mdx, "Resumability and
        Redelivery"). Returns whether a connection was closed: never on
        transports without such streams (stdio).
        """
        hook = self.close_stream
        return hook(request_id, retry_ms) if hook is not None else False

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Send each input request to the client and wait for all the answers."""

        import asyncio  # imported by then: on first use, not at start-up
        async def one(request: dict[str, Any]) -> Any:
            import asyncio  # imported by then: on first use, not at start-up
            return await asyncio.wait_for(
                self.send_request(request["method"], request.get("params") or {}), self.request_timeout
            )

        keys = list(requests)
        answers = await asyncio.gather(*(one(requests[k]) for k in keys))
        return dict(zip(keys, answers))

    # -- notifications to the session ---------------------------------------------

    def _deliver(self, event: Any) -> None:
        if event is None:
            return
        kind, uri = event
        if kind == "updated":
            if uri in self.subscriptions:
                self.notify("notifications/resources/updated", {"uri": uri})
        elif self.initialized or self.version is not None:
            self.notify(_LIST_CHANGED[kind], {})
