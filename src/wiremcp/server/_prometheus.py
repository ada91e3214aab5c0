"""Metrics without OpenTelemetry: Prometheus counters, a histogram and gauges (``wiremcp run --http --metrics PORT``).

Rules:

* `install_metrics` registers one middleware (``server/_middleware.py``)
  and wraps ``Server.open_session`` on the instance; nothing else changes,
  and a server without them keeps its plain ``handle``. ``prometheus_client``
  (the ``[otel]`` extra) is imported only here;
* the series, in their own `CollectorRegistry` (never the process-global
  one, so two servers in one process do not collide):

  ``wiremcp_requests_total{method, outcome}``
      requests a handler served; ``outcome`` is ``ok``, ``tool_error``,
      ``error`` or ``cancelled``;
  ``wiremcp_request_duration_seconds{method}``
      their durations (the OpenTelemetry conventions' buckets);
  ``wiremcp_requests_in_flight``
      requests running now;
  ``wiremcp_sessions_open``
      open 2025-11-25 sessions;
  ``wiremcp_subscriptions_open``
      open ``subscriptions/listen`` streams plus the resources 2025-11-25
      sessions subscribed to;

* ``method`` is the request's method when the server knows it, else
  ``other``: a client sending made-up methods cannot grow the series;
* `serve_metrics` exposes the registry in the text exposition format at
  ``/metrics`` on its own address (prometheus_client's server, in a daemon
  thread), apart from the MCP endpoint.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ..protocol import methods

if TYPE_CHECKING:
    from ._middleware import Invocation, Next

__all__ = ["install_metrics", "serve_metrics"]

#: The buckets of the duration histogram: those of the OpenTelemetry MCP conventions (seconds).
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_KNOWN = frozenset(
    value for name, value in vars(methods).items() if name.isupper() and type(value) is str and "/" in value
) | {"initialize", "ping", "tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update"}


def install_metrics(server: Any) -> Any:
    """The server's metrics: a new ``prometheus_client`` registry, fed by a middleware (see the module docs)."""
    try:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
    except ImportError:
        raise ImportError("the metrics endpoint needs prometheus_client: pip install 'wiremcp[otel]'") from None
    registry = CollectorRegistry(auto_describe=True)
    requests = Counter("wiremcp_requests", "MCP requests served", ("method", "outcome"), registry=registry)
    durations = Histogram(
        "wiremcp_request_duration_seconds", "Duration of MCP requests", ("method",), buckets=BUCKETS, registry=registry
    )
    in_flight = Gauge("wiremcp_requests_in_flight", "MCP requests running now", registry=registry)
    sessions: set[Any] = set()
    Gauge("wiremcp_sessions_open", "Open 2025-11-25 sessions", registry=registry).set_function(lambda: len(sessions))
    listening = server._open_subscriptions
    Gauge(
        "wiremcp_subscriptions_open", "Open subscriptions/listen streams and 2025-11-25 resource subscriptions",
        registry=registry,
    ).set_function(lambda: listening[0] + sum(len(session.subscriptions) for session in sessions))
    # Children by label values, made once each: prometheus_client's ``labels()`` costs a lock and a lookup.
    counted: dict[tuple[str, str], Any] = {}
    timed: dict[str, Any] = {}
    inc = in_flight.inc
    dec = in_flight.dec
    clock = time.perf_counter

    async def metrics(call: Invocation, call_next: Next) -> dict[str, Any]:
        method = call.method if call.method in _KNOWN or call.method in server._handlers else "other"
        outcome = "error"
        inc()
        started = clock()
        try:
            result = await call_next(call)
            outcome = "tool_error" if result.get("isError") is True and method == "tools/call" else "ok"
            return result
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            elapsed = clock() - started
            dec()
            key = (method, outcome)
            child = counted.get(key)
            if child is None:
                child = counted[key] = requests.labels(method, outcome)
            child.inc()
            histogram = timed.get(method)
            if histogram is None:
                histogram = timed[method] = durations.labels(method)
            histogram.observe(elapsed)

    open_session = server.open_session

    def opening(send_request: Any, notify: Any, *, session_id: str | None = None) -> Any:
        session = open_session(send_request, notify, session_id=session_id)
        close = session.close
        sessions.add(session)

        def closing() -> None:
            sessions.discard(session)
            close()

        session.close = closing
        return session

    server.open_session = opening
    server.add_middleware(metrics)
    return registry


def serve_metrics(registry: Any, host: str, port: int) -> int:
    """Serve ``registry`` at ``http://host:port/metrics`` in a daemon thread; the port bound (0 picks one)."""
    from prometheus_client import start_http_server

    httpd, _ = start_http_server(port, addr=host, registry=registry)
    return int(httpd.server_port)
