"""Streamable HTTP (2026-07-28) end to end: a real server process, raw HTTP/1.1 from the tests.

Two real servers are started once per module: ``wiremcp run
tests/servers/http_sample.py --http --port 0`` (the CLI on uvicorn), and
``python -m uvicorn http_sample:app`` (the same server as a plain ASGI app
with short keep-alive and read timeouts). The tests speak HTTP with
``http.client`` or a bare socket, so every header and byte is under their
control. The servers' stderr goes to a file, read as a side channel (the
``hang`` tool prints when it is cancelled).

Spec: basic/transports/streamable-http.mdx (Security & Endpoint, Sending
Messages, Receiving Messages, Cancellation, Request Metadata, Backward
Compatibility), basic/index.mdx (_meta, Error Codes), basic/versioning.mdx,
basic/patterns/cancellation.mdx, basic/patterns/subscriptions.mdx,
server/tools.mdx (x-mcp-header).
"""

from __future__ import annotations

import base64
import http.client
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from conftest import META, ROOT, SERVERS, call, request, wiremcp_cmd

pytestmark = pytest.mark.slow

uvicorn = pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from wiremcp.transports.http import decode_header_value, encode_header_value  # noqa: E402

MAX_BODY = 64 * 1024  # --max-message-size given to the CLI server


# -- real servers -------------------------------------------------------------


class ServerProcess:
    """A server subprocess whose stderr goes to a file; knows its port once it is up."""

    def __init__(self, args: list[str], ready: str, cwd: Path = ROOT) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-http-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=cwd)
        match = self.wait_for_log(ready)
        self.port = int(match.group(1))
        deadline = time.monotonic() + 15
        while True:  # bound is not listening: poll until a connection is accepted
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise AssertionError(f"server did not start listening; log:\n{self.log()}")
                time.sleep(0.02)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, pattern: str, timeout: float = 15.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.log())
            if found:
                return found
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{pattern!r} never appeared in the server's stderr:\n{self.log()}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """The CLI: ``wiremcp run tests/servers/http_sample.py --http --port 0``."""
    proc = ServerProcess(
        wiremcp_cmd(
            "run", str(SERVERS / "http_sample.py"), "--http", "--port", "0",
            "--max-message-size", str(MAX_BODY), "--log-level", "INFO",
        ),
        r"serving 'http-sample' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def asgi_server() -> Iterator[ServerProcess]:
    """``python -m uvicorn http_sample:app``: keep-alive every 0.2 s, read timeout 0.5 s, 64 KiB bodies."""
    proc = ServerProcess(
        [sys.executable, "-m", "uvicorn", "http_sample:app", "--app-dir", str(SERVERS),
         "--host", "127.0.0.1", "--port", "0", "--no-access-log"],
        r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
    )
    yield proc
    proc.stop()


# -- a raw HTTP client --------------------------------------------------------


class Reply:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.header_list = headers
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body

    @property
    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), self.headers
        return orjson.loads(self.body)

    @property
    def is_sse(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")

    @property
    def events(self) -> list[Any]:
        assert self.is_sse, self.headers
        return sse_events(self.body)[0]

    @property
    def comments(self) -> list[bytes]:
        return sse_events(self.body)[1]

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.headers}, {self.body[:300]!r})"


def sse_events(data: bytes) -> tuple[list[Any], list[bytes]]:
    """The JSON of each ``data:`` event, and the comment lines, of an SSE body."""
    events: list[Any] = []
    comments: list[bytes] = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [ln for ln in block.split(b"\n") if ln]
        comments += [ln for ln in lines if ln.startswith(b":")]
        payload = [ln[5:].lstrip(b" ") for ln in lines if ln.startswith(b"data:")]
        if payload:
            events.append(orjson.loads(b"\n".join(payload)))
    return events, comments


