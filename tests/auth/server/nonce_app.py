"""An ASGI app for test_dpop_nonce.py: tokens from the real authorization server, DPoP proofs with
this server's nonces required (``ResourceServer(dpop_nonce=True)``, RFC 9449 section 9).

Run as ``python -m uvicorn nonce_app:app --app-dir tests/auth/server`` with ``NONCE_ISSUER`` (the
authorization server), ``NONCE_RESOURCE`` (this server's URI; its port is the one uvicorn binds)
and ``NONCE_SECRET`` (hex; the nonces' secret, so that the test can make an older window's nonce).
"""

from __future__ import annotations

import os

import wiremcp
from wiremcp.auth.server import JWTVerifier, ResourceServer
from wiremcp.transports.http import MCPApp

ISSUER = os.environ["NONCE_ISSUER"]
RESOURCE = os.environ["NONCE_RESOURCE"]
SECRET = bytes.fromhex(os.environ["NONCE_SECRET"]) if os.environ.get("NONCE_SECRET") else None

server = wiremcp.Server("nonces", version="1")


@server.tool()
def whoami(ctx: wiremcp.Context) -> str:
    token = ctx.auth
    return f"{token.subject} bound={bool(token.cnf and 'jkt' in token.cnf)}"


auth = ResourceServer(
    JWTVerifier(issuer=ISSUER, resource=RESOURCE),
    resource=RESOURCE,
    authorization_servers=[ISSUER],
    scopes_supported=["mcp"],
    required_scopes=["mcp"],
    dpop_nonce=True,
    dpop_nonce_secret=SECRET,
)
app = MCPApp(server, auth=auth)
