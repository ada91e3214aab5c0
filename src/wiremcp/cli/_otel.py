"""The OpenTelemetry SDK for ``wiremcp run``, set up from the standard ``OTEL_*`` variables.

A library only makes spans and metrics through the OpenTelemetry API; the
process that serves decides where they go. ``wiremcp run`` is that process,
so when the server it loads has telemetry on, it sets the SDK up as the
OpenTelemetry environment variables say.

Rules:

* only when the server's telemetry is on and the process has no provider of
  its own yet (the global ones are still the API's proxies): a server file
  that configures the SDK itself is left alone;
* the resource comes from ``Resource.create`` (``OTEL_RESOURCE_ATTRIBUTES``,
  ``OTEL_SERVICE_NAME``), with the server's name as ``service.name`` when
  neither names one;
* ``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` (comma-separated)
  pick ``otlp`` (the default: OTLP over HTTP/protobuf, configured by the
  ``OTEL_EXPORTER_OTLP_*`` variables), ``console`` (to stderr: over stdio,
  stdout carries MCP) or ``none``; another name is an error naming these;
* spans go through a ``BatchSpanProcessor`` and metrics through a
  ``PeriodicExportingMetricReader`` (``OTEL_METRIC_EXPORT_INTERVAL``); the
  SDK flushes both when the process exits.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["configure_sdk", "EXPORTERS"]

EXPORTERS = ("otlp", "console", "none")


def _names(variable: str) -> list[str]:
    names = [name.strip().lower() for name in os.environ.get(variable, "otlp").split(",") if name.strip()]
    for name in names:
        if name not in EXPORTERS:
            raise ValueError(f"{variable}={name!r} is not supported by wiremcp run; use one of {', '.join(EXPORTERS)}")
    return names


def configure_sdk(service_name: str) -> bool:
    """Set the global tracer and meter providers from the environment; False if the process had its own."""
    from opentelemetry import metrics, trace

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    traces, readers = _names("OTEL_TRACES_EXPORTER"), _names("OTEL_METRICS_EXPORTER")
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "unknown_service")).startswith("unknown_service"):
        resource = resource.merge(Resource.create({SERVICE_NAME: service_name}))
    tracer_provider = TracerProvider(resource=resource)
    for name in traces:
        if name != "none":
            tracer_provider.add_span_processor(BatchSpanProcessor(_span_exporter(name)))
    trace.set_tracer_provider(tracer_provider)
    if not isinstance(metrics.get_meter_provider(), MeterProvider):
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        exporters = [_metric_exporter(name) for name in readers if name != "none"]
        metrics.set_meter_provider(
            MeterProvider(resource=resource, metric_readers=[PeriodicExportingMetricReader(e) for e in exporters])
        )
    return True


def _span_exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _metric_exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stderr)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()
