"""Issue 24, defect 2: clients that speak only 2024-11-05, over stdio and the opt-in HTTP+SSE transport.

The official mcp 1.7.1 client offers 2024-11-05 and refuses any other answer; over HTTP it has only
the deprecated HTTP+SSE transport. wiremcp negotiates 2024-11-05, reshapes what that revision lacks
(server/_legacy_2024.py), and serves ``GET /sse`` + ``POST /messages`` when asked
(``wiremcp run --http --legacy-sse``; transports/http/_legacy_sse.py). The peers are the real SDK
releases (tests/peers.py), and the current official SDK of bench/.venv-official.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

import wiremcp
from _servers import ROOT, free_port, serving_http
from conftest import StdioPeer
from interop._official import official_client

pytestmark = pytest.mark.slow

EVERYTHING = str(ROOT / "src" / "wiremcp" / "examples" / "everything.py")
SERVER_2024 = str(Path(__file__).resolve().parent / "peers" / "wiremcp_2024.py")
CURRENT_OFFICIAL = ROOT / "bench" / ".venv-official" / "bin" / "python"
REQUIRE_INTEROP = bool(os.environ.get("WIREMCP_REQUIRE_INTEROP"))


@contextmanager
def wiremcp_sse(script: str, *extra: str) -> Iterator[int]:
    """``wiremcp run SCRIPT --http [extra]`` on a free port; the port."""
    port = free_port()
    args = [sys.executable, "-m", "wiremcp", "run", script, "--http", "--port", str(port), *extra]
    with serving_http(args, port):
        yield port


def _raw(port: int, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        reply = conn.getresponse()
        first = reply.read() if reply.getheader("content-type", "") != "text/event-stream" else reply.read1(4096)
        return reply.status, first
    finally:
        conn.close()


# -- 2024-11-05 over stdio ----------------------------------------------------------------------


def test_mcp_171_client_over_stdio_negotiates_2024_11_05() -> None:
    argv = [sys.executable, "-m", "wiremcp", "run", EVERYTHING]
    out = official_client("mcp-1.7.1", "stdio", json.dumps(argv), "test_tool_with_logging")
    assert out["protocolVersion"] == "2024-11-05"
    assert out["text"] == "Logging tool completed" and out["isError"] is False
    assert [entry["data"] for entry in out["logs"]] == ["Tool execution started", "Tool processing data", "Tool execution completed"]


def test_mcp_171_client_reads_audio_as_text() -> None:
    """mcp 1.7.1 validates content types one by one: audio (2025-03-26) would fail its whole result."""
    argv = [sys.executable, "-m", "wiremcp", "run", EVERYTHING]
    out = official_client("mcp-1.7.1", "stdio", json.dumps(argv), "test_audio_content")
    assert out["isError"] is False and out["text"] == "[audio content (audio/wav): not representable in MCP 2024-11-05]"


def test_what_a_2024_11_05_session_receives() -> None:
    """The differences 2025-03-26 made, undone for a 2024-11-05 session (raw lines over stdio)."""
    peer = StdioPeer([sys.executable, "-m", "wiremcp", "run", SERVER_2024])
    try:
        init = peer.ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}})["result"]
        assert init["protocolVersion"] == "2024-11-05"
        assert set(init["capabilities"]) <= {"experimental", "logging", "prompts", "resources", "tools"}
        assert "completions" not in init["capabilities"]
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = peer.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
        assert [t for t in tools if "annotations" in t] == [] and "peek" in [t["name"] for t in tools]
        media = peer.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "media", "arguments": {}}})
        assert media["result"]["content"] == [
            {"type": "text", "text": "here:"},
            {"type": "text", "text": "[audio content (audio/wav): not representable in MCP 2024-11-05]"},
            {"type": "text", "text": "[resource link: file:///notes.txt (notes)]"},
        ]
        peer.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}})
        notes = [peer.recv(), peer.recv()]
        assert [n["params"] for n in notes] == [{"progressToken": "p", "progress": 1, "total": 2}, {"progressToken": "p", "progress": 2, "total": 2}]
        assert peer.recv()["result"]["content"][0]["text"] == "stepped"
        prompt = peer.ask({"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": "listen", "arguments": {"language": "en"}}})
        assert prompt["result"]["messages"][0]["content"]["type"] == "text"
        done = peer.ask({"jsonrpc": "2.0", "id": 6, "method": "completion/complete", "params": {
            "ref": {"type": "ref/prompt", "name": "listen"}, "argument": {"name": "language", "value": "f"}}})
        assert done["result"]["completion"]["values"] == ["fr"]
    finally:
        peer.proc.kill()
        peer.proc.wait()


def test_a_2025_03_26_session_keeps_what_2024_11_05_lacks() -> None:
    peer = StdioPeer([sys.executable, "-m", "wiremcp", "run", SERVER_2024])
    try:
        init = peer.ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "newer", "version": "0"}}})["result"]
        assert init["protocolVersion"] == "2025-03-26" and "completions" in init["capabilities"]
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = peer.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
        assert [t["annotations"] for t in tools if t["name"] == "peek"] == [{"readOnlyHint": True, "title": "Peek"}]
    finally:
        peer.proc.kill()
        peer.proc.wait()


# -- the HTTP+SSE transport (opt-in) -------------------------------------------------------------


@pytest.mark.parametrize("release", ["mcp-1.7.1", "mcp-1.20.0"])
def test_official_sse_client_against_legacy_sse(release: str) -> None:
    with wiremcp_sse(EVERYTHING, "--legacy-sse") as port:
        out = official_client(release, "sse", f"http://127.0.0.1:{port}/sse", "test_tool_with_logging")
    assert out["protocolVersion"] == ("2024-11-05" if release == "mcp-1.7.1" else "2025-06-18")
    assert out["text"] == "Logging tool completed" and len(out["logs"]) == 3
    assert "test_simple_text" in out["tools"]


@pytest.mark.skipif(not CURRENT_OFFICIAL.exists() and not REQUIRE_INTEROP, reason="bench/.venv-official is not set up")
def test_current_official_sse_client_against_legacy_sse(tmp_path: Path) -> None:
    """The current official SDK (bench/.venv-official)'s sse_client."""
    import subprocess

    with wiremcp_sse(EVERYTHING, "--legacy-sse") as port:
        script = str(Path(__file__).resolve().parent / "peers" / "official_client.py")
        done = subprocess.run(
            [str(CURRENT_OFFICIAL), script, "sse", f"http://127.0.0.1:{port}/sse", "test_simple_text"],
            capture_output=True, text=True, timeout=90,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["isError"] is False and out["text"] == "This is a simple text response for testing."


def test_legacy_sse_is_off_by_default() -> None:
    with wiremcp_sse(EVERYTHING) as port:
        assert _raw(port, "GET", "/sse", {"Accept": "text/event-stream"})[0] == 404


def test_legacy_sse_guards() -> None:
    """Host/Origin as at the MCP endpoint; methods; an unknown session; the endpoint event."""
    with wiremcp_sse(EVERYTHING, "--legacy-sse") as port:
        status, body = _raw(port, "GET", "/sse", {"Origin": "http://evil.example"})
        assert status == 403 and b"Origin" in body
        assert _raw(port, "GET", "/sse", {"Host": "evil.example"})[0] == 403
        assert _raw(port, "POST", "/sse", {"Content-Type": "application/json"}, b"{}")[0] == 405
        assert _raw(port, "GET", "/messages?session_id=x")[0] == 405
        status, body = _raw(port, "POST", "/messages?session_id=nope", {"Content-Type": "application/json"}, b"{}")
        assert status == 404 and b"session_id" in body
        status, first = _raw(port, "GET", "/sse", {"Accept": "text/event-stream"})
        assert status == 200 and first.startswith(b"event: endpoint\ndata: /messages?session_id=")


def test_legacy_sse_limits_bound_sessions_and_backlog() -> None:
    """max_sessions: one stream more is 503; max_backlog: a client that stops reading loses its session
    once that many events wait (its stream ends, later POSTs are 404). Driven through the ASGI interface."""
    import asyncio

    from wiremcp.transports.http import LegacySSEApp, MCPApp

    server = wiremcp.Server("limits")
    app = LegacySSEApp(MCPApp(server), server, max_sessions=1, max_backlog=2)
    host = [(b"host", b"127.0.0.1:8000")]
    get = {"type": "http", "method": "GET", "path": "/sse", "headers": host, "query_string": b""}

    async def go() -> None:
        never = asyncio.Event()
        sent: list[dict[str, Any]] = []
        endpoint = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await never.wait()
            return {"type": "http.disconnect"}

        async def stalled(message: dict[str, Any]) -> None:  # reads the endpoint event, then nothing
            sent.append(message)
            if b"event: endpoint" in message.get("body", b""):
                endpoint.set()
            elif len(sent) > 2:
                await never.wait()

        stream = asyncio.ensure_future(app(get, receive, stalled))
        await asyncio.wait_for(endpoint.wait(), 5)
        assert app.session_count == 1
        statuses: list[int] = []

        async def status(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        await app(get, receive, status)
        assert statuses == [503]
        query = sent[1]["body"].split(b"?", 1)[1].strip()
        post = {**get, "method": "POST", "path": "/messages", "query_string": query,
                "headers": [*host, (b"content-type", b"application/json")]}
        for n in range(5):  # each gets an error reply on the stream (no initialize): nobody reads them
            body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}).encode()

            async def read_body(body: bytes = body) -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            await app(post, read_body, status)
            await asyncio.sleep(0.05)
        # one event in the stalled write, two waiting, the fourth ends the session; the fifth POST finds none
        assert statuses[1:] == [202, 202, 202, 202, 404], statuses
        await asyncio.wait_for(stream, 5)
        assert app.session_count == 0

    asyncio.run(asyncio.wait_for(go(), 20))


