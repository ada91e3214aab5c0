"""Structured logs without OpenTelemetry: one JSON line per request (``wiremcp run --log-format json``).

Rules:

* `install_request_log` registers one `RequestLog`, an observer
  (`wiremcp.protocol.observers.Observer`), that logs each request a handler
  serves (not what a 2025-11-25 session answers itself: ``initialize``,
  ``ping``...) on the ``wiremcp.requests`` logger
  at INFO, when it ends, with its fields in ``record.mcp``: ``method``,
  ``target`` (the tool or prompt name, the resource URI), ``id``,
  ``duration_ms``, ``outcome`` (``ok``, ``tool_error``, ``error``,
  ``cancelled``), for an error its JSON-RPC ``code`` and ``error`` (the
  error's message; an unexpected exception's own text, which the client
  does not see when errors are masked), the
  ``session`` id of a 2025-11-25 session over HTTP, and ``trace_id`` and
  ``span_id`` when OpenTelemetry is on. Nothing about the request changes;
* `JSONFormatter` renders every record as one JSON object on one line:
  ``time`` (UTC, ISO 8601, milliseconds), ``level``, ``logger``,
  ``message``, then the ``mcp`` fields, then ``exception`` (the traceback)
  if any. orjson encodes it; a value it cannot encode is written as its
  ``str``;
* like every observer, it is off unless installed (before serving starts): a
  server without observers calls its handlers directly. Installed after
  telemetry's observer, a request's line carries the ids of its span.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from datetime import datetime, timezone
from typing import Any

import orjson

from ..jsonrpc import INTERNAL_ERROR, JSONRPCError
from ..protocol.observers import ObservedRequest, Observer

__all__ = ["JSONFormatter", "RequestLog", "install_request_log", "target_of"]

log = logging.getLogger("wiremcp.requests")


def target_of(method: str, params: dict[str, Any]) -> str | None:
    """What a request acts on: the tool or prompt name, or the resource URI."""
    if method == "tools/call" or method == "prompts/get":
        name = params.get("name")
        return name if type(name) is str else None
    if method.startswith("resources/"):
        uri = params.get("uri")
        return uri if type(uri) is str else None
    return None


def _trace_ids() -> dict[str, str]:
    """The current span's ids, when OpenTelemetry is loaded (never imported here)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}


def install_request_log(server: Any, logger: logging.Logger = log) -> RequestLog:
    """Log each request ``server`` serves as one structured record on ``logger`` (see the module docs)."""
    observer = RequestLog(logger)
    server.add_observer(observer)
    return observer


class RequestLog(Observer):
    """The observer of `install_request_log`: one record per request a handler served."""

    def __init__(self, logger: logging.Logger = log) -> None:
        self.logger = logger
        self.clock = time.perf_counter

    def request_started(self, request: ObservedRequest) -> Any:
        if request.internal:
            return None  # answered by a 2025-11-25 session itself, not by a handler
        fields: dict[str, Any] = {"method": request.method}
        target = target_of(request.method, request.params)
        if target is not None:
            fields["target"] = target
        if request.id is not None:
            fields["id"] = request.id
        fields.update(_trace_ids())
        return fields, self.clock()

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        if started is None:
            return
        fields, began = started
        if isinstance(error, JSONRPCError):
            fields.update(outcome="error", code=error.code, error=error.message)
        elif isinstance(error, asyncio.CancelledError):
            fields["outcome"] = "cancelled"
        elif error is not None:
            fields.update(outcome="error", code=INTERNAL_ERROR, error=f"{type(error).__name__}: {error}")
        elif result is not None and result.get("isError") is True and request.method == "tools/call":
            fields["outcome"] = "tool_error"
        else:
            fields["outcome"] = "ok"
        fields["duration_ms"] = round((self.clock() - began) * 1000, 3)
        headers = request.headers
        session = headers.get("mcp-session-id") if headers is not None else None
        if session is not None:
            fields["session"] = session
        self.logger.info("%s %s", request.method, fields["outcome"], extra={"mcp": fields})


class JSONFormatter(logging.Formatter):
    """Each record as one line of JSON (see the module docs)."""

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._prefix = ""

    def _time(self, created: float) -> str:
        """``created`` as ISO 8601 UTC with milliseconds; the part up to the second is made once a second."""
        second = int(created)
        if second != self._second:
            self._prefix = datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
            self._second = second
        return f"{self._prefix}.{int((created - second) * 1000):03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self._time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "mcp", None)
        if type(fields) is dict:
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()
