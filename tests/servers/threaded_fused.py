"""Plain ``def`` tools (the worker pool) with scalar schemas: the fused stage's threaded calls.

    wiremcp run tests/servers/threaded_fused.py:fast        # the fused stage takes these calls
    wiremcp run tests/servers/threaded_fused.py:general     # the same tools behind a middleware: the general path
    wiremcp run tests/servers/threaded_fused.py:fast_unmasked     # mask_errors=False
    wiremcp run tests/servers/threaded_fused.py:general_unmasked

tests/transports/test_stdio_threaded_fused.py sends the same lines to a fast and a general server
and compares the replies byte for byte.
"""

from __future__ import annotations

import time
from typing import Any

import wiremcp
from wiremcp import ToolError
from wiremcp.jsonrpc import InvalidParams


def make(name: str, *, general: bool, mask: bool) -> wiremcp.Server:
    server = wiremcp.Server(name, version="1.0.0", mask_errors=mask)

    @server.tool
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool
    def mix(a: int, flag: bool, label: str = "none", scale: float = 1.0) -> str:
        """Several scalar arguments, two optional."""
        return f"{a}|{flag}|{label}|{scale!r}"

    @server.tool
    def data(n: int) -> dict[str, int]:
        """Structured output, checked against its outputSchema."""
        return {"n": n}

    @server.tool
    def fails(kind: str) -> str:
        """Raises what it is asked to."""
        if kind == "tool":
            raise ToolError("told to fail")
        if kind == "protocol":
            raise InvalidParams("Invalid params: a deliberate protocol error")
        if kind == "bug":
            raise ValueError("secret internals")
        return kind

    @server.tool
    def wait(seconds: float) -> str:
        """Block its worker thread, then answer."""
        time.sleep(seconds)
        return "waited"

    if general:

        @server.middleware
        async def passthrough(invocation: Any, call_next: Any) -> Any:
            return await call_next(invocation)

    return server


# Both pairs share a name, so that the serverInfo in every result is the same.
fast = make("threaded-fused", general=False, mask=True)
general = make("threaded-fused", general=True, mask=True)
fast_unmasked = make("threaded-fused", general=False, mask=False)
general_unmasked = make("threaded-fused", general=True, mask=False)
