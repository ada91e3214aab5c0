"""What the soak (bench/soak.py) found on the HTTP transport, each checked over a real server on loopback.

The server is tests/servers/soak.py (examples/everything.py plus the soak's
tools), started as the soak starts it; its ``soak_debug`` tool reports what the
process holds.

* Reference cycles (issue 13, the soak's growth): a legacy request's stream and
  its `Call` referred to each other, and the task's context held the stream,
  so every settled request left a cycle holding its reply (a 1 MiB echo: about
  2 MiB) until the cyclic collector ran. Measured with the collector off
  (``WIREMCP_SOAK_GC=off``): after N calls, a collection finds no `Call`, no
  request `_Stream`, and next to none of the payloads' bytes.
* The hung ``DELETE`` of the 30-minute soak: the soak gave the HTTP server's
  stderr a pipe it never read; the server logs a warning for every request it
  refuses, and once the pipe was full its next write blocked the event loop.
  The soak now gives it a file (`start_http_server`), and a server that has
  logged far more than a pipe holds still answers ``DELETE``. And a session
  with everything open at once (its GET stream, a request waiting for the
  client's answer to an elicitation, a request in flight), beside a modern
  ``subscriptions/listen``, is ended by ``DELETE`` at once: 204, and every
  stream of it ends.
* List changes a session holds unsent: a legacy session with no ``GET``
  stream open kept a copy of every ``list_changed`` up to its replay buffer
  (256 KiB of accounting, about 1,300 copies); the sessions the soak abandons
  held theirs full until the idle timeout ended them, and those copies were
  most of the HTTP server's memory. A stream now holds one unsent copy of each
  (transports/http/_coalesce.py).
* The client's bound: `Client.aclose` waits at most ``_DELETE_TIMEOUT`` (5 s)
  for the server's answer to the ``DELETE`` that ends a legacy session; here
  against a real loopback server that reads the ``DELETE`` and never answers.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib.util
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from conftest import ROOT, request

pytestmark = pytest.mark.slow

pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")
pytest.importorskip("aiohttp", reason="the HTTP client needs the [http] extra")

import test_http as _http_tests  # noqa: E402 - after importorskip
from test_http_legacy import SSE, _connection, send  # noqa: E402

from wiremcp import Client  # noqa: E402
from wiremcp.transports.http import client as http_client  # noqa: E402

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
SERVER = ROOT / "tests" / "servers" / "soak.py"


def _bench_soak() -> Any:
    spec = importlib.util.spec_from_file_location("bench_soak", ROOT / "bench" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # (its dataclasses look it up)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def soak_server() -> Iterator[_http_tests.ServerProcess]:
    """The soak's server with its cyclic collector off: what a load leaves in cycles stays countable."""
    env = {**os.environ, "WIREMCP_SOAK_GC": "off",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    old = dict(os.environ)
    os.environ.update(env)  # ServerProcess passes the environment through
    try:
        proc = _http_tests.ServerProcess(
            [sys.executable, str(SERVER), "--port", "0"], r"at http://127\.0\.0\.1:(\d+)/mcp"
        )
    finally:
        os.environ.clear()
        os.environ.update(old)
    yield proc
    proc.stop()


def _debug(result: Any) -> dict[str, Any]:
    info = result.structured_content
    assert isinstance(info, dict), result
    return info


# -- reference cycles --------------------------------------------------------------


def test_settled_legacy_requests_leave_no_cycles_holding_their_replies(soak_server: _http_tests.ServerProcess) -> None:
    url = f"http://127.0.0.1:{soak_server.port}/mcp"
    text = "x" * (256 * 1024)
    calls = 12

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client.http(url, era="legacy") as client:
            await client.call_tool("soak_echo", {"text": "warm"})
            before = _debug(await client.call_tool("soak_debug", {"detail": True}))  # collects what came before
            for _ in range(calls):
                assert (await client.call_tool("soak_echo", {"text": text})).text == text
            after = _debug(await client.call_tool("soak_debug", {"detail": True}))
            return before, after

    _, after = asyncio.run(run())
    cyclic = after["cyclic_types"]
    # Before the fix each call left its Call, its _Stream and its Task in a cycle (12 of each here).
    assert cyclic.get("Call", 0) == 0, cyclic
    assert cyclic.get("_Stream", 0) == 0, cyclic
    assert cyclic.get("Task", 0) == 0, cyclic
    # ... and with them its reply: 12 x (256 KiB encoded, and again without its newline).
    held = sum(after["cyclic_held_kib"].values())
    assert held < 256, after["cyclic_held_kib"]


# -- DELETE --------------------------------------------------------------------------


def test_the_soak_gives_its_http_server_a_log_file_and_the_server_answers_after_logging_a_lot(tmp_path: Path) -> None:
    soak = _bench_soak()
    port = soak.free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    log = tmp_path / "http.log"
    proc = soak.start_http_server(port, 30.0, env, log)
    try:
        _listening(port, proc)
        refused = 0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        try:
            # Each refusal is one warning on stderr (~100 bytes): 1,000 of them are more than a pipe holds.
            while log.stat().st_size < 96 * 1024:
                conn.request("POST", "/mcp", body=b"{}", headers={
                    "Origin": "http://evil.example", "Content-Type": "application/json", "Accept": ACCEPT})
                resp = conn.getresponse()
                resp.read()
                assert resp.status == 403
                refused += 1
                assert refused < 5000, "the server logs nothing for a refused Origin"
        finally:
            conn.close()
        sid = _open_session(port)
        gone = send(port, None, {"Mcp-Session-Id": sid}, method="DELETE", timeout=10)
        assert gone.status == 204, gone
        assert "not allowed (DNS-rebinding protection" in soak.log_tail(log)
    finally:
        proc.terminate()
        proc.wait(15)


def _listening(port: int, proc: Any) -> None:
    import socket

    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the soak's HTTP server did not start"
            time.sleep(0.05)


def _open_session(port: int, capabilities: dict[str, Any] | None = None) -> str:
    reply = send(port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": capabilities or {}, "clientInfo": {"name": "t", "version": "0"}}})
    assert reply.status == 200, reply
    sid = reply.headers["mcp-session-id"]
    note = send(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": sid})
    assert note.status == 202, note
    return sid


def _post(port: int, sid: str | None, message: dict[str, Any]) -> SSE:
    """A POST sent (in a session, or a modern one with its headers); its reply read later, as it arrives."""
    headers = {"Mcp-Session-Id": sid, "Content-Type": "application/json", "Accept": ACCEPT} if sid is not None else (
        _http_tests.mcp_headers(message))
    return SSE(_connection(port, "POST", "/mcp", headers, orjson.dumps(message), 15))


def test_delete_ends_a_session_with_everything_open_at_once(soak_server: _http_tests.ServerProcess) -> None:
    port = soak_server.port
    sid = _open_session(port, {"elicitation": {}})
    session = {"Mcp-Session-Id": sid}
    # The session's GET stream, carried (its priming event is in).
    get = SSE(_connection(port, "GET", "/mcp", {"Accept": "text/event-stream", **session}, None, 15))
    assert get.status == 200 and get.is_sse
    assert get.event() is not None
    # A request waiting for the client's answer: an elicitation nobody answers.
    asking = _post(port, sid, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_elicitation", "arguments": {"message": "never answered"}}})
    asked = asking.until(lambda e: e.message is not None)
    assert asked[-1].message["method"] == "elicitation/create", asked
    # A request in flight that has sent nothing yet (its reply's head is not written).
    sleeping = _post(port, sid, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "soak_sleep", "arguments": {"seconds": 60}}})
    # A modern listen beside the session, on the same server.
    listen = _post(port, None, request("l", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    assert listen.status == 200 and listen.is_sse
    try:
        # The session is busy: the in-flight request has reached the server once it is counted here.
        pending = send(port, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "soak_debug", "arguments": {}}}, session)
        assert pending.status == 200, pending
        gone = send(port, None, session, method="DELETE", timeout=10)
        assert gone.status == 204, gone
        assert gone.body == b""
        # Every stream of the session ends: the GET stream and the elicitation's stream (its call is
        # cancelled, so no response follows the request to the client), and the silent request gets 404.
        assert get.rest() == []
        assert [e.message for e in asking.rest() if e.message is not None] == []
        assert sleeping.status == 404, sleeping.status
        assert send(port, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, session).status == 404
        # The server goes on: a modern request is answered.
        ping = request(5, "tools/list", {})
        assert send(port, ping, _http_tests.mcp_headers(ping)).status == 200
    finally:
        for sse in (get, asking, sleeping, listen):
            sse.close()


# -- list changes unsent ----------------------------------------------------------------


def test_a_session_with_no_get_stream_keeps_one_unsent_copy_of_each_list_change(
    soak_server: _http_tests.ServerProcess,
) -> None:
    port = soak_server.port
    sid = _open_session(port)
    session = {"Mcp-Session-Id": sid}
    # 2,000 changes of the tool list and 2,000 of the prompt list, made by another (modern) client.
    changes = request(1, "tools/call", {"name": "soak_changes", "arguments": {"count": 2000}})
    assert send(port, changes, _http_tests.mcp_headers(changes)).status == 200
    # The session's unsent messages, counted in the server (a request of the session itself: by
    # the time it is answered, every change has been offered to the session's stream).
    debug = send(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "soak_debug", "arguments": {"memory": True}}}, session)
    assert debug.status == 200, debug
    held = orjson.loads(debug.body)["result"]["structuredContent"]["sessions"]
    # Before the fix: the stream kept a copy per change up to replay_buffer (256 KiB accounted).
    assert held["live"] >= 1 and held["pending_kib"] < 4, held
    # The GET stream delivers what was kept, then the marker: one copy of each list change.
    get = SSE(_connection(port, "GET", "/mcp", {"Accept": "text/event-stream", **session}, None, 15))
    try:
        assert get.status == 200 and get.is_sse
        marker = request(2, "tools/call", {"name": "soak_changes", "arguments": {"count": 0, "marker": True}})
        assert send(port, marker, _http_tests.mcp_headers(marker)).status == 200
        got = [e.message["method"] for e in get.until(
            lambda e: e.message is not None and e.message.get("method") == "notifications/resources/list_changed"
        ) if e.message is not None]
        assert got == ["notifications/tools/list_changed", "notifications/prompts/list_changed",
                       "notifications/resources/list_changed"], (len(got), got[:6])
    finally:
        get.close()
        send(port, None, session, method="DELETE", timeout=10)


