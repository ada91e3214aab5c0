"""Our Client over Streamable HTTP against real servers on 127.0.0.1.

Spec: basic/transports/streamable-http.mdx (Sending Messages, Receiving
Messages, Cancellation, Request Metadata, Custom Headers from Tool
Parameters, Value Encoding, Backward Compatibility), server/tools.mdx
(x-mcp-header), basic/versioning.mdx.
"""

from __future__ import annotations

from typing import Any, Callable

import asyncio
import re
import subprocess
import sys

import orjson
import pytest

from _helpers import OFFICIAL_ECHO, OFFICIAL_PYTHON, needs_official, SAMPLE, run, TESTS
from wiremcp.client import Client, HTTPError, RemoteError, RequestTimeout
from wiremcp.client._headers import InvalidToolHeaders, encode_header_value, header_annotations, request_headers
from wiremcp.protocol import Era
from wiremcp.transports.http.client import HTTPTransport, _SSE

pytestmark = pytest.mark.slow


def _start(args: list[str], pattern: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    for _ in range(50):
        line = proc.stderr.readline()
        if not line:
            break
        found = re.search(pattern, line)
        if found:
            return proc, found.group(1)
    proc.kill()
    raise AssertionError("the server did not announce its URL")


@pytest.fixture
def http_server() -> Any:
    procs = []

    def start(path: str) -> str:
        proc, url = _start([sys.executable, "-m", "wiremcp", "run", path, "--http", "--port", "0"], r"(http://\S+)")
        procs.append(proc)
        return url

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_calls_progress_logs_over_http(http_server: Callable[[str], str]) -> None:
    """streamable-http.mdx, Receiving Messages: JSON or SSE replies; notifications on a request's stream belong to it."""
    url = http_server(SAMPLE)

    async def main() -> None:
        async with Client.http(url) as c:
            assert c.era is Era.MODERN and (c.server_info or {})["name"] == "sample"
            assert "echo" in [t["name"] for t in await c.list_tools()]
            results = await asyncio.gather(*[c.call_tool("add", {"a": i, "b": 1}) for i in range(10)])
            assert [r.text for r in results] == [str(i + 1) for i in range(10)]
            progress: list[Any] = []
            logs: list[Any] = []
            assert (await c.call_tool("steps", {"count": 2}, on_progress=lambda *a: progress.append(a))).text == "done"
            assert progress == [(1, 2, "step 1"), (2, 2, "step 2")]
            r = await c.call_tool("chatty", {"level": "info"}, on_log=logs.append, log_level="warning")
            assert r.text == "warning,error" and [m["level"] for m in logs] == ["warning", "error"]
            assert (await c.call_tool("fail", {"message": "bad"})).is_error

    run(main())


def test_timeout_closes_the_stream(http_server: Callable[[str], str]) -> None:
    """cancellation.mdx: on HTTP, closing the response stream is the cancellation; no notification is sent."""
    url = http_server(SAMPLE)
    sent = []

    async def main() -> None:
        async with Client.http(url, on_wire=lambda d, b: sent.append((d, b))) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("slow", {"seconds": 30}, timeout=0.3)
            assert (await c.call_tool("echo", {"text": "still fine"})).text == "still fine"

    run(main())
    assert not [b for d, b in sent if b"notifications/cancelled" in b]


def test_error_body_is_kept(http_server: Callable[[str], str]) -> None:
    """streamable-http.mdx, Server Validation: a 400 keeps its JSON-RPC error (code, message) and status."""
    url = http_server(SAMPLE)

    async def main() -> Any:
        async with Client.http(url) as c:
            with pytest.raises(RemoteError) as info:
                await c.call_tool("nope")
            return info.value

    err = run(main())
    assert err.code == -32602 and "nope" in err.message


@pytest.fixture
def mock_http() -> Any:
    procs = []

    def start(mode: str, script: str = "http_mock.py") -> str:
        proc, url = _start([sys.executable, str(TESTS / "servers" / script), mode], r"(http://\S+)")
        procs.append(proc)
        return url

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_mcp_param_headers_and_invalid_tools(mock_http: Callable[[str], str]) -> None:
    """tools.mdx x-mcp-header; streamable-http.mdx Client Behavior: headers mirrored, invalid tools dropped."""
    url = mock_http("modern")

    async def main() -> None:
        async with Client.http(url) as c:
            assert [t["name"] for t in await c.list_tools()] == ["valid_tool", "mismatch"]
            seen = orjson.loads((await c.call_tool("valid_tool", {"region": " Zürich ", "query": "q"})).text)
            seen = {k.lower(): v for k, v in seen.items()}
            assert seen["mcp-param-region"] == encode_header_value(" Zürich ")
            assert seen["mcp-method"] == "tools/call" and seen["mcp-name"] == "valid_tool"
            assert seen["mcp-protocol-version"] == "2026-07-28"
            assert not any(k.startswith("mcp-param-q") for k in seen)
            # -32020: refresh tools/list, retry once (streamable-http.mdx, Client Behavior).
            assert "mcp-method" in (await c.call_tool("mismatch")).text.lower()

    run(main())


def test_http_fallback_to_legacy(mock_http: Callable[[str], str]) -> None:
    """streamable-http.mdx, Backward Compatibility: a 400 without a modern error body means legacy."""
    url = mock_http("legacy")

    async def main() -> None:
        async with Client.http(url) as c:
            assert c.era is Era.LEGACY and (c.server_info or {})["name"] == "mock-legacy"
            assert isinstance(c.transport, HTTPTransport) and c.transport.session_id == "sess-1"
            assert (await c.call_tool("hello")).text == "hello from legacy 2025-11-25"

    run(main())


def test_our_server_checks_our_mirrored_headers(http_server: Callable[[str], str]) -> None:
    """wiremcp's own HTTP server validates Mcp-Param-* against the body; the client's headers pass it."""
    url = http_server(str(TESTS / "servers" / "headers.py"))

    async def main() -> None:
        async with Client.http(url) as c:
            assert [t["name"] for t in await c.list_tools()] == ["valid_tool"]
            r = await c.call_tool("valid_tool", {"region": "us-west1", "count": 7, "flag": True, "query": "q"})
            assert r.text == "us-west1|7|True|q"
            r = await c.call_tool("valid_tool", {"region": " Zürich ", "query": "x"})
            assert r.text == " Zürich |0|False|x"

    run(main())


def test_header_rules() -> None:
    """streamable-http.mdx, Value Encoding and Schema Extension."""
    assert encode_header_value("us-west1") == "us-west1"
    assert encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?="
    assert encode_header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    assert encode_header_value(True) == "true" and encode_header_value(-7) == "-7" and encode_header_value("") == ""

    def tool(props: Any, **extra: Any) -> Any:
        return {"name": "t", "inputSchema": {"type": "object", "properties": props, **extra}}

    assert header_annotations(tool({"r": {"type": "string", "x-mcp-header": "Region"}})) == [(("r",), "Region")]
    nested = tool({"o": {"type": "object", "properties": {"r": {"type": "integer", "x-mcp-header": "R"}}}})
    assert header_annotations(nested) == [(("o", "r"), "R")]
    bad = [
        tool({"r": {"type": "string", "x-mcp-header": ""}}),
        tool({"r": {"type": "string", "x-mcp-header": "Has Space"}}),
        tool({"r": {"type": "string", "x-mcp-header": "a:b"}}),
        tool({"r": {"type": "string", "x-mcp-header": "Zür"}}),
        tool({"r": {"type": "string", "x-mcp-header": "a\x01"}}),
        tool({"r": {"type": "number", "x-mcp-header": "N"}}),
        tool({"r": {"type": "object", "x-mcp-header": "O"}}),
        tool({"r": {"type": "array", "x-mcp-header": "A"}}),
        tool({"r": {"type": "null", "x-mcp-header": "Z"}}),
        tool({"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "X"}}),
        tool({"l": {"type": "array", "items": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}}}),
        tool({}, anyOf=[{"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}]),
    ]
    for t in bad:
        with pytest.raises(InvalidToolHeaders):
            header_annotations(t)
    headers = request_headers(
        "tools/call",
        {"name": "t", "arguments": {"r": None, "o": {"r": 3}}},
        "2026-07-28",
        [(("r",), "Region"), (("o", "r"), "R"), (("missing",), "M")],
    )
    assert headers == {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t", "Mcp-Param-R": "3"}
    assert request_headers("resources/read", {"uri": "file:///ü"}, None)["Mcp-Name"].startswith("=?base64?")




@pytest.fixture
def official_http() -> Any:
    procs = []

    def start(*extra: str) -> str:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen(
            [str(OFFICIAL_PYTHON), OFFICIAL_ECHO, "--http", "--port", str(port), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        procs.append(proc)
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return url
            except OSError:
                import time

                time.sleep(0.1)
        raise AssertionError("the official server did not start")

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(10)


@needs_official
def test_official_sdk_http_modern(official_http: Callable[..., str]) -> None:
    """Interop over HTTP with mcp 2.3.0: the first modern request succeeds; the client stays modern."""
    url = official_http()

    async def main() -> None:
        async with Client.http(url) as c:
            assert c.era is Era.MODERN
            assert (await c.call_tool("echo", {"text": "hé"})).text == "hé"

    run(main())


@needs_official
def test_official_sdk_http_legacy_session_sse(official_http: Callable[..., str]) -> None:
    """2025-11-25 Streamable HTTP: initialize, session id, SSE replies (era='legacy')."""
    url = official_http("--stateful", "--sse")
    sent = []

    async def main() -> None:
        async with Client.http(url, era="legacy", on_wire=lambda d, b: sent.append((d, b))) as c:
            assert c.era is Era.LEGACY
            assert isinstance(c.transport, HTTPTransport) and c.transport.session_id
            await c.ping()
            assert [t["name"] for t in await c.list_tools()] == ["echo"]
            assert (await c.call_tool("echo", {"text": "sse"})).text == "sse"

    run(main())
    assert orjson.loads(sent[0][1])["method"] == "initialize"


class _TokenAuth:
    """An `HTTPAuth` as an OAuth client would write one: a bearer token and a fresh DPoP-like proof per request."""

    def __init__(self, token: str, *, refresh_to: str | None = None) -> None:
        self.token = token
        self.refresh_to = refresh_to
        self.sent: list[tuple[str, str]] = []
        self.seen: list[tuple[int, str | None, str | None]] = []
        self.nonce: str | None = None

    async def headers(self, method, url):
        self.sent.append((method, url))
        return {"Authorization": f"Bearer {self.token}", "DPoP": f"proof-{len(self.sent)}-{self.nonce}"}

    async def on_response(self, status, headers, url):
        self.nonce = headers.get("DPoP-Nonce")
        self.seen.append((status, headers.get("WWW-Authenticate"), headers.get("www-authenticate")))
        if status == 401 and self.refresh_to is not None:
            self.token = self.refresh_to
            return True
        return False


def test_auth_hook_adds_headers_and_retries_at_most_twice(mock_http):
    """The ``auth`` hook: headers before every request, the response's status and headers after; one retry."""
    url = mock_http("-", "http_edges.py")
    auth = _TokenAuth("stale", refresh_to="fresh")

    async def main():
        async with Client(HTTPTransport(url, auth=auth)) as c:
            # The era probe met a 401 (stale token), the hook refreshed it, the retry passed.
            assert c.era is Era.MODERN and c.server_info["name"] == "edges"
            assert auth.seen[0] == (401, 'Bearer error="invalid_token"', 'Bearer error="invalid_token"')
            assert auth.seen[1][0] == 200
            who, proof = orjson.loads((await c.call_tool("whoami")).text)
            assert who == "Bearer fresh" and proof.startswith(f"proof-{len(auth.sent)}-n")  # the nonce just seen
            assert {m for m, _ in auth.sent} == {"POST"} and {u for _, u in auth.sent} == {url}
            # 403: on_response says no retry; the caller gets the status and body.
            auth.token, auth.refresh_to = "forbidden", None
            with pytest.raises(HTTPError) as info:
                await c.call_tool("whoami")
            assert info.value.status == 403 and info.value.body == b"forbidden"
            assert auth.seen[-1][1] == 'Bearer error="insufficient_scope", scope="admin"'
            # A hook that always asks to retry gets at most two retries (a fresh token, then a DPoP
            # nonce); the third 401 is the answer.
            auth.token, auth.refresh_to = "stale", "stale"
            sent = len(auth.sent)
            with pytest.raises(HTTPError) as info:
                await c.call_tool("whoami")
            assert info.value.status == 401 and len(auth.sent) == sent + 3

    run(main())


def test_sse_framing_over_http(mock_http):
    """SSE (text/event-stream) replies split across reads, with CRLF, CR and LF line ends; a 300 KB event."""
    url = mock_http("-", "http_edges.py")
    auth = _TokenAuth("fresh")

    async def main():
        async with Client(HTTPTransport(url, auth=auth)) as c:
            progress = []
            r = await c.call_tool("sse", on_progress=lambda *a: progress.append(a))
            assert r.text == "sse ok" and progress == [(1, 2, None)]
            r = await c.call_tool("big", {"size": 300_000})
            assert r.text == "x" * 300_000

    run(main())


STREAM = (
    b"\xef\xbb\xbf: comment\r\n\r\n"
    b"event: message\nid: 1\ndata: {\"a\":\r\ndata: 1}\r\n\r\n"
    b"retry: 250\rdata:{\"b\":2}\r\r"
    b"id: bad\x00id\ndata: \n\n"
    b"unknown: x\ndata: last"
)


def _events(chunks):
    sse = _SSE(track=True)
    events = [e for chunk in chunks for e in sse.feed(chunk)] + sse.end()
    return events, sse


def test_sse_parser_whole_or_byte_by_byte():
    """text/event-stream framing (streamable-http.mdx uses SSE): the result is the same however the bytes arrive.
    An event with empty data (the 2025-11-25 priming event) is not a message: only its id is kept."""
    expected = [b'{"a":\n1}', b'{"b":2}', b"last"]
    events, sse = _events([STREAM])
    assert events == expected
    assert sse.last_id == "1" and sse.retry_ms == 250  # an id holding NUL is ignored
    assert sse.replied == set()  # none of these is a reply with an id
    for chunks in ([STREAM[i:i + 1] for i in range(len(STREAM))], [STREAM[i:i + 7] for i in range(0, len(STREAM), 7)]):
        assert _events(chunks)[0] == expected
    # The ids of replies are tracked (legacy resumption); a BOM is skipped only at the very start
    # (later, it is part of the field name: "\ufeffdata" is an unknown field).
    events, sse = _events([b'data: {"jsonrpc":"2.0","id":5,"result":{}}\n\n', b"\xef\xbb\xbfdata: x\n\n"])
    assert sse.replied == {5} and events == [b'{"jsonrpc":"2.0","id":5,"result":{}}']

