"""An MCP server whose users sign in at another provider, through wiremcp's OAuth proxy.

MCP clients register with the proxy (RFC 7591) and authorize against it; the
proxy asks each user's consent for each client, sends them to the upstream
provider with its one pre-registered client, and issues its own tokens for
this server. docs/auth-proxy.md explains it. Configured from the environment:

``WIREMCP_AUTH_PROXY_URL``
    this server's origin, e.g. ``http://127.0.0.1:8000`` (the MCP endpoint is ``/mcp``);
``WIREMCP_AUTH_PROXY_UPSTREAM``
    the upstream provider's issuer URL (its endpoints are discovered);
``WIREMCP_AUTH_PROXY_CLIENT_ID`` / ``WIREMCP_AUTH_PROXY_CLIENT_SECRET``
    the proxy's client at the upstream provider, registered there with the
    redirect URI ``{WIREMCP_AUTH_PROXY_URL}/oauth/callback``;
``WIREMCP_AUTH_PROXY_UPSTREAM_RESOURCE`` (optional)
    the resource indicator to ask upstream tokens for;
``WIREMCP_AUTH_PROXY_INTROSPECT`` (optional, ``1``)
    the upstream access tokens are opaque: learn the user by introspection;
``WIREMCP_AUTH_PROXY_STORE`` (optional)
    the SQLite file for the proxy's records (default: the user's state directory);
``WIREMCP_STATE_KEY``
    the key the records are sealed with (16 bytes at least);
``WIREMCP_AUTH_PROXY_TOKEN_LIFETIME`` / ``WIREMCP_AUTH_LEEWAY`` (optional)
    seconds the proxy's access tokens live (default 300), and the clock skew
    tolerated when they are checked (default 60).

Run it with::

    python examples/oauth_proxy.py
"""

from __future__ import annotations

import asyncio
import os
from urllib.parse import urlsplit

import wiremcp
from wiremcp.auth.proxy import OAuthProxy, Upstream
from wiremcp.auth.server import IntrospectionVerifier, JWTVerifier, TokenVerifier
from wiremcp.server.storage import SQLiteStore
from wiremcp.transports.http import MCPApp

URL = os.environ.get("WIREMCP_AUTH_PROXY_URL", "http://127.0.0.1:8000")
UPSTREAM = os.environ.get("WIREMCP_AUTH_PROXY_UPSTREAM", "")
CLIENT_ID = os.environ.get("WIREMCP_AUTH_PROXY_CLIENT_ID", "")
CLIENT_SECRET = os.environ.get("WIREMCP_AUTH_PROXY_CLIENT_SECRET", "")
UPSTREAM_RESOURCE = os.environ.get("WIREMCP_AUTH_PROXY_UPSTREAM_RESOURCE") or None

if not UPSTREAM or not CLIENT_ID or not CLIENT_SECRET:
    raise RuntimeError(
        "examples/oauth_proxy.py needs WIREMCP_AUTH_PROXY_UPSTREAM (the upstream provider's issuer) and the proxy's "
        "client there: WIREMCP_AUTH_PROXY_CLIENT_ID, WIREMCP_AUTH_PROXY_CLIENT_SECRET"
    )


def upstream_verifier() -> TokenVerifier:
    """How the proxy learns who signed in: the upstream access token, verified."""
    audience = UPSTREAM_RESOURCE or UPSTREAM
    if os.environ.get("WIREMCP_AUTH_PROXY_INTROSPECT") == "1":
        return IntrospectionVerifier(issuer=UPSTREAM, resource=audience, client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    return JWTVerifier(issuer=UPSTREAM, resource=audience)


upstream = asyncio.run(
    Upstream.discover(
        UPSTREAM, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, verifier=upstream_verifier(),
        scopes=("openid", "notes"), resource=UPSTREAM_RESOURCE,
    )
)
proxy = OAuthProxy(
    upstream,
    issuer=URL,
    resource=URL + "/mcp",
    scopes=["notes:read", "notes:write"],
    store=SQLiteStore(os.environ.get("WIREMCP_AUTH_PROXY_STORE")),
    server_name="the notes server",
    access_token_lifetime=int(os.environ.get("WIREMCP_AUTH_PROXY_TOKEN_LIFETIME", "300")),
)
server = wiremcp.Server("notes", version="1.0.0", auth=proxy.resource_server(leeway=float(os.environ.get("WIREMCP_AUTH_LEEWAY", "60"))))
NOTES: dict[str, list[str]] = {}


@server.tool(scopes=["notes:read"])
def whoami(ctx: wiremcp.Context) -> dict[str, object]:
    """Who the proxy's token says the caller is: the upstream user, the MCP client, the scopes."""
    token = ctx.auth
    assert token is not None
    return {"subject": token.subject, "client_id": token.client_id, "scopes": sorted(token.scopes)}


@server.tool(scopes=["notes:write"])
def add_note(text: str, ctx: wiremcp.Context) -> int:
    """Add a note for the signed-in user; how many they have."""
    assert ctx.auth is not None and ctx.auth.subject is not None
    NOTES.setdefault(ctx.auth.subject, []).append(text)
    return len(NOTES[ctx.auth.subject])


app = proxy.asgi(MCPApp(server, path="/mcp"))

if __name__ == "__main__":
    import uvicorn

    parts = urlsplit(URL)
    uvicorn.run(app, host=parts.hostname or "127.0.0.1", port=parts.port or 8000, log_level="warning")
