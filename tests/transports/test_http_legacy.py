"""Legacy (2025-11-25) sessions on the Streamable HTTP endpoint, beside 2026-07-28, end to end.

Two real servers are started once per module: ``wiremcp run
tests/servers/legacy_http.py --http --port 0`` (default limits), and
``python -m uvicorn legacy_http:app`` (endpoints with small limits:
``/expiring``, ``/capped``, ``/tiny`` and the modern-only ``/modern``). The tests speak raw
HTTP/1.1 with ``http.client``, reading SSE replies line by line while the
request is still running; one test drives two `wiremcp.Client` instances,
a legacy one and a modern one, against the same server at once.

Spec: 2025-11-25 basic/transports.mdx, "Streamable HTTP" (Sending Messages to
the Server, Listening for Messages from the Server, Multiple Connections,
Resumability and Redelivery, Session Management, Protocol Version Header);
2025-11-25 basic/lifecycle.mdx (Initialization, Version Negotiation);
2026-07-28 basic/versioning.mdx ("Backward Compatibility with
Initialization-Based Versions") and basic/transports/streamable-http.mdx
("Backward Compatibility").
"""

from __future__ import annotations

import asyncio
import http.client
import re
import signal
import sys
import time
from typing import Any, Iterator

import orjson
import pytest

from conftest import META, SERVERS, call, request, wiremcp_cmd

pytestmark = pytest.mark.slow

pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

import test_http as _http_tests  # noqa: E402 - after importorskip

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


# -- real servers -------------------------------------------------------------


ServerProcess = _http_tests.ServerProcess  # one helper for both HTTP suites


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """The CLI with default limits: ``wiremcp run tests/servers/legacy_http.py --http --port 0``."""
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "legacy_http.py"), "--http", "--port", "0", "--log-level", "INFO"),
        r"serving 'legacy-http' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def small() -> Iterator[ServerProcess]:
    """``python -m uvicorn legacy_http:app``: /expiring (0.3 s idle timeout), /capped (2 sessions), /modern
    (legacy off), /tiny (2 KiB replay buffer)."""
    proc = ServerProcess(
        [sys.executable, "-m", "uvicorn", "legacy_http:app", "--app-dir", str(SERVERS),
         "--host", "127.0.0.1", "--port", "0", "--no-access-log"],
        r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
    )
    yield proc
    proc.stop()


# -- a raw HTTP client ----------------------------------------------------------


class Reply:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body

    @property
    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), self
        return orjson.loads(self.body)

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.headers}, {self.body[:300]!r})"


