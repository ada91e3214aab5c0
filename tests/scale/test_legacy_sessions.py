"""Legacy (2025-11-25) sessions shared by two workers through Redis: any worker serves any message.

Two ``wiremcp run tests/scale/worker.py --http`` processes share one real
redis-server; the tests speak raw HTTP to each worker's own port, so they
choose which worker gets each message, and nginx (docs/deploy.md, round
robin) in front of both for the official-shaped client run.

Spec: 2025-11-25 basic/transports.mdx ("Session Management", "Sending
Messages to the Server", "Listening for Messages from the Server",
"Resumability and Redelivery"), client/elicitation.mdx.
"""

from __future__ import annotations

import http.client
import signal
from typing import Any, Iterator

import orjson
import pytest

from wiremcp.client import Client

from .conftest import STATE_KEY, needs_services, sync
from .services import Nginx, RedisServer, Worker

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("aiohttp", reason="the HTTP client needs the [http] extra")

pytestmark = [pytest.mark.slow, needs_services]

WORKER = "tests/scale/worker.py"
LEGACY = "2025-11-25"


class Peer:
    """Raw HTTP to one worker, in one legacy session."""

    def __init__(self, port: int, session: str | None = None) -> None:
        self.port = port
        self.session = session

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session is not None:
            out["Mcp-Session-Id"] = self.session
            out["MCP-Protocol-Version"] = LEGACY
        return {**out, **(extra or {})}

    def open(self, method: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        conn.request(method, "/mcp", orjson.dumps(body) if body is not None else None, self.headers(headers))
        return conn, conn.getresponse()

    def post(self, body: Any) -> tuple[int, dict[str, str], bytes]:
        conn, resp = self.open("POST", body)
        try:
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()


def events(resp: http.client.HTTPResponse) -> Iterator[tuple[str | None, Any]]:
    """(id, message) of each SSE event with data; (id, None) for the priming event."""
    event_id = None
    data = b""
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.rstrip(b"\r\n")
        if line.startswith(b"id:"):
            event_id = line[3:].strip().decode()
        elif line.startswith(b"data:"):
            data += line[5:].strip()
        elif line == b"":
            if event_id is not None or data:
                yield event_id, orjson.loads(data) if data else None
            event_id, data = None, b""


def initialize(peer: Peer, capabilities: dict[str, Any] | None = None) -> None:
    status, headers, body = peer.post({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": capabilities or {}, "clientInfo": {"name": "t", "version": "0"}},
    })
    assert status == 200 and orjson.loads(body)["result"]["protocolVersion"] == LEGACY, body
    peer.session = headers["mcp-session-id"]
    assert peer.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202


def call(id: int, tool: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def text(reply: dict[str, Any]) -> str:
    return reply["result"]["content"][0]["text"]


@pytest.fixture
def pair(redis_server: RedisServer) -> Iterator[tuple[Worker, Worker]]:
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    a = b = None
    try:
        a = Worker(WORKER, env)
        b = Worker(WORKER, env)
        yield a, b
    finally:
        for w in (a, b):
            if w is not None:
                w.stop()


def test_a_session_opened_on_one_worker_is_served_by_the_other(pair):
    a, b = pair
    on_a = Peer(a.port)
    initialize(on_a)
    on_b = Peer(b.port, on_a.session)
    for peer, worker, n in ((on_b, b, 1), (on_a, a, 2), (on_b, b, 3)):
        status, headers, body = peer.post(call(n, "whoami"))
        assert status == 200 and headers["content-type"] == "application/json"
        reply = orjson.loads(body)
        assert reply["id"] == n and text(reply) == str(worker.proc.pid)
    # the log level set on b is the session's on a too
    status, _, body = on_b.post({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "error"}})
    assert status == 200 and orjson.loads(body)["result"] == {}
    # a wrong MCP-Protocol-Version is refused on either worker, as in one process
    conn, resp = Peer(a.port, on_a.session).open("POST", call(5, "whoami"), {"MCP-Protocol-Version": "2025-06-18"})
    assert resp.status == 400 and orjson.loads(resp.read())["error"]["code"] == -32020
    conn.close()
    # DELETE on b ends it everywhere
    conn, resp = on_b.open("DELETE")
    assert resp.status == 204
    conn.close()
    for peer in (on_a, on_b):
        assert peer.post(call(6, "whoami"))[0] == 404


def test_an_elicitation_sent_by_one_worker_is_answered_on_the_other(pair):
    a, b = pair
    on_a = Peer(a.port)
    initialize(on_a, {"elicitation": {}})
    on_b = Peer(b.port, on_a.session)
    conn, resp = on_a.open("POST", call(7, "greet"))
    assert resp.status == 200 and resp.getheader("content-type", "").startswith("text/event-stream")
    stream = events(resp)
    event_id, primed = next(stream)
    assert primed is None and event_id is not None and event_id.endswith("-0")
    _, asked = next(stream)
    assert asked["method"] == "elicitation/create" and f"asked by {a.proc.pid}" in asked["params"]["message"]
    answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}
    status, _, body = on_b.post(answer)  # the answer reaches the other worker
    assert status == 202, body
    _, reply = next(stream)
    assert reply["id"] == 7 and text(reply) == f"hello Ada, answered by {a.proc.pid}"
    conn.close()
    # an answer nothing waits for is still refused
    assert on_b.post({"jsonrpc": "2.0", "id": 999, "result": {}})[0] == 400


