"""An MCP server protected by OAuth: every request needs an access token with scope ``mcp``.

Configured from the environment:

``WIREMCP_AUTH_ISSUER``
    the authorization server's issuer URL; its ``jwks_uri`` is read from
    ``{issuer}/.well-known/oauth-authorization-server`` (OpenID Connect
    discovery as a fallback);
``WIREMCP_AUTH_RESOURCE``
    this server's canonical URI, e.g. ``http://127.0.0.1:8000/mcp``: tokens
    must name it in ``aud``;
``WIREMCP_AUTH_LEEWAY`` (optional)
    seconds of clock skew tolerated on ``exp``/``nbf``/``iat`` (default 60).

Tokens are JWTs (RFC 9068) signed RS256 or ES256 with ``iss``, ``aud``,
``exp`` and a space-separated ``scope``. Serve it over HTTP (authorization
is an HTTP matter; over stdio the tokens are not asked for)::

    WIREMCP_AUTH_ISSUER=https://auth.example.com \\
    WIREMCP_AUTH_RESOURCE=http://127.0.0.1:8000/mcp \\
    wiremcp run examples/protected.py --http --port 8000

To try it without an identity provider, ``wiremcp auth dev`` runs a local
issuer for development and prints these settings and a token (docs/auth.md,
"A local issuer for development")::

    wiremcp auth dev
    WIREMCP_AUTH_ISSUER=http://127.0.0.1:9400 WIREMCP_AUTH_RESOURCE=http://127.0.0.1:8000/mcp \\
        wiremcp run examples/protected.py --http --port 8000

The `ResourceServer` is given to the `Server` (``Server(auth=...)``), and
the HTTP transport reads it from there, so ``wiremcp run`` needs no option.
"""

from __future__ import annotations

import os
from typing import TypedDict

import wiremcp
from wiremcp.auth.server import JWTVerifier, ResourceServer


class Identity(TypedDict):
    subject: str | None
    client_id: str | None
    scopes: list[str]


def _resource_server() -> ResourceServer:
    issuer = os.environ.get("WIREMCP_AUTH_ISSUER")
    resource = os.environ.get("WIREMCP_AUTH_RESOURCE")
    if not issuer or not resource:
        raise RuntimeError(
            "examples/protected.py needs WIREMCP_AUTH_ISSUER (the authorization server) and "
            "WIREMCP_AUTH_RESOURCE (this server's canonical URI, e.g. http://127.0.0.1:8000/mcp)"
        )
    leeway = float(os.environ.get("WIREMCP_AUTH_LEEWAY", "60"))
    return ResourceServer(
        JWTVerifier(issuer=issuer, resource=resource, algorithms=["RS256", "ES256"], leeway=leeway),
        resource=resource,
        authorization_servers=[issuer],
        scopes_supported=["mcp", "admin"],
        required_scopes=["mcp"],
        resource_name="wiremcp protected example",
    )


server = wiremcp.Server("protected", version="1.0.0", auth=_resource_server())


@server.tool()
def whoami(ctx: wiremcp.Context) -> Identity:
    """Who the verified access token says the caller is."""
    token = ctx.auth
    if token is None:  # served over stdio: no token there
        return {"subject": None, "client_id": None, "scopes": []}
    return {"subject": token.subject, "client_id": token.client_id, "scopes": sorted(token.scopes)}


@server.tool(scopes=["admin"])
def admin_echo(text: str) -> str:
    """Return the text unchanged; needs the ``admin`` scope."""
    return text


if __name__ == "__main__":
    wiremcp.run(server, "http")