def mcp_headers(message: Any) -> dict[str, str]:
    """The headers a conforming client sends with ``message`` (streamable-http.mdx, Request Metadata)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if not isinstance(message, dict) or "method" not in message:
        return headers
    params = message.get("params") or {}
    version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
    if isinstance(version, str):
        headers["MCP-Protocol-Version"] = version
    if "id" in message:
        headers["Mcp-Method"] = message["method"]
        field = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(message["method"])
        if field and isinstance(params.get(field), str):
            headers["Mcp-Name"] = encode_header_value(params[field])
    return headers


def post(
    port: int,
    message: Any,
    headers: dict[str, Any] | None = None,
    *,
    extra: list[tuple[str, Any]] = (),  # type: ignore[assignment]
    method: str = "POST",
    path: str = "/mcp",
    chunked: bool = False,
    timeout: float = 15,
) -> Reply:
    """Send one request; ``headers`` override the conforming defaults (None drops one)."""
    body = message if isinstance(message, bytes) else orjson.dumps(message)
    merged: dict[str, Any] = {"Host": f"127.0.0.1:{port}", **mcp_headers(message), **(headers or {})}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in [*merged.items(), *extra]:
            if value is not None:
                conn.putheader(name, value)
        if chunked:
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            for i in range(0, len(body), 8192):
                piece = body[i : i + 8192]
                conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            conn.send(b"0\r\n\r\n")
        else:
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
        resp = conn.getresponse()
        return Reply(resp.status, resp.getheaders(), resp.read())
    finally:
        conn.close()


def assert_error(reply: Reply, status: int, code: int, id: Any) -> dict[str, Any]:
    assert reply.status == status, reply
    body = reply.json
    assert body["jsonrpc"] == "2.0"
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert body.get("id") == id, body
    return body["error"]


# -- replies: JSON and SSE ----------------------------------------------------


def test_tools_call_gets_a_json_reply(server):
    """streamable-http.mdx, Sending Messages 6 / Message Flow: a request answered with one JSON object."""
    reply = post(server.port, call(1, "echo", {"text": "hello"}))
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    body = reply.json
    assert body["id"] == 1 and body["jsonrpc"] == "2.0"
    assert body["result"]["content"] == [{"type": "text", "text": "hello"}]
    assert "mcp-session-id" not in reply.headers


def test_discover_and_tools_list(server):
    """server/discover.mdx over HTTP; string ids are echoed."""
    reply = post(server.port, request("d-1", "server/discover"))
    assert reply.status == 200 and reply.json["id"] == "d-1"
    assert "2026-07-28" in reply.json["result"]["supportedVersions"]
    names = [t["name"] for t in post(server.port, request("l", "tools/list")).json["result"]["tools"]]
    assert "routed" in names and "echo" in names


def test_async_tool_without_notifications_gets_json(server):
    """streamable-http.mdx, Sending Messages 6: the server chooses JSON when nothing is streamed."""
    reply = post(server.port, call(2, "slow", {"seconds": 0.01, "label": "zzz"}))
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"
    assert reply.json["result"]["content"][0]["text"] == "zzz"


def test_progress_is_streamed_as_sse_then_the_response(server):
    """streamable-http.mdx, Receiving Messages; patterns/progress.mdx: progress events, then the
    response as the last event, then the stream closes; X-Accel-Buffering: no."""
    reply = post(server.port, call(3, "steps", {"count": 3}, progressToken="tok-3"))
    assert reply.status == 200 and reply.is_sse
    assert reply.headers["x-accel-buffering"] == "no"
    events = reply.events
    assert [e["method"] for e in events[:-1]] == ["notifications/progress"] * 3
    assert [e["params"]["progress"] for e in events[:-1]] == [1, 2, 3]
    assert all(e["params"]["progressToken"] == "tok-3" and "id" not in e for e in events[:-1])
    assert events[-1]["id"] == 3 and events[-1]["result"]["content"][0]["text"] == "done"


def test_no_progress_token_no_stream(server):
    """patterns/progress.mdx: without a progressToken no notification is sent, so the reply is JSON."""
    reply = post(server.port, call(4, "steps", {"count": 2}))
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"


def test_logging_from_a_synchronous_tool_is_streamed(server):
    """server/utilities/logging.mdx + streamable-http.mdx, Receiving Messages: notifications/message
    filtered by the request's logLevel; a synchronous handler's notifications precede its response."""
    reply = post(server.port, call(5, "chatty", {}, **{"io.modelcontextprotocol/logLevel": "debug"}))
    assert reply.status == 200 and reply.is_sse
    events = reply.events
    assert [e["params"]["level"] for e in events[:-1]] == ["debug", "warning"]
    assert events[-1]["result"]["content"][0]["text"] == "debug,warning"
    quiet = post(server.port, call(6, "chatty", {}))  # no logLevel: nothing may be emitted
    assert quiet.headers["content-type"] == "application/json"
    assert quiet.json["result"]["content"][0]["text"] == ""


# -- notifications and responses from the client ------------------------------


@pytest.mark.parametrize(
    "note",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ],
)
def test_notification_is_accepted_with_202(server, note):
    """streamable-http.mdx, Sending Messages 5: 202 Accepted with no body."""
    reply = post(server.port, note, {"MCP-Protocol-Version": "2026-07-28"})
    assert reply.status == 202 and reply.body == b""


def test_a_posted_response_is_refused(server):
    """streamable-http.mdx, Sending Messages 4: the client MUST NOT send JSON-RPC responses."""
    reply = post(server.port, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert_error(reply, 400, -32600, None)


# -- JSON-RPC errors and their HTTP statuses -----------------------------------


def test_unparseable_json_is_400_parse_error(server):
    """basic/index.mdx, Error Codes: -32700; the id could not be read."""
    reply = post(server.port, b'{"jsonrpc": "2.0", "id": 1, oops}')
    assert_error(reply, 400, -32700, None)


def test_empty_body_is_400_parse_error(server):
    reply = post(server.port, b"")
    assert_error(reply, 400, -32700, None)


def test_batch_is_400_invalid_request(server):
    """streamable-http.mdx, Sending Messages 4: the body is a single request or notification."""
    reply = post(server.port, [call(1, "echo", {"text": "a"})], mcp_headers(call(1, "echo", {"text": "a"})))
    assert_error(reply, 400, -32600, None)


def test_invalid_envelope_is_400_and_keeps_the_id(server):
    """basic/index.mdx, Responses: an error carries the request's id when it could be read."""
    reply = post(server.port, {"jsonrpc": "1.0", "id": 7, "method": "tools/list", "params": {"_meta": META}})
    assert_error(reply, 400, -32600, 7)


