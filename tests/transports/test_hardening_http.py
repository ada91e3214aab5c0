"""Hardening of the HTTP transport, over a real uvicorn on loopback (issue 13, server side).

``python -m uvicorn hardening:app`` (tests/servers/hardening.py) is started
once per module. The tests speak raw HTTP/1.1 (the helpers of
tests/transports/test_http_legacy.py) and read the server's memory from
``/proc/<pid>/status``.

* Memory (defect 1): N legacy sessions with full replay buffers and full
  unsent queues hold at most a small constant factor over their limits.
* Caps (defect 3): resource subscriptions per session (count and URI size),
  sessions and open listens; a full cap is 503 with ``Retry-After``, never 500.
* Replies (defect 4): a handler that raises ``CancelledError`` without being
  cancelled gets one -32603 reply; a huge ``Last-Event-ID`` is unknown, not a 500;
  Host and Origin values are remembered apart.
* Fault injection: a client that disconnects mid-stream cancels its work,
  and the server frees everything.
"""

from __future__ import annotations

import http.client
import sys
import time
from typing import Any, Iterator

import orjson
import pytest

from conftest import META, SERVERS, call

pytestmark = pytest.mark.slow

pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

import test_http as _http_tests  # noqa: E402 - after importorskip
from test_http_legacy import SSE, _connection, send  # noqa: E402

post = _http_tests.post

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
ServerProcess = _http_tests.ServerProcess


@pytest.fixture(scope="module")
def hard() -> Iterator[ServerProcess]:
    proc = ServerProcess(
        [sys.executable, "-m", "uvicorn", "hardening:app", "--app-dir", str(SERVERS),
         "--host", "127.0.0.1", "--port", "0", "--no-access-log", "--log-level", "info"],
        r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
    )
    yield proc
    proc.stop()


def rss(pid: int) -> int:
    """Resident memory of process ``pid``, in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def legacy(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def open_session(port: int, path: str = "/mcp", capabilities: dict[str, Any] | None = None) -> str:
    reply = send(port, legacy(0, "initialize", {
        "protocolVersion": LEGACY, "capabilities": capabilities or {}, "clientInfo": {"name": "t", "version": "0"},
    }), path=path)
    assert reply.status == 200, reply
    sid = reply.headers["mcp-session-id"]
    note = send(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": sid}, path=path)
    assert note.status == 202, note
    return sid


def in_session(port: int, sid: str, message: Any, path: str = "/mcp", **kw: Any):
    return send(port, message, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}, path=path, **kw)


def tool(id_: Any, name: str, arguments: dict[str, Any] | None = None, token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return legacy(id_, "tools/call", params)


def stats(port: int) -> dict[str, Any]:
    reply = post(port, call(1, "stats"))
    assert reply.status == 200, reply
    return reply.json["result"]["structuredContent"]


def sse_messages(body: bytes) -> list[Any]:
    return [orjson.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ") and len(line) > 6]


# -- defect 1: memory within the limits ------------------------------------------------------------

REPLAY = 32 * 1024  # the /mcp endpoint's replay_buffer
SESSIONS = 100


WATCHED = "file:///watched"  # every session subscribes to it: its updates fill the unsent queues


def fill(port: int, sid: str) -> None:
    """Fill the session's replay buffer: a call whose reply stream carries 400 small progress events."""
    assert in_session(port, sid, legacy(3, "resources/subscribe", {"uri": WATCHED})).status == 200
    reply = in_session(port, sid, tool(1, "flood", {"count": 400}, token="p"))
    assert reply.status == 200, reply
    got = sse_messages(reply.body)
    assert got[-1]["result"]["content"][0]["text"] == "flooded"


