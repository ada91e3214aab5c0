"""One incoming request in progress: the per-request event sink every transport uses.

A `Call` is made for each request a transport receives. It keeps these rules:

* the handler runs through `Call.start` (its synchronous part) and, when it
  returns an awaitable, `Call.finish` (awaited by the transport in a task);
  between them the request gets exactly one reply, made by `_reply` (the one
  place where exceptions become wire errors), or none at all once cancelled
  (a ``CancelledError`` the handler raises while its task is not being
  cancelled is a failure, -32603: `_reply.reply_cancelled`);
* the handler's notifications (progress, log messages) go through
  `Call.emit`, encoded here and handed to the transport's ``write`` function
  (a line on stdio, an SSE event on HTTP); once the call is replied to or
  cancelled they are dropped, never sent after the reply;
* a call is in one of three states (`CallState`): `RUNNING` until its reply is made
  (`REPLIED`) or it is stopped without one (`CANCELLED`:
  ``notifications/cancelled``, the client disconnected, its backlog
  overflowed). Cancelling a running task is scheduled, not immediate: even a
  request cancelled in the read that brought it starts, and its coroutines
  unwind normally at their first await.

The transport owns the I/O: it supplies ``write`` (what to do with one
encoded notification) and runs the task.
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..jsonrpc import LocalProtocolError, Request, encode_notification
from ._reply import Reply, reply_cancelled, reply_failed, reply_ok

if TYPE_CHECKING:
    import asyncio

    #: `Server.handle`, or `LegacySession.handle`: a request and its emit, to a result or an awaitable of one.
    #: (For type checkers only: an alias is built at import, bench/README.md, "Cold start".)
    Handle = Callable[[Request, Callable[[str, dict[str, Any]], None]], dict[str, Any] | Awaitable[dict[str, Any]]]

__all__ = ["Call", "CallState", "PostedCall", "Write"]

log = logging.getLogger("wiremcp.server")

#: What a transport does with one encoded message (a line on stdio, an event on HTTP).
Write = Callable[[bytes], None]


class CallState(enum.Enum):
    """Where a `Call` is in its life."""

    RUNNING = "running"  #: the handler runs; its notifications are written
    REPLIED = "replied"  #: its one reply is made; nothing more is written for it
    CANCELLED = "cancelled"  #: stopped without a reply; nothing more is written for it


# Module-level names for the states: a global lookup, not an enum class attribute, on the hot path.
_RUNNING = CallState.RUNNING
_REPLIED = CallState.REPLIED
_CANCELLED = CallState.CANCELLED


class Call:
    """One request being served: its id, its notifications' way out, its state and its task."""

    __slots__ = ("id", "method", "write", "line", "state", "pending", "task")

    def __init__(self, id: Any, method: str, write: Write, line: bool = True) -> None:
        self.id = id
        self.method = method
        self.write = write  # the transport's sink: a function, or a stream object that is callable
        self.line = line  # encode notifications as newline-terminated lines
        self.state = _RUNNING
        self.pending: Awaitable[dict[str, Any]] | None = None  # the handler's awaitable, once `start` made one
        self.task: asyncio.Task[Any] | None = None  # set by the transport that runs `finish`

    def __repr__(self) -> str:
        return f"<Call {self.method} id={self.id!r} {self.state.value}>"

    def start(self, handle: Handle, request: Request) -> Reply | None:
        """Run the handler. The reply when it is ready now; ``None`` when `finish` must be awaited."""
        try:
            out = handle(request, self.emit)
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            self.state = _REPLIED
            return reply_failed(self.id, exc)
        if type(out) is dict:
            self.state = _REPLIED
            return reply_ok(self.id, out)
        self.pending = out  # type: ignore[assignment]  # not a dict: the awaitable of one
        return None

    async def finish(self) -> Reply | None:
        """Await the handler: its reply, or ``None`` if the call was cancelled meanwhile."""
        import asyncio  # imported by then: on first use, not at start-up
        pending = self.pending
        assert pending is not None, "finish() follows a start() that returned None"
        # `settle`, inline: one coroutine frame less per asynchronous request.
        reply: Reply
        try:
            result = await pending
        except asyncio.CancelledError as exc:  # cancelled: raised again; raised by the handler itself: -32603
            reply = reply_cancelled(self.id, exc)
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            reply = reply_failed(self.id, exc)
        else:
            reply = reply_ok(self.id, result)
        if self.state is not _RUNNING:
            return None
        self.state = _REPLIED
        return reply

    def settle(self, done: asyncio.Future[dict[str, Any]]) -> Reply | None:
        """The reply of a handler whose awaitable is a future, once it is done and no task awaited it (`finish`'s rules)."""
        if self.state is not _RUNNING:
            return None
        if done.cancelled():
            self.state = _CANCELLED
            return None
        exc = done.exception()
        self.state = _REPLIED
        return reply_ok(self.id, done.result()) if exc is None else reply_failed(self.id, exc)

    def cancel(self) -> None:
        """Stop the call without a reply (its task, or the future it awaits with none, is cancelled on the next loop step)."""
        if self.state is _RUNNING:
            self.state = _CANCELLED
        task = self.task
        if task is None and self.pending is not None and hasattr(self.pending, "get_loop"):
            task = self.pending  # type: ignore[assignment]  # a future no task awaits (`settle`)
        if task is not None and not task.done():
            task.get_loop().call_soon(task.cancel)

    def cancelled(self) -> bool:
        """Whether the call was stopped without a reply (as `asyncio.Future.cancelled`: a worker reads it)."""
        return self.state is _CANCELLED

    def emit(self, method: str, params: dict[str, Any]) -> None:
        """A notification for this request (progress, log message); dropped once it is over."""
        if self.state is not _RUNNING:
            log.debug("dropped %s for request %r: it is finished or cancelled", method, self.id)
            return
        try:
            data = encode_notification(method, params, line=self.line)
        except LocalProtocolError as exc:
            log.error("cannot encode %s for request %r: %s", method, self.id, exc)
            return
        self.write(data)


class PostedCall(Call):
    """A call no task awaits: its outcome is posted to the loop, where one callback writes its reply.

    The fused stage's threaded tool call (`_intake.FastPath`, `Workers.post`):
    the worker's completion callback, on the loop, makes the reply when the
    call still runs (`REPLIED`), writes it and hands the call to ``over``
    (the transport's end of a call: its id and its slot freed); once the call
    is `CANCELLED` the outcome is dropped. `cancel` hands it to ``over`` itself,
    on the next loop step (as a cancelled task's done-callback would): the id
    and the slot are free while the thread, which Python cannot interrupt,
    runs to its end. ``data`` and ``fused``: the call's bytes and the tool's
    `FusedArguments`, for the callback.
    """

    __slots__ = ("over", "data", "fused")

    def __init__(self, id: Any, write: Write, line: bool, over: Callable[[Call], Any], data: bytes, fused: Any) -> None:
        # `Call.__init__`, inline (one frame less per call): a ``tools/call`` with no pending awaitable, no task.
        self.id = id
        self.method = "tools/call"
        self.write = write
        self.line = line
        self.state = _RUNNING
        self.pending = None
        self.task = None
        self.over = over
        self.data = data
        self.fused = fused

    def cancel(self) -> None:
        """Stop the call without a reply; ``over`` frees its id and slot on the next loop step."""
        if self.state is not _RUNNING:
            return
        self.state = _CANCELLED
        import asyncio  # imported by then: on first use, not at start-up
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a connection closed outside one): now
            self.over(self)
        else:
            loop.call_soon(self.over, self)