def test_legacy_sse_needs_the_servers_authorization() -> None:
    """With Server(auth=...), /sse and /messages need a valid token as the MCP endpoint does (401 and
    WWW-Authenticate without one); the token is ctx.auth for the calls a POST starts."""
    import asyncio

    from wiremcp.auth.server import AccessToken, AuthError, DPoPProof, ResourceServer
    from wiremcp.transports.http import LegacySSEApp, MCPApp

    class OneToken:
        async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
            if token != "good":
                raise AuthError("malformed", "unknown token")
            return AccessToken(subject="ann", client_id="test", scopes=frozenset({"mcp"}), claims={"sub": "ann"})

    auth = ResourceServer(OneToken(), resource="http://127.0.0.1:8000/mcp", authorization_servers=["http://127.0.0.1:9/"])
    server = wiremcp.Server("guarded", auth=auth)

    @server.tool()
    def whoami(ctx: wiremcp.Context) -> str:
        return ctx.auth.subject

    app = LegacySSEApp(MCPApp(server), server)

    def scope(method: str, path: str, token: str | None, query: bytes = b"") -> dict[str, Any]:
        headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
        if token is not None:
            headers.append((b"authorization", f"Bearer {token}".encode()))
        return {"type": "http", "method": method, "path": path, "headers": headers, "query_string": query}

    async def go() -> None:
        starts: list[dict[str, Any]] = []

        async def record(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                starts.append(message)

        never = asyncio.Event()

        async def idle() -> dict[str, Any]:
            await never.wait()
            return {"type": "http.disconnect"}

        for token in (None, "bad"):
            await app(scope("GET", "/sse", token), idle, record)
            assert starts[-1]["status"] == 401 and b"www-authenticate" in dict(starts[-1]["headers"])
        await app(scope("POST", "/messages", None, b"session_id=x"), idle, record)
        assert starts[-1]["status"] == 401
        events: list[bytes] = []
        arrived = asyncio.Event()

        async def stream_send(message: dict[str, Any]) -> None:
            events.append(message.get("body", b""))
            arrived.set()

        stream = asyncio.ensure_future(app(scope("GET", "/sse", "good"), idle, stream_send))

        async def next_event(marker: bytes) -> bytes:
            while True:
                found = [e for e in events if marker in e]
                if found:
                    return found[0]
                arrived.clear()
                await arrived.wait()

        query = (await next_event(b"event: endpoint")).split(b"?", 1)[1].strip()

        async def post(message: dict[str, Any]) -> None:
            body = json.dumps(message).encode()

            async def read() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            await app(scope("POST", "/messages", "good", query), read, record)
            assert starts[-1]["status"] == 202

        await post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}})
        await next_event(b'"id":1')
        await post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}})
        assert b'"text":"ann"' in await next_event(b'"id":2')
        stream.cancel()

    asyncio.run(asyncio.wait_for(go(), 20))