def test_missing_meta_is_400_invalid_params(server):
    """basic/index.mdx, _meta: a request missing a required field: -32602 and HTTP 400."""
    msg = {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}}
    reply = post(server.port, msg, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    assert_error(reply, 400, -32602, 8)


def test_meta_without_client_info_is_served(server):
    """basic/index.mdx, _meta: clientInfo is optional."""
    meta = {k: v for k, v in META.items() if not k.endswith("clientInfo")}
    reply = post(server.port, request(9, "tools/list", meta=meta))
    assert reply.status == 200 and "result" in reply.json


def test_unsupported_version_is_400_with_supported_list(server):
    """streamable-http.mdx, Protocol Version Header: 400 and UnsupportedProtocolVersionError."""
    reply = post(server.port, request(10, "tools/list", meta={**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}))
    error = assert_error(reply, 400, -32022, 10)
    assert "2026-07-28" in error["data"]["supported"] and error["data"]["requested"] == "v999.0.0"


@pytest.mark.parametrize("method", ["unknown/method", "initialize", "ping", "logging/setLevel",
                                    "resources/subscribe", "resources/unsubscribe"])
def test_unknown_and_removed_methods_are_404(server, method):
    """streamable-http.mdx, Protocol Version Header: 404 and -32601 for a method not implemented
    (changelog: methods removed in 2026-07-28)."""
    reply = post(server.port, request(11, method))
    assert_error(reply, 404, -32601, 11)


def test_missing_client_capability_is_400(server):
    """basic/index.mdx, _meta: MissingRequiredClientCapabilityError (-32021), HTTP 400."""
    error = assert_error(post(server.port, call(12, "needs_sampling", {})), 400, -32021, 12)
    assert error["data"]["requiredCapabilities"] == {"sampling": {}}
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    ok = post(server.port, request(13, "tools/call", {"name": "needs_sampling", "arguments": {}}, meta=meta))
    assert ok.status == 200 and ok.json["result"]["content"][0]["text"] == "sampled"


def test_unknown_tool_is_400_invalid_params(server):
    """server/tools.mdx, Error Handling: unknown tool is -32602; -32602 maps to 400 (basic/index.mdx)."""
    assert_error(post(server.port, call(14, "no_such_tool", {})), 400, -32602, 14)


def test_tool_failure_is_a_result_not_an_http_error(server):
    """server/tools.mdx, Error Handling: invalid arguments are a tool result with isError, HTTP 200."""
    reply = post(server.port, call(15, "echo", {"text": 5}))
    assert reply.status == 200 and reply.json["result"]["isError"] is True


def test_internal_error_is_500(server):
    """basic/index.mdx, Error Codes: -32603 when the server fails; HTTP 500 (the specification names
    no status for it)."""
    assert_error(post(server.port, call(16, "broken", {})), 500, -32603, 16)


# -- request metadata headers --------------------------------------------------


def test_missing_protocol_version_header_is_header_mismatch(server):
    """streamable-http.mdx, Server Validation: a required standard header is missing."""
    msg = request(20, "tools/list")
    assert_error(post(server.port, msg, {"MCP-Protocol-Version": None}), 400, -32020, 20)


def test_protocol_version_header_must_match_meta(server):
    """streamable-http.mdx, Protocol Version Header: header and _meta disagree -> 400 HeaderMismatch."""
    msg = request(21, "tools/list", meta={**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"})
    assert_error(post(server.port, msg, {"MCP-Protocol-Version": "2026-07-28"}), 400, -32020, 21)


@pytest.mark.parametrize("value", [None, "tools/list", "Tools/call", "tools/call ,tools/call"])
def test_mcp_method_missing_or_mismatched(server, value):
    """streamable-http.mdx, Standard Request Headers + Case Sensitivity: Mcp-Method equals method, case-sensitively."""
    msg = call(22, "echo", {"text": "a"})
    assert_error(post(server.port, msg, {"Mcp-Method": value}), 400, -32020, 22)


def test_repeated_mcp_method_header_is_refused(server):
    """RFC 9110 5.3: repeated field lines combine, so a doubled routing header cannot match the body."""
    msg = call(23, "echo", {"text": "a"})
    assert_error(post(server.port, msg, extra=[("Mcp-Method", "tools/call")]), 400, -32020, 23)


def test_header_names_are_case_insensitive(server):
    """streamable-http.mdx, Case Sensitivity: names compare case-insensitively."""
    msg = call(24, "echo", {"text": "a"})
    headers = {k.upper() if k.lower().startswith("mcp") else k: v for k, v in mcp_headers(msg).items()}
    reply = post(server.port, msg, {**{k: None for k in mcp_headers(msg)}, **headers})
    assert reply.status == 200, reply


@pytest.mark.parametrize("value", [None, "other_tool", "ECHO"])
def test_mcp_name_missing_or_mismatched(server, value):
    """streamable-http.mdx, Standard Request Headers: Mcp-Name is required for tools/call and equals params.name."""
    msg = call(25, "echo", {"text": "a"})
    assert_error(post(server.port, msg, {"Mcp-Name": value}), 400, -32020, 25)


def test_mcp_name_may_be_base64_and_padded_with_whitespace(server):
    """streamable-http.mdx, Value Encoding: servers decode the sentinel before comparing; optional
    whitespace around a field value is not part of it (RFC 9110 5.5)."""
    msg = call(26, "echo", {"text": "a"})
    assert post(server.port, msg, {"Mcp-Name": "=?base64?ZWNobw==?="}).status == 200
    assert post(server.port, msg, {"Mcp-Name": "  echo  "}).status == 200


def test_mcp_name_with_raw_non_ascii_bytes_is_refused(server):
    """streamable-http.mdx, Server Validation: a header value containing invalid characters."""
    msg = call(27, "echo", {"text": "a"})
    assert_error(post(server.port, msg, {"Mcp-Name": "ech\xf6".encode("latin-1")}), 400, -32020, 27)


def test_mcp_name_for_prompts_and_resources(server):
    """streamable-http.mdx, Standard Request Headers: resources/read (params.uri) and prompts/get
    (params.name) need Mcp-Name too, Base64-encoded when not plain ASCII (Value Encoding)."""
    msg = request(28, "resources/read", {"uri": "test://café/greeting"})
    assert_error(post(server.port, msg, {"Mcp-Name": None}), 400, -32020, 28)
    assert_error(post(server.port, msg, {"Mcp-Name": "test://caf/greeting"}), 400, -32020, 28)
    assert mcp_headers(msg)["Mcp-Name"] == "=?base64?dGVzdDovL2NhZsOpL2dyZWV0aW5n?="
    reply = post(server.port, msg)
    assert reply.status == 200 and reply.json["result"]["contents"][0]["text"] == "bonjour"
    missing = request(29, "resources/read", {"uri": "test://missing"})
    error = assert_error(post(server.port, missing), 400, -32602, 29)  # server/resources.mdx, Error Handling
    assert error["data"]["uri"] == "test://missing"
    prompt = request(30, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert_error(post(server.port, prompt, {"Mcp-Name": "other"}), 400, -32020, 30)
    assert post(server.port, prompt).status == 200


def _routed(id: int, **arguments: Any) -> dict[str, Any]:
    return call(id, "routed", {"region": "us-west1", **arguments})


@pytest.mark.parametrize(
    "arguments, params, text",
    [
        ({}, {"Region": "us-west1"}, "us-west1|0|False|None|"),
        ({"query": "SELECT 1"}, {"Region": "us-west1"}, "us-west1|0|False|None|SELECT 1"),
        ({"region": "Hello, 世界"}, {"Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, "Hello, 世界|0|False|None|"),
        ({"region": " padded "}, {"Region": "=?base64?IHBhZGRlZCA=?="}, " padded |0|False|None|"),
        ({"region": "line1\nline2"}, {"Region": "=?base64?bGluZTEKbGluZTI=?="}, "line1\nline2|0|False|None|"),
        ({"region": "=?base64?literal?="}, {"Region": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}, "=?base64?literal?=|0|False|None|"),
        ({"region": "us-west1"}, {"Region": "=?base64?dXMtd2VzdDE=?="}, "us-west1|0|False|None|"),
        ({"count": 42}, {"Region": "us-west1", "Count": "42"}, "us-west1|42|False|None|"),
        ({"count": 42}, {"Region": "us-west1", "Count": "42.0"}, "us-west1|42|False|None|"),
        ({"count": -7}, {"Region": "us-west1", "Count": "-7"}, "us-west1|-7|False|None|"),
        ({"verbose": True}, {"Region": "us-west1", "Verbose": "true"}, "us-west1|0|True|None|"),
        ({"verbose": False}, {"Region": "us-west1", "Verbose": "false"}, "us-west1|0|False|None|"),
        ({"target": {"zone": "b"}}, {"Region": "us-west1", "Zone": "b"}, "us-west1|0|False|b|"),
        ({"target": {}}, {"Region": "us-west1"}, "us-west1|0|False|None|"),
        ({"count": None}, {"Region": "us-west1"}, None),  # null: no header expected
    ],
)
def test_mcp_param_headers_that_match(server, arguments, params, text):
    """streamable-http.mdx, Custom Headers from Tool Parameters: Value Encoding (the spec's table of
    examples), numeric comparison of integers, nested property paths, null and absent arguments."""
    msg = _routed(30, **arguments)
    reply = post(server.port, msg, {f"Mcp-Param-{k}": v for k, v in params.items()})
    assert reply.status == 200, reply
    if text is not None:
        assert reply.json["result"]["content"][0]["text"] == text


@pytest.mark.parametrize(
    "arguments, params",
    [
        ({}, {}),  # value in body, header omitted: "Server MUST reject the request"
        ({}, {"Region": "us-east1"}),  # mismatch
        ({}, {"Region": "US-WEST1"}),  # values are case-sensitive
        ({"region": "Hello, 世界"}, {"Region": "Hello, ??"}),
        ({}, {"Region": "=?base64?not-base64!?="}),  # bad Base64
        ({}, {"Region": "=?base64?/w==?="}),  # Base64 of bytes that are not UTF-8
        ({}, {"Region": "us-west1", "Count": "1"}),  # header without its argument
        ({"count": 42}, {"Region": "us-west1", "Count": "43"}),
        ({"count": 42}, {"Region": "us-west1", "Count": "forty-two"}),
        ({"verbose": True}, {"Region": "us-west1", "Verbose": "True"}),
        ({"target": {"zone": "b"}}, {"Region": "us-west1"}),  # nested value, header missing
        ({"target": {"zone": "b"}}, {"Region": "us-west1", "Zone": "c"}),
    ],
)
def test_mcp_param_headers_that_do_not_match(server, arguments, params):
    """streamable-http.mdx, Server Behavior for Custom Headers: 400 and HeaderMismatch (-32020)."""
    msg = _routed(31, **arguments)
    reply = post(server.port, msg, {f"Mcp-Param-{k}": v for k, v in params.items()})
    assert_error(reply, 400, -32020, 31)


def test_mcp_param_with_raw_non_ascii_is_refused(server):
    """streamable-http.mdx, Server Behavior for Custom Headers: a recognized header with invalid characters."""
    msg = _routed(32, region="é")
    assert_error(post(server.port, msg, {"Mcp-Param-Region": "é".encode("latin-1")}), 400, -32020, 32)


def test_unrecognized_mcp_param_headers_are_ignored(server):
    """streamable-http.mdx, Server Behavior for Custom Headers: only recognized headers are validated."""
    reply = post(server.port, call(33, "echo", {"text": "x"}), {"Mcp-Param-Region": "anything"})
    assert reply.status == 200


def test_session_id_and_last_event_id_are_ignored(server):
    """streamable-http.mdx, Backward Compatibility: ignore Mcp-Session-Id and Last-Event-ID; mint none."""
    reply = post(server.port, call(34, "echo", {"text": "x"}), {"Mcp-Session-Id": "abc", "Last-Event-ID": "5"})
    assert reply.status == 200 and "mcp-session-id" not in reply.headers


# -- HTTP-level rules -----------------------------------------------------------


def _no_id_error(reply: Reply, status: int) -> None:
    assert reply.status == status, reply
    body = reply.json
    assert "id" not in body and body["error"]["code"] == -32600


@pytest.mark.parametrize(
    "host, origin",
    [
        ("evil.example.com", None),
        ("evil.example.com", "http://evil.example.com"),
        ("{local}", "http://evil.example.com"),
        ("{local}", "null"),
        ("localhost.evil.example.com:{port}", None),
        (None, None),
    ],
)
def test_dns_rebinding_protection_refuses_with_403(server, host, origin):
    """streamable-http.mdx, Security & Endpoint 1: invalid Origin -> 403 (body: a JSON-RPC error
    without id); Host validated against the local names (DNS rebinding)."""
    values = {"local": f"127.0.0.1:{server.port}", "port": server.port}
    headers = {"Host": host.format(**values) if host else None, "Origin": origin}
    _no_id_error(post(server.port, request(40, "tools/list"), headers), 403)


@pytest.mark.parametrize(
    "host, origin",
    [
        ("localhost:{port}", "http://localhost:{port}"),
        ("127.0.0.1:{port}", None),
        ("[::1]:{port}", "https://[::1]:8443"),
        ("LOCALHOST:{port}", "http://127.0.0.1"),
    ],
)
def test_local_host_and_origin_are_allowed(server, host, origin):
    """streamable-http.mdx, Security & Endpoint: local servers are reachable from local origins."""
    headers = {"Host": host.format(port=server.port), "Origin": origin and origin.format(port=server.port)}
    assert post(server.port, request(41, "tools/list"), headers).status == 200


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "OPTIONS"])
def test_methods_other_than_post_are_405(server, method):
    """streamable-http.mdx, Backward Compatibility: GET or DELETE -> 405; the endpoint accepts POST only."""
    reply = post(server.port, b"", {"Content-Type": None}, method=method)
    _no_id_error(reply, 405)
    assert reply.headers["allow"] == "POST"


def test_other_paths_are_404_without_a_json_rpc_body(server):
    """streamable-http.mdx, Backward Compatibility: a 404 without a JSON-RPC error is not 'method not found'."""
    reply = post(server.port, request(42, "tools/list"), path="/other")
    assert reply.status == 404 and not reply.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/json-seq", "multipart/form-data"])
def test_wrong_content_type_is_415(server, content_type):
    """streamable-http.mdx, Sending Messages: the body is JSON (Content-Type: application/json)."""
    _no_id_error(post(server.port, request(43, "tools/list"), {"Content-Type": content_type}), 415)


def test_content_type_parameters_are_allowed(server):
    reply = post(server.port, request(44, "tools/list"), {"Content-Type": "Application/JSON; charset=utf-8"})
    assert reply.status == 200


@pytest.mark.parametrize("accept", [None, "application/json", "text/event-stream", "text/html",
                                    "application/json, text/event-stream;q=0"])
def test_accept_must_list_json_and_sse(server, accept):
    """streamable-http.mdx, Sending Messages 2: Accept lists application/json and text/event-stream."""
    _no_id_error(post(server.port, request(45, "tools/list"), {"Accept": accept}), 406)


@pytest.mark.parametrize("accept", ["*/*", "application/*, text/*", "text/event-stream;q=0.5, application/json"])
def test_accept_wildcards_count(server, accept):
    assert post(server.port, request(46, "tools/list"), {"Accept": accept}).status == 200


def test_body_over_the_limit_is_413_before_it_is_read(server):
    """docs/architecture.md, Reliability principles: every size has a limit; the declared length alone decides."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n" % (MAX_BODY + 1)
        )
        data = _read_response(sock)  # nothing of the body was sent
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"connection: close" in head.lower()
    assert orjson.loads(body)["error"]["code"] == -32600


def test_chunked_body_over_the_limit_is_413(server):
    big = call(47, "echo", {"text": "x" * (MAX_BODY + 10)})
    _no_id_error(post(server.port, big, chunked=True), 413)


def test_chunked_body_within_the_limit_is_served(server):
    msg = call(48, "echo", {"text": "y" * 30000})
    reply = post(server.port, msg, chunked=True)
    assert reply.status == 200 and reply.json["result"]["content"][0]["text"] == "y" * 30000


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            m = re.search(rb"content-length: (\d+)", head.lower())
            if m and len(body) >= int(m.group(1)):
                return data


def test_a_stalled_body_is_408(asgi_server):
    """docs/architecture.md, Reliability principles: bound request-read time (the app here allows 0.5 s)."""
    sock = socket.create_connection(("127.0.0.1", asgi_server.port), timeout=10)
    try:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\""
        )
        data = _read_response(sock)
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), data
    assert orjson.loads(body)["error"]["code"] == -32600


def test_a_body_that_never_starts_is_408(asgi_server):
    """The same bound when not one byte of the body arrives: the first read of the body waits, and
    the deadline applies to it (the app registers it only once a read would wait)."""
    sock = socket.create_connection(("127.0.0.1", asgi_server.port), timeout=10)
    try:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
        )
        data = _read_response(sock)
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), data
    assert orjson.loads(body)["error"]["code"] == -32600


def test_a_body_sent_after_its_headers_is_served(asgi_server):
    """A body that arrives after the app has started waiting for it (within the read timeout) is read
    and answered as if it had come with the headers: the waiting read resumes where it stopped."""
    message = call(54, "echo", {"text": "late body"})
    body = orjson.dumps(message)
    head = "".join(f"{k}: {v}\r\n" for k, v in mcp_headers(message).items())
    for parts in ([b"", body], [body[:10], body[10:]]):
        sock = socket.create_connection(("127.0.0.1", asgi_server.port), timeout=10)
        try:
            sock.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode()
                + parts[0]
            )
            time.sleep(0.1)  # the app is waiting for the (rest of the) body by now
            sock.sendall(parts[1])
            data = _read_response(sock)
        finally:
            sock.close()
        status, _, reply = data.partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 200"), data
        assert orjson.loads(reply)["id"] == 54
        assert orjson.loads(reply)["result"]["content"] == [{"type": "text", "text": "late body"}]


# -- cancellation, concurrency, long-lived streams ------------------------------


def _raw_request(port: int, message: dict[str, Any]) -> socket.socket:
    body = orjson.dumps(message)
    head = "".join(f"{k}: {v}\r\n" for k, v in mcp_headers(message).items())
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
    )
    return sock


def test_closing_the_connection_cancels_the_request(server):
    """streamable-http.mdx, Cancellation; patterns/cancellation.mdx: a client disconnect is the
    cancellation signal; the server stops the work (the tool sees CancelledError)."""
    sock = _raw_request(server.port, call(50, "hang", {"label": "c50"}))
    server.wait_for_log(r"hang c50: started")
    sock.close()
    server.wait_for_log(r"hang c50: cancelled")
    server.wait_for_log(r"request 50 \(tools/call\) cancelled: the client closed the connection")


def test_requests_are_served_concurrently(server):
    """basic/index.mdx, Statelessness: each request is independent; one that waits blocks no other."""
    sock = _raw_request(server.port, call(51, "hang", {"label": "c51"}))
    try:
        server.wait_for_log(r"hang c51: started")
        results: dict[int, Any] = {}

        def one(i: int) -> None:
            results[i] = post(server.port, call(100 + i, "slow", {"seconds": 0.05, "label": f"L{i}"}))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(results) == list(range(8))
        for i, reply in results.items():
            assert reply.status == 200 and reply.json["id"] == 100 + i
            assert reply.json["result"]["content"][0]["text"] == f"L{i}"
        assert "hang c51: cancelled" not in server.log()  # still running while the others finished
    finally:
        sock.close()
    server.wait_for_log(r"hang c51: cancelled")


def _read_until(sock: socket.socket, marker: bytes, data: bytes = b"") -> bytes:
    while marker not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before {marker!r}; got {data!r}"
        data += chunk
    return data


def test_a_silent_handler_gets_keep_alives_then_its_events(asgi_server):
    """streamable-http.mdx, Receiving Messages (keep-alive note): a quiet stream carries SSE comment
    lines, which clients ignore; the events and the response follow."""
    sock = _raw_request(asgi_server.port, call(52, "late_progress", {"wait": 0.6}, progressToken=52))
    try:
        data = _read_until(sock, b"0\r\n\r\n")  # the end of the chunked body
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
    text = _dechunk(body)
    events, comments = sse_events(text)
    assert comments and all(c == b": keep-alive" for c in comments)
    assert text.index(b": keep-alive") < text.index(b"notifications/progress")
    assert events[0]["method"] == "notifications/progress" and events[-1]["id"] == 52


def _dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        out += rest[:n]
        body = rest[n + 2 :]
    return out


def test_subscriptions_listen_stream_stays_open_with_keep_alives(asgi_server):
    """basic/patterns/subscriptions.mdx: the listen response is a long-lived SSE stream whose first
    message is the acknowledgement; keep-alives flow while it is quiet; the client ends it by closing."""
    msg = request(53, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    sock = _raw_request(asgi_server.port, msg)
    try:
        data = b""
        while data.count(b": keep-alive") < 2:
            chunk = sock.recv(65536)
            assert chunk, f"the stream closed: {data!r}"
            data += chunk
    finally:
        sock.close()
    assert b"text/event-stream" in data.split(b"\r\n\r\n")[0]
    assert b"notifications/subscriptions/acknowledged" in data
    assert b'"id":53' not in data  # no response: the stream was still open


def test_a_client_that_does_not_read_its_stream_is_cut_off(asgi_server):
    """docs/architecture.md, Reliability principles: every size has a limit. Notifications a client leaves unread are
    buffered up to max_stream_backlog (256 KiB in this app); past that the request is stopped."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server's writes block
    sock.settimeout(10)
    try:
        sock.connect(("127.0.0.1", asgi_server.port))
        msg = call(54, "flood", {"count": 4000, "size": 8000, "label": "f54"}, progressToken=54)
        body = orjson.dumps(msg)
        head = "".join(f"{k}: {v}\r\n" for k, v in mcp_headers(msg).items())
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        asgi_server.wait_for_log(r"flood f54: cancelled", timeout=30)  # nothing read so far
    finally:
        sock.close()


def test_shutdown_ends_listen_streams_gracefully():
    """basic/patterns/subscriptions.mdx, Graceful Closure: when the server shuts down (SIGTERM) it
    answers the listen request with a complete result carrying the subscription id, then closes."""
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "http_sample.py"), "--http", "--port", "0"),
        r"serving 'http-sample' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    try:
        msg = request("sub-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        sock = _raw_request(proc.port, msg)
        try:
            data = _read_until(sock, b"notifications/subscriptions/acknowledged")
            proc.proc.terminate()
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            sock.close()
        # After its graceful shutdown uvicorn raises the signal that stopped it again: killed by SIGTERM, not a crash.
        assert proc.proc.wait(15) == -signal.SIGTERM
        events, _ = sse_events(_dechunk(data.partition(b"\r\n\r\n")[2]))
        assert events[0]["method"] == "notifications/subscriptions/acknowledged"
        final = events[-1]
        assert final["id"] == "sub-1" and final["result"]["resultType"] == "complete"
        assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    finally:
        proc.stop()


# -- mounting, imports, the header value codec ----------------------------------


def test_mounted_in_starlette(tmp_path):
    """The app is raw ASGI: it mounts under a Starlette app next to other routes."""
    pytest.importorskip("starlette")
    app_file = tmp_path / "mounted.py"
    app_file.write_text(
        f"import sys; sys.path.insert(0, {str(SERVERS)!r})\n"
        "from starlette.applications import Starlette\n"
        "from starlette.responses import PlainTextResponse\n"
        "from starlette.routing import Mount, Route\n"
        "from wiremcp.transports.http import asgi_app\n"
        "from http_sample import server\n"
        "async def health(request):\n"
        "    return PlainTextResponse('ok')\n"
        "app = Starlette(routes=[Route('/health', health), Mount('/api', app=asgi_app(server, path='/mcp'))])\n"
    )
    proc = ServerProcess(
        [sys.executable, "-m", "uvicorn", "mounted:app", "--app-dir", str(tmp_path), "--host", "127.0.0.1",
         "--port", "0", "--no-access-log"],
        r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
        cwd=ROOT,
    )
    try:
        env_ok = post(proc.port, call(60, "echo", {"text": "mounted"}), path="/api/mcp")
        assert env_ok.status == 200 and env_ok.json["result"]["content"][0]["text"] == "mounted"
        streamed = post(proc.port, call(61, "steps", {"count": 2}, progressToken="m"), path="/api/mcp")
        assert streamed.is_sse and len(streamed.events) == 3
        conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=10)
        conn.request("GET", "/health")
        assert conn.getresponse().read() == b"ok"
        conn.close()
    finally:
        proc.stop()


def test_on_uvicorn_h11_too():
    """The app keeps the same rules on uvicorn's pure-Python h11 protocol (used when httptools is
    missing): JSON replies, SSE streams, chunked bodies, cancellation on disconnect."""
    proc = ServerProcess(
        [sys.executable, "-m", "uvicorn", "http_sample:app", "--app-dir", str(SERVERS), "--host", "127.0.0.1",
         "--port", "0", "--no-access-log", "--http", "h11"],
        r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
    )
    try:
        assert post(proc.port, call(70, "echo", {"text": "x"})).json["result"]["content"][0]["text"] == "x"
        streamed = post(proc.port, call(71, "steps", {"count": 3}, progressToken="h"))
        assert streamed.is_sse and [e.get("id") for e in streamed.events] == [None, None, None, 71]
        assert post(proc.port, call(72, "echo", {"text": "y" * 30000}), chunked=True).status == 200
        assert_error(post(proc.port, call(73, "echo", {"text": "x"}), {"Mcp-Name": "nope"}), 400, -32020, 73)
        sock = _raw_request(proc.port, call(74, "hang", {"label": "h74"}))
        proc.wait_for_log(r"hang h74: started")
        sock.close()
        proc.wait_for_log(r"hang h74: cancelled")
    finally:
        proc.stop()


def test_stdio_path_never_imports_http():
    """docs/architecture.md, Performance principles: keep imports lazy; the stdio path must not import HTTP code."""
    code = (
        "import sys, wiremcp, wiremcp.transports, wiremcp.transports.stdio, wiremcp.cli, wiremcp.cli._run\n"
        "bad = [m for m in sys.modules if m.startswith(('wiremcp.transports.http', 'uvicorn', 'httptools', 'starlette'))]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "value, encoded",
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("", ""),
        ("tab\there", "=?base64?" + base64.b64encode(b"tab\there").decode() + "?="),
    ],
)
def test_header_value_encoding_round_trips(value, encoded):
    """streamable-http.mdx, Value Encoding: the specification's table of examples."""
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize("bad", ["=?base64?###?=", "=?base64?/w==?=", "caf\xe9", "a\x00b", "=?base64?abc?="])
def test_invalid_header_values_decode_to_none(bad):
    assert decode_header_value(bad) is None


def test_public_surface():
    """The package exports exactly its documented names (httpx-style __all__ check)."""
    import wiremcp.transports.http as http_transport

    assert set(http_transport.__all__) == {
        "MCPApp", "LegacySSEApp", "asgi_app", "serve_http", "STATUS_BY_CODE", "DEFAULT_ALLOWED_HOSTS", "DEFAULT_ALLOWED_ORIGINS",
        "DEFAULT_READ_TIMEOUT", "DEFAULT_KEEPALIVE_INTERVAL", "DEFAULT_MAX_STREAM_BACKLOG",
        "GRACEFUL_SHUTDOWN_TIMEOUT", "encode_header_value", "decode_header_value",
        "uvicorn_config", "DEFAULT_LIMIT_CONCURRENCY", "DEFAULT_TIMEOUT_KEEP_ALIVE", "DEFAULT_BACKLOG",
        "DEFAULT_MAX_HEAD_SIZE", "HostGuard", "HTTP_ENV", "from_environment", "address_problem",
    }
    assert all(hasattr(http_transport, name) for name in http_transport.__all__)


# -- uvicorn's limits (serve_http) ---------------------------------------------


def test_serve_http_runs_uvicorn_with_every_limit():
    """serve_http's uvicorn.Config carries the defensive limits (docs/http.md, reverse proxy)."""
    from wiremcp.transports.http import (
        DEFAULT_BACKLOG,
        DEFAULT_LIMIT_CONCURRENCY,
        DEFAULT_MAX_HEAD_SIZE,
        DEFAULT_TIMEOUT_KEEP_ALIVE,
        MCPApp,
        uvicorn_config,
    )

    from wiremcp import Server

    app = MCPApp(Server("limits"))
    config = uvicorn_config(app)
    assert config.limit_concurrency == DEFAULT_LIMIT_CONCURRENCY == 1000
    assert config.timeout_keep_alive == DEFAULT_TIMEOUT_KEEP_ALIVE == 5
    assert config.backlog == DEFAULT_BACKLOG == 1024
    assert config.h11_max_incomplete_event_size == DEFAULT_MAX_HEAD_SIZE == 64 * 1024
    assert config.server_header is False and config.access_log is False and config.ws == "none"
    lifted = uvicorn_config(app, limit_concurrency=None, timeout_keep_alive=30, backlog=64, max_head_size=8192)
    assert (lifted.limit_concurrency, lifted.timeout_keep_alive, lifted.backlog) == (None, 30, 64)
    assert lifted.h11_max_incomplete_event_size == 8192


def test_serve_http_refuses_past_its_concurrency_limit():
    """limit_concurrency=2: a request that arrives while two connections are open gets 503, not service."""
    code = (
        "from http_sample import server\n"
        "from wiremcp.transports.http import serve_http\n"
        "serve_http(server, port=0, limit_concurrency=2)\n"
    )
    proc = ServerProcess([sys.executable, "-c", code], r"serving 'http-sample' .* at http://127\.0\.0\.1:(\d+)/mcp", cwd=SERVERS)
    try:
        assert post(proc.port, call(80, "echo", {"text": "alone"})).status == 200  # one connection: served
        idle = socket.create_connection(("127.0.0.1", proc.port), timeout=10)  # a second one, open
        try:
            refused = post(proc.port, call(81, "echo", {"text": "third"}))
            assert refused.status == 503, refused
        finally:
            idle.close()
    finally:
        proc.stop()
