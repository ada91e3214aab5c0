"""A remote server with authorization (docs/tutorials/remote-auth.md).

    WIREMCP_AUTH_ISSUER=https://auth.example.com WIREMCP_AUTH_RESOURCE=https://mcp.example.com/mcp \\
        wiremcp run examples/tutorials/remote_auth.py --http

Every request needs an OAuth 2.1 access token: a JWT signed by the issuer's
keys (``WIREMCP_AUTH_JWKS_URI``, else the issuer's metadata) whose audience is
this server's URI and which has the ``notes:read`` scope; ``add_note`` also
needs ``notes:write``.
"""

from __future__ import annotations

import os

import wiremcp
from wiremcp.auth.server import JWTVerifier, ResourceServer

ISSUER = os.environ.get("WIREMCP_AUTH_ISSUER", "https://auth.example.com")
RESOURCE = os.environ.get("WIREMCP_AUTH_RESOURCE", "http://127.0.0.1:8000/mcp")

auth = ResourceServer(
    JWTVerifier(issuer=ISSUER, resource=RESOURCE, jwks_uri=os.environ.get("WIREMCP_AUTH_JWKS_URI")),
    resource=RESOURCE,
    authorization_servers=[ISSUER],
    scopes_supported=["notes:read", "notes:write"],
    required_scopes=["notes:read"],
)
server = wiremcp.Server("team-notes", version="1.0.0", auth=auth)
NOTES: list[str] = []


@server.tool
def whoami(ctx: wiremcp.Context) -> str:
    """Who the verified token says the caller is."""
    return ctx.auth.subject if ctx.auth else "nobody (stdio has no tokens)"


@server.tool
def list_notes() -> list[str]:
    """Every note."""
    return NOTES


@server.tool(scopes=["notes:write"])
def add_note(text: str, ctx: wiremcp.Context) -> str:
    """Add a note (needs the notes:write scope)."""
    NOTES.append(f"{text} (by {ctx.auth.subject if ctx.auth else 'nobody'})")
    return "added"


if __name__ == "__main__":
    wiremcp.run(server, "http")
