"""The host side of MCP: a `Client` over any transport.

    import wiremcp

    async with wiremcp.Client.stdio("wiremcp", ["run", "examples/echo.py"]) as client:
        print([t["name"] for t in await client.list_tools()])
        result = await client.call_tool("echo", {"text": "hi"})
        print(result.text)

The protocol logic here (correlation, era detection, MRTR, caching,
subscriptions) is transport-agnostic; transports (`wiremcp.transports`)
implement the small `ClientTransport` interface. See `_client` for the rules
the client keeps and `_errors` for the exception tree.
"""

from ._client import (
    DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TIMEOUT,
    Client,
    Subscription,
    forget_eras,
)
from ._errors import (
    ClientError,
    ConnectionClosed,
    HTTPError,
    IncompatibleServer,
    ProtocolViolation,
    RemoteError,
    RequestTimeout,
    ToolCallError,
)
from ._results import (
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    GetPromptResult,
    Page,
    ReadResourceResult,
    Result,
)
from ._transport import ClientTransport, Receiver

__all__ = [
    "Client",
    "Subscription",
    "ClientTransport",
    "Receiver",
    "forget_eras",
    "DEFAULT_TIMEOUT",
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_MAX_INPUT_ROUNDS",
    # results
    "Result",
    "DiscoverResult",
    "CallToolResult",
    "ReadResourceResult",
    "GetPromptResult",
    "CompleteResult",
    "Page",
    # errors
    "ClientError",
    "RemoteError",
    "RequestTimeout",
    "ConnectionClosed",
    "HTTPError",
    "ProtocolViolation",
    "IncompatibleServer",
    "ToolCallError",
]
