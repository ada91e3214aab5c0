"""The native HTTP/1.1 server (transports/http/_native.py): MCP over it, and HTTP/1.1 edge cases.

Three kinds of servers:

* ``server`` / ``asgi_server``: the same two real processes as tests/test_http.py, but on
  the native server (``wiremcp run ... --http --server native`` and ``python -m
  wiremcp.transports.http._native http_sample:app``); every test of tests/test_http.py
  that uses them runs again here, unchanged (they are imported below).
* ``probe``: `HTTPServer` in a thread of this process (standard asyncio loop, short
  timeouts, small limits) hosting a small ASGI app written here, so that the tests can
  reach every framing rule and look at what the app saw.
* one conformance run: ``conformance/server.sh`` against ``examples/everything.py`` on
  the native server must stay 37/37.

Spec: RFC 9112 (HTTP/1.1 message syntax: persistence, pipelining, chunked coding,
Expect: 100-continue), RFC 9110 (semantics: HEAD, 204/304, status codes), the ASGI 3
HTTP and lifespan specifications.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import signal
import socket
import sys
import threading
import time
from typing import Any, Iterator

import orjson
import pytest

from conftest import ROOT, SERVERS, call, request, wiremcp_cmd

pytest.importorskip("httptools", reason="the native HTTP server needs the [http] extra")

import test_http as _http  # noqa: E402
from test_http import MAX_BODY, ServerProcess, _dechunk, _raw_request, _read_until, sse_events  # noqa: E402

from wiremcp.transports.http import _native  # noqa: E402
from wiremcp.transports.http._native import HTTPServer  # noqa: E402

pytestmark = pytest.mark.slow

# -- every test of tests/test_http.py that runs against a server fixture, on the native server ----

for _name, _test in vars(_http).items():
    if _name.startswith("test_") and callable(_test):
        if {"server", "asgi_server"} & set(inspect.signature(_test).parameters):
            globals()[_name] = _test
del _name, _test


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """``wiremcp run tests/servers/http_sample.py --http --server native --port 0``."""
    proc = ServerProcess(
        wiremcp_cmd(
            "run", str(SERVERS / "http_sample.py"), "--http", "--server", "native", "--port", "0",
            "--max-message-size", str(MAX_BODY), "--log-level", "INFO",
        ),
        r"serving 'http-sample' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def asgi_server() -> Iterator[ServerProcess]:
    """``python -m wiremcp.transports.http._native http_sample:app`` (the app's short timeouts)."""
    proc = ServerProcess(
        [sys.executable, "-m", "wiremcp.transports.http._native", "http_sample:app", "--app-dir", str(SERVERS),
         "--port", "0"],
        r"serving http_sample:app at http://127\.0\.0\.1:(\d+)",
    )
    yield proc
    proc.stop()


# -- an in-process server and a probe app --------------------------------------


class Probe:
    """`HTTPServer` on a private asyncio loop in a thread; `seen` records what the app saw."""

    def __init__(self, **options: Any) -> None:
        self.seen: list[tuple[str, Any]] = []
        self.errors: list[dict[str, Any]] = []  # what reached the loop's exception handler
        self.options = options
        self.port = 0
        self.server: HTTPServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "the probe server did not start"

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.loop.set_exception_handler(lambda loop, context: self.errors.append(context))
        self._stop = asyncio.Event()
        self.server = HTTPServer(self.app, **self.options)
        self.port = await self.server.start("127.0.0.1", 0)
        self._ready.set()
        await self._stop.wait()
        await self.server.shutdown(grace=2.0)

    def stop(self) -> None:
        assert self.loop is not None and self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def wait_seen(self, kind: str, timeout: float = 5.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for k, v in list(self.seen):
                if k == kind:
                    return v
            time.sleep(0.01)
        raise AssertionError(f"the app never saw {kind!r}: {self.seen}")

    def connections(self) -> list[Any]:
        assert self.server is not None
        return list(self.server.connections)

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                self.seen.append((msg["type"], None))
                await send({"type": msg["type"] + ".complete"})
                if msg["type"] == "lifespan.shutdown":
                    return
        path = scope["path"]
        query = dict(p.split("=", 1) for p in scope["query_string"].decode().split("&") if "=" in p)
        self.seen.append(("request", path))
        if path == "/echo":  # the body back, no Content-Length from the app
            body = await _read_body(receive)
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": body})
        elif path == "/scope":
            info = {k: scope[k] for k in ("http_version", "method", "path", "raw_path", "query_string", "root_path",
                                          "scheme", "client", "server")}
            info["raw_path"] = info["raw_path"].decode()
            info["query_string"] = info["query_string"].decode()
            info["headers"] = [[k.decode(), v.decode()] for k, v in scope["headers"]]
            body = orjson.dumps(info)
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
            await send({"type": "http.response.body", "body": body})
        elif path == "/slow":  # answers after ms milliseconds, with its label
            await _read_body(receive)
            await asyncio.sleep(int(query.get("ms", "50")) / 1000)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": query.get("label", "").encode()})
        elif path == "/stream":  # n parts, no Content-Length: chunked (1.1) or close-delimited (1.0)
            await _read_body(receive)
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            for i in range(int(query.get("n", "3"))):
                await send({"type": "http.response.body", "body": b"part%d;" % i, "more_body": True})
                await asyncio.sleep(0.01)
            await send({"type": "http.response.body", "body": b""})
        elif path == "/length":  # Content-Length given, body in two parts
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"10")]})
            await send({"type": "http.response.body", "body": b"01234", "more_body": True})
            await send({"type": "http.response.body", "body": b"56789"})
        elif path == "/forever":  # streams until the client leaves; records the disconnect
            await _read_body(receive)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            listener = asyncio.ensure_future(receive())
            try:
                while not listener.done():
                    await send({"type": "http.response.body", "body": b"tick\n", "more_body": True})
                    await asyncio.sleep(0.02)
                self.seen.append(("disconnect", listener.result()["type"]))
                await send({"type": "http.response.body", "body": b"ignored", "more_body": True})  # dropped
                self.seen.append(("sent-after-disconnect", True))
            finally:
                listener.cancel()
        elif path == "/wait":  # reads the body, then waits for the disconnect
            await _read_body(receive)
            msg = await receive()
            self.seen.append(("disconnect", msg["type"]))
        elif path == "/early":  # answers without reading the body
            await send({"type": "http.response.start", "status": 403, "headers": [(b"content-length", b"2")]})
            await send({"type": "http.response.body", "body": b"no"})
        elif path == "/status":
            status = int(query["code"])
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b"this body must not be sent"})
        elif path == "/boom":
            raise RuntimeError("the app failed before answering")
        elif path == "/boom-late":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"partial", "more_body": True})
            raise RuntimeError("the app failed mid-response")
        elif path == "/silent":
            return  # no response at all
        elif path == "/big":  # `kib` KiB in 64 KiB parts; counts the parts sent
            await _read_body(receive)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            part = b"b" * 65536
            for i in range(int(query["kib"]) // 64):
                await send({"type": "http.response.body", "body": part, "more_body": True})
                self.seen.append(("big-part", i))
            await send({"type": "http.response.body", "body": b""})
        elif path == "/hold":  # reads nothing until told (flow control of the request body)
            self.hold = asyncio.Event()
            await self.hold.wait()
            body = await _read_body(receive)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"%d" % len(body)})
        else:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"not found"})


