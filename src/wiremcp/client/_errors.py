"""Errors the client raises.

The tree::

    Exception
     └── ClientError                 anything that went wrong on the client side of a call
          ├── RemoteError              the server answered with a JSON-RPC error: code, message, data
          ├── RequestTimeout           no reply within the timeout; the request was cancelled
          │                            (also a TimeoutError)
          ├── ConnectionClosed         the transport ended (server exited, stream closed)
          │    │                       before the reply came: the request may have run
          │    └── NotSent             no connection could be made, so the request never
          │                            left this process: it is safe to send again
          ├── HTTPError                an HTTP reply with no JSON-RPC message in it (status, body)
          ├── ProtocolViolation        the server broke a protocol rule the client relies on
          │                            (an unknown resultType, an input request nobody can answer,
          │                            more MRTR rounds than allowed, a malformed reply ...)
          ├── IncompatibleServer       no protocol version both sides speak, or the server's era
          │                            is not one this client was told to use
          └── ToolCallError            raised by `CallToolResult.raise_for_error()` for a result
                                       with ``isError: true`` (a tool execution error)

`RemoteError` is never a `wiremcp.jsonrpc.JSONRPCError`: an error the server
sent stays distinguishable from one this process raises (basic/index.mdx,
"Error Codes": local errors must not be mistaken for errors from the peer).
A tool execution error is not an exception at all unless asked for: it is a
result (``result.is_error``), because the model is meant to read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._results import CallToolResult

__all__ = [
    "ClientError",
    "RemoteError",
    "RequestTimeout",
    "ConnectionClosed",
    "NotSent",
    "HTTPError",
    "ProtocolViolation",
    "IncompatibleServer",
    "ToolCallError",
]


class ClientError(Exception):
    """Base class of every error this client raises."""


class RemoteError(ClientError):
    """The server answered a request with a JSON-RPC error object.

    ``code``, ``message`` and ``data`` are the error object's members as sent
    (``data`` is ``None`` when absent; ``has_data`` tells the two apart);
    ``method`` is the method of the request that failed. Over HTTP,
    ``http_status`` is the response's status code when the error came in a
    non-2xx response.
    """

    def __init__(self, error: dict[str, Any], method: str | None = None, *, http_status: int | None = None) -> None:
        self.error = error
        self.code: int = error.get("code")  # type: ignore[assignment]
        self.message: str = error.get("message")  # type: ignore[assignment]
        self.data: Any = error.get("data")
        self.method = method
        self.http_status = http_status
        where = f" ({method})" if method else ""
        super().__init__(f"{self.message} [code {self.code}]{where}")

    @property
    def has_data(self) -> bool:
        return "data" in self.error

    def __repr__(self) -> str:
        return f"RemoteError(code={self.code}, message={self.message!r}, data={self.data!r}, method={self.method!r})"


class RequestTimeout(ClientError, TimeoutError):
    """No reply within the timeout; the request was cancelled on the wire."""


class ConnectionClosed(ClientError):
    """The transport closed before the reply came (or before the request could be sent)."""


class NotSent(ConnectionClosed):
    """The request never left this process: no connection to the server could be made.

    Transports raise it only when they know nothing was written (a refused
    or timed-out TCP connect), so the server cannot have acted on the
    request; the `Client` retries such a request once (``connect_retry_delay``).
    """


class HTTPError(ClientError):
    """An HTTP response that carried no JSON-RPC reply: ``status`` and the ``body`` as received."""

    def __init__(self, status: int, body: bytes, method: str | None = None) -> None:
        self.status = status
        self.body = body
        self.method = method
        shown = body[:200].decode("utf-8", errors="replace")
        super().__init__(f"HTTP {status}" + (f" for {method}" if method else "") + (f": {shown}" if shown else ""))


class ProtocolViolation(ClientError):
    """The server's reply breaks a rule of the protocol."""


class IncompatibleServer(ClientError):
    """The server speaks no protocol version (or era) this client can use."""


class ToolCallError(ClientError):
    """A ``tools/call`` result with ``isError: true``; ``result`` is the whole result."""

    def __init__(self, result: CallToolResult) -> None:
        self.result = result
        super().__init__(result.text or "the tool reported an error")
