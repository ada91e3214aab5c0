"""The streams of a legacy session shared through Redis: writing events there, and reading them onto a response.

`_shared_sessions` keeps the session rules; what is kept in Redis is
`wiremcp.backends.redis.sessions`. Rules kept here:

* a stream's events are written to Redis in the order they were made, one
  at a time, by one task per stream (`StreamWriter`); a request of the
  server to the client is registered (which worker waits for its answer)
  before the client can see it; a write Redis refuses is logged, and the
  client's resume ends the stream;
* a session notification goes to the standalone stream once whatever the
  number of workers (`StreamWriter.notify`: the bus change's name);
* one HTTP response reads one stream from Redis (`RedisFeed`, a
  `_carrier.Feed`: `_carrier.carry` keeps the wire rules): the events after
  ``after`` (a ``Last-Event-ID``, or for a new GET on the standalone stream
  the last one a GET carried), the stream's final event ending it; an event
  numbered at most ``after`` is not sent again; the standalone stream's
  events handed to a response are marked delivered before they are written;
* while no event comes, a request's stream whose worker died gets its final
  (error) event (`SharedSessions.worker_gone`); a newer GET, the session's
  end or the worker stopping lets the response go (`RedisFeed.let_go`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from typing import TYPE_CHECKING, Any

from ._carrier import Signal
from ._session_base import event, priming, unline
from ._asgi import Receive

if TYPE_CHECKING:
    from ._shared_sessions import SharedSession, SharedSessions

__all__ = ["StreamWriter", "RedisFeed", "CURRENT"]

log = logging.getLogger("wiremcp.transport")

#: The stream of the legacy request whose handler is running (set in its task).
CURRENT: contextvars.ContextVar[StreamWriter | None] = contextvars.ContextVar("wiremcp_shared_stream", default=None)


class StreamWriter:
    """Writes one stream's events to Redis, in order (the ``write`` of a request's `Call`)."""

    __slots__ = ("sessions", "session", "stream", "finished", "_queue", "_task")

    def __init__(self, sessions: SharedSessions, session: SharedSession, stream: int) -> None:
        self.sessions = sessions
        self.session = session
        self.stream = stream
        self.finished = False
        self._queue: asyncio.Queue[tuple[bytes, bool, tuple[str, int] | None]] = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._drain())

    def __call__(self, data: bytes) -> None:
        if self.finished:
            log.debug("dropped a message for stream %d of session %s: it is finished", self.stream, self.session.id[:8])
            return
        self._queue.put_nowait((unline(bytes(data)), False, None))

    def notify(self, data: bytes, change: tuple[str, int] | None) -> None:
        """A session notification (standalone stream): kept for a later GET; written once, by whichever worker comes first."""
        if self.finished:
            log.debug("dropped a notification for session %s: its copy here has ended", self.session.id[:8])
            return
        self._queue.put_nowait((unline(bytes(data)), False, change or ("", 0)))

    def abandon(self) -> None:
        """Stop writing here without ending the stream (another worker may still write to it)."""
        if not self.finished:
            self.finished = True
            self._queue.put_nowait((b"", False, None))  # what is queued is written first, then the task ends

    @property
    def idle(self) -> bool:
        return self._queue.empty()

    def finish(self, final: bytes | None) -> None:
        """The last event: the response (None: cancelled, the stream ends with nothing more)."""
        if self.finished:
            return
        self.finished = True
        self._queue.put_nowait((b"" if final is None else unline(final), True, None))

    async def _drain(self) -> None:
        sessions = self.sessions
        while True:
            data, final, change = await self._queue.get()
            if not data and not final:
                if self.finished and self._queue.empty():
                    return  # abandoned
                continue
            try:
                if change is not None:
                    await sessions.append_notification(self.session.id, data, change)
                    continue
                if not final:
                    await sessions.note_outgoing(self.session.id, data)  # before the client can see it
                await sessions.store.append(self.session.id, self.stream, data, final)
            except Exception as exc:  # noqa: BLE001 - Redis lost: say so; the client's resume will end it
                log.warning("session %s: an event of stream %d was not written: %s", self.session.id[:8], self.stream, exc)
            if final:
                return


class RedisFeed:
    """One HTTP response carrying one stream from Redis (a `_carrier.Feed`); `let_go` ends it."""

    __slots__ = (
        "sessions", "session", "stream", "after", "fresh", "primes", "receive", "stop", "lost", "last_id", "quiet_since",
        "reader", "gone", "stopped", "chunk", "last", "answer",
    )  # fmt: skip

    def __init__(
        self, sessions: SharedSessions, session: SharedSession, stream: int, after: int, receive: Receive, *, prime: bool
    ) -> None:
        self.sessions = sessions
        self.session = session
        self.stream = stream
        self.after = after  # events numbered up to this one are not sent again
        self.fresh = prime  # a new stream's response, not a resumption
        self.primes = prime and session.primes  # the response opens with a priming event
        self.receive = receive
        self.stop = asyncio.Event()
        self.lost = False  # the session ended (404 when nothing was sent yet)
        self.last_id = "0-0"  # the Redis id of the last entry read
        self.quiet_since = time.monotonic()
        self.reader: Any = None
        self.gone: asyncio.Task[None] | None = None
        self.stopped: asyncio.Task[Any] | None = None
        self.chunk = b""  # events read, framed, not taken yet
        self.last = False  # ... the stream's final among them
        self.answer: bytes | None = None  # ... the final alone, first of the batch
        session.carriers.add(self)
        if stream == 0:
            session.standalone_carrier = self

    def let_go(self, *, lost: bool = False) -> None:
        self.lost = self.lost or lost
        self.stop.set()

    # -- the `_carrier.Feed` ----------------------------------------------------------------

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        self.gone = loop.create_task(_disconnected(self.receive))
        self.stopped = loop.create_task(self.stop.wait())
        self.reader = self.sessions.backend.blocking_client()
        if self.stream == 0 and self.fresh:
            # A new GET stream: what no GET has carried yet (kept meanwhile, bounded), then
            # what comes; what an earlier GET carried is for a client that resumes it with
            # Last-Event-ID.
            self.after = await self.sessions.store.last_delivered(self.session.id)

    def poll(self) -> Signal | None:
        assert self.gone is not None
        if self.gone.done():
            return Signal.GONE
        if self.stop.is_set():
            return Signal.LOST if self.lost else Signal.RELEASED
        return Signal.READY if self.chunk or self.last else None

    async def wait(self, keepalive: float | None) -> Signal | None:
        assert self.gone is not None and self.stopped is not None
        store = self.sessions.store
        read: asyncio.Task[Any] = asyncio.get_running_loop().create_task(
            store.read(self.reader, store.stream_key(self.session.id, self.stream), self.last_id)
        )
        done, _ = await asyncio.wait({read, self.gone, self.stopped}, return_when=asyncio.FIRST_COMPLETED)
        if read not in done:
            read.cancel()
            try:
                await read
            except BaseException:  # noqa: BLE001 - cancelled, or the connection it used
                pass
        if self.gone in done:
            return Signal.GONE  # the client left; the events stay in Redis for it to resume
        if self.stopped in done:
            return Signal.LOST if self.lost else Signal.RELEASED
        entries = read.result()
        if not entries:
            if self.stream and await self.sessions.worker_gone(self.session, self.stream):
                return None  # the stream now holds its final (error) event: read it
            if keepalive is not None and time.monotonic() - self.quiet_since >= keepalive:
                self.quiet_since = time.monotonic()
                return Signal.QUIET
            return None
        return await self._read(entries[0][1])

    async def _read(self, entries: Any) -> Signal | None:
        chunk = b""
        carried = 0
        for entry_id, fields in entries:
            self.last_id = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
            number = int(fields[b"n"])
            data = fields[b"d"]
            final = fields[b"f"] == b"1"
            if number <= self.after and not final:
                continue
            if number <= self.after:
                data = b""  # the final event, already seen: only the end of the response
            if final and not chunk and data:
                self.answer = data  # answered before anything else: one JSON body, if nothing was sent
            if data:
                chunk += event(self.stream, number, data)
                carried = number
            if final:
                self.chunk, self.last = chunk, True
                return Signal.READY
        if not chunk:
            return None
        self.quiet_since = time.monotonic()
        if self.stream == 0:  # handed to this response now (as one process counts it)
            await self.sessions.store.delivered(self.session.id, carried)
        self.chunk = chunk
        return Signal.READY

    def alone(self) -> bytes | None:
        return self.answer if self.last else None

    def prime(self) -> bytes:
        return priming(self.stream, self.after) if self.primes else b""

    def take(self) -> tuple[bytes, bool]:
        chunk, self.chunk, self.answer = self.chunk, b"", None
        return chunk, self.last

    def ending(self) -> bytes:
        return b""

    async def close(self) -> None:
        for task in (self.gone, self.stopped):
            if task is not None:
                task.cancel()
        session = self.session
        session.carriers.discard(self)
        if session.standalone_carrier is self:
            session.standalone_carrier = None
        if self.reader is not None:
            await self.reader.aclose()


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
