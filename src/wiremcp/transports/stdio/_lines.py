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
  in whatever order they finish; a fused call of a plain ``def`` tool
  (`PostedCall`) needs no task: its reply is written from the worker's
  completion callback on the loop, which then frees its slot (`_finished`);
* at most ``max_in_flight`` asynchronous requests run at once; past that new
  requests wait their turn in order, up to ``max_waiting`` of them, and one
  more is refused with -32000 (`ServerBusy`). Input is always read, so
  cancellations (of running or of waiting requests), the client's answers to
  the server's own requests and the end of input are acted on at once,
  whatever is in flight (a paused stream would never read the answer or the
  cancellation that frees a slot);
* at most ``max_listens`` ``subscriptions/listen`` streams are open at once
  (fewer than ``max_in_flight``, so that they cannot take every slot); one
  more is refused at once with -32000;
* at end of input, requests in flight and waiting finish and their replies
  are written before `wait_closed` returns; open ``subscriptions/listen``
  streams end with the input, and waiting ones are dropped (no reply is owed
  when the transport closes);
* legacy clients (2025-11-25) open with ``initialize``: the stream then
  holds a `LegacySession`, later requests without modern ``_meta`` are served
  in it, and the server may send the client requests of its own (elicitation,
  sampling, roots) whose responses come back on the stream; a request that
  carries modern ``_meta`` is served statelessly whatever came before
  (2026-07-28 basic/versioning.mdx, dual-era servers);
* other responses from the client are not part of the 2026-07-28 stdio
  binding: they are logged and ignored, never answered (answering a response
  would start a loop).

