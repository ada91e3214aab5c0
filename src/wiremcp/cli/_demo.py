"""``wiremcp demo``: the echo server over stdio, one envelope at a time.

A thin use of `wiremcp.Client` with the ``--wire`` printer of ``wiremcp
inspect``: it starts ``wiremcp run`` on the packaged echo example as a real
subprocess and shows every JSON-RPC envelope sent and received, with timing:
discovery (the client's era probe), the tool list, a tool call, a
notification (which gets no reply), then, through the client's raw-send
escape hatch, a request without the required ``_meta`` and a line that is not
JSON at all, which the client itself would never send.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ._inspect import Style, WirePrinter

__all__ = ["demo"]

#: Seconds to wait for the reply a notification must not get.
SILENCE = 0.3


async def _run(out: Any, style: Style) -> int:
    from ..client import Client

    def title(text: str) -> None:
        print("\n" + style("1;36", f"# {text}"), file=out)

    wire = WirePrinter(out, style)
    print(style("1", "wiremcp demo: the echo example over stdio, one JSON-RPC envelope per line"), file=out)
    client = Client.stdio(
        sys.executable, ["-m", "wiremcp", "run", "wiremcp.examples.echo"], name="wiremcp-demo", version="1",
        on_wire=wire, era="auto",
    )
    title("Discovery: which versions and capabilities the server has (server/discover.mdx); the client's era probe")
    failures = 0
    async with client:  # connecting sends the server/discover probe (a fresh process has no cached era)

        title("The tools it offers, with input schemas derived from Python type hints")
        await client.list_tools(refresh=True)

        title("Call a tool: name and arguments go in params; the reply echoes the id")
        result = await client.call_tool("echo", {"text": "Hello, wire!"})
        call_id = wire.last_sent_id

        title("A notification has no id and gets no reply (here: cancel a request that already finished)")
        reply = await client.send_raw(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"demo"}}' % call_id,
            reply_timeout=SILENCE,
        )
        if reply is None:
            print(style("2", "← (no reply, as the protocol requires)"), file=out)
        else:
            print(style("31", "← unexpected reply"), file=out)
            failures += 1

        title("A request without params._meta is malformed in 2026-07-28: error -32602")
        reply = await client.send_raw(
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
        )
        failures += reply is None or getattr(reply, "code", None) != -32602

        title("A line that is not JSON gets a -32700 reply (its id unreadable, so none), never silence")
        reply = await client.send_raw(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", oops}')
        failures += reply is None or getattr(reply, "code", None) != -32700
        if result.text != "Hello, wire!":
            failures += 1
    code = client.transport.returncode
    print("\n" + style("2", f"stdin closed; the server drained and exited with status {code}"), file=out)
    return 1 if failures or code else 0


def demo(color: bool | None = None) -> int:
    out = sys.stdout
    style = Style.for_stream(out) if color is None else Style(color)
    return asyncio.run(_run(out, style))