async def _read_body(receive: Any) -> bytes:
    parts = []
    while True:
        msg = await receive()
        assert msg["type"] == "http.request", msg
        parts.append(msg["body"])
        if not msg["more_body"]:
            return b"".join(parts)


PROBE_LIMITS = dict(max_header_bytes=8192, max_headers=20, max_body_size=100_000, header_timeout=0.5,
                    keepalive_timeout=0.5)


@pytest.fixture(scope="module")
def _probe() -> Iterator[Probe]:
    p = Probe(**PROBE_LIMITS)
    yield p
    p.stop()
    assert not p.errors, p.errors


@pytest.fixture
def probe(_probe: Probe) -> Iterator[Probe]:
    """The shared probe server; a test fails if anything reached its loop's exception handler."""
    yield _probe
    assert not _probe.errors, _probe.errors


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class Response:
    def __init__(self, status: int, version: bytes, headers: dict[str, str], body: bytes, raw_body: bytes) -> None:
        self.status = status
        self.version = version
        self.headers = headers
        self.body = body
        self.raw_body = raw_body

    def __repr__(self) -> str:
        return f"Response({self.status}, {self.headers}, {self.body[:200]!r})"


class Reader:
    """Reads HTTP/1.1 responses off one socket, one at a time (Content-Length, chunked, or until EOF)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _more(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def closed(self, timeout: float = 5.0) -> bool:
        """True if the server closes the connection (EOF) with nothing more sent."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self._more():
                    return self.buf == b""
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionResetError:
            return self.buf == b""

    def response(self, head_request: bool = False) -> Response:
        while b"\r\n\r\n" not in self.buf:
            assert self._more(), f"connection closed before a response head; got {self.buf!r}"
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        version, status = lines[0].split(b" ")[:2]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            key = name.decode().lower()
            assert key not in headers, f"repeated header {key}"
            headers[key] = value.decode().strip()
        code = int(status)
        if code == 100:
            return Response(code, version, headers, b"", b"")
        if head_request or code in (204, 304):
            return Response(code, version, headers, b"", b"")
        if "content-length" in headers:
            n = int(headers["content-length"])
            while len(self.buf) < n:
                assert self._more(), "connection closed inside a body"
            body, self.buf = self.buf[:n], self.buf[n:]
            return Response(code, version, headers, body, body)
        if headers.get("transfer-encoding") == "chunked":
            while not re.search(rb"(^|\r\n)0\r\n\r\n", self.buf):
                assert self._more(), f"connection closed inside a chunked body: {self.buf!r}"
            end = re.search(rb"(^|\r\n)0\r\n\r\n", self.buf).end()
            raw, self.buf = self.buf[:end], self.buf[end:]
            return Response(code, version, headers, _dechunk(raw), raw)
        while self._more():  # close-delimited
            pass
        body, self.buf = self.buf, b""
        return Response(code, version, headers, body, body)


