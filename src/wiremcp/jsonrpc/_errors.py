"""Errors of the JSON-RPC layer.

The tree::

    Exception
     ├── JSONRPCError            an error that travels on the wire as an error object
     │    ├── ParseError            -32700  the bytes are not one JSON text
     │    ├── InvalidRequest        -32600  JSON, but not a valid message (or over a limit)
     │    │    ├── InvalidResponse          ... shaped like a response (no reply is owed)
     │    │    └── InvalidNotification      ... shaped like a notification (never answered)
     │    ├── MethodNotFound        -32601
     │    ├── InvalidParams         -32602
     │    └── InternalError         -32603
     └── ProtocolError           a rule was broken where no wire reply is possible
          ├── LocalProtocolError    we were about to break it (bad id, duplicate id, unencodable value)
          └── RemoteProtocolError   the peer broke it (reply to an unknown id)

`JSONRPCError` carries ``code``, ``message`` and optional ``data``; any code
can be raised with the base class (``JSONRPCError(message, code=-32050)``).
`ParseError` and `InvalidRequest` also carry ``id``: the id the error reply
must echo (``None`` when the id could not be read).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "SERVER_ERROR_MIN",
    "SERVER_ERROR_MAX",
    "JSONRPCError",
    "ParseError",
    "InvalidRequest",
    "InvalidResponse",
    "InvalidNotification",
    "MethodNotFound",
    "InvalidParams",
    "InternalError",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
]

# JSON-RPC 2.0, section 5.1.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: The range JSON-RPC 2.0 reserves for implementation-defined server errors.
SERVER_ERROR_MIN = -32099
SERVER_ERROR_MAX = -32000

_NO_DATA: Any = object()


class JSONRPCError(Exception):
    """An error reported to the peer as a JSON-RPC error object."""

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, data: Any = _NO_DATA, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self._data = data

    @property
    def has_data(self) -> bool:
        """Whether the error carries a ``data`` member (``data`` can be null)."""
        return self._data is not _NO_DATA

    @property
    def data(self) -> Any:
        """The ``data`` member, or ``None`` when the error carries none."""
        return None if self._data is _NO_DATA else self._data

    def to_error(self) -> dict[str, Any]:
        """The error object: ``{"code", "message"[, "data"]}``."""
        if self._data is _NO_DATA:
            return {"code": self.code, "message": self.message}
        return {"code": self.code, "message": self.message, "data": self._data}

    def __repr__(self) -> str:
        extra = "" if self._data is _NO_DATA else f", data={self._data!r}"
        return f"{type(self).__name__}({self.message!r}{extra}, code={self.code})"


class ParseError(JSONRPCError):
    """-32700: the bytes are not a single valid JSON text in UTF-8."""

    code = PARSE_ERROR
    id: Any = None


class InvalidRequest(JSONRPCError):
    """-32600: valid JSON that is not a valid message, or a message over a limit.

    ``id`` is the request id to echo in the error reply, when it could be read
    and is itself valid; otherwise ``None``.
    """

    code = INVALID_REQUEST

    def __init__(self, message: str, data: Any = _NO_DATA, *, id: Any = None) -> None:
        super().__init__(message, data)
        self.id = id


class InvalidResponse(InvalidRequest):
    """-32600 for a message shaped like a response that breaks the rules.

    Its error reply (if the receiver sends one at all) uses id ``None``;
    ``response_id`` is the id the response carried, when it was a valid id,
    so that a client can fail the matching request instead of waiting.
    """

    def __init__(self, message: str, *, response_id: Any = None) -> None:
        super().__init__(message)
        self.response_id = response_id


class InvalidNotification(InvalidRequest):
    """-32600 for a message shaped like a notification (``method``, no ``id``) that breaks the rules.

    JSON-RPC 2.0 §4.1: a notification is never answered, whatever is wrong
    with it, so no error reply is sent for it (the receiver logs it; over
    HTTP the status code alone may refuse the POST). ``method`` is the method
    it named, when that was a string.
    """

    def __init__(self, message: str, *, method: str | None = None) -> None:
        super().__init__(message)
        self.method = method


class MethodNotFound(JSONRPCError):
    """-32601: the method does not exist or is not available."""

    code = METHOD_NOT_FOUND


class InvalidParams(JSONRPCError):
    """-32602: invalid method parameters."""

    code = INVALID_PARAMS


class InternalError(JSONRPCError):
    """-32603: the receiver failed while handling a valid request."""

    code = INTERNAL_ERROR


class ProtocolError(Exception):
    """A JSON-RPC rule was broken in a way that gets no wire reply."""


class LocalProtocolError(ProtocolError):
    """This side tried to do something the protocol forbids."""


class RemoteProtocolError(ProtocolError):
    """The peer did something the protocol forbids, and no reply is owed."""
