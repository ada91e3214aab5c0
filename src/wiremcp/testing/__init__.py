"""Testing helpers: call a `wiremcp.Server` in memory, in either era, and look at the wire.

    from wiremcp.testing import connect

    async with connect(server, era="legacy") as mcp:
        result = await mcp.call_tool("echo", {"text": "hi"})
        assert result.text == "hi"
        assert mcp.wire.requests("tools/call")[0]["params"]["arguments"] == {"text": "hi"}

Rules:

* nothing is short-circuited: `connect` uses `wiremcp.Client.memory`, so every
  message is encoded, framed with newlines and decoded by the same
  `LineServer` the stdio transport runs; what the tests see is what a
  subprocess would exchange;
* ``era`` is ``"modern"`` (2026-07-28: ``server/discover``, ``_meta`` on every
  request, multi round-trip requests), ``"legacy"`` (2025-11-25:
  ``initialize``, server-to-client requests) or ``"auto"`` (the client
  probes); other keywords go to `wiremcp.Client` (``elicitation=``,
  ``sampling=``, ``roots=``, ``timeout=``...);
* `Wire` records every envelope in order, decoded, with its direction
  (``"send"``: client to server, ``"recv"``: server to client), and answers
  the questions tests ask: the requests of a method, the reply to a request,
  the notifications received;
* `strip_meta` removes ``_meta`` members, for exact comparisons of envelopes
  whose ``_meta`` (server info, client info) a test does not care about.

The pytest plugin (`wiremcp.testing.plugin`; enable it with
``pytest_plugins = ["wiremcp.testing.plugin"]`` in a ``conftest.py``) adds
the ``mcp_era`` fixture, which runs a test once per era. docs/testing.md has
examples.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, Iterator, Literal

import orjson

from ..client import CallToolResult, Client
from ..server import Server

__all__ = ["ERAS", "Envelope", "Wire", "MCPTestClient", "connect", "call_tool", "strip_meta"]

Era = Literal["modern", "legacy", "auto"]
#: The two eras a dual-era server serves; `wiremcp.testing.plugin` parametrizes over them.
ERAS: tuple[Era, Era] = ("modern", "legacy")


class Envelope:
    """One JSON-RPC message as it crossed the wire: ``direction``, the decoded ``message``, the ``raw`` line."""

    __slots__ = ("direction", "message", "raw")

    def __init__(self, direction: str, raw: bytes) -> None:
        self.direction = direction
        self.raw = raw
        self.message: dict[str, Any] = orjson.loads(raw)

    @property
    def method(self) -> str | None:
        """The message's ``method``, or None for a response."""
        method = self.message.get("method")
        return method if type(method) is str else None

    @property
    def is_request(self) -> bool:
        """Whether it is a request (``method`` and ``id``)."""
        return "method" in self.message and "id" in self.message

    @property
    def is_notification(self) -> bool:
        """Whether it is a notification (``method``, no ``id``)."""
        return "method" in self.message and "id" not in self.message

    @property
    def is_response(self) -> bool:
        """Whether it is a response (no ``method``)."""
        return "method" not in self.message

    def __repr__(self) -> str:
        arrow = "→" if self.direction == "send" else "←"
        return f"{arrow} {self.raw.decode(errors='replace')}"


