"""The four JSON-RPC 2.0 messages, and a batch of them.

Each is a small slotted value object: ``params``/``result`` stay the plain
dicts (or lists) the decoder produced, so nothing is copied or converted on
the hot path. ``params is None`` means the member was absent, which is not
the same as ``{}`` on the wire.
"""

from __future__ import annotations

from typing import Any, Union

from ._errors import InvalidRequest

__all__ = [
    "Request",
    "Notification",
    "Response",
    "ErrorResponse",
    "Batch",
    "Message",
    "RequestId",
]

#: str or int under MCP; plain JSON-RPC 2.0 also allows float and None.
RequestId = Union[str, int, float, None]


class _Value:
    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:  # mutable payloads: equality only
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Request(_Value):
    """A call that expects exactly one `Response` or `ErrorResponse` with the same id."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: Any = None) -> None:
        self.id = id
        self.method = method
        self.params = params


class Notification(_Value):
    """A one-way message: it has no id and gets no reply."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Any = None) -> None:
        self.method = method
        self.params = params


class Response(_Value):
    """A successful reply: ``result`` is any JSON value (an object under MCP)."""

    __slots__ = ("id", "result")

    def __init__(self, id: RequestId, result: Any) -> None:
        self.id = id
        self.result = result


class ErrorResponse(_Value):
    """A failed reply. ``error`` is the error object ``{"code", "message"[, "data"]}``."""

    __slots__ = ("id", "error")

    def __init__(self, id: RequestId, error: dict[str, Any]) -> None:
        self.id = id
        self.error = error

    @classmethod
    def build(cls, id: RequestId, code: int, message: str, *data: Any) -> ErrorResponse:
        """``ErrorResponse.build(1, -32601, "Method not found")``; pass ``data`` positionally."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data:
            (error["data"],) = data
        return cls(id, error)

    @property
    def code(self) -> int:
        """The ``error.code`` (an integer)."""
        code: int = self.error["code"]  # the decoder checked it is an int
        return code

    @property
    def message(self) -> str:
        """The ``error.message`` (a string)."""
        message: str = self.error["message"]  # the decoder checked it is a str
        return message

    @property
    def data(self) -> Any:
        """The ``error.data``, or None when absent."""
        return self.error.get("data")


Message = Union[Request, Notification, Response, ErrorResponse]


class Batch(_Value):
    """A JSON-RPC 2.0 batch (never used under MCP).

    ``items`` keeps the order of the array; an element that was not a valid
    message is kept in place as the `InvalidRequest` it raised, so that the
    receiver can answer it in the batch reply.
    """

    __slots__ = ("items",)

    def __init__(self, items: tuple[Message | InvalidRequest, ...]) -> None:
        self.items = items
