"""An ASGI app for test_scopes.py: ``MCPApp(server, auth=ResourceServer(...))`` with a custom verifier.

Run as ``python -m uvicorn scoped_app:app --app-dir tests/auth/server``;
``SCOPED_RESOURCE`` is the resource URI (its port is the one uvicorn binds).
Tokens are looked up in `TOKENS` by a `TokenVerifier` of the test's own,
which shows the protocol is enough to plug in a verifier.
"""

from __future__ import annotations

import os

import wiremcp
from wiremcp.auth.server import AccessToken, AuthError, DPoPProof, ResourceServer
from wiremcp.transports.http import MCPApp

#: a token the `peek` tool must not be able to find anywhere it can look
RAW_TOKEN = "t-raw-secret-0f3a9c51d2e84b7a"
#: token -> (subject, scopes)
TOKENS = {
    "t-mcp": ("ann", {"mcp"}),
    "t-files": ("bob", {"mcp", "files"}),
    "t-admin": ("cid", {"mcp", "admin"}),  # admin implies files (scope_implies)
    "t-audit": ("dan", {"mcp", "audit"}),
    "t-ann-files": ("ann", {"mcp", "files"}),  # ann again, a later token with more scopes
    RAW_TOKEN: ("eve", {"mcp"}),
}


class TableVerifier:
    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        if token not in TOKENS:
            raise AuthError("malformed", "unknown token")
        subject, scopes = TOKENS[token]
        return AccessToken(subject=subject, client_id="test", scopes=frozenset(scopes), claims={"sub": subject})


server = wiremcp.Server("scoped", version="1")


@server.tool()
def whoami(ctx: wiremcp.Context) -> str:
    return f"{ctx.auth.subject} {' '.join(sorted(ctx.auth.scopes))}"


@server.tool()
def peek(ctx: wiremcp.Context) -> str:
    """Everything a handler can reach of its request: the Context and every context variable."""
    import contextvars

    seen = [ctx.request_id, ctx.method, ctx.meta, ctx.auth, dict(ctx.auth.claims), ctx.auth.cnf]
    seen += [(var.name, value) for var, value in contextvars.copy_context().items()]
    return repr(seen)


@server.tool(scopes=["files"])
async def list_files(ctx: wiremcp.Context) -> str:
    return f"files for {ctx.auth.subject}"


@server.resource("file:///secret", scopes=["files"])
def secret() -> str:
    return "the secret"


@server.resource("file:///docs/{name}", scopes=["files"])
def doc(name: str) -> str:
    return f"doc {name}"


@server.resource("file:///public")
def public() -> str:
    return "public"


@server.prompt(scopes=["audit"])
def audit() -> str:
    return "audit everything"


if os.environ.get("SCOPED_MIDDLEWARE"):  # every request then goes through a coroutine: refusals come after an await

    @server.middleware
    async def passing(call, call_next):  # type: ignore[no-untyped-def]
        return await call_next(call)


RESOURCE = os.environ.get("SCOPED_RESOURCE", "http://127.0.0.1:8000/mcp")
auth = ResourceServer(
    TableVerifier(),
    resource=RESOURCE,
    authorization_servers=["https://auth.example.com"],
    scopes_supported=["mcp"],
    required_scopes=["mcp"],
    scope_implies={"admin": ["files"]},
)
app = MCPApp(server, auth=auth)