class Wire:
    """Every envelope exchanged, in order."""

    __slots__ = ("envelopes",)

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []

    def record(self, direction: str, data: bytes) -> None:
        """The `Client`'s ``on_wire`` hook."""
        for line in data.splitlines():
            if line.strip():
                self.envelopes.append(Envelope(direction, line))

    def __iter__(self) -> Iterator[Envelope]:
        return iter(self.envelopes)

    def __len__(self) -> int:
        return len(self.envelopes)

    def clear(self) -> None:
        """Forget the envelopes recorded so far."""
        self.envelopes.clear()

    @property
    def sent(self) -> list[dict[str, Any]]:
        """Messages the client sent, in order."""
        return [e.message for e in self.envelopes if e.direction == "send"]

    @property
    def received(self) -> list[dict[str, Any]]:
        """Messages the server sent, in order."""
        return [e.message for e in self.envelopes if e.direction == "recv"]

    def requests(self, method: str | None = None, *, direction: str = "send") -> list[dict[str, Any]]:
        """Requests (of ``method``, if given) the client sent (``direction="recv"``: the server sent)."""
        return [
            e.message
            for e in self.envelopes
            if e.direction == direction and e.is_request and (method is None or e.method == method)
        ]

    def notifications(self, method: str | None = None, *, direction: str = "recv") -> list[dict[str, Any]]:
        """Notifications (of ``method``, if given) the server sent (``direction="send"``: the client sent)."""
        return [
            e.message
            for e in self.envelopes
            if e.direction == direction and e.is_notification and (method is None or e.method == method)
        ]

    def reply_to(self, request: dict[str, Any]) -> dict[str, Any]:
        """The response that answered ``request`` (sent the other way); `LookupError` if none."""
        direction = "recv" if any(e.message is request and e.direction == "send" for e in self.envelopes) else "send"
        for e in self.envelopes:
            if e.direction == direction and e.is_response and e.message.get("id") == request.get("id"):
                return e.message
        raise LookupError(f"no reply to request {request.get('id')!r} ({request.get('method')}) on the wire")

    def exchanges(self, method: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """``(request, reply)`` for each request of ``method`` the client sent (MRTR retries included)."""
        return [(r, self.reply_to(r)) for r in self.requests(method)]

    def transcript(self) -> str:
        """Every envelope on its own line, ``→`` client to server, ``←`` server to client."""
        return "\n".join(repr(e) for e in self.envelopes)


def strip_meta(value: Any) -> Any:
    """A copy of ``value`` without any ``_meta`` member, at any depth."""
    if type(value) is dict:
        return {k: strip_meta(v) for k, v in value.items() if k != "_meta"}
    if type(value) is list:
        return [strip_meta(v) for v in value]
    return value


class MCPTestClient:
    """A connected `Client` and the `Wire` it recorded; the client's methods are reachable directly."""

    def __init__(self, client: Client, wire: Wire, server: Server) -> None:
        self.client = client
        self.wire = wire
        self.server = server

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **keywords: Any) -> CallToolResult:
        """`Client.call_tool` (typed here, as it is the call tests make most)."""
        # **keywords could hold task=True, which makes call_tool's overloads ambiguous (Any): it is a result here.
        result: CallToolResult = await self.client.call_tool(name, arguments, **keywords)
        return result

    async def tool_text(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """The text of a tool's result; `AssertionError` with the result if it is a tool execution error."""
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, f"tool {name!r} failed: {result.text}"
        return result.text


@contextlib.asynccontextmanager
async def connect(server: Server, *, era: Era = "modern", **options: Any) -> AsyncIterator[MCPTestClient]:
    """A client connected to ``server`` in memory, in ``era``; records the wire."""
    if era not in ("modern", "legacy", "auto"):
        raise ValueError(f"era must be 'modern', 'legacy' or 'auto', not {era!r}")
    wire = Wire()
    hook = options.pop("on_wire", None)

    def on_wire(direction: str, data: bytes) -> None:
        wire.record(direction, data)
        if hook is not None:
            hook(direction, data)

    async with Client.memory(server, era=era, on_wire=on_wire, **options) as client:
        yield MCPTestClient(client, wire, server)


def call_tool(
    server: Server, name: str, arguments: dict[str, Any] | None = None, *, era: Era = "modern", **options: Any
) -> tuple[CallToolResult, Wire]:
    """One tool call from synchronous code (a plain test function): the result and the wire.

    Runs its own event loop (`asyncio.run`), so it cannot be used where a loop is running.
    """

    async def main() -> tuple[CallToolResult, Wire]:
        async with connect(server, era=era, **options) as mcp:
            return await mcp.call_tool(name, arguments), mcp.wire

    return asyncio.run(main())