def test_two_workers_asking_one_client_at_once_use_different_ids(pair):
    a, b = pair
    on_a = Peer(a.port)
    initialize(on_a, {"elicitation": {}})
    on_b = Peer(b.port, on_a.session)
    conn_a, resp_a = on_a.open("POST", call(20, "greet"))
    conn_b, resp_b = on_b.open("POST", call(21, "greet"))
    streams = [events(resp_a), events(resp_b)]
    asked = []
    for stream in streams:
        assert next(stream)[1] is None  # primed
        asked.append(next(stream)[1])
    assert [m["method"] for m in asked] == ["elicitation/create"] * 2
    assert asked[0]["id"] != asked[1]["id"]
    # each answer goes to the worker that did not ask
    for peer, question, name in ((on_b, asked[0], "Ada"), (on_a, asked[1], "Bob")):
        reply = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": name}}}
        assert peer.post(reply)[0] == 202
    assert text(next(streams[0])[1]) == f"hello Ada, answered by {a.proc.pid}"
    assert text(next(streams[1])[1]) == f"hello Bob, answered by {b.proc.pid}"
    conn_a.close()
    conn_b.close()


def test_a_stream_is_resumed_on_the_other_worker_after_its_worker_is_killed(pair):
    a, b = pair
    on_a = Peer(a.port)
    initialize(on_a)
    conn, resp = on_a.open("POST", call(8, "steps", {"n": 2}, progressToken="p8"))
    stream = events(resp)
    got = [next(stream), next(stream), next(stream)]  # the priming event, two progress notifications
    assert got[0][1] is None
    assert [m["params"]["message"] for _, m in got[1:]] == [f"step 1 on {a.proc.pid}", f"step 2 on {a.proc.pid}"]
    first_id = got[1][0]
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait()
    conn.close()
    # resume after the first progress event on the other worker: the second again, then the end
    conn, resp = Peer(b.port, on_a.session).open("GET", headers={"Accept": "text/event-stream", "Last-Event-ID": first_id})
    assert resp.status == 200
    resumed = list(events(resp))
    conn.close()
    assert resumed[0] == (got[2][0], got[2][1])  # not the first one again, the second exactly once
    assert len(resumed) == 2
    final_id, final = resumed[1]
    assert final["id"] == 8 and final["error"]["code"] == -32603
    assert final["error"]["message"] == "Internal error: the worker serving this request stopped; send the request again"
    # the session lives on, on b
    status, _, body = Peer(b.port, on_a.session).post(call(9, "whoami"))
    assert status == 200 and text(orjson.loads(body)) == str(b.proc.pid)