def http_request(method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
                 version: str = "HTTP/1.1") -> bytes:
    merged = {"Host": "127.0.0.1"}
    if body or method == "POST":
        merged["Content-Length"] = str(len(body))
    merged.update(headers or {})
    head = "".join(f"{k}: {v}\r\n" for k, v in merged.items() if v is not None)
    return f"{method} {path} {version}\r\n{head}\r\n".encode() + body


def exchange(port: int, data: bytes, *, head_request: bool = False) -> tuple[Response, Reader]:
    sock = connect(port)
    sock.sendall(data)
    reader = Reader(sock)
    return reader.response(head_request), reader


# -- keep-alive, HTTP/1.0, pipelining ---------------------------------------------


def test_keep_alive_serves_many_requests_on_one_connection(probe):
    """RFC 9112, 9.3: HTTP/1.1 connections persist by default."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        for i in range(5):
            sock.sendall(http_request("POST", "/echo", b"hello %d" % i))
            resp = reader.response()
            assert resp.status == 200 and resp.body == b"hello %d" % i
            assert resp.headers["content-length"] == str(len(resp.body))  # added by the server
            assert "connection" not in resp.headers and "date" in resp.headers
        assert len([c for c in probe.connections() if not c.lost]) >= 1
    finally:
        sock.close()


def test_connection_close_from_the_client_closes_after_the_response(probe):
    resp, reader = exchange(probe.port, http_request("POST", "/echo", b"x", {"Connection": "close"}))
    assert resp.status == 200 and resp.headers["connection"] == "close"
    assert reader.closed()


def test_http_1_0_closes_unless_keep_alive_is_asked(probe):
    """RFC 9112, 9.3: an HTTP/1.0 connection closes after the response unless keep-alive is asked for."""
    resp, reader = exchange(probe.port, http_request("POST", "/echo", b"old", version="HTTP/1.0"))
    assert resp.status == 200 and resp.body == b"old" and resp.headers["connection"] == "close"
    assert reader.closed()
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        for i in range(2):
            sock.sendall(http_request("POST", "/echo", b"ka%d" % i, {"Connection": "keep-alive"}, version="HTTP/1.0"))
            resp = reader.response()
            assert resp.body == b"ka%d" % i and resp.headers["connection"] == "keep-alive"
    finally:
        sock.close()


def test_http_1_0_streaming_response_is_close_delimited(probe):
    """RFC 9112, 6.3: no chunked coding for an HTTP/1.0 client; the close ends the body."""
    resp, _ = exchange(probe.port, http_request("GET", "/stream?n=3", headers={"Connection": "keep-alive"},
                                                version="HTTP/1.0"))
    assert "transfer-encoding" not in resp.headers and "content-length" not in resp.headers
    assert resp.headers["connection"] == "close" and resp.body == b"part0;part1;part2;"


def test_streaming_response_is_chunked(probe):
    resp, reader = exchange(probe.port, http_request("GET", "/stream?n=3"))
    assert resp.headers["transfer-encoding"] == "chunked" and resp.body == b"part0;part1;part2;"
    assert resp.raw_body.startswith(b"6\r\npart0;\r\n") and resp.raw_body.endswith(b"0\r\n\r\n")
    reader.sock.sendall(http_request("POST", "/echo", b"after"))  # the connection is still usable
    assert reader.response().body == b"after"
    reader.sock.close()


def test_content_length_from_the_app_is_kept(probe):
    resp, reader = exchange(probe.port, http_request("GET", "/length"))
    assert resp.headers["content-length"] == "10" and resp.body == b"0123456789"
    reader.sock.close()


def test_pipelined_requests_are_answered_in_order(probe):
    """RFC 9112, 9.3.2: responses to pipelined requests come in the order of the requests; the
    first (slow) one does not let the later (fast) ones overtake it."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(
            http_request("POST", "/slow?ms=150&label=first")
            + http_request("POST", "/echo", b"second")
            + http_request("POST", "/slow?ms=10&label=third")
            + http_request("GET", "/stream?n=2")
        )
        bodies = [reader.response().body for _ in range(4)]
        assert bodies == [b"first", b"second", b"third", b"part0;part1;"]
    finally:
        sock.close()


