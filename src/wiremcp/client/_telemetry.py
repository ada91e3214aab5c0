"""OpenTelemetry on the client: one CLIENT span and one duration per request or notification, context sent in ``_meta``.

It follows the OpenTelemetry semantic conventions for MCP (docs/gen-ai/mcp.md
of open-telemetry/semantic-conventions, status Development, read at commit
04f167230afe1a2244c4c860cea0e716fb6ee59e; see docs/observability.md).

Rules:

* off, it costs nothing: `wanted` decides at ``Client(...)`` time (the
  ``telemetry`` argument, else ``WIREMCP_OTEL``, else the standard
  ``OTEL_*`` variables, as on the server; ``telemetry={"tracer_provider":
  ..., "meter_provider": ...}`` is on, with those providers instead of the
  global ones). Only when it is on is a `ClientTelemetry` made, which
  imports ``opentelemetry``; it is the client's first observer
  (``protocol/observers.py``, called from ``client/_observing.py``): it sees
  every request the client sends (era probe, ``initialize``, each MRTR
  round and each task poll included);
* one span per request sent (a retry of a request that was never sent is
  the same span; a -32022 retry in another version is a second one), of kind
  CLIENT, named ``{mcp.method.name} {target}`` as on the server, a child of
  the caller's current context;
* the span's context is injected into ``params._meta`` through the global
  propagator (W3C ``traceparent``/``tracestate``, ``baggage``), in both
  eras: the server continues the trace;
* one span per notification sent (``notifications/initialized``,
  ``notifications/cancelled``, `Client.notify`), of kind CLIENT too (the
  conventions' client span covers "the request or notification"), named
  ``{mcp.method.name}``, without ``jsonrpc.request.id``, its context
  injected into the notification's ``params._meta`` (an answer to a
  server's request is not observed);
* ``mcp.session.id`` and ``mcp.protocol.version`` that ``initialize``
  itself decides (the HTTP session id comes with its reply) are set on its
  span once the reply is in;
* errors: an error reply sets ``error.type`` and ``rpc.response.status_code``
  to its code and the status to ERROR with its message; a timeout sets
  ``error.type`` to ``timeout``; another failure to the exception's class
  name; a ``tools/call`` result with ``isError: true`` to ``tool_error``.
  The exception propagates unchanged;
* ``mcp.client.operation.duration`` (seconds) is recorded for every
  request and notification, with the low-cardinality attributes only;
  ``mcp.client.session.duration`` once per legacy (2025-11-25) session, from
  ``connect`` to ``aclose``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.observers import ObservedNotification, ObservedRequest, ObservedSession, Observer
from ..protocol.telemetry import BUCKETS, PROVIDERS, RESOURCE_METHODS, STANDARD_VARIABLES, instruments, providers, wanted

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["BUCKETS", "PROVIDERS", "STANDARD_VARIABLES", "ClientTelemetry", "instrument", "providers", "wanted"]


def _network(transport: Any) -> dict[str, Any]:
    """The network attributes of a transport: HTTP (an ``url``) is TCP, anything else a pipe (stdio)."""
    url = getattr(transport, "url", None)
    if type(url) is not str:
        return {"network.transport": "pipe"}
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    attrs: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
    if parts.hostname:
        attrs["server.address"] = parts.hostname
        attrs["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attrs


def instrument(client: Client, tracer_provider: Any = None, meter_provider: Any = None) -> ClientTelemetry:
    """Trace every request ``client`` sends (a `ClientTelemetry` observer); the providers default to the global ones."""
    observer = ClientTelemetry(client, tracer_provider, meter_provider)
    client.add_observer(observer)
    return observer


class ClientTelemetry(Observer):
    """The client's CLIENT spans and duration metrics, by the MCP conventions (see the module docs)."""

    def __init__(self, client: Client, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self.client = client
        self.tracer, self.duration, self.session_duration = instruments("client", tracer_provider, meter_provider)
        # Here, not at import: a client without telemetry loads nothing for it.
        import asyncio
        import time

        from opentelemetry import propagate, trace

        from ._errors import RemoteError, RequestTimeout

        self._trace = trace
        self._inject = propagate.inject
        self._clock = time.perf_counter
        self._remote = RemoteError
        self._timeout = RequestTimeout
        self._cancelled = asyncio.CancelledError

    def _attributes(self, attrs: dict[str, Any], version: str | None, session_id: str | None) -> dict[str, Any]:
        """Add the version, the network and the session id; the metric's attributes (a copy, without the session id)."""
        if version is not None:
            attrs["mcp.protocol.version"] = version
        attrs.update(_network(self.client.transport))
        measured = dict(attrs)
        if session_id is not None:
            attrs["mcp.session.id"] = session_id
        return measured

    def _begin(self, name: str, attrs: dict[str, Any], meta: dict[str, Any] | None) -> Any:
        """The CLIENT span, its context injected into ``meta`` (the ``_meta`` sent)."""
        span = self.tracer.start_span(name, kind=self._trace.SpanKind.CLIENT, attributes=attrs)
        if meta is not None:
            self._inject(meta, context=self._trace.set_span_in_context(span))
        return span

    def request_started(self, request: ObservedRequest) -> Any:
        method, params = request.method, request.params
        attrs: dict[str, Any] = {"mcp.method.name": method}
        name = method
        if method == "tools/call" or method == "prompts/get":
            target = params.get("name")
            if type(target) is str:
                attrs["gen_ai.tool.name" if method == "tools/call" else "gen_ai.prompt.name"] = target
                name = f"{method} {target}"
        if method == "tools/call":
            attrs["gen_ai.operation.name"] = "execute_tool"
        if method in RESOURCE_METHODS and type(params.get("uri")) is str:
            attrs["mcp.resource.uri"] = params["uri"]
        measured = self._attributes(attrs, request.version, request.session_id)
        measured.pop("mcp.resource.uri", None)
        return self._begin(name, attrs, request.meta), measured, attrs, self._clock()

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        span, measured, attrs, began = started
        elapsed = self._clock() - began
        kind: str | None = None
        Status, ERROR = self._trace.Status, self._trace.StatusCode.ERROR
        if error is None:
            if request.method == "tools/call" and result is not None and result.get("isError") is True:
                kind = "tool_error"
                span.set_status(Status(ERROR, "tool_error"))
        elif isinstance(error, self._remote):
            kind = str(error.code)
            span.set_attribute("rpc.response.status_code", kind)
            span.set_status(Status(ERROR, error.message if type(error.message) is str else None))
        elif isinstance(error, self._timeout):
            kind = "timeout"
            span.set_status(Status(ERROR, str(error)))
        elif isinstance(error, self._cancelled):
            kind = "cancelled"
            span.set_status(Status(ERROR, "cancelled"))
        else:
            kind = type(error).__qualname__
            span.record_exception(error)
            span.set_status(Status(ERROR, str(error)))
        if request.id is not None:
            span.set_attribute("jsonrpc.request.id", str(request.id))
        if "mcp.session.id" not in attrs and request.session_id is not None:  # initialize over HTTP
            span.set_attribute("mcp.session.id", request.session_id)
        if "mcp.protocol.version" not in attrs and request.version is not None:  # decided by initialize
            span.set_attribute("mcp.protocol.version", request.version)
        if kind is not None:
            span.set_attribute("error.type", kind)
            measured["error.type"] = kind
            if kind[:1] == "-" or kind.isdigit():
                measured["rpc.response.status_code"] = kind
        span.end()
        self.duration.record(elapsed, measured)

    def notification_started(self, note: ObservedNotification) -> Any:
        attrs: dict[str, Any] = {"mcp.method.name": note.method}
        measured = self._attributes(attrs, note.version, note.session_id)
        return self._begin(note.method, attrs, note.meta), measured, self._clock()

    def notification_ended(self, note: ObservedNotification, started: Any, error: BaseException | None) -> None:
        span, measured, began = started
        elapsed = self._clock() - began
        if error is not None:
            kind = type(error).__qualname__
            span.record_exception(error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(error)))
            span.set_attribute("error.type", kind)
            measured["error.type"] = kind
        span.end()
        self.duration.record(elapsed, measured)

    def session_closed(self, session: ObservedSession) -> None:
        attrs = _network(self.client.transport)
        if session.version is not None:
            attrs["mcp.protocol.version"] = session.version
        self.session_duration.record(self._clock() - session.opened_at, attrs)
