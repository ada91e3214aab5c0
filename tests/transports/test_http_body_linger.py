"""Issue 23, item 7: a body over the limit gets its 413, however much of it the client still sends.

RFC 9112, section 9.6: a server that closes a connection before it has read
the whole request SHOULD keep reading for a while ("lingering close"), or the
client's TCP stack may discard the response when the server's reset arrives.
Before the fix, a real client sending 20 MB or 50 MB to ``wiremcp run --http``
(limit 16 MiB) saw ``Connection reset by peer`` instead of the 413. Now the
server answers 413, keeps reading and discarding what the client sends (for a
bounded time and number of bytes), then closes: the client reads the 413.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Iterator

import pytest

from conftest import SERVERS, wiremcp_cmd

pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from test_http import ServerProcess  # noqa: E402

MB = 1_000_000
HEAD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "sample.py"), "--http", "--port", "0"), r"at http://127\.0\.0\.1:(\d+)/mcp"
    )
    yield proc
    proc.stop()


def _response(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.mark.parametrize("size", [20 * MB, 50 * MB])
def test_a_raw_client_sending_too_large_a_body_reads_the_413(server: ServerProcess, size: int) -> None:
    body = b"[" + b" " * (size - 2) + b"]"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(HEAD + b"Content-Length: %d\r\n\r\n" % size)
        sock.sendall(body)  # the whole body, as a simple client does before it reads
        reply = _response(sock)
    assert reply.startswith(b"HTTP/1.1 413 "), reply[:300]
    assert b"Content Too Large" in reply


@pytest.mark.parametrize("size", [20 * MB, 50 * MB])
def test_a_chunked_body_over_the_limit_gets_the_413_too(server: ServerProcess, size: int) -> None:
    piece = b" " * (1 << 20)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        sent = 0
        while sent < size:
            sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            sent += len(piece)
        sock.sendall(b"0\r\n\r\n")
        reply = _response(sock)
    assert reply.startswith(b"HTTP/1.1 413 "), reply[:300]


@pytest.mark.parametrize("size", [20 * MB, 50 * MB])
def test_aiohttp_sending_too_large_a_body_gets_the_413(server: ServerProcess, size: int) -> None:
    aiohttp = pytest.importorskip("aiohttp")

    async def main() -> tuple[int, str]:
        async with aiohttp.ClientSession() as session:
            async with session.post(
                f"http://127.0.0.1:{server.port}/mcp",
                data=b"[" + b" " * (size - 2) + b"]",
                headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            ) as resp:
                return resp.status, await resp.text()

    status, text = asyncio.run(asyncio.wait_for(main(), 60))
    assert status == 413
    assert "Content Too Large" in text
