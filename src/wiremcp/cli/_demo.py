"""``wiremcp demo``: the echo server over stdio, one envelope at a time.

A thin use of `wiremcp.Client` with the ``--wire`` printer of ``wiremcp
inspect``: it starts ``wiremcp run`` on the packaged echo example as a real
subprocess and shows every JSON-RPC envelope sent and received, with timing:
discovery (the client's era probe), the tool list, a tool call, a
notification (which gets no reply), then a request without the required
``_meta`` and a line that is not JSON at all, which the client itself would
never send.

Those last lines are the demo's own business, not the client's: the demo
builds the `StdioTransport`, writes them with its ``write_line``, and a
`_RawReplies` tap between the transport and the client takes the replies
they get (their ids are the demo's, or unreadable) before the client would
drop them as matching no request of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO

from ..client import Client, Receiver
from ..jsonrpc import MCP, Decoder, ErrorResponse, JSONRPCError, Response
from ..transports.stdio.client import StdioTransport
from ._output import FAILED, OK, Style, WirePrinter

__all__ = ["add_arguments", "handle", "demo"]

#: Seconds to wait for the reply a notification must not get.
SILENCE = 0.3
#: Seconds to wait for the reply to a raw line.
REPLY_TIMEOUT = 5.0


class _RawReplies:
    """A receiver between the transport and the client that keeps the replies to the demo's raw lines."""

    def __init__(self, inner: Receiver, wire: WirePrinter) -> None:
        self.inner = inner
        self.wire = wire
        self.ids: set[Any] = set()
        self.waiter: asyncio.Future[Response | ErrorResponse] | None = None
        self._decoder = Decoder(MCP)

    def message(self, data: bytes, origin: Any, status: int | None = None) -> None:
        if self.waiter is not None and not self.waiter.done():
            try:
                msg = self._decoder.decode(data)
            except JSONRPCError:
                msg = None
            if type(msg) in (Response, ErrorResponse) and (msg.id is None or msg.id in self.ids):  # type: ignore[union-attr]  # a reply here
                self.wire("recv", data)
                self.waiter.set_result(msg)  # type: ignore[arg-type]  # a reply here
                return
        self.inner.message(data, origin, status)

    def request_failed(self, id: Any, exc: BaseException) -> None:
        self.inner.request_failed(id, exc)

    def closed(self, exc: BaseException | None) -> None:
        self.inner.closed(exc)


class _DemoTransport(StdioTransport):
    """The stdio transport with a tap for raw replies."""

    tap: _RawReplies | None = None
    wire: WirePrinter

    async def open(self, receiver: Receiver) -> None:
        self.tap = _RawReplies(receiver, self.wire)
        await super().open(self.tap)

    async def write_raw(self, data: bytes, *, id: Any = None, wait: float = REPLY_TIMEOUT) -> Response | ErrorResponse | None:
        """Write one line as it is and return the reply it gets within ``wait`` seconds (``None``: silence)."""
        tap = self.tap
        assert tap is not None
        if id is not None:
            tap.ids.add(id)
        tap.waiter = asyncio.get_running_loop().create_future()
        self.wire("send", data)
        self.write_line(data)
        try:
            return await asyncio.wait_for(tap.waiter, wait)
        except asyncio.TimeoutError:
            return None
        finally:
            tap.waiter = None


async def _run(out: TextIO, style: Style) -> int:
    def title(text: str) -> None:
        print("\n" + style("1;36", f"# {text}"), file=out)

    wire = WirePrinter(out, style)
    print(style("1", "wiremcp demo: the echo example over stdio, one JSON-RPC envelope per line"), file=out)
    transport = _DemoTransport(sys.executable, ["-m", "wiremcp", "run", "wiremcp.examples.echo"])
    transport.wire = wire
    client = Client(transport, name="wiremcp-demo", version="1", on_wire=wire, era="auto")
    title("Discovery: which versions and capabilities the server has (server/discover.mdx); the client's era probe")
    failures = 0
    async with client:  # connecting sends the server/discover probe (a new client has no era cached)

        title("The tools it offers, with input schemas derived from Python type hints")
        await client.list_tools(refresh=True)

        title("Call a tool: name and arguments go in params; the reply echoes the id")
        result = await client.call_tool("echo", {"text": "Hello, wire!"})
        call_id = wire.last_sent_id

        title("A notification has no id and gets no reply (here: cancel a request that already finished)")
        reply = await transport.write_raw(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"demo"}}' % call_id,
            wait=SILENCE,
        )
        if reply is None:
            print(style("2", "← (no reply, as the protocol requires)"), file=out)
        else:
            print(style("31", "← unexpected reply"), file=out)
            failures += 1

        title("A request without params._meta is malformed in 2026-07-28: error -32602")
        reply = await transport.write_raw(
            b'{"jsonrpc":"2.0","id":"demo-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}',
            id="demo-1",
        )
        failures += type(reply) is not ErrorResponse or reply.code != -32602

        title("A line that is not JSON gets a -32700 reply (its id unreadable, so none), never silence")
        reply = await transport.write_raw(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", oops}')
        failures += type(reply) is not ErrorResponse or reply.code != -32700
        if result.text != "Hello, wire!":
            failures += 1
    code = transport.returncode
    print("\n" + style("2", f"stdin closed; the server drained and exited with status {code}"), file=out)
    return FAILED if failures or code else OK


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The option of ``wiremcp demo``."""
    p.add_argument("--no-color", action="store_true", help="never colour the output")


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp demo``."""
    return demo(color=False if args.no_color else None)


def demo(color: bool | None = None) -> int:
    out = sys.stdout
    style = Style.for_stream(out) if color is None else Style(color)
    return asyncio.run(_run(out, style))
