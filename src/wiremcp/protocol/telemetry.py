"""Telemetry settings both sides share: when OpenTelemetry is on, and the names the conventions fix.

The server (``server/_telemetry.py``) and the client (``client/_telemetry.py``)
each trace by the OpenTelemetry semantic conventions for MCP; what decides
whether they do, and the constants of the conventions, live here once.

Rules:

* nothing here imports ``opentelemetry`` until `instruments` is called (only
  when telemetry is on): a process without telemetry loads only this small
  module;
* `instruments` is where both sides meet OpenTelemetry: wiremcp's tracer and
  meter (scope `INSTRUMENTATION`, wiremcp's package version) on the given
  providers or the global ones, and the side's two duration histograms
  (seconds, `BUCKETS` as advice, the conventions' descriptions); without
  OpenTelemetry installed it raises an ImportError naming the ``otel``
  extra;
* `wanted` decides, in this order: an explicit ``telemetry=`` (a bool, or a
  mapping of providers, which means on), then ``WIREMCP_OTEL`` (1/true/yes/on
  or 0/false/no/off; anything else is a ValueError), then
  ``OTEL_SDK_DISABLED=true`` (off), then any of `STANDARD_VARIABLES` set
  (on: an exporter or a service is configured for this process);
* `providers` checks a ``telemetry={...}`` mapping: only the keys of
  `PROVIDERS`, else a TypeError at construction;
* `client_peer` is where the HTTP transport puts the ASGI scope's
  ``client`` (``(host, port)``) of the request it serves, for the server's
  spans (``client.address``, ``client.port``). It is made on first use:
  by a server with telemetry on, and by an HTTP app serving one; nothing
  else ever sets or reads it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, Mapping, NamedTuple

if TYPE_CHECKING:
    from contextvars import ContextVar

__all__ = [
    "Instruments",
    "instruments",
    "BUCKETS",
    "STANDARD_VARIABLES",
    "PROVIDERS",
    "RESOURCE_METHODS",
    "INSTRUMENTATION",
    "providers",
    "wanted",
    "client_peer",
    "replaying",
]

#: The explicit bucket boundaries the conventions give the operation- and session-duration histograms (seconds).
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: Standard OpenTelemetry variables that switch telemetry on when ``WIREMCP_OTEL`` is unset:
#: each says an exporter or a service is configured for this process.
STANDARD_VARIABLES = (
    "OTEL_SERVICE_NAME",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
#: What ``telemetry=`` may name instead of the global providers.
PROVIDERS = ("tracer_provider", "meter_provider")
#: Methods whose ``params.uri`` is recorded as ``mcp.resource.uri``.
RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
#: The instrumentation scope name of wiremcp's tracers and meters.
INSTRUMENTATION = "wiremcp"

#: The conventions' descriptions of each side's operation- and session-duration histograms.
_DESCRIPTIONS = {
    "server": (
        "The duration of the MCP request or notification as observed on the receiver "
        "from the time it was received until the result or ack is sent.",
        "The duration of the MCP session as observed on the MCP server.",
    ),
    "client": (
        "The duration of the MCP request or notification as observed on the sender "
        "from the time it was sent until the response or ack is received.",
        "The duration of the MCP session as observed on the MCP client.",
    ),
}

#: `client_peer`'s and `replaying`'s variables, once made.
_peer: Any = None
_replaying: Any = None

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def providers(setting: bool | Mapping[str, Any] | None) -> dict[str, Any]:
    """The providers a ``telemetry={...}`` setting names (none for a bool: the global ones)."""
    if setting is None or type(setting) is bool:
        return {}
    if not isinstance(setting, Mapping):
        raise TypeError(f"telemetry is True, False, None or {{'tracer_provider': ..., 'meter_provider': ...}}, not {setting!r}")
    unknown = set(setting) - set(PROVIDERS)
    if unknown:
        raise TypeError(f"telemetry: unknown key(s) {sorted(unknown)}; the keys are {', '.join(PROVIDERS)}")
    return dict(setting)


def wanted(explicit: bool | Mapping[str, Any] | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether telemetry is on: ``explicit`` (providers mean on), else ``WIREMCP_OTEL``, else any of `STANDARD_VARIABLES`."""
    if type(explicit) is bool:
        return explicit
    if explicit is not None:
        providers(explicit)  # checked now: a wrong key is a TypeError at construction
        return True
    value = environ.get("WIREMCP_OTEL")
    if value is not None:
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"WIREMCP_OTEL must be one of 1/true/yes/on or 0/false/no/off, not {value!r}")
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name) for name in STANDARD_VARIABLES)


def client_peer() -> ContextVar[Any]:
    """The HTTP client's address of the request being served: the ASGI scope's ``client``, or None (stdio)."""
    global _peer
    if _peer is None:
        from contextvars import ContextVar  # here: only telemetry needs it

        _peer = ContextVar("wiremcp.telemetry.client_peer", default=None)
    made: ContextVar[Any] = _peer
    return made


def replaying() -> ContextVar[bool]:
    """True while a transport replays messages already traced where they first arrived: no spans for them.

    A shared (Redis) session restored on another worker is rebuilt by
    answering its recorded ``initialize`` and ``notifications/initialized``
    again; those are the client's messages of long ago, whose spans the
    first worker made.
    """
    global _replaying
    if _replaying is None:
        from contextvars import ContextVar  # here: only telemetry needs it

        _replaying = ContextVar("wiremcp.telemetry.replaying", default=False)
    made: ContextVar[bool] = _replaying
    return made


class Instruments(NamedTuple):
    """What one side records with (from `instruments`): wiremcp's tracer and the side's duration histograms."""

    #: wiremcp's ``opentelemetry.trace.Tracer``.
    tracer: Any
    #: ``mcp.{side}.operation.duration``: one value per request (seconds).
    operation_duration: Any
    #: ``mcp.{side}.session.duration``: one value per legacy (2025-11-25) session (seconds).
    session_duration: Any


def instruments(
    side: Literal["server", "client"], tracer_provider: Any = None, meter_provider: Any = None
) -> Instruments:
    """Import OpenTelemetry and make ``side``'s tracer and histograms; the providers default to the global ones."""
    try:
        from opentelemetry import metrics, trace
    except ImportError:
        raise ImportError(
            f"{side} telemetry needs OpenTelemetry: pip install 'wiremcp[otel]' "
            "(or pass telemetry=False / set WIREMCP_OTEL=0)"
        ) from None
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("wiremcp")
    except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
        ours = ""
    tracer = trace.get_tracer(INSTRUMENTATION, ours, tracer_provider)
    meter = metrics.get_meter(INSTRUMENTATION, ours, meter_provider)
    operation, session = _DESCRIPTIONS[side]
    return Instruments(
        tracer,
        meter.create_histogram(
            f"mcp.{side}.operation.duration",
            unit="s",
            description=operation,
            explicit_bucket_boundaries_advisory=list(BUCKETS),
        ),
        meter.create_histogram(
            f"mcp.{side}.session.duration",
            unit="s",
            description=session,
            explicit_bucket_boundaries_advisory=list(BUCKETS),
        ),
    )
