"""An MCP server whose users sign in with GitHub, Google, Entra ID, Auth0, Okta, Keycloak, WorkOS or any OIDC provider.

The OAuth proxy (docs/auth-proxy.md) in front of a provider preset
(docs/auth-providers.md), configured from ``WIREMCP_AUTH_*`` settings:

``WIREMCP_AUTH_PROVIDER``
    ``github``, ``google``, ``entra``, ``auth0``, ``okta``, ``keycloak``, ``workos`` or ``oidc``;
``WIREMCP_AUTH_PROXY_CLIENT_ID`` / ``WIREMCP_AUTH_PROXY_CLIENT_SECRET``
    the proxy's client at the provider, registered with the redirect URI
    ``{WIREMCP_AUTH_PROXY_URL}/oauth/callback``;
``WIREMCP_AUTH_TENANT``, ``WIREMCP_AUTH_DOMAIN``, ``WIREMCP_AUTH_REALM``... (per provider)
    where the provider is (docs/auth-providers.md lists them);
``WIREMCP_AUTH_ROLE_SCOPES`` (optional)
    roles or groups mapped to this server's scopes, e.g.
    ``notes-admin=notes:read notes:write; notes-reader=notes:read``;
``WIREMCP_AUTH_PROXY_URL``
    this server's origin, e.g. ``http://127.0.0.1:8000`` (the MCP endpoint is ``/mcp``);
``WIREMCP_AUTH_PROXY_STORE`` (optional)
    the SQLite file of the proxy's records (default: the user's state directory);
``WIREMCP_STATE_KEY``
    the key the records are sealed with (16 bytes at least).

Run it with::

    python examples/oauth_provider.py
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import wiremcp
from wiremcp.auth.proxy import OAuthProxy, upstream_from_settings
from wiremcp.server.storage import SQLiteStore
from wiremcp.transports.http import MCPApp

URL = os.environ.get("WIREMCP_AUTH_PROXY_URL", "http://127.0.0.1:8000")

proxy = OAuthProxy(
    upstream_from_settings(),  # WIREMCP_AUTH_PROVIDER, WIREMCP_AUTH_PROXY_CLIENT_ID, ...
    issuer=URL,
    resource=URL + "/mcp",
    scopes=["notes:read", "notes:write"],
    store=SQLiteStore(os.environ.get("WIREMCP_AUTH_PROXY_STORE")),
    server_name="the notes server",
)
server = wiremcp.Server("notes", version="1.0.0", auth=proxy.resource_server(leeway=float(os.environ.get("WIREMCP_AUTH_LEEWAY", "60"))))


@server.tool(scopes=["notes:read"])
def whoami(ctx: wiremcp.Context) -> dict[str, object]:
    """Who signed in at the provider: their id there, email and roles, and the scopes they were granted."""
    token = ctx.auth
    assert token is not None
    return {"subject": token.subject, "email": token.claims.get("email"), "roles": token.claims.get("roles"),
            "scopes": sorted(token.scopes)}


@server.tool(scopes=["notes:write"])
def add_note(text: str, ctx: wiremcp.Context) -> str:
    """Add a note (needs notes:write, which only some roles map to)."""
    return f"noted for {ctx.auth.subject if ctx.auth else '?'}: {text}"


app = proxy.asgi(MCPApp(server, path="/mcp"))

if __name__ == "__main__":
    import uvicorn

    parts = urlsplit(URL)
    uvicorn.run(app, host=parts.hostname or "127.0.0.1", port=parts.port or 8000, log_level="warning")
