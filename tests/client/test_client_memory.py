"""The Client in-process against wiremcp's own Server, over the real line framing.

Spec: basic/patterns/mrtr.mdx, client/elicitation.mdx, client/sampling.mdx,
client/roots.mdx, basic/patterns/subscriptions.mdx,
server/utilities/caching.mdx (Interaction with Notifications).
"""

from __future__ import annotations

from typing import Any

import asyncio

import pytest

from _helpers import Wire, run
import wiremcp
from wiremcp import Context
from wiremcp.client import Client, RemoteError
from wiremcp.transports.memory import MemoryTransport


def make_server() -> wiremcp.Server:
    server = wiremcp.Server("mem", version="2")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    async def interview(topic: str, ctx: Context) -> str:
        """Ask for a form, a sample and the roots, across MRTR rounds."""
        form = await ctx.elicit(f"About {topic}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
        sample = await ctx.sample("say hi", max_tokens=5)
        roots = await ctx.list_roots()
        return f"{form['action']}:{form['content']['ok']}|{sample['content']['text']}|{','.join(r['uri'] for r in roots)}"

    return server


def test_mrtr_round_trips_with_callbacks() -> None:
    """mrtr.mdx, Client Requirements: answer inputRequests via callbacks, retry with inputResponses + requestState."""
    asked = []

    async def elicit(params: Any) -> Any:
        asked.append(("elicit", params["message"]))
        return {"action": "accept", "content": {"ok": True}}

    def sample(params: Any) -> Any:  # a plain function works too
        asked.append(("sample", params["maxTokens"]))
        return {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"}

    async def main() -> None:
        sent = []
        async with Client.memory(
            make_server(), elicitation=elicit, sampling=sample, roots=[{"uri": "file:///a"}, {"uri": "file:///b"}],
            on_wire=lambda d, b: sent.append((d, b)),
        ) as c:
            r = await c.call_tool("interview", {"topic": "cats"})
            assert r.text == "accept:True|hi!|file:///a,file:///b"
        ids = [b for d, b in sent if d == "send" and b'"interview"' in b]
        assert len(ids) == 4  # the first try and three retries, each under a new id

    run(main())
    assert asked == [("elicit", "About cats?"), ("sample", 5)]


def test_missing_capability_is_a_remote_error() -> None:
    """basic/index.mdx: -32021 when the client did not declare what the tool needs."""

    async def main() -> None:
        async with Client.memory(make_server()) as c:
            with pytest.raises(RemoteError) as info:
                await c.call_tool("interview", {"topic": "x"})
            assert info.value.code == -32021
            assert "elicitation" in info.value.data["requiredCapabilities"]

    run(main())


def test_subscription_delivers_and_invalidates_the_cache() -> None:
    """subscriptions.mdx: acknowledgment first, then notifications with subscriptionId; caching.mdx: they invalidate."""
    server = make_server()

    async def main() -> None:
        sent = []
        async with Client.memory(server, on_wire=lambda d, b: sent.append((d, b))) as c:
            assert [t["name"] for t in await c.list_tools()] == ["echo", "interview"]
            async with c.listen(tools=True, resources=["mem://x"]) as sub:
                assert (sub.acknowledged or {})["toolsListChanged"] is True
                server.add_tool(lambda: "new", name="fresh")
                method, params = await asyncio.wait_for(sub.__anext__(), 5)
                assert method == "notifications/tools/list_changed"
                assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == sub.id
            assert "fresh" in [t["name"] for t in await c.list_tools()]  # the cached list was dropped
            assert sum(1 for d, b in sent if d == "send" and b"tools/list" in b) == 2
            cancels = [b for d, b in sent if d == "send" and b"notifications/cancelled" in b]
            assert cancels and f'"requestId":{sub.id}'.encode() in cancels[0]

    run(main())


def test_graceful_server_close_ends_iteration() -> None:
    """subscriptions.mdx, Graceful Closure: the listen response ends the stream without an error."""
    server = make_server()

    async def main() -> None:
        async with Client.memory(server) as c:
            async with c.listen(tools=True) as sub:
                server.close_subscriptions()
                notes = [n async for n in sub]
                assert notes == [] and sub.closed

    run(main())


def test_memory_framing_error_replies() -> None:
    """stdio.mdx framing through the in-memory transport: a non-JSON line gets -32700 with id null."""

    wire = Wire()

    async def main() -> None:
        transport = MemoryTransport(make_server())
        async with Client(transport, on_wire=wire) as c:
            transport.write_line(b"not json")
            reply = await wire.reply(lambda m: type(m) is dict and "error" in m)
            assert reply["error"]["code"] == -32700 and "id" not in reply
            assert (await c.call_tool("echo", {"text": "ok"})).text == "ok"

    run(main())


def test_public_surface() -> None:
    """The client's public names are exactly these (httpx style: the surface is deliberate)."""
    import wiremcp.client as client_pkg

    assert sorted(client_pkg.__all__) == sorted([
        "Client", "Subscription", "ClientTransport", "Receiver", "ClientProtocol", "Outgoing", "events",
        "CallOptions", "DEFAULT", "EraCache",
        "DEFAULT_TIMEOUT", "DEFAULT_PROBE_TIMEOUT", "DEFAULT_MAX_INPUT_ROUNDS", "RETRY_EVENT",
        "Result", "DiscoverResult", "CallToolResult", "ReadResourceResult", "GetPromptResult", "CompleteResult", "Page",
        "ClientError", "RemoteError", "RequestTimeout", "ConnectionClosed", "NotSent", "HTTPError", "ProtocolViolation",
        "IncompatibleServer", "ToolCallError",
        "TaskHandle", "TaskState", "TaskFollower", "TaskCancelled", "TASKS_EXTENSION",
    ])
    assert wiremcp.Client is client_pkg.Client
    assert not hasattr(client_pkg, "forget_eras")
    # The transport's callbacks live on a private receiver, and raw sends belong to transports that offer them.
    assert not [name for name in ("message", "request_failed", "closed", "send_raw") if hasattr(Client, name)]
    assert "send_raw" not in dir(client_pkg.ClientTransport)
