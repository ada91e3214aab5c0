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
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, Awaitable, Callable

from ...jsonrpc import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    MCP,
    Decoder,
    InvalidRequest,
    JSONRPCError,
    LineSplitter,
    LocalProtocolError,
    Notification,
    PendingRequests,
    RemoteProtocolError,
    Request,
    TooLong,
    encode_notification,
    encode_request,
)
from ...protocol import methods
from ...protocol.meta import PROTOCOL_VERSION
from ...server import Server
from ...server._legacy import ClientRequestFailed
from ...server._reply import reply_failed, reply_ok, settle

__all__ = ["LineServer", "DEFAULT_MAX_IN_FLIGHT"]

log = logging.getLogger("wiremcp.transport")

#: Asynchronous requests allowed to run at once on one stream before reading pauses.
DEFAULT_MAX_IN_FLIGHT = 256


class _Call:
    """One request in progress; ``done`` once replied to or cancelled."""

    __slots__ = ("conn", "id", "done", "task", "endless")

    def __init__(self, conn: LineServer, id: Any) -> None:
        self.conn = conn
        self.id = id
        self.done = False
        self.task: asyncio.Task[None] | None = None
        self.endless = False  # a subscriptions/listen stream: lives until cancelled

    def cancel(self) -> None:
        self.done = True
        if self.task is not None:
            # Scheduled, not immediate: the task's first step is already queued,
            # so even a request cancelled in the read that brought it starts,
            # and its coroutines unwind normally at their first await.
            self.task.get_loop().call_soon(self.task.cancel)

    def emit(self, method: str, params: dict[str, Any]) -> None:
        if self.done:
            log.debug("dropped %s for request %r: it is finished or cancelled", method, self.id)
            return
        try:
            self.conn.write(encode_notification(method, params, line=True))
        except LocalProtocolError as exc:
            log.error("cannot encode %s for request %r: %s", method, self.id, exc)


