"""Metrics without OpenTelemetry: Prometheus counters, a histogram and gauges (``wiremcp run --http --metrics PORT``).

Rules:

* `install_metrics` registers one `Metrics`, an observer
  (`wiremcp.protocol.observers.Observer`, before serving starts); nothing
  else changes. ``prometheus_client`` (the ``[otel]`` extra) is imported
  only here;
* per request only plain Python values change (`_Stats`: the event loop is
  their one writer); a prometheus_client collector reads them at scrape
  time. Its own ``Counter``/``Histogram`` objects cost about 5 µs per
  request here (a lock per update), several times more (docs/decisions.md);
* the series, in their own `CollectorRegistry` (never the process-global
  one, so two servers in one process do not collide):

  ``wiremcp_requests_total{method, outcome}``
      requests a handler served (not what a 2025-11-25 session answers
      itself: ``initialize``, ``ping``...); ``outcome`` is ``ok``, ``tool_error``,
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

* ``method`` is the request's method when it is an MCP method (or a tasks
  one), else ``other``: a client sending made-up methods cannot grow the
  series;
* a duration ``d`` falls in the first bucket whose bound is >= ``d`` (the
  Prometheus ``le`` rule);
* `serve_metrics` exposes the registry in the text exposition format at
  ``/metrics`` on its own address (prometheus_client's WSGI app and server,
  in a daemon thread), apart from the MCP endpoint, behind the MCP
  endpoint's DNS-rebinding protection: the same ``Host`` and ``Origin``
  allow-lists (`wiremcp.transports.http.HostGuard`, with the same defaults:
  the local names, the bound host when it is not a wildcard, and the address
  the connection arrived at), and the same answer, 403, to a request outside
  them (issue 23: a rebound page could read the counts).
"""

from __future__ import annotations

import asyncio
import bisect
import socket
import time
from typing import Any, Iterable

from ..protocol import methods
from ..protocol.observers import ObservedRequest, ObservedSession, Observer
from ..transports.http import DEFAULT_ALLOWED_HOSTS, HostGuard  # loaded with --metrics, which needs --http

__all__ = ["Metrics", "install_metrics", "serve_metrics"]

#: The buckets of the duration histogram: those of the OpenTelemetry MCP conventions (seconds).
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_KNOWN = frozenset(
    value for name, value in vars(methods).items() if name.isupper() and type(value) is str and "/" in value
) | {"initialize", "ping", "tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update"}


class _Stats:
    """What the middleware counts, in plain Python values: the event loop is the only writer."""

    __slots__ = ("requests", "durations", "in_flight", "sessions", "listening")

    def __init__(self) -> None:
        #: (method, outcome) -> count
        self.requests: dict[tuple[str, str], int] = {}
        #: method -> [count per bucket (the last is +Inf), sum of seconds]
        self.durations: dict[str, list[Any]] = {}
        self.in_flight = 0
        self.sessions: set[Any] = set()
        #: subscriptions/listen requests running: the open streams
        self.listening = 0


def _collector(stats: _Stats) -> Any:
    """A prometheus_client collector reading `_Stats` at scrape time (the pattern for stats kept elsewhere)."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
    from prometheus_client.registry import Collector

    bounds = [str(bound) for bound in BUCKETS] + ["+Inf"]

    class Stats(Collector):
        def collect(self) -> Any:
            requests = CounterMetricFamily("wiremcp_requests", "MCP requests served", labels=("method", "outcome"))
            for (method, outcome), count in list(stats.requests.items()):
                requests.add_metric((method, outcome), count)
            yield requests
            durations = HistogramMetricFamily(
                "wiremcp_request_duration_seconds", "Duration of MCP requests", labels=("method",), unit="seconds"
            )
            for method, (counts, total) in list(stats.durations.items()):
                cumulative, running = [], 0
                for bound, count in zip(bounds, list(counts)):
                    running += count
                    cumulative.append((bound, running))
                durations.add_metric((method,), cumulative, total)
            yield durations
            yield GaugeMetricFamily("wiremcp_requests_in_flight", "MCP requests running now", value=stats.in_flight)
            sessions = list(stats.sessions)
            yield GaugeMetricFamily("wiremcp_sessions_open", "Open 2025-11-25 sessions", value=len(sessions))
            yield GaugeMetricFamily(
                "wiremcp_subscriptions_open",
                "Open subscriptions/listen streams and 2025-11-25 resource subscriptions",
                value=stats.listening + sum(len(session.subscriptions) for session in sessions),
            )

    return Stats()


def install_metrics(server: Any) -> Any:
    """The server's metrics: a new ``prometheus_client`` registry, fed by an observer (see the module docs)."""
    try:
        from prometheus_client import CollectorRegistry
    except ImportError:
        raise ImportError("the metrics endpoint needs prometheus_client: pip install 'wiremcp[otel]'") from None
    observer = Metrics()
    registry = CollectorRegistry(auto_describe=True)
    registry.register(_collector(observer.stats))
    server.add_observer(observer)
    return registry