def _connection(port: int, method: str, path: str, headers: dict[str, Any], body: bytes | None, timeout: float):
    """A connection with the request sent; its reply not read yet."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in {"Host": f"127.0.0.1:{port}", **headers}.items():
        if value is not None:
            conn.putheader(name, value)
    if body is not None:
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
    else:
        conn.endheaders()
    return conn


def send(port: int, message: Any = None, headers: dict[str, Any] | None = None, *, method: str = "POST",
         path: str = "/mcp", timeout: float = 15) -> Reply:
    """One request, read to the end; ``headers`` override the defaults (None drops one)."""
    base: dict[str, Any] = {"Content-Type": "application/json", "Accept": ACCEPT} if method == "POST" else {}
    body = orjson.dumps(message) if message is not None else None
    conn = _connection(port, method, path, {**base, **(headers or {})}, body, timeout)
    try:
        resp = conn.getresponse()
        return Reply(resp.status, resp.getheaders(), resp.read())
    finally:
        conn.close()


class Event:
    def __init__(self, id: str | None, data: str | None, retry: int | None) -> None:
        self.id = id
        self.data = data
        self.retry = retry

    @property
    def message(self) -> Any:
        return orjson.loads(self.data) if self.data else None

    def __repr__(self) -> str:
        return f"Event(id={self.id!r}, retry={self.retry!r}, data={self.data!r})"


class SSE:
    """A reply read as it arrives: SSE events one at a time.

    The reply's head is awaited only when first needed: a silent request's
    reply starts when it first sends something (or at the first keep-alive).
    """

    def __init__(self, conn: http.client.HTTPConnection) -> None:
        self.conn = conn
        self._resp: http.client.HTTPResponse | None = None
        self.comments: list[bytes] = []

    @property
    def resp(self) -> http.client.HTTPResponse:
        if self._resp is None:
            self._resp = self.conn.getresponse()
        return self._resp

    @property
    def status(self) -> int:
        return self.resp.status

    @property
    def headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.resp.getheaders()}

    @property
    def is_sse(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")

    def event(self, *, comments: int | None = None) -> Event | None:
        """The next event (comments are collected aside), or None at the end of the stream
        (or once ``comments`` comment lines have been collected)."""
        id_ = data = retry = None
        while True:
            if comments is not None and len(self.comments) >= comments:
                return None
            line = self.resp.readline()
            if not line:
                return Event(id_, data, retry) if (id_ or data is not None or retry is not None) else None
            line = line.rstrip(b"\r\n")
            if not line:
                if id_ is not None or data is not None or retry is not None:
                    return Event(id_, data, retry)
                continue
            if line.startswith(b":"):
                self.comments.append(line)
                continue
            field, _, value = line.decode().partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id":
                id_ = value
            elif field == "data":
                data = value if data is None else data + "\n" + value
            elif field == "retry":
                retry = int(value)

    def until(self, predicate) -> list[Event]:
        """Events up to and including the first one ``predicate`` accepts."""
        seen = []
        while True:
            event = self.event()
            assert event is not None, f"the stream ended first; got {seen}"
            seen.append(event)
            if predicate(event):
                return seen

    def rest(self) -> list[Event]:
        events = []
        while (event := self.event()) is not None:
            events.append(event)
        return events

    def close(self) -> None:
        self.conn.close()


def is_response(id_: Any):
    return lambda e: e.message is not None and e.message.get("id") == id_ and "method" not in e.message


def messages(events: list[Event]) -> list[Any]:
    return [e.message for e in events if e.data]


class Session:
    """A legacy client's session, over raw HTTP."""

    def __init__(self, port: int, *, path: str = "/mcp", version: str = LEGACY, capabilities: dict | None = None) -> None:
        self.port = port
        self.path = path
        init = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": {"name": "old", "version": "1"}},
        }
        reply = send(port, init, path=path)
        assert reply.status == 200, reply
        self.init = reply
        self.result = reply.json["result"]
        self.id = reply.headers["mcp-session-id"]
        self.version = self.result["protocolVersion"]
        assert send(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers(), path=path).status == 202

    def headers(self, **extra: Any) -> dict[str, Any]:
        return {"Mcp-Session-Id": self.id, "MCP-Protocol-Version": self.version, **extra}

    def post(self, message: Any, **headers: Any) -> Reply:
        return send(self.port, message, self.headers(**headers), path=self.path)

    def ask(self, id_: Any, method: str, params: dict | None = None) -> Any:
        reply = self.post(legacy(id_, method, params))
        assert reply.status == 200, reply
        return reply.json

    def open(self, message: Any, timeout: float = 15) -> SSE:
        """POST ``message`` and return its reply unread."""
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, **self.headers()}
        return SSE(_connection(self.port, "POST", self.path, headers, orjson.dumps(message), timeout))

    def get(self, last_event_id: str | None = None, timeout: float = 15, **headers: Any) -> SSE:
        merged = {"Accept": "text/event-stream", **self.headers(**headers)}
        if last_event_id is not None:
            merged["Last-Event-ID"] = last_event_id
        return SSE(_connection(self.port, "GET", self.path, merged, None, timeout))

    def delete(self) -> Reply:
        return send(self.port, None, self.headers(), method="DELETE", path=self.path)


