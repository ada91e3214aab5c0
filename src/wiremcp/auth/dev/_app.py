"""The local issuer over HTTP: an ASGI app with three routes (served by uvicorn, `_serve`).

Rules it keeps:

* ``GET /.well-known/oauth-authorization-server``: the RFC 8414 metadata;
  ``GET /jwks``: the public key set; ``POST /token``: the token endpoint
  (`DevIssuer.token_response`); any other path is 404, another method 405;
* the token request is ``application/x-www-form-urlencoded``, at most 64 KiB
  (413 past it); a parameter given twice is ``invalid_request`` (RFC 6749
  section 3.2); client credentials come from HTTP Basic (each half
  form-urldecoded, RFC 6749 section 2.3.1) or from the form, never both;
* every answer is JSON with ``Cache-Control: no-store``; a 401 carries
  ``WWW-Authenticate: Basic``.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import orjson

from .._form import MAX_FORM_BYTES, RepeatedParameter, basic_credentials, form_pairs, read_body
from ._issuer import JWKS_PATH, METADATA_PATH, TOKEN_PATH, DevIssuer

__all__ = ["issuer_app", "MAX_FORM_BYTES"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def issuer_app(issuer: DevIssuer) -> ASGIApp:
    """The ASGI application serving ``issuer``."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan and websockets: nothing to do
            return
        path, method = scope["path"], scope["method"]
        if path in (METADATA_PATH, JWKS_PATH):
            if method != "GET":
                return await _answer(send, 405, {"error": "method_not_allowed"}, [(b"allow", b"GET")])
            return await _answer(send, 200, issuer.metadata() if path == METADATA_PATH else issuer.jwks())
        if path != TOKEN_PATH:
            return await _answer(send, 404, {"error": "not_found"})
        if method != "POST":
            return await _answer(send, 405, {"error": "method_not_allowed"}, [(b"allow", b"POST")])
        body = await read_body(receive)
        if body is None:
            return await _answer(send, 413, {"error": "invalid_request", "error_description": "the form is over 64 KiB"})
        status, answer = _token(issuer, scope, body)
        extra = [(b"www-authenticate", b'Basic realm="wiremcp dev issuer"')] if status == 401 else []
        await _answer(send, status, answer, extra)

    return app


def _token(issuer: DevIssuer, scope: Scope, body: bytes) -> tuple[int, dict[str, Any]]:
    headers = dict(scope["headers"])
    if headers.get(b"content-type", b"").split(b";")[0].strip().lower() != b"application/x-www-form-urlencoded":
        return 400, _invalid("the token request is application/x-www-form-urlencoded")
    try:
        form = form_pairs(body.decode("utf-8"))
    except RepeatedParameter as exc:
        return 400, _invalid(str(exc))
    except ValueError:  # UnicodeDecodeError included
        return 400, _invalid("the form does not parse")
    try:
        basic = basic_credentials(headers.get(b"authorization"))
    except ValueError:
        return 401, {"error": "invalid_client", "error_description": "the Authorization header is not HTTP Basic"}
    if basic is not None:
        if "client_secret" in form:
            return 400, _invalid("authenticate one way: HTTP Basic or client_secret in the form, not both")
        client_id: str | None = basic[0]
        secret: str | None = basic[1]
    else:
        client_id, secret = form.get("client_id"), form.get("client_secret")
    return issuer.token_response(form, client_id, secret)


def _invalid(description: str) -> dict[str, Any]:
    return {"error": "invalid_request", "error_description": description}


async def _answer(send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = orjson.dumps(body)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
