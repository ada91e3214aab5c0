"""A POST's body, read under the transport's limits (streamable-http.mdx; RFC 9110).

`BodyReader` is the body-reading block of `MCPApp`. The rules it keeps:

* the HTTP-level checks come first, in this order: ``Content-Type`` must be
  JSON (415), ``Accept`` must list JSON and SSE (406), a ``Content-Length``
  over ``max_body_size`` is refused before a byte is read (413);
* the body is at most ``max_body_size`` bytes: a longer one is refused with
  413 as soon as it is seen, and is not kept (`_linger` drains it while the
  client reads the 413);
* the whole body must arrive within ``read_timeout`` (408; one timer for
  every read in progress, `_ReadDeadlines`);
* the first ``receive()`` runs at once (`_Eager`): when the ASGI server has
  the whole small body in hand (the common case), no deadline is
  registered and nothing is awaited.

`begin` is synchronous and answers the common case; `finish` awaits the
rest, sends a refusal itself, and returns None when there is nothing more to
do (refused, or the client left).
"""

from __future__ import annotations

import asyncio
import logging
import types
from typing import Any, Awaitable, Coroutine, Generator

from ._asgi import Message, Receive, Send, http_error
from ._linger import refuse
from ._security import accepts_json_and_sse, is_json_content_type

__all__ = ["BodyReader", "Started"]

log = logging.getLogger("wiremcp.transport")

_COROUTINE = types.CoroutineType  # what an ``async def`` receive() returns: `begin` runs its first step eagerly
_USUAL_ACCEPT = b"application/json, text/event-stream"


class _Eager:
    """A coroutine already run to its first suspension (``waiting``), awaited from there on.

    `__call__` starts the first ``receive()`` itself: when it returns without
    suspending (the body is in hand), no read deadline is needed. When it
    suspends, the future it waits on is handed to the task, and awaiting this
    object carries on the coroutine exactly as ``await`` would have
    (``yield from``'s rules: values sent and exceptions thrown in are passed to
    it, its return value is the result).
    """

    __slots__ = ("coro", "waiting")

    def __init__(self, coro: Coroutine[Any, Any, Message], waiting: Any) -> None:
        self.coro = coro
        self.waiting = waiting

    def __await__(self) -> Generator[Any, Any, Message]:
        coro = self.coro
        waiting = self.waiting
        while True:
            try:
                sent = yield waiting
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - thrown into the coroutine, as `yield from` does
                try:
                    waiting = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]  # the coroutine's result is a Message
            else:
                try:
                    waiting = coro.send(sent)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]  # likewise


class _ReadDeadlines:
    """One timer for every body read in progress; it cancels the reads past their deadline.

    Cheaper than a timeout per request (``asyncio.timeout`` costs about 4 µs,
    a third of this app's own work on a small request): a read registers its
    task and deadline in a dict, and a single timer, running only while reads
    are pending, checks them every quarter of the timeout. A read therefore
    times out between 1 and 1.25 times ``read_timeout`` after it began.
    """

    __slots__ = ("timeout", "reading", "expired", "handle", "loop")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.reading: dict[asyncio.Task[Any], float] = {}
        self.expired: set[asyncio.Task[Any]] = set()
        self.handle: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> asyncio.Task[Any]:
        # With the loop given, current_task skips get_running_loop() and its getpid() syscall.
        task = asyncio.current_task(self.loop) if self.loop is not None else None
        if task is None:
            task = asyncio.current_task()
        assert task is not None
        loop = task.get_loop()
        self.reading[task] = loop.time() + self.timeout
        if self.handle is None or self.loop is not loop:
            self.loop = loop
            self.handle = loop.call_later(self.timeout / 4, self._check)
        return task

    def _check(self) -> None:
        loop = self.loop
        assert loop is not None
        now = loop.time()
        for task, deadline in list(self.reading.items()):
            # A registered task is always suspended in `await receive()`: registration
            # ends, with no await in between, as soon as the read returns.
            if deadline <= now:
                del self.reading[task]
                self.expired.add(task)
                task.cancel()
        self.handle = loop.call_later(self.timeout / 4, self._check) if self.reading else None


_CLOSE = ((b"connection", b"close"),)


