"""The client on the deprecated HTTP+SSE transport, against the official SDK's real SSE server.

Spec: 2025-11-25 basic/transports.mdx, "Backwards Compatibility" (a POST
that gets a 4xx makes the client GET the URL, expect an event stream whose
first event is ``endpoint``, and use the old transport from then on);
2024-11-05 basic/transports.mdx, "HTTP with SSE" (the ``endpoint`` event,
messages POSTed there, the server's messages as ``message`` events);
lifecycle.mdx (the version the server answers ``initialize`` with is the one
used).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from sse_servers import SSEServer, needs_official, sse_server  # noqa: F401 - the fixture
from wiremcp.client import Client, ConnectionClosed, HTTPError, IncompatibleServer, RequestTimeout
from wiremcp.protocol import Era
from wiremcp.transports.http.client import HTTPTransport
from wiremcp.transports.sse.client import SSETransport

pytestmark = needs_official

Start = Callable[..., SSEServer]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_streamable_http_client_falls_back_to_http_sse_and_negotiates_2024_11_05(sse_server: Start) -> None:
    """The POST gets 405; the GET stream names the endpoint; initialize goes there and 2024-11-05 is used."""
    server = sse_server("--version", "2024-11-05")
    sent: list[bytes] = []

    async def main() -> None:
        async with Client.http(server.url, timeout=10, on_wire=lambda d, b: sent.append(b) if d == "send" else None) as c:
            assert c.era is Era.LEGACY and c.protocol_version == "2024-11-05"
            assert (c.server_info or {})["name"] == "official-sse"
            transport = c.transport
            assert isinstance(transport, HTTPTransport) and isinstance(transport.sse, SSETransport)
            assert transport.sse.endpoint is not None
            assert transport.sse.endpoint.startswith(f"http://127.0.0.1:{server.port}/messages/?session_id=")
            assert [t["name"] for t in await c.list_tools()] == ["echo", "add", "slow", "cancellations", "grow"]
            results = await asyncio.gather(*[c.call_tool("add", {"a": i, "b": 1}) for i in range(5)])
            assert [r.text for r in results] == ["1", "2", "3", "4", "5"]
            assert (await c.read_resource("memo://notes")).text == "remember the milk"
            prompt = await c.get_prompt("greet", {"who": "Ada"})
            assert prompt.raw["messages"][0]["content"]["text"] == "Hello, Ada!"
        # The era probe went first (and got the 405), then the handshake.
        assert b'"server/discover"' in sent[0] and b'"initialize"' in sent[1]

    run(main())


def test_a_version_older_than_2024_11_05_is_refused(sse_server: Start) -> None:
    """lifecycle.mdx: the client disconnects when it does not support the version the server answers."""
    server = sse_server("--version", "2024-10-07")

    async def main() -> None:
        c = Client.http(server.url, timeout=10)
        with pytest.raises(IncompatibleServer, match="2024-10-07"):
            await c.connect()

    run(main())


def test_fallback_with_a_current_server_uses_the_version_it_answers(sse_server: Start) -> None:
    """An HTTP+SSE server that knows 2025-11-25 answers it; the client keeps what the server said."""
    server = sse_server()

    async def main() -> None:
        async with Client.http(server.url, timeout=10) as c:
            assert c.era is Era.LEGACY and c.protocol_version == "2025-11-25"
            assert (await c.call_tool("echo", {"text": "over sse"})).text == "over sse"

    run(main())


def test_forced_legacy_era_refalls_back_on_initialize(sse_server: Start) -> None:
    """era="legacy": initialize itself gets the 405, and is sent again over the SSE transport."""
    server = sse_server("--version", "2024-11-05")

    async def main() -> None:
        async with Client.http(server.url, era="legacy", timeout=10) as c:
            assert c.protocol_version == "2024-11-05"
            assert (await c.call_tool("echo", {"text": "x"})).text == "x"

    run(main())


def test_sse_transport_directly(sse_server: Start) -> None:
    """SSETransport as a ClientTransport of its own, with era="legacy" (the era its transport carries)."""
    server = sse_server("--version", "2024-11-05")

    async def main() -> None:
        async with Client(SSETransport(server.url), era="legacy", timeout=10) as c:
            assert c.era is Era.LEGACY and c.protocol_version == "2024-11-05"
            assert (await c.call_tool("add", {"a": 40, "b": 2})).text == "42"

    run(main())


def test_list_changed_notifications_arrive_on_the_stream(sse_server: Start) -> None:
    """A server notification (tools/list_changed) is a message event on the stream."""
    server = sse_server()

    async def main() -> None:
        changed = asyncio.Event()

        def note(n: Any) -> None:
            if n.method == "notifications/tools/list_changed":
                changed.set()

        async with Client.http(server.url, timeout=10, on_notification=note) as c:
            assert (await c.call_tool("grow", {"name": "extra"})).text == "added extra"
            await asyncio.wait_for(changed.wait(), 10)
            assert "extra" in [t["name"] for t in await c.list_tools(refresh=True)]
            assert (await c.call_tool("extra", {})).text == "extra"

    run(main())


def test_a_timed_out_call_is_cancelled_by_notification(sse_server: Start) -> None:
    """cancellation.mdx: on a shared stream the client sends notifications/cancelled; the connection goes on."""
    server = sse_server()

    async def main() -> None:
        async with Client.http(server.url, timeout=10) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("slow", {"seconds": 5}, timeout=0.5)
            assert (await c.call_tool("echo", {"text": "still here"})).text == "still here"
            for _ in range(50):  # the notification and the call race on the server: wait for the count
                if (await c.call_tool("cancellations", {})).text == "1":
                    break
                await asyncio.sleep(0.1)
            assert (await c.call_tool("cancellations", {})).text == "1"

    run(main())


def test_the_server_dying_fails_calls_in_flight(sse_server: Start) -> None:
    """The stream is the connection: when it ends, what is in flight fails with ConnectionClosed."""
    server = sse_server()

    async def main() -> None:
        async with Client.http(server.url, timeout=20) as c:
            call = asyncio.ensure_future(c.call_tool("slow", {"seconds": 30}))
            await asyncio.sleep(0.5)
            server.kill()
            with pytest.raises(ConnectionClosed):
                await call
            with pytest.raises(ConnectionClosed):
                await c.call_tool("echo", {"text": "gone"})

    run(main())


def test_no_event_stream_means_no_fallback(sse_server: Start) -> None:
    """A 404 on both POST and GET (no such endpoint): the 4xx stands, no SSE transport is kept."""
    server = sse_server()
    url = f"http://127.0.0.1:{server.port}/nothing-here"

    async def main() -> None:
        c = Client.http(url, timeout=10)
        with pytest.raises(HTTPError) as info:
            await c.connect()
        assert info.value.status == 404
        transport = c.transport
        assert isinstance(transport, HTTPTransport) and transport.sse is None

    run(main())