The decisions (decoding each line once, the fused stage, the era of a
request, its one reply, cancellation, the legacy session and the server's
requests to the client) are the server's `ServerConnection`: each line goes
to `ServerConnection.receive`, the server's one entry point, and this module
acts on the outcome it names. It frames lines, runs the asynchronous calls
as tasks and holds the requests that wait for a slot. Given ``conn`` (the
stdio front's connection, handed over with nothing in flight), it serves on
that connection, its legacy session included, and points its ``write`` at
its own (`ServerConnection.rebind`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from typing import Callable

from ...jsonrpc import DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_SIZE, MCP, Decoder, InvalidRequest, LineSplitter, Notification, Request, TooLong
from ...protocol import methods
from ...server import Server
from ...server.transport import (
    Call,
    Held,
    LegacySession,
    Notified,
    PostedCall,
    ServerBusy,
    ServerConnection,
    reply_failed,
)

__all__ = ["LineServer", "DEFAULT_MAX_IN_FLIGHT", "DEFAULT_MAX_WAITING", "DEFAULT_MAX_LISTENS"]

log = logging.getLogger("wiremcp.transport")

#: Asynchronous requests allowed to run at once on one stream; later ones wait their turn.
DEFAULT_MAX_IN_FLIGHT = 256
#: Requests that may wait for a slot on one stream; one more is refused (-32000).
DEFAULT_MAX_WAITING = 1024
#: ``subscriptions/listen`` streams open at once on one stream; one more is refused (-32000).
DEFAULT_MAX_LISTENS = 128

_LISTEN = methods.SUBSCRIPTIONS_LISTEN
_CANCELLED = methods.CANCELLED


class LineServer:
    """A `Server` on one newline-delimited stream: fed bytes, writes lines (see the module docs)."""

    def __init__(
        self,
        server: Server,
        write: Callable[[bytes], None],
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_waiting: int = DEFAULT_MAX_WAITING,
        max_listens: int | None = None,
        conn: ServerConnection | None = None,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if max_waiting < 0:
            raise ValueError("max_waiting must not be negative")
        if max_listens is None:
            max_listens = min(DEFAULT_MAX_LISTENS, max(1, max_in_flight // 2))
        if not 0 <= max_listens < max_in_flight:
            raise ValueError("max_listens must be below max_in_flight (listens must leave slots for other requests)")
        self.server = server
        self.write = write
        # subscriptions/listen comes back `Held` (not started): this transport caps the listens open at once.
        held = frozenset((_LISTEN,))
        # A fused threaded tool call comes back a running `PostedCall`: it writes its reply, then `_finished`.
        if conn is None:
            decoder = Decoder(MCP, max_size=max_message_size, max_depth=max_depth)
            conn = ServerConnection(server, write, line=True, decoder=decoder, held=held, over=self._finished)
        else:  # the stdio front's, nothing in flight (its legacy session, if any, goes on here)
            if conn.server is not server or not conn.line:
                raise ValueError("LineServer: conn must be a line connection of the same server")
            conn.rebind(write, held, over=self._finished)
        self.conn = conn
        self._calls = self.conn.calls
        # Bound once: looked up per line otherwise.
        self._receive = self.conn.receive
        self._request = self.conn.request
        self._splitter = LineSplitter(max_message_size)
        self._max_in_flight = max_in_flight
        self._max_waiting = max_waiting
        self._max_listens = max_listens
        self._listens: set[Call] = set()  # subscriptions/listen calls in flight, not cancelled
        self._waiting: deque[Request] = deque()  # requests waiting for a slot, in order
        self._ended = False  # end of input seen
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def session(self) -> LegacySession | None:
        """The legacy session, once a legacy client said ``initialize``."""
        return self.conn.session

    # -- input ----------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Feed bytes read from the client; each complete line is handled as one message."""
        for line in self._splitter.feed(data):
            self._line(line)

    def feed_eof(self) -> None:
        """The client's input ended: handle a last unterminated line, end listen streams, cancel endless calls."""
        for line in self._splitter.close():
            self._line(line)
        self._ended = True
        # Subscriptions end with the transport (subscriptions.mdx, Cancellation):
        # no response is owed, and they would otherwise never finish.
        if self._waiting:
            self._waiting = deque(r for r in self._waiting if r.method != _LISTEN)
        self.conn.cancel_calls(endless_only=True)
        # Requests we sent a legacy client will never be answered now.
        self.conn.close("the client closed the connection")

    @property
    def in_flight(self) -> int:
        """How many requests of the client are being handled."""
        return len(self._calls)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot."""
        return len(self._waiting)

    async def wait_closed(self) -> None:
        """After end of input: wait until every request in flight or waiting has replied."""
        while self._calls or self._waiting:
            self._idle.clear()
            await self._idle.wait()

    async def cancel_all(self) -> None:
        """Stop every request in flight or waiting without replying (the output is gone)."""
        self._waiting.clear()
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
        # No free slot: a request waits its turn (and no fused call overtakes the waiting ones).
        busy = len(self._calls) >= self._max_in_flight or bool(self._waiting)
        out = self._receive(line, busy)  # type: ignore[arg-type]  # not TooLong: bytes
        t = type(out)
        if t is tuple:  # a Reply: the fused call's, a synchronous handler's, or a bad message's
            self.write(out[0])  # type: ignore[index, arg-type]  # t is tuple: a Reply
        elif t is Call:
            self._run(out)  # type: ignore[arg-type]  # t is Call
        elif t is PostedCall:
            pass  # running: its reply is written from the loop when its thread is done, then `_finished`
        elif t is Held:  # no free slot, or a subscriptions/listen (capped here)
            request = out.request  # type: ignore[union-attr]  # t is Held
            if busy:
                self._wait(request)
            else:
                self._start(request)
        elif t is Notified:
            cancelled = out.cancelled  # type: ignore[union-attr]  # t is Notified
            if cancelled is not None:
                self._listens.discard(cancelled)  # its slot is free now, not when its task has unwound
            elif self._waiting and out.note.method == _CANCELLED:  # type: ignore[union-attr]  # t is Notified
                self._cancel_waiting(out.note)  # type: ignore[union-attr]  # t is Notified
        elif out is not None:  # a response that answers none of the server's requests
            log.warning(
                "ignored a response (id %r) from the client: the server sends no requests on stdio "
                "in MCP 2026-07-28",
                getattr(out, "id", None),
            )

    def _start(self, request: Request) -> None:
        if request.method == _LISTEN:
            if len(self._listens) >= self._max_listens:
                busy = ServerBusy(
                    f"Server busy: {len(self._listens)} subscriptions/listen streams are open on this connection, "
                    f"the most it allows ({self._max_listens}); cancel one and retry"
                )
                log.warning("refused subscriptions/listen %r: %d open, the limit", request.id, len(self._listens))
                self.write(reply_failed(request.id, busy)[0])
                return
            out = self._request(request)
            if type(out) is not tuple:
                self._listens.add(out)  # type: ignore[arg-type]  # not a reply: a Call
        else:
            out = self._request(request)
        if type(out) is tuple:
            self.write(out[0])
            return
        self._run(out)  # type: ignore[arg-type]  # not a reply: a Call to run

    def _run(self, call: Call) -> None:
        """Run a started `Call` in a task; its reply is written when it finishes."""
        task = asyncio.get_running_loop().create_task(self._finish(call))
        # Clean up in a done-callback: it also runs for a task cancelled before its first step.
        task.add_done_callback(functools.partial(self._finished, call))
        call.task = task

    def _wait(self, request: Request) -> None:
        """Every slot is taken: the request waits its turn, or is refused when too many wait."""
        if self._ended and request.method == _LISTEN:
            return  # a listen after the input ended: it would end at once, and no reply is owed
        if len(self._waiting) >= self._max_waiting:
            busy = ServerBusy(
                f"Server busy: {len(self._calls)} requests are in flight and {len(self._waiting)} wait "
                "on this connection; retry later"
            )
            log.warning("refused request %r: %d in flight, %d waiting", request.id, len(self._calls), len(self._waiting))
            self.write(reply_failed(request.id, busy)[0])
            return
        self._waiting.append(request)

    def _cancel_waiting(self, note: Notification) -> None:
        """``notifications/cancelled`` for a request still waiting: it is dropped, never started or answered."""
        params = note.params or {}
        target = params.get("requestId")
        if type(target) not in (str, int):
            return
        for request in self._waiting:
            if request.id == target and type(request.id) is type(target):
                self._waiting.remove(request)
                log.info("waiting request %r cancelled: %s", target, params.get("reason", "no reason given"))
                return

    async def _finish(self, call: Call) -> None:
        reply = await call.finish()
        if reply is not None:
            self.write(reply[0])
            # Once replied to, the id is free: the client may reuse it before this task's
            # done-callback runs (on uvloop, I/O callbacks can come first).
            self.conn.finished(call)

    def _finished(self, call: Call, task: asyncio.Task[None] | None = None) -> None:
        self.conn.finished(call)
        if call.method == _LISTEN:
            self._listens.discard(call)
        waiting = self._waiting
        while waiting and len(self._calls) < self._max_in_flight:
            self._start(waiting.popleft())
        if not self._calls and not waiting:
            self._idle.set()