class _Refused(Exception):
    """An HTTP-level refusal: status, message, extra headers; ``more_body``: the client is still sending."""

    more_body = False

    def __init__(self, status: int, message: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


class Started:
    """A body `begin` could not finish at once: the first ``receive()`` in progress, or the refusal."""

    __slots__ = ("pending", "first", "refused")

    def __init__(self, pending: Awaitable[Message] | None, first: Message | None, refused: _Refused | None) -> None:
        self.pending = pending
        self.first = first
        self.refused = refused


class BodyReader:
    """Reads one POST's body under ``max_body_size`` and ``read_timeout`` (see the module docs)."""

    __slots__ = ("max_body_size", "deadlines")

    def __init__(self, max_body_size: int, read_timeout: float | None) -> None:
        self.max_body_size = max_body_size
        self.deadlines = _ReadDeadlines(read_timeout) if read_timeout is not None else None

    def begin(self, headers: dict[bytes, bytes], receive: Receive) -> bytes | Started:
        """The whole body, when the headers pass and it is in hand in one message; else what `finish` needs."""
        ctype = headers.get(b"content-type")
        accept = headers.get(b"accept")
        length = headers.get(b"content-length")
        if not (
            (ctype == b"application/json" or is_json_content_type(ctype))
            and (accept == _USUAL_ACCEPT or accepts_json_and_sse(accept))
            and (length is None or not length.isdigit() or int(length) <= self.max_body_size)
        ):
            return Started(None, None, self._refusal(ctype, accept, length))
        pending: Any = receive()
        first: Message | None = None
        if type(pending) is _COROUTINE:
            try:
                waiting = pending.send(None)
            except StopIteration as stop:
                first = stop.value
                pending = None
            else:
                pending = _Eager(pending, waiting)
        if (
            first is not None
            and first["type"] == "http.request"
            and not first.get("more_body")
            and len(body := first.get("body", b"")) <= self.max_body_size
        ):
            return body  # type: ignore[no-any-return]  # the whole body, in one message: the common case
        return Started(pending, first, None)

    async def finish(self, started: Started, receive: Receive, send: Send) -> bytes | None:
        """The body `begin` started; None once a refusal is sent or the client left."""
        refused = started.refused
        if refused is None:
            try:
                return await self._body(receive, started.pending, started.first)
            except _Refused as exc:
                refused = exc
        await refuse(send, receive, refused, http_error(refused.message))
        return None

    def _refusal(self, ctype: bytes | None, accept: bytes | None, length: bytes | None) -> _Refused:
        """Why a POST is refused at the HTTP level (``Content-Type``, ``Accept``, ``Content-Length``), in that order.

        Called once `begin`'s inline test of the three has failed, so one of them is refused.
        """
        if not is_json_content_type(ctype):
            return _Refused(415, "Unsupported Media Type: the body must be Content-Type: application/json")
        if not accepts_json_and_sse(accept):
            return _Refused(
                406, "Not Acceptable: the Accept header must list both application/json and text/event-stream"
            )
        assert length is not None
        return self._too_large(int(length))

    async def _body(self, receive: Receive, pending: Awaitable[Message] | None, msg: Message | None) -> bytes | None:
        """The body of a POST, or ``None`` if the client left; under the read deadline.

        ``msg``: the first message, already received (and not a whole small
        body); else ``pending``, the first ``receive()``, still to be awaited.
        """
        limit = self.max_body_size
        deadlines = self.deadlines
        task = deadlines.start() if deadlines is not None else None
        try:
            if msg is None:
                assert pending is not None
                msg = await pending
            if msg["type"] != "http.request":
                return None
            body: bytes = msg.get("body", b"")
            if len(body) > limit:
                raise self._too_large(None, msg.get("more_body", False))
            if not msg.get("more_body"):
                return body
            return await self._read(receive, body)
        except asyncio.CancelledError:
            if deadlines is None or task not in deadlines.expired:
                raise
            assert task is not None
            task.uncancel()
            raise _Refused(
                408,
                f"Request Timeout: the body did not arrive within {deadlines.timeout:g} s",
                _CLOSE,
            ) from None
        finally:
            if deadlines is not None:
                assert task is not None
                deadlines.reading.pop(task, None)
                deadlines.expired.discard(task)

    async def _read(self, receive: Receive, body: bytes) -> bytes | None:
        """The rest of the body, after its first part ``body`` (`_body` read the first message: more is coming)."""
        limit = self.max_body_size
        size = len(body)
        chunks = [body]
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return None
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise self._too_large(None, msg.get("more_body", False))
            chunks.append(chunk)
            if not msg.get("more_body"):
                return b"".join(chunks)

    def _too_large(self, size: int | None, more_body: bool = True) -> _Refused:
        told = f"{size} bytes" if size is not None else "longer than that"
        log.warning("refused a request body: %s; the limit is %d", told, self.max_body_size)
        refused = _Refused(
            413, f"Content Too Large: the body is {told}; the limit is {self.max_body_size} bytes", _CLOSE
        )
        refused.more_body = more_body  # then `refuse` lingers: the client reads the 413 (_linger)
        return refused

