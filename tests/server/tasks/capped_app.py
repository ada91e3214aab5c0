"""An ASGI app for test_tasks_limits.py: task_server's tools behind a token check, so that tasks have owners.

Run as ``python -m uvicorn capped_app:app --app-dir tests/server/tasks``;
``CAPPED_RESOURCE`` is the resource URI; the caps come from
``WIREMCP_MAX_TASKS`` / ``WIREMCP_MAX_OWNER_TASKS`` and the store from
``WIREMCP_TASK_STORE`` (read when the server is built, as in production).
"""

from __future__ import annotations

import os

from task_server import server

from wiremcp.auth.server import AccessToken, AuthError, DPoPProof, ResourceServer
from wiremcp.transports.http import MCPApp

#: token -> subject
TOKENS = {"t-alice": "alice", "t-bob": "bob"}


class TableVerifier:
    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        if token not in TOKENS:
            raise AuthError("malformed", "unknown token")
        return AccessToken(subject=TOKENS[token], client_id="test", scopes=frozenset({"mcp"}), claims={"sub": TOKENS[token]})


auth = ResourceServer(
    TableVerifier(),
    resource=os.environ.get("CAPPED_RESOURCE", "http://127.0.0.1:8000/mcp"),
    authorization_servers=["https://auth.example.com"],
    scopes_supported=["mcp"],
    required_scopes=["mcp"],
)
app = MCPApp(server, auth=auth)
