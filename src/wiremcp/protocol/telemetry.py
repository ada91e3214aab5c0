"""Telemetry settings both sides share: when OpenTelemetry is on, and the names the conventions fix.

The server (``server/_telemetry.py``) and the client (``client/_telemetry.py``)
each trace by the OpenTelemetry semantic conventions for MCP; what decides
whether they do, and the constants of the conventions, live here once.

Rules:

* nothing here imports ``opentelemetry``: a process without telemetry loads
  only this small module;
* `wanted` decides, in this order: an explicit ``telemetry=`` (a bool, or a
  mapping of providers, which means on), then ``WIREMCP_OTEL`` (1/true/yes/on
  or 0/false/no/off; anything else is a ValueError), then
  ``OTEL_SDK_DISABLED=true`` (off), then any of `STANDARD_VARIABLES` set
  (on: an exporter or a service is configured for this process);
* `providers` checks a ``telemetry={...}`` mapping: only the keys of
  `PROVIDERS`, else a TypeError at construction.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

__all__ = [
    "BUCKETS",
    "STANDARD_VARIABLES",
    "PROVIDERS",
    "RESOURCE_METHODS",
    "INSTRUMENTATION",
    "providers",
    "wanted",
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