def test_pipelined_requests_sent_byte_by_byte(probe):
    """The parser keeps its place across reads of any size."""
    data = http_request("POST", "/echo", b"one") + http_request("POST", "/echo", b"two")
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        for i in range(len(data)):
            sock.send(data[i : i + 1])
        assert [reader.response().body for _ in range(2)] == [b"one", b"two"]
    finally:
        sock.close()


def test_requests_after_a_connection_close_request_are_ignored(probe):
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("POST", "/echo", b"last", {"Connection": "close"}) + http_request("POST", "/echo", b"x"))
        resp = reader.response()
        assert resp.body == b"last" and resp.headers["connection"] == "close"
        assert reader.closed()
    finally:
        sock.close()


# -- request bodies ------------------------------------------------------------------


def test_chunked_request_body(probe):
    """RFC 9112, 7.1: chunked transfer coding, with a chunk extension and a trailer field."""
    body = b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n"
    resp, reader = exchange(probe.port, http_request("POST", "/echo", body, {"Transfer-Encoding": "chunked", "Content-Length": None}))
    assert resp.status == 200 and resp.body == b"hello world"
    reader.sock.close()


def test_large_body_arrives_whole(probe):
    body = bytes(range(256)) * 300  # 76,800 bytes, under the probe's 100,000 limit
    resp, reader = exchange(probe.port, http_request("POST", "/echo", body))
    assert resp.body == body
    reader.sock.close()


def test_expect_100_continue(probe):
    """RFC 9110, 10.1.1: the server sends 100 (Continue) when the app asks for the body; a client
    that waits for it then sends the body."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("POST", "/echo", headers={"Content-Length": "7", "Expect": "100-continue"}))
        interim = reader.response()
        assert interim.status == 100
        sock.sendall(b"waiting")
        resp = reader.response()
        assert resp.status == 200 and resp.body == b"waiting"
    finally:
        sock.close()


def test_expect_100_continue_refused_without_reading(probe):
    """An app that answers before reading: no 100 is sent, and the connection closes after the
    final response (the client may or may not send the body)."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("POST", "/early", headers={"Content-Length": "5000", "Expect": "100-continue"}))
        resp = reader.response()
        assert resp.status == 403 and resp.body == b"no" and resp.headers["connection"] == "close"
        assert reader.closed()
    finally:
        sock.close()


