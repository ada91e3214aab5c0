"""The HTTP+SSE client against a raw mock (sse_mock.py): what the official SDK's server never does.

Spec: 2024-11-05 basic/transports.mdx, "HTTP with SSE" (the endpoint event,
messages as ``message`` events); 2025-11-25 basic/transports.mdx,
"Backwards Compatibility" (fall back only when the first POST fails); the
SSE format (HTML Living Standard, "Server-sent events": CRLF, comments,
multi-line data, unnamed events).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from wiremcp.client import Client, ConnectionClosed, HTTPError, RemoteError
from wiremcp.transports.http.client import HTTPTransport
from wiremcp.transports.sse.client import SSETransport, _Events

MOCK = str(Path(__file__).resolve().parent / "sse_mock.py")


class Mock:
    def __init__(self, mode: str) -> None:
        self.proc = subprocess.Popen([sys.executable, MOCK, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().split()[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def mock(request: pytest.FixtureRequest) -> Iterator[Mock]:
    server = Mock(request.param)
    yield server
    server.stop()


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("mock", ["ok"], indirect=True)
def test_a_stream_with_crlf_comments_unknown_events_and_multiline_data(mock: Mock) -> None:
    async def main() -> None:
        transport = SSETransport(mock.base + "/sse")
        async with Client(transport, era="legacy", timeout=10) as c:
            assert transport.endpoint == mock.base + "/messages?s=1"  # resolved against the stream's URL
            assert c.protocol_version == "2024-11-05"
            assert [t["name"] for t in await c.list_tools()] == ["echo"]
            result = await c.call_tool("echo", {"text": "a\nb", "n": 1})
            assert json.loads(result.text) == {"text": "a\nb", "n": 1}

    run(main())


@pytest.mark.parametrize("mock", ["ok"], indirect=True)
def test_refused_posts_fail_their_request_with_the_status(mock: Mock) -> None:
    """A POST answered 4xx: HTTPError with status and body, or the JSON-RPC error the body holds."""
    async def main() -> None:
        async with Client(SSETransport(mock.base + "/sse"), era="legacy", timeout=10) as c:
            with pytest.raises(HTTPError) as plain:
                await c.call_tool("refused", {})
            assert plain.value.status == 400 and plain.value.body == b"refused, plainly"
            with pytest.raises(RemoteError) as rpc:
                await c.call_tool("rpc_error", {})
            assert rpc.value.code == -32602 and rpc.value.http_status == 400
            assert json.loads((await c.call_tool("echo", {"x": 1})).text) == {"x": 1}  # the connection goes on

    run(main())


@pytest.mark.parametrize("mock", ["ok"], indirect=True)
def test_the_stream_ending_closes_the_connection(mock: Mock) -> None:
    async def main() -> None:
        async with Client(SSETransport(mock.base + "/sse"), era="legacy", timeout=10) as c:
            await c.call_tool("bye", {})
            for _ in range(100):
                if c.protocol.closed is not None:
                    break
                await asyncio.sleep(0.05)
            with pytest.raises(ConnectionClosed, match="closed the SSE stream"):
                await c.call_tool("echo", {})

    run(main())


@pytest.mark.parametrize("mock", ["offsite"], indirect=True)
def test_an_endpoint_on_another_origin_is_refused(mock: Mock) -> None:
    """Messages (and the credentials on them) never go to another origin than the stream's."""
    async def main() -> None:
        c = Client(SSETransport(mock.base + "/sse"), era="legacy", timeout=10)
        with pytest.raises(ConnectionClosed, match="not on the stream's origin"):
            await c.connect()

    run(main())


@pytest.mark.parametrize("mock", ["no_endpoint"], indirect=True)
def test_a_stream_that_does_not_start_with_endpoint_is_refused(mock: Mock) -> None:
    async def main() -> None:
        c = Client(SSETransport(mock.base + "/sse"), era="legacy", timeout=10)
        with pytest.raises(ConnectionClosed, match="began with a 'message' event"):
            await c.connect()

    run(main())


@pytest.mark.parametrize("mock", ["ok"], indirect=True)
def test_no_fallback_once_a_post_was_answered(mock: Mock) -> None:
    """A 4xx after the server has answered is that request's error: the transport does not switch."""
    async def main() -> None:
        async with Client.http(mock.base + "/mcp", era="legacy", timeout=10) as c:
            with pytest.raises(HTTPError) as info:
                await c.call_tool("missing", {})
            assert info.value.status == 404
            transport = c.transport
            assert isinstance(transport, HTTPTransport) and transport.sse is None
            assert (await c.call_tool("stats", {})).text == "0"  # no GET looking for an event stream

    run(main())


def test_the_event_parser() -> None:
    """Bytes split anywhere (inside a CRLF, inside the BOM) give the same events."""
    stream = (
        b"\xef\xbb\xbf: comment\r\nevent: endpoint\r\ndata: /m?s=1\r\n\r\n"
        b"data: {\"a\":\r\ndata: 1}\r\n\r\n"          # unnamed: a message; two data lines joined by LF
        b"event: message\rdata: x\r\rid: 7\nretry: 10\nevent: other\ndata:y\n\n"
        b"event: empty\n\n"                            # no data: not dispatched
    )
    expected = [("endpoint", b"/m?s=1"), ("message", b'{"a":\n1}'), ("message", b"x"), ("other", b"y")]
    for size in (1, 2, 3, 5, len(stream)):
        parser = _Events()
        events = [e for i in range(0, len(stream), size) for e in parser.feed(stream[i : i + size])]
        assert events == expected, size
