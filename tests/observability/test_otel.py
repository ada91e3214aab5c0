"""OpenTelemetry end to end: a real client and a real server, stdio and Streamable HTTP, both eras.

The server (tests/observability/traced_server.py) runs as ``wiremcp run`` in
its own process with ``WIREMCP_OTEL=1`` and exports to the SDK's in-memory
exporter and metric reader; its ``telemetry_export`` tool hands them back.
The client runs here, with ``telemetry=True`` and the SDK's in-memory
exporter and reader installed as this process's global providers.

Checked against the OpenTelemetry semantic conventions for MCP
(open-telemetry/semantic-conventions docs/gen-ai/mcp.md, status Development,
commit 04f167230afe1a2244c4c860cea0e716fb6ee59e): span names
``{mcp.method.name} {target}``, kinds, the mcp.*, jsonrpc.*, gen_ai.* and
network attributes, errors (a JSON-RPC error, a tool result with
``isError``), the trace context carried in ``params._meta`` (each server span
is the child of the client span of the same request, across MRTR rounds),
and both ``mcp.*.operation.duration`` histograms with the conventions'
bucket boundaries. Also: what a 2025-11-25 session answers itself
(``initialize``, ``ping``, ``logging/setLevel``, ``resources/subscribe``) and
every notification sent by the client get their SERVER span, each the child
of the client's CLIENT span; over HTTP the server spans carry
``client.address`` and ``client.port``.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the telemetry tests need the [otel] extra")

from opentelemetry import metrics, trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from wiremcp import Client  # noqa: E402
from wiremcp.client import RemoteError  # noqa: E402

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SERVER = str(HERE / "traced_server.py")
BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]
VERSION = {"modern": "2026-07-28", "legacy": "2025-11-25"}

_exporter = InMemorySpanExporter()
_reader = InMemoryMetricReader()


@pytest.fixture(scope="module", autouse=True)
def providers() -> None:
    """This process's global providers (set once: the OpenTelemetry API refuses a second)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_exporter))
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[_reader]))


class HTTPServer:
    """``wiremcp run traced_server.py --http --port 0`` with telemetry on; knows its port once up."""

    def __init__(self) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-otel-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "run", SERVER, "--http", "--port", "0", "--log-level", "INFO"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT,
            env={**os.environ, "WIREMCP_OTEL": "1"},
        )
        deadline = time.monotonic() + 30
        while True:
            found = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", self.log_path.read_text(errors="replace"))
            if found:
                self.url = found.group(1)
                return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"the server did not start:\n{self.log_path.read_text(errors='replace')}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def http_server() -> Iterator[HTTPServer]:
    pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")
    server = HTTPServer()
    yield server
    server.stop()


def _client(transport: str, era: str, http_server: Any, **more: Any) -> Client:
    options: dict[str, Any] = {**more, "era": era, "telemetry": True, "elicitation": lambda params: {"action": "accept", "content": {"name": "Ada"}}}
    if transport == "stdio":
        return Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env={**os.environ, "WIREMCP_OTEL": "1"}, **options)
    return Client.http(http_server.url, **options)


def _client_span(span: Any) -> dict[str, Any]:
    ctx = span.get_span_context()
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent": format(span.parent.span_id, "016x") if span.parent is not None else None,
        "status": span.status.status_code.name,
        "description": span.status.description,
        "attributes": dict(span.attributes or {}),
    }


