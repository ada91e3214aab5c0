"""OpenTelemetry on the server: one SERVER span and one duration per request and per notification, by the MCP conventions.

It follows the OpenTelemetry semantic conventions for MCP (docs/gen-ai/mcp.md
of open-telemetry/semantic-conventions, status Development, read at commit
04f167230afe1a2244c4c860cea0e716fb6ee59e; docs/observability.md names what
is and is not recorded).

Rules:

* off, it costs nothing: `wanted` decides at ``Server(...)`` time from the
  ``telemetry`` argument, else ``WIREMCP_OTEL``, else the standard
  ``OTEL_*`` variables (`STANDARD_VARIABLES`; ``OTEL_SDK_DISABLED=true``
  wins over them); ``telemetry={"tracer_provider": ..., "meter_provider":
  ...}`` is on, with those providers instead of the global ones. Only when
  it is on is this module's `instrument` called, which imports
  ``opentelemetry`` and registers one `ServerTelemetry`, the first observer
  (``protocol/observers.py``; the server calls it from
  ``server/_pipeline.py``): a server without observers runs its handlers
  directly, and nothing runs per request;
* one span per request the server answers, of kind SERVER, named
  ``{mcp.method.name} {target}`` where the target is the tool or prompt
  name, else ``{mcp.method.name}`` (a resource URI is never in the name:
  high cardinality). The span covers the middleware and the handler, and
  is the current span while they run; what a legacy (2025-11-25) session
  answers itself (``initialize``, ``ping``, ``logging/setLevel``,
  ``resources/subscribe``, ``resources/unsubscribe``, and the -32601 of a
  modern-only method) gets the same span (the observers see it too);
* one span per notification from the client, of kind SERVER too (the
  conventions' server span is "the processing of the MCP request or
  notification initiated by the peer"), without ``jsonrpc.request.id``:
  the observer's notification hooks, around what the connection does with
  it;
* the parent is the context the client put in ``params._meta``
  (``traceparent``, ``tracestate``, ``baggage``, W3C, through the globally
  configured propagator); the ambient context (an HTTP server span, if an
  ASGI instrumentation made one) becomes a link when both exist, and the
  parent when ``_meta`` carries no trace context;
* over HTTP, ``client.address`` and ``client.port`` are the ASGI scope's
  ``client`` (the transport puts it in `protocol.telemetry.client_peer`,
  only for a server with telemetry on); stdio has no peer address and
  records none;
* errors: a `JSONRPCError` sets ``error.type`` and
  ``rpc.response.status_code`` to its code and the status to ERROR with its
  message; any other exception is answered -32603 (``server/_reply.py``),
  so it is recorded as -32603, with the exception as a span event; a
  ``tools/call`` result with ``isError: true`` sets ``error.type`` to
  ``tool_error``; a cancelled request sets ``error.type`` to
  ``cancelled``. The exception always propagates unchanged;
* ``mcp.server.operation.duration`` (seconds, the conventions' bucket
  boundaries as advice) is recorded for every request and notification
  with the low-cardinality attributes only (no ids, no URIs, no
  addresses); ``mcp.server.session.duration`` once per legacy (2025-11-25)
  session, when it closes.
"""

from __future__ import annotations

from typing import Any

from ..jsonrpc import INTERNAL_ERROR, JSONRPCError
from ..protocol.meta import PROTOCOL_VERSION
from ..protocol.observers import ObservedNotification, ObservedRequest, ObservedSession, Observer
from ..protocol.telemetry import BUCKETS, PROVIDERS, RESOURCE_METHODS, STANDARD_VARIABLES, instruments, providers, replaying, wanted

__all__ = ["BUCKETS", "PROVIDERS", "STANDARD_VARIABLES", "ServerTelemetry", "instrument", "providers", "wanted"]


def instrument(server: Any, tracer_provider: Any = None, meter_provider: Any = None) -> ServerTelemetry:
    """Register the telemetry observer on ``server`` (first: called by ``Server.__init__``); the providers default to the global ones."""
    observer = ServerTelemetry(tracer_provider, meter_provider)
    server.add_observer(observer)
    return observer


def _meta_getter() -> Any:
    from opentelemetry.propagators.textmap import Getter

    class MetaGetter(Getter[dict[str, Any]]):
        """``params._meta`` as a carrier: string values only (anything else carries no context)."""

        def get(self, carrier: dict[str, Any], key: str) -> list[str] | None:
            value = carrier.get(key)
            return [value] if type(value) is str else None

        def keys(self, carrier: dict[str, Any]) -> list[str]:
            return [key for key, value in carrier.items() if type(value) is str]

    return MetaGetter()


def describe(method: str, params: dict[str, Any], version: Any, http: bool) -> tuple[str, dict[str, Any]]:
    """The span's name and its low-cardinality attributes (the metric's): method, target, version, network."""
    attrs: dict[str, Any] = {"mcp.method.name": method}
    name = method
    if method == "tools/call":
        tool = params.get("name")
        if type(tool) is str:
            attrs["gen_ai.tool.name"] = tool
            name = f"{method} {tool}"
        attrs["gen_ai.operation.name"] = "execute_tool"
    elif method == "prompts/get":
        prompt = params.get("name")
        if type(prompt) is str:
            attrs["gen_ai.prompt.name"] = prompt
            name = f"{method} {prompt}"
    if version is None:
        meta = params.get("_meta")
        if type(meta) is dict:
            version = meta.get(PROTOCOL_VERSION)
    if type(version) is str:
        attrs["mcp.protocol.version"] = version
    if http:
        attrs["network.transport"] = "tcp"
        attrs["network.protocol.name"] = "http"
    else:
        attrs["network.transport"] = "pipe"
    return name, attrs


