"""An in-process client transport: a `Client` and a `Server` joined by bytes.

Nothing is short-circuited: the client's messages are encoded, framed with
newlines and fed to a `LineServer`, and the server's output is split into
lines again with a `LineSplitter`, exactly as on stdio. So a test through
`Client.memory(server)` exercises the same framing, decoding, error replies
and cancellation as a real subprocess, without one. `MemoryTransport.write_line` feeds bytes
the client did not build (not part of the `ClientTransport` contract).
"""

from __future__ import annotations

from typing import Any, Hashable

from ...client import ConnectionClosed, Receiver
from ...jsonrpc import LineSplitter, TooLong
from ...server import Server
from ...server.transport import Peer, current_peer
from ..stdio._lines import LineServer

__all__ = ["MemoryTransport"]


class MemoryTransport:
    """A `ClientTransport` to a `Server` in this process."""

    cancel_by_notification = True

    def __init__(self, server: Server) -> None:
        self.server = server
        self.cache_key: Hashable = ("memory", id(server))
        self._receiver: Receiver | None = None
        self._lines: LineServer | None = None
        self._splitter = LineSplitter()
        self._closed = False
        self._peer = Peer()  # this connection, for ctx.session_state (docs/state.md)

    async def open(self, receiver: Receiver) -> None:
        """Enter the server's lifespan and connect ``receiver`` to it."""
        await self.server.lifespan.__aenter__()  # left in aclose: the server's lifespan spans the connection
        self._receiver = receiver
        self._lines = LineServer(self.server, self._from_server)

    def _from_server(self, data: bytes) -> None:
        receiver = self._receiver
        if receiver is None or self._closed:
            return
        for line in self._splitter.feed(data):
            if type(line) is not TooLong:
                receiver.message(line, None)  # type: ignore[arg-type]

    def _write(self, data: bytes) -> None:
        if self._closed or self._lines is None:
            raise ConnectionClosed("the in-memory connection is closed")
        token = current_peer.set(self._peer)  # what the server starts for this line runs in a copy of the context
        try:
            self._lines.feed(data + b"\n")
        finally:
            current_peer.reset(token)

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        """Feed ``data`` to the server as one line; ConnectionClosed once closed."""
        self._write(data)

    def write_line(self, data: bytes) -> None:
        """Feed ``data`` and a newline to the server as they are (for tests of its framing errors)."""
        self._write(data)

    def abandon(self, id: Any) -> None:
        """Nothing to close: the client sends ``notifications/cancelled`` on this transport."""
        return None

    async def aclose(self) -> None:
        """End the connection: the server sees end of input, its calls are cancelled and its lifespan exits."""
        if self._closed or self._lines is None:
            self._closed = True
            return
        lines = self._lines
        lines.feed_eof()
        self._closed = True  # replies still in flight are dropped: the client is gone
        try:
            await lines.cancel_all()
        finally:
            await self.server.lifespan.__aexit__(None, None, None)
