"""OAuth on the MCP endpoint: the protected resource metadata, 401 and 403 (basic/authorization/).

`AuthGate` applies a ``wiremcp.auth.server.ResourceServer`` to the requests
`MCPApp` receives. It hooks into `MCPApp` at two places:

1. ``MCPApp._http``, first thing after the path is known: `AuthGate.gate`
   serves the metadata document at its well-known paths (``GET``/``HEAD``;
   405 otherwise) and, for the endpoint, authenticates every request
   whatever its method (POST, and a legacy session's GET and DELETE).
   Refused: 401 (no or invalid token), 403 (``required_scopes`` missing),
   400 (malformed credentials) or 503 (the authorization server cannot be
   reached), each with ``WWW-Authenticate`` and a JSON-RPC error body without
   an id; a 401 ``use_dpop_nonce`` also carries ``DPoP-Nonce``. Accepted: the token is put in ``wiremcp.server.transport.current_auth`` for
   the rest of the request (``ctx.auth``) and the app carries on, with a
   ``send`` that adds the current ``DPoP-Nonce`` to the answer when the
   proof carried an older nonce (RFC 9449 section 8; `ResourceServer.fresh_nonce`);
2. ``MCPApp._request``, where `Server.handle` raised (`AuthGate.scoped`): a
   ``wiremcp.server.InsufficientScope`` (a tool, resource, prompt or task
   whose ``scopes`` the token lacks; see ``server._authorization``) becomes
   403 with ``error="insufficient_scope"`` and every scope the operation
   needs, the body being the JSON-RPC error for the request's id
   (`AuthGate.forbidden`). A refusal raised after an await (a task's scopes
   need the task store) is answered the same way, unless the reply already
   started streaming (then it is the JSON-RPC error in the stream).

A legacy (2025-11-25) session belongs to the principal whose token opened
it: `principal` (issuer, subject, client id of ``current_auth``) is kept by
the session, and a request under the session id with a token for anyone
else is answered as for an unknown session, 404 (security best practices,
"Session Hijacking": bind the session to the user). A session id is never
a credential: the token is checked first, on every request.

Without a ``ResourceServer``, `warn_if_unprotected` logs a warning when the
server's tools, resources or prompts declare ``scopes`` (nothing enforces them).

The metadata is served with ``Access-Control-Allow-Origin: *`` (RFC 9728
is public metadata; browsers' MCP clients read it) and a one-hour cache
lifetime. Tokens are never logged; refusals are logged with their reason.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable

import orjson

from ...jsonrpc import Request
from ...server import InsufficientScope, Server
from ...server.transport import current_auth, reply_failed
from ._asgi import Message, Scope, Send, http_error, json_reply

if TYPE_CHECKING:  # imported when an AuthGate is made: an endpoint without auth never loads them
    from ...auth.server import AuthError, ResourceServer

__all__ = ["AuthGate", "warn_if_unprotected", "principal"]

log = logging.getLogger("wiremcp.auth")

_METADATA_HEADERS = (
    (b"access-control-allow-origin", b"*"),
    (b"cache-control", b"public, max-age=3600"),
)


class AuthGate:
    """A `ResourceServer` applied to one MCP endpoint (see the module docs)."""

    __slots__ = ("rs", "endpoint", "metadata_paths", "_document", "_error")

    def __init__(self, rs: ResourceServer, endpoint: str) -> None:
        from ...auth.server import METADATA_WELL_KNOWN, AuthError

        self._error = AuthError
        self.rs = rs
        self.endpoint = endpoint
        self.metadata_paths = frozenset({rs.metadata_path, METADATA_WELL_KNOWN})
        self._document = orjson.dumps(rs.metadata())

    async def gate(self, scope: Scope, path: str, send: Send) -> Send | None:
        """Answer the request here (metadata, refusal: None) or let the app serve it: the ``send``
        it answers with (``send`` itself, or one that adds a fresh ``DPoP-Nonce``)."""
        if path != self.endpoint:
            if path in self.metadata_paths or scope["path"] in self.metadata_paths:
                await self._metadata(scope["method"], send)
                return None
            return send
        authorization: list[str] = []
        dpop: list[str] = []
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization.append(value.decode("latin-1"))
            elif name == b"dpop":
                dpop.append(value.decode("latin-1"))
        query = scope.get("query_string", b"")
        try:
            token = await self.rs.authenticate(
                authorization, dpop, method=scope["method"], query=query.decode("latin-1") if query else ""
            )
        except self._error as exc:
            used_dpop = bool(authorization) and authorization[0].lstrip().lower().startswith("dpop ")
            await self.refuse(send, exc, dpop_scheme=used_dpop)
            return None
        current_auth.set(token)
        nonce = self.rs.fresh_nonce(dpop) if dpop and self.rs.nonces is not None else None
        return send if nonce is None else _with_header(send, (b"dpop-nonce", nonce.encode("ascii")))

    async def _metadata(self, method: str, send: Send) -> None:
        if method in ("GET", "HEAD"):
            body = self._document
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            headers.extend(_METADATA_HEADERS)
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body if method == "GET" else b""})
            return
        await json_reply(
            send, 405, http_error("Method Not Allowed: the resource metadata is read with GET"), ((b"allow", b"GET, HEAD"),)
        )

    async def refuse(self, send: Send, exc: AuthError, *, dpop_scheme: bool = False, body: bytes | None = None) -> None:
        log.info("refused a request: %s (%s)", exc.reason, exc.message)
        challenge = self.rs.challenge(exc, dpop_scheme=dpop_scheme).encode("latin-1", "replace")
        status = exc.status
        if body is None:
            body = http_error(f"{_STATUS_TEXT.get(status, 'Unauthorized')}: {exc.message}")
        headers = [(b"www-authenticate", challenge)]
        nonce = self.rs.dpop_nonce() if exc.reason == "use_dpop_nonce" else None
        if nonce is not None:  # RFC 9449 section 9: the nonce the proof must carry
            headers.append((b"dpop-nonce", nonce.encode("ascii")))
        await json_reply(send, status, body, tuple(headers))

    async def forbidden(self, send: Send, request_id: Any, exc: InsufficientScope) -> None:
        """403 for an operation whose ``scopes`` the token lacks (hook 2 in the module docs)."""
        needed = self.rs.needed_scopes(exc.scopes)
        refusal = self._error("insufficient_scope", exc.message, scopes=needed)
        # A DPoP-bound token was only accepted with the DPoP scheme: challenge in that scheme.
        token = current_auth.get()
        cnf = getattr(token, "cnf", None)
        bound = cnf is not None and "jkt" in cnf
        await self.refuse(send, refusal, dpop_scheme=bound, body=reply_failed(request_id, exc)[0])


    @staticmethod
    def scoped(handle: Any, refused: list[InsufficientScope], request: Request, emit: Any) -> Any:
        """``handle`` that records an `InsufficientScope` it raises, at once or after an await (hook 2)."""
        try:
            out = handle(request, emit)
        except InsufficientScope as exc:
            refused.append(exc)
            raise
        return out if type(out) is dict else _scoped_later(out, refused)


async def _scoped_later(pending: Awaitable[dict[str, Any]], refused: list[InsufficientScope]) -> dict[str, Any]:
    try:
        return await pending
    except InsufficientScope as exc:  # a check that needs the store (a task's scopes): `MCPApp._stream` answers 403
        refused.append(exc)
        raise


def _with_header(send: Send, header: tuple[bytes, bytes]) -> Send:
    """``send`` adding ``header`` to the response's head."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), header]}
        await send(message)

    return sending


def principal() -> tuple[str | None, str | None, str | None] | None:
    """Whom the current request's verified token speaks for: (issuer, subject, client id); None without auth."""
    token = current_auth.get()
    if token is None:
        return None
    return (getattr(token, "issuer", None), getattr(token, "subject", None), getattr(token, "client_id", None))


def warn_if_unprotected(server: Server) -> None:
    """Log a warning when operations declare ``scopes`` but the endpoint checks no token.

    Without a `ResourceServer` nothing is enforced: such a server is open to anyone who can
    reach it. (Checked when the app is made; operations registered later are not seen.)
    """
    scoped = [
        *(f"tool {t.name!r}" for t in server.tools.values() if t.scopes),
        *(f"resource {r.uri!r}" for r in (*server.resources.values(), *server.resource_templates.values()) if r.scopes),
        *(f"prompt {p.name!r}" for p in server.prompts.values() if p.scopes),
    ]
    if scoped:
        log.warning(
            "%s declare OAuth scopes, but this HTTP endpoint has no auth (Server(auth=...) or "
            "MCPApp(auth=...)): the scopes are not enforced and anyone who reaches it may call them",
            ", ".join(scoped),
        )


_STATUS_TEXT = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}
