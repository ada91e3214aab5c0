"""A tiny MCP-over-HTTP ASGI app, broken on demand, for the probes of cli/_check/_http_security.py.

``uvicorn broken_http:app`` serves ``/mcp``. ``BROKEN`` (comma-separated)
says which defences it lacks; with ``BROKEN`` empty it keeps them all:

host              answers any ``Host`` (else only 127.0.0.1 / localhost)
origin            answers any ``Origin`` (else a foreign one gets 403)
origin-400        refuses a foreign ``Origin`` with 400 instead of 403
cors-reflect      grants a preflight to whatever origin asks, with credentials
cors-star         grants a preflight to ``*`` with credentials
session-seq       session ids ``session-1``, ``session-2``, ...
session-charset   session ids with a space in them
auth-*            (with ``CHECK_ISSUER``, the issuer URL, and ``CHECK_URL``, its own URL: a
                  protected server) ``auth-audience``, ``auth-expired``, ``auth-signature``,
                  ``auth-unsigned``: that check of a token skipped; ``auth-no-challenge``:
                  401 without ``WWW-Authenticate``; ``auth-no-metadata``: no RFC 9728 document

Every JSON-RPC request gets an empty result; ``initialize`` opens a session.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import urllib.request
from typing import Any, Awaitable, Callable

BROKEN = {flag.strip() for flag in os.environ.get("BROKEN", "").split(",") if flag.strip()}
ISSUER = os.environ.get("CHECK_ISSUER")
URL = os.environ.get("CHECK_URL", "")
METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
_counter = itertools.count(1)
_keys: list[Any] = []

Send = Callable[[dict[str, Any]], Awaitable[None]]


def session_id() -> str:
    if "session-seq" in BROKEN:
        return f"session-{next(_counter)}"
    if "session-charset" in BROKEN:
        return "id " + secrets.token_urlsafe(32)
    return secrets.token_urlsafe(32)


def foreign(headers: dict[str, str]) -> int | None:
    """The status refusing a request from a foreign Host or Origin, or None."""
    host = headers.get("host", "").rsplit(":", 1)[0]
    if "host" not in BROKEN and host not in ("127.0.0.1", "localhost"):
        return 403
    origin = headers.get("origin")
    local = origin is None or origin.split("://", 1)[-1].rsplit(":", 1)[0] in ("127.0.0.1", "localhost")
    if "origin" not in BROKEN and not local:
        return 400 if "origin-400" in BROKEN else 403
    return None


def verify(token: str) -> bool:
    import jwt

    try:
        if jwt.get_unverified_header(token).get("alg") == "none":
            return "auth-unsigned" in BROKEN and bool(jwt.decode(token, options={"verify_signature": False}))
        if not _keys:
            with urllib.request.urlopen(f"{ISSUER}/jwks", timeout=10) as got:
                _keys.extend(jwt.PyJWK(k).key for k in json.load(got)["keys"])
        options = {
            "verify_signature": "auth-signature" not in BROKEN,
            "verify_aud": "auth-audience" not in BROKEN,
            "verify_exp": "auth-expired" not in BROKEN,
        }
        jwt.decode(token, _keys[0], algorithms=["ES256"], audience=URL, issuer=ISSUER, options=options)
        return True
    except jwt.PyJWTError:
        return False


def unauthorized(headers: dict[str, str]) -> list[tuple[bytes, bytes]] | None:
    """The 401's headers when the request needs a token it lacks, else None."""
    if ISSUER is None:
        return None
    value = headers.get("authorization", "")
    if value.startswith("Bearer ") and verify(value[len("Bearer "):]):
        return None
    if "auth-no-challenge" in BROKEN:
        return []
    origin = URL.rsplit("/mcp", 1)[0]
    return [(b"www-authenticate", f'Bearer resource_metadata="{origin}{METADATA_PATH}", scope="mcp"'.encode())]


async def respond(send: Send, status: int, body: Any = None, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = b"" if body is None else json.dumps(body).encode()
    kind = [(b"content-type", b"application/json")] if body is not None else []
    await send({"type": "http.response.start", "status": status, "headers": kind + (headers or [])})
    await send({"type": "http.response.body", "body": data})


def preflight(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    origin = headers.get("origin", "")
    if "cors-reflect" in BROKEN:
        return [(b"access-control-allow-origin", origin.encode()), (b"access-control-allow-credentials", b"true")]
    if "cors-star" in BROKEN:
        return [(b"access-control-allow-origin", b"*"), (b"access-control-allow-credentials", b"true")]
    return []


async def app(scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], send: Send) -> None:
    if scope["type"] != "http":
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    method, path = scope["method"], scope["path"]
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    if path == METADATA_PATH and ISSUER is not None and "auth-no-metadata" not in BROKEN:
        return await respond(send, 200, {"resource": URL, "authorization_servers": [ISSUER], "scopes_supported": ["mcp"]})
    if path != "/mcp":
        return await respond(send, 404, {"error": "not found"})
    if method == "OPTIONS":
        return await respond(send, 204 if preflight(headers) else 405, None, preflight(headers))
    refused = foreign(headers)
    if refused is not None:
        return await respond(send, refused, {"jsonrpc": "2.0", "error": {"code": -32600, "message": "forbidden"}})
    challenge = unauthorized(headers)
    if challenge is not None:
        return await respond(send, 401, {"error": "invalid_token"}, challenge)
    if method == "DELETE":
        return await respond(send, 200)
    if method != "POST":
        return await respond(send, 405)
    message = json.loads(body)
    extra = [(b"mcp-session-id", session_id().encode())] if message.get("method") == "initialize" else []
    await respond(send, 200, {"jsonrpc": "2.0", "id": message.get("id"), "result": {}}, extra)