def test_unread_body_closes_the_connection_gracefully(probe):
    """An app that answers without reading a body still arriving: the response reaches the client
    (the server half-closes and discards, rather than resetting), then the connection closes."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("POST", "/early", headers={"Content-Length": "90000"}) + b"z" * 30000)
        resp = reader.response()
        assert resp.status == 403 and resp.headers["connection"] == "close"
        try:
            sock.sendall(b"z" * 60000)  # the rest, discarded by the server
        except OSError:
            pass
        assert reader.closed()
    finally:
        sock.close()


def test_declared_body_over_the_limit_is_413_before_the_app_runs(probe):
    before = len(probe.seen)
    resp, reader = exchange(probe.port, http_request("POST", "/echo", headers={"Content-Length": "100001"}))
    assert resp.status == 413 and resp.headers["connection"] == "close"
    assert reader.closed()
    assert ("request", "/echo") not in probe.seen[before:]


def test_chunked_body_over_the_limit_is_413(probe):
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("POST", "/echo", headers={"Transfer-Encoding": "chunked", "Content-Length": None}))
        piece = b"a" * 20000
        for _ in range(6):  # 120,000 bytes
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            except OSError:
                break
        resp = reader.response()
        assert resp.status == 413 and resp.headers["connection"] == "close"
    finally:
        sock.close()


def test_request_body_flow_control(probe):
    """While the app does not read, the server stops reading the socket once BODY_HIGH_WATER bytes
    are buffered (the client's send then blocks, whatever the kernel buffers hold); when the app
    reads, everything arrives."""
    limit = 16 * 1024 * 1024
    big = Probe(max_body_size=limit)
    try:
        sock = connect(big.port)
        sock.sendall(http_request("POST", "/hold", headers={"Content-Length": str(limit)}))
        big.wait_seen("request")
        sock.settimeout(0.5)
        sent = 0
        try:
            while sent < limit:
                sent += sock.send(b"h" * min(65536, limit - sent))
        except (socket.timeout, TimeoutError):
            pass
        assert sent < limit  # the client was blocked: the server stopped reading
        [conn] = big.connections()
        deadline = time.monotonic() + 5
        while conn.reading and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not conn.reading and conn.parsing.buffered < _native.BODY_HIGH_WATER + 256 * 1024  # + one read
        big.loop.call_soon_threadsafe(big.hold.set)
        sock.settimeout(30)
        sock.sendall(b"h" * (limit - sent))
        assert Reader(sock).response().body == str(limit).encode()
        sock.close()
    finally:
        big.stop()


# -- responses -------------------------------------------------------------------------


def test_head_response_has_no_body(probe):
    """RFC 9110, 9.3.2: HEAD: the same header fields as GET, no content."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("HEAD", "/length") + http_request("POST", "/echo", b"next"))
        head = reader.response(head_request=True)
        assert head.status == 200 and head.headers["content-length"] == "10"
        assert reader.response().body == b"next"  # nothing of the HEAD body got in the way
    finally:
        sock.close()


@pytest.mark.parametrize("code", [204, 304])
def test_no_content_statuses_carry_no_body(probe, code):
    """RFC 9110, 15.3.5 / 15.4.5: 204 and 304 have no content, whatever the app sends."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("GET", f"/status?code={code}") + http_request("POST", "/echo", b"next"))
        resp = reader.response()
        assert resp.status == code and "content-length" not in resp.headers and "transfer-encoding" not in resp.headers
        assert reader.response().body == b"next"
    finally:
        sock.close()


def test_scope(probe):
    """ASGI HTTP connection scope: method, path (percent-decoded), raw_path, query_string, headers
    (names lowercased, order and repeats kept), client, server, http_version."""
    resp, reader = exchange(probe.port, http_request(
        "GET", "/sc%6Fpe?a=1&b=%20", headers={"X-One": "1", "x-one": "2", "User-Agent": "t"}))
    info = orjson.loads(resp.body)
    assert info["path"] == "/scope" and info["raw_path"] == "/sc%6Fpe" and info["query_string"] == "a=1&b=%20"
    assert info["method"] == "GET" and info["http_version"] == "1.1" and info["scheme"] == "http"
    assert info["headers"] == [["host", "127.0.0.1"], ["x-one", "1"], ["x-one", "2"], ["user-agent", "t"]]
    assert info["client"][0] == "127.0.0.1" and info["server"] == ["127.0.0.1", probe.port]
    reader.sock.close()


def test_app_exception_before_the_response_is_500(probe):
    resp, reader = exchange(probe.port, http_request("GET", "/boom"))
    assert resp.status == 500 and resp.headers["connection"] == "close"
    assert reader.closed()


def test_app_returning_without_a_response_is_500(probe):
    resp, reader = exchange(probe.port, http_request("GET", "/silent"))
    assert resp.status == 500
    reader.sock.close()


def test_app_exception_mid_response_closes_the_connection(probe):
    """A chunked body without its last chunk: the client sees the response is incomplete."""
    sock = connect(probe.port)
    sock.sendall(http_request("GET", "/boom-late"))
    data = b""
    sock.settimeout(5)
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    assert b"200 OK" in data and b"partial" in data and not data.endswith(b"0\r\n\r\n")


def test_response_flow_control(probe):
    """A client that does not read: the app's send() waits once the transport's buffer is full,
    rather than the server buffering the whole response."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", probe.port))
    try:
        before = len(probe.seen)
        sock.sendall(http_request("GET", "/big?kib=65536"))  # 64 MiB
        time.sleep(0.5)
        parts = [v for k, v in probe.seen[before:] if k == "big-part"]
        assert len(parts) < 64  # at most a few MiB went out (kernel buffers + the transport's)
    finally:
        sock.close()


# -- disconnects -------------------------------------------------------------------------