class ServerTelemetry(Observer):
    """The server's SERVER spans and duration metrics, by the MCP conventions (see the module docs)."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self.tracer, self.duration, self.session_duration = instruments("server", tracer_provider, meter_provider)
        import asyncio  # here, not at import: a server without telemetry loads nothing for it
        import time

        from opentelemetry import context, propagate, trace

        from ..protocol.telemetry import client_peer

        self._peer = client_peer()
        self._replay = replaying()
        self._trace = trace
        self._attach = context.attach
        self._detach = context.detach
        self._extract = propagate.extract
        self._getter = _meta_getter()
        self._cancelled = asyncio.CancelledError
        self._clock = time.perf_counter

    # -- the observer's hooks -----------------------------------------------------------

    def request_started(self, request: ObservedRequest) -> Any:
        if request.internal and self._replay.get():
            return None  # a restored shared session's recorded initialize: traced where it first arrived
        return self._begin(request.method, request.params, request.version, request.id, request.session_id, request.headers)

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        if started is None:
            return
        span, measured = started[0], started[2]
        kind = None if error is None else self._failed(span, error)
        if error is None and result is not None and result.get("isError") is True and request.method == "tools/call":
            kind = "tool_error"
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, "tool_error"))
        if "mcp.protocol.version" not in measured and request.version is not None:  # initialize decided it
            span.set_attribute("mcp.protocol.version", request.version)
            measured["mcp.protocol.version"] = request.version
        self._end(started, kind)

    def notification_started(self, note: ObservedNotification) -> Any:
        if self._replay.get():
            return None  # replayed (see `request_started`)
        return self._begin(note.method, note.params, note.version, None, note.session_id, note.headers)

    def notification_ended(self, note: ObservedNotification, started: Any, error: BaseException | None) -> None:
        if started is not None:
            self._end(started, None if error is None else self._failed(started[0], error))

    def session_closed(self, session: ObservedSession) -> None:
        attrs: dict[str, Any] = (
            {"network.transport": "tcp", "network.protocol.name": "http"} if session.http else {"network.transport": "pipe"}
        )
        if session.version is not None:
            attrs["mcp.protocol.version"] = session.version
        self.session_duration.record(self._clock() - session.opened_at, attrs)

    # -- spans ----------------------------------------------------------------------------

    def _begin(
        self, method: str, params: dict[str, Any], version: Any, request_id: Any, session_id: Any, headers: Any
    ) -> tuple[Any, Any, dict[str, Any], float]:
        """Start the SERVER span and make it current: (span, context token, metric attributes, start time)."""
        http = headers is not None
        name, attrs = describe(method, params, version, http)
        measured = dict(attrs)  # the metric's attributes: low cardinality only
        self._identify(attrs, method, params, request_id, session_id, http)
        span = self._start(name, attrs, params)
        token = self._attach(self._trace.set_span_in_context(span))
        return span, token, measured, self._clock()

    def _end(self, started: tuple[Any, Any, dict[str, Any], float], error: str | None) -> None:
        span, token, measured, began = started
        elapsed = self._clock() - began
        self._detach(token)
        if error is not None:
            span.set_attribute("error.type", error)
            measured["error.type"] = error
            if error != "tool_error" and error != "cancelled":
                measured["rpc.response.status_code"] = error
        span.end()
        self.duration.record(elapsed, measured)

    def _identify(
        self, attrs: dict[str, Any], method: str, params: dict[str, Any], request_id: Any, session_id: Any, http: bool
    ) -> None:
        """Add the high-cardinality attributes (span only): request id, resource URI, session id, client address."""
        if request_id is not None:
            attrs["jsonrpc.request.id"] = str(request_id)
        if method in RESOURCE_METHODS and type(params.get("uri")) is str:
            attrs["mcp.resource.uri"] = params["uri"]
        if session_id is not None:
            attrs["mcp.session.id"] = session_id if type(session_id) is str else str(session_id)
        if http:
            client = self._peer.get()
            if client:
                attrs["client.address"] = str(client[0])
                if len(client) > 1 and type(client[1]) is int:
                    attrs["client.port"] = client[1]

    def _start(self, name: str, attrs: dict[str, Any], params: dict[str, Any]) -> Any:
        """The SERVER span: a child of the context in ``params._meta``, linked to the ambient one."""
        trace = self._trace
        meta = params.get("_meta")
        parent = self._extract(meta, getter=self._getter) if type(meta) is dict else None
        links = None
        if parent is not None:
            if not trace.get_current_span(parent).get_span_context().is_valid:
                parent = None  # nothing in _meta: the ambient context (if any) is the parent
            else:
                ambient = trace.get_current_span().get_span_context()
                if ambient.is_valid:
                    links = [trace.Link(ambient)]
        return self.tracer.start_span(name, context=parent, kind=trace.SpanKind.SERVER, attributes=attrs, links=links)

    def _failed(self, span: Any, exc: BaseException) -> str:
        """Record ``exc`` on ``span``; its ``error.type``."""
        Status, ERROR = self._trace.Status, self._trace.StatusCode.ERROR
        if isinstance(exc, JSONRPCError):
            error = str(exc.code)
            span.set_attribute("rpc.response.status_code", error)
            span.set_status(Status(ERROR, exc.message))
        elif isinstance(exc, self._cancelled):
            error = "cancelled"
            span.set_status(Status(ERROR, "cancelled"))
        else:
            error = str(INTERNAL_ERROR)
            span.set_attribute("rpc.response.status_code", error)
            span.record_exception(exc)
            span.set_status(Status(ERROR, f"{type(exc).__name__}: {exc}"))
        return error
