"""The stdio transport: a server on its process's stdin and stdout.

`serve_stdio(server)` reads stdin through the event loop (no thread per
message) and writes reply lines to stdout. While it serves, ``sys.stdout``
points at stderr, so a stray ``print()`` in a tool lands in the log instead of
corrupting the protocol stream (stdio.mdx: the server MUST NOT write
anything to stdout that is not a valid MCP message). It returns when stdin
reaches end of file and every request in flight has replied (within the
server's ``shutdown_grace`` seconds; the rest are cancelled), or when stdout
is closed by the client. The server's lifespan (``Server(lifespan=...)``) is
entered before the first message is read and left after the last reply.

`serve_streams(server, reader, writer)` serves the same protocol over any
asyncio stream pair (a socket, a test pipe).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from typing import Any, Callable

from ...server import Server
from ...server.transport import Peer, ServerConnection, current_peer
from ._lines import LineServer

__all__ = ["serve_stdio", "serve_streams", "READ_CHUNK"]

log = logging.getLogger("wiremcp.transport")

#: Bytes asked of the OS per read.
READ_CHUNK = 256 * 1024


class _Input(LineServer, asyncio.Protocol):
    """The `LineServer` of stdin, and the read pipe's protocol: the event loop feeds it directly.

    ``data_received`` is `LineServer.feed` itself (a class attribute: no call
    in between per read); end of input and a lost pipe call ``on_eof``.
    """

    data_received = LineServer.feed

    def __init__(self, server: Server, write: Callable[[bytes], None], on_eof: Callable[[], None], **limits: Any) -> None:
        super().__init__(server, write, **limits)
        self.on_eof = on_eof

    def eof_received(self) -> bool:
        self.on_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_eof()


class _Output(asyncio.Protocol):
    def __init__(self, lines: _StdioLink) -> None:
        self.link = lines

    def pause_writing(self) -> None:
        self.link.pause_reading()

    def resume_writing(self) -> None:
        self.link.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.output_closed()


class _StdioLink:
    """Glue between the pipes and a `LineServer`."""

    def __init__(self, server: Server, conn: ServerConnection | None = None, **limits: Any) -> None:
        self.loop = asyncio.get_running_loop()
        self.done = self.loop.create_future()
        self.read_transport: asyncio.ReadTransport | None = None
        self.write_transport: asyncio.WriteTransport | None = None
        self.write_fd: int | None = None
        self.output_gone = False
        self._reasons = 0  # reasons to keep reading paused (the writer is full)
        #: Set by `_flush` once stdout is being closed: resolved when the pipe reports it closed.
        self.flushed: asyncio.Future[None] | None = None
        self.lines = _Input(server, self.write, self.input_ended, conn=conn, **limits)

    def write(self, data: bytes) -> None:
        if self.output_gone:
            return
        if self.write_transport is not None:
            self.write_transport.write(data)
            return
        fd = self.write_fd
        assert fd is not None  # no write transport: stdout is a regular file, written by fd
        view = memoryview(data)
        while view:  # stdout is a regular file: plain blocking writes are fine
            view = view[os.write(fd, view) :]

    def pause_reading(self) -> None:
        self._reasons += 1
        if self._reasons == 1 and self.read_transport is not None:
            self.read_transport.pause_reading()

    def resume_reading(self) -> None:
        self._reasons = max(0, self._reasons - 1)
        if self._reasons == 0 and self.read_transport is not None and not self.read_transport.is_closing():
            self.read_transport.resume_reading()

    def input_ended(self) -> None:
        if not self.done.done():
            self.lines.feed_eof()
            self.done.set_result("eof")

    def output_closed(self) -> None:
        self.output_gone = True
        if not self.done.done():
            self.done.set_result("output closed")
        flushed = self.flushed
        if flushed is not None and not flushed.done():
            flushed.set_result(None)  # `_flush` was waiting for this


async def serve_stdio(server: Server, *, first: bytes = b"", conn: ServerConnection | None = None, **limits: Any) -> None:
    """Serve ``server`` on stdin/stdout until end of input (see module docs).

    ``first``: bytes already read from stdin, served before anything read
    from now on; ``conn``: the connection that served the stream so far,
    served on from now on (both are what `serve_before_loop` hands over, a
    `Handoff`: its legacy session goes on on the event loop).
    """
    async with server.lifespan:
        await _serve_stdio(server, first, conn, **limits)


async def _serve_stdio(server: Server, first: bytes, conn: ServerConnection | None, **limits: Any) -> None:
    loop = asyncio.get_running_loop()
    current_peer.set(Peer())  # one connection: every request read from here on runs in a copy of this context
    in_fd = os.dup(sys.stdin.fileno())
    out_fd = os.dup(sys.stdout.fileno())
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    keep_heap()
    link = _StdioLink(server, conn, **limits)
    reader_task: asyncio.Task[None] | None = None
    in_file = os.fdopen(in_fd, "rb", buffering=0)
    out_file = os.fdopen(out_fd, "wb", buffering=0)
    try:
        try:
            link.write_transport, _ = await loop.connect_write_pipe(lambda: _Output(link), out_file)
        except ValueError:  # a regular file
            link.write_fd = out_fd
        if first:
            link.lines.feed(first)
        mode = os.fstat(in_fd).st_mode
        # Regular files and non-terminal devices (/dev/null) cannot be polled: read them in chunks.
        if stat.S_ISREG(mode) or (stat.S_ISCHR(mode) and not os.isatty(in_fd)):
            reader_task = loop.create_task(_read_file(in_fd, link))
        else:
            link.read_transport, _ = await loop.connect_read_pipe(lambda: link.lines, in_file)
            small_reads(link.read_transport)
        reason = await link.done
        if reason == "eof":
            await _drain(link.lines, server.shutdown_grace)
        else:
            log.info("stdout was closed by the client; stopping")
            await link.lines.cancel_all()
        await _flush(link)
    finally:
        if reader_task is not None:
            reader_task.cancel()
        if link.read_transport is not None:
            link.read_transport.close()
        sys.stdout = saved_stdout
        for f in (in_file, out_file):
            try:
                f.close()
            except OSError:
                pass


#: Bytes per read of a pipe. asyncio asks for 256 KiB, which glibc serves with a
#: fresh mmap (above its 128 KiB threshold): three syscalls per message at one
#: request in flight. 64 KiB stays on the heap; a large message takes a few reads.
PIPE_READ_SIZE = 64 * 1024


def keep_heap() -> None:
    """Stop glibc from giving the top of the heap back to the OS after every message.

    glibc trims the heap whenever more than its trim threshold (128 KiB by
    default) is free at the top. A 64 KiB pipe read plus the copies of a
    10 KB message cross it on every message, and the next message faults the
    pages back in: 30 µs of server CPU per 10 KB message, more than all the
    rest. Freeing one block larger than the mmap threshold raises it, and the
    trim threshold with it, to about 1 MiB and 2 MiB (mallopt(3), the
    "dynamic mmap threshold"); ``bytes(n)`` is allocated with calloc, so no
    page of it is touched. Harmless where the allocator is not glibc's.
    """
    bytes(1 << 20)


def small_reads(transport: Any) -> None:
    """Make a read pipe transport read `PIPE_READ_SIZE` bytes at a time."""
    if hasattr(transport, "max_size"):  # asyncio's pipe transport (CPython, uvloop differ)
        transport.max_size = PIPE_READ_SIZE


async def _read_file(fd: int, link: _StdioLink) -> None:
    loop = asyncio.get_running_loop()
    while True:
        data = await loop.run_in_executor(None, os.read, fd, READ_CHUNK)
        if not data:
            link.input_ended()
            return
        link.lines.feed(data)


async def _drain(lines: LineServer, grace: float) -> None:
    """After end of input: the requests in flight get ``grace`` seconds to reply, then are cancelled."""
    try:
        await asyncio.wait_for(asyncio.shield(lines.wait_closed()), grace)
    except asyncio.TimeoutError:
        log.warning("end of input: %d request(s) still running after %g s were cancelled", lines.in_flight, grace)
        await lines.cancel_all()


async def _flush(link: _StdioLink) -> None:
    transport = link.write_transport
    if transport is None or transport.is_closing():
        return
    waiter: asyncio.Future[None] = link.loop.create_future()
    link.flushed = waiter  # from now on, connection_lost (`output_closed`) ends the flush
    transport.close()  # flushes what is buffered, then reports connection_lost
    try:
        await asyncio.wait_for(waiter, timeout=30)
    except asyncio.TimeoutError:
        log.warning("stdout did not drain within 30 s; exiting anyway")
        transport.abort()


async def serve_streams(
    server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **limits: Any
) -> None:
    """Serve ``server`` over an asyncio stream pair until the reader ends (inside its lifespan)."""
    async with server.lifespan:
        await _serve_streams(server, reader, writer, **limits)


async def _serve_streams(
    server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **limits: Any
) -> None:
    lines = LineServer(server, writer.write, **limits)
    try:
        while True:
            data = await reader.read(READ_CHUNK)
            if not data:
                break
            lines.feed(data)
            await writer.drain()
        lines.feed_eof()
        await _drain(lines, server.shutdown_grace)
        await writer.drain()
    finally:
        writer.close()
