"""A strict, sans-I/O JSON-RPC 2.0 core: bytes in, messages or exact errors out.

No asyncio, no sockets. `Decoder` turns one message's bytes into a
`Request`, `Notification`, `Response`, `ErrorResponse` (or, in plain
JSON-RPC 2.0, a `Batch`) or raises the `JSONRPCError` to send back; the
``encode*`` functions make compact single-line UTF-8; `PendingRequests`
correlates replies with the requests in flight; `LineSplitter` frames a byte
stream into lines. Two profiles: `JSONRPC_2_0` (the base specification) and
`MCP` (strings or integers for ids, object params, no batches).

    >>> from wiremcp.jsonrpc import decode, encode_result
    >>> req = decode(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    >>> encode_result(req.id, {})
    b'{"jsonrpc":"2.0","id":1,"result":{}}'
"""

from ._codec import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    JSONRPC_2_0,
    MCP,
    Decoder,
    Profile,
    decode,
    encode,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_ERROR_MAX,
    SERVER_ERROR_MIN,
    InternalError,
    InvalidNotification,
    InvalidParams,
    InvalidRequest,
    InvalidResponse,
    JSONRPCError,
    LocalProtocolError,
    MethodNotFound,
    ParseError,
    ProtocolError,
    RemoteProtocolError,
)
from ._framing import LineSplitter, TooLong
from ._messages import Batch, ErrorResponse, Message, Notification, Request, RequestId, Response
from ._pending import DEFAULT_ABANDONED_MEMORY, Pending, PendingRequests

__all__ = [
    # messages
    "Request",
    "Notification",
    "Response",
    "ErrorResponse",
    "Batch",
    "Message",
    "RequestId",
    # codec
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
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_DEPTH",
    # framing
    "LineSplitter",
    "TooLong",
    # correlation
    "Pending",
    "PendingRequests",
    "DEFAULT_ABANDONED_MEMORY",
    # errors
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
