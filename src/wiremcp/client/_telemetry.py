"""OpenTelemetry on the client: one CLIENT span and one duration per request or notification, context sent in ``_meta``.

It follows the OpenTelemetry semantic conventions for MCP (docs/gen-ai/mcp.md
of open-telemetry/semantic-conventions, status Development, read at commit
04f167230afe1a2244c4c860cea0e716fb6ee59e; see docs/observability.md).

Rules:

* off, it costs nothing: `wanted` decides at ``Client(...)`` time (the
  ``telemetry`` argument, else ``WIREMCP_OTEL``, else the standard
  ``OTEL_*`` variables, as on the server; ``telemetry={"tracer_provider":
  ..., "meter_provider": ...}`` is on, with those providers instead of the
  global ones). Only when it is on does
  `instrument` import ``opentelemetry`` and replace the client's own
  ``_roundtrip`` (every request the client sends, era probe, ``initialize``,
  each MRTR round and each task poll included) and ``_transmit`` (which
  learns the request id) with traced ones on the instance;
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
  injected into the notification's ``params._meta``: ``_write``, replaced
  on the instance too, is where every notification leaves (an answer to a
  server's request passes through it untouched);
* ``mcp.session.id`` and ``mcp.protocol.version`` that ``initialize``
  itself settles (the HTTP session id comes with its reply) are set on its
  span once the reply is in;
* errors: an error reply sets ``error.type`` and ``rpc.response.status_code``
  to its code and the status to ERROR with its message; a timeout sets
  ``error.type`` to ``timeout``; another failure to the exception's class
  name; a ``tools/call`` result with ``isError: true`` to ``tool_error``.
  The exception propagates unchanged;
* ``mcp.client.operation.duration`` (seconds) is recorded for every
  request and notification, with the low-cardinality attributes only;
  ``mcp.client.session.duration`` once per legacy (2025-11-25) session, from
  ``connect`` to ``aclose`` (both wrapped on the instance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol import Era
from ..protocol.meta import PROTOCOL_VERSION
from ..protocol.telemetry import BUCKETS, PROVIDERS, RESOURCE_METHODS, STANDARD_VARIABLES, instruments, providers, wanted

if TYPE_CHECKING:
    from ._client import Client
    from ._options import CallOptions
    from ._protocol import Outgoing

__all__ = ["BUCKETS", "PROVIDERS", "STANDARD_VARIABLES", "instrument", "providers", "wanted"]


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


def instrument(client: Client, tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Trace every request ``client`` sends; the providers default to the global ones."""
    tracer, duration, session_duration = instruments("client", tracer_provider, meter_provider)
    # Here, not at import: a client without telemetry loads nothing for it.
    import asyncio
    import time
    from contextvars import ContextVar
    from dataclasses import replace

    from opentelemetry import propagate, trace
    from orjson import loads

    from ..jsonrpc import encode_notification
    from ._errors import RemoteError, RequestTimeout

    #: The span of the request this task is sending (so `_transmit` can name its id).
    sending: ContextVar[Any] = ContextVar("wiremcp.client.span", default=None)

    CLIENT = trace.SpanKind.CLIENT
    ERROR = trace.StatusCode.ERROR
    Status = trace.Status
    inject = propagate.inject
    set_span_in_context = trace.set_span_in_context
    clock = time.perf_counter

    def connection(attrs: dict[str, Any]) -> dict[str, Any]:
        """Add the protocol version and the network attributes; the metric's attributes (a copy)."""
        proto = client._proto
        meta = proto._meta
        version = meta.get(PROTOCOL_VERSION) if meta is not None else proto.protocol_version
        if type(version) is str:
            attrs["mcp.protocol.version"] = version
        attrs.update(_network(client.transport))
        return dict(attrs)

    def session(attrs: dict[str, Any]) -> None:
        """Add the HTTP session id, when there is one (spans only: it is not a metric attribute)."""
        session_id = getattr(client.transport, "session_id", None)
        if type(session_id) is str:
            attrs["mcp.session.id"] = session_id
    roundtrip = client._roundtrip
    transmit = client._transmit
    write = client._write

    async def traced(
        method: str, params: dict[str, Any] | None, options: CallOptions, *, cancel_on_timeout: bool = True
    ) -> dict[str, Any]:
        attrs: dict[str, Any] = {"mcp.method.name": method}
        name = method
        if params is not None:
            if method == "tools/call":
                tool = params.get("name")
                if type(tool) is str:
                    attrs["gen_ai.tool.name"] = tool
                    name = f"{method} {tool}"
            elif method == "prompts/get":
                prompt = params.get("name")
                if type(prompt) is str:
                    attrs["gen_ai.prompt.name"] = prompt
                    name = f"{method} {prompt}"
        if method == "tools/call":
            attrs["gen_ai.operation.name"] = "execute_tool"
        measured = connection(attrs)
        if params is not None and method in RESOURCE_METHODS and type(params.get("uri")) is str:
            attrs["mcp.resource.uri"] = params["uri"]
        session(attrs)
        span = tracer.start_span(name, kind=CLIENT, attributes=attrs)
        carrier: dict[str, Any] = dict(options.meta) if options.meta else {}
        inject(carrier, context=set_span_in_context(span))
        traced_options = replace(options, meta=carrier)
        error: str | None = None
        token = sending.set(span)
        started = clock()
        try:
            result = await roundtrip(method, params, traced_options, cancel_on_timeout=cancel_on_timeout)
        except RemoteError as exc:
            error = str(exc.code)
            span.set_attribute("rpc.response.status_code", error)
            span.set_status(Status(ERROR, exc.message if type(exc.message) is str else None))
            raise
        except RequestTimeout as exc:
            error = "timeout"
            span.set_status(Status(ERROR, str(exc)))
            raise
        except asyncio.CancelledError:
            error = "cancelled"
            span.set_status(Status(ERROR, "cancelled"))
            raise
        except Exception as exc:
            error = type(exc).__qualname__
            span.record_exception(exc)
            span.set_status(Status(ERROR, str(exc)))
            raise
        else:
            if method == "tools/call" and result.get("isError") is True:
                error = "tool_error"
                span.set_status(Status(ERROR, "tool_error"))
            return result
        finally:
            elapsed = clock() - started
            sending.reset(token)
            if "mcp.session.id" not in attrs:  # initialize over HTTP: the session id came with its reply
                session_id = getattr(client.transport, "session_id", None)
                if type(session_id) is str:
                    span.set_attribute("mcp.session.id", session_id)
            settled = client._proto.protocol_version
            if "mcp.protocol.version" not in attrs and type(settled) is str:
                span.set_attribute("mcp.protocol.version", settled)
            if error is not None:
                span.set_attribute("error.type", error)
                measured["error.type"] = error
                if error[:1] == "-" or error.isdigit():
                    measured["rpc.response.status_code"] = error
            span.end()
            duration.record(elapsed, measured)

    def notifying(data: bytes) -> None:
        """``_write``, traced: a notification gets its CLIENT span, its context in ``params._meta``."""
        message = loads(data)
        method = message.get("method") if type(message) is dict and "id" not in message else None
        if type(method) is not str:  # an answer to the server's request: not ours to trace
            write(data)
            return
        given = message.get("params")
        params = dict(given) if type(given) is dict else {}
        attrs: dict[str, Any] = {"mcp.method.name": method}
        measured = connection(attrs)
        session(attrs)
        span = tracer.start_span(method, kind=CLIENT, attributes=attrs)
        carrier = params.get("_meta")
        carrier = dict(carrier) if type(carrier) is dict else {}
        inject(carrier, context=set_span_in_context(span))
        if carrier:  # else (no propagator writes anything) the notification goes as it was
            params["_meta"] = carrier
            data = encode_notification(method, params)
        error: str | None = None
        started = clock()
        try:
            write(data)
        except Exception as exc:
            error = type(exc).__qualname__
            span.record_exception(exc)
            span.set_status(Status(ERROR, str(exc)))
            raise
        finally:
            elapsed = clock() - started
            if error is not None:
                span.set_attribute("error.type", error)
                measured["error.type"] = error
            span.end()
            duration.record(elapsed, measured)

    def transmitting(out: Outgoing, deadline: float | None) -> Any:
        span = sending.get()
        if span is not None:
            span.set_attribute("jsonrpc.request.id", str(out.id))
        return transmit(out, deadline)

    connect = client.connect
    aclose = client.aclose
    opened: list[float] = []

    async def connecting() -> None:
        started = clock()
        await connect()
        if client._proto.era is Era.LEGACY:  # a 2025-11-25 session is open
            opened[:] = [started]

    async def closing() -> None:
        try:
            await aclose()
        finally:
            if opened:
                attrs = _network(client.transport)
                version = client._proto.protocol_version
                if type(version) is str:
                    attrs["mcp.protocol.version"] = version
                session_duration.record(clock() - opened.pop(), attrs)

    client._roundtrip = traced  # type: ignore[method-assign]  # the instance's own, traced
    client._transmit = transmitting  # type: ignore[method-assign]  # likewise: it names the request id
    client._write = notifying  # type: ignore[method-assign]  # likewise: every notification it sends
    client.connect = connecting  # type: ignore[method-assign]  # notes when a legacy session opens
    client.aclose = closing  # type: ignore[method-assign]  # and records its duration when it ends