def test_sessions_hold_no_more_memory_than_their_limits(hard):
    """N sessions, each with a full replay buffer and a full unsent queue, hold about
    N x (replay_buffer + unsent limit): the limits bound real memory, not message lengths."""
    port, pid = hard.port, hard.proc.pid
    warm = [open_session(port) for _ in range(3)]  # allocator pools and code paths warmed up
    for sid in warm:
        fill(port, sid)
    in_session(port, warm[0], tool(2, "announce", {"uri": WATCHED, "times": 600}))
    for sid in warm:
        assert send(port, None, {"Mcp-Session-Id": sid}, method="DELETE").status == 204
    before = rss(pid)
    sids = [open_session(port) for _ in range(SESSIONS)]
    for sid in sids:
        fill(port, sid)
    # 600 resources/updated to every session, none connected to its GET stream: unsent queues fill up. (Not
    # list changes: a stream holds one unsent copy of each, transports/http/_coalesce.py.)
    assert in_session(port, sids[0], tool(2, "announce", {"uri": WATCHED, "times": 600})).status == 200
    grown = rss(pid) - before
    limits = SESSIONS * 2 * REPLAY  # each session: its replay buffer and its standalone stream's unsent queue
    print(f"\nRSS grew {grown / 1e6:.1f} MB for {SESSIONS} sessions: {grown / SESSIONS / 1024:.0f} KiB a session "
          f"(limits {2 * REPLAY // 1024} KiB a session, x{grown / limits:.2f})")
    assert "dropped" in hard.log(), "the unsent queues were never full"
    for sid in sids:
        assert send(port, None, {"Mcp-Session-Id": sid}, method="DELETE").status == 204
    assert grown <= 2.5 * limits, f"{grown} bytes held for {limits} bytes of limits"


# -- defect 4: one reply for every request the client did not cancel ----------------------------------


def test_a_handler_raising_cancelled_error_gets_one_internal_error_modern(hard):
    """A handler that raises CancelledError without being cancelled is a failure like any other:
    one JSON-RPC reply, -32603 (HTTP 500 with a JSON body), not a plain-text 500."""
    reply = post(hard.port, call(7, "rogue"))
    assert reply.status == 500, reply
    body = reply.json
    assert body["id"] == 7 and body["error"]["code"] == -32603, body
    assert post(hard.port, call(8, "stats")).status == 200  # the server goes on


def test_a_handler_raising_cancelled_error_gets_one_internal_error_legacy(hard):
    sid = open_session(hard.port)
    reply = in_session(hard.port, sid, tool(3, "rogue"))
    assert reply.status == 200, reply
    got = reply.json if reply.headers["content-type"].startswith("application/json") else sse_messages(reply.body)
    got = got if isinstance(got, list) else [got]
    assert [m["id"] for m in got if "id" in m] == [3], got
    assert got[-1]["error"]["code"] == -32603


@pytest.mark.parametrize("digits", [4301, 10_000])
def test_an_enormous_last_event_id_is_unknown(hard, digits):
    """A Last-Event-ID naming no stream (here: numbers past int()'s 4,300 digits) opens the standalone stream."""
    sid = open_session(hard.port)
    for last in ("9" * digits + "-1", "1-" + "9" * digits):
        conn = _connection(hard.port, "GET", "/mcp", {
            "Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY, "Last-Event-ID": last,
        }, None, 10)
        stream = SSE(conn)
        try:
            assert stream.status == 200 and stream.is_sse
            primed = stream.event()
            assert primed is not None and primed.id is not None and primed.id.startswith("0-"), primed
        finally:
            stream.close()
    assert "ValueError" not in hard.log()


def test_host_and_origin_values_are_remembered_apart(hard):
    """An Origin seen and allowed does not make ``Host: origin:<that origin>`` pass (DNS-rebinding check)."""
    assert post(hard.port, call(1, "stats"), {"Origin": "http://localhost"}, path="/strict").status == 200
    reply = post(hard.port, call(2, "stats"), {"Host": "origin:http://localhost"}, path="/strict")
    assert reply.status == 403, reply
    # and the other way round: a Host seen does not make an Origin of the same bytes pass
    assert post(hard.port, call(3, "stats"), {"Host": "localhost"}, path="/strict").status == 200
    reply = post(hard.port, call(4, "stats"), {"Origin": "localhost"}, path="/strict")
    assert reply.status == 403, reply


# -- defect 3: caps, and what a client sees at a cap -----------------------------------------------


