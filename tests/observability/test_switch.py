"""Telemetry is on only when asked, and off it costs nothing (docs/observability.md, "Switching it on").

Off: no OpenTelemetry module is imported and neither the server nor the
client has an observer (``protocol/observers.py``: their paths are their
own); the HTTP app records no client address, and the variable that would
hold it is never made; checked in a fresh interpreter after real calls and
a notification. On or off, nothing is replaced on a live object: no method
of the server or the client is an instance attribute. On: by the
argument, by ``WIREMCP_OTEL``, or by a standard ``OTEL_*`` variable that
configures an exporter or a service (``OTEL_SDK_DISABLED=true`` wins).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from wiremcp.client._telemetry import wanted as client_wanted
from wiremcp.server._telemetry import wanted as server_wanted

pytest.importorskip("opentelemetry.sdk", reason="the telemetry tests need the [otel] extra")

PROBE = """
import asyncio, sys
import wiremcp

server = wiremcp.Server("probe")

@server.tool(inline=True)
def echo(text: str) -> str:
    return text

async def main():
    async with wiremcp.Client.memory(server) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        client.notify("notifications/roots/list_changed")  # through ServerConnection.notification
        await asyncio.sleep(0.01)
        return client

client = asyncio.run(main())
from wiremcp.protocol import telemetry
from wiremcp.transports.http import MCPApp

patched = {"handle", "handle_in_session", "open_session"} & set(vars(server))
patched |= {"_roundtrip", "_transmit", "_write", "connect", "aclose"} & set(vars(client))
print(
    sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry"),
    bool(patched),  # nothing replaced on the instances, on or off
    len(server.observers),
    len(server.middlewares),  # telemetry is an observer, not a middleware
    len(client._observers),
    MCPApp(server)._peer is not None,  # the HTTP app sets no client address per request
    telemetry._peer is not None,  # and the variable is never made
)
"""

OFF = "[] False 0 0 0 False False"


def _probe(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WIREMCP_"))}
    done = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_off_nothing_is_imported_or_installed() -> None:
    assert _probe() == OFF


def test_off_by_the_variable_even_with_otel_variables_set() -> None:
    assert _probe(WIREMCP_OTEL="0", OTEL_SERVICE_NAME="svc") == OFF


@pytest.mark.parametrize("env", [{"WIREMCP_OTEL": "1"}, {"OTEL_SERVICE_NAME": "svc"}, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}])
def test_on_by_the_environment(env: dict[str, str]) -> None:
    modules, patched, server_observers, middleware, client_observers, app_peer, peer = _probe(**env).rsplit(" ", 6)
    assert "'opentelemetry.trace'" in modules and "'opentelemetry.metrics'" in modules
    assert (patched, server_observers, middleware, client_observers) == ("False", "1", "0", "1")
    assert (app_peer, peer) == ("True", "True")


@pytest.mark.parametrize("wanted", [server_wanted, client_wanted])
def test_the_decision(wanted) -> None:
    assert wanted(True, {}) is True
    assert wanted(False, {"WIREMCP_OTEL": "1"}) is False
    assert wanted(None, {}) is False
    assert wanted(None, {"WIREMCP_OTEL": "true"}) is True
    assert wanted(None, {"WIREMCP_OTEL": "off", "OTEL_TRACES_EXPORTER": "otlp"}) is False
    assert wanted(None, {"OTEL_TRACES_EXPORTER": "console"}) is True
    assert wanted(None, {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}) is False
    # a variable that configures nothing on its own does not switch it on
    assert wanted(None, {"OTEL_RESOURCE_ATTRIBUTES": "a=b"}) is False
    with pytest.raises(ValueError, match="WIREMCP_OTEL"):
        wanted(None, {"WIREMCP_OTEL": "maybe"})


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
CALL = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":'
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},'
    b'"traceparent":"' + TRACEPARENT.encode() + b'"}}}\n'
)


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WIREMCP_"))}
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", "examples/echo.py"],
        input=CALL, env={**clean, **env}, capture_output=True, timeout=60,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )


def test_wiremcp_run_sets_up_the_sdk_from_the_environment() -> None:
    """OTEL_TRACES_EXPORTER=console: on, exported to stderr (stdout carries only MCP), continuing the caller's trace."""
    done = _run({"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"})
    assert done.returncode == 0, done.stderr
    [reply] = done.stdout.splitlines()
    assert b'"text":"hi"' in reply
    err = done.stderr.decode()
    assert '"name": "tools/call echo"' in err and '"kind": "SpanKind.SERVER"' in err
    assert '"trace_id": "0x4bf92f3577b34da6a3ce929d0e0e4736"' in err and '"parent_id": "0x00f067aa0ba902b7"' in err
    assert '"service.name": "echo"' in err  # the server's name, as OTEL_SERVICE_NAME is unset


