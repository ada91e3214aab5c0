"""Requests the server sends its peer, and their answers: the one correlator of every transport.

In a legacy (2025-11-25) session the server asks the client for input with
real JSON-RPC requests (``elicitation/create``, ``sampling/createMessage``,
``roots/list``). `OutgoingRequests` is built on `wiremcp.jsonrpc.PendingRequests`
and keeps these rules for stdio and HTTP alike:

* each request gets a fresh integer id, unique among those in flight; it is
  encoded before it is registered, so a request that cannot be encoded
  raises and leaves nothing behind;
* the transport says where the request goes (the ``write`` given to
  `request`): the stream of the request whose handler asks, or the
  connection itself; a ``notifications/cancelled`` for it goes the same way
  when the asker stops waiting (its call was cancelled, or it timed out);
* `answer` settles the waiting request with the peer's result, or fails it
  with `ClientRequestFailed` for an error; a late answer to a request given
  up on is accepted and ignored; an answer to an id never in flight is
  reported (`answer` returns False) for the transport to refuse or log;
* `close` fails every request still waiting with `ConnectionError`, and
  every later `request` raises it at once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from ..jsonrpc import (
    ErrorResponse,
    LocalProtocolError,
    PendingRequests,
    RemoteProtocolError,
    Response,
    encode_notification,
    encode_request,
)
from ..protocol import methods
from ._failures import ClientRequestFailed

if TYPE_CHECKING:
    import asyncio

__all__ = ["OutgoingRequests"]

log = logging.getLogger("wiremcp.server")


class OutgoingRequests:
    """The server's requests to its peer awaiting an answer (see the module docs)."""

    __slots__ = ("_pending", "line", "closed")

    def __init__(self, *, line: bool = True, first_id: int = 1) -> None:
        # first_id: where the ids start (a session served by several workers gives each its own range)
        self._pending: PendingRequests[asyncio.Future[Any]] = PendingRequests(first_id=first_id)
        self.line = line  # newline-terminated messages (stdio) or bare ones (HTTP events)
        #: Why no more requests can be sent (the connection or session ended), once it has.
        self.closed: str | None = None

    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, id: object) -> bool:
        return id in self._pending

    async def request(self, method: str, params: dict[str, Any], write: Callable[[bytes], None]) -> Any:
        """Send ``method`` through ``write`` and wait for the peer's result (its error raises)."""
        import asyncio  # imported by then: on first use, not at start-up
        if self.closed is not None:
            raise ConnectionError(self.closed)
        pending = self._pending
        id_ = pending.new_id()
        data = encode_request(id_, method, params, line=self.line)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        pending.add(id_, method, context=future)
        write(data)
        try:
            return await future
        except asyncio.CancelledError:  # timed out, or the asking call was cancelled: tell the peer
            if pending.abandon(id_) is not None and self.closed is None:
                try:
                    write(encode_notification(methods.CANCELLED, {"requestId": id_, "reason": "no longer needed"}, line=self.line))
                except LocalProtocolError:  # pragma: no cover - the id is ours, always encodable
                    pass
            raise

    def answer(self, msg: Response | ErrorResponse) -> bool:
        """The peer's response to one of our requests; False when no request with its id was sent."""
        try:
            entry = self._pending.resolve(msg)
        except RemoteProtocolError as exc:
            log.debug("%s", exc)
            return False
        if entry is None or entry.context.done():
            return True  # a late answer to a request we gave up on
        if type(msg) is Response:
            entry.context.set_result(msg.result)
        else:
            assert isinstance(msg, ErrorResponse)
            entry.context.set_exception(ClientRequestFailed(msg.code, msg.message, msg.data))
        return True

    def close(self, reason: str) -> None:
        """Fail every request still waiting; later requests fail at once."""
        if self.closed is not None:
            return
        self.closed = reason
        for entry in self._pending.drain():
            if not entry.context.done():
                entry.context.set_exception(ConnectionError(reason))
