"""An authenticated Streamable HTTP server whose tool asks for input, for the requestState binding test.

``wiremcp run tests/servers/bound_state_http.py --http --port 0``. Bearer
tokens are looked up in `TOKENS` by a verifier of the test's own; the tool
``two_step`` elicits twice (a name, then a colour), so its second round
seals the first answer into ``requestState``.
"""

from __future__ import annotations

from typing import Any

import wiremcp
from wiremcp.auth.server import AccessToken, AuthError, DPoPProof, ResourceServer

#: token -> subject (one issuer, one client)
TOKENS = {"t-alice": "alice", "t-mallory": "mallory"}


class TableVerifier:
    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        if token not in TOKENS:
            raise AuthError("malformed", "unknown token")
        subject = TOKENS[token]
        return AccessToken(subject=subject, client_id="app", scopes=frozenset({"mcp"}), claims={"sub": subject, "iss": "https://as.test"})


server = wiremcp.Server(
    "bound-state",
    version="1",
    auth=ResourceServer(TableVerifier(), resource="http://127.0.0.1/mcp", authorization_servers=["https://as.test"]),
)


@server.tool()
async def two_step(ctx: wiremcp.Context) -> str:
    """Two rounds: a name, then a colour."""
    schema: dict[str, Any] = {"type": "object", "properties": {"v": {"type": "string"}}}
    name = await ctx.elicit("Name?", schema, key="step1")
    color = await ctx.elicit("Colour?", schema, key="step2")
    return f"{name['content']['v']} likes {color['content']['v']}"
