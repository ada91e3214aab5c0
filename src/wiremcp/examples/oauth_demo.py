"""A protected MCP server with its own toy authorization server, to try `wiremcp.auth` locally.

    python examples/oauth_demo.py --port 8765
    # then: Client.http("http://127.0.0.1:8765/mcp", auth=OAuthClient())   (docs/auth.md)

Everything runs in one process on 127.0.0.1 with no user interaction: the
authorization endpoint approves every request at once (so the headless
redirect handler can follow it). It publishes protected resource metadata
(RFC 9728), authorization server metadata (RFC 8414), dynamic client
registration (RFC 7591), the authorization code grant with PKCE S256 and
``iss`` (RFC 9207), and checks the ``resource`` (RFC 8707) and the bearer
token on every MCP request. It is a demonstration, not a security boundary:
tokens are random strings kept in memory, there are no users and no consent.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode

import wiremcp
from wiremcp.transports.http import asgi_app

server = wiremcp.Server("oauth-demo", version="1.0.0")


@server.tool()
def whoami() -> str:
    """Say who the token belongs to."""
    return "an authorized client"


def make_app(base: str) -> Any:
    mcp = asgi_app(server)
    resource = base + "/mcp"
    codes: dict[str, dict[str, str]] = {}
    tokens: set[str] = set()

    async def send_json(send: Any, status: int, body: Any, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), *headers]})
        await send({"type": "http.response.body", "body": data})

    async def read_form(receive: Any) -> dict[str, Any]:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if body[:1] == b"{":
            doc: dict[str, Any] = json.loads(body)
            return doc
        return {k: v[0] for k, v in parse_qs(body.decode()).items()}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await mcp(scope, receive, send)
        path, method = scope["path"], scope["method"]
        if path == "/.well-known/oauth-protected-resource/mcp":
            return await send_json(send, 200, {"resource": resource, "authorization_servers": [base],
                                               "scopes_supported": ["demo"]})
        if path == "/.well-known/oauth-authorization-server":
            return await send_json(send, 200, {
                "issuer": base,
                "authorization_endpoint": base + "/authorize",
                "token_endpoint": base + "/token",
                "registration_endpoint": base + "/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
            })
        if path == "/register" and method == "POST":
            body = await read_form(receive)
            return await send_json(send, 201, {"client_id": secrets.token_urlsafe(8), **body})
        if path == "/authorize":
            q = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
            code = secrets.token_urlsafe(16)
            codes[code] = q
            location = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q.get("state", ""), "iss": base})
            await send({"type": "http.response.start", "status": 302, "headers": [(b"location", location.encode())]})
            await send({"type": "http.response.body", "body": b""})
            return
        if path == "/token" and method == "POST":
            form = await read_form(receive)
            request = codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "").encode()
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
            if request is None or challenge != request.get("code_challenge") or form.get("resource") != resource:
                return await send_json(send, 400, {"error": "invalid_grant"})
            token = secrets.token_urlsafe(24)
            tokens.add(token)
            return await send_json(send, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                                               "scope": request.get("scope", "")})
        if path == "/mcp":
            auth = dict(scope["headers"]).get(b"authorization", b"").decode()
            if not auth.startswith("Bearer ") or auth[7:] not in tokens:
                # RFC 6750 section 3: the challenge is in the header; the body stays empty.
                challenge_header = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="demo"'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"www-authenticate", challenge_header.encode()), (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return
            return await mcp(scope, receive, send)
        return await send_json(send, 404, {"error": "not_found"})

    return app


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    port = parser.parse_args().port
    uvicorn.run(make_app(f"http://127.0.0.1:{port}"), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
