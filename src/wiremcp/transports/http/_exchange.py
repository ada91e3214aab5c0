"""The HTTP side of one modern request: its reply as one JSON body, or as an SSE stream.

A modern request is one `Call` whose ``write`` is an `Exchange`. The rules
kept here (streamable-http.mdx, "Sending Messages" and "Receiving
Messages"):

* a reply ready before anything was emitted is one ``application/json``
  body, with the status `STATUS_BY_CODE` gives its code (`final`);
* once the handler emits before its result is ready, or is silent for the
  keep-alive interval, the reply turns into ``text/event-stream``: one
  ``data:`` event per notification, ``: keep-alive`` comments, then the
  response as the last event (the one SSE carrier loop, `_carrier.carry`,
  on a `ModernFeed`, run by `MCPApp.__call__`; no event ids, no priming event);
* the reply is decided when the call finishes: after the head it is the
  last event whatever it is; before, it is one JSON body with its code's
  status, or a 403 when the token lacked a scope the handler needed after
  an await;
* the client closing the connection cancels the call; notifications a
  client leaves unread pile up to the exchange's backlog at most, past that
  the call is stopped;
* a call the shutdown's drain cancelled while its client waits is answered
  with -32603 (`_SHUT_DOWN`).
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import logging
from typing import TYPE_CHECKING, Any, Callable

from ...jsonrpc import InternalError
from ...server.transport import Call, current_headers, reply_failed
from ._asgi import JSON_CONTENT_TYPE, STATUS_BY_CODE, Receive, Send, json_reply, sse_start
from ._carrier import DISCONNECT, Signal, Waiter
from ._session_rules import ENTRY_COST

if TYPE_CHECKING:
    from ._auth import AuthGate
    from ._shutdown import Shutdown

__all__ = ["Exchange", "ModernFeed", "ReplyState", "final"]

log = logging.getLogger("wiremcp.transport")


class ReplyState(enum.Enum):
    """Where the HTTP response to a modern request is."""

    PENDING = "pending"  #: nothing sent: the reply may still be one JSON body
    STREAMING = "streaming"  #: the SSE head is sent: the rest goes as events
    DONE = "done"  #: the response is complete
    GONE = "gone"  #: the client disconnected or stopped reading: nothing more is sent


class Exchange(Waiter):
    """The HTTP side of one modern request: the events its `Call` wrote, and whether anyone still listens.

    The exchange is the call's ``write``: each notification becomes a
    ``data:`` event, kept here until the response loop sends it. While the
    response loop waits, the request's own ASGI task waits in ``receive()``
    (for the disconnect: no second task watches for it); `wake` interrupts
    that wait when there is something to write (an event, the call's end, a
    quiet keep-alive interval).
    """

    __slots__ = ("call", "backlog", "events", "pending", "state")

    def __init__(self, backlog: int) -> None:
        self.call: Call | None = None
        self.backlog = backlog  # the most bytes `events` may hold
        self.events: list[bytes] | None = None
        self.pending = 0  # bytes in `events`
        self.state = ReplyState.PENDING
        self.sleeper: asyncio.Task[Any] | None = None  # the response's task, while it waits in receive()
        self.woken = False  # `wake` interrupted that wait (a cancel the waiting side takes back)
        self.quiet = False  # a keep-alive interval passed in silence

    def __call__(self, data: bytes) -> None:
        if self.state is ReplyState.GONE or self.state is ReplyState.DONE:
            return
        event = b"data: " + data + b"\n\n"
        if self.events is None:
            self.events = [event]
        else:
            self.events.append(event)
        self.pending += len(event) + ENTRY_COST  # an exact-size bytes, its header and its slot
        call = self.call
        if self.pending > self.backlog and call is not None:
            # The client does not read its stream (the write is blocked): stop, rather than
            # buffer without bound. The response ends without its final message.
            log.warning(
                "request %r (%s) stopped: its client left %d bytes of notifications unread",
                call.id, call.method, self.pending,
            )
            self.state = ReplyState.GONE
            self.events = None
            call.cancel()
        self.wake()

    @property
    def gone(self) -> bool:
        """The client left or stopped reading (set by callbacks while the response loop awaits)."""
        return self.state is ReplyState.GONE



async def final(send: Send, ex: Exchange, data: bytes, code: int | None) -> None:
    """Answer a request whose reply is ready: JSON, or SSE when it emitted first."""
    ex.state = ReplyState.DONE
    if ex.events:
        await send(sse_start())
        await send({"type": "http.response.body", "body": b"".join(ex.events) + b"data: " + data + b"\n"})
        return
    status = 200 if code is None else STATUS_BY_CODE.get(code, 200)
    if status == 503 or status == 429:  # a cap: `json_reply` says Retry-After
        await json_reply(send, status, data)
        return
    # `json_reply`, inline: one coroutine less per request.
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(data))],
        }
    )
    await send({"type": "http.response.body", "body": data})


class ModernFeed:
    """One modern request's SSE response as `_carrier.carry` sees it: its exchange's events, then its reply.

    No event ids and no priming event (a modern stream is not resumable);
    the reply is decided when the call finishes, after the head when it
    emitted first (an error then goes as the last event, not as a status).
    """

    __slots__ = ("ex", "call", "receive", "refused", "shutdown", "auth", "task", "direct", "decided", "reply", "release")

    def __init__(
        self, ex: Exchange, call: Call, receive: Receive, refused: list[Any], shutdown: Shutdown, auth: AuthGate | None
    ) -> None:
        self.ex = ex
        self.call = call
        self.receive = receive
        self.refused = refused  # an `InsufficientScope` raised after an await (a task's scopes)
        self.shutdown = shutdown
        self.auth = auth
        self.task: asyncio.Future[Any] | None = None  # the call's task, or the future it awaits (`direct`)
        self.direct = False  # `task` is the handler's own future, settled by `Call.settle`
        self.decided = False
        self.reply: tuple[bytes, int | None] | None = None
        self.release: Callable[[], None] | None = None  # called once when the response is over

    async def open(self) -> None:
        ex, call = self.ex, self.call
        pending = call.pending
        if isinstance(pending, asyncio.Future):
            # A future no coroutine needs to await (an open ``subscriptions/listen``): no task for it,
            # and no place in the shutdown's drain (the shutdown ends every subscription first).
            self.task = pending
            self.direct = True
        else:
            task = self.task = call.task = asyncio.get_running_loop().create_task(call.finish())
            self.shutdown.track(task)
        # The handler has its headers (ctx.headers: its task's copy of the context, or it ran already);
        # this task lets them go for the rest of the stream (before the callbacks below copy its context).
        current_headers.set(None)
        self.task.add_done_callback(ex.wake, context=_NO_CONTEXT)

    def _finished(self) -> bool:
        """Whether the call's reply is decided (`reply`; None: cancelled, nothing more is sent)."""
        task = self.task
        assert task is not None
        if not task.done():
            return False
        if not self.decided:
            self.decided = True
            if self.direct:
                reply = self.call.settle(task)
            else:
                reply = None if task.cancelled() else task.result()
                if reply is None and self.shutdown.draining:
                    # Cancelled by the shutdown's drain while the client waits: it is owed a reply
                    # (not a bare HTTP 500 from the ASGI server, with an error in the log).
                    reply = reply_failed(self.call.id, InternalError(_SHUT_DOWN))
            self.reply = reply
        return True

    def poll(self) -> Signal | None:
        ex = self.ex
        if ex.gone:
            return Signal.GONE
        if ex.events:
            return Signal.READY
        if self._finished():
            return Signal.GONE if self.reply is None else Signal.READY
        return None

    async def wait(self, keepalive: float | None) -> Signal | None:
        """Wait in the request's own ``receive()`` (the disconnect) until `Exchange.wake` interrupts it."""
        ex = self.ex
        me = asyncio.current_task()
        assert me is not None
        timer = asyncio.get_running_loop().call_later(keepalive, ex.keepalive) if keepalive is not None else None
        ex.sleeper = me
        ex.woken = ex.quiet = False
        try:
            message = await self.receive()
        except asyncio.CancelledError:
            if not ex.woken or me.uncancel() > 0:
                raise  # cancelled by someone else too (the ASGI server): not ours to take back
            message = None
        except Exception:  # noqa: BLE001 - the ASGI server could not read from the client: it is gone
            message = DISCONNECT
        finally:
            ex.sleeper = None
            if timer is not None:
                timer.cancel()
        if message is not None and message.get("type") == "http.disconnect":
            self._gone()
            return None
        # Woken, or not a disconnect (an ASGI server may report trailing empty body chunks): look again.
        return Signal.QUIET if ex.quiet and not ex.gone else None

    def _gone(self) -> None:
        """The client closed the connection: the call is cancelled, nothing more is sent."""
        ex, call = self.ex, self.call
        ex.state = ReplyState.GONE
        task = self.task
        if task is not None and not task.done():
            log.info("request %r (%s) cancelled: the client closed the connection", call.id, call.method)
            call.cancel()

    def alone(self) -> bytes | None:
        if self.ex.events or self.reply is None:
            return None  # it emitted first: an SSE stream
        self.ex.state = ReplyState.DONE
        return self.reply[0]

    async def answer(self, send: Send, data: bytes) -> None:
        """The reply as one JSON body: its code's status, or 403 when refused after an await."""
        reply = self.reply
        assert reply is not None
        refused, auth = self.refused, self.auth
        if refused and auth is not None:
            await auth.forbidden(send, self.call.id, refused[0])
        else:
            code = reply[1]
            await json_reply(send, 200 if code is None else STATUS_BY_CODE.get(code, 200), data)

    def prime(self) -> bytes:
        self.ex.state = ReplyState.STREAMING
        return b""

    def take(self) -> tuple[bytes, bool]:
        ex = self.ex
        events = ex.events
        chunk = b""
        if events:
            chunk = b"".join(events)
            ex.events = None
            ex.pending = 0
        if self._finished() and self.reply is not None and not ex.gone:
            ex.state = ReplyState.DONE
            return chunk + b"data: " + self.reply[0] + b"\n", True
        return chunk, False

    def ending(self) -> bytes:
        return b""  # never released nor lost: a modern stream has no session

    async def close(self) -> None:
        ex, call, task = self.ex, self.call, self.task
        if ex.state is not ReplyState.DONE:
            ex.state = ReplyState.GONE  # emit drops from now on
        call.cancel()  # a no-op once replied; otherwise its notifications drop from now on
        if task is not None and not task.done():
            task.cancel()  # the client left, or this app is being shut down
        release, self.release = self.release, None
        if release is not None:
            release()


#: The context `Exchange.wake` runs in as a done callback (it reads no context variable: no copy per stream).
_NO_CONTEXT = contextvars.Context()

#: The error of a request the shutdown cancelled after ``Server.shutdown_grace``.
_SHUT_DOWN = "the server shut down before the request finished (cancelled after its shutdown grace period)"


