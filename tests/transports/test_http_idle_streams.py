"""Many idle ``subscriptions/listen`` streams on one real uvicorn on loopback (issue 29, idle streams).

The server runs in a thread of this process (uvicorn as `serve_http` configures
it, with no concurrency cap), so that the test can count its registered
listeners; the clients are raw sockets on one ``selectors`` loop. 2,000 streams
each get their acknowledgement, then one ``notifications/tools/list_changed``;
then every client hangs up and the server's listeners, open streams and
per-client table return to zero (nothing is kept for a stream that is gone).
"""

from __future__ import annotations

import asyncio
import resource
import selectors
import socket
import threading
import time
from typing import Any, Iterator

import orjson
import pytest

from conftest import META

pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

import uvicorn  # noqa: E402

import wiremcp  # noqa: E402
from wiremcp.transports.http import MCPApp, uvicorn_config  # noqa: E402

STREAMS = 2_000
#: A condition the server reaches on its own (streams opened, events delivered, streams released) gets this long.
DEADLINE_S = 60.0


class Running:
    def __init__(self, server: wiremcp.Server, app: MCPApp) -> None:
        self.server = server
        self.app = app
        config = uvicorn_config(app, port=0, limit_concurrency=None, log_level="warning")
        self.sock = config.bind_socket()
        self.port = self.sock.getsockname()[1]
        self.uvicorn = uvicorn.Server(config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            await self.uvicorn.serve(sockets=[self.sock])

        asyncio.run(main())

    def call(self, fn: Any) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(fn)


@pytest.fixture
def running() -> Iterator[Running]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * STREAMS + 256  # both ends of every stream are in this process
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"needs {need} file descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))
    server = wiremcp.Server("idle-streams", max_subscriptions=STREAMS + 10)
    app = MCPApp(server, max_listens_per_client=STREAMS + 10)
    r = Running(server, app)
    r.thread.start()
    until(lambda: r.uvicorn.started, "uvicorn started")
    try:
        yield r
    finally:
        r.uvicorn.should_exit = True
        r.thread.join(30)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {DEADLINE_S:g} s: {what}")
        time.sleep(0.01)


def listen_request(port: int, i: int) -> bytes:
    body = orjson.dumps({
        "jsonrpc": "2.0", "id": i, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
    })
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: subscriptions/listen\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_until(sel: selectors.BaseSelector, bufs: dict[int, bytearray], marker: bytes) -> None:
    """Read every stream until each holds ``marker``."""
    waiting = {fd for fd, buf in bufs.items() if marker not in buf}
    deadline = time.monotonic() + DEADLINE_S
    while waiting:
        assert time.monotonic() < deadline, f"{len(waiting)} streams still without {marker!r}"
        for key, _ in sel.select(1.0):
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            data = sock.recv(65536)
            assert data, f"a stream closed: {bytes(bufs[sock.fileno()][:300])!r}"
            buf = bufs[sock.fileno()]
            buf += data
            if marker in buf:
                waiting.discard(sock.fileno())


def test_two_thousand_idle_listen_streams_each_notified_and_released(running: Running) -> None:
    server, app, port = running.server, running.app, running.port
    bus: Any = server.bus
    socks = []
    sel = selectors.DefaultSelector()
    bufs: dict[int, bytearray] = {}
    try:
        for i in range(STREAMS):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(listen_request(port, i))
            s.setblocking(False)
            socks.append(s)
            bufs[s.fileno()] = bytearray()
            sel.register(s, selectors.EVENT_READ)
        read_until(sel, bufs, b"notifications/subscriptions/acknowledged")
        assert all(buf.startswith(b"HTTP/1.1 200") and b"text/event-stream" in buf for buf in bufs.values())
        until(lambda: len(bus) == STREAMS, "every stream subscribed")

        running.call(server.notify_tools_changed)
        read_until(sel, bufs, b"notifications/tools/list_changed")
        for i, s in enumerate(socks):  # each got its own subscription's event, once
            buf = bufs[s.fileno()]
            assert buf.count(b"notifications/tools/list_changed") == 1
            assert b'"io.modelcontextprotocol/subscriptionId":%d}' % i in buf
    finally:
        sel.close()
        for s in socks:
            s.close()
    # Released on disconnect: no listener, no open stream, no per-client count left behind.
    until(lambda: len(bus) == 0, "every listener unsubscribed")
    listening: Any = server._engine._listening  # type: ignore[attr-defined]
    until(lambda: listening.open[0] == 0, "the open streams counted back to 0")
    caps: Any = app._listen_caps
    until(lambda: not caps.open_count, "the per-client table empty")