def test_wiremcp_sse_client_against_legacy_sse() -> None:
    """wiremcp's own HTTP+SSE client (as ClientGroup's ``"type": "sse"`` uses it) against the endpoint."""
    import asyncio

    from wiremcp.client import Client
    from wiremcp.protocol import Era
    from wiremcp.transports.sse.client import SSETransport

    with wiremcp_sse(EVERYTHING, "--legacy-sse") as port:

        async def go() -> None:
            async with Client(SSETransport(f"http://127.0.0.1:{port}/sse"), era="legacy") as client:
                assert client.era is Era.LEGACY and client.protocol_version == "2025-11-25"
                assert (await client.call_tool("test_simple_text", {})).text == "This is a simple text response for testing."

        asyncio.run(asyncio.wait_for(go(), 60))


@pytest.mark.parametrize(("extra", "words"), [
    ([], "only with --http"),
    (["--http", "--workers", "2"], "does not combine with --workers"),
])
def test_legacy_sse_flag_refusals(extra: list[str], words: str) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", EVERYTHING, "--legacy-sse", *extra], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and words in done.stderr, done.stderr


def test_shutdown_ends_open_sse_streams_at_once() -> None:
    """SIGTERM with an HTTP+SSE stream open: the stream ends first, the process exits well within the
    graceful-shutdown timeout (before: 6.3 s and uvicorn's "timeout graceful shutdown exceeded")."""
    import signal
    import subprocess
    import time

    from _servers import wait_listening

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", EVERYTHING, "--http", "--legacy-sse", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_listening(port, proc)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/sse")
        stream = conn.getresponse()
        assert stream.read1(4096).startswith(b"event: endpoint")
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        took = time.monotonic() - started
        assert stream.read() == b""  # the stream ended cleanly
        conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert took < 3, (took, stderr)
    assert "Traceback" not in stderr and "graceful shutdown exceeded" not in stderr, stderr
