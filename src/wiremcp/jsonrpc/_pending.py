"""The requests a sender has in flight, keyed by id.

Rules it keeps (MCP base protocol, "Requests"):

* an id is never reused while a request with that id is in flight
  (`LocalProtocolError` on `add`);
* each reply settles exactly one request; a reply whose id matches nothing is
  a `RemoteProtocolError` unless the request was recently abandoned
  (cancelled or timed out), in which case `resolve` reports it as late and
  returns ``None``, since replies racing a cancellation are expected;
* deadlines are plain numbers on the caller's clock: `expire(now)` removes and
  returns what is overdue, `next_deadline()` says when to look again.

It holds no futures and never reads a clock: the I/O layer attaches whatever
it waits on as ``context``.
"""

from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict
from typing import Any, Generic, Iterator, TypeVar, overload

from ._errors import LocalProtocolError, RemoteProtocolError
from ._messages import ErrorResponse, RequestId, Response

__all__ = ["Pending", "PendingRequests", "DEFAULT_ABANDONED_MEMORY"]

#: How many cancelled or timed-out ids are remembered so that their late
#: replies are recognised rather than reported as unknown.
DEFAULT_ABANDONED_MEMORY = 1024

C = TypeVar("C")


class Pending(Generic[C]):
    """One request in flight."""

    __slots__ = ("id", "method", "deadline", "context")

    def __init__(self, id: str | int, method: str, deadline: float | None, context: C) -> None:
        self.id = id
        self.method = method
        self.deadline = deadline
        self.context = context

    def __repr__(self) -> str:
        return f"Pending(id={self.id!r}, method={self.method!r}, deadline={self.deadline!r})"


class PendingRequests(Generic[C]):
    """In-flight requests of one sender, correlated by id."""

    def __init__(self, *, first_id: int = 1, abandoned_memory: int = DEFAULT_ABANDONED_MEMORY) -> None:
        if abandoned_memory < 0:
            raise ValueError("abandoned_memory must not be negative")
        # Keys are str or int (`add` checks); a reply's id of any type may be looked up.
        self._by_id: dict[RequestId, Pending[C]] = {}
        self._ids = itertools.count(first_id)
        self._deadlines: list[tuple[float, int, str | int]] = []
        self._tiebreak = itertools.count()
        self._abandoned: OrderedDict[RequestId, str] = OrderedDict()
        self._abandoned_memory = abandoned_memory

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, id: object) -> bool:
        return id in self._by_id

    def __iter__(self) -> Iterator[Pending[C]]:
        return iter(list(self._by_id.values()))

    def get(self, id: str | int) -> Pending[C] | None:
        """The pending request ``id``, or None."""
        return self._by_id.get(id)

    def new_id(self) -> int:
        """A fresh integer id that is not in flight."""
        for candidate in self._ids:
            if candidate not in self._by_id:
                return candidate
        raise AssertionError("unreachable")  # pragma: no cover

    @overload
    def add(
        self: PendingRequests[None], id: str | int, method: str, *, deadline: float | None = None
    ) -> Pending[None]: ...

    @overload
    def add(self, id: str | int, method: str, *, deadline: float | None = None, context: C) -> Pending[C]: ...

    def add(
        self,
        id: str | int,
        method: str,
        *,
        deadline: float | None = None,
        context: Any = None,  # typed by the overloads: C, left out only when C is None
    ) -> Pending[Any]:
        """Track a request sent as ``id``; LocalProtocolError if the id is not a string or an integer, or in flight."""
        t = type(id)
        if t is not str and t is not int:
            raise LocalProtocolError(f"a request id must be a string or an integer, not {id!r}")
        if id in self._by_id:
            raise LocalProtocolError(f"request id {id!r} is already in flight")
        entry: Pending[C] = Pending(id, method, deadline, context)
        self._by_id[id] = entry
        self._abandoned.pop(id, None)
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, next(self._tiebreak), id))
        return entry

    def resolve(self, response: Response | ErrorResponse) -> Pending[C] | None:
        """Settle the request this reply answers and return it.

        Returns ``None`` for a late reply to an abandoned request; raises
        `RemoteProtocolError` for a reply to an id that was never in flight.
        """
        entry = self._by_id.pop(response.id, None)
        if entry is not None:
            if entry.deadline is not None:
                self._compact()
            return entry
        if response.id in self._abandoned:
            del self._abandoned[response.id]
            return None
        raise RemoteProtocolError(f"received a reply for id {response.id!r}, which is not in flight")

    def abandon(self, id: str | int, reason: str = "cancelled") -> Pending[C] | None:
        """Stop waiting for ``id`` (cancelled or timed out); its late reply will be ignored."""
        entry = self._by_id.pop(id, None)
        if entry is not None:
            self._remember(id, reason)
            if entry.deadline is not None:
                self._compact()
        return entry

    def expire(self, now: float) -> list[Pending[C]]:
        """Abandon and return every request whose deadline is at or before ``now``."""
        expired: list[Pending[C]] = []
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            deadline, _, id = heapq.heappop(heap)
            entry = self._by_id.get(id)
            if entry is not None and entry.deadline == deadline:
                del self._by_id[id]
                self._remember(id, "timed out")
                expired.append(entry)
        return expired

    def next_deadline(self) -> float | None:
        """The earliest deadline still pending, or ``None``."""
        heap = self._deadlines
        while heap:
            deadline, _, id = heap[0]
            entry = self._by_id.get(id)
            if entry is not None and entry.deadline == deadline:
                return deadline
            heapq.heappop(heap)  # settled or abandoned: drop lazily
        return None

    def drain(self) -> list[Pending[C]]:
        """Remove and return everything in flight (the connection is gone)."""
        entries = list(self._by_id.values())
        self._by_id.clear()
        self._deadlines.clear()
        return entries

    def _compact(self) -> None:
        # Settled requests leave their deadlines in the heap (dropped lazily);
        # rebuild it when they outnumber the live ones, so it stays O(in flight).
        if len(self._deadlines) > 64 + 2 * len(self._by_id):
            tiebreak = self._tiebreak
            self._deadlines = [
                (e.deadline, next(tiebreak), e.id) for e in self._by_id.values() if e.deadline is not None
            ]
            heapq.heapify(self._deadlines)

    def _remember(self, id: str | int, reason: str) -> None:
        self._abandoned[id] = reason
        while len(self._abandoned) > self._abandoned_memory:
            self._abandoned.popitem(last=False)