def from_address(address: str, port: int, message: Any, headers: dict[str, Any] | None = None, path: str = "/capped"):
    """POST ``message`` from the loopback address ``address`` (another client, as the server sees it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(address, 0))
    body = orjson.dumps(message)
    try:
        conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
        base = {"Host": f"127.0.0.1:{port}", **_http_tests.mcp_headers(message), **(headers or {})}
        for name, value in base.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return _http_tests.Reply(resp.status, resp.getheaders(), resp.read())
    finally:
        conn.close()


def initialize(id_: Any = 0) -> dict[str, Any]:
    return legacy(id_, "initialize", {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})


def assert_busy(reply, status: int) -> None:
    """A cap: ``status`` (503 or 429) with ``Retry-After`` and a JSON-RPC error, never a 500."""
    assert reply.status == status, reply
    assert reply.headers.get("retry-after", "").isdigit(), reply
    error = reply.json["error"]
    assert error["code"] == -32000 and "busy" in error["message"].lower(), error


def test_resource_subscriptions_are_capped_in_count_and_size(hard):
    """/capped: 4 subscriptions of at most 1 KiB URIs per session; re-subscribing costs nothing."""
    sid = open_session(hard.port, "/capped")
    try:
        for i in range(4):
            reply = in_session(hard.port, sid, legacy(i, "resources/subscribe", {"uri": f"file:///{i}"}), "/capped")
            assert reply.json["result"] == {}, reply
        again = in_session(hard.port, sid, legacy(9, "resources/subscribe", {"uri": "file:///0"}), "/capped")
        assert again.json["result"] == {}
        fifth = in_session(hard.port, sid, legacy(10, "resources/subscribe", {"uri": "file:///4"}), "/capped").json
        assert fifth["error"]["code"] == -32000 and "4" in fifth["error"]["message"], fifth
        in_session(hard.port, sid, legacy(11, "resources/unsubscribe", {"uri": "file:///3"}), "/capped")
        long = in_session(hard.port, sid, legacy(12, "resources/subscribe", {"uri": "file:///" + "a" * 1100}), "/capped").json
        assert long["error"]["code"] == -32602 and "1024" in long["error"]["message"], long
        ok = in_session(hard.port, sid, legacy(13, "resources/subscribe", {"uri": "file:///" + "a" * 1000}), "/capped").json
        assert ok["result"] == {}
    finally:
        send(hard.port, None, {"Mcp-Session-Id": sid}, method="DELETE", path="/capped")


def test_one_client_cannot_take_every_session_and_a_full_cap_is_503_then_frees_itself(hard):
    """/capped: 8 sessions, 4 per client address, sessions idle for 1 s expire once 90 % are taken."""
    port = hard.port
    mine = []
    for _ in range(4):
        reply = from_address("127.0.0.2", port, initialize())
        assert reply.status == 200, reply
        mine.append(reply.headers["mcp-session-id"])
    assert_busy(from_address("127.0.0.2", port, initialize()), 429)  # this client's share is taken
    for address in ("127.0.0.3", "127.0.0.3", "127.0.0.4", "127.0.0.4"):
        assert from_address(address, port, initialize()).status == 200
    assert_busy(from_address("127.0.0.5", port, initialize()), 503)  # the server is full: busy, not 500
    # Under pressure idle sessions expire after 1 s, not 30 minutes: a new client gets in soon.
    deadline = time.monotonic() + 20
    while (reply := from_address("127.0.0.5", port, initialize())).status != 200:
        assert_busy(reply, 503)
        assert time.monotonic() < deadline, "the full server never freed an idle session"
        time.sleep(0.2)
    gone = [sid for sid in mine if from_address("127.0.0.2", port, tool(1, "stats"), {"Mcp-Session-Id": sid}).status == 404]
    assert gone, "no idle session was expired"


def listen_stream(port: int, address: str, id_: Any, path: str = "/capped") -> tuple[Any, Any]:
    """Open a listen stream from ``address``; (the connection, its first reply or the refusal)."""
    message = _http_tests.request(id_, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(address, 0))
    body = orjson.dumps(message)
    conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
    for name, value in {"Host": f"127.0.0.1:{port}", **_http_tests.mcp_headers(message)}.items():
        conn.putheader(name, value)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    return conn, SSE(conn)


def test_open_listens_are_capped_per_client_and_server_wide(hard):
    """/capped: 4 listens per client address (then 429); /tight: 2 server-wide (then 503); never 500."""
    port = hard.port
    opened = []
    try:
        for i in range(4):
            conn, stream = listen_stream(port, "127.0.0.6", i)
            opened.append(conn)
            assert stream.status == 200 and stream.is_sse
            assert stream.event().message["method"] == "notifications/subscriptions/acknowledged"
        conn, stream = listen_stream(port, "127.0.0.6", 5)
        opened.append(conn)
        resp = stream.resp
        assert_busy(_http_tests.Reply(resp.status, resp.getheaders(), resp.read()), 429)
        conn, stream = listen_stream(port, "127.0.0.7", 6)  # another client still gets one
        opened.append(conn)
        assert stream.status == 200 and stream.event().message["method"] == "notifications/subscriptions/acknowledged"
        for i in range(2):
            conn, stream = listen_stream(port, "127.0.0.8", 10 + i, path="/tight")
            opened.append(conn)
            assert stream.event().message["method"] == "notifications/subscriptions/acknowledged"
        conn, stream = listen_stream(port, "127.0.0.9", 12, path="/tight")
        opened.append(conn)
        resp = stream.resp
        assert_busy(_http_tests.Reply(resp.status, resp.getheaders(), resp.read()), 503)
    finally:
        for conn in opened:
            conn.close()


# -- fault injection: a client that disconnects mid-stream ---------------------------------------


def wait_for(predicate, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def settled(port: int) -> dict[str, Any]:
    """The server's counts once what earlier tests left behind has unwound (two equal readings)."""
    last = stats(port)
    for _ in range(100):
        time.sleep(0.1)
        now = stats(port)
        if now == last:
            return now
        last = now
    raise AssertionError(f"the server's counts never settled: {last}")