class LineServer:
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
        self._pause = pause_reading
        self._resume = resume_reading
        self._paused = False
        self._decoder = Decoder(MCP, max_size=max_message_size, max_depth=max_depth)
        self._splitter = LineSplitter(max_message_size)
        self._max_in_flight = max_in_flight
        self._calls: dict[Any, _Call] = {}
        self._eof = False
        self.session: Any = None  # a LegacySession once a legacy client said initialize
        self._outgoing: PendingRequests[asyncio.Future[Any]] = PendingRequests()
        self._idle = asyncio.Event()
        self._idle.set()

    # -- input ----------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        for line in self._splitter.feed(data):
            self._line(line)

    def feed_eof(self) -> None:
        for line in self._splitter.close():
            self._line(line)
        self._eof = True
        # Subscriptions end with the transport (subscriptions.mdx, Cancellation):
        # no response is owed, and they would otherwise never finish.
        for call in list(self._calls.values()):
            if call.endless:
                call.cancel()
        # Requests we sent a legacy client will never be answered now.
        for entry in self._outgoing.drain():
            if not entry.context.done():
                entry.context.set_exception(ConnectionError("the client closed the connection"))
        if self.session is not None:
            self.session.close()

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
        for call in list(self._calls.values()):
            call.cancel()
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
            msg = self._decoder.decode(line)  # type: ignore[arg-type]
        except JSONRPCError as exc:
            log.warning("bad message: %s", exc.message)
            self.write(reply_failed(getattr(exc, "id", None), exc)[0])
            return
        t = type(msg)
        if t is Request:
            self._request(msg)  # type: ignore[arg-type]
        elif t is Notification:
            self._notification(msg)  # type: ignore[arg-type]
        elif self.session is not None and msg.id in self._outgoing:  # type: ignore[union-attr]
            self._answer(msg)
        else:
            log.warning(
                "ignored a response (id %r) from the client: the server sends no requests on stdio "
                "in MCP 2026-07-28",
                getattr(msg, "id", None),
            )

    def _request(self, req: Request) -> None:
        id_ = req.id
        if id_ in self._calls:
            exc = InvalidRequest(f"Invalid Request: request id {id_!r} is already in flight", id=id_)
            self.write(reply_failed(id_, exc)[0])
            return
        call = _Call(self, id_)
        try:
            if (self.session is not None or req.method == "initialize") and self.server.legacy and not _modern(req.params):
                if self.session is None:
                    self.session = self.server.open_session(self._send_request, self._notify)
                out = self.session.handle(req, call.emit)
            else:
                out = self.server.handle(req, call.emit)
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            call.done = True
            self.write(reply_failed(id_, exc)[0])
            return
        if type(out) is dict:
            call.done = True
            self.write(reply_ok(id_, out)[0])
            return
        self._calls[id_] = call
        call.endless = req.method == methods.SUBSCRIPTIONS_LISTEN
        task = asyncio.get_running_loop().create_task(self._finish(call, out))  # type: ignore[arg-type]
        # Clean up in a done-callback: it also runs for a task cancelled before its first step.
        task.add_done_callback(functools.partial(self._finished, call))
        call.task = task
        if len(self._calls) >= self._max_in_flight and self._pause is not None and not self._paused:
            self._paused = True
            self._pause()

    async def _finish(self, call: _Call, pending: Awaitable[Any]) -> None:
        data, _ = await settle(call.id, pending)
        if not call.done:
            call.done = True
            self.write(data)
            # Once replied to, the id is free: the client may reuse it before this task's
            # done-callback runs (on uvloop, I/O callbacks can come first).
            del self._calls[call.id]

    def _finished(self, call: _Call, task: asyncio.Task[None] | None = None) -> None:
        call.done = True
        if self._calls.get(call.id) is call:
            del self._calls[call.id]
        if self._paused and len(self._calls) < self._max_in_flight and self._resume is not None:
            self._paused = False
            self._resume()
        if not self._calls:
            self._idle.set()

    # -- legacy sessions: requests from the server to the client ------------------

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        try:
            self.write(encode_notification(method, params, line=True))
        except LocalProtocolError as exc:
            log.error("cannot encode %s: %s", method, exc)

    async def _send_request(self, method: str, params: dict[str, Any]) -> Any:
        if self._eof:
            raise ConnectionError("the client closed the connection")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        id_ = self._outgoing.new_id()
        self._outgoing.add(id_, method, context=future)
        self.write(encode_request(id_, method, params, line=True))
        try:
            return await future
        except asyncio.CancelledError:  # timed out or the call was cancelled: tell the client
            if self._outgoing.abandon(id_) is not None:
                self._notify(methods.CANCELLED, {"requestId": id_, "reason": "no longer needed"})
            raise

    def _answer(self, msg: Any) -> None:
        try:
            entry = self._outgoing.resolve(msg)
        except RemoteProtocolError as exc:
            log.warning("%s", exc)
            return
        if entry is None or entry.context.done():
            return
        if hasattr(msg, "result"):
            entry.context.set_result(msg.result)
        else:
            entry.context.set_exception(ClientRequestFailed(msg.code, msg.message, msg.data))

    def _notification(self, note: Notification) -> None:
        if note.method == methods.CANCELLED:
            params = note.params or {}
            target = params.get("requestId")
            call = self._calls.get(target) if type(target) in (str, int) else None
            if call is None:
                # Unknown, finished or malformed: ignore (cancellation.mdx, Error Handling).
                log.debug("cancellation for %r ignored: no such request in flight", target)
                return
            log.info("request %r cancelled: %s", target, params.get("reason", "no reason given"))
            call.cancel()
            return
        if note.method == "notifications/initialized" and self.session is not None:
            self.session.initialized = True
            return
        log.debug("notification %s received", note.method)


def _modern(params: Any) -> bool:
    """Whether a request carries the modern per-request protocol fields."""
    if type(params) is not dict:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION in meta
