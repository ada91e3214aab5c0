"""The legacy (2025-11-25) streams of one session, sans I/O: numbering, replay, resumption, routing.

Plain objects with no I/O and no event loop: `_sessions` attaches the HTTP
responses and the running requests; tests drive these with plain messages
(tests/transports/test_legacy_stream_engine.py). Rules kept here:

* a session has a standalone stream (number 0) and one stream per request
  (1, 2, ... in the order the requests came); each event of a stream gets the
  next number of that stream as it is written (`Stream.take`), so the id
  ``{stream}-{n}`` is unique in the session and names its stream; the
  priming event (2025-11-25 sessions only: ``primes``) takes a number too;
* a stream is OPEN (messages may be added), CLOSING (its response, or what
  is left, is still to be written) or CLOSED (all written, or dropped); a
  cancelled stream drops what it holds and writes nothing more;
* what a stream holds unwritten is counted (its length plus `ENTRY_COST` per
  message): `Stream.add` says when it passes the caller's limit; the
  standalone stream then drops its oldest messages, keeping at least the
  newest (`Stream.trim`); a list change the stream holds unwritten already
  is not added again (`_coalesce`);
* every written event is kept for replay (`SessionStreams.retain`), at most
  ``replay_buffer`` bytes for the session, the oldest dropped first; a
  finished stream with nothing kept and no response carrying it is
  forgotten: it can no longer be resumed;
* ``Last-Event-ID`` names a stream only when both numbers are digits of at
  most `MAX_ID_DIGITS` and the stream is known (`SessionStreams.resume_point`):
  its kept events after that id are sent again;
* a request the server makes to the client goes on the stream of the
  request whose handler makes it; on the standalone stream when made outside
  any request, when that stream is finished, or when no response carries it
  and one carries the standalone stream (`SessionStreams.route`); what is
  routed to a stream that has finished since goes to the standalone stream
  (`SessionStreams.deliver`).
"""

from __future__ import annotations

import enum
import itertools
from collections import deque
from typing import Any

from ._coalesce import redundant
from ._session_base import event, event_id, priming
from ._session_rules import ENTRY_COST

__all__ = ["StreamState", "Stream", "SessionStreams", "kept"]

#: Messages shorter than this are copied into an exact-size ``bytes`` before they are kept:
#: orjson hands each encoded message back in a buffer of at least about 4 KiB, whatever
#: its length, so a kept 60-byte notification would otherwise hold 4 KiB. Longer ones
#: sit in buffers within a page or so of their length (measured: 10 KB in 14 KB, 70 KB in 78 KB).
_COPY_BELOW = 64 * 1024


def kept(data: bytes) -> bytes:
    """``data`` as it may be kept: a short message in an exact-size copy (see `_COPY_BELOW`)."""
    return bytes(memoryview(data)) if len(data) < _COPY_BELOW else data


class StreamState(enum.Enum):
    """Where one SSE stream of a session is."""

    OPEN = "open"  #: messages may still be added
    CLOSING = "closing"  #: nothing more is added; what is pending (the response last) is still to be written
    CLOSED = "closed"  #: everything is written, or dropped


