"""A server with telemetry on, exporting to the OpenTelemetry SDK's in-memory exporter and reader.

Served over stdio or HTTP by ``wiremcp run`` (tests/observability/test_otel.py).
Telemetry is switched on by ``WIREMCP_OTEL=1`` in the environment the test
gives it, not in code. The ``telemetry_export`` tool hands back what the SDK
holds so far: the finished spans (name, kind, ids, parent, links, status,
attributes) and the points of ``mcp.server.operation.duration``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import wiremcp

exporter = InMemorySpanExporter()
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(_provider)
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))

server = wiremcp.Server("traced", version="1.0.0")


@server.tool(inline=True)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(inline=True)
def broken() -> str:
    """Fail: a tool execution error (isError: true)."""
    raise wiremcp.ToolError("broken on purpose")


@server.tool()
async def greet(ctx: wiremcp.Context) -> str:
    """Ask for a name (one MRTR round in 2026-07-28, a real elicitation request in 2025-11-25)."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {answer['content']['name']}"


tracer = trace.get_tracer("traced_server")


@server.tool(task="always")
async def report(year: int) -> str:
    """Run as a task; the work makes a span of its own (it continues the request's trace)."""
    with tracer.start_as_current_span("build report"):
        await asyncio.sleep(0.01)
    return f"report for {year}"


@server.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Review: {code}"


def _span(span: Any) -> dict[str, Any]:
    ctx = span.get_span_context()
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent": format(span.parent.span_id, "016x") if span.parent is not None else None,
        "remote_parent": bool(span.parent is not None and span.parent.is_remote),
        "links": [format(link.context.span_id, "016x") for link in span.links],
        "status": span.status.status_code.name,
        "description": span.status.description,
        "attributes": dict(span.attributes or {}),
    }


@server.tool(inline=True)
def telemetry_export() -> dict[str, Any]:
    """The finished spans and the operation-duration points, as the SDK holds them now."""
    points: list[dict[str, Any]] = []
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    points.append(
                        {
                            "name": metric.name,
                            "unit": metric.unit,
                            "count": point.count,
                            "bounds": list(point.explicit_bounds),
                            "attributes": dict(point.attributes),
                        }
                    )
    return {"spans": [_span(s) for s in exporter.get_finished_spans()], "metrics": points}
