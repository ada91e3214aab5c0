"""The ready-made middleware (wiremcp.server.middleware, docs/middleware.md) over real transports.

tests/servers/middleware_kit.py registers all five in the documented order:
RequestLog, ErrorHandling, Timing, RateLimit (3 tools/call per minute per
caller), ResponseCache, and a counter of the requests that reach the
handlers. Over a real stdio subprocess (both eras) and a real
``wiremcp run --http`` on loopback: the fourth call is refused with -32000
and ``data.retryAfterMs`` (HTTP: 429 with ``Retry-After``), each client
address has its own share, a ``public`` list is answered from the cache and a
``private`` one is never shared between anonymous HTTP callers, a resource's
KeyError is mapped to -32602, an unexpected failure is masked with a
reference, and every request is logged as a JSON line. Behind a real
resource server (bearer tokens) each principal is a caller of its own, and a
private result is cached for its principal only.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from conftest import SERVERS, StdioPeer, call, request, wiremcp_cmd

SERVER = str(SERVERS / "middleware_kit.py")


def _error(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


def _counts(reply: dict[str, Any]) -> dict[str, Any]:
    counts: dict[str, Any] = reply["result"]["structuredContent"]
    return counts


# -- stdio ------------------------------------------------------------------------------


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    return tmp_path / "requests.jsonl"


def test_stdio_modern_rate_limit_cache_errors_and_log(log_file: Path) -> None:
    peer = StdioPeer(wiremcp_cmd("run", SERVER), env={"KIT_REQUEST_LOG": str(log_file)})
    try:
        for i in range(3):
            assert peer.ask(call(i, "echo", {"text": f"hi {i}"}))["result"]["content"][0]["text"] == f"hi {i}"
        refused = _error(peer.ask(call(3, "echo", {"text": "one too many"})))
        assert refused["code"] == -32000
        assert refused["message"].startswith("Rate limit exceeded: at most 3 requests per 60 s for this caller")
        assert 0 < refused["data"]["retryAfterMs"] <= 20_000
        assert refused["data"]["limit"] == 3 and refused["data"]["periodMs"] == 60_000
        # Other methods are not limited (methods={"tools/call"}); a public list is answered from the cache.
        first = peer.ask(request(4, "tools/list"))["result"]
        second = peer.ask(request(5, "tools/list"))["result"]
        assert first["ttlMs"] == 60_000 and first["cacheScope"] == "public"
        assert 0 < second["ttlMs"] <= 60_000 and second["tools"] == first["tools"]
        # ErrorHandling: the resource's KeyError is mapped; an unexpected failure keeps its secret.
        mapped = _error(peer.ask(request(6, "resources/read", {"uri": "item://pear"})))
        assert mapped == {"code": -32602, "message": "Invalid params: no such item 'pear'"}
        assert peer.ask(request(7, "resources/read", {"uri": "item://apple"}))["result"]["contents"][0]["text"] == "red"
        masked = _error(peer.ask(request(8, "resources/read", {"uri": "boom://now"})))
        assert masked["code"] == -32603 and "hunter2" not in json.dumps(masked)
    finally:
        err = peer.finish_quietly()
    assert "hunter2" in err  # the traceback is in the server's log, not on the wire
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    by_id = {record["id"]: record for record in records}
    assert by_id[0] == {**by_id[0], "method": "tools/call", "target": "echo", "outcome": "result", "code": None}
    assert by_id[3]["outcome"] == "error" and by_id[3]["code"] == -32000
    assert by_id[6]["code"] == -32602 and by_id[8]["code"] == -32603
    assert all(type(record["ms"]) is float and record["era"] == "2026-07-28" for record in records)


def test_stdio_cache_hit_skips_the_handler() -> None:
    peer = StdioPeer(wiremcp_cmd("run", SERVER), env={"KIT_RATE": "100"})
    try:
        for i in range(3):
            assert "result" in peer.ask(request(i, "tools/list"))
        counts = _counts(peer.ask(call(9, "reached_counts")))
        assert counts["reached"] == {"tools/list": 1, "tools/call": 1}
        assert counts["timed"] == 3  # Timing sits outside the cache: it saw every request
    finally:
        peer.finish_quietly()


def test_stdio_legacy_session_is_limited_and_cached_too() -> None:
    peer = StdioPeer(wiremcp_cmd("run", SERVER), env={"KIT_SCOPE": "private"})
    try:
        init = peer.ask(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        )
        assert init["result"]["protocolVersion"] == "2025-11-25"
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        legacy_call = lambda i: {"jsonrpc": "2.0", "id": i, "method": "tools/call",  # noqa: E731
                                 "params": {"name": "echo", "arguments": {"text": "x"}}}
        for i in range(1, 4):
            assert peer.ask(legacy_call(i))["result"]["content"][0]["text"] == "x"
        refused = _error(peer.ask(legacy_call(4)))
        assert refused["code"] == -32000 and refused["data"]["retryAfterMs"] > 0
        lists = [peer.ask({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/list", "params": {}})["result"] for i in range(2)]
        assert lists[0]["tools"] == lists[1]["tools"]
    finally:
        peer.finish_quietly()


# -- HTTP -------------------------------------------------------------------------------

uvicorn = pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from _servers import free_port, stop, wait_listening, wiremcp_http  # noqa: E402
from test_http import mcp_headers  # noqa: E402


def _post(url: str, message: dict[str, Any], source: str = "127.0.0.1") -> tuple[int, dict[str, str], dict[str, Any]]:
    """POST ``message`` from the loopback address ``source``: status, headers (lower-case), body."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(source, 0))
    try:
        body = orjson.dumps(message)
        conn.request("POST", "/mcp", body, {**mcp_headers(message), "Host": f"127.0.0.1:{port}"})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, orjson.loads(data)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def http_public() -> Iterator[str]:
    with wiremcp_http(SERVER) as url:
        yield url