def test_disconnect_mid_stream_reaches_the_app(probe):
    """ASGI: receive() returns http.disconnect once the client is gone; later sends are dropped."""
    probe.seen.clear()
    sock = connect(probe.port)
    sock.sendall(http_request("GET", "/forever"))
    _read_until(sock, b"tick\n")
    sock.close()
    assert probe.wait_seen("disconnect") == "http.disconnect"
    assert probe.wait_seen("sent-after-disconnect") is True


def test_disconnect_while_waiting_reaches_the_app(probe):
    probe.seen.clear()
    sock = connect(probe.port)
    sock.sendall(http_request("POST", "/wait", b"body"))
    probe.wait_seen("request")
    time.sleep(0.05)
    sock.close()
    assert probe.wait_seen("disconnect") == "http.disconnect"


# -- limits and timeouts -------------------------------------------------------------------


def test_oversized_header_is_431(probe):
    resp, reader = exchange(probe.port, http_request("GET", "/echo", headers={"X-Big": "v" * 9000}))
    assert resp.status == 431 and resp.headers["connection"] == "close"
    assert reader.closed()


def test_too_many_headers_is_431(probe):
    headers = {f"X-H{i}": "1" for i in range(25)}
    resp, reader = exchange(probe.port, http_request("GET", "/echo", headers=headers))
    assert resp.status == 431
    assert reader.closed()


def test_an_endless_header_line_is_cut_off(probe):
    """A header line that never ends is bounded too (httptools buffers it whole)."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        for _ in range(20):
            try:
                sock.sendall(b"v" * 1000)
            except OSError:
                break
            time.sleep(0.005)
        resp = reader.response()
        assert resp.status == 431
    finally:
        sock.close()


def test_slow_headers_get_408(probe):
    """A request head not complete within header_timeout (0.5 s here): 408, then close."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\n")
        t0 = time.monotonic()
        resp = reader.response()
        assert resp.status == 408 and 0.4 < time.monotonic() - t0 < 3
        assert reader.closed()
    finally:
        sock.close()