class Metrics(Observer):
    """The observer of `install_metrics`: counts into `_Stats` (see the module docs)."""

    def __init__(self) -> None:
        self.stats = _Stats()
        self.clock = time.perf_counter

    def request_started(self, request: ObservedRequest) -> Any:
        if request.internal:
            return None  # answered by a 2025-11-25 session itself, not by a handler
        method = request.method if request.method in _KNOWN else "other"
        stats = self.stats
        stats.in_flight += 1
        if method == "subscriptions/listen":
            stats.listening += 1
        return method, self.clock()

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        if started is None:
            return
        method, began = started
        elapsed = self.clock() - began
        if error is None:
            outcome = "tool_error" if result is not None and result.get("isError") is True and method == "tools/call" else "ok"
        else:
            outcome = "cancelled" if isinstance(error, asyncio.CancelledError) else "error"
        stats = self.stats
        stats.in_flight -= 1
        if method == "subscriptions/listen":
            stats.listening -= 1
        key = (method, outcome)
        stats.requests[key] = stats.requests.get(key, 0) + 1
        histogram = stats.durations.get(method)
        if histogram is None:
            histogram = stats.durations[method] = [[0] * (len(BUCKETS) + 1), 0.0]
        histogram[0][bisect.bisect_left(BUCKETS, elapsed)] += 1
        histogram[1] += elapsed

    def session_opened(self, session: ObservedSession) -> None:
        self.stats.sessions.add(session)

    def session_closed(self, session: ObservedSession) -> None:
        self.stats.sessions.discard(session)


def serve_metrics(
    registry: Any,
    host: str,
    port: int,
    *,
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
) -> int:
    """Serve ``registry`` at ``http://host:port/metrics`` in a daemon thread; the port bound (0 picks one).

    ``allowed_hosts`` and ``allowed_origins`` are the MCP endpoint's (None: its defaults, plus
    ``host`` when it is a name or address other than a wildcard, as `serve_http` does).
    """
    import threading
    from wsgiref.simple_server import make_server

    from prometheus_client.exposition import ThreadingWSGIServer, _SilentHandler, make_wsgi_app

    named = f"[{host}]" if ":" in host and not host.startswith("[") else host
    if allowed_hosts is None and host not in ("", "0.0.0.0", "::") and named.lower() not in DEFAULT_ALLOWED_HOSTS:
        allowed_hosts = (*DEFAULT_ALLOWED_HOSTS, named)
    guard = HostGuard(allowed_hosts, allowed_origins)
    metrics = make_wsgi_app(registry)

    def guarded(environ: dict[str, Any], start_response: Any) -> Any:
        raw_host = environ.get("HTTP_HOST")
        origin = environ.get("HTTP_ORIGIN")
        problem = guard.host_problem(None if raw_host is None else raw_host.encode("latin-1"), environ.get(_LOCAL))
        if problem is None and origin is not None:
            problem = guard.origin_problem(origin.encode("latin-1"))
        if problem is None:
            return metrics(environ, start_response)
        body = f"Forbidden: {problem}\n".encode()
        start_response("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
        return [body]

    class Handler(_SilentHandler):
        def get_environ(self) -> dict[str, Any]:
            environ = super().get_environ()
            environ[_LOCAL] = self.connection.getsockname()[:2]  # the address the connection arrived at
            return environ

    class Server(ThreadingWSGIServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    httpd = make_server(host.strip("[]"), port, guarded, Server, handler_class=Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True, name="wiremcp-metrics").start()
    return int(httpd.server_port)


#: The WSGI environ key for the (address, port) a metrics request arrived at.
_LOCAL = "wiremcp.local_address"
