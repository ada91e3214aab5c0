"""A server for the state tests (tests/server/test_session_state.py, tests/scale/test_state_workers.py).

* ``KV_STORAGE``: ``Server(storage=...)`` (unset: the server's default);
* ``KV_AUTH=1``: behind a resource server whose bearer tokens are looked up
  in `TOKENS` (``KV_RESOURCE`` is the resource URI);
* tools: ``remember``/``recall``/``forget``/``mine`` on ``ctx.session_state``,
  ``put``/``fetch`` on ``server.storage``, ``stamped`` reading what the
  middleware put in ``call.state``, ``pid`` naming the worker.
"""

from __future__ import annotations

import os
from typing import Any

import wiremcp
from wiremcp.server import Context, Invocation, Next

TOKENS = {"t-ann": "ann", "t-bob": "bob"}

auth: Any = None
if os.environ.get("KV_AUTH"):
    from wiremcp.auth.server import AccessToken, AuthError, DPoPProof, ResourceServer

    class TableVerifier:
        async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
            if token not in TOKENS:
                raise AuthError("malformed", "unknown token")
            subject = TOKENS[token]
            return AccessToken(subject=subject, client_id="test", scopes=frozenset({"mcp"}), claims={"sub": subject, "iss": "https://as.test"})

    auth = ResourceServer(
        TableVerifier(),
        resource=os.environ.get("KV_RESOURCE", "http://127.0.0.1:8000/mcp"),
        authorization_servers=["https://as.test"],
        scopes_supported=["mcp"],
        required_scopes=["mcp"],
    )

server = wiremcp.Server("kvstate", version="1.0.0", storage=os.environ.get("KV_STORAGE") or None, auth=auth)


@server.middleware
async def stamp(call: Invocation, call_next: Next) -> dict[str, Any]:
    if call.method == "tools/call":
        call.state["by"] = f"middleware saw {call.params.get('name')}"
    return await call_next(call)


@server.tool
async def remember(key: str, value: str, ctx: Context) -> str:
    await ctx.session_state.set(key, value)
    return "ok"


@server.tool
async def recall(key: str, ctx: Context) -> str:
    return str(await ctx.session_state.get(key, "(none)"))


@server.tool
async def forget(key: str, ctx: Context) -> str:
    return str(await ctx.session_state.delete(key))


@server.tool
async def mine(ctx: Context) -> str:
    return ",".join(await ctx.session_state.keys())


@server.tool
async def put(key: str, value: str) -> str:
    await server.storage.set(key, value)
    return "ok"


@server.tool
async def fetch(key: str) -> str:
    return str(await server.storage.get(key, "(none)"))


@server.tool
def stamped(ctx: Context) -> str:
    """A plain tool (a worker thread): the middleware's state reaches it too."""
    return str(ctx.request_state.get("by"))


@server.tool(inline=True)
def pid() -> str:
    return str(os.getpid())
