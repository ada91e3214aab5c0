"""OpenTelemetry on the server: one SERVER span and one duration per request, by the MCP conventions.

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
  it is on is this module's `instrument` called,
  which imports ``opentelemetry`` and registers one middleware, the
  outermost (``server/_middleware.py``): a server without telemetry keeps
  the class's own ``handle``, and nothing runs per request;
* one span per request a handler serves (the middleware's reach: what a
  legacy session answers itself, ``initialize``, ``ping``,
  ``logging/setLevel``, ``resources/subscribe``, is not traced), of kind
  SERVER, named ``{mcp.method.name} {target}`` where the target is the tool
  or prompt name, else ``{mcp.method.name}`` (a resource URI is never in
  the name: high cardinality);
* the parent is the context the client put in ``params._meta``
  (``traceparent``, ``tracestate``, ``baggage``, W3C, through the globally
  configured propagator); the ambient context (an HTTP server span, if an
  ASGI instrumentation made one) becomes a link when both exist, and the
  parent when ``_meta`` carries no trace context;
* errors: a `JSONRPCError` sets ``error.type`` and
  ``rpc.response.status_code`` to its code and the status to ERROR with its
  message; any other exception is answered -32603 (``server/_reply.py``),
  so it is recorded as -32603, with the exception as a span event; a
  ``tools/call`` result with ``isError: true`` sets ``error.type`` to
  ``tool_error``; a cancelled request sets ``error.type`` to
  ``cancelled``. The exception always propagates unchanged;
* ``mcp.server.operation.duration`` (seconds, the conventions' bucket
  boundaries as advice) is recorded for every request with the
  low-cardinality attributes only (no ids, no URIs);
  ``mcp.server.session.duration`` once per legacy (2025-11-25) session,
  when it closes (``Server.open_session`` is wrapped on the instance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..jsonrpc import INTERNAL_ERROR, JSONRPCError
from ..protocol.meta import PROTOCOL_VERSION
from ..protocol.telemetry import BUCKETS, PROVIDERS, RESOURCE_METHODS, STANDARD_VARIABLES, instruments, providers, wanted

if TYPE_CHECKING:
    from ._middleware import Invocation, Middleware, Next

__all__ = ["BUCKETS", "PROVIDERS", "STANDARD_VARIABLES", "instrument", "providers", "wanted"]


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


def instrument(server: Any, tracer_provider: Any = None, meter_provider: Any = None) -> Middleware:
    """Register the telemetry middleware on ``server``, outermost; the providers default to the global ones."""
    tracer, duration, session_duration = instruments("server", tracer_provider, meter_provider)
    import asyncio  # here, not at import: a server without telemetry loads nothing for it
    import time

    from opentelemetry import propagate, trace

    SERVER = trace.SpanKind.SERVER
    ERROR = trace.StatusCode.ERROR
    Status = trace.Status
    Link = trace.Link
    extract = propagate.extract
    meta_getter = _meta_getter()
    current_span = trace.get_current_span
    clock = time.perf_counter

    async def telemetry(call: Invocation, call_next: Next) -> dict[str, Any]:
        method = call.method
        params = call.params
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
        meta = params.get("_meta")
        if call.legacy:
            attrs["mcp.protocol.version"] = call.meta.protocol_version
        elif type(meta) is dict and type(meta.get(PROTOCOL_VERSION)) is str:
            attrs["mcp.protocol.version"] = meta[PROTOCOL_VERSION]
        headers = call.headers
        if headers is None:
            attrs["network.transport"] = "pipe"
        else:
            attrs["network.transport"] = "tcp"
            attrs["network.protocol.name"] = "http"
        measured = dict(attrs)  # the metric's attributes: low cardinality only
        request_id = call.id
        if request_id is not None:
            attrs["jsonrpc.request.id"] = str(request_id)
        if method in RESOURCE_METHODS and type(params.get("uri")) is str:
            attrs["mcp.resource.uri"] = params["uri"]
        session = call.meta.session if call.legacy else None
        session_id = getattr(session, "id", None)
        if session_id is None and headers is not None:
            session_id = headers.get("mcp-session-id")
        if session_id is not None:
            attrs["mcp.session.id"] = str(session_id)
        parent = extract(meta, getter=meta_getter) if type(meta) is dict else None
        links = None
        if parent is not None:
            if not current_span(parent).get_span_context().is_valid:
                parent = None  # nothing in _meta: the ambient context (if any) is the parent
            else:
                ambient = current_span().get_span_context()
                if ambient.is_valid:
                    links = [Link(ambient)]
        span = tracer.start_span(name, context=parent, kind=SERVER, attributes=attrs, links=links)
        error: str | None = None
        started = clock()
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                result = await call_next(call)
        except JSONRPCError as exc:
            error = str(exc.code)
            span.set_attribute("rpc.response.status_code", error)
            span.set_status(Status(ERROR, exc.message))
            raise
        except asyncio.CancelledError:
            error = "cancelled"
            span.set_status(Status(ERROR, "cancelled"))
            raise
        except Exception as exc:
            error = str(INTERNAL_ERROR)
            span.set_attribute("rpc.response.status_code", error)
            span.record_exception(exc)
            span.set_status(Status(ERROR, f"{type(exc).__name__}: {exc}"))
            raise
        else:
            if result.get("isError") is True and method == "tools/call":
                error = "tool_error"
                span.set_status(Status(ERROR, "tool_error"))
            return result
        finally:
            elapsed = clock() - started
            if error is not None:
                span.set_attribute("error.type", error)
                measured["error.type"] = error
                if error != "tool_error" and error != "cancelled":
                    measured["rpc.response.status_code"] = error
            span.end()
            duration.record(elapsed, measured)

    open_session = server.open_session

    def opening(send_request: Any, notify: Any, *, session_id: str | None = None) -> Any:
        session = open_session(send_request, notify, session_id=session_id)
        close = session.close
        opened = clock()
        attrs: dict[str, Any] = (
            {"network.transport": "pipe"}
            if session_id is None
            else {"network.transport": "tcp", "network.protocol.name": "http"}
        )

        def closing() -> None:
            close()
            if session.close is closing:  # once: a session may be closed again
                session.close = close
                if session.version is not None:
                    attrs["mcp.protocol.version"] = session.version
                session_duration.record(clock() - opened, attrs)

        session.close = closing
        return session

    server.open_session = opening
    # Called by `Server.__init__` before the user's middleware is added: this one is outermost,
    # so its span covers the user's middleware too.
    server.add_middleware(telemetry)
    return telemetry