def legacy(id_: Any, method: str, params: dict | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def tool(id_: Any, name: str, arguments: dict | None = None, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return legacy(id_, "tools/call", params)


def modern_headers(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": message["method"]}
    if message["method"] == "tools/call":
        headers["Mcp-Name"] = message["params"]["name"]
    return {**headers, **extra}


def text_of(response: Any) -> str:
    return response["result"]["content"][0]["text"]


def assert_error(reply: Reply, status: int, code: int, id_: Any = "absent") -> str:
    assert reply.status == status, reply
    body = reply.json
    assert body["error"]["code"] == code, body
    if id_ == "absent":
        assert "id" not in body, body
    else:
        assert body["id"] == id_, body
    return body["error"]["message"]


# -- the handshake and the session id ---------------------------------------------


def test_initialize_opens_a_session(server):
    """transports.mdx, Session Management 1: the InitializeResult carries MCP-Session-Id, visible ASCII,
    cryptographically random; lifecycle.mdx, Initialization: the result names version, capabilities, server."""
    a, b = Session(server.port), Session(server.port)
    assert re.fullmatch(r"[\x21-\x7e]{32,}", a.id) and a.id != b.id
    assert a.init.headers["content-type"] == "application/json"
    assert a.result["protocolVersion"] == LEGACY
    assert a.result["serverInfo"] == {"name": "legacy-http", "version": "2.0.0"}
    assert a.result["capabilities"]["logging"] == {} and a.result["capabilities"]["tools"] == {"listChanged": True}


@pytest.mark.parametrize("asked, agreed", [("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"), ("1999-01-01", LEGACY)])
def test_version_negotiation(server, asked, agreed):
    """lifecycle.mdx, Version Negotiation: the client's version if supported, else the server's latest."""
    assert Session(server.port, version=asked).version == agreed


def test_requests_in_the_session(server):
    """transports.mdx, Session Management 2: later requests carry the session id and no modern _meta;
    ping, logging/setLevel, resources/subscribe and unsubscribe answer {} (conformance FIXTURES 1)."""
    s = Session(server.port)
    assert "echo" in [t["name"] for t in s.ask(1, "tools/list")["result"]["tools"]]
    assert text_of(s.ask(2, "tools/call", {"name": "echo", "arguments": {"text": "old times"}})) == "old times"
    assert s.ask(3, "ping")["result"] == {}
    assert s.ask(4, "logging/setLevel", {"level": "warning"})["result"] == {}
    assert s.ask(5, "resources/subscribe", {"uri": "file:///notes.txt"})["result"] == {}
    assert s.ask(6, "resources/unsubscribe", {"uri": "file:///notes.txt"})["result"] == {}
    assert s.ask(7, "resources/read", {"uri": "file:///notes.txt"})["result"]["contents"][0]["text"] == "some notes"


def test_errors_in_the_session_are_200(server):
    """transports.mdx, Sending Messages 5: a request gets a JSON-RPC response, errors included (2025-11-25 maps
    no error code to an HTTP status); the modern-only methods do not exist in a session."""
    s = Session(server.port)
    reply = s.post(legacy(1, "server/discover"))
    assert reply.status == 200 and reply.json["error"]["code"] == -32601
    assert s.ask(2, "subscriptions/listen", {"notifications": {}})["error"]["code"] == -32601
    assert s.ask(3, "tools/call", {"name": "nope"})["error"]["code"] == -32602
    assert s.ask(4, "initialize", {"protocolVersion": LEGACY, "capabilities": {}})["error"]["code"] == -32600


def test_a_request_id_in_flight_cannot_be_reused(server):
    """basic/index.mdx, Requests: an id is not reused while in flight in the session."""
    s = Session(server.port)
    first = s.open(tool(1, "hang", {"label": "dup"}))
    try:
        server.wait_for_log("hang dup: started")
        reply = s.post(tool(1, "echo", {"text": "x"}))
        assert reply.status == 200 and reply.json["error"]["code"] == -32600 and reply.json["id"] == 1
    finally:
        first.close()
        s.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})


# -- what is refused ----------------------------------------------------------------------


def test_unknown_session_is_404(server):
    """transports.mdx, Session Management 3: requests with a session id the server does not know get 404."""
    headers = {"Mcp-Session-Id": "no-such-session", "MCP-Protocol-Version": LEGACY}
    assert_error(send(server.port, legacy(1, "tools/list"), headers), 404, -32600)
    assert send(server.port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers).status == 404
    assert send(server.port, {"jsonrpc": "2.0", "id": 1, "result": {}}, headers).status == 404
    assert send(server.port, None, {**headers, "Accept": "text/event-stream"}, method="GET").status == 404
    assert send(server.port, None, headers, method="DELETE").status == 404


def test_delete_ends_the_session(server):
    """transports.mdx, Session Management 3 and 5: DELETE ends the session; afterwards every request with its
    id gets 404, and a new initialize starts over."""
    s = Session(server.port)
    assert s.ask(1, "ping")["result"] == {}
    reply = s.delete()
    assert reply.status == 204 and reply.body == b""
    assert_error(s.post(legacy(2, "ping")), 404, -32600)
    assert s.delete().status == 404
    assert s.get().status == 404
    assert Session(server.port).ask(1, "ping")["result"] == {}


def test_a_legacy_request_without_session_is_400(server):
    """transports.mdx, Session Management 2: a request other than initialize without MCP-Session-Id is 400."""
    for headers in ({}, {"MCP-Protocol-Version": LEGACY}):
        message = assert_error(send(server.port, legacy(7, "tools/list"), headers), 400, -32600, 7)
        assert "Mcp-Session-Id" in message and "initialize" in message


def test_header_must_match_the_negotiated_version(server):
    """transports.mdx, Protocol Version Header: an invalid or unsupported MCP-Protocol-Version is 400."""
    s = Session(server.port)
    for wrong in ("2026-07-28", "2025-06-18", "banana"):
        assert_error(s.post(legacy(1, "ping"), **{"MCP-Protocol-Version": wrong}), 400, -32020, 1)
        assert_error(s.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, **{"MCP-Protocol-Version": wrong}), 400, -32020)
    assert s.post(legacy(2, "ping"), **{"MCP-Protocol-Version": None}).json["result"] == {}  # absent: the session's