async def _session(client: Client) -> tuple[str, dict[str, Any]]:
    """One traced agent turn: a call, a tool error, an MRTR call, a prompt, a JSON-RPC error. The turn's trace id."""
    tracer = trace.get_tracer("tests")
    with tracer.start_as_current_span("agent turn") as turn:
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        assert (await client.call_tool("broken")).is_error
        assert (await client.call_tool("greet")).text == "hello Ada"
        await client.get_prompt("review", {"code": "x = 1"})
        with pytest.raises(RemoteError) as refused:
            await client.request("no/such/method")
        assert refused.value.code == -32601
    exported = (await client.call_tool("telemetry_export")).structured_content
    return format(turn.get_span_context().trace_id, "032x"), exported


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_spans_and_metrics_across_client_and_server(transport: str, era: str, request: pytest.FixtureRequest) -> None:
    http_server = request.getfixturevalue("http_server") if transport == "http" else None
    _exporter.clear()

    async def main() -> tuple[str, dict[str, Any]]:
        async with _client(transport, era, http_server) as client:
            return await _session(client)

    trace_id, exported = asyncio.run(main())
    ours = [_client_span(s) for s in _exporter.get_finished_spans() if s.name != "agent turn"]
    in_turn = [s for s in ours if s["trace_id"] == trace_id]
    served = [s for s in exported["spans"] if s["trace_id"] == trace_id]
    version = VERSION[era]

    # -- the client's spans: one per request sent in the turn, children of the caller's span
    names = [s["name"] for s in in_turn]
    expected = ["tools/call echo", "tools/call broken", "tools/call greet"]
    if era == "modern":  # MRTR: the second round of greet is a request of its own
        expected.append("tools/call greet")
    expected += ["prompts/get review", "no/such/method"]
    assert names == expected
    turn_ids = {s["parent"] for s in in_turn}
    assert len(turn_ids) == 1 and None not in turn_ids
    for span in in_turn:
        attrs = span["attributes"]
        assert span["kind"] == "CLIENT"
        assert attrs["mcp.method.name"] == span["name"].split(" ")[0]
        assert attrs["mcp.protocol.version"] == version
        assert attrs["jsonrpc.request.id"]
        if transport == "stdio":
            assert attrs["network.transport"] == "pipe"
            assert "server.address" not in attrs
        else:
            assert attrs["network.transport"] == "tcp"
            assert attrs["network.protocol.name"] == "http"
            assert attrs["server.address"] == "127.0.0.1"
            assert attrs["server.port"] == int(http_server.url.split(":")[2].split("/")[0])
            assert ("mcp.session.id" in attrs) is (era == "legacy")
    echo, broken, *_, prompt, missing = in_turn
    assert echo["attributes"]["gen_ai.tool.name"] == "echo"
    assert echo["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert echo["status"] == "UNSET" and "error.type" not in echo["attributes"]
    assert broken["attributes"]["error.type"] == "tool_error" and broken["status"] == "ERROR"
    assert prompt["attributes"]["gen_ai.prompt.name"] == "review"
    assert "gen_ai.operation.name" not in prompt["attributes"]
    assert missing["attributes"]["error.type"] == "-32601"
    assert missing["attributes"]["rpc.response.status_code"] == "-32601"
    assert missing["status"] == "ERROR" and "no/such/method" in missing["description"]

    # -- the server's spans: one per request served, each the child of the client span that sent it
    by_id = {s["span_id"]: s for s in in_turn}
    assert [s["name"] for s in served] == names
    for span in served:
        client_span = by_id[span["parent"]]
        assert span["remote_parent"] and span["kind"] == "SERVER"
        assert span["name"] == client_span["name"]
        attrs = span["attributes"]
        assert attrs["jsonrpc.request.id"] == client_span["attributes"]["jsonrpc.request.id"]
        assert attrs["mcp.protocol.version"] == version
        assert attrs["network.transport"] == ("pipe" if transport == "stdio" else "tcp")
        # a session id exists only for a 2025-11-25 session over HTTP (stdio sessions have none)
        assert ("mcp.session.id" in attrs) is (era == "legacy" and transport == "http")
        if era == "legacy" and transport == "http":
            assert attrs["mcp.session.id"] == client_span["attributes"]["mcp.session.id"]
        assert attrs.get("error.type") == client_span["attributes"].get("error.type")
        assert span["status"] == client_span["status"]
        _peer_attributes(attrs, transport)
    assert served[1]["attributes"]["error.type"] == "tool_error"
    assert served[-1]["attributes"]["rpc.response.status_code"] == "-32601"
    assert served[-1]["description"] == missing["description"]

    # -- the duration histograms, both sides, with the conventions' buckets and no ids in the attributes
    server_points = [p for p in exported["metrics"] if p["name"] == "mcp.server.operation.duration"]
    assert server_points and all(p["unit"] == "s" and p["bounds"] == BUCKETS for p in server_points)
    # (one HTTP server serves both eras' tests: a point per protocol version)
    echo_calls = [
        p for p in server_points
        if p["attributes"].get("gen_ai.tool.name") == "echo" and p["attributes"]["mcp.protocol.version"] == version
    ]
    assert len(echo_calls) == 1 and echo_calls[0]["count"] == 1
    tool_errors = [p for p in server_points if p["attributes"].get("error.type") == "tool_error"]
    assert tool_errors and tool_errors[0]["attributes"]["gen_ai.tool.name"] == "broken"
    for point in server_points:
        assert "jsonrpc.request.id" not in point["attributes"] and "mcp.session.id" not in point["attributes"]
        assert "client.address" not in point["attributes"]
    data = _reader.get_metrics_data()
    client_points = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "mcp.client.operation.duration"
        for point in metric.data.data_points
    ]
    assert client_points and all(list(p.explicit_bounds) == BUCKETS for p in client_points)
    refused = [p for p in client_points if p.attributes.get("rpc.response.status_code") == "-32601"]
    assert refused and refused[0].attributes["error.type"] == "-32601"

    # -- a 2025-11-25 session's duration, on both sides (the server records it when the session ends)
    sessions = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "mcp.client.session.duration"
        for point in metric.data.data_points
        if point.attributes.get("network.transport") == ("pipe" if transport == "stdio" else "tcp")
    ]
    assert bool(sessions) is (era == "legacy")
    if era == "legacy":
        assert sessions[0].attributes["mcp.protocol.version"] == version
        assert list(sessions[0].explicit_bounds) == BUCKETS
    if transport == "http" and era == "legacy":  # the server is still up: ask it again, from a new client

        async def again() -> dict[str, Any]:
            async with Client.http(http_server.url) as client:
                return (await client.call_tool("telemetry_export")).structured_content

        points = [p for p in asyncio.run(again())["metrics"] if p["name"] == "mcp.server.session.duration"]
        assert points[0]["attributes"] == {"network.transport": "tcp", "network.protocol.name": "http", "mcp.protocol.version": version}


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_task_continues_the_trace(transport: str, era: str, request: pytest.FixtureRequest) -> None:
    """A tool run as a task: the call, every poll and the work itself are in the caller's trace."""
    http_server = request.getfixturevalue("http_server") if transport == "http" else None
    _exporter.clear()

    async def main() -> tuple[str, dict[str, Any]]:
        async with _client(transport, era, http_server, tasks=True) as client:
            tracer = trace.get_tracer("tests")
            with tracer.start_as_current_span("agent turn") as turn:
                assert (await client.call_tool("report", {"year": 2026})).text == "report for 2026"
            exported = (await client.call_tool("telemetry_export")).structured_content
            return format(turn.get_span_context().trace_id, "032x"), exported

    trace_id, exported = asyncio.run(main())
    ours = [_client_span(s) for s in _exporter.get_finished_spans() if s.name != "agent turn"]
    in_turn = [s for s in ours if s["trace_id"] == trace_id]
    served = [s for s in exported["spans"] if s["trace_id"] == trace_id]
    names = [s["name"] for s in in_turn]
    # 2025-11-25: the client lists the tools first, to read the tool's execution.taskSupport
    assert names[: names.index("tools/call report")] == ([] if era == "modern" else ["tools/list"])
    followed = {s["attributes"]["mcp.method.name"] for s in in_turn[names.index("tools/call report") + 1 :]}
    assert followed and all(method.startswith("tasks/") for method in followed)
    by_id = {s["span_id"]: s for s in in_turn}
    requests = [s for s in served if s["kind"] == "SERVER"]
    assert len(requests) == len(in_turn)
    for span in requests:
        assert by_id[span["parent"]]["name"] == span["name"]
    [work] = [s for s in served if s["name"] == "build report"]
    [call] = [s for s in requests if s["name"] == "tools/call report"]
    assert work["parent"] == call["span_id"]


