"""A server with something scoped of every kind, for test_authorization.py (one test per row of the table).

Run with ``wiremcp run tests/auth/server/authz_app.py --http``; configured
as examples/protected.py is (``WIREMCP_AUTH_ISSUER``, ``WIREMCP_AUTH_RESOURCE``):
tokens from the real authorization server (tests/auth/as/), ``mcp`` needed
for every request, ``admin`` for everything here whose name says admin.
"""

from __future__ import annotations

import asyncio
import os

import wiremcp
from wiremcp import Context
from wiremcp.auth.server import JWTVerifier, ResourceServer

ISSUER = os.environ["WIREMCP_AUTH_ISSUER"]
RESOURCE = os.environ["WIREMCP_AUTH_RESOURCE"]
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}

auth = ResourceServer(
    JWTVerifier(issuer=ISSUER, resource=RESOURCE, algorithms=["ES256"]),
    resource=RESOURCE,
    authorization_servers=[ISSUER],
    scopes_supported=["mcp", "admin"],
    required_scopes=["mcp"],
)
server = wiremcp.Server("authz", version="1", auth=auth, task_poll_interval_ms=50)


@server.tool()
def echo(text: str) -> str:
    """Anyone with ``mcp``."""
    return text


@server.tool()
async def confirm(ctx: Context) -> str:
    """Asks a question first (a multi round-trip request: its requestState is sealed for the caller)."""
    answer = await ctx.elicit("Go on?", CONFIRM, key="confirm")
    return f"confirmed={answer.get('content', {}).get('confirm')}"


@server.tool(scopes=["admin"], task="auto")
async def admin_report(text: str = "") -> str:
    """An admin task that finishes at once with something secret."""
    return f"admin secret {text}"


@server.tool(scopes=["admin"], task="auto")
async def admin_wait() -> str:
    """An admin task that runs until cancelled."""
    await asyncio.Event().wait()
    return "never"


@server.tool(scopes=["admin"], task="auto")
async def admin_gate(ctx: Context) -> str:
    """An admin task that waits for an answer (input_required, answered by tasks/update)."""
    answer = await ctx.elicit("Go on?", CONFIRM, key="confirm")
    return f"admin confirmed={answer.get('content', {}).get('confirm')}"


@server.resource("public://readme")
def readme() -> str:
    return "public"


@server.resource("admin://report", scopes=["admin"])
def report() -> str:
    return "admin report"


@server.resource("admin://customers/{name}", scopes=["admin"])
def customer(name: str) -> str:
    return f"customer {name}"


@server.complete(template="admin://customers/{name}", argument="name")
def customer_names(value: str) -> list[str]:
    return [n for n in ("Acme Corp", "Globex") if n.startswith(value)]


@server.prompt()
def hello() -> str:
    return "hello"


@server.prompt(scopes=["admin"])
def audit(customer: str) -> str:
    return f"audit {customer}"


@server.complete(prompt="audit", argument="customer")
def audit_customers(value: str) -> list[str]:
    return [n for n in ("Acme Corp", "Globex") if n.startswith(value)]


@server.prompt()
async def ask_prompt(ctx: Context) -> str:
    """A prompt that asks first (its requestState is sealed for the caller)."""
    answer = await ctx.elicit("Go on?", CONFIRM, key="confirm")
    return f"prompt confirmed={answer.get('content', {}).get('confirm')}"


@server.resource("public://asks")
async def asks(ctx: Context) -> str:
    """A resource that asks first (its requestState is sealed for the caller)."""
    answer = await ctx.elicit("Go on?", CONFIRM, key="confirm")
    return f"resource confirmed={answer.get('content', {}).get('confirm')}"