def test_a_subscription_made_on_one_worker_notifies_the_get_stream_on_the_other_once(pair):
    a, b = pair
    on_a = Peer(a.port)
    initialize(on_a)
    on_b = Peer(b.port, on_a.session)
    conn, resp = on_b.open("GET", headers={"Accept": "text/event-stream"})  # the GET stream, on b
    assert resp.status == 200
    stream = events(resp)
    assert next(stream)[1] is None  # primed
    status, _, body = on_a.post({"jsonrpc": "2.0", "id": 10, "method": "resources/subscribe", "params": {"uri": "file:///watched"}})
    assert status == 200 and orjson.loads(body)["result"] == {}
    for n, uri in ((11, "file:///other"), (12, "file:///watched"), (13, "file:///watched")):
        assert on_a.post(call(n, "touch", {"uri": uri}))[0] == 200  # made on a
    got = [next(stream)[1], next(stream)[1]]
    assert got == [{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///watched"}}] * 2
    # and nothing else arrived in between: the next one is the next change
    assert on_b.post(call(14, "touch", {"uri": "file:///watched"}))[0] == 200
    last_id, note = next(stream)
    assert note["params"] == {"uri": "file:///watched"}
    # a newer GET, on the other worker, takes the stream over: the older one ends; the newer one
    # starts from now (what the older one carried is not sent again)
    conn2, resp2 = on_a.open("GET", headers={"Accept": "text/event-stream"})
    second = events(resp2)
    prime_id, primed = next(second)
    assert primed is None and prime_id == last_id  # its priming id: the last event so far
    assert list(stream) == []  # the older response ended
    conn.close()
    assert on_b.post(call(15, "touch", {"uri": "file:///watched"}))[0] == 200
    event_id, note = next(second)
    assert note["params"] == {"uri": "file:///watched"} and int(event_id.split("-")[1]) == int(last_id.split("-")[1]) + 1
    conn2.close()


@sync
async def test_a_legacy_client_through_nginx_alternates_workers_end_to_end(redis_server: RedisServer):
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    workers = [Worker(WORKER, env), Worker(WORKER, env)]
    nginx = Nginx([w.port for w in workers])
    notes: list[Any] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Grace"}}

    try:
        async with Client.http(nginx.url, era="legacy", elicitation=elicit, timeout=20, on_notification=notes.append) as c:
            assert c.protocol_version == LEGACY
            pids = {(await c.call_tool("whoami")).text for _ in range(6)}
            assert pids == {str(w.proc.pid) for w in workers}  # round robin: both served the session
            for _ in range(4):
                assert (await c.call_tool("greet")).text.startswith("hello Grace, answered by ")
    finally:
        nginx.stop()
        for w in workers:
            w.stop()


def test_through_nginx_a_stream_is_resumed_after_its_worker_is_killed(redis_server: RedisServer):
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    workers = [Worker(WORKER, env), Worker(WORKER, env)]
    nginx = Nginx([w.port for w in workers])
    try:
        peer = Peer(nginx.port)
        initialize(peer)
        conn, resp = peer.open("POST", call(30, "steps", {"n": 1}, progressToken="p30"))
        stream = events(resp)
        assert next(stream)[1] is None
        progress_id, progress = next(stream)
        pid = int(progress["params"]["message"].rsplit(" ", 1)[1])
        running = next(w for w in workers if w.proc.pid == pid)
        running.kill()
        conn.close()
        # nginx sends the resumption to the worker still up (the other one cannot be reached)
        conn, resp = peer.open("GET", headers={"Accept": "text/event-stream", "Last-Event-ID": progress_id})
        assert resp.status == 200
        resumed = list(events(resp))
        conn.close()
        assert len(resumed) == 1  # the progress event is not sent again
        assert resumed[0][1]["id"] == 30 and resumed[0][1]["error"]["code"] == -32603
    finally:
        nginx.stop()
        for w in workers:
            w.stop()
