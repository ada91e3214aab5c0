"""A hostile MCP server over raw loopback HTTP, for the security tests: ``python hostile_http.py MODE``.

It prints ``port N`` once listening and stops when its stdin closes. Each
mode answers the way a malicious (or broken) server would; after sending
`HUGE` bytes it keeps the connection open and silent, so a client that
kept reading and holding would wait, not fail:

* ``sse-line``: ``GET`` is a 2024-11-05 HTTP+SSE stream: the ``endpoint``
  event, then one ``data:`` line that never ends; ``POST`` is 202;
* ``sse-post``: ``GET`` as above but well-formed; ``POST`` answers 400 with
  a body that never ends (chunked);
* ``http-json``: every ``POST`` is ``200 application/json``, chunked, with a
  body that never ends;
* ``http-json-length``: the same with a ``Content-Length`` above the limit;
* ``http-sse``: every ``POST`` is ``200 text/event-stream`` with one
  ``data:`` line that never ends.
"""

from __future__ import annotations

import asyncio
import sys

HUGE = 17 * 1024 * 1024  # past the client's 16 MiB limit
PIECE = b"A" * 65536


async def _send_huge(writer: asyncio.StreamWriter, chunked: bool) -> None:
    sent = 0
    while sent < HUGE:
        writer.write(b"%x\r\n%s\r\n" % (len(PIECE), PIECE) if chunked else PIECE)
        sent += len(PIECE)
        await writer.drain()


async def _head(reader: asyncio.StreamReader) -> tuple[str, str, int]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return method, path, length


async def serve(mode: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            method, path, length = await _head(reader)
            if length:
                await reader.readexactly(length)
            if method == "GET" and mode.startswith("sse"):
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n\r\n"
                    b"event: endpoint\r\ndata: /messages?s=1\r\n\r\n"
                )
                await writer.drain()
                if mode == "sse-line":
                    writer.write(b"data: ")
                    await _send_huge(writer, chunked=False)
                await reader.read()  # hold until the client goes
                return
            if method == "POST" and mode == "sse-line":
                writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                continue
            if method == "POST" and mode == "sse-post":
                writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n")
                await _send_huge(writer, chunked=True)
            elif method == "POST" and mode == "http-json":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
                await _send_huge(writer, chunked=True)
            elif method == "POST" and mode == "http-json-length":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % (HUGE * 2))
                await _send_huge(writer, chunked=False)
            elif method == "POST" and mode == "http-sse":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ")
                await _send_huge(writer, chunked=False)
            else:
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                continue
            await reader.read()
            return
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(mode: str) -> None:
    server = await asyncio.start_server(lambda r, w: serve(mode, r, w), "127.0.0.1", 0)
    print("port", server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until stdin closes
    server.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