@pytest.mark.slow
def test_http_429_with_retry_after_per_client_address(http_public: str) -> None:
    for i in range(3):
        status, _, body = _post(http_public, call(i, "echo", {"text": "a"}), "127.0.0.2")
        assert status == 200 and body["result"]["content"][0]["text"] == "a"
    status, headers, body = _post(http_public, call(3, "echo", {"text": "a"}), "127.0.0.2")
    assert status == 429, body
    assert body["error"]["code"] == -32000 and body["error"]["data"]["retryAfterMs"] > 0
    # Retry-After says the same wait, in whole seconds rounded up (about 20 s: one call every 20 s; before: always 1)
    assert int(headers["retry-after"]) == -(-body["error"]["data"]["retryAfterMs"] // 1000)
    # another client address has a share of its own
    status, _, body = _post(http_public, call(4, "echo", {"text": "b"}), "127.0.0.3")
    assert status == 200 and body["result"]["content"][0]["text"] == "b"


@pytest.mark.slow
def test_http_public_list_cached_across_callers_and_errors_mapped(http_public: str) -> None:
    _, _, first = _post(http_public, request(1, "tools/list"), "127.0.0.4")
    _, _, second = _post(http_public, request(2, "tools/list"), "127.0.0.5")
    assert first["result"]["cacheScope"] == "public" and first["result"]["tools"] == second["result"]["tools"]
    status, _, mapped = _post(http_public, request(3, "resources/read", {"uri": "item://pear"}), "127.0.0.4")
    assert status == 400 and mapped["error"] == {"code": -32602, "message": "Invalid params: no such item 'pear'"}
    status, _, masked = _post(http_public, request(4, "resources/read", {"uri": "boom://now"}), "127.0.0.4")
    assert status == 500 and masked["error"]["code"] == -32603 and "hunter2" not in json.dumps(masked)


@pytest.mark.slow
def test_http_private_list_is_never_shared_between_anonymous_callers() -> None:
    with wiremcp_http(SERVER, {"KIT_SCOPE": "private", "KIT_RATE": "100"}) as url:
        lists = [_post(url, request(i, "tools/list"), f"127.0.0.{6 + i % 2}")[2]["result"] for i in range(4)]
        assert all(result["cacheScope"] == "private" and result["ttlMs"] == 60_000 for result in lists)
        _, _, counts = _post(url, call(9, "reached_counts"), "127.0.0.6")
        assert _counts(counts)["reached"]["tools/list"] == 4  # every one reached the handler


@pytest.mark.slow
def test_http_legacy_session_refusal_is_429_with_retry_after() -> None:
    """A 2025-11-25 session's POST carrying only a refused request gets 429 with ``Retry-After``, as a
    2026-07-28 request does (the JSON-RPC -32000 with ``retryAfterMs`` in the body); the session lives on."""
    with wiremcp_http(SERVER) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Host": f"127.0.0.1:{port}"}

        def post(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
            conn.request("POST", "/mcp", orjson.dumps(message), headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()

        try:
            status, got, _ = post(init, base)
            session = got["mcp-session-id"]
            assert status == 200 and session
            headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            assert post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)[0] == 202
            replies = [
                post({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}, headers)
                for i in range(1, 5)
            ]
            assert [r[0] for r in replies] == [200, 200, 200, 429]
            _, refused_headers, body = replies[-1]
            assert refused_headers["content-type"] == "application/json"
            error = orjson.loads(body)["error"]
            assert error["code"] == -32000 and error["data"]["retryAfterMs"] > 0
            assert int(refused_headers["retry-after"]) == -(-error["data"]["retryAfterMs"] // 1000)
            # the session is still open: a request the limit does not cover is answered
            status, _, listed = post({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}, headers)
            assert status == 200 and "tools" in orjson.loads(listed)["result"]
        finally:
            conn.close()


@pytest.mark.slow
def test_http_authenticated_callers_each_have_their_share_and_their_private_results(tmp_path: Path) -> None:
    """Behind a real resource server: two principals from one address are two callers."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "middleware_kit_auth:app", "--app-dir", str(SERVERS), "--host", "127.0.0.1",
         "--port", str(port), "--no-access-log"],
        env={**os.environ, "KIT_RESOURCE": resource, "KIT_SCOPE": "private"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_listening(port, proc)

        def as_(token: str, message: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
            try:
                headers = {**mcp_headers(message), "Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}"}
                conn.request("POST", "/mcp", orjson.dumps(message), headers)
                resp = conn.getresponse()
                return resp.status, orjson.loads(resp.read())
            finally:
                conn.close()

        assert [as_("t-ann", call(i, "echo", {"text": "a"}))[0] for i in range(4)] == [200, 200, 200, 429]
        assert as_("t-bob", call(9, "echo", {"text": "b"}))[0] == 200  # same address, another principal
        ann_first, ann_again = (as_("t-ann", request(10 + i, "tools/list"))[1]["result"] for i in range(2))
        bob_list = as_("t-bob", request(20, "tools/list"))[1]["result"]
        assert ann_first["cacheScope"] == "private" and ann_first["ttlMs"] == 60_000
        assert ann_again["ttlMs"] < 60_000  # ann's own result, from the cache
        assert bob_list["ttlMs"] == 60_000  # never ann's: bob's request reached the handler
        status, counts = as_("t-bob", call(21, "reached_counts"))
        assert _counts(counts)["reached"]["tools/list"] == 2
    finally:
        stop(proc)
