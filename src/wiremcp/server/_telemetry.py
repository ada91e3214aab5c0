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
  it is on is this module's `instrument` called,
  which imports ``opentelemetry`` and registers one middleware, the
  outermost (``server/_middleware.py``): a server without telemetry keeps
  the class's own ``handle``, and nothing runs per request;
* one span per request the server answers, of kind SERVER, named
  ``{mcp.method.name} {target}`` where the target is the tool or prompt
  name, else ``{mcp.method.name}`` (a resource URI is never in the name:
  high cardinality). The middleware makes the span of every request a
  handler serves; what a legacy (2025-11-25) session answers itself
  (``initialize``, ``ping``, ``logging/setLevel``,
  ``resources/subscribe``, ``resources/unsubscribe``, and the -32601 of a
  modern-only method) gets the same span from the session's ``handle``,
  wrapped on the instance when `Server.open_session` (wrapped too) opens
  it;
* one span per notification from the client, of kind SERVER too (the
  conventions' server span is "the processing of the MCP request or
  notification initiated by the peer"), without ``jsonrpc.request.id``:
  `notified`, called by ``ServerConnection.notification`` only when
  telemetry is on, around what the connection does with it;
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

from typing import TYPE_CHECKING, Any, Callable

from ..jsonrpc import INTERNAL_ERROR, JSONRPCError
from ..protocol.meta import PROTOCOL_VERSION
from ..protocol.telemetry import BUCKETS, PROVIDERS, RESOURCE_METHODS, STANDARD_VARIABLES, instruments, providers, replaying, wanted

if TYPE_CHECKING:
    from ..jsonrpc import Notification, Request
    from ._call import Call
    from ._connection import ServerConnection
    from ._context import Emit
    from ._middleware import Invocation, Middleware, Next

__all__ = ["BUCKETS", "PROVIDERS", "STANDARD_VARIABLES", "instrument", "notified", "providers", "wanted"]

#: The attribute of an instrumented server that holds its notification tracer (see `notified`).
_NOTIFIED = "_telemetry_notified"


def notified(conn: ServerConnection, note: Notification, act: Callable[[Notification], Call | None]) -> Call | None:
    """``act(note)`` under the SERVER span of a notification (``ServerConnection.notification``, telemetry on)."""
    trace_notification: Callable[..., Call | None] = getattr(conn.server, _NOTIFIED)
    return trace_notification(conn, note, act)


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

    from ..protocol import methods
    from ..protocol.telemetry import client_peer
    from ._context import current_headers
    from ._legacy import LEGACY_ONLY_METHODS

    #: What a legacy session answers itself, without a handler (`LegacySession.handle`): traced there.
    session_answered = LEGACY_ONLY_METHODS | {methods.DISCOVER, methods.SUBSCRIPTIONS_LISTEN}
    peer = client_peer()
    SERVER = trace.SpanKind.SERVER
    ERROR = trace.StatusCode.ERROR
    Status = trace.Status
    Link = trace.Link
    extract = propagate.extract
    meta_getter = _meta_getter()
    current_span = trace.get_current_span
    clock = time.perf_counter

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

    def identify(
        attrs: dict[str, Any], method: str, params: dict[str, Any], request_id: Any, session_id: Any, http: bool
    ) -> None:
        """Add the high-cardinality attributes (span only): request id, resource URI, session id, client address."""
        if request_id is not None:
            attrs["jsonrpc.request.id"] = str(request_id)
        if method in RESOURCE_METHODS and type(params.get("uri")) is str:
            attrs["mcp.resource.uri"] = params["uri"]
        if session_id is not None:
            attrs["mcp.session.id"] = session_id if type(session_id) is str else str(session_id)
        if http:
            client = peer.get()
            if client:
                attrs["client.address"] = str(client[0])
                if len(client) > 1 and type(client[1]) is int:
                    attrs["client.port"] = client[1]

    def start(name: str, attrs: dict[str, Any], params: dict[str, Any]) -> Any:
        """The SERVER span: a child of the context in ``params._meta``, linked to the ambient one."""
        meta = params.get("_meta")
        parent = extract(meta, getter=meta_getter) if type(meta) is dict else None
        links = None
        if parent is not None:
            if not current_span(parent).get_span_context().is_valid:
                parent = None  # nothing in _meta: the ambient context (if any) is the parent
            else:
                ambient = current_span().get_span_context()
                if ambient.is_valid:
                    links = [Link(ambient)]
        return tracer.start_span(name, context=parent, kind=SERVER, attributes=attrs, links=links)

    def failed(span: Any, exc: BaseException) -> str:
        """Record ``exc`` on ``span``; its ``error.type``."""
        if isinstance(exc, JSONRPCError):
            error = str(exc.code)
            span.set_attribute("rpc.response.status_code", error)
            span.set_status(Status(ERROR, exc.message))
        elif isinstance(exc, asyncio.CancelledError):
            error = "cancelled"
            span.set_status(Status(ERROR, "cancelled"))
        else:
            error = str(INTERNAL_ERROR)
            span.set_attribute("rpc.response.status_code", error)
            span.record_exception(exc)
            span.set_status(Status(ERROR, f"{type(exc).__name__}: {exc}"))
        return error

    def end(span: Any, error: str | None, elapsed: float, measured: dict[str, Any]) -> None:
        if error is not None:
            span.set_attribute("error.type", error)
            measured["error.type"] = error
            if error != "tool_error" and error != "cancelled":
                measured["rpc.response.status_code"] = error
        span.end()
        duration.record(elapsed, measured)

    async def telemetry(call: Invocation, call_next: Next) -> dict[str, Any]:
        method = call.method
        params = call.params
        headers = call.headers
        http = headers is not None
        name, attrs = describe(method, params, call.meta.protocol_version if call.legacy else None, http)
        measured = dict(attrs)  # the metric's attributes: low cardinality only
        session_id = getattr(call.meta.session, "id", None) if call.legacy else None
        if session_id is None and headers is not None:
            session_id = headers.get("mcp-session-id")
        identify(attrs, method, params, call.id, session_id, http)
        span = start(name, attrs, params)
        error: str | None = None
        started = clock()
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                result = await call_next(call)
        except BaseException as exc:
            error = failed(span, exc)
            raise
        else:
            if result.get("isError") is True and method == "tools/call":
                error = "tool_error"
                span.set_status(Status(ERROR, "tool_error"))
            return result
        finally:
            end(span, error, clock() - started, measured)

    def answered(session: Any, request: Request, handle: Any, emit: Emit | None) -> Any:
        """A request the legacy session answers itself (synchronously), under its SERVER span."""
        if replay.get():
            return handle(request, emit)  # a restored shared session's recorded initialize: traced before
        method = request.method
        params = request.params if type(request.params) is dict else {}
        raw = current_headers.get()
        http = raw is not None
        name, attrs = describe(method, params, session.version, http)
        session_id = session.id
        if session_id is None and raw is not None:
            found = raw.get(b"mcp-session-id")
            session_id = found.decode("latin-1") if found is not None else None
        measured = dict(attrs)
        identify(attrs, method, params, request.id, session_id, http)
        span = start(name, attrs, params)
        error: str | None = None
        started = clock()
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                return handle(request, emit)
        except BaseException as exc:
            error = failed(span, exc)
            raise
        finally:
            if "mcp.protocol.version" not in measured and session.version is not None:  # initialize settled it
                span.set_attribute("mcp.protocol.version", session.version)
                measured["mcp.protocol.version"] = session.version
            end(span, error, clock() - started, measured)

    def notification(conn: ServerConnection, note: Notification, act: Callable[[Notification], Call | None]) -> Call | None:
        if replay.get():
            return act(note)  # replayed (see `answered`)
        method = note.method
        params = note.params if type(note.params) is dict else {}
        raw = current_headers.get()
        http = raw is not None
        session = conn.session
        name, attrs = describe(method, params, session.version if session is not None else None, http)
        session_id = session.id if session is not None else conn.session_id
        measured = dict(attrs)
        identify(attrs, method, params, None, session_id, http)
        span = start(name, attrs, params)
        error: str | None = None
        started = clock()
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                return act(note)
        except BaseException as exc:
            error = failed(span, exc)
            raise
        finally:
            end(span, error, clock() - started, measured)

    replay = replaying()
    setattr(server, _NOTIFIED, notification)
    open_session = server.open_session

    def opening(send_request: Any, notify: Any, *, session_id: str | None = None) -> Any:
        session = open_session(send_request, notify, session_id=session_id)
        close = session.close
        handle = session.handle
        opened = clock()
        attrs: dict[str, Any] = (
            {"network.transport": "pipe"}
            if session_id is None
            else {"network.transport": "tcp", "network.protocol.name": "http"}
        )

        def handling(request: Request, emit: Emit | None) -> Any:
            if request.method in session_answered:
                return answered(session, request, handle, emit)
            return handle(request, emit)  # a handler serves it: the middleware's span

        def closing() -> None:
            close()
            if session.close is closing:  # once: a session may be closed again
                session.close = close
                if session.version is not None:
                    attrs["mcp.protocol.version"] = session.version
                session_duration.record(clock() - opened, attrs)

        session.handle = handling
        session.close = closing
        return session

    server.open_session = opening
    # Called by `Server.__init__` before the user's middleware is added: this one is outermost,
    # so its span covers the user's middleware too.
    server.add_middleware(telemetry)
    return telemetry
