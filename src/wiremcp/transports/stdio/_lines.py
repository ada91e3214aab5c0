"""A server on a newline-delimited byte stream (the stdio binding, any stream).

`LineServer` is fed bytes and writes reply lines through a callback, so the
same code serves stdin/stdout, a socket, or an in-memory pipe. The rules it
keeps (basic/transports/stdio.mdx, basic/patterns/cancellation.mdx):

* every request line gets exactly one reply line; a line that cannot be
  parsed or is not a valid message gets an error reply (without an id unless the
  request's id could be read), never silence;
* notifications get no reply; ``notifications/cancelled`` cancels the
  request it names, and nothing more is sent for that request, not even its
  reply;
* requests run concurrently: a synchronous handler answers inline, an
  asynchronous one becomes a task whose reply goes out when it finishes,
  in whatever order they finish;
* at most ``max_in_flight`` asynchronous requests run at once; past that the
  stream is paused (back-pressure), not refused;
* at end of input, requests in flight finish and their replies are written
  before `wait_closed` returns; open ``subscriptions/listen`` streams end
  with the input (no reply is owed when the transport closes);
* legacy clients (2025-11-25) open with ``initialize``: the stream then
  holds a `LegacySession`, later requests without modern ``_meta`` are served
  in it, and the server may send the client requests of its own (elicitation,
  sampling, roots) whose responses come back on the stream; a request that
  carries modern ``_meta`` is served statelessly whatever came before
  (2026-07-28 basic/versioning.mdx, dual-era servers);
* other responses from the client are not part of the 2026-07-28 stdio
  binding: they are logged and ignored, never answered (answering a response
  would start a loop).

The decisions (the era of a request, its one reply, cancellation, the
legacy session and the server's requests to the client) are the server's
`ServerConnection`; this module frames lines, runs the asynchronous calls as
tasks and applies back-pressure.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Callable

from ...jsonrpc import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    MCP,
    Decoder,
    InvalidRequest,
    JSONRPCError,
    LineSplitter,
    Notification,
    Request,
    TooLong,
)
from ...server import Call, LegacySession, Server, ServerConnection, reply_failed

__all__ = ["LineServer", "DEFAULT_MAX_IN_FLIGHT"]

log = logging.getLogger("wiremcp.transport")

#: Asynchronous requests allowed to run at once on one stream before reading pauses.
DEFAULT_MAX_IN_FLIGHT = 256


class LineServer:
    """A `Server` on one newline-delimited stream: fed bytes, writes lines (see the module docs)."""

    def __init__(
        self,
        server: Server,
        write: Callable[[bytes], None],
        *,
        pause_reading: Callable[[], None] | None = None,
        resume_reading: Callable[[], None] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> None:
        self.server = server
        self.write = write
        self.conn = ServerConnection(server, write, line=True)
        self._calls = self.conn.calls
        self._pause = pause_reading
        self._resume = resume_reading
        self._paused = False
        self._decoder = Decoder(MCP, max_size=max_message_size, max_depth=max_depth)
        # Bound once: looked up per line otherwise.
        self._decode = self._decoder.decode
        self._request = self.conn.request
        self._splitter = LineSplitter(max_message_size)
        self._max_in_flight = max_in_flight
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def session(self) -> LegacySession | None:
        """The legacy session, once a legacy client said ``initialize``."""
        return self.conn.session

    # -- input ----------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        for line in self._splitter.feed(data):
            self._line(line)

    def feed_eof(self) -> None:
        for line in self._splitter.close():
            self._line(line)
        # Subscriptions end with the transport (subscriptions.mdx, Cancellation):
        # no response is owed, and they would otherwise never finish.
        self.conn.cancel_calls(endless_only=True)
        # Requests we sent a legacy client will never be answered now.
        self.conn.close("the client closed the connection")

    @property
    def in_flight(self) -> int:
        return len(self._calls)

    async def wait_closed(self) -> None:
        """After end of input: wait until every request in flight has replied."""
        while self._calls:
            self._idle.clear()
            await self._idle.wait()

    async def cancel_all(self) -> None:
        """Stop every request in flight without replying (the output is gone)."""
        self.conn.cancel_calls()
        await self.wait_closed()

    def _line(self, line: bytes | TooLong) -> None:
        if type(line) is TooLong:
            exc = InvalidRequest(
                f"Invalid Request: the message is {line.size} bytes; the limit is {self._splitter.max_line}"
            )
            log.warning("refused a %d-byte line (limit %d)", line.size, self._splitter.max_line)
            self.write(reply_failed(None, exc)[0])
            return
        try:
            msg = self._decode(line)  # type: ignore[arg-type]  # not TooLong: bytes
        except JSONRPCError as exc:
            log.warning("bad message: %s", exc.message)
            self.write(reply_failed(getattr(exc, "id", None), exc)[0])
            return
        t = type(msg)
        if t is Request:
            out = self._request(msg)  # type: ignore[arg-type]  # t is Request
            if type(out) is tuple:
                self.write(out[0])
                return
            call: Call = out  # type: ignore[assignment]  # not a reply: a Call to run
            task = asyncio.get_running_loop().create_task(self._finish(call))
            # Clean up in a done-callback: it also runs for a task cancelled before its first step.
            task.add_done_callback(functools.partial(self._finished, call))
            call.task = task
            if len(self._calls) >= self._max_in_flight and self._pause is not None and not self._paused:
                self._paused = True
                self._pause()
        elif t is Notification:
            self.conn.notification(msg)  # type: ignore[arg-type]  # t is Notification
        elif not self.conn.response(msg):  # type: ignore[arg-type]  # a Response or ErrorResponse
            log.warning(
                "ignored a response (id %r) from the client: the server sends no requests on stdio "
                "in MCP 2026-07-28",
                getattr(msg, "id", None),
            )

    async def _finish(self, call: Call) -> None:
        reply = await call.finish()
        if reply is not None:
            self.write(reply[0])
            # Once replied to, the id is free: the client may reuse it before this task's
            # done-callback runs (on uvloop, I/O callbacks can come first).
            self.conn.finished(call)

    def _finished(self, call: Call, task: asyncio.Task[None] | None = None) -> None:
        self.conn.finished(call)
        if self._paused and len(self._calls) < self._max_in_flight and self._resume is not None:
            self._paused = False
            self._resume()
        if not self._calls:
            self._idle.set()