def test_slow_headers_trickled_still_time_out(probe):
    """The header timeout runs from the first byte: trickling bytes does not extend it."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(b"GET /echo HTTP/1.1\r\n")
        t0 = time.monotonic()
        sock.settimeout(0.1)
        got = b""
        while time.monotonic() - t0 < 3:
            try:
                sock.send(b"X-A: b\r\n")
                got = sock.recv(65536)
                if got:
                    break
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                break
        assert got.startswith(b"HTTP/1.1 408"), got
    finally:
        sock.close()


def test_a_silent_connection_is_closed_quietly(probe):
    sock = connect(probe.port)
    t0 = time.monotonic()
    assert Reader(sock).closed()  # EOF, no response
    assert 0.4 < time.monotonic() - t0 < 3
    sock.close()


def test_idle_keep_alive_connection_is_closed(probe):
    resp, reader = exchange(probe.port, http_request("POST", "/echo", b"x"))
    assert resp.status == 200
    t0 = time.monotonic()
    assert reader.closed()
    assert 0.4 < time.monotonic() - t0 < 3
    reader.sock.close()


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n",
    ],
    ids=["not-http", "two-lengths", "length-and-chunked", "bad-chunk-size", "two-hosts", "space-in-name"],
)
def test_bad_requests_are_400_and_close(probe, raw):
    """RFC 9112, 6.3 and 3.2: unparseable framing (including request smuggling shapes) is 400, then close."""
    resp, reader = exchange(probe.port, raw)
    assert resp.status == 400 and resp.headers["connection"] == "close"
    assert reader.closed()


def test_a_bad_request_after_good_pipelined_ones(probe):
    """The good requests before it are answered first, in order; then the 400."""
    sock = connect(probe.port)
    reader = Reader(sock)
    try:
        sock.sendall(http_request("POST", "/slow?ms=50&label=a") + http_request("POST", "/echo", b"b") + b"BAD\r\n\r\n")
        assert reader.response().body == b"a"
        assert reader.response().body == b"b"
        assert reader.response().status == 400
        assert reader.closed()
    finally:
        sock.close()


def test_upgrade_requests_with_a_body_are_refused(probe):
    raw = http_request("POST", "/echo", b"hello", {"Connection": "Upgrade", "Upgrade": "h2c"})
    resp, _ = exchange(probe.port, raw)
    assert resp.status == 400


def test_upgrade_requests_without_a_body_are_served_as_plain_http(probe):
    resp, reader = exchange(probe.port, http_request("GET", "/length", headers={"Connection": "Upgrade",
                                                                                "Upgrade": "websocket"}))
    assert resp.status == 200 and resp.body == b"0123456789" and resp.headers["connection"] == "close"
    assert reader.closed()


# -- lifespan and shutdown -----------------------------------------------------------------


def test_lifespan_and_graceful_shutdown_in_process():
    """Lifespan startup before the first request, shutdown after; on shutdown a request in flight
    finishes (with Connection: close) while new connections are refused."""
    p = Probe(header_timeout=5, keepalive_timeout=5)
    assert ("lifespan.startup", None) in p.seen
    sock = connect(p.port)
    reader = Reader(sock)
    sock.sendall(http_request("POST", "/slow?ms=400&label=finished"))
    p.wait_seen("request")
    idle = connect(p.port)  # an idle keep-alive connection: closed at once
    time.sleep(0.05)
    assert p.loop is not None and p._stop is not None
    p.loop.call_soon_threadsafe(p._stop.set)
    assert Reader(idle).closed(timeout=2)
    time.sleep(0.05)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", p.port), timeout=1).close()
    resp = reader.response()
    assert resp.body == b"finished" and resp.headers["connection"] == "close"
    p._thread.join(10)
    assert ("lifespan.shutdown", None) in p.seen
    sock.close()
    idle.close()


def test_shutdown_ends_listen_streams_gracefully_native():
    """subscriptions.mdx, Graceful Closure, on the native server: SIGTERM answers the open listen
    request with its final result (Server.close_subscriptions), then the process exits."""
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "http_sample.py"), "--http", "--server", "native", "--port", "0"),
        r"serving 'http-sample' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    try:
        msg = request("sub-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        sock = _raw_request(proc.port, msg)
        try:
            data = _read_until(sock, b"notifications/subscriptions/acknowledged")
            proc.proc.send_signal(signal.SIGTERM)
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            sock.close()
        assert proc.proc.wait(15) == 0
        events, _ = sse_events(_dechunk(data.partition(b"\r\n\r\n")[2]))
        assert events[0]["method"] == "notifications/subscriptions/acknowledged"
        final = events[-1]
        assert final["id"] == "sub-1" and final["result"]["resultType"] == "complete"
    finally:
        proc.stop()


def test_sigint_stops_the_server_and_cancels_what_does_not_finish():
    """SIGINT: a request that does not end within the grace period is cancelled; the process exits."""
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "http_sample.py"), "--http", "--server", "native", "--port", "0"),
        r"serving 'http-sample' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    try:
        sock = _raw_request(proc.port, call(80, "hang", {"label": "g80"}))
        proc.wait_for_log(r"hang g80: started")
        proc.proc.send_signal(signal.SIGINT)
        proc.proc.send_signal(signal.SIGINT)  # a second signal skips the grace period
        assert proc.proc.wait(10) == 0
        assert "hang g80: cancelled" in proc.log()
        sock.close()
    finally:
        proc.stop()


def test_mcp_over_the_native_server_keeps_the_connection_alive(server):
    """Many MCP requests over one keep-alive connection, pipelined, each answered in order."""
    bodies = [orjson.dumps(call(900 + i, "echo", {"text": f"k{i}"})) for i in range(10)]
    headers = _http.mcp_headers(call(900, "echo", {"text": "k"}))
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    data = b"".join(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{head}Content-Length: {len(b)}\r\n\r\n".encode() + b
        for b in bodies
    )
    sock = connect(server.port)
    reader = Reader(sock)
    try:
        sock.sendall(data)
        texts = [orjson.loads(reader.response().body)["result"]["content"][0]["text"] for _ in bodies]
        assert texts == [f"k{i}" for i in range(10)]
    finally:
        sock.close()


def test_serve_http_rejects_an_unknown_server():
    from wiremcp import Server
    from wiremcp.transports.http import serve_http

    with pytest.raises(ValueError, match="unknown http_server"):
        serve_http(Server("x"), http_server="gunicorn")


# -- the conformance suite's server leg, once --------------------------------------------


def test_conformance_server_leg_on_the_native_server(tmp_path):
    """conformance/server.sh against examples/everything.py on the native server: 37/37."""
    import shutil
    import subprocess

    conformance = ROOT / "conformance"
    if shutil.which("npm") is None and not (conformance / "node_modules").exists():
        pytest.skip("needs npm")
    from test_conformance import free_port, run_server_leg

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", "examples/everything.py", "--http", "--server", "native",
         "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("the server did not start")
                time.sleep(0.05)
        done, summary = run_server_leg(f"http://127.0.0.1:{port}/mcp", "2026-07-28", tmp_path)
        assert done.stdout.strip().splitlines()[-1] == "server 2026-07-28: 37/37 scenarios passed", done.stdout[-3000:]
        assert done.returncode == 0
        statuses = {s["name"]: s["status"] for s in summary["scenarios"]}
        for pending in ("json-schema-2020-12", "http-header-validation", "http-custom-header-server-validation"):
            assert statuses.get(pending) == "pass", (pending, statuses.get(pending))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        assert proc.stderr is not None
        proc.stderr.close()


# -- the protocol driven directly: any split of the byte stream, and garbage ---------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


class FakeTransport(asyncio.Transport):
    """Collects what the server writes; honours pause/resume, half-close and close."""

    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()
        self.closed = self.eof = False
        self.reading = True

    def write(self, data: bytes) -> None:  # type: ignore[override]
        assert not self.closed and not self.eof, "write after close"
        self.data += data

    def writelines(self, parts: Any) -> None:  # type: ignore[override]
        for part in parts:
            self.write(part)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(name, default)

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True


async def _echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    body = await _read_body(receive)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def _feed(pieces: list[bytes], app: Any = _echo_app) -> FakeTransport:
    loop = asyncio.get_running_loop()
    errors: list[Any] = []
    loop.set_exception_handler(lambda _, context: errors.append(context))
    server = HTTPServer(app, lifespan=False)
    server.loop = loop
    conn = _native._Connection(server)
    transport = FakeTransport()
    conn.connection_made(transport)
    for piece in pieces:
        for _ in range(200):  # a paused transport delivers nothing until it is resumed
            if transport.reading or transport.closed:
                break
            await asyncio.sleep(0)
        if transport.closed or transport.eof:
            break
        assert transport.reading, "reading stayed paused"
        conn.data_received(piece)
        await asyncio.sleep(0)
    for _ in range(50):
        await asyncio.sleep(0)
    conn.connection_lost(None)
    for _ in range(5):
        await asyncio.sleep(0)
    assert not errors, errors
    return transport


def _responses(data: bytes) -> list[tuple[int, dict[bytes, bytes], bytes]]:
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, data
        lines = head.split(b"\r\n")
        if lines[0] == b"HTTP/1.1 100 Continue":  # an interim response: no body
            data = rest
            continue
        headers = dict(line.lower().split(b": ", 1) for line in lines[1:])
        n = int(headers[b"content-length"])
        out.append((int(lines[0].split(b" ")[1]), headers, rest[:n]))
        data = rest[n:]
    return out


_bodies = st.binary(max_size=300)


@st.composite
def _pipelines(draw: Any) -> tuple[list[bytes], list[bytes]]:
    """Requests (Content-Length or chunked, some with Expect: 100-continue), cut anywhere."""
    bodies = draw(st.lists(_bodies, min_size=1, max_size=5))
    stream = b""
    for body in bodies:
        if draw(st.booleans()):
            expect = b"Expect: 100-continue\r\n" if draw(st.booleans()) else b""
            stream += b"POST /e HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n%s" % (expect, len(body), body)
        else:
            stream += b"POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            i = 0
            while i < len(body):
                n = draw(st.integers(1, 64))
                stream += b"%x\r\n%s\r\n" % (len(body[i : i + n]), body[i : i + n])
                i += n
            stream += b"0\r\n\r\n"
    cuts = sorted(set(draw(st.lists(st.integers(0, len(stream)), max_size=12))))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)]) if b > a]
    return bodies, pieces


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pipelines())
def test_any_split_of_a_pipeline_gives_the_same_responses(case):
    """However the bytes are cut into reads, each request is answered once, in order, whole."""
    bodies, pieces = case
    transport = asyncio.run(_feed(pieces))
    got = _responses(bytes(transport.data))
    assert [r[0] for r in got] == [200] * len(bodies)
    assert [r[2] for r in got] == bodies


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.sampled_from([b"", b"POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok"]),
       garbage=st.binary(min_size=1, max_size=200), cut=st.integers(0, 50))
def test_garbage_never_breaks_the_server(prefix, garbage, cut):
    """Arbitrary bytes after (or instead of) a request: nothing escapes data_received, the good
    request is answered, the rest gets at most one 4xx before the connection closes."""
    stream = prefix + garbage
    transport = asyncio.run(_feed([stream[:cut], stream[cut:]]))
    data = bytes(transport.data)
    statuses = re.findall(rb"^HTTP/1.1 (\d{3}) ", data, re.M)
    if prefix:
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\n\r\nok" in data
        statuses = statuses[1:]
    assert all(code.startswith(b"4") or code == b"200" for code in statuses), data
    if statuses and statuses[-1].startswith(b"4"):
        assert transport.eof or transport.closed