def test_a_modern_client_that_disconnects_mid_stream_cancels_its_work_and_frees_everything(hard):
    """streamable-http.mdx: closing the stream cancels the request. The tool's cancellation is
    observed, and the server's task count returns to what it was."""
    base = settled(hard.port)
    message = call(41, "wait", {"label": "modern-41"}, **{"progressToken": "t"})
    conn = _connection(hard.port, "POST", "/mcp", {"Host": f"127.0.0.1:{hard.port}", **_http_tests.mcp_headers(message)},
                       orjson.dumps(message), 15)
    stream = SSE(conn)
    assert stream.status == 200 and stream.is_sse
    assert stream.event().message["method"] == "notifications/progress"  # mid-stream now
    assert stats(hard.port)["tasks"] > base["tasks"]  # the tool's task, and the one that watches the client
    assert "wait modern-41: cancelled" not in hard.log()
    conn.sock.shutdown(2)
    conn.close()
    wait_for(lambda: "wait modern-41: cancelled" in hard.log(), "the tool was cancelled")
    wait_for(lambda: stats(hard.port)["tasks"] == base["tasks"], "the tasks were freed")


def test_a_legacy_client_that_disconnects_mid_stream_is_freed_with_its_session(hard):
    """2025-11-25: a disconnection is not a cancellation (the request goes on, to be resumed); ending
    the session cancels the work and frees it: the session count and the task count return."""
    base = settled(hard.port)
    sid = open_session(hard.port)
    message = tool(42, "wait", {"label": "legacy-42"}, token="t")
    conn = _connection(hard.port, "POST", "/mcp", {
        "Content-Type": "application/json", "Accept": ACCEPT, "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY,
    }, orjson.dumps(message), 15)
    stream = SSE(conn)
    assert stream.status == 200 and stream.is_sse
    stream.until(lambda e: e.message is not None and e.message.get("method") == "notifications/progress")
    conn.sock.shutdown(2)
    conn.close()
    # The request goes on: a request sent after the disconnection is served while it waits.
    assert stats(hard.port)["sessions"] == base["sessions"] + 1
    assert "wait legacy-42: cancelled" not in hard.log()
    assert send(hard.port, None, {"Mcp-Session-Id": sid}, method="DELETE").status == 204
    wait_for(lambda: "wait legacy-42: cancelled" in hard.log(), "the tool was cancelled")
    after = stats(hard.port)
    assert after["sessions"] == base["sessions"]
    wait_for(lambda: stats(hard.port)["tasks"] == base["tasks"], "the tasks were freed")
