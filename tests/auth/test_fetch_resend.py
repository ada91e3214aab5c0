"""The OAuth client's HTTP requests when the server drops the connection before answering (auth/_http.py).

A real loopback HTTP server (a raw asyncio one, so that it can end a
connection the way a loaded server does) answers every request with a JSON
document, except that the first request it reads is dropped: with a reset
(RST: the request unread, so the server cannot have acted on it, as Node's
keep-alive timer does under load) or a clean close. RFC 9110 section 9.2.2:
a reset request is sent again whatever its method; after a clean close only
a GET (a metadata document) is, never a token POST.
"""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from wiremcp.auth import AuthError
from wiremcp.auth._http import Fetcher
from wiremcp.auth._ssrf import URLGuard

pytestmark = pytest.mark.slow


class DroppingServer:
    def __init__(self, ending: str) -> None:
        self.ending = ending
        self.requests: list[bytes] = []  # the request lines the server read, dropped ones included
        self.answered = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
            if not head:
                return
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            self.requests.append(head.split(b"\r\n")[0])
            if len(self.requests) == 1:
                if self.ending == "reset":
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                else:
                    writer.close()
                return
            body = b'{"issuer": "http://127.0.0.1"}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            self.answered += 1


def fetch(ending: str, method: str) -> tuple[object, DroppingServer]:
    server = DroppingServer(ending)

    async def main() -> object:
        listening = await asyncio.start_server(server.serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}/.well-known/oauth-authorization-server"
        fetcher = Fetcher(URLGuard(url), timeout=20)
        try:
            data = {"grant_type": "client_credentials"} if method == "POST" else None
            return (await fetcher.request(method, url, "metadata", data=data)).json("metadata")
        except AuthError as exc:
            return exc
        finally:
            await fetcher.aclose()
            listening.close()

    return asyncio.run(main()), server


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_request_reset_unread_is_sent_again(method: str) -> None:
    outcome, server = fetch("reset", method)
    assert outcome == {"issuer": "http://127.0.0.1"}, outcome
    assert [line.split(b" ")[0] for line in server.requests] == [method.encode()] * 2 and server.answered == 1


def test_a_metadata_get_closed_without_a_response_is_sent_again() -> None:
    outcome, server = fetch("close", "GET")
    assert outcome == {"issuer": "http://127.0.0.1"}, outcome
    assert len(server.requests) == 2


def test_a_token_post_closed_without_a_response_is_not_sent_again() -> None:
    """The server read it and may have acted (a code is single use): reported, not repeated."""
    outcome, server = fetch("close", "POST")
    assert isinstance(outcome, AuthError) and "RemoteProtocolError" in str(outcome), outcome
    assert len(server.requests) == 1
