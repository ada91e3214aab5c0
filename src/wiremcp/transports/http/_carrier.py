"""The one loop that carries an SSE stream on one HTTP response, whichever era and store it comes from.

A stream gives the loop a `Feed`: a legacy (2025-11-25) stream's comes from
its store (`_sessions._Pump`: events in this process;
`_shared_streams.RedisFeed`: events in a Redis stream), a modern
(2026-07-28) request's from its exchange (`_exchange.ModernFeed`: a
``subscriptions/listen`` stream, or a call that emits before its reply).
The loop keeps the wire rules, once (2025-11-25 transports.mdx, "Sending
Messages", "Listening", "Resumability and Redelivery"; 2026-07-28
streamable-http.mdx, "Sending Messages"):

* a POST's reply is one ``application/json`` body when its response is all
  there is before anything was written (`Feed.alone`; written by ``answer``,
  a 200 unless the feed's era says otherwise: a modern reply's status comes
  from its error code, or it is a 403 decided after an await); otherwise an
  SSE stream: its head with the first piece, the priming event first
  (`Feed.prime`, taken before the events so that it gets the lower number;
  b"" for a modern stream, which has no event ids), then the events, and
  the response ends with the stream's last event;
* a GET's head goes out at once: the priming event, or a ``: keep-alive``
  comment when there is none to give;
* a stream silent for ``keepalive`` seconds gets a ``: keep-alive`` comment
  (`Signal.QUIET`), after the head and priming event when it is the first piece;
* the client leaving ends the loop with nothing more written (`Signal.GONE`):
  a legacy stream waits for the client to resume, a modern call is cancelled
  by its feed's `Feed.close` (so is one that ended with no reply owed, or
  whose client left its backlog unread); a stream that releases its
  response ends it with its ``ending`` (`Signal.RELEASED`); a session that
  ended is 404 when nothing was written yet (`Signal.LOST`), else the end of
  the response; a stream finished with nothing left ends it (`Signal.ENDED`).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ._asgi import KEEPALIVE_COMMENT, Message, Send, http_error, json_reply
from ._session_base import write_sse

__all__ = ["DISCONNECT", "Signal", "Feed", "Waiter", "carry"]

#: What a failed ``receive()`` counts as.
DISCONNECT: Message = {"type": "http.disconnect"}


class Waiter:
    """A response's wait in its request's own ``receive()``, which `wake` interrupts once (a feed's `Feed.wait`).

    No second task watches for the disconnect: the response's task waits in
    ``receive()`` itself, and `wake` (an event to write, the end, a quiet
    keep-alive interval) cancels that wait, a cancel the waiting side takes
    back (``Task.uncancel``); a cancel from anyone else (the ASGI server)
    goes through. Subclasses set the three slots in their ``__init__``; each
    feed writes its ``wait`` around ``receive()`` itself (`DISCONNECT` for a
    failed one): a shared coroutine would be one more frame held by every
    idle stream (+0.2 KiB of RSS per stream, `bench/idle_streams.py`).
    """

    __slots__ = ("sleeper", "woken", "quiet")

    sleeper: asyncio.Task[Any] | None  # the response's task, while it waits in receive()
    woken: bool  # `wake` interrupted that wait
    quiet: bool  # a keep-alive interval passed in silence

    def wake(self, _: Any = None) -> None:
        """Interrupt the response's wait in ``receive()``, once (the waiting side takes the cancel back)."""
        sleeper = self.sleeper
        if sleeper is not None and not self.woken:
            self.woken = True
            sleeper.cancel()

    def keepalive(self) -> None:
        """The keep-alive timer's callback."""
        self.quiet = True
        self.wake()


class Signal(enum.Enum):
    """What a `Feed` has for its response now."""

    READY = "ready"  #: events (or the stream's last) to write
    QUIET = "quiet"  #: nothing for ``keepalive`` seconds
    RELEASED = "released"  #: the stream released the response: its `Feed.ending`, then the end
    LOST = "lost"  #: the session ended
    GONE = "gone"  #: the client disconnected
    ENDED = "ended"  #: the stream is finished and nothing is left to write


class Feed(Protocol):
    """One stream as one HTTP response sees it."""

    async def open(self) -> None:
        """The response starts (before anything else is asked)."""

    def poll(self) -> Signal | None:
        """What there is now, without waiting (None: nothing yet)."""

    async def wait(self, keepalive: float | None) -> Signal | None:
        """Wait for something to happen; None when `poll` should look again."""

    def alone(self) -> bytes | None:
        """The response, if it is all there is to write; taking it ends the stream (one JSON body)."""

    def prime(self) -> bytes:
        """The priming event of this response (b"": none); asked once, when the head goes out."""

    def take(self) -> tuple[bytes, bool]:
        """The events ready, framed, and whether the stream's last is among them."""

    def ending(self) -> bytes:
        """What a released response ends with."""

    async def close(self) -> None:
        """The response is over (however it ended)."""


async def _json_200(send: Send, body: bytes) -> None:
    await json_reply(send, 200, body)


async def carry(
    feed: Feed,
    send: Send,
    *,
    json_ok: bool,
    keepalive: float | None,
    answer: Callable[[Send, bytes], Awaitable[None]] = _json_200,
) -> None:
    """Write a stream on one HTTP response until it ends, the client leaves, or the stream releases it (module docs).

    ``answer`` writes the response `Feed.alone` gives as the one JSON body (a 200 by default).
    """
    # (No closure for the writes: an idle stream's frame holds no more than its locals.)
    head_sent = False
    try:
        await feed.open()
        while True:
            signal = feed.poll()
            if not head_sent and not json_ok and (signal is None or signal is Signal.ENDED):
                signal = Signal.READY  # a GET: the head at once
            elif signal is None:
                signal = await feed.wait(keepalive)
                if signal is None:
                    continue
            if signal is Signal.GONE:
                return  # the client left; the stream waits for it to resume
            if signal is Signal.LOST and not head_sent:
                await json_reply(send, 404, http_error("Not Found: the session has ended"))
                return
            if signal is Signal.RELEASED or signal is Signal.LOST:
                await write_sse(send, feed.ending(), more=False, head=not head_sent)
                return
            if signal is Signal.READY:
                if json_ok and not head_sent:
                    alone = feed.alone()
                    if alone is not None:  # answered before anything else: one JSON body
                        await answer(send, alone)
                        return
                head = b"" if head_sent else feed.prime()
                chunk, last = feed.take()
                chunk = head + chunk
                if not head_sent:
                    chunk = chunk or KEEPALIVE_COMMENT  # something to send the head with
                await write_sse(send, chunk, more=not last, head=not head_sent)
                head_sent = True
                if last:
                    return
                del chunk, head  # an idle stream keeps no written bytes
            elif signal is Signal.ENDED:
                await write_sse(send, b"", more=False, head=not head_sent)
                return
            else:  # QUIET
                await write_sse(send, (b"" if head_sent else feed.prime()) + KEEPALIVE_COMMENT, more=True, head=not head_sent)
                head_sent = True
    finally:
        await feed.close()
