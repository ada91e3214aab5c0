"""The host side of MCP: a `Client` over any transport.

    import wiremcp

    async with wiremcp.Client.stdio("wiremcp", ["run", "examples/echo.py"]) as client:
        print([t["name"] for t in await client.list_tools()])
        result = await client.call_tool("echo", {"text": "hi"})
        print(result.text)

Shaped like h11 under httpx: `ClientProtocol` (`_protocol`) is the whole
client side of MCP without I/O (correlation, ``_meta``, the era decision,
MRTR steps, caching, notification routing, replies to legacy server
requests): bytes in, bytes and `events` out, testable with no event loop.
`Client` (`_client`) drives it on asyncio over a transport
(`wiremcp.transports`) implementing the small `ClientTransport` contract.
Per-call options travel as one `CallOptions`; era decisions are kept in an
`EraCache` that belongs to the client (or to whoever shares one). The rules
live in the docstrings of `_protocol`, `_inbox`, `_eras`, `_mrtr`, `_cache`,
`_tasks` (tasks: `TaskHandle`, `TaskState`) and, on the asyncio side,
`_calls`, `_driver`, `_receiver`, `_negotiate`; the exception tree in
`_errors`.
"""

from . import events
from ._client import DEFAULT_PROBE_TIMEOUT, DEFAULT_TIMEOUT, Client
from ._driver import RETRY_EVENT
from ._eras import EraCache
from ._options import DEFAULT, CallOptions
from ._protocol import DEFAULT_MAX_INPUT_ROUNDS, ClientProtocol, Outgoing
from ._subscription import Subscription
from ._errors import (
    ClientError,
    ConnectionClosed,
    HTTPError,
    NotSent,
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
from ._task_handle import TaskHandle
from ._tasks import TASKS_EXTENSION, TaskCancelled, TaskFollower, TaskState

__all__ = [
    "Client",
    "Subscription",
    "ClientTransport",
    "Receiver",
    "ClientProtocol",
    "Outgoing",
    "events",
    "CallOptions",
    "DEFAULT",
    "EraCache",
    "DEFAULT_TIMEOUT",
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "RETRY_EVENT",
    # results
    "Result",
    "DiscoverResult",
    "CallToolResult",
    "ReadResourceResult",
    "GetPromptResult",
    "CompleteResult",
    "Page",
    # tasks
    "TaskHandle",
    "TaskState",
    "TaskFollower",
    "TaskCancelled",
    "TASKS_EXTENSION",
    # errors
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