def _peer_attributes(attrs: dict[str, Any], transport: str) -> None:
    """client.address and client.port: the loopback peer over HTTP (the ASGI scope's client), none over stdio."""
    if transport == "http":
        assert attrs["client.address"] == "127.0.0.1"
        assert type(attrs["client.port"]) is int and 0 < attrs["client.port"] < 65536
    else:
        assert "client.address" not in attrs and "client.port" not in attrs


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_what_a_legacy_session_answers_itself_and_notifications(transport: str, request: pytest.FixtureRequest) -> None:
    """2025-11-25: initialize, ping, logging/setLevel, resources/subscribe, a modern-only method and the
    notifications each get a SERVER span, the child of the CLIENT span that sent them (conventions: the
    client and server spans describe "the request or notification")."""
    http_server = request.getfixturevalue("http_server") if transport == "http" else None
    _exporter.clear()

    async def main() -> tuple[str, dict[str, Any], str | None]:
        tracer = trace.get_tracer("tests")
        client = _client(transport, "legacy", http_server)
        with tracer.start_as_current_span("agent turn") as turn:
            async with client:  # initialize and notifications/initialized inside the turn
                await client.ping()
                await client.request("logging/setLevel", {"level": "info"})
                await client.request("resources/subscribe", {"uri": "file:///notes.txt"})
                with pytest.raises(RemoteError) as refused:
                    await client.request("logging/setLevel", {"level": "loud"})
                assert refused.value.code == -32602
                with pytest.raises(RemoteError) as missing:
                    await client.request("subscriptions/listen", {})
                assert missing.value.code == -32601
                client.notify("notifications/roots/list_changed")
                session_id = getattr(client.transport, "session_id", None)
                await client.ping()  # the notification is in before the export is asked for
                exported = (await client.call_tool("telemetry_export")).structured_content
        return format(turn.get_span_context().trace_id, "032x"), exported, session_id

    trace_id, exported, session_id = asyncio.run(main())
    sent = [_client_span(s) for s in _exporter.get_finished_spans() if s.name != "agent turn"]
    sent = [s for s in sent if s["trace_id"] == trace_id and s["name"] != "tools/call telemetry_export"]
    served = [s for s in exported["spans"] if s["trace_id"] == trace_id and s["name"] != "tools/call telemetry_export"]
    expected = [
        "initialize", "notifications/initialized", "ping", "logging/setLevel", "resources/subscribe",
        "logging/setLevel", "subscriptions/listen", "notifications/roots/list_changed", "ping",
    ]
    assert [s["name"] for s in sent] == expected
    assert sorted(s["name"] for s in served) == sorted(expected)
    by_id = {s["span_id"]: s for s in sent}
    for span in served:
        client_span = by_id[span["parent"]]  # the server continued the client's trace, message by message
        assert span["remote_parent"] and span["kind"] == "SERVER" and client_span["kind"] == "CLIENT"
        assert span["name"] == client_span["name"]
        attrs, theirs = span["attributes"], client_span["attributes"]
        assert attrs["mcp.method.name"] == theirs["mcp.method.name"] == span["name"]
        assert attrs["mcp.protocol.version"] == theirs["mcp.protocol.version"] == "2025-11-25"
        assert attrs["network.transport"] == theirs["network.transport"] == ("pipe" if transport == "stdio" else "tcp")
        if span["name"].startswith("notifications/"):  # conventions: no jsonrpc.request.id without an id
            assert "jsonrpc.request.id" not in attrs and "jsonrpc.request.id" not in theirs
        else:
            assert attrs["jsonrpc.request.id"] == theirs["jsonrpc.request.id"]
        if transport == "http":
            assert attrs["network.protocol.name"] == "http"
            assert attrs["mcp.session.id"] == theirs["mcp.session.id"] == session_id
        else:
            assert "mcp.session.id" not in attrs
        _peer_attributes(attrs, transport)
        assert attrs.get("error.type") == theirs.get("error.type")
        assert span["status"] == client_span["status"]
    by_name = {s["name"]: s for s in served}
    assert by_name["resources/subscribe"]["attributes"]["mcp.resource.uri"] == "file:///notes.txt"
    bad_level = [s for s in served if s["name"] == "logging/setLevel" and s["status"] == "ERROR"]
    assert len(bad_level) == 1
    assert bad_level[0]["attributes"]["error.type"] == bad_level[0]["attributes"]["rpc.response.status_code"] == "-32602"
    assert "level" in bad_level[0]["description"]
    listen = by_name["subscriptions/listen"]["attributes"]
    assert listen["error.type"] == listen["rpc.response.status_code"] == "-32601"

    # the server's duration histogram counts the notifications too, without ids or addresses
    points = [p for p in exported["metrics"] if p["name"] == "mcp.server.operation.duration"]
    noted = [p for p in points if p["attributes"]["mcp.method.name"] == "notifications/initialized"]
    assert noted and noted[0]["count"] >= 1 and noted[0]["bounds"] == BUCKETS
    for point in points:
        assert not {"client.address", "client.port", "jsonrpc.request.id", "mcp.session.id"} & set(point["attributes"])
    client_points = [
        point
        for resource in _reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "mcp.client.operation.duration"
        for point in metric.data.data_points
        if point.attributes["mcp.method.name"] == "notifications/roots/list_changed"
    ]
    assert client_points and list(client_points[0].explicit_bounds) == BUCKETS


