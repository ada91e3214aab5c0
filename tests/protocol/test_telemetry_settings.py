"""When telemetry is on, and what wiremcp records with (wiremcp.protocol.telemetry).

docs/observability.md and the module's rules: an explicit ``telemetry=``
decides (a bool, or a mapping of providers, which means on); else
``WIREMCP_OTEL`` (1/true/yes/on or 0/false/no/off, anything else is an
error); else ``OTEL_SDK_DISABLED=true`` turns it off; else any standard
OpenTelemetry variable that configures an exporter or a service turns it on.
`instruments` gives wiremcp's tracer (scope ``wiremcp``, the package's
version) and the side's duration histograms with the conventions' names,
unit, descriptions and buckets, on the providers given.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

import pytest

from wiremcp.protocol.telemetry import BUCKETS, STANDARD_VARIABLES, client_peer, instruments, providers, replaying, wanted


def test_an_explicit_bool_wins_over_the_environment() -> None:
    assert wanted(True, {"WIREMCP_OTEL": "0", "OTEL_SDK_DISABLED": "true"}) is True
    assert wanted(False, {"WIREMCP_OTEL": "1", "OTEL_SERVICE_NAME": "svc"}) is False


def test_a_mapping_of_providers_means_on_and_is_checked_at_once() -> None:
    assert wanted({"tracer_provider": object()}, {"WIREMCP_OTEL": "0"}) is True
    assert wanted({}, {}) is True
    with pytest.raises(TypeError, match=r"unknown key\(s\) \['tracer'\]; the keys are tracer_provider, meter_provider"):
        wanted({"tracer": object()}, {})


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", " ON ", "True", "YES"])
def test_wiremcp_otel_switches_on(value: str) -> None:
    assert wanted(None, {"WIREMCP_OTEL": value, "OTEL_SDK_DISABLED": "true"}) is True


@pytest.mark.parametrize("value", ["0", "false", "no", "off", "", "  ", "OFF", "False"])
def test_wiremcp_otel_switches_off(value: str) -> None:
    assert wanted(None, {"WIREMCP_OTEL": value, "OTEL_SERVICE_NAME": "svc"}) is False


@pytest.mark.parametrize("value", ["maybe", "2", "enabled"])
def test_any_other_wiremcp_otel_is_an_error_naming_it(value: str) -> None:
    with pytest.raises(ValueError, match=f"WIREMCP_OTEL must be one of 1/true/yes/on or 0/false/no/off, not '{value}'"):
        wanted(None, {"WIREMCP_OTEL": value})


@pytest.mark.parametrize("name", STANDARD_VARIABLES)
def test_each_standard_variable_switches_on_unless_the_sdk_is_disabled(name: str) -> None:
    assert wanted(None, {name: "x"}) is True
    assert wanted(None, {name: ""}) is False
    assert wanted(None, {name: "x", "OTEL_SDK_DISABLED": "true"}) is False
    assert wanted(None, {name: "x", "OTEL_SDK_DISABLED": " TRUE "}) is False
    assert wanted(None, {name: "x", "OTEL_SDK_DISABLED": "false"}) is True


def test_nothing_set_means_off() -> None:
    assert wanted(None, {}) is False
    assert wanted(None, {"OTEL_SDK_DISABLED": "false", "OTEL_RESOURCE_ATTRIBUTES": "a=b"}) is False


def test_providers_of_a_setting() -> None:
    assert providers(None) == {}
    assert providers(True) == {}
    assert providers(False) == {}
    tracer = object()
    setting = {"tracer_provider": tracer}
    got = providers(setting)
    assert got == {"tracer_provider": tracer}
    got["meter_provider"] = 1
    assert setting == {"tracer_provider": tracer}  # a copy
    for wrong in ("yes", 1, ["tracer_provider"]):
        with pytest.raises(TypeError, match=r"telemetry is True, False, None or \{'tracer_provider': \.\.\., 'meter_provider': \.\.\.\}, not "):
            providers(wrong)  # type: ignore[arg-type]


def test_the_client_peer_and_replaying_variables_are_one_each_with_their_defaults() -> None:
    peer = client_peer()
    assert peer is client_peer()
    assert peer.get() is None
    token = peer.set(("127.0.0.1", 5000))
    try:
        assert client_peer().get() == ("127.0.0.1", 5000)
    finally:
        peer.reset(token)
    flag = replaying()
    assert flag is replaying()
    assert flag.get() is False
    assert flag is not peer


@pytest.mark.parametrize("side", ["server", "client"])
def test_instruments_record_on_the_given_providers_by_the_conventions(side: str) -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])

    made = instruments(side, tracer_provider, meter_provider)  # type: ignore[arg-type]
    with made.tracer.start_as_current_span("tools/call x"):
        pass
    made.operation_duration.record(0.03)
    made.session_duration.record(7.0)

    (span,) = spans.get_finished_spans()
    assert span.instrumentation_scope.name == "wiremcp"
    assert span.instrumentation_scope.version == version("wiremcp")
    data = reader.get_metrics_data()
    (resource_metrics,) = data.resource_metrics
    (scope_metrics,) = resource_metrics.scope_metrics
    assert scope_metrics.scope.name == "wiremcp"
    assert scope_metrics.scope.version == version("wiremcp")
    metrics = {m.name: m for m in scope_metrics.metrics}
    assert set(metrics) == {f"mcp.{side}.operation.duration", f"mcp.{side}.session.duration"}
    observer = "receiver" if side == "server" else "sender"
    operation = metrics[f"mcp.{side}.operation.duration"]
    assert operation.unit == "s"
    assert operation.description.startswith(f"The duration of the MCP request or notification as observed on the {observer}")
    session = metrics[f"mcp.{side}.session.duration"]
    assert session.unit == "s"
    assert session.description == f"The duration of the MCP session as observed on the MCP {side}."
    for metric, value in ((operation, 0.03), (session, 7.0)):
        (point,) = metric.data.data_points
        assert tuple(point.explicit_bounds) == BUCKETS
        assert point.sum == value
        # 0.03 falls in (0.02, 0.05], 7.0 in (5, 10]: the buckets are the conventions'.
        assert point.bucket_counts[BUCKETS.index(0.05 if value == 0.03 else 10.0)] == 1


def test_without_opentelemetry_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(ImportError, match=r"client telemetry needs OpenTelemetry: pip install 'wiremcp\[otel\]' \(or pass telemetry=False / set WIREMCP_OTEL=0\)"):
        instruments("client")


def test_the_variables_are_made_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    from wiremcp.protocol import telemetry

    # A process without telemetry never makes them; the first use makes each once, with its default.
    monkeypatch.setattr(telemetry, "_peer", None)
    monkeypatch.setattr(telemetry, "_replaying", None)
    peer = client_peer()
    assert peer.name == "wiremcp.telemetry.client_peer"
    assert peer.get() is None
    assert client_peer() is peer
    flag = replaying()
    assert flag.name == "wiremcp.telemetry.replaying"
    assert flag.get() is False
    assert replaying() is flag
