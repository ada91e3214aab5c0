"""A keep-alive connection lost before any response: what the HTTP client sends again (transports/http/_resend.py).

A real server (``wiremcp run tests/servers/journal.py --http``, which writes
down every tool call it starts) behind a TCP relay on loopback. On its first
connection the relay passes the first exchange (the era probe), then takes
the next request off the wire without passing it on and ends the
connection: with a reset (RST, what a server's TCP stack sends when it
closes a connection with the request unread: Node's keep-alive timer firing
under load, the conformance run's ``ClientOSError(104, 'Connection reset by
peer')``), or with a clean close. Every later connection is relayed as it is.

RFC 9110 section 9.2.2 / RFC 9112 section 9.3.1: a request is sent again
only when the server cannot have acted on it (a reset) or when it is
idempotent; the journal shows what the server ran.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from _helpers import TESTS, run
from _servers import free_port, serving_http
from wiremcp.client import Client, ConnectionClosed

pytestmark = pytest.mark.slow

JOURNAL = str(TESTS / "servers" / "journal.py")


class Relay:
    """A TCP relay to ``upstream`` that drops the second request of its first connection (see the module docs)."""

    def __init__(self, upstream: int, ending: str) -> None:
        self.upstream = upstream
        self.ending = ending  # "reset" or "close"
        self.connections = 0
        self.dropped: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = self.connections == 0
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        answered = asyncio.Event()

        async def down() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
                answered.set()
            writer.close()

        relaying = asyncio.ensure_future(down())
        try:
            while data := await reader.read(65536):
                if first and answered.is_set():
                    self.dropped.append(data)
                    if self.ending == "reset":  # an abortive close: RST, as for a request left unread
                        sock = writer.get_extra_info("socket")
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        writer.transport.abort()
                    else:
                        writer.close()
                    return
                up_writer.write(data)
                await up_writer.drain()
        finally:
            relaying.cancel()
            up_writer.close()


def relayed(tmp_path: Path, ending: str, scenario: Any) -> tuple[Any, Relay, list[str]]:
    """Run ``scenario(client)`` against the journal server behind a `Relay`; (its outcome, the relay, the journal)."""
    journal = tmp_path / "journal"
    journal.write_text("")
    port = free_port()
    args = [sys.executable, "-m", "wiremcp", "run", JOURNAL, "--http", "--host", "127.0.0.1", "--port", str(port)]
    with serving_http(args, port, {"WIREMCP_TEST_JOURNAL": str(journal)}):
        relay = Relay(port, ending)

        async def main() -> Any:
            server = await asyncio.start_server(relay.serve, "127.0.0.1", 0)
            url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
            try:
                async with Client.http(url, era="auto", timeout=30) as client:
                    return await scenario(client)
            except ConnectionClosed as exc:
                return exc
            finally:
                server.close()

        outcome = run(main())
    return outcome, relay, journal.read_text().split()


def test_a_request_reset_unread_is_sent_again_even_a_tool_call(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="wiremcp.client")

    async def call(client: Client) -> str:
        return (await client.call_tool("work", {"label": "once"})).text

    outcome, relay, journal = relayed(tmp_path, "reset", call)
    assert outcome == "once", outcome
    assert len(relay.dropped) == 1 and b'"tools/call"' in relay.dropped[0]  # the first copy never reached the server
    assert journal == ["once"]  # ran once
    assert relay.connections == 2
    assert any("tools/call) lost its connection before any response" in r.getMessage() for r in caplog.records)


def test_an_idempotent_request_closed_without_a_response_is_sent_again(tmp_path: Path) -> None:
    async def listing(client: Client) -> list[str]:
        return sorted(tool["name"] for tool in await client.list_tools(refresh=True))

    outcome, relay, journal = relayed(tmp_path, "close", listing)
    assert outcome == ["journal", "work"], outcome
    assert len(relay.dropped) == 1 and b'"tools/list"' in relay.dropped[0]
    assert relay.connections == 2


def test_a_tool_call_closed_without_a_response_is_not_sent_again(tmp_path: Path) -> None:
    """A clean close may follow a call the server ran: never sent twice, the caller hears of it."""

    async def call(client: Client) -> str:
        return (await client.call_tool("work", {"label": "maybe"})).text

    outcome, relay, journal = relayed(tmp_path, "close", call)
    assert type(outcome) is ConnectionClosed, outcome
    assert "ServerDisconnectedError" in str(outcome)
    assert len(relay.dropped) == 1 and journal == []
    assert relay.connections == 1
