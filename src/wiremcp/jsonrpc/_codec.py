"""Bytes to messages and back.

Decoding rules, checked in this order (the first that fails decides):

====================================================  =======  ===========
input                                                  code     reply id
====================================================  =======  ===========
longer than ``max_size`` bytes                         -32600   null
starts with a UTF-8 byte-order mark                    -32700   null
not exactly one JSON text in strict UTF-8 (empty,      -32700   null
invalid UTF-8, lone surrogates, trailing data,
two texts, NaN/Infinity, control characters ...)
nested deeper than ``max_depth``                       -32600   null
an array, when the profile has no batches               -32600   null
an empty array (JSON-RPC 2.0 batch)                     -32600   null
not an object                                          -32600   null
``method`` present: request or notification
  ``id`` present but not a valid id for the profile    -32600   null
  ``jsonrpc`` is not exactly the string "2.0"          -32600   the id (*)
  ``method`` not a string                              -32600   the id (*)
  ``params`` not an object (or array, if allowed)      -32600   the id (*)
  ``result`` or ``error`` present as well              -32600   the id (*)
``result`` or ``error`` present: a response            -32600   null
  (both present, bad ``jsonrpc``, bad id, an error
  that is not ``{"code": int, "message": str}``...;
  under MCP an error response may omit ``id``)
anything else                                          -32600   null
====================================================  =======  ===========

(*) Without an ``id`` member the message is a notification, and that is
decided before anything else about it is checked: its problem raises
`InvalidNotification` (a -32600 `InvalidRequest`) and it gets no reply at
all (JSON-RPC 2.0 §4.1: a notification is never answered, whatever is wrong
with it; the receiver logs it instead).

"null" in the last column means the id could not be read: JSON-RPC 2.0
answers with ``"id": null``, MCP (whose schema has no null id) leaves ``id``
out of the error reply (see `encode_error`).

Every limit is a named constant with a setting on `Decoder`. Encoding makes
compact UTF-8 JSON on one line (orjson escapes every control character in
strings, so a message never holds a raw newline).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ._errors import InvalidNotification, InvalidRequest, InvalidResponse, JSONRPCError, LocalProtocolError, ParseError
from ._messages import Batch, ErrorResponse, Message, Notification, Request, RequestId, Response

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_DEPTH",
    "Profile",
    "JSONRPC_2_0",
    "MCP",
    "Decoder",
    "decode",
    "encode",
    "encode_request",
    "encode_notification",
    "encode_result",
    "encode_error",
]

#: Largest message accepted, in bytes. 16 MiB holds any realistic tool call
#: (a 1 MB payload is a common benchmark case) while bounding memory per message.
DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
#: Deepest nesting of arrays and objects accepted. MCP messages rarely pass 10
#: (a JSON Schema inside a tool definition inside a result); 128 leaves room
#: and stops stack- and time-hungry inputs. orjson itself stops at 1024.
DEFAULT_MAX_DEPTH = 128
_ORJSON_MAX_DEPTH = 1024
#: Up to this size, counting brackets is cheaper than walking the decoded tree.
_COUNT_BELOW = 4096

_BOM = b"\xef\xbb\xbf"


class Profile:
    """Which flavour of JSON-RPC 2.0 a `Decoder` accepts.

    `JSONRPC_2_0` is the base specification; `MCP` tightens it as the MCP
    base protocol says: ids are strings or integers (never null, bool, float,
    object or array), ``params`` is an object, and there are no batches.
    """

    __slots__ = ("name", "batches", "null_id", "float_id", "positional_params")

    def __init__(
        self, name: str, *, batches: bool, null_id: bool, float_id: bool, positional_params: bool
    ) -> None:
        self.name = name
        self.batches = batches
        self.null_id = null_id
        self.float_id = float_id
        self.positional_params = positional_params

    def valid_id(self, value: object) -> bool:
        """Whether ``value`` is an id this profile accepts (a string or an integer; null or float if enabled)."""
        t = type(value)
        if t is str or t is int:
            return True
        if value is None:
            return self.null_id
        return t is float and self.float_id

    def __repr__(self) -> str:
        return f"<Profile {self.name}>"


JSONRPC_2_0 = Profile("JSON-RPC 2.0", batches=True, null_id=True, float_id=True, positional_params=True)
MCP = Profile("MCP", batches=False, null_id=False, float_id=False, positional_params=False)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when arrays/objects nest deeper than ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if type(node) is dict else node
        for child in children:
            t = type(child)
            if t is dict or t is list:
                stack.append((child, depth + 1))
    return False


class Decoder:
    """Turns one message's bytes into a message, or raises the exact `JSONRPCError`.

    Build it once and reuse it: ``Decoder(MCP).decode(line)``. It keeps no
    state between calls. ``decode`` raises `ParseError` or `InvalidRequest`
    (both carry the ``id`` the error reply must echo).
    """

    __slots__ = ("profile", "max_size", "max_depth", "_count_above")

    def __init__(
        self,
        profile: Profile = MCP,
        *,
        max_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        if max_size < 1 or max_depth < 1:
            raise ValueError("max_size and max_depth must be positive")
        self.profile = profile
        self.max_size = max_size
        self.max_depth = max_depth
        # Shorter messages cannot nest too deep (two bytes a level); orjson stops at its own limit.
        self._count_above = 2 * max_depth if max_depth < _ORJSON_MAX_DEPTH else max_size

    def decode(self, data: bytes | bytearray | memoryview | str) -> Message | Batch:
        """Parse one message or batch; ParseError (-32700) or InvalidRequest (-32600) as JSON-RPC 2.0 says."""
        if isinstance(data, str):
            try:
                data = data.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ParseError(f"Parse error: the text is not valid Unicode ({exc.reason})") from None
        return self._verdict(self._parse(data))

    def decode_common(self, data: bytes) -> Message | Batch:
        """`decode` for bytes, the common request first: one parse whatever the message.

        A request of the four members only (what `request_dict` accepts) is
        taken on four checks; anything else gets `decode`'s verdict (the
        message, or the exact error it raises) from the same parse, so a body
        that is not that request is never parsed twice.
        """
        obj = self._parse(data)
        if type(obj) is dict and len(obj) == 4:  # `request_dict`'s checks, inline
            id_ = obj.get("id")
            t = type(id_)
            if (
                (t is str or t is int)
                and obj.get("jsonrpc") == "2.0"
                and type(method := obj.get("method")) is str
                and type(params := obj.get("params")) is dict
            ):
                return Request(id_, method, params)
        return self._verdict(obj)

    def _verdict(self, obj: Any) -> Message | Batch:
        """What a parsed message is (`decode` after the parse), or the exact error."""
        if type(obj) is dict:
            if "method" in obj:  # `message`, inline: one call less per request
                return self._request(obj)
            return self.message(obj)
        if type(obj) is list:
            return self._batch(obj)
        raise InvalidRequest(
            f"Invalid Request: a JSON-RPC message must be an object, not {_type_name(obj)}"
        )

    def _parse(self, data: bytes | bytearray | memoryview) -> Any:
        """``data`` parsed, within the size and depth limits; raises as `decode` says."""
        size = len(data)
        if size > self.max_size:
            raise InvalidRequest(
                f"Invalid Request: the message is {size} bytes; the limit is {self.max_size}"
            )
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise self._parse_error(bytes(data[:3]), str(exc)) from None
        if size > self._count_above:
            # Each level costs at least two bytes, so a short message cannot be
            # too deep. For a typical message, counting the opening brackets (in
            # C) rules it out cheaply; a large one is walked instead: the walk
            # costs per container, while counting costs ~250 µs per MB.
            if size <= _COUNT_BELOW:
                raw = data if type(data) is bytes else bytes(data)
                opened = raw.count(b"{")
                if b"[" in raw:  # a memchr: most requests hold no array, and one count is saved
                    opened += raw.count(b"[")
                suspect = opened > self.max_depth
            else:
                suspect = True
            if suspect and _depth_exceeds(obj, self.max_depth):
                message = f"Invalid Request: the message nests deeper than {self.max_depth} levels"
                if type(obj) is dict and "method" in obj and "id" not in obj:
                    raise _refused(message, obj, False, None)  # a notification: never answered
                raise InvalidRequest(message)
        return obj

    def request_dict(self, data: bytes) -> dict[str, Any] | None:
        """The request in ``data`` as a dict, when it has the four members and no other; else None: `decode` decides.

        Such a request is what `decode` accepts as a `Request` with the
        members ``jsonrpc`` (``"2.0"``), ``id`` (a string or an integer),
        ``method`` (a string) and ``params`` (an object), and no other; within
        the size and depth limits. Every rule `decode` keeps holds for it, so
        a transport may serve it without a `Request` object. Anything else
        (notifications, responses, unknown members, every error) is None,
        never an exception (`decode_common` parses once and decides both).
        """
        try:
            obj = self._parse(data)
        except JSONRPCError:
            return None
        if type(obj) is not dict or len(obj) != 4:  # the four members, each checked below, and no other
            return None
        id_ = obj.get("id")
        t = type(id_)
        if (t is not str and t is not int) or obj.get("jsonrpc") != "2.0":
            return None
        if type(obj.get("method")) is not str or type(obj.get("params")) is not dict:
            return None
        return obj

    def _parse_error(self, head: bytes, reason: str) -> ParseError | InvalidRequest:
        if head.startswith(_BOM):
            return ParseError("Parse error: the message starts with a byte-order mark (BOM), which is not allowed")
        if "depth limit" in reason:
            return InvalidRequest(
                f"Invalid Request: the message nests deeper than {min(self.max_depth, _ORJSON_MAX_DEPTH)} levels"
            )
        if "empty" in reason:
            return ParseError("Parse error: the message is empty")
        return ParseError(f"Parse error: {reason}")

    def _batch(self, items: list[Any]) -> Batch:
        if not self.profile.batches:
            raise InvalidRequest(
                f"Invalid Request: batches (JSON arrays) are not allowed in {self.profile.name}; "
                "send one message per line"
            )
        if not items:
            raise InvalidRequest("Invalid Request: a batch must not be empty")
        out: list[Message | InvalidRequest] = []
        for item in items:
            try:
                if type(item) is not dict:
                    raise InvalidRequest(
                        f"Invalid Request: a batch element must be an object, not {_type_name(item)}"
                    )
                out.append(self.message(item))
            except InvalidRequest as exc:
                out.append(exc)
        return Batch(tuple(out))

    def message(self, obj: dict[str, Any]) -> Message:
        """Validate an already-parsed JSON object as one message."""
        if "method" in obj:
            return self._request(obj)
        if "result" in obj or "error" in obj:
            return self._response(obj)
        raise InvalidRequest(
            "Invalid Request: the object has neither 'method' (a request or notification) "
            "nor 'result'/'error' (a response)"
        )

    def _request(self, obj: dict[str, Any]) -> Request | Notification:
        profile = self.profile
        has_id = "id" in obj
        id_ = obj.get("id")
        t = type(id_)
        if has_id and t is not str and t is not int and not profile.valid_id(id_):
            allowed = "a string or an integer" if profile is MCP else "a string, a number or null"
            raise InvalidRequest(f"Invalid Request: 'id' must be {allowed}, not {_type_name(id_)}")
        reply_id = id_ if has_id else None
        jsonrpc = obj.get("jsonrpc")
        if type(jsonrpc) is not str or jsonrpc != "2.0":
            raise _refused(_jsonrpc_problem(obj), obj, has_id, reply_id)
        method = obj["method"]
        if type(method) is not str:
            raise _refused(
                f"Invalid Request: 'method' must be a string, not {_type_name(method)}", obj, has_id, reply_id
            )
        params = obj.get("params")
        if params is not None or "params" in obj:
            t = type(params)
            if not (t is dict or (t is list and profile.positional_params)):
                allowed = "an object" if not profile.positional_params else "an object or an array"
                raise _refused(
                    f"Invalid Request: 'params' must be {allowed}, not {_type_name(params)}", obj, has_id, reply_id
                )
        if "result" in obj or "error" in obj:
            raise _refused("Invalid Request: a request must not carry 'result' or 'error'", obj, has_id, reply_id)
        if has_id:
            return Request(id_, method, params)
        return Notification(method, params)

    def _response(self, obj: dict[str, Any]) -> Response | ErrorResponse:
        id_ = obj.get("id")
        has_error = "error" in obj
        if "id" in obj:
            # An error response may carry id null when the request's id could not be read.
            id_ok = self.profile.valid_id(id_) or (has_error and id_ is None)
        else:
            # JSON-RPC 2.0 requires the member (null when unknown); MCP lets an error
            # response leave it out (schema: JSONRPCErrorResponse.id is optional).
            id_ok = has_error and self.profile is MCP
        response_id = id_ if id_ok else None
        jsonrpc = obj.get("jsonrpc")
        if type(jsonrpc) is not str or jsonrpc != "2.0":
            raise InvalidResponse(_jsonrpc_problem(obj), response_id=response_id)
        if has_error and "result" in obj:
            raise InvalidResponse(
                "Invalid Request: a response must carry exactly one of 'result' and 'error', not both",
                response_id=response_id,
            )
        if not id_ok:
            if "id" not in obj:
                problem = "a response must carry the 'id' of its request"
            else:
                problem = f"a response 'id' must be a valid request id, not {_type_name(id_)}"
            raise InvalidResponse(f"Invalid Request: {problem}")
        if has_error:
            error = obj["error"]
            if type(error) is not dict:
                raise InvalidResponse(
                    f"Invalid Request: 'error' must be an object, not {_type_name(error)}",
                    response_id=response_id,
                )
            if type(error.get("code")) is not int:
                raise InvalidResponse(
                    "Invalid Request: 'error.code' must be an integer", response_id=response_id
                )
            if type(error.get("message")) is not str:
                raise InvalidResponse(
                    "Invalid Request: 'error.message' must be a string", response_id=response_id
                )
            return ErrorResponse(id_, error)
        result = obj["result"]
        if self.profile is MCP and type(result) is not dict:
            raise InvalidResponse(
                f"Invalid Request: 'result' must be an object, not {_type_name(result)}",
                response_id=response_id,
            )
        return Response(id_, result)


def _refused(message: str, obj: dict[str, Any], has_id: bool, reply_id: Any) -> InvalidRequest:
    """The error for a request, or for a notification (no ``id``), which must not be answered."""
    if has_id:
        return InvalidRequest(message, id=reply_id)
    method = obj.get("method")
    return InvalidNotification(message, method=method if type(method) is str else None)


def _jsonrpc_problem(obj: dict[str, Any]) -> str:
    if "jsonrpc" not in obj:
        return 'Invalid Request: the "jsonrpc" member is missing; it must be the string "2.0"'
    return f'Invalid Request: "jsonrpc" must be the string "2.0", not {_show(obj["jsonrpc"])}'


_SHOWN_CHARS = 32


def _show(value: Any) -> str:
    """A short rendering of a wrong value for an error message.

    Scalars as JSON (a long string cut short), arrays and objects by kind only:
    the message stays small whatever the peer sent, and rendering it cannot fail
    (orjson.dumps stops at 255 levels, below what a `Decoder` may accept).
    """
    t = type(value)
    if t is str:
        text = json.dumps(value[:_SHOWN_CHARS])
        return text if len(value) <= _SHOWN_CHARS else text[:-1] + '..."'
    if value is None or t is bool or t is int or t is float:
        return json.dumps(value)
    return _type_name(value)


_DEFAULT_DECODER = Decoder(MCP)


def decode(data: bytes | bytearray | memoryview | str) -> Message | Batch:
    """Decode one MCP message with the default limits (see `Decoder`)."""
    return _DEFAULT_DECODER.decode(data)


# -- encoding ---------------------------------------------------------------

_dumps = orjson.dumps
_LINE = orjson.OPT_APPEND_NEWLINE


def _dump(obj: Any, line: bool = False) -> bytes:
    try:
        return _dumps(obj, option=_LINE) if line else _dumps(obj)
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        raise LocalProtocolError(f"cannot encode the message as JSON: {exc}") from None


def encode_request(id: str | int, method: str, params: Any = None, *, line: bool = False) -> bytes:
    """A request as compact JSON. The id must be a str or int.

    Every ``encode*`` function takes ``line=True`` to append the newline that
    frames the message on a stream (cheaper than concatenating afterwards).
    """
    t = type(id)
    if t is not str and t is not int:
        raise LocalProtocolError(f"a request id must be a string or an integer, not {_type_name(id)}")
    if params is None:
        return _dump({"jsonrpc": "2.0", "id": id, "method": method}, line)
    return _dump({"jsonrpc": "2.0", "id": id, "method": method, "params": params}, line)


def encode_notification(method: str, params: Any = None, *, line: bool = False) -> bytes:
    """The bytes of a notification (no ``params`` member when ``params`` is None); ``line=True`` appends a newline."""
    if params is None:
        return _dump({"jsonrpc": "2.0", "method": method}, line)
    return _dump({"jsonrpc": "2.0", "method": method, "params": params}, line)


def encode_result(id: RequestId, result: Any, *, line: bool = False) -> bytes:
    """The bytes of a success response to request ``id``; ``line=True`` appends a newline. Raises `LocalProtocolError` when ``result`` is not JSON."""
    # `_dump`, inline: every reply passes here.
    try:
        return _dumps({"jsonrpc": "2.0", "id": id, "result": result}, option=_LINE if line else 0)
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        raise LocalProtocolError(f"cannot encode the message as JSON: {exc}") from None


def encode_error(id: RequestId, error: dict[str, Any], *, line: bool = False, profile: Profile = MCP) -> bytes:
    """An error response; ``error`` is ``{"code", "message"[, "data"]}``, e.g. ``exc.to_error()``.

    ``id=None`` means the request's id could not be read. JSON-RPC 2.0 then
    writes ``"id": null``; MCP's schema has no null id (``JSONRPCErrorResponse.id``
    is an optional string or integer), so under the `MCP` profile the member
    is left out.
    """
    if id is None and not profile.null_id:
        return _dump({"jsonrpc": "2.0", "error": error}, line)
    return _dump({"jsonrpc": "2.0", "id": id, "error": error}, line)


def encode(message: Message | Batch | list[Any], *, line: bool = False, profile: Profile = MCP) -> bytes:
    """Any message object (or a batch / list of them) as compact single-line JSON.

    An `ErrorResponse` with id ``None`` follows `encode_error`'s rule for ``profile``.
    """
    return _dump(_to_obj(message, profile.null_id), line)


def _to_obj(message: Any, null_id: bool) -> Any:
    t = type(message)
    if t is Request:
        obj = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params is not None:
            obj["params"] = message.params
        return obj
    if t is Notification:
        obj = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            obj["params"] = message.params
        return obj
    if t is Response:
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if t is ErrorResponse:
        if message.id is None and not null_id:
            return {"jsonrpc": "2.0", "error": message.error}
        return {"jsonrpc": "2.0", "id": message.id, "error": message.error}
    if t is Batch:
        return [_to_obj(m, null_id) for m in message.items]
    if t is list or t is tuple:
        return [_to_obj(m, null_id) for m in message]
    raise LocalProtocolError(f"not a JSON-RPC message: {message!r}")
