"""The one place where a handler's outcome becomes reply bytes.

Every transport calls `reply_ok` / `reply_failed` (or `settle` for an
awaitable: to settle a request, here and across the code, is to give it
its one reply), directly or through `Call`; nothing else turns an exception into
a wire error. A reply is ``(line, code)``: the encoded response, newline
included, and the JSON-RPC error code it carries (``None`` for a result), from
which HTTP picks its status (`CallerBusy` is -32000 on the wire and
`CALLER_BUSY` here: HTTP answers 429 rather than 503). A
`JSONRPCError` keeps its code, message and data; any other exception is
logged with its traceback and answered with -32603 and a generic message
(internal details stay in the server's log). A result that cannot be encoded
is answered with -32603 too, so a request never goes unanswered.

A ``CancelledError`` out of a handler means one of two things, told apart in
`reply_cancelled` only: the task running it is being cancelled (the client
cancelled, disconnected, the session ended: no reply, the error goes on), or
the handler raised it of its own accord without being cancelled (a bug, or a
cancelled future it awaited): that is a failure like any other, answered with
-32603, since the client did not cancel and is owed a reply.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable

import orjson

from ..jsonrpc import INTERNAL_ERROR, JSONRPCError, LocalProtocolError, encode_error, encode_result

if TYPE_CHECKING:
    import asyncio

__all__ = ["Reply", "reply_ok", "reply_complete", "reply_failed", "reply_cancelled", "settle", "error_object", "ServerBusy", "SERVER_BUSY", "CallerBusy", "CALLER_BUSY"]

log = logging.getLogger("wiremcp.server")

_dumps = orjson.dumps
_LINE = orjson.OPT_APPEND_NEWLINE

#: An encoded response line, and the error code it carries (``None`` for a result).
Reply = tuple[bytes, int | None]

#: The code of `ServerBusy`, from JSON-RPC's implementation-defined server-error range (-32000 to -32099).
SERVER_BUSY = -32000


class ServerBusy(JSONRPCError):
    """A cap is reached (sessions, open listens, requests waiting): refused now, it may succeed later.

    HTTP answers it with 503 (or 429 when the cap is one client's) and ``Retry-After``.
    """

    code = SERVER_BUSY


#: The reply code (`Reply`'s second item) of `CallerBusy`: never on the wire, where it is -32000;
#: it tells HTTP that the cap reached is the caller's own share (429), not the server's (503).
CALLER_BUSY = SERVER_BUSY - 0x10000


class CallerBusy(ServerBusy):
    """The caller holds its share of a cap (its live tasks): -32000 on the wire, HTTP 429 with ``Retry-After``."""


def error_object(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC error object for ``exc`` (-32603, logged, for anything not a `JSONRPCError`)."""
    if isinstance(exc, JSONRPCError):
        return exc.to_error()
    log.error("internal error while handling a request", exc_info=exc)
    return {"code": INTERNAL_ERROR, "message": "Internal error: the server failed while handling the request"}


def reply_ok(id: Any, result: Any) -> Reply:
    """``(line, None)``; an unencodable result becomes a -32603 reply."""
    try:  # `encode_result(id, result, line=True)`, inline: every result passes here
        return _dumps({"jsonrpc": "2.0", "id": id, "result": result}, option=_LINE), None
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    try:
        return encode_result(id, result, line=True), None  # raises, with the reason
    except LocalProtocolError as exc:
        log.error("cannot encode the result for request %r: %s", id, exc)
        return (
            encode_error(id, {"code": INTERNAL_ERROR, "message": f"Internal error: {exc}"}, line=True),
            INTERNAL_ERROR,
        )


def reply_complete(id: Any, result: dict[str, Any], shared: dict[str, Any] | None) -> Reply:
    """`reply_ok` for a result the server decorates: ``shared`` (the server's ``_meta``, or None) merged first.

    The fused stage's reply (`_intake.FastPath.serve`): the result's own
    ``_meta`` members win over the server's, as in `Server._complete`.
    """
    if shared is not None:
        own = result.get("_meta")
        result["_meta"] = shared if own is None else {**shared, **own}
    try:  # `reply_ok`, inline
        return _dumps({"jsonrpc": "2.0", "id": id, "result": result}, option=_LINE), None
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return reply_ok(id, result)


def reply_failed(id: Any, exc: BaseException) -> tuple[bytes, int]:
    """``(line, code)`` for a failure."""
    error = error_object(exc)
    code = CALLER_BUSY if isinstance(exc, CallerBusy) else error["code"]
    try:
        return encode_error(id, error, line=True), code
    except LocalProtocolError:  # unencodable data: keep code and message
        error = {"code": error["code"], "message": str(error.get("message"))}
        return encode_error(id, error, line=True), code


def reply_cancelled(id: Any, exc: asyncio.CancelledError) -> Reply:
    """The reply for a handler's ``CancelledError``: re-raised when the current task is being cancelled.

    Otherwise the handler raised it without being cancelled: -32603, logged.
    """
    import asyncio  # imported by then: on first use, not at start-up
    task = asyncio.current_task()
    if task is None or task.cancelling():
        raise exc
    return reply_failed(id, exc)


async def settle(id: Any, pending: Awaitable[Any]) -> Reply:
    """Await a handler and make its reply. Cancellation of the awaiting task propagates (no reply)."""
    import asyncio  # imported by then: on first use, not at start-up
    try:
        result = await pending
    except asyncio.CancelledError as exc:
        return reply_cancelled(id, exc)
    except BaseException as exc:
        return reply_failed(id, exc)
    return reply_ok(id, result)