def test_a_modern_notification_over_stdio_and_the_client_address_of_modern_requests(
    http_server: HTTPServer,
) -> None:
    """2026-07-28: a notification over stdio gets its SERVER span (over HTTP one posted without a session is
    dropped unread: no span); requests over HTTP record the client's address and port."""
    _exporter.clear()

    async def main() -> tuple[str, dict[str, Any], dict[str, Any]]:
        tracer = trace.get_tracer("tests")
        with tracer.start_as_current_span("agent turn") as turn:
            async with _client("stdio", "modern", None) as client:
                client.notify("notifications/cancelled", {"requestId": 99, "reason": "nothing to cancel"})
                over_stdio = (await client.call_tool("telemetry_export")).structured_content
            async with _client("http", "modern", http_server) as client:
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
                over_http = (await client.call_tool("telemetry_export")).structured_content
        return format(turn.get_span_context().trace_id, "032x"), over_stdio, over_http

    trace_id, over_stdio, over_http = asyncio.run(main())
    sent = {
        s["span_id"]: s for s in map(_client_span, _exporter.get_finished_spans()) if s["trace_id"] == trace_id
    }
    [cancelled] = [s for s in over_stdio["spans"] if s["name"] == "notifications/cancelled"]
    assert cancelled["kind"] == "SERVER" and cancelled["remote_parent"]
    assert sent[cancelled["parent"]]["name"] == "notifications/cancelled"
    assert sent[cancelled["parent"]]["kind"] == "CLIENT"
    assert "jsonrpc.request.id" not in cancelled["attributes"]
    assert cancelled["attributes"]["network.transport"] == "pipe"
    _peer_attributes(cancelled["attributes"], "stdio")
    [echo] = [s for s in over_http["spans"] if s["name"] == "tools/call echo" and s["trace_id"] == trace_id]
    _peer_attributes(echo["attributes"], "http")
    assert echo["attributes"]["mcp.protocol.version"] == "2026-07-28"