def test_an_unknown_exporter_is_refused() -> None:
    done = _run({"OTEL_TRACES_EXPORTER": "zipkin"})
    assert done.returncode == 2
    assert b"OTEL_TRACES_EXPORTER='zipkin' is not supported by wiremcp run; use one of otlp, console, none" in done.stderr


def test_providers_of_its_own_instead_of_the_global_ones() -> None:
    """``telemetry={"tracer_provider": ..., "meter_provider": ...}``: on, and nothing reaches the global providers."""
    import asyncio

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import wiremcp

    def own() -> tuple[dict[str, object], InMemorySpanExporter, InMemoryMetricReader]:
        exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        return {"tracer_provider": tracer_provider, "meter_provider": MeterProvider(metric_readers=[reader])}, exporter, reader

    server_side, server_spans, server_metrics = own()
    client_side, client_spans, client_metrics = own()
    server = wiremcp.Server("own", telemetry=server_side)

    @server.tool(inline=True)
    def echo(text: str) -> str:
        return text

    async def main() -> None:
        async with wiremcp.Client.memory(server, telemetry=client_side) as client:
            await client.call_tool("echo", {"text": "hi"})

    asyncio.run(main())
    [served] = [s for s in server_spans.get_finished_spans() if s.name == "tools/call echo"]
    [sent] = [s for s in client_spans.get_finished_spans() if s.name == "tools/call echo"]
    assert served.parent is not None and served.parent.span_id == sent.context.span_id
    names = {m.name for r in server_metrics.get_metrics_data().resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert "mcp.server.operation.duration" in names
    names = {m.name for r in client_metrics.get_metrics_data().resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert "mcp.client.operation.duration" in names
    with pytest.raises(TypeError, match="unknown key"):
        wiremcp.Server("own", telemetry={"tracer": None})
    with pytest.raises(TypeError, match="telemetry is True, False, None or"):
        wiremcp.Client.memory(server, telemetry="yes")


def test_the_parent_is_the_context_in_meta_and_the_ambient_one_a_link() -> None:
    """mcp.md, Context propagation: the ``_meta`` context is the parent, the ambient context a link (or the parent)."""
    import asyncio

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import wiremcp
    from wiremcp.jsonrpc import Request

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    server = wiremcp.Server("ambient", telemetry={"tracer_provider": provider})

    @server.tool(inline=True)
    def echo(text: str) -> str:
        return text

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}

    async def handle(id: int, extra: dict[str, str]) -> None:
        params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": {**meta, **extra}}
        await server.handle(Request(id, "tools/call", params))

    async def main() -> int:
        with provider.get_tracer("tests").start_as_current_span("http request") as ambient:
            await handle(1, {"traceparent": TRACEPARENT})
            await handle(2, {})
        return ambient.get_span_context().span_id

    ambient = asyncio.run(main())
    first, second = [s for s in spans.get_finished_spans() if s.name == "tools/call echo"]
    assert first.parent.is_remote and first.parent.span_id == 0x00F067AA0BA902B7
    assert first.context.trace_id == 0x4BF92F3577B34DA6A3CE929D0E0E4736
    assert [link.context.span_id for link in first.links] == [ambient]
    assert second.parent.span_id == ambient and not second.links