def test_header_and_meta_of_different_eras_are_refused(server):
    """streamable-http.mdx (2026-07-28), Protocol Version Header: a header that disagrees with _meta is
    400/-32020, with or without a session id; never served in the other era."""
    s = Session(server.port)
    modern = call(1, "echo", {"text": "x"})
    headers = {**s.headers(), **modern_headers(modern, **{"MCP-Protocol-Version": LEGACY})}
    assert_error(send(server.port, modern, headers), 400, -32020, 1)
    init = legacy(2, "initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    assert_error(send(server.port, init, {"MCP-Protocol-Version": "2026-07-28"}), 400, -32020, 2)


def test_a_request_with_modern_header_and_no_meta_gets_the_modern_error(server):
    """2026-07-28 basic/index.mdx, _meta: a request that says 2026-07-28 but lacks _meta is 400/-32602."""
    message = legacy(3, "tools/list", {})
    assert_error(send(server.port, message, modern_headers(message)), 400, -32602, 3)


def test_get_needs_a_session_and_accept(server):
    """transports.mdx, Listening 2-3: without a session there is no GET stream (405); a GET must accept SSE."""
    reply = send(server.port, None, {"Accept": "text/event-stream"}, method="GET")
    assert reply.status == 405 and reply.headers["allow"] == "POST"
    s = Session(server.port)
    reply = send(server.port, None, {**s.headers(), "Accept": "application/json"}, method="GET")
    assert reply.status == 406


def test_dns_rebinding_protection_covers_get_and_delete(server):
    """transports.mdx, Security Warning 1: an invalid Origin is 403, whatever the method."""
    s = Session(server.port)
    for method in ("GET", "DELETE"):
        reply = send(server.port, None, {**s.headers(), "Accept": "text/event-stream", "Origin": "http://evil.example"}, method=method)
        assert reply.status == 403
    assert s.ask(1, "ping")["result"] == {}  # the session survived


# -- streams: notifications and requests from the server -------------------------------------


def test_progress_and_logs_on_the_calls_stream(server):
    """transports.mdx, Sending Messages 6: the request's notifications, then its response, on its SSE stream;
    a priming event (an id, empty data) first; every event has an id unique in the session."""
    s = Session(server.port)
    s.ask(1, "logging/setLevel", {"level": "info"})
    stream = s.open(tool(2, "steps", {"count": 2, "pause": 0.01}, progressToken="p"))
    assert stream.status == 200 and stream.is_sse
    events = stream.rest()
    assert events[0].id is not None and events[0].data == ""
    got = messages(events)
    assert [m.get("method") for m in got] == ["notifications/progress", "notifications/message"] * 2 + [None]
    assert got[0]["params"]["progressToken"] == "p" and text_of(got[-1]) == "2 steps"
    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"\d+-\d+", i) for i in ids)


def test_no_priming_event_for_older_clients(server):
    """transports.mdx (2025-06-18 and earlier) had no priming event: their clients cannot parse empty data."""
    s = Session(server.port, version="2025-06-18")
    events = s.open(tool(1, "steps", {"count": 1, "pause": 0.01}, progressToken=1)).rest()
    assert all(e.data for e in events) and all(e.id for e in events)


def test_elicitation_on_the_calls_stream_answered_by_a_post(server):
    """transports.mdx, Sending Messages 4 and 6: the server's request goes on the call's SSE stream; the
    client's response is a new POST, accepted with 202; the call then finishes on its stream."""
    s = Session(server.port, capabilities={"elicitation": {}})
    stream = s.open(tool(5, "ask_name"))
    events = stream.until(lambda e: e.message is not None and e.message.get("method") == "elicitation/create")
    ask = events[-1].message
    assert ask["params"]["message"] == "What is your name?" and isinstance(ask["id"], int)
    answer = s.post({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}})
    assert answer.status == 202 and answer.body == b""
    assert text_of(messages(stream.rest())[-1]) == "Hello, Ada!"