class Stream:
    """One SSE stream of a session: a request's reply stream (number >= 1) or the standalone stream (0).

    ``carrier`` is whatever carries the stream to the client now (an HTTP
    response, for `_sessions`), None when nothing does; the engine only asks
    whether there is one.
    """

    __slots__ = (
        "streams", "sid", "request_id", "method", "seq", "pending", "pending_bytes",
        "carrier", "state", "final", "named", "retained",
    )  # fmt: skip

    def __init__(self, streams: SessionStreams, sid: int, request_id: Any = None, method: str = "") -> None:
        self.streams = streams
        self.sid = sid
        self.request_id = request_id
        self.method = method
        self.seq = 0  # the number of the last event written
        self.pending: list[bytes] = []  # messages not written yet
        self.pending_bytes = 0
        self.carrier: Any = None  # what carries the stream now, if anything
        self.state = StreamState.OPEN
        self.final: bytes | None = None  # the response, once there is one
        self.named = False  # an event id of this stream was given out: it can be resumed
        self.retained = 0  # its events in the session's replay buffer

    # -- adding ----------------------------------------------------------------

    def add(self, data: bytes, limit: int) -> bool:
        """Add one encoded message, unless it is a list change the stream holds unwritten already
        (`_coalesce`); whether what the stream holds unwritten is now past ``limit``."""
        if redundant(data, self.pending):
            return False
        data = kept(data)
        self.pending.append(data)
        self.pending_bytes += len(data) + ENTRY_COST
        return self.pending_bytes > limit

    @property
    def finished(self) -> bool:
        """Nothing more will be added."""
        return self.state is not StreamState.OPEN

    def finish(self, final: bytes | None) -> bool:
        """No more messages: ``final`` is the response (None: nothing more is sent); whether it was open."""
        if self.state is not StreamState.OPEN:
            return False
        self.final = final
        self.state = StreamState.CLOSING if (final is not None or self.pending) else StreamState.CLOSED
        return True

    def drop(self) -> None:
        """Cancelled: what is still unsent is dropped, and nothing more is sent."""
        self.pending = []
        self.pending_bytes = 0
        self.finish(None)

    def trim(self, limit: int) -> int:
        """Drop the oldest unsent messages until ``limit`` holds (the newest always stays); how many were dropped."""
        pending = self.pending
        dropped = 0
        while self.pending_bytes > limit and len(pending) - dropped > 1:
            self.pending_bytes -= len(pending[dropped]) + ENTRY_COST
            dropped += 1
        del pending[:dropped]
        return dropped

    # -- writing ---------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether something is waiting to be written."""
        return bool(self.pending) or self.state is StreamState.CLOSING

    @property
    def answered_alone(self) -> bool:
        """Whether the response is all there is to write (a request answered before it sent anything)."""
        return not self.pending and self.state is StreamState.CLOSING and self.final is not None

    def prime(self) -> bytes:
        """The priming event: an id to resume from, and empty data (none for a session that does not prime)."""
        if not self.streams.primes:
            return b""
        self.seq += 1
        self._name()
        return priming(self.sid, self.seq)

    def take(self) -> bytes:
        """Number, retain and frame what waits to be written (the response last)."""
        parts = []
        if self.pending:
            for data in self.pending:
                parts.append(self._frame(data))
            self.pending = []
            self.pending_bytes = 0
        if self.state is StreamState.CLOSING:
            if self.final is not None:
                parts.append(self._frame(self.final))
            self.state = StreamState.CLOSED
        return b"".join(parts)

    def _frame(self, data: bytes) -> bytes:
        self.seq += 1
        self._name()
        self.streams.retain(self, self.seq, data)
        return event(self.sid, self.seq, data)

    def _name(self) -> None:
        if not self.named:
            self.named = True
            self.streams.resumable[self.sid] = self

    def forget_if_done(self) -> None:
        """Drop a finished stream from the resumable ones once nothing of it is left to send again."""
        if self.sid and self.state is StreamState.CLOSED and self.retained == 0 and self.carrier is None:
            self.streams.resumable.pop(self.sid, None)


class SessionStreams:
    """The streams of one session: numbering, the replay buffer, resumption and routing."""

    __slots__ = ("primes", "replay_buffer", "standalone", "resumable", "replay", "replay_bytes", "_sids")

    def __init__(self, replay_buffer: int, *, standalone: Stream | None = None) -> None:
        self.primes = False  # whether its streams open with a priming event
        self.replay_buffer = replay_buffer
        self.standalone = standalone if standalone is not None else Stream(self, 0)
        self.resumable: dict[int, Stream] = {}  # by number
        # Made with the first event kept (an empty deque is about 600 bytes: an idle session keeps none).
        self.replay: deque[tuple[Stream, int, bytes]] | None = None
        self.replay_bytes = 0
        self._sids = itertools.count(1)

    def next_sid(self) -> int:
        """The number of the next request's stream."""
        return next(self._sids)

    def retain(self, stream: Stream, n: int, data: bytes) -> None:
        """Keep event ``n`` of ``stream`` for replay; the oldest go past ``replay_buffer``."""
        replay = self.replay
        if replay is None:
            replay = self.replay = deque()
        replay.append((stream, n, data))
        self.replay_bytes += len(data) + ENTRY_COST
        stream.retained += 1
        limit = self.replay_buffer
        while self.replay_bytes > limit and replay:
            old, _, old_data = replay.popleft()
            self.replay_bytes -= len(old_data) + ENTRY_COST
            old.retained -= 1
            if old.retained == 0:
                old.forget_if_done()

    def resume_point(self, last_event_id: bytes) -> tuple[Stream, bytes] | None:
        """The stream a ``Last-Event-ID`` names, and its events after it still retained (framed)."""
        named = event_id(last_event_id)
        if named is None:
            return None  # not an id we gave out
        sid, n = named
        stream = self.standalone if sid == b"0" else self.resumable.get(int(sid))
        if stream is None:
            return None
        after = int(n)
        again = b"".join(event(stream.sid, m, d) for s, m, d in self.replay or () if s is stream and m > after)
        return stream, again

    def route(self, asking: Stream | None) -> Stream:
        """The stream a request to the client goes on, made by the handler of ``asking``'s request (None: outside any)."""
        standalone = self.standalone
        if asking is None or asking.streams is not self or asking.finished:
            return standalone
        if asking.carrier is None and standalone.carrier is not None:
            return standalone
        return asking

    def deliver(self, chosen: Stream) -> Stream:
        """Where a message routed to ``chosen`` goes now: there, or the standalone stream once it finished."""
        return self.standalone if chosen.finished else chosen

    def clear(self) -> None:
        """The session ended: nothing can be resumed."""
        self.resumable.clear()
        self.replay = None
        self.replay_bytes = 0
