"""The server's spans as an OTLP collector receives them: ``wiremcp run --http`` exporting over OTLP/HTTP.

``wiremcp run examples/echo.py --http`` runs in its own process, telemetry
switched on by ``OTEL_EXPORTER_OTLP_ENDPOINT``, and ``wiremcp run`` sets up
the SDK to export to a real OTLP/HTTP receiver on loopback (standard library
plus ``opentelemetry-proto``, decoding each ``ExportTraceServiceRequest``).
A 2025-11-25 client (its own tracer provider, in memory) opens a session,
pings and calls a tool. Checked against the OpenTelemetry semantic
conventions for MCP (docs/gen-ai/mcp.md, status Development, commit
04f167230afe1a2244c4c860cea0e716fb6ee59e): the server span of every message,
``initialize``, ``notifications/initialized`` and ``ping`` included, arrives
as kind SERVER, the child of the client's CLIENT span, with
``client.address`` and ``client.port`` of the loopback peer.
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
from typing import Any, Iterator

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the telemetry tests need the [otel] extra")
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from otlp_receiver import SERVER_KIND, Receiver  # noqa: E402
from wiremcp import Client  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    sink = Receiver()
    yield sink
    sink.close()


@pytest.fixture
def served(receiver: Receiver) -> Iterator[str]:
    """``wiremcp run examples/echo.py --http --port 0``, exporting its spans to ``receiver``; its URL."""
    log_path = Path(tempfile.mkstemp(prefix="wiremcp-otlp-", suffix=".log")[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WIREMCP_"))}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_METRICS_EXPORTER="none", OTEL_BSP_SCHEDULE_DELAY="50")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "run", "examples/echo.py", "--http", "--port", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT, env=env,
        )
        try:
            deadline = time.monotonic() + 30
            while not (found := re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", log_path.read_text(errors="replace"))):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError(f"the server did not start:\n{log_path.read_text(errors='replace')}")
                time.sleep(0.05)
            yield found.group(1)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log_path.unlink(missing_ok=True)


def _attributes(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attr in span.attributes:
        value = attr.value
        out[attr.key] = value.int_value if value.WhichOneof("value") == "int_value" else value.string_value
    return out


def test_every_legacy_message_reaches_the_collector_with_the_client_address(receiver: Receiver, served: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def main() -> str | None:
        async with Client.http(served, era="legacy", telemetry={"tracer_provider": provider}) as client:
            await client.ping()
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            session_id: str | None = getattr(client.transport, "session_id", None)
            return session_id

    session_id = asyncio.run(main())
    assert session_id
    expected = ["initialize", "notifications/initialized", "ping", "tools/call echo"]
    sent = {span.context.span_id: span for span in exporter.get_finished_spans()}
    assert sorted(span.name for span in sent.values()) == sorted(expected)
    deadline = time.monotonic() + 15  # the server's batch processor exports every 50 ms
    while len(receiver.spans) < len(expected) and time.monotonic() < deadline:
        time.sleep(0.05)
    arrived = {span.name: span for span in receiver.spans}
    assert sorted(arrived) == sorted(expected)
    for name, span in arrived.items():
        client_span = sent[int.from_bytes(span.parent_span_id, "big")]  # the child of the client's span
        assert client_span.name == name and client_span.kind.name == "CLIENT"
        assert span.kind == SERVER_KIND
        attrs = _attributes(span)
        assert attrs["mcp.method.name"] == name.split(" ")[0]
        assert attrs["mcp.protocol.version"] == "2025-11-25"
        assert attrs["mcp.session.id"] == session_id
        assert attrs["network.transport"] == "tcp" and attrs["network.protocol.name"] == "http"
        assert attrs["client.address"] == "127.0.0.1"
        assert 0 < attrs["client.port"] < 65536
        if name == "notifications/initialized":
            assert "jsonrpc.request.id" not in attrs
        else:
            assert attrs["jsonrpc.request.id"] == dict(client_span.attributes or {})["jsonrpc.request.id"]