def test_a_refused_elicitation_reaches_the_tool(server):
    """client/elicitation.mdx: the client may answer with an error; the tool sees it (a tool result here)."""
    s = Session(server.port, capabilities={"elicitation": {}})
    stream = s.open(tool(6, "ask_name"))
    ask = stream.until(lambda e: e.message is not None and e.message.get("method") == "elicitation/create")[-1].message
    error = {"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "user closed the dialog"}}
    assert s.post(error).status == 202
    assert text_of(messages(stream.rest())[-1]) == "refused: user closed the dialog"


def test_elicitation_needs_the_capability(server):
    """lifecycle.mdx, Capability Negotiation: without elicitation declared at initialize, the tool fails."""
    s = Session(server.port)
    reply = s.post(tool(1, "ask_name"))
    assert reply.status == 200 and reply.json["error"]["code"] == -32021


def test_a_response_nobody_waits_for_is_400(server):
    """transports.mdx, Sending Messages 4: input the server cannot accept gets an HTTP error status."""
    s = Session(server.port)
    assert_error(s.post({"jsonrpc": "2.0", "id": 999, "result": {}}), 400, -32600)


def test_get_stream_receives_session_notifications(server):
    """transports.mdx, Listening 4: the standalone GET stream carries notifications unrelated to a request:
    list changes, and resources/updated for a subscribed resource (server/resources.mdx, Subscriptions)."""
    s = Session(server.port)
    stream = s.get()
    assert stream.status == 200 and stream.is_sse
    priming = stream.event()
    assert priming is not None and priming.id is not None and priming.data == ""
    assert s.ask(1, "resources/subscribe", {"uri": "file:///notes.txt"})["result"] == {}
    assert text_of(s.ask(2, "tools/call", {"name": "change_tools", "arguments": {}})) == "changed"
    assert text_of(s.ask(3, "tools/call", {"name": "touch", "arguments": {"uri": "file:///notes.txt"}})) == "touched"
    # change_tools changes the list twice at once: the stream, still holding the first list change unsent,
    # takes no second copy (transports/http/_coalesce.py); the client reads the list once, after both.
    got = [stream.event().message for _ in range(2)]
    assert [m["method"] for m in got] == ["notifications/tools/list_changed", "notifications/resources/updated"]
    assert got[1]["params"] == {"uri": "file:///notes.txt"}
    stream.close()


def test_a_newer_get_replaces_the_older(server):
    """transports.mdx, Multiple Connections 2: each message goes on one stream only; a second GET takes
    the standalone stream over and the first one ends."""
    s = Session(server.port)
    first = s.get()
    assert first.event().data == ""  # priming
    second = s.get()
    assert second.event().data == ""
    assert first.rest() == []  # ended
    s.ask(1, "tools/call", {"name": "change_tools", "arguments": {}})
    assert second.event().message["method"] == "notifications/tools/list_changed"
    second.close()


def test_delete_ends_open_streams(server):
    """transports.mdx, Sending Messages 6: the server MAY terminate the SSE stream if the session ends."""
    s = Session(server.port)
    stream = s.get()
    assert stream.event().data == ""
    assert s.delete().status == 204
    assert stream.rest() == []


# -- resumability -------------------------------------------------------------------------------


def test_server_closes_the_connection_and_the_client_resumes(server):
    """transports.mdx, Sending Messages 6 and Resumability 2 (SEP-1699): the server ends the connection after
    a priming event and a retry field, without the response; a GET with Last-Event-ID resumes the stream,
    and the call finishes there."""
    s = Session(server.port)
    s.ask(1, "logging/setLevel", {"level": "info"})
    first = s.open(tool(2, "reconnect", {"pause": 0.2}))
    events = first.rest()
    assert events[0].data == "" and events[0].id
    assert [m["params"]["data"] for m in messages(events)] == ["before the close"]
    assert events[-1].retry == 50
    assert not [m for m in messages(events) if m.get("id") == 2]  # no response yet
    last = [e.id for e in events if e.id][-1]
    resumed = s.get(last_event_id=last)
    assert resumed.status == 200 and resumed.is_sse
    rest = messages(resumed.rest())  # ends after the response
    assert [m.get("method") for m in rest] == ["notifications/message", None]
    assert text_of(rest[-1]) == "closed=True"


def test_resume_after_a_dropped_connection_replays_what_was_missed(server):
    """transports.mdx, Resumability 2: events after Last-Event-ID are sent again, on the stream that was
    disconnected; a disconnection is not a cancellation (Sending Messages 6)."""
    s = Session(server.port)
    stream = s.open(tool(3, "steps", {"count": 4, "pause": 0.15}, progressToken="r"))
    events = stream.until(lambda e: e.message is not None and e.message["method"] == "notifications/progress")
    seen_id = events[-1].id
    stream.close()  # the connection drops; the tool goes on
    resumed = s.get(last_event_id=seen_id)
    rest = messages(resumed.rest())
    progress = [m["params"]["progress"] for m in rest if m.get("method") == "notifications/progress"]
    assert progress == [2, 3, 4]  # nothing lost, nothing twice
    assert text_of(rest[-1]) == "4 steps"


def test_resume_a_finished_stream_replays_its_response(server):
    """transports.mdx, Resumability 2: a client that lost the response gets it again from the replay buffer."""
    s = Session(server.port)
    events = s.open(tool(4, "steps", {"count": 1, "pause": 0.01}, progressToken=1)).rest()
    priming = events[0].id
    again = [m for m in messages(s.get(last_event_id=priming).rest()) if m.get("method") != "notifications/message"]
    assert [m.get("method") for m in again] == ["notifications/progress", None]  # (with the session's log lines)
    assert text_of(again[-1]) == "1 steps"


def test_the_servers_request_goes_on_the_get_stream_when_the_call_has_no_connection(server):
    """transports.mdx, Listening 4: the server MAY send requests on the GET stream; a call whose connection
    is closed has its request to the client sent there, answered by a POST; its response waits on its own
    stream for the client to resume it."""
    s = Session(server.port, capabilities={"roots": {}})
    get = s.get()
    assert get.event().data == ""
    call_stream = s.open(tool(8, "roots_after_close"))
    events = call_stream.rest()
    assert events[-1].retry == 50 and not messages(events)
    ask = get.event().message
    assert ask["method"] == "roots/list"
    assert s.post({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///a"}]}}).status == 202
    resumed = messages(s.get(last_event_id=events[0].id).rest())
    assert text_of(resumed[-1]) == "1 roots"
    get.close()


def test_an_unknown_last_event_id_opens_the_standalone_stream(server):
    """transports.mdx, Resumability 2: the server MAY replay; an id it did not give out names no stream."""
    s = Session(server.port)
    stream = s.get(last_event_id="99-1")
    assert stream.status == 200 and stream.event().data == ""  # a fresh standalone stream
    s.ask(1, "tools/call", {"name": "change_tools", "arguments": {}})
    assert stream.event().message["method"] == "notifications/tools/list_changed"
    stream.close()


def test_close_sse_stream_does_nothing_in_a_modern_request(server):
    """2026-07-28 streamable-http.mdx, Backward Compatibility: modern streams are not resumable; the same
    tool just answers."""
    message = call(1, "reconnect", {"pause": 0})
    reply = send(server.port, message, modern_headers(message))
    assert reply.status == 200 and text_of(reply.json) == "closed=False"


def test_messages_held_for_an_absent_client_are_bounded(small):
    """docs/architecture.md, Reliability principles: every size has a limit: a request whose messages, held while its client is away, outgrow
    the replay buffer is stopped; a client that resumes learns it from a -32603 error response."""
    s = Session(small.port, path="/tiny")
    stream = s.open(tool(1, "steps", {"count": 200, "pause": 0.005}, progressToken="big"))
    priming = stream.event()
    assert priming is not None and priming.data == ""
    stream.close()
    small.wait_for_log(r"request 1 \(tools/call\) stopped: \d+ bytes of messages for it were left unsent")
    rest = messages(s.get(last_event_id=priming.id).rest())
    assert rest[-1]["id"] == 1 and rest[-1]["error"]["code"] == -32603
    assert s.ask(2, "ping")["result"] == {}  # the session goes on


def test_session_notifications_held_without_a_get_stream_are_bounded(small):
    """docs/architecture.md, Reliability principles: every size has a limit: notifications for a session with no GET stream open wait for one,
    up to the replay buffer; past it the oldest are dropped and the newest delivered."""
    s = Session(small.port, path="/tiny")
    assert s.ask(1, "resources/subscribe", {"uri": "file:///notes.txt"})["result"] == {}
    # 40 resources/updated notifications, about 9 KiB as counted (a list change would not do: a stream
    # holds one unsent copy of each, transports/http/_coalesce.py)
    for i in range(40):
        s.ask(10 + i, "tools/call", {"name": "touch", "arguments": {"uri": "file:///notes.txt"}})
    small.wait_for_log(r"dropped \d+ unsent messages of stream 0")
    stream = s.get()
    assert stream.event().data == ""
    s.ask(2, "tools/call", {"name": "change_tools", "arguments": {}})  # a marker
    got = [e.message["method"] for e in stream.until(lambda e: e.message and "list_changed" in e.message["method"])]
    assert 0 < got.count("notifications/resources/updated") < 40 and got[-1] == "notifications/tools/list_changed"
    stream.close()


# -- cancellation ----------------------------------------------------------------------------------


def test_cancelled_notification_stops_the_call(server):
    """basic/utilities/cancellation.mdx (2025-11-25): notifications/cancelled stops the request; nothing more
    is sent for it, not even its response; the POST is 202."""
    s = Session(server.port)
    stream = s.open(tool(9, "hang", {"label": "legacy-cancel"}))
    server.wait_for_log("hang legacy-cancel: started")
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "user"}}
    assert s.post(note).status == 202
    server.wait_for_log("hang legacy-cancel: cancelled")
    assert not [m for m in messages(stream.rest()) if m.get("id") == 9]


# -- limits: expiry, the cap, legacy turned off ---------------------------------------------------------


def test_idle_sessions_expire(small):
    """transports.mdx, Session Management 3: the server MAY end a session; then its id gets 404."""
    s = Session(small.port, path="/expiring")
    assert s.ask(1, "ping")["result"] == {}
    deadline = time.monotonic() + 10
    while True:  # each probe uses the session: wait longer than 0.3 s (+ a 0.075 s sweep) between them
        time.sleep(0.5)
        if s.post(legacy(2, "ping")).status == 404:
            break
        assert time.monotonic() < deadline, "the session never expired"


def test_a_session_with_an_open_stream_does_not_expire(small):
    """An open GET stream keeps a session alive; keep-alive comments flow on it (every 0.2 s here)."""
    s = Session(small.port, path="/expiring")
    stream = s.get()
    assert stream.event().data == ""
    assert stream.event(comments=3) is None  # ~0.6 s of keep-alives: twice the idle timeout
    assert stream.comments == [b": keep-alive"] * 3
    assert s.ask(1, "ping")["result"] == {}
    stream.close()


def test_the_number_of_sessions_is_capped(small):
    """Every size has a limit (docs/architecture.md): past max_sessions, initialize is refused with 503; a DELETE frees a
    place; 2026-07-28 requests need no session and are still served."""
    first, second = Session(small.port, path="/capped"), Session(small.port, path="/capped")
    init = legacy(1, "initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    reply = send(small.port, init, path="/capped")
    assert reply.status == 503 and reply.json["id"] == 1 and "mcp-session-id" not in reply.headers
    modern = call(2, "echo", {"text": "stateless"})
    assert text_of(send(small.port, modern, modern_headers(modern), path="/capped").json) == "stateless"
    assert first.delete().status == 204
    assert Session(small.port, path="/capped").ask(1, "ping")["result"] == {}
    assert second.ask(2, "ping")["result"] == {}


def test_legacy_turned_off(small):
    """versioning.mdx, Backward Compatibility and Compatibility Matrix (Legacy client, Modern server): a
    modern-only server (Server(legacy=False)) refuses initialize with 400 (header validation), or -32601
    with modern _meta, naming its versions either way; GET and DELETE are 405; no session id is minted."""
    init = legacy(1, "initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    reply = send(small.port, init, path="/modern")  # no MCP-Protocol-Version: fails header validation
    assert "2026-07-28" in assert_error(reply, 400, -32020, 1) and "mcp-session-id" not in reply.headers
    init["params"]["_meta"] = META
    reply = send(small.port, init, modern_headers(init), path="/modern")
    assert "2026-07-28" in assert_error(reply, 404, -32601, 1)
    for method in ("GET", "DELETE"):
        reply = send(small.port, None, {"Mcp-Session-Id": "x", "Accept": "text/event-stream"}, method=method, path="/modern")
        assert reply.status == 405
    modern = call(2, "ping_me")
    assert text_of(send(small.port, modern, modern_headers(modern), path="/modern").json) == "pong"


def test_shutdown_ends_get_streams():
    """The server stopping (SIGTERM) ends the open GET streams at once (Server.close_subscriptions), so that
    they do not hold the shutdown until its grace period runs out and they are cancelled."""
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "legacy_http.py"), "--http", "--port", "0", "--log-level", "INFO"),
        r"serving 'legacy-http' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    try:
        s = Session(proc.port)
        stream = s.get()
        assert stream.event().data == ""
        proc.proc.terminate()
        assert stream.rest() == []
        # After its graceful shutdown uvicorn raises the signal that stopped it again: killed by SIGTERM, not a crash.
        assert proc.proc.wait(15) == -signal.SIGTERM
        log = proc.log()
        assert "session" in log and "ended: the server is shutting down" in log  # lifespan shutdown
        assert "graceful shutdown exceeded" not in log and "Cancel" not in log, log
    finally:
        proc.stop()


def test_mcpapp_legacy_follows_the_server():
    """MCPApp(legacy=...) defaults to server.legacy; it can turn legacy off for HTTP only, never on for a
    server that does not serve legacy sessions; the session limits are validated."""
    import wiremcp
    from wiremcp.transports.http import MCPApp

    dual, modern_only = wiremcp.Server("dual"), wiremcp.Server("modern", legacy=False)
    assert MCPApp(dual).legacy is True and MCPApp(modern_only).legacy is False
    assert MCPApp(dual, legacy=False).legacy is False
    with pytest.raises(ValueError):
        MCPApp(modern_only, legacy=True)
    for bad in ({"session_idle_timeout": 0}, {"max_sessions": -1}, {"replay_buffer": -1}):
        with pytest.raises(ValueError):
            MCPApp(dual, **bad)
    assert MCPApp(dual).session_count == 0


# -- both eras on one endpoint ----------------------------------------------------------------------------


def test_modern_and_legacy_interleaved_on_one_endpoint(server):
    """versioning.mdx, Backward Compatibility: a dual-era server serves both eras concurrently on the same
    endpoint; a request with modern _meta is served statelessly even when it carries a session id."""
    s = Session(server.port, capabilities={"elicitation": {}})
    legacy_call = s.open(tool(1, "ask_name"))
    ask = legacy_call.until(lambda e: e.message is not None and e.message.get("method") == "elicitation/create")[-1].message
    # While the legacy call waits for its answer, modern requests come and go.
    modern = call(1, "echo", {"text": "modern"})
    reply = send(server.port, modern, modern_headers(modern, **{"Mcp-Session-Id": s.id}))
    assert reply.status == 200 and text_of(reply.json) == "modern" and "mcp-session-id" not in reply.headers
    asks = request(2, "tools/call", {"name": "ask_name", "arguments": {}},
                   meta={**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    reply = send(server.port, asks, modern_headers(asks))
    assert reply.status == 200 and reply.json["result"]["resultType"] == "input_required"
    assert list(reply.json["result"]["inputRequests"].values())[0]["method"] == "elicitation/create"
    assert send(server.port, request(3, "server/discover"), {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}).status == 200
    # The legacy session is undisturbed.
    assert s.ask(2, "tools/list")["result"]["tools"]
    assert s.post({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Grace"}}}).status == 202
    assert text_of(messages(legacy_call.rest())[-1]) == "Hello, Grace!"
    assert s.ask(3, "ping")["result"] == {}


def test_a_legacy_and_a_modern_client_at_once(server):
    """versioning.mdx, Compatibility Matrix (Legacy/Dual-era and Dual-era/Dual-era): two wiremcp Clients,
    one forced to the legacy era, one modern, call the same tools on one server at the same time."""
    from wiremcp.client import Client
    from wiremcp.protocol import Era

    url = f"http://127.0.0.1:{server.port}/mcp"

    async def main():
        answers = {"legacy": "Lin", "modern": "Mo"}

        def elicit_as(who):
            return lambda params: {"action": "accept", "content": {"name": answers[who]}}

        async with Client.http(url, era="legacy", elicitation=elicit_as("legacy")) as old, \
                Client.http(url, era="modern", elicitation=elicit_as("modern")) as new:
            assert old.era is Era.LEGACY and new.era is Era.MODERN
            results = await asyncio.gather(
                old.call_tool("ask_name"), new.call_tool("ask_name"),
                old.call_tool("echo", {"text": "a"}), new.call_tool("echo", {"text": "b"}),
                old.call_tool("steps", {"count": 2, "pause": 0.01}), new.call_tool("steps", {"count": 2, "pause": 0.01}),
            )
            return [r.text for r in results]

    assert asyncio.run(main()) == ["Hello, Lin!", "Hello, Mo!", "a", "b", "2 steps", "2 steps"]
