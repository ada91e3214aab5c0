"""Finding S3: a server could make the HTTP client hold an endless body or SSE line.

The Streamable HTTP client read a JSON body whole (``resp.read()``) and its
SSE parser kept an unfinished line without bound; the HTTP+SSE fallback
(2024-11-05) did the same with its stream and with the answers to its
POSTs. A hostile server (or anything on the path) that sends one endless
line makes the client's memory grow until the machine swaps or the process
is killed -- while the request waits for a reply that never comes. The
client now refuses a body or an event above ``MAX_RESPONSE_SIZE`` (16 MiB,
what a wiremcp server accepts): the request fails with `ConnectionClosed`.
Each test runs tests/security/hostile_http.py, a real loopback server, which
sends 17 MiB and then holds the connection open.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from wiremcp.client import Client, ConnectionClosed
from wiremcp.transports.http.client import MAX_RESPONSE_SIZE, HTTPTransport
from wiremcp.transports.sse.client import SSETransport

HOSTILE = str(Path(__file__).resolve().parent / "hostile_http.py")


class Hostile:
    def __init__(self, mode: str) -> None:
        self.proc = subprocess.Popen([sys.executable, HOSTILE, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline().split()[1])}"

    def stop(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[Hostile]:
    server = Hostile(request.param)
    yield server
    server.stop()


#: Bounds a failure only: without the limit the client would wait here for ever.
DEADLINE = 60.0


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, DEADLINE))


def test_the_limit_is_what_a_server_accepts() -> None:
    from wiremcp.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE

    assert MAX_RESPONSE_SIZE == DEFAULT_MAX_MESSAGE_SIZE == 16 * 1024 * 1024


@pytest.mark.parametrize("hostile", ["http-json", "http-json-length", "http-sse"], indirect=True)
def test_streamable_http_refuses_an_endless_reply(hostile: Hostile) -> None:
    async def main() -> None:
        # timeout=None: only the limit can end the wait (a client without it hangs until DEADLINE)
        with pytest.raises(ConnectionClosed, match=f"more than {MAX_RESPONSE_SIZE} bytes"):
            async with Client(HTTPTransport(hostile.url + "/mcp"), era="legacy", timeout=None):
                pass

    run(main())


@pytest.mark.parametrize("hostile", ["sse-line"], indirect=True)
def test_the_sse_fallback_refuses_an_endless_event(hostile: Hostile) -> None:
    async def main() -> None:
        with pytest.raises(ConnectionClosed, match=f"more than {MAX_RESPONSE_SIZE} bytes"):
            async with Client(SSETransport(hostile.url + "/sse"), era="legacy", timeout=None):
                pass

    run(main())


@pytest.mark.parametrize("hostile", ["sse-post"], indirect=True)
def test_the_sse_fallback_refuses_an_endless_answer_to_a_post(hostile: Hostile) -> None:
    async def main() -> None:
        with pytest.raises(ConnectionClosed, match=f"more than {MAX_RESPONSE_SIZE} bytes"):
            async with Client(SSETransport(hostile.url + "/sse"), era="legacy", timeout=None):
                pass

    run(main())
