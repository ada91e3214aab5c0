"""tests/servers/middleware_kit.py behind a real resource server (bearer tokens), for the per-principal tests.

Run as ``python -m uvicorn middleware_kit_auth:app --app-dir tests/servers``;
``KIT_RESOURCE`` is the resource URI. Tokens are looked up in `TOKENS` by a
`TokenVerifier` of the test's own (as tests/auth/server/scoped_app.py does).
"""

from __future__ import annotations

import os

from middleware_kit import server
from wiremcp.auth.server import AccessToken, AuthError, DPoPProof, ResourceServer
from wiremcp.transports.http import MCPApp

#: token -> subject
TOKENS = {"t-ann": "ann", "t-bob": "bob"}


class TableVerifier:
    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        if token not in TOKENS:
            raise AuthError("malformed", "unknown token")
        subject = TOKENS[token]
        return AccessToken(subject=subject, client_id="test", scopes=frozenset({"mcp"}), claims={"sub": subject, "iss": "https://as.test"})


auth = ResourceServer(
    TableVerifier(),
    resource=os.environ.get("KIT_RESOURCE", "http://127.0.0.1:8000/mcp"),
    authorization_servers=["https://as.test"],
    scopes_supported=["mcp"],
    required_scopes=["mcp"],
)
app = MCPApp(server, auth=auth)