# -- the client's bound ------------------------------------------------------------------


class _SilentOnDelete:
    """A loopback HTTP/1.1 server: a legacy session for ``initialize``, 202 for notifications,
    405 for GET (no stream), and nothing at all for ``DELETE``: it reads it and keeps the connection."""

    def __init__(self) -> None:
        self.deletes = 0
        self.deleted = asyncio.Event()
        self._held: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split(" ")[0]
            fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body = await reader.readexactly(int(fields.get("content-length", "0")))
            if method == "DELETE":
                self.deletes += 1
                self.deleted.set()
                self._held.append(writer)
                return  # never answered; the connection stays open
            if method == "GET":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            else:
                message = orjson.loads(body)
                if "id" not in message:
                    writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                else:
                    reply = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                        "protocolVersion": LEGACY, "capabilities": {}, "serverInfo": {"name": "silent", "version": "0"}}})
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(reply), reply))
            await writer.drain()

    def close(self) -> None:
        for writer in self._held:
            writer.close()


def test_closing_a_legacy_client_waits_a_bounded_time_for_an_unanswered_delete(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert http_client._DELETE_TIMEOUT == 5.0
    bound = 1.0
    monkeypatch.setattr(http_client, "_DELETE_TIMEOUT", bound)

    async def run() -> tuple[float, int]:
        silent = _SilentOnDelete()
        server = await asyncio.start_server(silent.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            client = Client.http(f"http://127.0.0.1:{port}/mcp", era="legacy")
            await client.__aenter__()
            assert client.transport.session_id == "s1"  # type: ignore[attr-defined]
            started = time.monotonic()
            await asyncio.wait_for(client.__aexit__(None, None, None), bound + 30)
            return time.monotonic() - started, silent.deletes
        finally:
            silent.close()
            server.close()

    with caplog.at_level(logging.WARNING, logger="wiremcp.client"):
        elapsed, deletes = asyncio.run(run())
    assert deletes == 1
    assert elapsed >= bound  # it waited for the answer, then gave up
    assert any("did not answer DELETE" in r.getMessage() for r in caplog.records), caplog.text
